"""Loading a language model for coCO and describing its vocabulary in words.

:func:`load_lm` resolves a model name (``None`` for the offline default, a local
directory, or a hub id) and loads tokenizer and model once per process with
``from_pretrained`` — tests and users take the same path. :class:`PieceTable` tells, for
every token id, whether the token starts a new word and which letters it adds, which is
what the candidate search needs to keep whole words only.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from brittle.engine.core import resources
from brittle.engine.core.resources.loading import from_pretrained
from brittle.scorers.representations import check_dtype, torch_dtype

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from torch import nn
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "LoadedLM",
    "PieceTable",
    "detect_kind",
    "fit_flags",
    "load_lm",
    "resolve_model_dir",
]

LMKind = Literal["causal", "masked"]

_LOADED: dict[tuple[str, str, str, str], LoadedLM] = {}


@dataclass(frozen=True, eq=False)
class LoadedLM:
    """A tokenizer and model in eval mode, with its piece table.

    Attributes:
        name: the resolved directory or hub id.
        kind: ``causal`` or ``masked``.
        tokenizer: the ``transformers`` tokenizer.
        model: the ``transformers`` model (``torch.nn.Module``), on ``device``.
        device: torch device string.
        pieces: the vocabulary described in words.
    """

    name: str
    kind: LMKind
    tokenizer: PreTrainedTokenizerBase
    model: nn.Module
    device: str
    pieces: PieceTable


def resolve_model_dir(name: str | None) -> str:
    """Where to load a model from.

    ``None`` gives the bundled offline causal LM
    (:func:`brittle.engine.core.resources.causal_lm_path`); an existing directory is used as
    is; any other name goes through :func:`brittle.engine.core.resources.resolve_model`
    (a hub id gives its snapshot in the local Hugging Face cache; the hub is never
    contacted).

    Raises:
        ResourceMissingError: the name is neither a directory, a bundled model nor a hub
            id in the local cache.
    """
    if name is not None and Path(name).is_dir():
        return str(name)
    if name is None:
        return str(resources.causal_lm_path())
    return str(resources.resolve_model(name))


def detect_kind(path: str) -> LMKind:
    """``masked`` or ``causal`` from the model's config (architectures, ``is_decoder``)."""
    from transformers import AutoConfig

    config = from_pretrained(AutoConfig.from_pretrained, path)
    archs = " ".join(getattr(config, "architectures", None) or [])
    if "MaskedLM" in archs:
        return "masked"
    if "CausalLM" in archs or "LMHead" in archs or getattr(config, "is_decoder", False):
        return "causal"
    if getattr(config, "model_type", "") in {"bert", "roberta", "distilbert", "electra", "albert"}:
        return "masked"
    return "causal"


def quiet_cache_deprecation() -> None:
    """Silence transformers' notice that ``past_key_values`` is renamed ``cache`` (5.x),
    printed at the first cached forward pass of every run: brittle passes the name every
    version it supports (4.45 and later) accepts. Process-wide, for that notice only."""
    from transformers.utils import logging as hf_logging  # deferred: imports transformers

    warnings.filterwarnings("ignore", message=".*past_key_values.*", category=FutureWarning)
    library = hf_logging.get_logger("transformers")  # its handler prints every module's
    for handler in library.handlers:
        if not any(isinstance(f, _CacheNotice) for f in handler.filters):
            handler.addFilter(_CacheNotice())


class _CacheNotice(logging.Filter):
    """Drops transformers' log record about the ``past_key_values`` rename."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "past_key_values" not in record.getMessage()


def load_lm(
    name: str | None = None,
    *,
    kind: Literal["auto", "causal", "masked"] = "auto",
    device: str | None = None,
    dtype: str | None = None,
) -> LoadedLM:
    """Tokenizer and model, loaded once per process and precision (eval mode).

    Args:
        name: local directory, hub id, or ``None`` for the offline default causal LM.
        kind: ``auto`` reads the config; ``causal``/``masked`` force the head.
        device: torch device; default ``cuda`` when available, else ``cpu``.
        dtype: ``float32``, ``float16`` (GPU only) or ``bfloat16``; ``None`` is
            ``float32``. Scores are computed in float32 from the logits either way.

    Loading is offline and runs nothing from the directory
    (:func:`~brittle.engine.core.resources.loading.from_pretrained`).

    Raises:
        ConfigError: an unknown ``dtype``, or ``float16`` on a device without CUDA.
        ResourceMissingError: the model is not available locally.
        BrittleInputError: the directory ships code of its own, or cannot be loaded.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    path = resolve_model_dir(name)
    resolved: LMKind = detect_kind(path) if kind == "auto" else kind
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    precision = check_dtype(dtype, dev) or "float32"
    key = (path, resolved, dev, precision)
    hit = _LOADED.get(key)
    if hit is not None:
        return hit
    tokenizer = from_pretrained(AutoTokenizer.from_pretrained, path)
    auto = AutoModelForMaskedLM if resolved == "masked" else AutoModelForCausalLM
    model: nn.Module = from_pretrained(
        auto.from_pretrained, path, weights=True, dtype=torch_dtype(precision)
    )
    model = model.to(dev).eval()
    quiet_cache_deprecation()
    loaded = LoadedLM(path, resolved, tokenizer, model, dev, PieceTable.build(tokenizer))
    _LOADED[key] = loaded
    return loaded


@dataclass(frozen=True, eq=False)
class PieceTable:
    """Every token id described as a piece of a word.

    Attributes:
        text: the letters (or other characters) the token adds, without spacing, (V,).
        starts_word: bool (V,): the token begins a new space-separated word.
        letters: bool (V,): ``text`` is non-empty ASCII letters only.
        special: bool (V,): special tokens (never proposed).
    """

    text: tuple[str, ...]
    starts_word: NDArray[np.bool_]
    letters: NDArray[np.bool_]
    special: NDArray[np.bool_]

    @property
    def word_starts(self) -> NDArray[np.bool_]:
        """bool (V,): letter tokens that begin a word."""
        return self.starts_word & self.letters & ~self.special

    @property
    def continuations(self) -> NDArray[np.bool_]:
        """bool (V,): letter tokens that continue the current word."""
        return ~self.starts_word & self.letters & ~self.special

    @classmethod
    def build(cls, tokenizer: PreTrainedTokenizerBase) -> PieceTable:
        """Describe a tokenizer's vocabulary by decoding every token after a fixed one.

        Decoding ``[x, v]`` and removing the decoding of ``[x]`` shows whether ``v``
        brings a space (a new word) and which characters it adds; this works alike for
        WordPiece (``##`` pieces), byte-level BPE (``Ġ``) and SentencePiece (``▁``).
        """
        size = len(tokenizer)
        anchor = tokenizer.encode("x", add_special_tokens=False)[:1]
        base = tokenizer.decode(anchor, clean_up_tokenization_spaces=False)
        if not isinstance(base, str):  # one sequence decodes to one string
            raise TypeError(f"decoding one token gave {type(base).__name__}, not str")
        decoded = tokenizer.batch_decode(
            [[*anchor, v] for v in range(size)], clean_up_tokenization_spaces=False
        )
        special = np.zeros(size, dtype=np.bool_)
        for v in tokenizer.all_special_ids:
            if 0 <= v < size:
                special[v] = True
        texts: list[str] = []
        starts = np.zeros(size, dtype=np.bool_)
        letters = np.zeros(size, dtype=np.bool_)
        for v, full in enumerate(decoded):
            rest = full[len(base) :] if full.startswith(base) else full
            piece = rest.strip()
            texts.append(piece)
            starts[v] = rest[:1].isspace()
            letters[v] = bool(piece) and piece.isascii() and piece.isalpha()
        return cls(tuple(texts), starts, letters, special)


def fit_flags(flags: NDArray[np.bool_], vocab: int) -> NDArray[np.bool_]:
    """Per-token flags cut or padded (with ``False``) to a model's output size ``vocab``.

    Models may pad their embedding matrix beyond the tokenizer's vocabulary.
    """
    if flags.shape[0] >= vocab:
        return np.ascontiguousarray(flags[:vocab])
    return np.concatenate([flags, np.zeros(vocab - flags.shape[0], dtype=np.bool_)])
