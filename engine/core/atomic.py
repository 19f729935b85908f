"""The one writer of brittle's outputs: files that readers never see half written.

:func:`atomic_write` opens an output and decides, from what is at the path, how to
write it:

- nothing, or a regular file: a temporary file is written next to it (same directory,
  so the same file system), flushed to disk and renamed over it. A replaced file keeps
  its permission bits; a new one gets those of a plain ``open()`` (``0o666`` minus the
  umask). Missing parent directories are created.
- a character device or a FIFO (``/dev/null``, a terminal, a named pipe), or an open
  descriptor (``/dev/stdout``, ``/dev/fd/N``, appended to): written straight into, with
  no temporary file and no rename, so the device stays a device. Opening a FIFO waits
  for a reader, as a shell redirection does.
- a symbolic link: followed; its target is written as above and the link stays a link.
- ``-``: standard output.
- a directory, or a path under a file: refused.

Every :class:`OSError` met while writing becomes an
:class:`~brittle.engine.core.errors.OutputError` (``cannot write OUT: No space left on
device``), and a temporary file is always removed, so a failure leaves the target as it
was.

:func:`output_set` commits several outputs together: inside it, :func:`atomic_write`
finishes each file into its temporary and only when the block ends without error are
they all renamed into place. A failure anywhere leaves no new file (and the previous
files untouched). Outputs to devices, FIFOs and standard output are buffered and
written when the set commits, before the renames.

:func:`atomic_directory` yields a staging directory and swaps it for a whole directory.

A process killed at the wrong moment (``kill -9``, a lost node) leaves its temporaries;
:func:`remove_stale_temporaries` removes those of given outputs once the caller knows
no other process writes them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from io import BufferedWriter, FileIO, RawIOBase, TextIOWrapper
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal, overload

from brittle.engine.core.errors import OutputError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = [
    "STDOUT",
    "OutputSet",
    "atomic_directory",
    "atomic_write",
    "check_output",
    "output_set",
    "remove_stale_temporaries",
    "stale_temporaries",
    "write_json",
]

#: The path that means standard output.
STDOUT = "-"
#: How standard output is named in messages.
STDOUT_NAME = "<stdout>"
#: Largest content of a device/FIFO/stdout output a set keeps in memory before spilling
#: to a temporary file.
_SPOOL_IN_MEMORY = 8 * 1024 * 1024


# ------------------------------------------------------------------ what is at the path
@dataclass(frozen=True)
class _Target:
    """Where an output goes.

    Attributes:
        shown: the output as the user named it, for messages.
        real: the path written (symbolic links followed); ``None`` for standard output.
        kind: ``file`` (absent or a regular file: replaced atomically), ``stream`` (a
            character device, a FIFO or an open descriptor: written into) or ``stdout``.
        mode: permission bits of the regular file replaced (``None``: a new file).
        append: open with ``O_APPEND`` (an open descriptor such as ``/dev/stdout``,
            which may be a file the shell opened for appending).
    """

    shown: str
    real: Path | None
    kind: Literal["file", "stream", "stdout"]
    mode: int | None = None
    append: bool = False


def _error(shown: str, code: int) -> OutputError:
    return OutputError(shown, os.strerror(code), code)


@contextmanager
def _as_output_error(shown: str) -> Iterator[None]:
    """Turn an :class:`OSError` raised in the block into an :class:`OutputError`."""
    try:
        yield
    except OSError as err:
        raise OutputError.of(shown, err) from err


def _resolve(path: str | os.PathLike[str]) -> _Target:
    """What is at ``path`` and how to write it.

    Raises:
        OutputError: a directory, a path under a file, a socket or a block device, or a
            path that cannot be examined (a symbolic-link loop, no permission).
    """
    shown = os.fspath(path)
    if shown == STDOUT:
        return _Target(STDOUT_NAME, None, "stdout")
    if _is_descriptor(shown):
        try:
            st = os.stat(shown)
        except OSError as err:
            raise OutputError.of(shown, err) from err
        if stat.S_ISDIR(st.st_mode):
            raise _error(shown, errno.EISDIR)
        return _Target(shown, Path(shown), "stream", append=True)
    real = Path(os.path.realpath(shown))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return _Target(shown, real, "file")
    except OSError as err:
        raise OutputError.of(shown, err) from err
    if stat.S_ISREG(st.st_mode):
        return _Target(shown, real, "file", stat.S_IMODE(st.st_mode))
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return _Target(shown, real, "stream")
    if stat.S_ISDIR(st.st_mode):
        raise _error(shown, errno.EISDIR)
    raise OutputError(shown, "not a regular file, a FIFO or a character device")


#: Where paths name open descriptors (``/dev/stdout`` links to ``/proc/self/fd/1``).
_DESCRIPTOR_PREFIXES = ("/proc/", "/dev/fd/")


def _is_descriptor(path: str) -> bool:
    """Whether ``path`` is, or leads by symbolic links to, an open descriptor such as
    ``/dev/stdout``, ``/dev/fd/3`` or ``/proc/self/fd/1``.

    Such a path is written through, never replaced: what it leads to (a pipe, a
    terminal, a file the shell opened) cannot be renamed over, and resolving it
    yields names like ``pipe:[1234]``.
    """
    here = os.path.abspath(path)
    for _ in range(40):
        if here.startswith(_DESCRIPTOR_PREFIXES):
            return True
        try:
            link = os.readlink(here)
        except OSError:
            return False
        here = os.path.normpath(os.path.join(os.path.dirname(here), link))
    return False


def _open_stream(target: _Target) -> int:
    """A write descriptor on a device, FIFO or open descriptor (a FIFO waits for a
    reader, as a shell redirection does)."""
    assert target.real is not None
    flags = os.O_WRONLY | os.O_CLOEXEC | (os.O_APPEND if target.append else 0)
    with _as_output_error(target.shown):
        return os.open(target.real, flags)


def _make_parents(directory: Path, shown: str) -> list[Path]:
    """Create ``directory`` and its missing parents; return those created, outermost first.

    Raises:
        OutputError: a component is a file (``Not a directory``) or cannot be created.
    """
    missing: list[Path] = []
    here = directory
    while not here.exists():
        if here.is_symlink():  # a dangling link in the way
            raise _error(shown, errno.ENOENT)
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    if not here.is_dir():
        raise _error(shown, errno.ENOTDIR)
    created: list[Path] = []
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            if not d.is_dir():
                raise _error(shown, errno.ENOTDIR) from None
            continue  # made meanwhile by someone else
        except OSError as err:
            raise OutputError.of(shown, err) from err
        created.append(d)
    return created


def _writable_reason(directory: Path) -> str | None:
    """Why files cannot be created in the nearest existing ancestor of ``directory``."""
    here = directory
    while not here.exists() and here.parent != here:
        here = here.parent
    if not here.is_dir():
        return os.strerror(errno.ENOTDIR)
    if os.access(here, os.W_OK | os.X_OK):
        return None
    try:
        read_only = bool(os.statvfs(here).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return os.strerror(errno.EROFS if read_only else errno.EACCES)


def check_output(path: str | os.PathLike[str], *, directory: bool = False) -> None:
    """Fail early, before a long run, when ``path`` clearly cannot be written.

    Checks what can be checked without writing: a file output is not a directory and
    not under a file, and the directory that will receive it accepts new files; a
    directory output is not a file. Writing may still fail later (a full disk); the
    writers report that the same way.

    Args:
        path: the output (``-``: standard output, always accepted for a file).
        directory: ``path`` is a directory to write files into.

    Raises:
        OutputError: the reason, as the write would give it.
    """
    shown = os.fspath(path)
    if directory:
        real = Path(os.path.realpath(shown))
        if real.exists() and not real.is_dir():
            raise _error(shown, errno.ENOTDIR)
        reason = _writable_reason(real)
    else:
        target = _resolve(path)
        if target.real is None:
            return
        if target.kind == "stream":
            ok = os.access(target.real, os.W_OK)
            reason = None if ok else os.strerror(errno.EACCES)
        else:
            reason = _writable_reason(target.real.parent)
    if reason is not None:
        raise OutputError(shown, reason)


# ------------------------------------------------------------------ handles
class _FileSink(FileIO):
    """A raw file on a descriptor whose write errors are :class:`OutputError`."""

    def __init__(self, fd: int, shown: str, *, closefd: bool = True) -> None:
        super().__init__(fd, "wb", closefd=closefd)
        self.shown = shown

    def write(self, b: ReadableBuffer, /) -> int:
        try:
            return super().write(b)
        except OSError as err:
            raise OutputError.of(self.shown, err) from err


class _StdoutSink(RawIOBase):
    """Raw bytes onto ``sys.stdout`` (whatever it is when written), errors as
    :class:`OutputError`. Closing it leaves standard output open."""

    def writable(self) -> bool:
        return True

    def write(self, b: ReadableBuffer, /) -> int:
        data = bytes(b)
        out = sys.stdout
        try:
            out.flush()  # what was printed before comes first
            buffer = getattr(out, "buffer", None)
            if buffer is not None:
                buffer.write(data)
            else:
                out.write(data.decode("utf-8"))
        except BrokenPipeError as err:
            _silence_stdout()
            raise OutputError.of(STDOUT_NAME, err) from err
        except OSError as err:
            raise OutputError.of(STDOUT_NAME, err) from err
        return len(data)

    def flush(self) -> None:
        with _as_output_error(STDOUT_NAME):
            out = sys.stdout
            buffer = getattr(out, "buffer", None)
            (buffer if buffer is not None else out).flush()


def _silence_stdout() -> None:
    """After a broken pipe, point the stdout descriptor at /dev/null so Python does not
    complain again when it flushes standard output at exit."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def _handle(raw: RawIOBase, mode: str) -> IO[str] | IO[bytes]:
    """A buffered (and for ``"w"``, UTF-8 text) handle over ``raw``."""
    buffered = BufferedWriter(raw)
    if mode == "wb":
        return buffered
    return TextIOWrapper(buffered, encoding="utf-8", newline="")


def _binary(raw: RawIOBase) -> BufferedWriter:
    """A buffered byte handle over ``raw``."""
    return BufferedWriter(raw)


def _close_quietly(handle: IO[str] | IO[bytes]) -> None:
    with contextlib.suppress(Exception):
        handle.close()


def _finish(handle: IO[str] | IO[bytes], shown: str, *, sync: bool) -> None:
    """Flush (and fsync) and close ``handle``; errors as :class:`OutputError`."""
    with _as_output_error(shown):
        handle.flush()
        if sync:
            os.fsync(handle.fileno())
        handle.close()


# ------------------------------------------------------------------ sets
@dataclass
class _Staged:
    """One finished output of a set, waiting for the commit.

    A file output is its temporary (``tmp``, renamed over ``target.real``); a stream
    or stdout output is its content (``spool``, copied into ``target``).
    """

    target: _Target
    tmp: Path | None = None
    spool: IO[bytes] | None = None


class OutputSet:
    """Outputs committed together (see :func:`output_set`)."""

    def __init__(self) -> None:
        self._staged: list[_Staged] = []
        self._created: list[Path] = []  # directories made for the outputs, outermost first
        self._claimed: dict[str, str] = {}  # real path (or STDOUT) -> as named

    @property
    def paths(self) -> list[str]:
        """The outputs written so far, as named."""
        return [s.target.shown for s in self._staged]

    def _claim(self, target: _Target) -> None:
        key = STDOUT if target.real is None else str(target.real)
        if key in self._claimed:
            first = self._claimed[key]
            raise OutputError(target.shown, f"also written as {first} in the same run")
        self._claimed[key] = target.shown

    def _commit(self) -> None:
        """Write the buffered streams, then rename every file into place.

        A failed rename puts back what the earlier ones replaced (from a hard-link
        backup, when the file system has them) and removes what they created.
        """
        try:
            for item in self._staged:
                if item.spool is not None:
                    _copy_spool(item.spool, item.target)
        except BaseException:
            self._discard()
            raise
        files = [s for s in self._staged if s.tmp is not None]
        backups: list[Path | None] = []
        try:
            for k, item in enumerate(files):
                assert item.tmp is not None and item.target.real is not None
                # Only what a later rename could fail after needs a way back.
                last = k == len(files) - 1
                backups.append(None if last else _backup(item.target.real))
                with _as_output_error(item.target.shown):
                    os.replace(item.tmp, item.target.real)
                item.tmp = None
        except BaseException:
            for item, backup in zip(files, backups, strict=False):
                if item.tmp is None:  # renamed: undo
                    _undo_replace(item.target, backup)
            self._discard()
            raise
        finally:
            for backup in backups:
                if backup is not None:
                    backup.unlink(missing_ok=True)
        for directory in {s.target.real.parent for s in files if s.target.real is not None}:
            _sync_directory(directory)
        self._close_spools()

    def _discard(self) -> None:
        """Remove every temporary and every directory made for the outputs."""
        for item in self._staged:
            if item.tmp is not None:
                item.tmp.unlink(missing_ok=True)
                item.tmp = None
        self._close_spools()
        for directory in reversed(self._created):
            with contextlib.suppress(OSError):
                directory.rmdir()  # only if still empty

    def _close_spools(self) -> None:
        for item in self._staged:
            if item.spool is not None:
                item.spool.close()
                item.spool = None


_ACTIVE: ContextVar[OutputSet | None] = ContextVar("brittle_output_set", default=None)


@contextmanager
def output_set() -> Iterator[OutputSet]:
    """Commit every :func:`atomic_write` of the block together, or none of them.

    Inside the block each :func:`atomic_write` (in this thread) writes its temporary
    file but does not rename it. When the block ends without error every file is
    renamed into place; on error (or if the commit fails) every temporary is removed,
    as are the directories created for the outputs, and no file changes. Outputs to
    character devices, FIFOs and standard output are buffered and written at the
    commit, before the renames (bytes sent to a device cannot be taken back). A set
    opened inside another joins it. The same file may be written only once per set.
    """
    outer = _ACTIVE.get()
    if outer is not None:
        yield outer
        return
    outputs = OutputSet()
    token = _ACTIVE.set(outputs)
    try:
        yield outputs
    except BaseException:
        _ACTIVE.reset(token)
        outputs._discard()
        raise
    _ACTIVE.reset(token)
    outputs._commit()


def _backup(path: Path) -> Path | None:
    """A hard link to the regular file at ``path`` (to restore it), or ``None``."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        backup = path.with_name(f".{path.name}.{os.getpid()}-{time.monotonic_ns()}.bak")
        os.link(path, backup)
    except OSError:
        return None
    return backup


def _undo_replace(target: _Target, backup: Path | None) -> None:
    assert target.real is not None
    with contextlib.suppress(OSError):
        if backup is not None:
            os.replace(backup, target.real)
        elif target.mode is None:  # the file was new
            target.real.unlink()


def _sync_directory(directory: Path) -> None:
    """Flush a directory's entries (the renames) to disk, where the system allows."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _copy_spool(spool: IO[bytes], target: _Target) -> None:
    spool.seek(0)
    if target.kind == "stdout":
        handle = _binary(_StdoutSink())
    else:
        handle = _binary(_FileSink(_open_stream(target), target.shown))
    try:
        shutil.copyfileobj(spool, handle)
        _finish(handle, target.shown, sync=False)
    except BaseException:
        _close_quietly(handle)
        raise


# ------------------------------------------------------------------ the writer
@overload
def atomic_write(
    path: str | os.PathLike[str], mode: Literal["w"] = "w"
) -> AbstractContextManager[IO[str]]: ...
@overload
def atomic_write(
    path: str | os.PathLike[str], mode: Literal["wb"]
) -> AbstractContextManager[IO[bytes]]: ...
def atomic_write(
    path: str | os.PathLike[str], mode: str = "w"
) -> AbstractContextManager[IO[str] | IO[bytes]]:
    """Open the output ``path`` for writing; it is complete when the block ends.

    ``mode`` is ``"w"`` (text, UTF-8, newlines as written) or ``"wb"`` (bytes). What
    is at ``path`` decides how it is written (see the module): a regular file or
    nothing is replaced atomically through a temporary file, a character device or a
    FIFO is written into, a symbolic link's target is written, ``-`` is standard
    output. Inside :func:`output_set` the output is committed with the set.

    An error raised in the block leaves ``path`` as it was (a device or a FIFO may
    have received part of the bytes). Writes through the handle, opening and
    finishing raise :class:`~brittle.engine.core.errors.OutputError` on failure;
    other errors of the block pass unchanged.

    Raises:
        OutputError: ``path`` is a directory or under a file, or writing failed.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    return _open_output(path, mode)


@contextmanager
def _open_output(path: str | os.PathLike[str], mode: str) -> Iterator[IO[str] | IO[bytes]]:
    target = _resolve(path)
    outputs = _ACTIVE.get()
    if outputs is not None:
        outputs._claim(target)
    if target.kind == "file":
        yield from _write_file(target, mode, outputs)
    elif outputs is not None:
        yield from _write_spool(target, mode, outputs)
    else:
        yield from _write_stream(target, mode)


def _write_file(
    target: _Target, mode: str, outputs: OutputSet | None
) -> Iterator[IO[str] | IO[bytes]]:
    """A temporary next to the target, renamed over it (or staged in ``outputs``)."""
    assert target.real is not None
    shown, real = target.shown, target.real
    created = _make_parents(real.parent, shown)
    if outputs is not None:
        outputs._created.extend(created)
    with _as_output_error(shown):
        fd, name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    tmp = Path(name)
    try:
        try:
            # mkstemp makes the file owner-only: keep the replaced file's permissions,
            # or give a new one those of a plain open().
            with _as_output_error(shown):
                os.fchmod(fd, _new_file_mode() if target.mode is None else target.mode)
            raw = _FileSink(fd, shown)
        except BaseException:
            os.close(fd)
            raise
        handle = _handle(raw, mode)
        try:
            yield handle
            _finish(handle, shown, sync=True)
        except BaseException:
            _close_quietly(handle)
            raise
        if outputs is not None:
            outputs._staged.append(_Staged(target, tmp=tmp))
            return
        with _as_output_error(shown):
            os.replace(tmp, real)
        _sync_directory(real.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        if outputs is None:
            for directory in reversed(created):
                with contextlib.suppress(OSError):
                    directory.rmdir()
        raise


def _write_stream(target: _Target, mode: str) -> Iterator[IO[str] | IO[bytes]]:
    """Straight into a character device, a FIFO or standard output."""
    if target.kind == "stdout":
        raw: RawIOBase = _StdoutSink()
    else:
        raw = _FileSink(_open_stream(target), target.shown)
    handle = _handle(raw, mode)
    try:
        yield handle
        _finish(handle, target.shown, sync=False)
    except BaseException:
        _close_quietly(handle)
        raise


def _write_spool(target: _Target, mode: str, outputs: OutputSet) -> Iterator[IO[str] | IO[bytes]]:
    """A device, FIFO or stdout output of a set: buffered until the set commits."""
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)  # noqa: SIM115
    try:
        handle = _handle(_SpoolSink(spool, target.shown), mode)
        try:
            yield handle
            _finish(handle, target.shown, sync=False)
        except BaseException:
            _close_quietly(handle)
            raise
    except BaseException:
        spool.close()
        raise
    outputs._staged.append(_Staged(target, spool=spool))


class _SpoolSink(RawIOBase):
    """Raw bytes into a spool that outlives the handle; errors as :class:`OutputError`."""

    def __init__(self, spool: IO[bytes], shown: str) -> None:
        super().__init__()
        self.spool = spool
        self.shown = shown

    def writable(self) -> bool:
        return True

    def write(self, b: ReadableBuffer, /) -> int:
        try:
            return self.spool.write(bytes(b))
        except OSError as err:
            raise OutputError.of(self.shown, err) from err


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# ------------------------------------------------------------------ directories
@contextmanager
def atomic_directory(
    target: str | os.PathLike[str],
    *,
    is_complete: Callable[[Path], bool] | None = None,
    mode: int = 0o755,
) -> Iterator[Path]:
    """Yield an empty staging directory next to ``target``; swap it in when the block ends.

    The parent of ``target`` is created if needed; a symbolic link at ``target`` is
    followed (its target is replaced, the link stays). The staging directory is a
    hidden sibling (``.<name>-XXXX.tmp``); when the block finishes without error it
    gets ``mode`` and replaces ``target`` through :func:`_replace_directory`. Whatever
    happens, no staging directory is left behind, and on error ``target`` is untouched.

    Args:
        target: the directory to create or replace.
        is_complete: tells whether an existing ``target`` is a finished copy written by
            a concurrent writer, to be kept instead of replaced (see
            :func:`_replace_directory`). Without it an existing ``target`` is replaced.
        mode: permission bits of the new directory (``mkdtemp`` makes it owner-only).

    Raises:
        OutputError: ``target`` is a file, or creating, filling (an :class:`OSError`
            about a path in the staging directory, or about no path, as a failed write
            has) or swapping the directory failed.
    """
    shown = os.fspath(target)
    final = Path(os.path.realpath(shown))
    if final.exists() and not final.is_dir():
        raise _error(shown, errno.ENOTDIR)
    _make_parents(final.parent, shown)
    with _as_output_error(shown):
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", suffix=".tmp", dir=final.parent))
    try:
        try:
            yield staging
        except OSError as err:
            if _is_about(err, staging):
                raise OutputError.of(shown, err) from err
            raise
        with _as_output_error(shown):
            staging.chmod(mode)
            _replace_directory(staging, final, is_complete=is_complete)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _is_about(err: OSError, staging: Path) -> bool:
    """Whether ``err`` concerns the staging directory (or names no path at all)."""
    names = [n for n in (err.filename, getattr(err, "filename2", None)) if n is not None]
    if not names:
        return True
    return any(Path(os.fsdecode(n)).is_relative_to(staging) for n in names)


def _replace_directory(
    staging: Path, target: Path, *, is_complete: Callable[[Path], bool] | None = None
) -> None:
    """Rename ``staging`` to ``target``, moving an existing ``target`` out of the way.

    ``staging`` must be a sibling of ``target``. A missing or empty ``target`` is
    replaced in one rename. When ``target`` is in the way and ``is_complete(target)``
    is true (another process finished the same work meanwhile), that copy is kept and
    ``staging`` is left for the caller to remove. Otherwise ``target`` is renamed to a
    hidden ``.<name>-<pid>-<ns>.old`` sibling, ``staging`` takes its place and the old
    copy is deleted; if that second rename fails, the old copy is put back.
    """
    try:
        os.rename(staging, target)
        return
    except OSError:
        if is_complete is not None and is_complete(target):
            return
    trash = target.with_name(f".{target.name}-{os.getpid()}-{time.monotonic_ns()}.old")
    os.rename(target, trash)
    try:
        os.rename(staging, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.rename(trash, target)
        raise
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def write_json(path: str | os.PathLike[str], data: object, *, sort_keys: bool = False) -> None:
    """``data`` (anything :func:`json.dump` writes) as JSON indented by 2 with a final
    newline, through :func:`atomic_write` (``-``: standard output).

    Raises:
        OutputError: ``path`` cannot be written (a directory, a full disk...).
    """
    with atomic_write(path) as handle:
        json.dump(data, handle, indent=2, sort_keys=sort_keys)
        handle.write("\n")


# ------------------------------------------------------------------ left-overs
#: The random part of a name made by ``tempfile.mkstemp``/``mkdtemp``.
_RANDOM = r"[a-z0-9_]{8}"


def _left_over_pattern(name: str) -> re.Pattern[str]:
    """What this module names the temporaries of output ``name``: a file being written
    (``.NAME.XXXXXXXX.tmp``), a directory being built (``.NAME-XXXXXXXX.tmp``), a
    replaced file kept to undo a set (``.NAME.PID-NS.bak``) and a replaced directory
    being deleted (``.NAME-PID-NS.old``)."""
    n = re.escape(name)
    return re.compile(
        rf"\.{n}\.{_RANDOM}\.tmp|\.{n}-{_RANDOM}\.tmp|\.{n}\.\d+-\d+\.bak|\.{n}-\d+-\d+\.old"
    )


def stale_temporaries(directory: Path, names: Iterable[str]) -> list[Path]:
    """The temporaries of the outputs ``names`` (file names in ``directory``) that
    writers of this module left in ``directory``, sorted; nothing else in it matches.
    """
    patterns = [_left_over_pattern(name) for name in names]
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    return [e for e in entries if any(p.fullmatch(e.name) for p in patterns)]


def remove_stale_temporaries(directory: Path, names: Iterable[str]) -> list[Path]:
    """Remove :func:`stale_temporaries` of ``names`` in ``directory``; the paths removed.

    Call it only while no other process can be writing these outputs: holding the
    directory's lock (:func:`brittle.engine.core.lock.locked_directory`). A temporary
    that cannot be removed is left (the run goes on; it never reads them).
    """
    removed = []
    for path in stale_temporaries(directory, names):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed
