"""Shared records and base classes of the candidate generators.

Generators are split by what they change:

- **Substitution generators** (``copos``, ``coco``, ``random``, ``jabberwocky``,
  ``neighbours``) first propose, for every eligible position of every sentence of a
  batch, a ranked tuple of replacement :data:`Candidate` pairs ``(form, lemma)`` — one
  :class:`SubstitutionTable` per sentence — and then draw ``b`` random ``tau``-word
  :class:`~brittle.engine.core.perturbation.Perturbation` records from each table with a seeded
  ``numpy.random.Generator`` (:func:`brittle.search.sampling.sample_substitutions`).
  Separating the proposal from the draw lets a search strategy reuse one table for many
  draws, for greedy or beam search over positions, and lets constraints prune positions
  or candidates before any perturbation is built.
- **Reordering generators** (``shuffle``, ``phrase-shuffle``, ``neighbour-flip``) draw
  permutations directly; see :mod:`brittle.search.generators.order`.

Every generator is a class registered by name in :data:`GENERATORS`; its
constructor takes only keyword-only, typed options; heavy resources (WordNet, GloVe,
language models) are loaded on first use, never at import.
"""

from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import ClassVar, Literal

import numpy as np

from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.registry import Registry
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.eligibility import Eligibility
from brittle.search.sampling import sample_substitutions
from brittle.search.table import Candidate, SubstitutionTable

__all__ = [
    "GENERATORS",
    "Candidate",
    "Generator",
    "GeneratorFamily",
    "SubstitutionGenerator",
    "SubstitutionTable",
    "position_rng",
    "sentence_rng",
]

GeneratorFamily = Literal["substitution", "reordering"]


@dataclass(frozen=True, kw_only=True)
class Generator(ABC):
    """What every registered generator is: options as keyword-only dataclass fields,
    facts about itself as class variables, and a batched, seeded draw.

    A run reads the class variables before it builds anything, so an impossible
    combination (a reordering under beam search, a treebank without the columns the
    generator reads) is refused with one line before any model loads.
    """

    #: Registered name, written in ``Perturbation.method`` and in MISC; registering the
    #: class in :data:`GENERATORS` sets it (a subclass leaves it unset).
    method: ClassVar[str] = ""
    #: ``substitution`` (per-position options, any strategy) or ``reordering``.
    family: ClassVar[GeneratorFamily] = "substitution"
    #: CoNLL-U columns the generator reads (``form``, ``upos``, ``heads``, ...).
    requires: ClassVar[frozenset[str]] = frozenset({"form"})
    #: Offline resources it loads (``wordnet``, ``glove``, ``causal-lm``, ...).
    needs: ClassVar[frozenset[str]] = frozenset()
    #: Whether it means to keep the sentence's meaning (synonyms, in-context
    #: substitutes), so that a run naming no constraints also checks the result reads
    #: as English with the same meaning (``perturb`` adds ``similarity`` and
    #: ``fluency``).
    keeps_meaning: ClassVar[bool] = False

    @classmethod
    def options(cls) -> tuple[str, ...]:
        """Names of the keyword options the constructor takes."""
        return tuple(f.name for f in fields(cls) if f.init)

    def prepare(self) -> None:
        """Load what the generator reads (lexicons, models) now rather than on first use.

        Runs call it before their first sentence, so a missing resource fails early and
        loading time is not charged to the first sentences. Nothing to load by default.
        """
        return None

    @abstractmethod
    def perturb(
        self, sentences: Sequence[Sentence], *, b: int, seed: int, tau: int | None = None
    ) -> list[list[Perturbation]]:
        """Up to ``b`` distinct perturbations per sentence (see the implementations)."""

    def substitution_tables(self) -> SubstitutionGenerator | None:
        """This generator as one that proposes per-position options (its
        :meth:`SubstitutionGenerator.candidates` tables), or ``None`` when it does not
        (a reordering): the capability declared, so that a run asks rather than tests
        the class."""
        return None


#: Generators by name (classes; build one with its keyword options).
GENERATORS: Registry[type[Generator]] = Registry(
    "generators",
    contract=Generator,
    packages=("brittle.search.generators",),
    name_attr="method",
)


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
class SubstitutionGenerator(Generator):
    """Base class of word-substitution generators.

    Subclasses implement :meth:`candidates`; :meth:`perturb` draws perturbations from the
    tables. Options are keyword-only dataclass fields.

    Attributes:
        eligibility: which positions may be substituted.
        top_k: default number of options per position.
    """

    family: ClassVar[GeneratorFamily] = "substitution"
    requires: ClassVar[frozenset[str]] = frozenset({"form", "upos"})

    eligibility: Eligibility = field(default_factory=Eligibility)
    top_k: int = 10

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")

    def substitution_tables(self) -> SubstitutionGenerator:
        """Itself: it proposes per-position options."""
        return self

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
        of all of them. See :func:`~brittle.search.sampling.sample_substitutions`.
        """
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

    def tables_by_word(
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
