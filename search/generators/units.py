"""Units a reordering moves: words, subword tokens or characters, with their word.

Every level keeps, for each unit, the index of the word it belongs to, so phrases found
on words (from the dependency tree) carry over to subwords and characters.

- ``word``: the FORMs.
- ``subword``: the tokens of a ``transformers`` tokenizer applied to the FORMs
  (``is_split_into_words``, no special tokens). The tokens and the permutation are
  exact (feed the permuted token ids to a model); the text is rebuilt for reading with
  ``convert_tokens_to_string``, which may lowercase (uncased tokenizers) and tidy the
  spacing around punctuation.
- ``character``: the characters of the FORMs joined by single spaces; each space
  belongs to the word before it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from brittle.engine.core import resources
from brittle.engine.core.resources.loading import from_pretrained
from brittle.engine.core.sentence import Sentence

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = ["Level", "UnitSequence", "load_tokenizer", "units_of"]

Level = Literal["word", "subword", "character"]

_TOKENIZERS: dict[str, PreTrainedTokenizerBase] = {}


@dataclass(frozen=True, eq=False)
class UnitSequence:
    """The units of one sentence at one level.

    Attributes:
        level: ``word``, ``subword`` or ``character``.
        units: the unit strings (k,).
        word_of: the 0-based word index of each unit (k,).
        join: rebuilds a text from a sequence of units.
    """

    level: Level
    units: tuple[str, ...]
    word_of: tuple[int, ...]
    join: Callable[[Sequence[str]], str]

    def text(self, order: Sequence[int] | None = None) -> str:
        """The text of the units, in ``order`` (``order[j]`` = unit at position j)."""
        if order is None:
            return self.join(self.units)
        return self.join([self.units[i] for i in order])

    def __len__(self) -> int:
        return len(self.units)


def load_tokenizer(name: str | None) -> PreTrainedTokenizerBase:
    """A ``transformers`` tokenizer by name or directory (``None``: the bundled MiniLM's).

    Resolved through :func:`brittle.engine.core.resources.resolve_model`; cached per process.
    """
    path = (
        str(resources.default_encoder_path())
        if name is None
        else name
        if Path(name).is_dir()
        else resources.resolve_model(name)
    )
    hit = _TOKENIZERS.get(path)
    if hit is None:
        from transformers import AutoTokenizer

        hit = from_pretrained(AutoTokenizer.from_pretrained, path)
        _TOKENIZERS[path] = hit
    return hit


def _spaced(units: Sequence[str]) -> str:
    return " ".join(units)


def _concatenated(units: Sequence[str]) -> str:
    return "".join(units)


def units_of(
    sentence: Sentence, level: Level, *, tokenizer: PreTrainedTokenizerBase | None = None
) -> UnitSequence:
    """The units of ``sentence`` at ``level`` (``tokenizer`` needed for ``subword``)."""
    forms = sentence.forms
    if level == "word":
        return UnitSequence(level, tuple(forms), tuple(range(len(forms))), _spaced)
    if level == "character":
        chars: list[str] = []
        owner: list[int] = []
        for w, form in enumerate(forms):
            if w > 0:
                chars.append(" ")
                owner.append(w - 1)
            chars.extend(form)
            owner.extend([w] * len(form))
        return UnitSequence(level, tuple(chars), tuple(owner), _concatenated)
    if level == "subword":
        if tokenizer is None:
            raise ValueError("subword units need a tokenizer")
        enc = tokenizer(list(forms), is_split_into_words=True, add_special_tokens=False)
        tokens = tuple(tokenizer.convert_ids_to_tokens(enc["input_ids"]))
        word_ids = enc.word_ids()
        owner = [w if w is not None else 0 for w in word_ids]

        def join(units: Sequence[str]) -> str:
            return tokenizer.convert_tokens_to_string(list(units))

        return UnitSequence(level, tokens, tuple(owner), join)
    raise ValueError(f"unknown level {level!r} (word, subword or character)")
