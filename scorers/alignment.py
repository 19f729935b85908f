"""Subword-to-word alignment and the windows that keep long sentences inside a model.

A transformer sees subword tokens; a probe needs one vector per CoNLL-U word. This
module turns a batch of word lists into *rows* (the token id sequences the model runs
on) plus, for every row position, the word its hidden state is pooled into.

Alignment strategies, tried in this order:

1. ``word_ids``: the fast tokenizer's ``is_split_into_words=True`` and ``word_ids()``.
   Words are never merged; a word split into many pieces maps every piece to it.
2. ``offsets``: the words joined by single spaces are tokenized as text with
   ``return_offsets_mapping=True``; a token belongs to the first word its character span
   overlaps. A token spanning several words (the tokenizer merged them) gives its
   vector to the first; the others copy it (see below).

A word that receives no token at all (a zero-width character that the tokenizer drops,
or the second word of a merged token) copies the pooled vector of the nearest word to
its left that has one (to its right for the first word). :attr:`Alignment.orphans`
lists those words.

Long sentences: when a sentence has more content tokens than the model's window, it is
cut into overlapping windows (``window`` content tokens, consecutive windows sharing
``overlap`` tokens), each wrapped in the model's own special tokens, and every token
takes its hidden state from the window where it is farthest from an edge. Nothing is
truncated. Sentences are tokenized with the tokenizer's length warning off
(``verbose=False``): its "Token indices sequence length is longer than the specified
maximum sequence length" concerns a single pass over the whole sentence, which never
happens here.

Pooling (``first``, ``mean``, ``last``) is expressed as a selection: each row position
either feeds one word or nothing, and the word vector is the mean over the positions
that feed it. ``first`` keeps the first piece of each word, ``last`` the last one and
``mean`` all of them, so one scatter-mean serves all three.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeGuard

import numpy as np

from brittle.engine.core.errors import ConfigError

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "POOLINGS",
    "Alignment",
    "AlignmentStrategy",
    "PieceCache",
    "PieceKey",
    "Pooling",
    "Row",
    "align_batch",
    "is_pooling",
    "plan_rows",
    "pooling_targets",
    "replacement_tokens",
]

Pooling = Literal["first", "mean", "last"]
AlignmentStrategy = Literal["auto", "word_ids", "offsets"]

#: Pooling modes, in the order the CLI lists them.
POOLINGS: tuple[str, ...] = ("first", "mean", "last")


def is_pooling(name: str) -> TypeGuard[Pooling]:
    """Whether ``name`` is one of :data:`POOLINGS`."""
    return name in POOLINGS


@dataclass(frozen=True, slots=True)
class Alignment:
    """The subword tokens of one sentence and the word each one belongs to.

    Attributes:
        content_ids: token ids without the special tokens, shape (c,), int64.
        word_of: 0-based word index of each content token, shape (c,), int64.
        prefix: special token ids the model expects before the content.
        suffix: special token ids the model expects after the content.
        n_words: number of words of the sentence.
        orphans: words that received no token; they copy a neighbour's vector.
        strategy: ``word_ids`` or ``offsets``.
    """

    content_ids: NDArray[np.int64]
    word_of: NDArray[np.int64]
    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    n_words: int
    orphans: tuple[int, ...]
    strategy: str

    @property
    def n_tokens(self) -> int:
        """Number of tokens of the whole sentence with its special tokens."""
        return len(self.prefix) + int(self.content_ids.shape[0]) + len(self.suffix)

    def donors(self) -> NDArray[np.int64]:
        """For every word the word whose vector it takes, shape (n_words,), int64.

        A word with tokens is its own donor; an orphan takes the nearest word to its left
        that has tokens (to its right when there is none on the left).
        """
        donor = np.arange(self.n_words, dtype=np.int64)
        if not self.orphans:
            return donor
        has = np.zeros(self.n_words, dtype=bool)
        has[self.word_of] = True
        owned = np.flatnonzero(has)
        if owned.size == 0:
            raise ConfigError("the tokenizer produced no token for any word of a sentence")
        for w in self.orphans:
            left = owned[owned < w]
            donor[w] = left[-1] if left.size else owned[owned > w][0]
        return donor


@dataclass(frozen=True, slots=True)
class Row:
    """One sequence the model runs on: a whole sentence or one window of a long one.

    Attributes:
        sentence: index of the sentence in the batch.
        input_ids: token ids with special tokens, shape (t,), int64.
        target: the word (0-based, within the sentence) each position is pooled into,
            or -1 for positions that feed no word, shape (t,), int64.
    """

    sentence: int
    input_ids: NDArray[np.int64]
    target: NDArray[np.int64]


#: Content tokens of a word under the ``word_ids`` strategy, by (word, whether it opens
#: its sentence): the keys of a :class:`PieceCache`.
PieceKey = tuple[str, bool]


class PieceCache:
    """Each word's content tokens under the ``word_ids`` strategy, kept across calls.

    A search tokenizes thousands of candidates a second that differ from their sentence
    in a word or two; with this cache :func:`align_batch` tokenizes only the words it has
    not seen (tokenizing went from 0.27 s to 0.11 s of a 6.5 s greedy search on the
    every-sense coPOS pool, 2 cores). A word's tokens in a pre-split sentence depend
    on the word and on whether it opens the sentence (see :func:`replacement_tokens`;
    tests check the cached alignment against whole sentences for every tokenizer
    family). At most ``max_words`` entries (some 300 bytes each: 15 MB by default): it
    starts again empty when full, so memory stays flat.
    """

    def __init__(self, max_words: int = 50_000) -> None:
        self.max_words = max_words
        self._pieces: dict[PieceKey, tuple[int, ...]] = {}

    def __len__(self) -> int:
        return len(self._pieces)

    def lookup(self, keys: set[PieceKey]) -> dict[PieceKey, tuple[int, ...]]:
        """The known ones of ``keys`` (a copy: the cache may start again meanwhile)."""
        pieces = self._pieces
        return {k: pieces[k] for k in keys if k in pieces}

    def add(self, found: dict[PieceKey, tuple[int, ...]]) -> None:
        """Keep ``found``, emptying the cache first when it would grow past its bound."""
        if len(self._pieces) + len(found) > self.max_words:
            self._pieces = {}
        self._pieces.update(found)


#: The word a non-opening word is tokenized after when its tokens are cached.
_OPENER = "a"


def _align_cached(
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[Sequence[str]],
    prefix: tuple[int, ...],
    suffix: tuple[int, ...],
    cache: PieceCache,
) -> list[Alignment]:
    """:func:`_align_word_ids` from each word's cached tokens: the words not cached yet
    are tokenized in one call, each on its own when it opens its sentence and after
    :data:`_OPENER` otherwise."""
    keys = {(w, i == 0) for words in sentences for i, w in enumerate(words)}
    pieces = cache.lookup(keys)
    missing = sorted(keys - pieces.keys())
    if missing:
        alone = [[w] if first else [_OPENER, w] for w, first in missing]
        found = {
            key: tuple(a.content_ids[a.word_of == (0 if key[1] else 1)].tolist())
            for key, a in zip(
                missing, _align_word_ids(tokenizer, alone, prefix, suffix), strict=True
            )
        }
        cache.add(found)
        pieces.update(found)
    out: list[Alignment] = []
    for words in sentences:
        content: list[int] = []
        owner: list[int] = []
        for i, w in enumerate(words):
            ids = pieces[(w, i == 0)]
            content.extend(ids)
            owner.extend([i] * len(ids))
        out.append(_finish(content, owner, len(words), prefix, suffix, "word_ids"))
    return out


def align_batch(
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[Sequence[str]],
    *,
    strategy: AlignmentStrategy = "auto",
    cache: PieceCache | None = None,
) -> list[Alignment]:
    """Tokenize a batch of word lists and align every token to its word.

    Args:
        tokenizer: a Hugging Face tokenizer (fast tokenizers support both strategies).
        sentences: the words of each sentence; a sentence must have at least one word.
        strategy: ``auto`` uses ``word_ids`` when the tokenizer supports it and falls
            back to ``offsets``.
        cache: the tokenizer's words kept across calls (``word_ids`` only; the
            ``offsets`` strategy reads words in their context).

    Returns:
        One :class:`Alignment` per sentence, in order.
    """
    if not sentences:
        return []
    for i, words in enumerate(sentences):
        if len(words) == 0:
            raise ConfigError(f"sentence {i} of the batch has no words")
    prefix, suffix = special_tokens(tokenizer)
    if strategy in ("auto", "word_ids"):
        try:
            if cache is not None:
                return _align_cached(tokenizer, sentences, prefix, suffix, cache)
            return _align_word_ids(tokenizer, sentences, prefix, suffix)
        except (ValueError, TypeError, NotImplementedError, AttributeError) as err:
            if strategy == "word_ids":
                raise ConfigError(
                    f"this tokenizer cannot align pre-split words ({err}); use the offsets strategy"
                ) from err
    return _align_offsets(tokenizer, sentences, prefix, suffix)


def replacement_tokens(
    tokenizer: PreTrainedTokenizerBase,
    queries: Sequence[tuple[Sequence[str], int, Sequence[str]]],
    *,
    strategy: AlignmentStrategy = "auto",
) -> list[list[NDArray[np.int64]]]:
    """The content tokens of each form of each query ``(words, position, forms)`` as
    it stands at ``position`` of ``words`` in place of the word there, shape (k,) each.

    Hand-written, for speed: a guided search asks this of every option of a sentence
    (hundreds of forms on the every-sense pools), and tokenizing each variant sentence
    whole costs a tenth of a second for 16 sentences on 2 cores. A word's tokens in a
    pre-split sentence depend on the word and on whether it opens the sentence (each
    word is pre-tokenized on its own, with its leading space: WordPiece, byte-level BPE
    and SentencePiece alike), so each form is tokenized between its two neighbours
    only, all windows in one tokenizer call; tests check it against whole sentences.
    """
    windows: list[list[str]] = []
    at: list[int] = []
    for words, position, forms in queries:
        before = list(words[max(position - 1, 0) : position])
        after = list(words[position + 1 : position + 2])
        for form in forms:
            windows.append([*before, form, *after])
            at.append(len(before))
    found = iter(zip(align_batch(tokenizer, windows, strategy=strategy), at, strict=True))
    out: list[list[NDArray[np.int64]]] = []
    for _, _, forms in queries:
        mine = [next(found) for _ in forms]
        out.append([a.content_ids[a.word_of == i] for a, i in mine])
    return out


def special_tokens(tokenizer: PreTrainedTokenizerBase) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The special token ids the tokenizer puts before and after any content.

    Found by encoding a one-character text, so it works for every tokenizer family.
    """
    enc = tokenizer("a", add_special_tokens=True)
    ids = list(enc["input_ids"])
    bare = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    for start in range(len(ids) - len(bare) + 1):
        if ids[start : start + len(bare)] == bare:
            return tuple(ids[:start]), tuple(ids[start + len(bare) :])
    return (), ()


def _finish(
    content: list[int],
    word_of: list[int],
    n_words: int,
    prefix: tuple[int, ...],
    suffix: tuple[int, ...],
    strategy: str,
) -> Alignment:
    ids = np.asarray(content, dtype=np.int64)
    owner = np.asarray(word_of, dtype=np.int64)
    present = np.zeros(n_words, dtype=bool)
    present[owner] = True
    orphans = tuple(int(w) for w in np.flatnonzero(~present))
    return Alignment(ids, owner, prefix, suffix, n_words, orphans, strategy)


def _align_word_ids(
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[Sequence[str]],
    prefix: tuple[int, ...],
    suffix: tuple[int, ...],
) -> list[Alignment]:
    enc = tokenizer(
        [list(words) for words in sentences],
        is_split_into_words=True,
        add_special_tokens=False,
        verbose=False,  # no "longer than the maximum sequence length": windows cut it
    )
    if not getattr(enc, "is_fast", True):
        raise NotImplementedError("word_ids() needs a fast tokenizer")
    out: list[Alignment] = []
    for i, words in enumerate(sentences):
        ids = enc["input_ids"][i]
        wids = enc.word_ids(i)
        content = [t for t, w in zip(ids, wids, strict=True) if w is not None]
        owner = [w for w in wids if w is not None]
        out.append(_finish(content, owner, len(words), prefix, suffix, "word_ids"))
    return out


def _align_offsets(
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[Sequence[str]],
    prefix: tuple[int, ...],
    suffix: tuple[int, ...],
) -> list[Alignment]:
    texts: list[str] = []
    spans: list[NDArray[np.int64]] = []
    for words in sentences:
        starts: list[int] = []
        pos = 0
        for w in words:
            starts.append(pos)
            pos += len(w) + 1
        s = np.asarray(starts, dtype=np.int64)
        e = s + np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        spans.append(np.stack([s, e], axis=1))
        texts.append(" ".join(words))
    try:
        enc = tokenizer(
            texts,
            add_special_tokens=False,
            return_offsets_mapping=True,
            verbose=False,  # no "longer than the maximum sequence length": windows cut it
        )
    except (NotImplementedError, ValueError, TypeError) as err:
        raise ConfigError(
            f"this tokenizer supports neither word_ids nor offset mappings ({err}); "
            "load a fast tokenizer (tokenizer.json) for this model"
        ) from err
    out: list[Alignment] = []
    for i, words in enumerate(sentences):
        ids = np.asarray(enc["input_ids"][i], dtype=np.int64)
        offs = np.asarray(enc["offset_mapping"][i], dtype=np.int64).reshape(-1, 2)
        span = spans[i]
        # first word whose span overlaps the token's [start, end)
        overlap = (offs[:, None, 0] < span[None, :, 1]) & (offs[:, None, 1] > span[None, :, 0])
        has = overlap.any(axis=1)
        owner = np.argmax(overlap, axis=1)
        keep = has & (offs[:, 1] > offs[:, 0])
        out.append(
            _finish(ids[keep].tolist(), owner[keep].tolist(), len(words), prefix, suffix, "offsets")
        )
    return out


def pooling_targets(alignment: Alignment, pooling: Pooling) -> NDArray[np.int64]:
    """Which word each content token feeds under ``pooling`` (-1: none), shape (c,)."""
    owner = alignment.word_of
    if pooling == "mean":
        return owner.copy()
    if pooling not in ("first", "last"):
        raise ConfigError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
    target = np.full(owner.shape[0], -1, dtype=np.int64)
    if owner.shape[0] == 0:
        return target
    if pooling == "first":
        _, idx = np.unique(owner, return_index=True)
    else:
        _, ridx = np.unique(owner[::-1], return_index=True)
        idx = owner.shape[0] - 1 - ridx
    target[idx] = owner[idx]
    return target


def plan_rows(
    alignments: Sequence[Alignment],
    *,
    pooling: Pooling,
    max_length: int,
    overlap: int | None = None,
) -> list[Row]:
    """The rows the model runs on, windows for sentences longer than ``max_length``.

    Args:
        alignments: one per sentence.
        pooling: ``first``, ``mean`` or ``last``.
        max_length: most tokens (special tokens included) the model takes at once.
        overlap: content tokens shared by consecutive windows; half a window by default.

    Returns:
        Rows in sentence order; a long sentence gives several consecutive rows, and every
        content token feeds its word from exactly one of them.
    """
    rows: list[Row] = []
    for s, al in enumerate(alignments):
        target = pooling_targets(al, pooling)
        pre = np.asarray(al.prefix, dtype=np.int64)
        suf = np.asarray(al.suffix, dtype=np.int64)
        pad_pre = np.full(pre.shape[0], -1, dtype=np.int64)
        pad_suf = np.full(suf.shape[0], -1, dtype=np.int64)
        c = int(al.content_ids.shape[0])
        window = max_length - pre.shape[0] - suf.shape[0]
        if window < 2:
            raise ConfigError(f"max_length {max_length} leaves no room for content tokens")
        if c <= window:
            rows.append(
                Row(
                    s,
                    np.concatenate([pre, al.content_ids, suf]),
                    np.concatenate([pad_pre, target, pad_suf]),
                )
            )
            continue
        for start, end, lo, hi in _windows(c, window, overlap):
            t = np.full(end - start, -1, dtype=np.int64)
            t[lo - start : hi - start] = target[lo:hi]
            rows.append(
                Row(
                    s,
                    np.concatenate([pre, al.content_ids[start:end], suf]),
                    np.concatenate([pad_pre, t, pad_suf]),
                )
            )
    return rows


def content_spans(
    alignment: Alignment, *, max_length: int, overlap: int | None = None
) -> list[tuple[int, int]]:
    """The content tokens ``[start, end)`` each row of :func:`plan_rows` holds, in its
    order (one span ``(0, c)`` when the sentence fits one row)."""
    c = int(alignment.content_ids.shape[0])
    window = max_length - len(alignment.prefix) - len(alignment.suffix)
    if c <= window:
        return [(0, c)]
    return [(start, end) for start, end, _, _ in _windows(c, window, overlap)]


def _windows(c: int, window: int, overlap: int | None) -> list[tuple[int, int, int, int]]:
    """Windows ``(start, end, lo, hi)`` over ``c`` tokens; each token is owned once.

    ``[start, end)`` is what the model sees, ``[lo, hi)`` the tokens whose states are
    taken from it: the owned ranges tile ``0..c`` and every cut lies in the middle of the
    overlap, so each token is as far from a window edge as the plan allows.
    """
    ov = window // 2 if overlap is None else overlap
    if not 0 <= ov < window:
        raise ConfigError(f"window overlap must be in 0..{window - 1}, got {ov}")
    step = window - ov
    starts = list(range(0, max(c - window, 0) + 1, step))
    if starts[-1] + window < c:
        starts.append(c - window)
    out: list[tuple[int, int, int, int]] = []
    for k, start in enumerate(starts):
        end = min(start + window, c)
        lo = 0 if k == 0 else (starts[k - 1] + window + start) // 2
        hi = c if k == len(starts) - 1 else (end + starts[k + 1]) // 2
        out.append((start, end, lo, hi))
    return out
