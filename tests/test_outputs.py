"""Outputs: the one writer (files, devices, FIFOs, symlinks, stdout, sets) and the CLI's
exit-code policy when an output cannot be written.

Nothing here touches the real /dev: FIFOs are made with ``os.mkfifo`` in ``tmp_path``
(and read from a thread), character devices are made with ``os.mknod`` in ``tmp_path``
when the system allows it (else those cases are skipped), ``os.devnull`` is only
examined. Write failures are real: a path under a file, a directory in the way, a
file-size limit (``RLIMIT_FSIZE`` in a subprocess, the stand-in for a full disk), a
device that is always full, a read-only directory when not running as root.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from brittle.cli.main import main
from brittle.data import default_treebank_path
from brittle.engine.core.atomic import (
    atomic_directory,
    atomic_write,
    check_output,
    output_set,
)
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import (
    BrittleError,
    ConfigError,
    OutputError,
    ResourceMissingError,
)

from support import FIXTURES

TREEBANK = default_treebank_path()
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# ------------------------------------------------------------------ helpers
def leftovers(directory: Path) -> list[str]:
    """Temporary or backup files the writer may have left in ``directory``."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


class FifoReader:
    """Reads a FIFO to the end in a thread (opening it blocks until a writer comes)."""

    def __init__(self, path: Path) -> None:
        self.data = b""
        self.thread = threading.Thread(target=self._read, args=(path,), daemon=True)
        self.thread.start()

    def _read(self, path: Path) -> None:
        with path.open("rb") as handle:
            self.data = handle.read()

    def result(self) -> bytes:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the FIFO was never written and closed"
        return self.data


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.fixture
def full_device(tmp_path: Path) -> Path:
    """A character device in tmp_path that behaves like /dev/full (every write: ENOSPC)."""
    path = tmp_path / "full"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        with path.open("wb") as handle:
            handle.write(b"x")
            handle.flush()
    except PermissionError:
        pytest.skip("cannot make or open a character device here (no CAP_MKNOD or nodev)")
    except OSError as err:
        if err.errno != errno.ENOSPC:
            pytest.skip(f"device node in tmp_path does not behave like /dev/full: {err}")
    return path


def one_error_line(result: Result) -> str:
    """The single line a failing command prints on stderr (checked: only that line)."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def perturb_args(out: Path | str, *extra: str) -> list[str]:
    # No quality models: these tests are about how the files are written.
    return [
        "perturb", str(TREEBANK), "--method", "shuffle", "--parser", "gold",
        "--no-quality", "--limit", "3", "--out", str(out), *extra,
    ]  # fmt: skip


def run_limited(args: list[str], limit_bytes: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``brittle ARGS`` in a subprocess whose files may not grow beyond ``limit_bytes``
    (writes past it fail with EFBIG: Python ignores SIGXFSZ)."""
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit_bytes}, {limit_bytes}))\n"
        "from brittle.cli.main import main\n"
        "main(prog_name='brittle')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


# ------------------------------------------------------------------ the error type
def test_output_error_is_a_brittle_error_and_an_os_error() -> None:
    err = OutputError("out.conllu", os.strerror(errno.ENOSPC), errno.ENOSPC)
    assert isinstance(err, BrittleError) and isinstance(err, OSError)
    assert str(err) == "cannot write out.conllu: No space left on device"
    assert err.errno == errno.ENOSPC and err.filename == "out.conllu"
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.errno == errno.ENOSPC
    assert str(OutputError("x", "boom")) == "cannot write x: boom"


# ------------------------------------------------------------------ regular files
def test_new_file_is_written_with_umask_permissions_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "dir" / "new.txt"
    with atomic_write(target) as handle:
        handle.write("a\r\nb\n")
    assert target.read_bytes() == b"a\r\nb\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert leftovers(target.parent) == []


def test_replacing_a_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "x.bin"
    target.write_bytes(b"old")
    target.chmod(0o640)
    inode = target.stat().st_ino
    with atomic_write(target, "wb") as handle:
        handle.write(b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert leftovers(tmp_path) == []


def test_an_error_in_the_block_leaves_no_new_file(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_a_failing_fsync_is_an_output_error_and_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "x.txt"
    target.write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError) as caught, atomic_write(target) as handle:
        handle.write("new")
    assert str(caught.value) == f"cannot write {target}: No space left on device"
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_a_file_size_limit_is_an_output_error(tmp_path: Path) -> None:
    target = tmp_path / "big.txt"
    target.write_text("old")
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
        "from brittle.engine.core.atomic import atomic_write\n"
        "from brittle.engine.core.errors import OutputError\n"
        "try:\n"
        "    with atomic_write(sys.argv[1]) as handle:\n"
        "        handle.write('x' * 100_000)\n"
        "except OutputError as err:\n"
        "    print(err)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert proc.stdout.strip() == f"cannot write {target}: File too large"
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------ what is at the path
def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with (
        pytest.raises(OutputError, match=r"cannot write .*d: Is a directory"),
        atomic_write(tmp_path / "d") as handle,
    ):
        handle.write("x")
    assert list((tmp_path / "d").iterdir()) == []


def test_a_path_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("keep")
    for under in (tmp_path / "f" / "x.txt", tmp_path / "f" / "deeper" / "x.txt"):
        with pytest.raises(OutputError, match="Not a directory"), atomic_write(under) as handle:
            handle.write("x")
    assert (tmp_path / "f").read_text() == "keep"


def test_a_symlink_stays_a_link_and_its_target_is_replaced(tmp_path: Path) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "data.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with atomic_write(link) as handle:
        handle.write("new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    assert leftovers(tmp_path) == [] and leftovers(real_dir) == []


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to("made.txt")
    with atomic_write(link) as handle:
        handle.write("made")
    assert link.is_symlink() and (tmp_path / "made.txt").read_text() == "made"


def test_a_fifo_is_written_into_and_stays_a_fifo(fifo: Path) -> None:
    reader = FifoReader(fifo)
    with atomic_write(fifo) as handle:
        handle.write("through the pipe\n")
    assert reader.result() == b"through the pipe\n"
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert leftovers(fifo.parent) == []


def test_a_character_device_is_written_into(full_device: Path) -> None:
    with pytest.raises(OutputError) as caught, atomic_write(full_device) as handle:
        handle.write("x" * 10)
    assert str(caught.value) == f"cannot write {full_device}: No space left on device"
    assert stat.S_ISCHR(full_device.stat().st_mode)  # still the device
    assert leftovers(full_device.parent) == []


def test_devnull_is_accepted_as_a_device() -> None:
    check_output(os.devnull)  # examined only: nothing is written to the real /dev


def test_dash_is_standard_output(capsys: pytest.CaptureFixture[str]) -> None:
    print("before", end="|")
    with atomic_write("-") as handle:
        handle.write("to stdout\n")
    assert capsys.readouterr().out == "before|to stdout\n"


# ------------------------------------------------------------------ sets
def test_a_set_commits_every_file_together(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("old b")
    with output_set() as outputs:
        with atomic_write(tmp_path / "a.txt") as handle:
            handle.write("a")
        assert not (tmp_path / "a.txt").exists()  # not before the set commits
        with atomic_write(tmp_path / "b.txt") as handle:
            handle.write("b")
        assert (tmp_path / "b.txt").read_text() == "old b"
    assert outputs.paths == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert (tmp_path / "a.txt").read_text() == "a" and (tmp_path / "b.txt").read_text() == "b"
    assert leftovers(tmp_path) == []


def test_a_failed_set_leaves_no_new_file_and_old_files_untouched(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("old")
    (tmp_path / "file").write_text("in the way")
    with pytest.raises(OutputError, match="Not a directory"), output_set():
        with atomic_write(tmp_path / "new" / "deep" / "a.txt") as handle:
            handle.write("a")
        with atomic_write(tmp_path / "old.txt") as handle:
            handle.write("replaced?")
        with atomic_write(tmp_path / "file" / "c.txt") as handle:
            handle.write("c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "old.txt"]
    assert (tmp_path / "old.txt").read_text() == "old"


def test_a_rename_failing_at_commit_puts_the_earlier_files_back(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old a")
    with pytest.raises(OutputError, match=r"b\.txt: Is a directory"), output_set():
        with atomic_write(tmp_path / "a.txt") as handle:
            handle.write("new a")
        with atomic_write(tmp_path / "n.txt") as handle:
            handle.write("new n")
        with atomic_write(tmp_path / "b.txt") as handle:
            handle.write("new b")
        (tmp_path / "b.txt").mkdir()  # something takes the place meanwhile
        (tmp_path / "b.txt" / "keep").write_text("")
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert not (tmp_path / "n.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_a_set_writes_standard_output_only_when_it_commits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(RuntimeError), output_set():
        with atomic_write("-") as handle:
            handle.write("never shown\n")
        raise RuntimeError("boom")
    assert capsys.readouterr().out == ""
    with output_set():
        with atomic_write("-") as handle:
            handle.write("shown\n")
        assert capsys.readouterr().out == ""
        with atomic_write(tmp_path / "f.txt") as handle:
            handle.write("f")
    assert capsys.readouterr().out == "shown\n"


def test_a_set_refuses_the_same_file_twice(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a.txt")
    with pytest.raises(OutputError, match="also written as"), output_set():
        with atomic_write(tmp_path / "a.txt") as handle:
            handle.write("a")
        with atomic_write(link) as handle:
            handle.write("b")
    assert list(tmp_path.iterdir()) == [link]


def test_a_nested_set_joins_the_outer_one(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), output_set():
        with output_set(), atomic_write(tmp_path / "a.txt") as handle:
            handle.write("a")
        assert not (tmp_path / "a.txt").exists()
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ directories, checks
def test_atomic_directory_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("keep")
    with pytest.raises(OutputError, match="Not a directory"), atomic_directory(tmp_path / "f"):
        pass
    assert (tmp_path / "f").read_text() == "keep"
    assert leftovers(tmp_path) == []


def test_atomic_directory_reports_a_failed_write_inside(tmp_path: Path) -> None:
    with (
        pytest.raises(OutputError, match=r"cannot write .*out: No space"),
        atomic_directory(tmp_path / "out") as staging,
    ):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(staging / "w.bin"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("make", "directory", "reason"),
    [
        (lambda p: p.mkdir(), False, "Is a directory"),
        (lambda p: p.write_text(""), True, "Not a directory"),
        (lambda p: None, False, None),
        (lambda p: None, True, None),
    ],
)
def test_check_output(
    tmp_path: Path, make: Callable[[Path], None], directory: bool, reason: str | None
) -> None:
    path = tmp_path / "out"
    make(path)
    if reason is None:
        check_output(path, directory=directory)
        check_output(path / "new" / "deeper", directory=directory)
    else:
        with pytest.raises(OutputError, match=reason):
            check_output(path, directory=directory)
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="Not a directory"):
        check_output(tmp_path / "file" / "x", directory=directory)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    if IS_ROOT:
        pytest.skip("running as root: chmod does not stop writes (EFBIG tests cover it)")
    directory = tmp_path / "ro"
    directory.mkdir()
    directory.chmod(0o555)
    yield directory
    directory.chmod(0o755)


def test_a_read_only_directory_is_reported(read_only_dir: Path) -> None:
    with pytest.raises(OutputError, match="Permission denied"):
        check_output(read_only_dir / "x.txt")
    with (
        pytest.raises(OutputError, match="Permission denied"),
        atomic_write(read_only_dir / "x.txt") as handle,
    ):
        handle.write("x")
    assert list(read_only_dir.iterdir()) == []


# ------------------------------------------------------------------ the CLI: perturb
def test_perturb_onto_a_fifo(fifo: Path) -> None:
    reader = FifoReader(fifo)
    result = CliRunner().invoke(main, perturb_args(fifo))
    assert result.exit_code == 0, result.output
    data = reader.result().decode("utf-8")
    assert data.count("# sent_id = ") == 3
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert leftovers(fifo.parent) == []


def test_perturb_onto_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.conllu"
    target.write_text("old")
    link = tmp_path / "out.conllu"
    link.symlink_to(target.name)
    result = CliRunner().invoke(main, perturb_args(link))
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert len(read_conllu(target)) == 3


def test_perturb_onto_a_full_device(full_device: Path) -> None:
    result = CliRunner().invoke(main, perturb_args(full_device))
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {full_device}: No space left on device"
    assert stat.S_ISCHR(full_device.stat().st_mode)


def test_perturb_under_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "out.conllu"
    result = CliRunner().invoke(main, perturb_args(out))
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {out}: Not a directory"


def test_perturb_onto_a_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, perturb_args(tmp_path))
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {tmp_path}: Is a directory"


def test_perturb_into_a_read_only_directory(read_only_dir: Path) -> None:
    out = read_only_dir / "out.conllu"
    result = CliRunner().invoke(main, perturb_args(out))
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {out}: Permission denied"


def test_perturb_past_a_file_size_limit(tmp_path: Path) -> None:
    """The stand-in for a full disk: the write itself fails (EFBIG), in a subprocess."""
    out = tmp_path / "out.conllu"
    out.write_text("previous")
    proc = run_limited(perturb_args(out, "--report", "r.json"), 1500, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"error: cannot write {out}: File too large"]
    assert out.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.conllu"]


def test_perturb_whose_report_cannot_be_written_leaves_no_conllu(tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    report = tmp_path / "report"
    report.mkdir()
    result = CliRunner().invoke(main, perturb_args(out, "--report", str(report)))
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {report}: Is a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_perturb_whose_report_fails_at_the_end_leaves_the_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's directory turns into a file while the run works: the write fails
    for real, after the .conllu was written to its temporary; neither is committed."""
    import brittle.engine.perturb.perturb_html as perturb_html

    out = tmp_path / "out.conllu"
    out.write_text("previous")
    report = tmp_path / "reports" / "r.json"
    write = perturb_html.write_conllu

    def write_then_block(*args: object, **kwargs: object) -> int:
        written = write(*args, **kwargs)  # type: ignore[arg-type]
        (tmp_path / "reports").write_text("now a file")
        return written

    monkeypatch.setattr(perturb_html, "write_conllu", write_then_block)
    result = CliRunner().invoke(main, perturb_args(out, "--report", str(report)))
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {report}: Not a directory"
    assert out.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.conllu", "reports"]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_while_committing_leaves_nothing(fifo: Path) -> None:
    """A real SIGINT while the set waits for the FIFO's reader: exit 130, one line, the
    report's finished temporary removed, no report written."""
    tmp_path = fifo.parent
    code = "from brittle.cli.main import main\nmain(prog_name='brittle')\n"
    args = perturb_args(fifo.name, "--report", "r.json")
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell's background job inherits SIGINT ignored; Ctrl-C at a terminal is not.
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while not leftovers(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the report is staged: the commit now waits for a reader
        assert leftovers(tmp_path), "the report was never staged"
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert err.splitlines() == ["interrupted"]
    assert all(line.startswith("perturb shuffle") for line in out.splitlines())  # progress
    assert [p.name for p in tmp_path.iterdir()] == [fifo.name]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_perturb_onto_an_open_descriptor_appends_and_keeps_messages_apart(
    tmp_path: Path,
) -> None:
    """``--out /proc/self/fd/1`` (what ``/dev/stdout`` links to) with stdout appended to
    a file: the CoNLL-U is appended through the descriptor (the file is not replaced)
    and the summary goes to stderr."""
    log = tmp_path / "log.conllu"
    log.write_text("# previous\n")
    inode = log.stat().st_ino
    code = "from brittle.cli.main import main\nmain(prog_name='brittle')\n"
    with log.open("a") as stdout:
        proc = subprocess.run(
            [sys.executable, "-c", code, *perturb_args("/proc/self/fd/1")],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert "wrote /proc/self/fd/1" in proc.stderr
    text = log.read_text()
    assert text.startswith("# previous\n# sent_id = ") and text.count("# sent_id") == 3
    assert "perturbed" not in text  # no summary table among the data
    assert log.stat().st_ino == inode
    assert leftovers(tmp_path) == []


def test_perturb_out_and_report_must_differ(tmp_path: Path) -> None:
    out = tmp_path / "o.conllu"
    result = CliRunner().invoke(main, perturb_args(out, "--report", str(out)))
    assert result.exit_code == 2
    assert "both name" in one_error_line(result)


def test_perturb_to_standard_output(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = CliRunner().invoke(main, perturb_args("-", "--report", str(report)))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# sent_id = ") and result.stdout.count("# sent_id") == 3
    assert "perturb --method shuffle" in result.stderr  # the summary goes to stderr
    (tmp_path / "o.conllu").write_text(result.stdout)
    assert len(read_conllu(tmp_path / "o.conllu")) == 3
    assert json.loads(report.read_text())["command"] == "perturb"


# ------------------------------------------------------------------ the CLI: others
def test_stats_json_onto_a_directory(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["stats", str(FIXTURES / "mwt_empty.conllu"), "--json", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {tmp_path}: Is a directory"
    assert result.stdout == ""  # checked before the treebank is read


def test_stats_json_onto_a_fifo_and_to_stdout(fifo: Path) -> None:
    reader = FifoReader(fifo)
    args = ["stats", str(FIXTURES / "mwt_empty.conllu"), "--json"]
    result = CliRunner().invoke(main, [*args, str(fifo)])
    assert result.exit_code == 0, result.output
    assert json.loads(reader.result())["sentences"] == 3
    result = CliRunner().invoke(main, [*args, "-"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sentences"] == 3
    assert "UPOS" in result.stderr


def test_compare_methods_onto_a_file(tmp_path: Path) -> None:
    out = tmp_path / "file"
    out.write_text("keep")
    args = [
        "compare-methods", str(TREEBANK), "--methods", "shuffle", "--budgets", "1",
        "--parser", "gold", "--limit", "3", "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: cannot write {out}: Not a directory"
    assert out.read_text() == "keep"


def test_compare_methods_writes_its_files_as_a_set(tmp_path: Path) -> None:
    """The plot is the largest file: past the size limit, no file of the set is left
    and the directory made for them is gone."""
    args = [
        "compare-methods", str(TREEBANK), "--methods", "shuffle", "--budgets", "1",
        "--parser", "gold", "--limit", "3", "--out", "out",
    ]  # fmt: skip
    proc = run_limited(args, 20_000, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        "error: cannot write out/compare-methods.png: File too large"
    ]
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ the exit-code policy
@pytest.mark.parametrize(
    ("raised", "code", "line"),
    [
        (ConfigError("bad option"), 2, "error: bad option"),
        (
            ResourceMissingError("the probe", ["/nowhere"], "brittle train-probe"),
            2,
            "error: the probe is not available (looked in: /nowhere). Fix: brittle train-probe",
        ),
        (OutputError("o.conllu", "No space left on device"), 2, None),
        (click.BadParameter("nope", param_hint="'--x'"), 2, None),
        (KeyboardInterrupt(), 130, "interrupted"),
        (
            KeyboardInterrupt("interrupted after 3/10 sentences; rerun with --resume"),
            130,
            "interrupted after 3/10 sentences; rerun with --resume",
        ),
    ],
)
def test_exit_codes(raised: BaseException, code: int, line: str | None) -> None:
    @click.command("test-raise")
    def raiser() -> None:
        raise raised

    main.add_command(raiser)
    try:
        result = CliRunner().invoke(main, ["test-raise"])
    finally:
        main.commands.pop("test-raise")
    assert result.exit_code == code
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    if line is not None:
        assert lines[0] == line
    if code == 2:
        assert lines[0].startswith("error: ")
    assert result.stdout == ""


def test_an_internal_error_keeps_the_traceback_and_asks_for_a_report() -> None:
    @click.command("test-bug")
    @click.argument("words", nargs=-1)
    def bug(words: tuple[str, ...]) -> None:
        raise ZeroDivisionError("a bug")

    main.add_command(bug)
    try:
        result = CliRunner().invoke(main, ["test-bug", "two words", "x"])
    finally:
        main.commands.pop("test-bug")
    assert result.exit_code == 1
    assert "Traceback" in result.stderr and "ZeroDivisionError: a bug" in result.stderr
    last = result.stderr.splitlines()[-1]
    assert "internal error" in last and "report it" in last
    assert last.endswith("the command line: brittle test-bug 'two words' x")


def test_brittle_alone_prints_its_help() -> None:
    result = CliRunner().invoke(main, [])
    assert result.output.startswith("Usage: ") and "Commands:" in result.output
    assert not any(line.startswith("error:") for line in result.output.splitlines())


def test_a_message_over_several_lines_is_printed_as_one() -> None:
    @click.command("test-lines")
    def lines() -> None:
        raise ConfigError("first\n  second\n")

    main.add_command(lines)
    try:
        result = CliRunner().invoke(main, ["test-lines"])
    finally:
        main.commands.pop("test-lines")
    assert result.exit_code == 2 and result.stderr == "error: first second\n"


def test_usage_errors_are_one_line_without_a_blank_line() -> None:
    for args in (["perturb"], ["nope"], ["--bogus"], ["perturb", str(TREEBANK), "--budget", "x"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, args
        line = one_error_line(result)
        assert "--help'" in line, line
