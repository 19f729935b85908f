"""Gold annotations a probe is trained on and scored against, computed once per sentence.

An attack scores many perturbed versions of one sentence against the annotations of the
original; building the :class:`Gold` record once (tree distances, depths, root,
punctuation mask) keeps that cost out of the inner loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core import tree
from brittle.engine.core.errors import BrittleInputError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.engine.core.sentence import Sentence

__all__ = ["Gold", "gold_of", "golds_of"]


@dataclass(frozen=True, eq=False)
class Gold:
    """The annotations of one sentence that probes use.

    Attributes:
        heads: HEAD array, shape (n,), int64, 1-based heads, 0 for the root.
        distances: tree path lengths, shape (n, n), int32.
        depths: depth of each word, shape (n,), int32 (the root word is 0).
        root: 0-based index of the root word.
        upos: UPOS of each word.
        xpos: XPOS of each word.
        punct: words whose UPOS is PUNCT, shape (n,), bool.
    """

    heads: NDArray[np.int64]
    distances: NDArray[np.int32]
    depths: NDArray[np.int32]
    root: int
    upos: tuple[str, ...]
    xpos: tuple[str, ...]
    punct: NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.heads.shape[0])

    @property
    def max_depth(self) -> int:
        """Depth of the whole tree (largest word depth)."""
        return int(self.depths.max()) if self.depths.size else 0

    def tags(self, tagset: str) -> tuple[str, ...]:
        """``upos`` or ``xpos``."""
        return self.xpos if tagset == "xpos" else self.upos

    @classmethod
    def from_arrays(
        cls,
        heads: Sequence[int] | NDArray[np.integer],
        *,
        upos: Sequence[str] | None = None,
        xpos: Sequence[str] | None = None,
    ) -> Gold:
        """A gold record from a HEAD array (tags default to ``_``)."""
        h = tree.validate_heads(heads)
        n = int(h.shape[0])
        u = tuple(upos) if upos is not None else ("_",) * n
        x = tuple(xpos) if xpos is not None else ("_",) * n
        if len(u) != n or len(x) != n:
            raise ValueError("tags and heads differ in length")
        punct = np.fromiter((t == "PUNCT" for t in u), dtype=bool, count=n)
        return cls(
            heads=h,
            distances=tree.distance_matrix(h),
            depths=tree.depths(h),
            root=tree.root_index(h),
            upos=u,
            xpos=x,
            punct=punct,
        )


def gold_of(sentence: Sentence) -> Gold:
    """The :class:`Gold` record of a sentence.

    Raises:
        BrittleInputError: when the sentence's HEAD column is not a tree.
    """
    problems = sentence.problems()
    if problems:
        where = sentence.source or sentence.sent_id
        raise BrittleInputError(where, sentence.line or None, "; ".join(problems))
    return Gold.from_arrays(sentence.heads, upos=sentence.upos, xpos=sentence.xpos)


def golds_of(sentences: Sequence[Sentence]) -> list[Gold]:
    """:func:`gold_of` for every sentence."""
    return [gold_of(s) for s in sentences]
