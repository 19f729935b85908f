"""neighbours: the nearest words in a static embedding space (GloVe by default).

The search space is the plain words (lowercase letters) among the ``vocab_size`` most
frequent rows; their vectors are L2-normalised and put in a flat inner-product ``faiss``
index (cosine similarity), built once per process and vocabulary. The query is the
vector of the lowercased word (of its lemma when the form has no vector); all eligible
positions of a batch are searched in one call.

Options are the nearest words, best first, keeping only words that are neither the
original form nor another form of its lemma (``dog`` never proposes ``dogs``), and with
``same_pos`` only words the :class:`~brittle.search.generators.lexicon.PosLexicon` allows
for the original UPOS. With ``inflect`` (default, with ``same_pos``) a neighbour of a
content word (NOUN, VERB, ADJ, ADV) stands for its lemma of that class, which is
inflected like the original (``forbade`` -> ``prohibited``, not ``prohibiting``; ``be``
agrees with the original's Number and Person); the lemma must be one of that class in
lemminflect's lexicon and its inflected form a word of the searched vocabulary
(:func:`~brittle.search.generators.vocabulary.attested_form`), and neighbours that
inflect to the same form count once. Other neighbours are taken as they are;
capitalisation follows the original.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.generators.inflection import TAG_FAMILY, match_case, target_tag
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.generators.vocabulary import attested_form, frequent_words, glove
from brittle.search.table import Candidate, SubstitutionTable

if TYPE_CHECKING:
    import faiss
    from numpy.typing import NDArray

__all__ = ["EmbeddingIndex", "Neighbours", "embedding_index"]

_INDEXES: dict[tuple[int, int | None], EmbeddingIndex] = {}


@dataclass(frozen=True, eq=False)
class EmbeddingIndex:
    """A cosine-similarity index over a word subset, and lookup into the full table.

    Attributes:
        words: the indexed words (m,), in row order of the index.
        index: the faiss ``IndexFlatIP`` over their normalised vectors (m, d).
        row_of: every word of the full table -> its row in ``vectors``.
        vectors: the full table (V, d), float32.
    """

    words: tuple[str, ...]
    index: faiss.Index
    row_of: dict[str, int]
    vectors: NDArray[np.float32]

    def query_vectors(self, words: Sequence[str | None]) -> tuple[NDArray[np.float32], list[int]]:
        """Normalised vectors (q, d) of the words that have one, and their input indices."""
        rows: list[int] = []
        kept: list[int] = []
        for j, w in enumerate(words):
            row = self.row_of.get(w) if w is not None else None
            if row is not None:
                rows.append(row)
                kept.append(j)
        q = np.asarray(self.vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32)
        q = q.reshape(len(rows), self.vectors.shape[1])
        return _normalised(q), kept

    def search(
        self, queries: NDArray[np.float32], k: int
    ) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """Similarities and index rows of the ``k`` nearest words, both (q, k)."""
        if queries.shape[0] == 0:
            return np.zeros((0, k), np.float32), np.zeros((0, k), np.int64)
        sims, ids = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        return sims, ids.astype(np.int64)


def _normalised(x: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)


def embedding_index(
    words: Sequence[str], vectors: NDArray[np.float32], *, vocab_size: int | None
) -> EmbeddingIndex:
    """The index over the plain words of the first ``vocab_size`` rows; cached per process."""
    import faiss

    key = (id(vectors), vocab_size)
    hit = _INDEXES.get(key)
    if hit is not None and hit.vectors is vectors:
        return hit
    kept, rows = frequent_words(words, vocab_size)
    subset = _normalised(np.asarray(vectors[rows], dtype=np.float32))
    index = faiss.IndexFlatIP(subset.shape[1])
    index.add(subset)
    row_of: dict[str, int] = {}
    for r, w in enumerate(words):
        row_of.setdefault(w, r)
    built = EmbeddingIndex(kept, index, row_of, vectors)
    _INDEXES[key] = built
    return built


@GENERATORS.register("neighbours", help="nearest GloVe neighbours (same UPOS)")
@dataclass(frozen=True, eq=False, kw_only=True)
class Neighbours(SubstitutionGenerator):
    """Nearest-neighbour substitutions in a static embedding space.

    Attributes:
        vocab_size: frequent rows searched (``None``: all).
        same_pos: keep only neighbours that can carry the original UPOS.
        oversample: neighbours fetched per wanted option (room for the filters).
        words: the embedding vocabulary (frequency-ordered); ``None`` uses GloVe with
            ``vectors``.
        vectors: the embedding table (V, d), float32, rows aligned with ``words``.
        lexicon: the word -> UPOS lexicon.
        inflect: inflect content-word neighbours like the original (with ``same_pos``;
            the tag comes from XPOS or FEATS, singular/base form when both are empty).
    """

    requires: ClassVar[frozenset[str]] = frozenset({"form", "lemma", "upos"})
    needs: ClassVar[frozenset[str]] = frozenset({"glove"})

    vocab_size: int | None = 100_000
    same_pos: bool = True
    oversample: int = 5
    words: Sequence[str] | None = None
    vectors: NDArray[np.float32] | None = None
    lexicon: PosLexicon = field(default_factory=PosLexicon)
    inflect: bool = True
    _known: dict[int, frozenset[str]] = field(default_factory=dict, init=False, repr=False)

    def index(self) -> EmbeddingIndex:
        """The cached index over this generator's vocabulary."""
        if self.words is None or self.vectors is None:
            words, vectors = glove()
        else:
            words, vectors = self.words, self.vectors
        return embedding_index(words, vectors, vocab_size=self.vocab_size)

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """Nearest neighbours of every eligible word; see the module docstring."""
        k = self._k(top_k)
        queries: list[tuple[int, int]] = []
        for si, sentence in enumerate(sentences):
            queries.extend((si, i) for i in self.eligibility.positions(sentence))
        options: list[dict[int, list[Candidate]]] = [{} for _ in sentences]
        if queries:
            idx = self.index()
            keys = []
            for si, i in queries:
                form = sentences[si].forms[i].lower()
                lemma = sentences[si].lemmas[i].lower()
                keys.append(form if form in idx.row_of else lemma if lemma in idx.row_of else None)
            vecs, kept = idx.query_vectors(keys)
            fetch = min(len(idx.words), k * self.oversample + 1)
            _sims, ids = idx.search(vecs, fetch)
            for row, j in enumerate(kept):
                si, i = queries[j]
                found = self._filter(
                    sentences[si], i, [idx.words[t] for t in ids[row] if t >= 0], k
                )
                if found:
                    options[si][i] = found
        return [
            SubstitutionTable.from_mapping(s.sent_id, self.method, len(s), opts)
            for s, opts in zip(sentences, options, strict=True)
        ]

    def known(self) -> frozenset[str]:
        """The searched words as a set (inflected neighbours must be among them)."""
        idx = self.index()
        key = id(idx)
        hit = self._known.get(key)
        if hit is None:
            hit = self._known[key] = frozenset(idx.words)
        return hit

    def _filter(self, sentence: Sentence, i: int, near: Sequence[str], k: int) -> list[Candidate]:
        token = sentence.words[i]
        form, upos = token.form, token.upos
        lemma = token.lemma.lower()
        feats = token.feats_dict
        tag = target_tag(upos, token.xpos, feats)
        inflecting = self.inflect and self.same_pos and upos in TAG_FAMILY and tag is not None
        known = self.known() if inflecting else frozenset()
        out: list[Candidate] = []
        seen = {form.lower()}
        for word in near:
            if word == form.lower() or word == lemma:
                continue
            word_lemma = self.lexicon.lemma(word, upos)
            if word_lemma.lower() == lemma:
                continue
            if self.same_pos and not self.lexicon.has(word, upos):
                continue
            surface: str | None = word
            if inflecting and tag is not None:
                surface = attested_form(
                    word_lemma.lower(),
                    upos,
                    tag,
                    known,
                    number=feats.get("Number"),
                    person=feats.get("Person"),
                )
            if surface is None or surface in seen:
                continue
            seen.add(surface)
            out.append((match_case(form, surface), word_lemma))
            if len(out) == k:
                break
        return out
