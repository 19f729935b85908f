"""A character n-gram model of English word shapes, for sampling pseudowords.

Words are lowercase ``a``-``z`` strings. The model conditions each character on the
``order - 1`` previous ones, with ``^`` padding the start and ``$`` ending the word;
probabilities are add-k smoothed counts (``k`` added to every possible next symbol, so
unseen continuations stay possible but rare). Sampling is driven by a
``numpy.random.Generator``: the same model, generator state and limits give the same
word.

Counts live in a dense array of shape ``(28 ** (order - 1), 28)``: ``order`` is limited
to 2..4 (a 4-gram table is 21,952 x 28).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["CharNgramModel"]

_PAD = 0  # "^"
_END = 27  # "$"
_SYMBOLS = 28
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _codes(word: str) -> list[int]:
    return [ord(c) - 96 for c in word]


@dataclass(frozen=True, eq=False)
class CharNgramModel:
    """Add-k smoothed character n-gram model.

    Attributes:
        order: n (2..4): characters per n-gram, the predicted one included.
        k: add-k smoothing constant.
        cumulative: float64 (28 ** (order - 1), 28): cumulative next-symbol
            probabilities per context (column 0, the padding symbol, has probability 0).
        words: number of training words.
    """

    order: int
    k: float
    cumulative: NDArray[np.float64]
    words: int

    @classmethod
    def train(cls, words: Iterable[str], *, order: int = 4, k: float = 0.01) -> CharNgramModel:
        """Count n-grams over ``words`` (words with characters outside a-z are skipped)."""
        if not 2 <= order <= 4:
            raise ValueError(f"order must be 2, 3 or 4, got {order}")
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        ctx_len = order - 1
        n_ctx = _SYMBOLS**ctx_len
        ctx_ids: list[NDArray[np.int64]] = []
        out_ids: list[NDArray[np.int64]] = []
        used = 0
        weights = _SYMBOLS ** np.arange(ctx_len - 1, -1, -1, dtype=np.int64)
        for word in words:
            if not word or not all(c in _LETTERS for c in word):
                continue
            used += 1
            seq = np.asarray([_PAD] * ctx_len + _codes(word) + [_END], dtype=np.int64)
            windows = np.lib.stride_tricks.sliding_window_view(seq, order)
            ctx_ids.append(windows[:, :ctx_len] @ weights)
            out_ids.append(windows[:, ctx_len])
        counts = np.zeros((n_ctx, _SYMBOLS), dtype=np.float64)
        if ctx_ids:
            np.add.at(counts, (np.concatenate(ctx_ids), np.concatenate(out_ids)), 1.0)
        counts[:, 1:] += k
        probs = counts / counts.sum(axis=1, keepdims=True)
        cumulative = np.cumsum(probs, axis=1)
        cumulative[:, -1] = 1.0
        return cls(order, k, cumulative, used)

    def sample(
        self, rng: np.random.Generator, *, min_length: int = 3, max_length: int = 10
    ) -> str | None:
        """One word of ``min_length..max_length`` letters, or ``None`` when the draw
        ends outside those limits."""
        ctx_len = self.order - 1
        n_ctx = _SYMBOLS**ctx_len
        ctx = 0  # all padding
        letters: list[str] = []
        draws = rng.random(max_length + 1)
        for u in draws.tolist():
            sym = int(np.searchsorted(self.cumulative[ctx], u, side="right"))
            sym = min(max(sym, 1), _END)
            if sym == _END:
                break
            letters.append(_LETTERS[sym - 1])
            ctx = (ctx * _SYMBOLS + sym) % n_ctx
        else:
            return None
        if not min_length <= len(letters) <= max_length:
            return None
        return "".join(letters)

    def logprob(self, word: str) -> float:
        """Natural-log probability of ``word`` (with its end symbol) under the model."""
        ctx_len = self.order - 1
        n_ctx = _SYMBOLS**ctx_len
        ctx = 0
        total = 0.0
        for sym in [*_codes(word), _END]:
            row = self.cumulative[ctx]
            p = row[sym] - (row[sym - 1] if sym > 0 else 0.0)
            total += float(np.log(max(p, 1e-300)))
            ctx = (ctx * _SYMBOLS + sym) % n_ctx
        return total
