"""No command replaces one of its own inputs.

Every command names its inputs (treebanks, probe and model directories, earlier
results) and its outputs (files and directories) and calls :func:`check_no_overlap`
before any work. An output is refused when it is an input (by real path, after
symbolic links and ``..``, and by device and inode, so a hard link counts), when it is
a directory that holds an input (the run could replace or remove the input's file), or
when it already exists inside an input directory (it is then one of the input's files,
such as a probe's ``probe.json``). A new file or directory inside an input directory
is allowed: it replaces nothing.

Standard output (``-``) and outputs that are not regular files or directories (a
character device such as ``/dev/null``, a FIFO) never overlap: writing them replaces
nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from brittle.engine.core.errors import ConfigError

__all__ = ["Named", "check_no_overlap", "named"]

#: How a command names standard input or output.
_DASH = "-"

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Named:
    """A path as the command line names it.

    Attributes:
        label: the option or argument, as ``--help`` shows it (``--out``, ``TREEBANK``).
        path: the path the user gave.
    """

    label: str
    path: PathLike

    @property
    def shown(self) -> str:
        return f"{self.label} {os.fspath(self.path)}"


def named(label: str, paths: Iterable[PathLike | None] | PathLike | None) -> list[Named]:
    """``paths`` (one, several or ``None``) under one label, ``None`` dropped."""
    if paths is None:
        return []
    if isinstance(paths, str | os.PathLike):
        return [Named(label, paths)]
    return [Named(label, p) for p in paths if p is not None]


def _real(path: PathLike) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def _replaceable(path: PathLike) -> bool:
    """Whether writing ``path`` could replace something: it is standard output, a
    device or a FIFO (written straight into), or not (a file, a directory, nothing)."""
    if os.fspath(path) == _DASH:
        return False
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return True  # nothing there yet: it will be a new file or directory
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def _same(a: PathLike, b: PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return _real(a) == _real(b)


def _inside(inner: PathLike, outer: PathLike) -> bool:
    """Whether ``inner`` lies strictly inside the directory ``outer`` (real paths)."""
    a, b = _real(inner), _real(outer)
    return a != b and os.path.commonpath([a, b]) == b


def _relation(a: PathLike, b: PathLike) -> str | None:
    """How ``a`` overlaps ``b``: ``"is"``, ``"inside"`` (a in b), ``"holds"`` (b in
    a), or ``None``."""
    if _same(a, b):
        return "is"
    if _inside(a, b):
        return "inside"
    if _inside(b, a):
        return "holds"
    return None


def check_no_overlap(inputs: Iterable[Named], outputs: Iterable[Named]) -> None:
    """Refuse outputs that would replace an input, or each other.

    Cheap (a few ``stat`` calls per pair); call it before anything loads.

    Args:
        inputs: every path the command reads.
        outputs: every path it writes (files or directories).

    Raises:
        ConfigError: an output is an input, holds an input, or is a file or directory
            already inside an input directory; or two outputs are the same path or one
            holds the other.
    """
    ins = [n for n in inputs if os.fspath(n.path) != _DASH]
    outs = [n for n in outputs if _replaceable(n.path)]
    for out in outs:
        for source in ins:
            relation = _relation(out.path, source.path)
            if relation == "is":
                raise ConfigError(
                    f"{out.shown} is the input {source.shown}: brittle never replaces "
                    "its input; write to another path"
                )
            if relation == "holds":
                raise ConfigError(
                    f"{out.shown} holds the input {source.shown}, which the run could "
                    "replace; write to another directory"
                )
            if relation == "inside" and os.path.lexists(out.path):
                raise ConfigError(
                    f"{out.shown} is part of the input {source.shown}, which must stay "
                    "as it is; write to another path"
                )
    for k, first in enumerate(outs):
        for second in outs[k + 1 :]:
            relation = _relation(first.path, second.path)
            if relation == "is":
                raise ConfigError(
                    f"{first.label} and {second.label} both name {os.fspath(first.path)}; "
                    "give two paths"
                )
            if relation is not None:
                inner, outer = (first, second) if relation == "inside" else (second, first)
                raise ConfigError(
                    f"{inner.shown} lies inside {outer.shown}; give two separate paths"
                )
