"""Parse records, the parser interface and the cache that wraps every re-parsing backend.

A parser turns a batch of sentences into one :class:`Parse` per sentence: a HEAD array
plus UPOS and DEPREL per CoNLL-U word. Batch is the only entry point; one sentence is a
batch of one. Backends that re-parse words (spaCy, Stanza) implement
:class:`WordParser`; :class:`CachedParser` wraps one with an LRU cache keyed by the
words tuple, which survives across sentences and counts queries, hits and parses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from cachetools import LRUCache

from brittle.engine.core.registry import Registry

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from brittle.engine.core.sentence import Sentence

__all__ = [
    "CacheStats",
    "CachedParser",
    "Parse",
    "Parser",
    "ParserFactory",
    "WordParser",
    "Words",
]

#: The words of one sentence, one string per CoNLL-U word (multiword parts separately).
Words = tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Parse:
    """The parse of one sentence of ``n`` words.

    Attributes:
        heads: int32 array (n,), read-only; ``heads[i]`` is the 1-based head of word
            ``i + 1``, 0 for the root.
        upos: n universal POS tags.
        deprels: n dependency relation labels (the parser's own label set).
    """

    heads: NDArray[np.int32]
    upos: tuple[str, ...]
    deprels: tuple[str, ...]

    def __post_init__(self) -> None:
        n = self.heads.shape[0]
        if self.heads.ndim != 1 or len(self.upos) != n or len(self.deprels) != n:
            raise ValueError(
                f"parse has {self.heads.shape} heads, {len(self.upos)} tags and "
                f"{len(self.deprels)} relations"
            )

    @classmethod
    def build(cls, heads: ArrayLike, upos: Sequence[str], deprels: Sequence[str]) -> Parse:
        """A parse from any integer sequence of heads (copied to a read-only int32 array)."""
        arr = np.array(heads, dtype=np.int32).reshape(-1)
        arr.setflags(write=False)
        return cls(arr, tuple(upos), tuple(deprels))

    def __len__(self) -> int:
        return int(self.heads.shape[0])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Parse):
            return NotImplemented
        return (
            np.array_equal(self.heads, other.heads)
            and self.upos == other.upos
            and self.deprels == other.deprels
        )

    def __hash__(self) -> int:
        return hash((self.heads.tobytes(), self.upos, self.deprels))


@runtime_checkable
class Parser(Protocol):
    """What constraints and runs use: batches of sentences in, one parse each out."""

    @property
    def name(self) -> str:
        """Stable registry name (``spacy``, ``stanza``, ``gold``)."""
        ...

    @property
    def ud_labels(self) -> bool:
        """Whether its relation labels are UD's (labelled scores against UD gold mean
        what they say), known without loading anything."""
        ...

    def prepare(self) -> None:
        """Load models now; raises ResourceMissingError when they are missing."""

    def parse(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """One parse per sentence, in order."""
        ...

    def describe(self) -> dict[str, object]:
        """Name, model and version details for reports."""
        ...

    def clear(self) -> None:
        """Forget the parses kept so far (nothing, for a parser that keeps none)."""


@runtime_checkable
class ParserFactory(Protocol):
    """What :data:`PARSERS` holds: a callable that builds a :class:`Parser` from its
    keyword options (a function, or an object whose call does)."""

    def __call__(self, **options: Any) -> Parser: ...


#: Dependency parsers by name: factories that build a :class:`Parser` from keyword options.
PARSERS: Registry[Callable[..., Parser]] = Registry(
    "parsers", contract=ParserFactory, packages=("brittle.scorers.parsers",)
)


class WordParser(Protocol):
    """A backend that parses pre-tokenized word sequences."""

    @property
    def name(self) -> str:
        """Stable registry name."""
        ...

    @property
    def ud_labels(self) -> bool:
        """Whether its relation labels are UD's."""
        ...

    def prepare(self) -> None:
        """Load models now; raises ResourceMissingError when they are missing."""

    def parse_words(self, batch: Sequence[Words]) -> list[Parse]:
        """One parse per word sequence, in order (no caching)."""
        ...

    def describe(self) -> dict[str, object]:
        """Name, model and version details for reports."""
        ...


@dataclass
class CacheStats:
    """Counters of a :class:`CachedParser` (mutable; read them, do not set them)."""

    queries: int = 0
    hits: int = 0
    parsed: int = 0
    batches: int = 0

    @property
    def hit_rate(self) -> float:
        """Share of queries answered from the cache (0.0 before any query)."""
        return self.hits / self.queries if self.queries else 0.0


@dataclass
class CachedParser:
    """A :class:`Parser` over a :class:`WordParser`, with an LRU cache by words tuple.

    Each call deduplicates its batch, answers what the cache holds and sends the rest
    to the backend in one call. The cache outlives the call: the original sentence and
    candidates seen before are never parsed twice.

    Attributes:
        backend: the re-parsing backend.
        cache_size: the most parses kept (least recently used dropped first); 0 turns
            caching off.
    """

    backend: WordParser
    cache_size: int = 100_000
    stats: CacheStats = field(default_factory=CacheStats)
    _cache: LRUCache[Words, Parse] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._cache = LRUCache(max(self.cache_size, 0))

    @property
    def name(self) -> str:
        """The backend's registry name."""
        return self.backend.name

    @property
    def ud_labels(self) -> bool:
        """Whether the backend labels with UD's relations."""
        return self.backend.ud_labels

    def prepare(self) -> None:
        """Load the backend's models."""
        self.backend.prepare()

    def describe(self) -> dict[str, object]:
        """The backend's description plus the cache size."""
        return {**self.backend.describe(), "cache_size": self.cache_size}

    def parse(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """One parse per sentence, from its FORM column (multiword parts as words)."""
        return self.parse_words([s.forms for s in sentences])

    def parse_words(self, batch: Sequence[Words]) -> list[Parse]:
        """One parse per word sequence; cached, deduplicated, missing ones in one call."""
        keys = [tuple(words) for words in batch]
        self.stats.queries += len(keys)
        found: dict[Words, Parse] = {}
        missing: list[Words] = []
        for key in keys:
            if key in found:
                self.stats.hits += 1
                continue
            hit = self._cache.get(key)
            if hit is not None:
                found[key] = hit
                self.stats.hits += 1
            else:
                missing.append(key)
                found[key] = _PENDING
        if missing:
            parses = self.backend.parse_words(missing)
            if len(parses) != len(missing):
                raise RuntimeError(
                    f"{self.backend.name} returned {len(parses)} parses for {len(missing)} inputs"
                )
            self.stats.parsed += len(missing)
            self.stats.batches += 1
            for key, parse in zip(missing, parses, strict=True):
                if len(parse) != len(key):
                    raise RuntimeError(
                        f"{self.backend.name} returned {len(parse)} words for {len(key)}"
                    )
                found[key] = parse
                self._remember(key, parse)
        return [found[key] for key in keys]

    def _remember(self, key: Words, parse: Parse) -> None:
        if self._cache.maxsize > 0:
            self._cache[key] = parse

    def clear(self) -> None:
        """Empty the cache (counters are kept)."""
        self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


_PENDING = Parse.build(np.zeros(0, dtype=np.int32), (), ())
