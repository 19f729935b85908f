"""Loading a model directory with ``transformers``: offline, and running nothing in it.

Every ``from_pretrained`` brittle calls on a user's model goes through
:func:`from_pretrained`, which

- never contacts a hub: the hub's offline mode is on for the call
  (:func:`~brittle.engine.core.resources.home.hf_offline`) and ``local_files_only=True``;
- runs no code from the directory: a directory whose ``config.json`` (or tokenizer or
  processor configuration) names code of its own (``auto_map``) is refused before
  ``transformers`` reads it, and ``trust_remote_code=False`` is passed all the same;
- unpickles nothing but tensors: models load with ``weights_only=True`` (a
  ``pytorch_model.bin`` that is a pickle of anything else is refused, not run), and
  with ``use_safetensors=True`` when the directory has safetensors weights, so a pickle
  beside them is never opened.

What the directory lacks or holds wrongly is a
:class:`~brittle.engine.core.errors.BrittleInputError` naming it (one line, exit status 2).
"""

from __future__ import annotations

import json
import pickle
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from brittle.engine.core.errors import BrittleError, BrittleInputError
from brittle.engine.core.resources.home import LOCK, hf_offline

__all__ = ["CODE_CONFIGS", "from_pretrained", "refuse_custom_code"]

T = TypeVar("T")

#: Configuration files whose ``auto_map`` would make ``transformers`` import code.
CODE_CONFIGS = (
    "config.json",
    "tokenizer_config.json",
    "preprocessor_config.json",
    "processor_config.json",
)

#: What ``transformers`` and torch raise for a directory they cannot load.
_LOAD_ERRORS: tuple[type[Exception], ...] = (OSError, ValueError, KeyError, pickle.UnpicklingError)


def refuse_custom_code(directory: Path) -> None:
    """Refuse a model directory that ships code for ``transformers`` to import.

    Raises:
        BrittleInputError: a configuration file of :data:`CODE_CONFIGS` has an
            ``auto_map`` (names the file).
    """
    for name in CODE_CONFIGS:
        path = directory / name
        if _has_auto_map(path):
            raise BrittleInputError(
                path,
                None,
                "the model ships code of its own (auto_map); brittle runs no code from "
                "model directories: use a model that transformers' own classes load",
            )


def _has_auto_map(path: Path) -> bool:
    """Whether the JSON object in ``path`` has an ``auto_map`` (an unreadable or
    malformed file has none: ``transformers`` reports it when it reads the file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get("auto_map"))


def _has_safetensors(directory: Path) -> bool:
    """Whether ``directory`` holds safetensors weights (one file or shards)."""
    try:
        return any(p.suffix == ".safetensors" for p in directory.iterdir())
    except OSError:
        return False


def from_pretrained(
    load: Callable[..., T], source: str | Path, *, weights: bool = False, **options: object
) -> T:
    """``load(source, **options)`` for a local model directory, safely and offline.

    Args:
        load: a ``from_pretrained`` (``AutoTokenizer.from_pretrained``,
            ``AutoModel.from_pretrained``, ``AutoConfig.from_pretrained``...).
        source: the model directory (as :func:`~brittle.engine.core.resources.resolve_model`
            gives it).
        weights: ``load`` reads weights (a model, not a tokenizer or configuration):
            pass ``weights_only=True``, and ``use_safetensors=True`` when the directory
            has safetensors weights.
        options: further keyword arguments of ``load`` (``dtype=``...).

    Raises:
        BrittleInputError: the directory ships code (``auto_map``), lacks a file, or
            holds one ``transformers`` cannot read (a pickle of more than tensors among
            them); the message names the directory.
    """
    directory = Path(source)
    refuse_custom_code(directory)
    safe: dict[str, object] = {"local_files_only": True, "trust_remote_code": False}
    if weights:
        safe["weights_only"] = True
        if _has_safetensors(directory):
            safe["use_safetensors"] = True
    with LOCK, hf_offline(), warnings.catch_warnings(), _no_progress_bars():
        # one load at a time (LOCK is process-wide). torch's restricted unpickler warns
        # about the protocol before it refuses a file: the refusal is the message
        warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
        try:
            return load(str(source), **safe, **options)
        except BrittleError:
            raise
        except _LOAD_ERRORS as err:
            raise BrittleInputError(directory, None, _load_problem(err)) from None


@contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers' bars off while a model loads ("Loading weights: 100%|..." on every
    load otherwise, ``--quiet`` or not); brittle shows its own progress."""
    from transformers.utils import logging as hf_logging  # deferred: imports transformers

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()


def _load_problem(err: Exception) -> str:
    """One line saying why a directory could not be loaded."""
    if isinstance(err, pickle.UnpicklingError):
        return (
            "its PyTorch weights are a pickle that holds more than tensors; brittle "
            "unpickles tensors only (convert the weights to safetensors)"
        )
    first = next((line.strip() for line in str(err).splitlines() if line.strip()), "")
    return f"cannot be loaded as a model ({type(err).__name__}: {first or 'no detail'})"
