"""Immutable records for CoNLL-U sentences.

A :class:`Sentence` keeps every line of its block (comments, word lines, multiword-token
ranges and empty nodes) as raw column text, so writing it back is byte-identical, and
offers array views (``heads``, ``forms``, ``upos``) for the kernels. Nothing heavy is
imported here: the tree kernels (Numba) load on first use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np

from brittle.engine.core import tree

if TYPE_CHECKING:
    from numpy.typing import NDArray

TokenKind = Literal["word", "multiword", "empty"]

#: The ten CoNLL-U columns, in order.
COLUMNS: tuple[str, ...] = (
    "id",
    "form",
    "lemma",
    "upos",
    "xpos",
    "feats",
    "head",
    "deprel",
    "deps",
    "misc",
)


@dataclass(frozen=True, slots=True)
class Token:
    """One CoNLL-U token line, every column kept as written (``_`` for empty)."""

    id: str
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: str = "_"
    deprel: str = "_"
    deps: str = "_"
    misc: str = "_"

    @property
    def kind(self) -> TokenKind:
        """``word`` (integer ID), ``multiword`` (range ``3-4``) or ``empty`` (``5.1``)."""
        if "-" in self.id:
            return "multiword"
        if "." in self.id:
            return "empty"
        return "word"

    @property
    def span(self) -> tuple[int, int]:
        """First and last word ID covered (a word covers only itself)."""
        if "-" in self.id:
            first, last = self.id.split("-")
            return int(first), int(last)
        whole = int(self.id.split(".")[0])
        return whole, whole

    def columns(self) -> tuple[str, ...]:
        """The ten columns in file order."""
        return (
            self.id,
            self.form,
            self.lemma,
            self.upos,
            self.xpos,
            self.feats,
            self.head,
            self.deprel,
            self.deps,
            self.misc,
        )

    def line(self) -> str:
        """The token as one tab-separated line, without the newline."""
        return "\t".join(self.columns())

    @property
    def no_space_after(self) -> bool:
        """Whether MISC says ``SpaceAfter=No`` (no space between this token and the
        next in the surface text)."""
        misc = self.misc
        return "SpaceAfter=No" in misc and "SpaceAfter=No" in misc.split("|")

    @property
    def feats_dict(self) -> dict[str, str]:
        """FEATS as a mapping (``{}`` for ``_``)."""
        return _parse_pairs(self.feats)

    @property
    def misc_dict(self) -> dict[str, str]:
        """MISC as a mapping (``{}`` for ``_``); items without ``=`` map to ``""``."""
        return _parse_pairs(self.misc)

    def with_misc(self, **items: str | None) -> Token:
        """A copy with MISC items set (``None`` removes an item); order is kept, new last."""
        pairs = _parse_pairs(self.misc)
        for key, value in items.items():
            if value is None:
                pairs.pop(key, None)
            else:
                pairs[key] = value
        return replace(self, misc=_format_pairs(pairs))


def _set_metadata(comments: tuple[str, ...], items: Mapping[str, str]) -> tuple[str, ...]:
    """``comments`` with each ``# key = value`` of ``items`` set: the first comment of
    that key replaced in place, or the line appended (in ``items`` order)."""
    from conllu.parser import parse_pair_value

    out = list(comments)
    missing = dict(items)
    for i, comment in enumerate(out):
        key = parse_pair_value(comment[1:])[0]
        if key in missing:
            out[i] = f"# {key} = {missing.pop(key)}"
            if not missing:
                break
    out.extend(f"# {key} = {value}" for key, value in missing.items())
    return tuple(out)


def _parse_pairs(text: str) -> dict[str, str]:
    if text in ("_", ""):
        return {}
    out: dict[str, str] = {}
    for item in text.split("|"):
        key, _, value = item.partition("=")
        out[key] = value
    return out


def _format_pairs(pairs: Mapping[str, str]) -> str:
    if not pairs:
        return "_"
    return "|".join(f"{k}={v}" if v != "" else k for k, v in pairs.items())


#: Cached views of a sentence that depend on its token IDs alone.
_ID_VIEWS: tuple[str, ...] = ("_word_rows", "multiword_positions")
#: Those and the surface layout, which also depends on each token's ``SpaceAfter=No``.
_LAYOUT_VIEWS: tuple[str, ...] = (*_ID_VIEWS, "_surface_layout")


@dataclass(frozen=True)
class Sentence:
    """One CoNLL-U sentence block.

    Attributes:
        sent_id: the ``# sent_id`` value, or ``"<file>#<n>"`` when the block has none.
        comments: raw comment lines (with the leading ``#``), in file order.
        rows: every token line in file order: words, multiword ranges, empty nodes.
        source: the file the sentence was read from (not part of equality).
        line: 1-based line number of the block's first line in ``source``.
    """

    sent_id: str
    comments: tuple[str, ...]
    rows: tuple[Token, ...]
    source: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    # ----------------------------------------------------------------- views
    @cached_property
    def words(self) -> tuple[Token, ...]:
        """Syntactic words (integer IDs 1..n), in order."""
        return tuple(t for t in self.rows if t.kind == "word")

    def __len__(self) -> int:
        return len(self.words)

    @cached_property
    def multiword_positions(self) -> frozenset[int]:
        """0-based indices of the words covered by a multiword token."""
        covered: set[int] = set()
        for tok in self.rows:
            if tok.kind == "multiword":
                first, last = tok.span
                covered.update(range(first - 1, last))
        return frozenset(covered)

    @cached_property
    def heads(self) -> NDArray[np.int32]:
        """HEAD of each word, shape (n,), int32; 0 is the root, words are numbered 1..n.

        The array is read-only.
        """
        arr = np.fromiter((int(t.head) for t in self.words), dtype=np.int32, count=len(self))
        arr.setflags(write=False)
        return arr

    @cached_property
    def forms(self) -> tuple[str, ...]:
        """FORM of each word."""
        return tuple(t.form for t in self.words)

    @cached_property
    def lemmas(self) -> tuple[str, ...]:
        """LEMMA of each word."""
        return tuple(t.lemma for t in self.words)

    @cached_property
    def upos(self) -> tuple[str, ...]:
        """UPOS of each word."""
        return tuple(t.upos for t in self.words)

    @cached_property
    def xpos(self) -> tuple[str, ...]:
        """XPOS of each word."""
        return tuple(t.xpos for t in self.words)

    @cached_property
    def deprels(self) -> tuple[str, ...]:
        """DEPREL of each word."""
        return tuple(t.deprel for t in self.words)

    def column(self, name: str) -> tuple[str, ...]:
        """The raw text of one word column (``form``, ``lemma``, ``upos``, ``xpos``,
        ``feats``, ``head``, ``deprel``, ``deps``, ``misc``), one item per word."""
        if name not in COLUMNS or name == "id":
            raise ValueError(f"unknown word column {name!r}")
        return tuple(getattr(t, name) for t in self.words)

    @cached_property
    def metadata(self) -> dict[str, str]:
        """``# key = value`` comments as a mapping (keys without value map to ``""``)."""
        from conllu.parser import parse_pair_value

        out: dict[str, str] = {}
        for comment in self.comments:
            key, value = parse_pair_value(comment[1:])
            if key:
                out[key] = value if value is not None else ""
        return out

    @property
    def text(self) -> str:
        """The ``# text`` comment, or the surface text rebuilt from tokens and SpaceAfter."""
        return self.metadata.get("text") or self.surface_text()

    def surface_tokens(self) -> Iterator[Token]:
        """The tokens that make up the surface text, in order: multiword tokens stand for
        the words they cover, empty nodes are left out."""
        rows = self.rows
        for i, _ in self._surface_layout:
            yield rows[i]

    @cached_property
    def _surface_layout(self) -> tuple[tuple[int, bool], ...]:
        """For each token of :meth:`surface_tokens`: its index in ``rows`` and whether a
        space follows it (no ``SpaceAfter=No``)."""
        out: list[tuple[int, bool]] = []
        covered_until = 0
        for i, tok in enumerate(self.rows):
            kind = tok.kind
            if kind == "empty":
                continue
            first, last = tok.span
            if kind == "word" and first <= covered_until:
                continue
            if kind == "multiword":
                covered_until = last
            out.append((i, not tok.no_space_after))
        return tuple(out)

    def surface_text(self) -> str:
        """Surface text from the tokens: multiword tokens give their own form."""
        rows = self.rows
        parts: list[str] = []
        for i, space in self._surface_layout:
            parts.append(rows[i].form)
            if space:
                parts.append(" ")
        return "".join(parts).rstrip(" ")

    # ------------------------------------------------------------ tree views
    def children(self) -> tuple[tuple[int, ...], ...]:
        """Children of each node, 0..n (index 0 is the artificial root), in word order."""
        return tree.children(self.heads)

    def distance_matrix(self) -> NDArray[np.int32]:
        """Word-to-word tree path lengths, shape (n, n), int32."""
        return tree.distance_matrix(self.heads)

    def depths(self) -> NDArray[np.int32]:
        """Depth of each word, shape (n,), int32; the root word has depth 0."""
        return tree.depths(self.heads)

    def root_index(self) -> int:
        """0-based index of the root word."""
        return tree.root_index(self.heads)

    def max_depth(self) -> int:
        """Largest word depth (0 for a one-word sentence)."""
        return int(self.depths().max()) if len(self) else 0

    def is_projective(self) -> bool:
        """Whether no dependency arc crosses another."""
        return tree.is_projective(self.heads)

    def problems(self) -> list[str]:
        """Tree problems (empty list when the tree is valid)."""
        return tree.tree_problems(self.heads)

    # --------------------------------------------------------------- editing
    @cached_property
    def _word_rows(self) -> tuple[int, ...]:
        """Index in ``rows`` of each word, in word order."""
        return tuple(i for i, t in enumerate(self.rows) if t.kind == "word")

    def with_words(self, words: Mapping[int, Token]) -> Sentence:
        """A copy with some words replaced, keyed by 0-based word index (each token in
        its word's row, whatever its ID column says).

        Editing is on the hot path of every search (each candidate is a new sentence), so
        the copy keeps what it can of the original's derived views: those of the token
        IDs when every replacement keeps its word's ID, and the surface layout too when
        none changes its ``SpaceAfter=No``.
        """
        if not words:
            return self
        rows = list(self.rows)
        where = self._word_rows
        same_ids = same_layout = True
        for i, tok in words.items():
            k = where[i]
            old = rows[k]
            if tok.id != old.id:
                same_ids = same_layout = False
            elif same_layout and tok.no_space_after != old.no_space_after:
                same_layout = False
            rows[k] = tok
        out = Sentence(self.sent_id, self.comments, tuple(rows), self.source, self.line)
        if same_ids:
            if same_layout:
                # Laid out once here, on the sentence a search edits over and over, and
                # lent to every copy (a perturbed sentence writes its text at once).
                _ = self._surface_layout
            self._lend(out, _LAYOUT_VIEWS if same_layout else _ID_VIEWS)
        return out

    def _lend(self, other: Sentence, views: tuple[str, ...]) -> None:
        """Give ``other`` (a fresh copy) the views named in ``views`` this sentence has
        computed (cached properties live in the instance's ``__dict__``)."""
        mine, theirs = self.__dict__, other.__dict__
        for name in views:
            if name in mine:
                theirs[name] = mine[name]

    def with_comments(self, comments: tuple[str, ...]) -> Sentence:
        """A copy with other comment lines."""
        return replace(self, comments=comments)

    def with_metadata(self, key: str, value: str) -> Sentence:
        """A copy whose ``# key = value`` comment is set (replaced in place or appended)."""
        return self.with_metadata_items({key: value})

    def with_metadata_items(self, items: Mapping[str, str]) -> Sentence:
        """:meth:`with_metadata` for each item, in order, in one copy (the rows are the
        same, so it keeps the token views :meth:`with_words` keeps)."""
        out = replace(self, comments=_set_metadata(self.comments, items))
        self._lend(out, _LAYOUT_VIEWS)
        return out

    def to_conllu(self) -> str:
        """The block as CoNLL-U text, ending with the blank line that closes it."""
        lines = [*self.comments, *(t.line() for t in self.rows)]
        return "\n".join(lines) + "\n\n"


@dataclass
class ColumnSurvey:
    """Which of some word columns are blank (``_`` on every word) in a stream of
    sentences, gathered one sentence at a time.

    Attributes:
        columns: the columns asked about (CoNLL-U names; ``heads`` counts as ``head``).
        sentences: sentences seen so far.
    """

    columns: frozenset[str]
    sentences: int = 0
    _filled: set[str] = field(default_factory=set)

    def add(self, sentence: Sentence) -> None:
        """Take one sentence into account."""
        self.sentences += 1
        for name in self.columns - self._filled:
            if any(v != "_" for v in sentence.column(name)):
                self._filled.add(name)

    @property
    def blank(self) -> list[str]:
        """The asked columns no word had a value in, sorted (none before any sentence)."""
        return sorted(self.columns - self._filled) if self.sentences else []
