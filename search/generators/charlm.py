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
        kept = [w for w in words if w and all(c in _LETTERS for c in w)]
        # One string "^^^word$^^^word$...": every window ending on a letter or "$" lies
        # inside one word, because each word starts with ctx_len padding symbols.
        text = "".join("^" * ctx_len + w + "$" for w in kept)
        raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.int64)
        seq = np.where(raw == ord("^"), _PAD, np.where(raw == ord("$"), _END, raw - 96))
        cells = _SYMBOLS**order
        if seq.size >= order:
            windows = np.lib.stride_tricks.sliding_window_view(seq, order)
            valid = windows[:, ctx_len] != _PAD
            weights = _SYMBOLS ** np.arange(order - 1, -1, -1, dtype=np.int64)
            flat = np.bincount(windows[valid] @ weights, minlength=cells)
        else:
            flat = np.zeros(cells, dtype=np.int64)
        counts = flat.astype(np.float64).reshape(_SYMBOLS**ctx_len, _SYMBOLS)
        counts[:, 1:] += k
        probs = counts / counts.sum(axis=1, keepdims=True)
        cumulative = np.cumsum(probs, axis=1)
        cumulative[:, -1] = 1.0
        return cls(order, k, cumulative, len(kept))

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
