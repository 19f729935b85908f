"""Writing files and directories so that readers never see half of them.

Both helpers build the new content next to its destination (same directory, so the
same file system) and rename it into place only once it is complete:

- :func:`atomic_write` opens a temporary file and renames it over the target file;
- :func:`atomic_directory` yields a temporary directory to fill and then swaps it for
  the target directory.

On error the temporary file or directory is removed and the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Literal, overload

__all__ = ["atomic_directory", "atomic_write"]


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
    """Open a temporary file next to ``path`` and rename it over ``path`` on success.

    ``mode`` is ``"w"`` (text, UTF-8, newlines as written) or ``"wb"`` (bytes). Readers
    never see a half-written file: on error the temporary file is removed and ``path``
    is untouched.
    """
    return _atomic_file(path, mode)


@contextmanager
def _atomic_file(path: str | os.PathLike[str], mode: str) -> Iterator[IO[str] | IO[bytes]]:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    # mkstemp makes the file owner-only; give it the permissions a plain open() would.
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        binary = "b" in mode
        encoding, newline = (None, None) if binary else ("utf-8", "")
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_directory(
    target: str | os.PathLike[str],
    *,
    is_complete: Callable[[Path], bool] | None = None,
    mode: int = 0o755,
) -> Iterator[Path]:
    """Yield an empty staging directory next to ``target``; swap it in when the block ends.

    The parent of ``target`` is created if needed. The staging directory is a hidden
    sibling (``.<name>-XXXX.tmp``); when the block finishes without error it gets
    ``mode`` and replaces ``target`` through :func:`_replace_directory`. Whatever happens,
    no staging directory is left behind, and on error ``target`` is untouched.

    Args:
        target: the directory to create or replace.
        is_complete: tells whether an existing ``target`` is a finished copy written by
            a concurrent writer, to be kept instead of replaced (see
            :func:`_replace_directory`). Without it an existing ``target`` is replaced.
        mode: permission bits of the new directory (``mkdtemp`` makes it owner-only).
    """
    final = Path(target)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", suffix=".tmp", dir=final.parent))
    try:
        yield staging
        staging.chmod(mode)
        _replace_directory(staging, final, is_complete=is_complete)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


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
