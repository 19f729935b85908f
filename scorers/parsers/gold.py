"""The ``gold`` parser: no re-parse, every sentence's own HEAD, UPOS and DEPREL.

A perturbed sentence keeps the gold columns of the original (reorderings renumber HEAD),
so with this parser every substitution has syntax distance 0 and every tag is kept; it
isolates the effect of the perturbation from parser error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brittle.scorers.parsers.base import PARSERS, Parse

if TYPE_CHECKING:
    from brittle.engine.core.sentence import Sentence

__all__ = ["GoldParser", "gold_parser"]


@dataclass(frozen=True)
class GoldParser:
    """Reads the annotation already in each sentence."""

    name: str = "gold"
    #: The treebank's own relations: UD's.
    ud_labels: bool = True

    def prepare(self) -> None:
        """Nothing to load."""

    def describe(self) -> dict[str, object]:
        """Just the name: there is no model."""
        return {"parser": self.name}

    def parse(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """One parse per sentence from its HEAD, UPOS and DEPREL columns."""
        return [Parse(s.heads, s.upos, s.deprels) for s in sentences]

    def clear(self) -> None:
        """Nothing kept: each parse is read from the sentence."""


@PARSERS.register("gold", help="no re-parse: the treebank's own annotation")
def gold_parser() -> GoldParser:
    """The gold parser (takes no options)."""
    return GoldParser()
