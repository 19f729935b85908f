"""Whole-sentence models: a causal LM's surprisal and MiniLM sentence embeddings.

Two measurements of a sentence as text, shared by the ``fluency`` and ``similarity``
constraints and by the quality reports (:mod:`brittle.search.quality`):

- :class:`SurprisalModel`: the total log-probability of a text under a causal LM (the
  bundled SmolLM2 unless told otherwise, loaded by
  :func:`~brittle.search.generators.lm.load_lm`), read per word as the mean surprisal
  in bits per word: ``-log2 P(text) / n``, where ``n`` is the number of the sentence's
  (syntactic) words, so the unit does not depend on the LM's subword tokenisation.
- :class:`SentenceEncoder`: the bundled all-MiniLM-L6-v2 used as trained, for sentence
  embeddings: mean of the last layer over the real tokens (attention mask), then L2
  normalised, so the dot product of two embeddings is their cosine similarity. Its
  :meth:`~SentenceEncoder.word_vectors` gives the same layer per word of a sentence
  (mean of the word's unit-length piece vectors), for comparing a word with its
  replacement in context.

Both load their model at first use, once per process and device (:func:`surprisal_model`,
:func:`sentence_encoder` hand out the shared instances), and keep the scores of recent
texts (an original is scored once, however many candidates it is compared with). Texts
are scored in batches sorted by length, so padding stays small;
:meth:`SentenceEncoder.embed_alone` instead embeds each text on its own and keeps it in
an on-disk store (:mod:`brittle.search.embedding_store`) for texts that recur across
runs.

:func:`pair_texts` decides what text of an original and its perturbation the models read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from cachetools import LRUCache

from brittle.engine.core import resources
from brittle.engine.core.resources.loading import from_pretrained
from brittle.scorers.representations import check_dtype, torch_dtype
from brittle.search.embedding_store import EmbeddingStore, store_path

V = TypeVar("V")

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray
    from torch import nn
    from transformers import BatchEncoding, PreTrainedTokenizerBase

    from brittle.engine.core.perturbation import Perturbation
    from brittle.engine.core.sentence import Sentence
    from brittle.search.generators.lm import LoadedLM
    from brittle.search.generators.lm_causal import AnchorStates

__all__ = [
    "SentenceEncoder",
    "SurprisalModel",
    "default_device",
    "forget_texts",
    "pair_texts",
    "sentence_encoder",
    "surprisal_model",
]

#: Texts whose scores a model keeps (least recently used dropped first).
CACHE_SIZE = 50_000
#: Longest input of the sentence encoder in tokens (all-MiniLM-L6-v2 was trained at 256).
ENCODER_MAX_TOKENS = 256
#: Sentences whose word vectors an encoder keeps (each is n_words x 384 floats).
WORD_CACHE_SIZE = 2_048
#: Longest input when reading word vectors (the model's position limit).
WORD_VECTOR_MAX_TOKENS = 512


def default_device() -> str:
    """``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@contextmanager
def _quiet_loading() -> Iterator[None]:
    """Loads without transformers' progress bars (they would clutter a run's output)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def pair_texts(
    original: Sentence, candidate: Sentence, perturbation: Perturbation
) -> tuple[str, str]:
    """What the sentence models read of an original and one perturbation of it.

    A substitution keeps the original's spacing (``SpaceAfter=No``), so both sentences
    are read as their surface text. A reordering loses it (every moved word is followed
    by a space), so both are read as their words joined by single spaces: the spacing
    alone then costs nothing.
    """
    if perturbation.order is not None:
        return " ".join(original.forms), " ".join(candidate.forms)
    return original.surface_text(), candidate.surface_text()


class _Cache(LRUCache[str, V]):
    """A bounded mapping from text to a score, least recently used dropped first (a
    ``cachetools.LRUCache`` of ``maxsize`` texts)."""

    def put(self, text: str, value: V) -> None:
        """Keep ``value`` as ``text``'s (nothing when the cache holds none)."""
        if self.maxsize > 0:
            self[text] = value

    def split(self, texts: Iterable[str]) -> tuple[dict[str, V], list[str]]:
        """The values of the kept ``texts`` and, in the given order, the texts not kept."""
        found: dict[str, V] = {}
        missing: list[str] = []
        for text in texts:
            hit = self.get(text)
            if hit is None:
                missing.append(text)
            else:
                found[text] = hit
        return found, missing


def _by_length(texts: Sequence[str]) -> list[str]:
    """Distinct texts, longest first (ties in text order), so batches pad little."""
    return sorted(dict.fromkeys(texts), key=lambda t: (-len(t), t))


class SurprisalModel:
    """Sentence log-probabilities and per-word surprisal under a causal LM.

    Args:
        model: a model directory or name for :func:`~brittle.search.generators.lm.load_lm`
            (``None``: the bundled SmolLM2).
        device: torch device (``None``: :func:`default_device`).
        dtype: precision of the LM (``None``: float32, as
            :func:`~brittle.search.generators.lm.load_lm` loads it).
        batch_size: texts per forward pass.
        cache_size: texts whose log-probability is kept.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 16,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.model = model
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self._lm: LoadedLM | None = None
        self._cache: _Cache[float] = _Cache(cache_size)
        self._anchors: AnchorStates | None = None  # made with the first anchored text

    def forget(self) -> None:
        """Empty this process's caches of scored texts and of their anchors' states (the
        model stays loaded)."""
        self._cache.clear()
        if self._anchors is not None:
            self._anchors.clear()

    @property
    def lm(self) -> LoadedLM:
        """The loaded LM (loaded at first use)."""
        if self._lm is None:
            # defer: torch and transformers load with the model
            from brittle.search.generators.lm import load_lm

            with _quiet_loading():
                self._lm = load_lm(
                    self.model,
                    kind="causal",
                    device=self.device or default_device(),
                    dtype=self.dtype,
                )
        return self._lm

    def describe(self) -> dict[str, object]:
        """The model's name, for reports (does not load it)."""
        return {"model": self.model or "smollm2 (bundled)", "unit": "bits per word"}

    def logprobs(
        self,
        texts: Sequence[str],
        *,
        groups: Sequence[Hashable | None] | None = None,
        anchors: Sequence[str | None] | None = None,
        fresh: bool = False,
    ) -> NDArray[np.float64]:
        """Total log-probability (natural log) of each text, float64 (m,).

        ``anchors`` gives each text the sentence it was made from (``None``: none): a
        text that is its anchor with words substituted is scored on the anchor's
        key/value cache (:func:`~brittle.search.generators.lm_causal.anchored_logprobs`:
        each anchor runs once, and is scored and kept too, its state kept for the next
        call; each text costs its tokens from its first change on, and the texts of
        every anchor share forward passes). ``groups`` labels the other texts
        (``None``: no label): texts of one label begin alike (one sentence with words substituted
        from one position on), so two or more of them to score are scored together,
        their shared tokens run once
        (:func:`~brittle.search.generators.lm_causal.shared_prefix_logprobs`: each text
        costs its own tail). The others are scored in batches sorted by length. The
        values agree either way up to float noise.

        ``fresh`` scores every text anew instead of reading the kept ones (anchors
        included), so the values depend on ``texts``, ``groups`` and ``anchors`` alone,
        not on what was scored before; they are kept all the same.
        """
        if groups is not None and len(groups) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(groups)} group labels")
        if anchors is not None and len(anchors) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(anchors)} anchors")
        if fresh:
            found: dict[str, float] = {}
            todo = _by_length(texts)
        else:
            found, todo = self._cache.split(_by_length(texts))
        if todo:
            # defer: torch and transformers load with the model
            from brittle.search.generators.lm_causal import (
                AnchorStates,
                anchored_logprobs,
                sentence_logprobs,
                shared_prefix_logprobs,
            )

            missing = set(todo)
            made: dict[str, list[str]] = {}  # anchor -> its texts to score
            if anchors is not None:
                for text, anchor in zip(texts, anchors, strict=True):
                    if anchor is not None and text in missing:
                        missing.discard(text)
                        made.setdefault(anchor, []).append(text)
            if made:
                bases = list(made)
                scored: list[str] = []
                owners: list[int] = []
                for a, (anchor, group) in enumerate(made.items()):
                    if anchor not in found and anchor not in group:
                        group = [anchor, *group]  # scored on the way: kept for the caller
                    scored.extend(group)
                    owners.extend(a for _ in group)
                if self._anchors is None:
                    self._anchors = AnchorStates()
                # fresh: the anchors run anew too, so nothing earlier moves the values
                scores = anchored_logprobs(
                    self.lm,
                    bases,
                    scored,
                    owners,
                    batch_size=max(self.batch_size, 64),
                    states=None if fresh else self._anchors,
                )
                self._keep(scored, scores, found)
            alike: dict[Hashable, list[str]] = {}
            if groups is not None:
                for text, label in zip(texts, groups, strict=True):
                    if label is not None and text in missing:
                        missing.discard(text)
                        alike.setdefault(label, []).append(text)
            together = [g for g in alike.values() if len(g) > 1]
            for group in together:
                scores = shared_prefix_logprobs(self.lm, group, batch_size=self.batch_size)
                self._keep(group, scores, found)
            rest = [t for t in todo if t not in found]
            if rest:
                scores = sentence_logprobs(self.lm, rest, batch_size=self.batch_size)
                self._keep(rest, scores, found)
        return np.array([found[t] for t in texts], dtype=np.float64)

    def _keep(
        self, texts: Sequence[str], scores: NDArray[np.float64], found: dict[str, float]
    ) -> None:
        for text, score in zip(texts, scores.tolist(), strict=True):
            found[text] = float(score)
            self._cache.put(text, float(score))

    def bits_per_word(
        self,
        texts: Sequence[str],
        words: Sequence[int],
        *,
        groups: Sequence[Hashable | None] | None = None,
        anchors: Sequence[str | None] | None = None,
    ) -> NDArray[np.float64]:
        """Mean surprisal of each text in bits per word: ``-log2 P(text) / words``, (m,).

        ``words`` is each text's number of words (the sentence's, not the LM's tokens);
        ``groups`` and ``anchors`` as in :meth:`logprobs`.
        """
        if len(texts) != len(words):
            raise ValueError(f"{len(texts)} texts but {len(words)} word counts")
        n = np.maximum(np.asarray(words, dtype=np.float64), 1.0)
        return -self.logprobs(texts, groups=groups, anchors=anchors) / math.log(2.0) / n


class SentenceEncoder:
    """all-MiniLM-L6-v2 sentence embeddings: masked mean of the last layer, L2 normalised.

    Args:
        path: a model directory (``None``: the bundled MiniLM).
        device: torch device (``None``: :func:`default_device`).
        dtype: precision of the encoder (``None``: as ``from_pretrained`` loads it).
            Embeddings are pooled in float32 either way.
        batch_size: texts per forward pass.
        cache_size: texts whose embedding is kept.
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 64,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.path = path
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self._loaded: tuple[PreTrainedTokenizerBase, nn.Module, str] | None = None
        self._cache: _Cache[NDArray[np.float32]] = _Cache(cache_size)
        self._word_cache: _Cache[NDArray[np.float32]] = _Cache(min(cache_size, WORD_CACHE_SIZE))
        self._alone_cache: _Cache[NDArray[np.float32]] = _Cache(cache_size)
        self._stored: EmbeddingStore | None = None

    def _load(self) -> tuple[PreTrainedTokenizerBase, nn.Module, str]:
        if self._loaded is None:
            from transformers import AutoModel, AutoTokenizer

            path = self.path or str(resources.default_encoder_path())
            device = self.device or default_device()
            dtype = check_dtype(self.dtype, device)
            with _quiet_loading():
                tokenizer = from_pretrained(AutoTokenizer.from_pretrained, path)
                if dtype is None:  # the checkpoint's own loading, as it always was
                    model: nn.Module = from_pretrained(
                        AutoModel.from_pretrained, path, weights=True
                    )
                else:
                    model = from_pretrained(
                        AutoModel.from_pretrained, path, weights=True, dtype=torch_dtype(dtype)
                    )
                model = model.to(device).eval()
            self._loaded = (tokenizer, model, device)
        return self._loaded

    def describe(self) -> dict[str, object]:
        """The model's name, for reports (does not load it)."""
        return {"model": self.path or "all-MiniLM-L6-v2 (bundled)", "pooling": "mean"}

    def _last_layer(
        self, batch: list[str] | list[list[str]], *, max_length: int, **options: bool
    ) -> tuple[BatchEncoding, torch.Tensor]:
        """Tokenise one batch (texts, or word lists with ``is_split_into_words``), padded
        and truncated to ``max_length`` tokens, and run the encoder: the encoding and the
        last layer, float32 (batch, tokens, d), on the model's device."""
        import torch

        tokenizer, model, device = self._load()
        enc = tokenizer(
            batch,
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
            **options,
        )
        with torch.inference_mode():
            hidden = model(
                input_ids=enc["input_ids"].to(device),
                attention_mask=enc["attention_mask"].to(device),
            ).last_hidden_state.float()
        return enc, hidden

    def _mean_units(self, batch: list[str]) -> NDArray[np.float32]:
        """One forward pass over ``batch`` (padded): each text's mean of the last layer
        over its real tokens, L2 normalised, float32 (len(batch), d)."""
        import torch

        enc, hidden = self._last_layer(batch, max_length=ENCODER_MAX_TOKENS)
        with torch.inference_mode():
            mask = enc["attention_mask"].to(hidden.device).unsqueeze(-1).float()
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            unit = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
        return np.asarray(unit, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit-length embeddings, float32 (m, d) (d = 384 for MiniLM; (0, 0) for none)."""
        found, todo = self._cache.split(_by_length(texts))
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            for text, vector in zip(chunk, self._mean_units(chunk), strict=True):
                found[text] = vector
                self._cache.put(text, vector)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def forget(self) -> None:
        """Empty this process's caches of texts and words (the on-disk store stays), as
        in a new process with the model loaded."""
        self._cache.clear()
        self._word_cache.clear()
        self._alone_cache.clear()

    def _store(self) -> EmbeddingStore:
        """The on-disk store of this encoder's setting (see :meth:`embed_alone`)."""
        if self._stored is None:
            import torch

            _, _, device = self._load()
            model_dir = Path(self.path) if self.path else resources.default_encoder_path()
            dim = int(self._last_layer(["."], max_length=8)[1].shape[-1])
            path = store_path(
                model_dir,
                dtype=self.dtype or "checkpoint",
                device=device,
                threads=torch.get_num_threads(),
            )
            self._stored = EmbeddingStore(path, dim)
        return self._stored

    def embed_alone(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit-length embeddings, float32 (m, d), each text embedded in a forward pass of
        its own (no padding), so its vector never depends on the texts beside it; kept
        in this process and in the on-disk store (:mod:`brittle.search.embedding_store`),
        where every later run reads it. For texts that recur across runs (WordNet
        glosses, the sentences of a treebank met again); a text seen once is better
        served by :meth:`embed`, which batches."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        found, todo = self._alone_cache.split(dict.fromkeys(texts))
        if todo:
            store = self._store()
            stored = store.get_many(todo)
            fresh: dict[str, NDArray[np.float32]] = {}
            for text in todo:
                vector = stored.get(text)
                if vector is None:
                    vector = fresh[text] = self._mean_units([text])[0]
                found[text] = vector
                self._alone_cache.put(text, vector)
            store.put_many(fresh)
        return np.stack([found[t] for t in texts])

    def word_vectors(self, sentences: Sequence[Sequence[str]]) -> list[NDArray[np.float32]]:
        """Per sentence (given as its words), float32 (n_words, d): the last layer at each
        word in context, the mean of its pieces' unit vectors, L2 normalised. A word the tokeniser
        gives no piece (or that lies past :data:`WORD_VECTOR_MAX_TOKENS`) gets a row of
        NaN. Sentences are read as their words joined by spaces; the last
        :data:`WORD_CACHE_SIZE` sentences are kept."""
        import torch

        keys = ["\x00".join(words) for words in sentences]
        found: dict[str, NDArray[np.float32]] = {}
        todo: dict[str, Sequence[str]] = {}
        for key, words in zip(keys, sentences, strict=True):
            hit = self._word_cache.get(key)
            if isinstance(hit, np.ndarray):
                found[key] = hit
            elif key not in todo:
                todo[key] = words
        pending = sorted(todo, key=lambda k: -len(todo[k]))
        if pending:
            for start in range(0, len(pending), self.batch_size):
                chunk = pending[start : start + self.batch_size]
                enc, hidden = self._last_layer(
                    [list(todo[k]) for k in chunk],
                    max_length=WORD_VECTOR_MAX_TOKENS,
                    is_split_into_words=True,
                )
                with torch.inference_mode():
                    unit = torch.nn.functional.normalize(hidden, dim=-1).cpu().numpy()
                for row, key in enumerate(chunk):
                    vectors = _pool_words(unit[row], enc.word_ids(row), len(todo[key]))
                    found[key] = vectors
                    self._word_cache.put(key, vectors)
        return [found[k] for k in keys]

    def similarity(self, first: Sequence[str], second: Sequence[str]) -> NDArray[np.float64]:
        """Cosine similarity of ``first[k]`` and ``second[k]``, float64 (m,), in [-1, 1]."""
        if len(first) != len(second):
            raise ValueError(f"{len(first)} texts against {len(second)}")
        if not first:
            return np.zeros(0, dtype=np.float64)
        emb = self.embed([*first, *second]).astype(np.float64)
        m = len(first)
        return np.clip(np.einsum("ij,ij->i", emb[:m], emb[m:]), -1.0, 1.0)


def _pool_words(
    hidden: NDArray[np.float32], word_ids: Sequence[int | None], n_words: int
) -> NDArray[np.float32]:
    """Per word, the L2-normalised mean of its pieces' rows of ``hidden`` (pieces, d);
    NaN rows for words without a piece. float32 (n_words, d)."""
    sums = np.zeros((n_words, hidden.shape[1]), dtype=np.float64)
    counts = np.zeros(n_words, dtype=np.int64)
    for piece, word in enumerate(word_ids):
        if word is not None and word < n_words:
            sums[word] += hidden[piece]
            counts[word] += 1
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = sums / norms
    out[counts == 0] = np.nan
    return out.astype(np.float32)


_SURPRISAL: dict[tuple[str | None, str | None, str | None], SurprisalModel] = {}
_ENCODERS: dict[tuple[str | None, str | None, str | None], SentenceEncoder] = {}


def surprisal_model(
    model: str | None = None, *, device: str | None = None, dtype: str | None = None
) -> SurprisalModel:
    """The process-wide :class:`SurprisalModel` of ``model`` on ``device`` in ``dtype``
    (nothing loads until it scores a text)."""
    key = (model, device, dtype)
    if key not in _SURPRISAL:
        _SURPRISAL[key] = SurprisalModel(model, device=device, dtype=dtype)
    return _SURPRISAL[key]


def sentence_encoder(
    path: str | None = None, *, device: str | None = None, dtype: str | None = None
) -> SentenceEncoder:
    """The process-wide :class:`SentenceEncoder` of ``path`` on ``device`` in ``dtype``
    (nothing loads until it embeds a text)."""
    key = (path, device, dtype)
    if key not in _ENCODERS:
        _ENCODERS[key] = SentenceEncoder(path, device=device, dtype=dtype)
    return _ENCODERS[key]


#: What else :func:`forget_texts` empties: caches of what other modules computed from
#: texts with these models (the judges' grades).
_FORGETTERS: list[Callable[[], None]] = []


def also_forget(forget: Callable[[], None]) -> None:
    """Have :func:`forget_texts` call ``forget`` too (once however often it is asked)."""
    if forget not in _FORGETTERS:
        _FORGETTERS.append(forget)


def forget_texts() -> None:
    """Empty the text caches of every shared encoder and language model of this process,
    and the caches registered with :func:`also_forget` (models stay loaded, on-disk
    stores stay): what a new run on this machine finds."""
    for encoder in _ENCODERS.values():
        encoder.forget()
    for model in _SURPRISAL.values():
        model.forget()
    for forget in _FORGETTERS:
        forget()
