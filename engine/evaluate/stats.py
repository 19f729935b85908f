"""Treebank statistics: what ``brittle stats`` reports, as data."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from brittle.engine.core.atomic import write_json
from brittle.engine.core.conllu import ReadStats, iter_conllu
from brittle.engine.core.sentence import Sentence

#: Upper edges of the sentence-length histogram bins (the last bin is open).
LENGTH_BINS: tuple[int, ...] = (5, 10, 15, 20, 25, 30, 40, 50)


@dataclass(frozen=True)
class TreebankStats:
    """Counts over one or more CoNLL-U files.

    ``length_histogram`` maps a bin label such as ``"1-5"`` or ``">50"`` to a count of
    sentences; ``problems`` lists ``file:line: problem`` strings for skipped sentences and
    non-fatal issues.
    """

    files: tuple[str, ...]
    sentences: int
    tokens: int
    multiword_tokens: int
    empty_nodes: int
    length_histogram: dict[str, int]
    upos_counts: dict[str, int]
    non_projective: int
    mean_length: float
    max_length: int
    problems: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "files": list(self.files),
            "sentences": self.sentences,
            "tokens": self.tokens,
            "multiword_tokens": self.multiword_tokens,
            "empty_nodes": self.empty_nodes,
            "mean_length": self.mean_length,
            "max_length": self.max_length,
            "length_histogram": self.length_histogram,
            "upos_counts": self.upos_counts,
            "non_projective": self.non_projective,
            "problems": list(self.problems),
        }


def _bin_label(length: int) -> str:
    low = 1
    for edge in LENGTH_BINS:
        if length <= edge:
            return f"{low}-{edge}"
        low = edge + 1
    return f">{LENGTH_BINS[-1]}"


def bin_labels() -> list[str]:
    """Histogram bin labels in order."""
    labels = []
    low = 1
    for edge in LENGTH_BINS:
        labels.append(f"{low}-{edge}")
        low = edge + 1
    labels.append(f">{LENGTH_BINS[-1]}")
    return labels


def sentences_stats(sentences: Iterable[Sentence], files: Sequence[str] = ()) -> TreebankStats:
    """Statistics of already-read sentences."""
    n_sent = n_tok = n_mwt = n_empty = n_nonproj = max_len = 0
    hist: Counter[str] = Counter()
    upos: Counter[str] = Counter()
    for s in sentences:
        n = len(s)
        n_sent += 1
        n_tok += n
        max_len = max(max_len, n)
        hist[_bin_label(n)] += 1
        upos.update(s.upos)
        for t in s.rows:
            kind = t.kind
            n_mwt += kind == "multiword"
            n_empty += kind == "empty"
        if not s.is_projective():
            n_nonproj += 1
    return TreebankStats(
        files=tuple(files),
        sentences=n_sent,
        tokens=n_tok,
        multiword_tokens=n_mwt,
        empty_nodes=n_empty,
        length_histogram={label: hist.get(label, 0) for label in bin_labels()},
        upos_counts=dict(sorted(upos.items(), key=lambda kv: (-kv[1], kv[0]))),
        non_projective=n_nonproj,
        mean_length=(n_tok / n_sent) if n_sent else 0.0,
        max_length=max_len,
    )


def treebank_stats(
    paths: Sequence[str | os.PathLike[str]], *, skip_invalid: bool = False
) -> TreebankStats:
    """Statistics of CoNLL-U files, read in a stream.

    With ``skip_invalid`` bad sentences are skipped and listed in ``problems``; otherwise
    the first one raises :class:`~brittle.engine.core.errors.BrittleInputError`.
    """
    read = ReadStats()

    def stream() -> Iterable[Sentence]:
        for path in paths:
            yield from iter_conllu(path, skip_invalid=skip_invalid, stats=read)

    stats = sentences_stats(stream(), [str(p) for p in paths])
    problems = tuple(str(err) for err in read.skipped)
    return TreebankStats(**{**stats.__dict__, "problems": problems})


def write_stats_json(stats: TreebankStats, path: str | os.PathLike[str]) -> None:
    """``stats`` as indented JSON with a final newline, written by
    :func:`~brittle.engine.core.atomic.write_json` (``-``: standard output).

    Raises:
        OutputError: ``path`` cannot be written (a directory, a full disk...).
    """
    write_json(path, stats.to_dict())
