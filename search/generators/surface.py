"""Surface text of a sentence with the character span of every word.

Language-model generators need the text left and right of a word. The text is rebuilt
from the tokens (as :meth:`Sentence.surface_text` does: multiword tokens give their own
form, ``SpaceAfter=No`` is honoured) and each syntactic word outside a multiword token
gets its ``(start, end)`` character offsets; words inside a multiword token get ``None``
(they are never substituted).
"""

from __future__ import annotations

from dataclasses import dataclass

from brittle.engine.core.sentence import Sentence

__all__ = ["SurfaceText", "surface_of"]


@dataclass(frozen=True, slots=True)
class SurfaceText:
    """Text and per-word character spans (``None`` inside multiword tokens)."""

    text: str
    spans: tuple[tuple[int, int] | None, ...]

    def left(self, position: int) -> str:
        """Text before word ``position``, without trailing spaces."""
        span = self.spans[position]
        if span is None:
            raise ValueError(f"word {position + 1} is inside a multiword token")
        return self.text[: span[0]].rstrip()

    def right(self, position: int) -> str:
        """Text after word ``position`` (starts with its space, if any)."""
        span = self.spans[position]
        if span is None:
            raise ValueError(f"word {position + 1} is inside a multiword token")
        return self.text[span[1] :]

    def replaced(self, position: int, word: str, *, window: int | None = None) -> str:
        """The text with word ``position`` replaced by ``word``; with ``window``, cut
        after the ``window``-th word that follows it (words inside a multiword token
        are passed over; the whole rest when fewer follow)."""
        span = self.spans[position]
        if span is None:
            raise ValueError(f"word {position + 1} is inside a multiword token")
        end = len(self.text)
        if window is not None:
            after = [s for s in self.spans[position + 1 :] if s is not None]
            if window < len(after):
                end = after[window - 1][1] if window > 0 else span[1]
        return self.text[: span[0]] + word + self.text[span[1] : end]


def surface_of(sentence: Sentence) -> SurfaceText:
    """The surface text of ``sentence`` with word spans."""
    parts: list[str] = []
    length = 0
    spans: dict[int, tuple[int, int]] = {}
    for tok in sentence.surface_tokens():
        if tok.kind != "multiword":
            spans[tok.span[0] - 1] = (length, length + len(tok.form))
        parts.append(tok.form)
        length += len(tok.form)
        if not tok.no_space_after:
            parts.append(" ")
            length += 1
    text = "".join(parts).rstrip(" ")
    return SurfaceText(text, tuple(spans.get(i) for i in range(len(sentence))))
