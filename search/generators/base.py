"""Shared records and base classes of the candidate generators.

Generators are split by what they change:

- **Substitution generators** (``copos``, ``coco``, ``random``, ``jabberwocky``,
  ``neighbours``) first propose, for every eligible position of every sentence of a
  batch, a ranked tuple of replacement :data:`Candidate` pairs ``(form, lemma)`` — one
  :class:`SubstitutionTable` per sentence — and then draw ``b`` random ``tau``-word
  :class:`~brittle.engine.perturbation.Perturbation` records from each table with a seeded
  ``numpy.random.Generator`` (:func:`brittle.search.generators.sampling.sample_substitutions`).
  Separating the proposal from the draw lets a search strategy reuse one table for many
  draws, for greedy or beam search over positions, and lets constraints prune positions
  or candidates before any perturbation is built.
- **Reordering generators** (``shuffle``, ``phrase-shuffle``, ``neighbour-flip``) draw
  permutations directly; see :mod:`brittle.search.generators.order`.

Every generator is a class registered by name in ``registry("generators")``; its
constructor takes only keyword-only, typed options; heavy resources (WordNet, GloVe,
language models) are loaded on first use, never at import.
"""

from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from brittle.engine.perturbation import Perturbation
from brittle.engine.sentence import Sentence
from brittle.search.generators.eligibility import Eligibility

__all__ = [
    "Candidate",
    "Generator",
    "SubstitutionGenerator",
    "SubstitutionTable",
    "position_rng",
    "sentence_rng",
]

#: One replacement option: ``(form, lemma)``; the lemma is ``"_"`` when unknown.
Candidate = tuple[str, str]


@dataclass(frozen=True, slots=True)
class SubstitutionTable:
    """Ranked replacement options for the eligible positions of one sentence.

    Attributes:
        sentence_id: the sentence's ``sent_id``.
        method: the generator that proposed the options.
        n_words: number of syntactic words of the sentence.
        entries: ``(position, options)`` pairs, positions 0-based and strictly ascending;
            ``options`` is a non-empty tuple of distinct :data:`Candidate` pairs, best
            first. Positions without any option are left out.
    """

    sentence_id: str
    method: str
    n_words: int
    entries: tuple[tuple[int, tuple[Candidate, ...]], ...] = ()

    def __post_init__(self) -> None:
        positions = [i for i, _ in self.entries]
        if positions != sorted(set(positions)):
            raise ValueError("table positions must be strictly ascending")
        for i, options in self.entries:
            if not 0 <= i < self.n_words:
                raise ValueError(f"position {i} out of range for {self.n_words} words")
            if not options:
                raise ValueError(f"position {i} has no options")

    @classmethod
    def from_mapping(
        cls,
        sentence_id: str,
        method: str,
        n_words: int,
        options: Mapping[int, Sequence[Candidate]],
    ) -> SubstitutionTable:
        """A table from ``{position: candidates}``; empty candidate lists are dropped."""
        entries = tuple((i, tuple(options[i])) for i in sorted(options) if len(options[i]) > 0)
        return cls(sentence_id, method, n_words, entries)

    @property
    def positions(self) -> tuple[int, ...]:
        """Positions that have at least one option, ascending."""
        return tuple(i for i, _ in self.entries)

    def options(self, position: int) -> tuple[Candidate, ...]:
        """Options at ``position`` (empty when it has none)."""
        for i, options in self.entries:
            if i == position:
                return options
        return ()

    def as_dict(self) -> dict[int, tuple[Candidate, ...]]:
        """``{position: options}``."""
        return dict(self.entries)

    def truncated(self, top_k: int) -> SubstitutionTable:
        """The same table keeping at most ``top_k`` options per position."""
        return SubstitutionTable(
            self.sentence_id,
            self.method,
            self.n_words,
            tuple((i, opts[:top_k]) for i, opts in self.entries if top_k > 0),
        )

    @property
    def size(self) -> int:
        """Total number of options over all positions."""
        return sum(len(opts) for _, opts in self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[tuple[int, tuple[Candidate, ...]]]:
        return iter(self.entries)


@runtime_checkable
class Generator(Protocol):
    """What every registered generator offers: a batched draw of perturbations."""

    @property
    def method(self) -> str:
        """Registered name, written in ``Perturbation.method``."""
        ...

    @property
    def requires(self) -> frozenset[str]:
        """CoNLL-U columns the generator reads (``upos``, ``xpos``, ``heads``, ...)."""
        ...

    def perturb(
        self, sentences: Sequence[Sentence], *, b: int, seed: int, tau: int | None = None
    ) -> list[list[Perturbation]]:
        """Up to ``b`` distinct perturbations per sentence (see the implementations)."""
        ...


def stable_hash(text: str) -> int:
    """A 32-bit hash of ``text`` that is the same in every process (unlike ``hash``)."""
    return zlib.crc32(text.encode("utf-8"))


def sentence_rng(seed: int, sentence_id: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and the sentence id.

    Draws for one sentence therefore do not depend on the other sentences of the batch.
    """
    return np.random.default_rng([seed & 0xFFFFFFFF, stable_hash(sentence_id)])


def position_rng(seed: int, sentence_id: str, position: int) -> np.random.Generator:
    """A generator seeded by ``seed``, the sentence id and a 0-based word position."""
    return np.random.default_rng([seed & 0xFFFFFFFF, stable_hash(sentence_id), position])


@dataclass(frozen=True, kw_only=True)
class SubstitutionGenerator(ABC):
    """Base class of word-substitution generators.

    Subclasses implement :meth:`candidates`; :meth:`perturb` draws perturbations from the
    tables. Options are keyword-only dataclass fields.

    Attributes:
        eligibility: which positions may be substituted.
        top_k: default number of options per position.
    """

    #: Registered name, written in ``Perturbation.method`` and in MISC.
    method: ClassVar[str] = ""
    #: CoNLL-U columns the generator reads (checked once by the run).
    requires: ClassVar[frozenset[str]] = frozenset({"form", "upos"})

    eligibility: Eligibility = field(default_factory=Eligibility)
    top_k: int = 10

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")

    def prepare(self) -> None:
        """Load what the generator reads (lexicons, models) now rather than on first use.

        Runs call it before their first sentence, so a missing resource fails early and
        loading time is not charged to the first sentences. Nothing to load by default.
        """
        return None

    @abstractmethod
    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """One table per sentence, in order, with at most ``top_k`` options per position.

        Args:
            sentences: the batch.
            top_k: options per position (default: the generator's ``top_k``).
        """

    def perturb(
        self, sentences: Sequence[Sentence], *, b: int, seed: int, tau: int | None = None
    ) -> list[list[Perturbation]]:
        """Up to ``b`` distinct perturbations per sentence, each changing ``tau`` words.

        ``tau`` defaults to 1; sentences with fewer eligible positions get perturbations
        of all of them. See :func:`~brittle.search.generators.sampling.sample_substitutions`.
        """
        from brittle.search.generators.sampling import sample_substitutions

        tables = self.candidates(sentences, top_k=self.top_k)
        return [
            sample_substitutions(
                table, tau=1 if tau is None else tau, b=b, rng=sentence_rng(seed, table.sentence_id)
            )
            for table in tables
        ]

    def _k(self, top_k: int | None) -> int:
        k = self.top_k if top_k is None else top_k
        if k < 1:
            raise ValueError(f"top_k must be at least 1, got {k}")
        return k

    def _tables_by_word(
        self,
        sentences: Sequence[Sentence],
        options_at: Callable[[Sentence, int], list[Candidate]],
    ) -> list[SubstitutionTable]:
        """One table per sentence from ``options_at(sentence, i)`` at every eligible
        position ``i`` (for generators that look at one word at a time)."""
        tables = []
        for sentence in sentences:
            options: dict[int, list[Candidate]] = {}
            for i in self.eligibility.positions(sentence):
                found = options_at(sentence, i)
                if found:
                    options[i] = found
            tables.append(
                SubstitutionTable.from_mapping(
                    sentence.sent_id, self.method, len(sentence), options
                )
            )
        return tables
