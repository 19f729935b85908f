"""Word-order perturbations (Clouatre et al.): full shuffle, phrase shuffle, neighbour flip.

Each generator reorders the units of a sentence at one ``level`` — words, subword tokens
of a named tokenizer (default: the bundled MiniLM's), or characters (see
:mod:`brittle.search.generators.units`) — and returns the permutation it applied, so the
displacement metrics are exact: ``permutation[j]`` is the original index of the unit now
at position ``j`` (the convention of :mod:`brittle.scorers.order` and of
``Perturbation.order``).

- ``shuffle``: a uniformly random permutation of all units.
- ``phrase-shuffle``: the units are cut into contiguous phrases; each phrase takes part
  with probability ``rho``, and the taking-part phrases are randomly permuted among
  their own slots (``rho = 1`` shuffles all phrases, ``rho = 0`` nothing). Phrases come
  from the dependency tree (``segmentation="tree"``): the maximal contiguous runs of
  words under the same node at depth ``depth`` (depth 1: the root's dependents, so for
  "The cat sat on the mat ." the phrases are ``The cat | sat | on the mat | .``; words
  above that depth are one-word phrases); subwords and characters follow their word's
  phrase, and at character level the space between two phrases stays between
  phrases. With ``segmentation="random"`` every gap between adjacent units is a phrase
  boundary with probability ``boundary``.
- ``neighbour-flip``: left to right, each unit is swapped with the next with probability
  ``rho``; swapped pairs do not overlap (after a swap the scan skips the pair).

With ``keep_spaces`` at character level the spaces stay where they are and only the
other characters move. ``tau`` (optional) rejects reorderings that move more than
``tau`` units.

Word-level reorderings are also :class:`~brittle.engine.core.perturbation.Perturbation`
records (``order=``): applying them writes valid CoNLL-U with HEAD renumbered. Every
level yields :class:`TextReordering` records (text, permutation, DND, IDC).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.scorers.order import order_scores_batch
from brittle.search.generators.base import GENERATORS, Generator, GeneratorFamily, sentence_rng
from brittle.search.generators.units import Level, UnitSequence, load_tokenizer, units_of

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "NeighbourFlip",
    "PhraseShuffle",
    "Reordering",
    "Shuffle",
    "TextReordering",
    "tree_phrases",
]


@dataclass(frozen=True, slots=True)
class TextReordering:
    """One reordering of a sentence's units, with its exact displacement scores.

    Attributes:
        sentence_id: the sentence.
        method: the generator (``shuffle``, ``phrase-shuffle``, ``neighbour-flip``).
        level: ``word``, ``subword`` or ``character``.
        units: the original units (k,).
        permutation: ``permutation[j]`` is the original index of the unit at position j.
        original_text: the units joined as at their level.
        perturbed_text: the reordered units joined the same way.
        dnd: direct neighbour displacement of ``permutation`` (0..1).
        idc: index displacement count of ``permutation`` (0..0.5).
    """

    sentence_id: str
    method: str
    level: Level
    units: tuple[str, ...]
    permutation: tuple[int, ...]
    original_text: str
    perturbed_text: str
    dnd: float
    idc: float

    @property
    def perturbed_units(self) -> tuple[str, ...]:
        """The units in their new order."""
        return tuple(self.units[i] for i in self.permutation)

    @property
    def moved(self) -> int:
        """Units not at their original position."""
        return sum(1 for j, i in enumerate(self.permutation) if i != j)


def tree_phrases(heads: Sequence[int] | np.ndarray, *, depth: int = 1) -> tuple[int, ...]:
    """Phrase id of every word: maximal runs of words under the same depth-``depth`` node.

    Args:
        heads: HEAD of each word (n,), 1-based, 0 for the root.
        depth: depth of the nodes whose subtrees form phrases (root = 0); words less
            deep are phrases of their own.

    Returns:
        Phrase ids (n,), non-decreasing from 0; equal ids form a contiguous phrase.
    """
    hs = [int(h) for h in heads]
    n = len(hs)
    anchors: list[int] = []
    for w in range(n):
        chain = [w]
        node = w
        seen = {w}
        while hs[node] != 0:
            node = hs[node] - 1
            if node in seen:  # a cycle: treat the word as its own phrase
                chain = [w]
                break
            seen.add(node)
            chain.append(node)
        # chain[-1] is the root-most node (depth 0); chain[-1 - depth] is at ``depth``.
        d = len(chain) - 1
        anchors.append(chain[d - depth] if d >= depth else w)
    ids: list[int] = []
    current = -1
    for w in range(n):
        if w == 0 or anchors[w] != anchors[w - 1]:
            current += 1
        ids.append(current)
    return tuple(ids)


@dataclass(frozen=True, kw_only=True)
class Reordering(Generator):
    """Base class of the reordering generators.

    Attributes:
        level: ``word``, ``subword`` or ``character``.
        tokenizer: tokenizer name or directory for ``subword`` (``None``: the bundled
            MiniLM's).
        keep_spaces: at ``character`` level, leave spaces in place.
        max_tries: draws attempted per sentence before giving up on ``b`` distinct
            reorderings (default ``20 * b + 100``).
    """

    family: ClassVar[GeneratorFamily] = "reordering"

    level: Level = "word"
    tokenizer: str | None = None
    keep_spaces: bool = False
    max_tries: int | None = None
    _cache: dict[str, PreTrainedTokenizerBase] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.level not in ("word", "subword", "character"):
            raise ConfigError(f"unknown level {self.level!r} (word, subword or character)")

    @abstractmethod
    def draw(self, groups: Sequence[int], rng: np.random.Generator) -> list[int]:
        """A permutation of ``range(len(groups))``; ``groups`` are phrase ids per unit."""

    def groups(self, sentence: Sentence, units: UnitSequence, movable: Sequence[int]) -> list[int]:
        """Phrase id per movable unit (only phrase shuffle uses them)."""
        return [0] * len(movable)

    def units(self, sentence: Sentence) -> UnitSequence:
        """The sentence's units at this generator's level."""
        tok = None
        if self.level == "subword":
            if "tokenizer" not in self._cache:
                self._cache["tokenizer"] = load_tokenizer(self.tokenizer)
            tok = self._cache["tokenizer"]
        return units_of(sentence, self.level, tokenizer=tok)

    def permutations(
        self, sentence: Sentence, *, b: int, seed: int, tau: int | None = None
    ) -> tuple[UnitSequence, list[tuple[int, ...]]]:
        """The units and up to ``b`` distinct non-identity permutations of them."""
        if b < 0:
            raise ValueError(f"b must be non-negative, got {b}")
        units = self.units(sentence)
        k = len(units)
        movable = [
            j
            for j in range(k)
            if not (self.keep_spaces and self.level == "character" and units.units[j] == " ")
        ]
        groups = self.groups(sentence, units, movable)
        rng = sentence_rng(seed, sentence.sent_id)
        tries = 20 * b + 100 if self.max_tries is None else self.max_tries
        seen: set[tuple[int, ...]] = set()
        out: list[tuple[int, ...]] = []
        while len(out) < b and tries > 0 and len(movable) > 1:
            tries -= 1
            local = self.draw(groups, rng)
            perm = list(range(k))
            for j, src in enumerate(local):
                perm[movable[j]] = movable[src]
            key = tuple(perm)
            moved = sum(1 for j, i in enumerate(key) if i != j)
            if moved == 0 or key in seen or (tau is not None and moved > tau):
                continue
            seen.add(key)
            out.append(key)
        return units, out

    def reorder(
        self, sentences: Sequence[Sentence], *, b: int, seed: int, tau: int | None = None
    ) -> list[list[TextReordering]]:
        """Up to ``b`` distinct reorderings per sentence, as text records with DND/IDC."""

        out: list[list[TextReordering]] = []
        for sentence in sentences:
            units, perms = self.permutations(sentence, b=b, seed=seed, tau=tau)
            if not perms:
                out.append([])
                continue
            dnd, idc = order_scores_batch(np.asarray(perms, dtype=np.int64))
            original = units.text()
            out.append(
                [
                    TextReordering(
                        sentence.sent_id,
                        self.method,
                        self.level,
                        units.units,
                        perm,
                        original,
                        units.text(perm),
                        float(d),
                        float(c),
                    )
                    for perm, d, c in zip(perms, dnd.tolist(), idc.tolist(), strict=True)
                ]
            )
        return out

    def perturb(
        self, sentences: Sequence[Sentence], *, b: int, seed: int, tau: int | None = None
    ) -> list[list[Perturbation]]:
        """Word-level reorderings as ``Perturbation(order=...)`` records.

        Raises:
            ConfigError: at subword or character level (not expressible as CoNLL-U; use
                :meth:`reorder`).
        """
        if self.level != "word":
            raise ConfigError(
                f"{self.method} at {self.level} level cannot be written as CoNLL-U; "
                "use level='word' or the text reorderings"
            )
        return [
            [
                Perturbation(sentence.sent_id, self.method, order=perm)
                for perm in self.permutations(sentence, b=b, seed=seed, tau=tau)[1]
            ]
            for sentence in sentences
        ]


@GENERATORS.register("shuffle", help="full shuffle of words, subwords or characters")
@dataclass(frozen=True, kw_only=True)
class Shuffle(Reordering):
    """Uniformly random permutation of all (movable) units."""

    def draw(self, groups: Sequence[int], rng: np.random.Generator) -> list[int]:
        return [int(x) for x in rng.permutation(len(groups))]


@GENERATORS.register(
    "phrase-shuffle", help="shuffle tree phrases (or random chunks) with probability rho"
)
@dataclass(frozen=True, kw_only=True)
class PhraseShuffle(Reordering):
    """Phrases take part in a shuffle with probability ``rho``.

    Attributes:
        rho: probability that a phrase moves (0..1).
        segmentation: ``tree`` (dependency subtrees at ``depth``) or ``random`` (cuts
            between adjacent units with probability ``boundary``).
        depth: tree depth of the phrase heads (1 = the root's dependents).
        boundary: cut probability for ``random`` segmentation.
    """

    requires: ClassVar[frozenset[str]] = frozenset({"form", "heads"})

    rho: float = 0.5
    segmentation: Literal["tree", "random"] = "tree"
    depth: int = 1
    boundary: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.rho <= 1.0 or not 0.0 <= self.boundary <= 1.0:
            raise ConfigError("rho and boundary must lie in [0, 1]")
        if self.depth < 1:
            raise ConfigError(f"depth must be at least 1, got {self.depth}")

    def groups(self, sentence: Sentence, units: UnitSequence, movable: Sequence[int]) -> list[int]:
        if self.segmentation == "random":
            return [0] * len(movable)  # cut at draw time
        phrase = tree_phrases(sentence.heads, depth=self.depth)
        ids = [phrase[units.word_of[j]] for j in movable]
        if units.level == "character":
            # A space between two phrases is a separator of its own that stays between
            # phrases (negative id: never moved), so moved phrases keep their spacing.
            for m, j in enumerate(movable):
                nxt = units.word_of[j] + 1
                if units.units[j] == " " and nxt < len(phrase) and phrase[nxt] != ids[m]:
                    ids[m] = -1 - m
        return ids

    def draw(self, groups: Sequence[int], rng: np.random.Generator) -> list[int]:
        k = len(groups)
        if self.segmentation == "random":
            cuts = rng.random(max(k - 1, 0)) < self.boundary
            ids = np.concatenate([[0], np.cumsum(cuts)]).tolist() if k else []
        else:
            ids = list(groups)
        spans: list[tuple[int, int]] = []
        start = 0
        for j in range(1, k + 1):
            if j == k or ids[j] != ids[j - 1]:
                spans.append((start, j))
                start = j
        fixed = np.array([ids[a] < 0 for a, _ in spans], dtype=np.bool_)
        take = np.flatnonzero((rng.random(len(spans)) < self.rho) & ~fixed)
        order = list(range(len(spans)))
        if take.size >= 2:
            shuffled = rng.permutation(take)
            for slot, src in zip(take.tolist(), shuffled.tolist(), strict=True):
                order[slot] = src
        return [u for s in order for u in range(*spans[s])]


@GENERATORS.register("neighbour-flip", help="swap adjacent units with probability rho")
@dataclass(frozen=True, kw_only=True)
class NeighbourFlip(Reordering):
    """Adjacent units swapped left to right with probability ``rho``, pairs disjoint.

    Attributes:
        rho: probability of swapping a unit with the next one (0..1).
    """

    rho: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.rho <= 1.0:
            raise ConfigError("rho must lie in [0, 1]")

    def draw(self, groups: Sequence[int], rng: np.random.Generator) -> list[int]:
        k = len(groups)
        order = list(range(k))
        flips = rng.random(max(k - 1, 0)) < self.rho
        j = 0
        while j < k - 1:
            if flips[j]:
                order[j], order[j + 1] = order[j + 1], order[j]
                j += 2
            else:
                j += 1
        return order
