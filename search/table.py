"""The substitution table: ranked replacement options per position of one sentence.

Substitution generators produce one table per sentence; the sampler
(:mod:`brittle.search.sampling`) and the search strategies draw perturbations from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Candidate", "SubstitutionTable"]

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
