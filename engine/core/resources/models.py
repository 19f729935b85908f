"""Turning a ``--model`` option into what ``from_pretrained`` should load.

Short names map to the bundled models (the MiniLM encoder, the converted SmolLM2),
existing directories are used as they are, and anything else is a Hugging Face hub id,
used only when the local hub cache already holds it: nothing is downloaded at run time.
"""

from __future__ import annotations

import os
from pathlib import Path

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.resources.causal_lm import causal_lm_path
from brittle.engine.core.resources.encoder import default_encoder_path

#: Names :func:`resolve_model` maps to the bundled encoder (compared case-insensitively).
#: The hub id is included because the bundled files are that model's own weights.
ENCODER_ALIASES: frozenset[str] = frozenset(
    {"minilm", "all-minilm-l6-v2", "default", "sentence-transformers/all-minilm-l6-v2"}
)
#: Names :func:`resolve_model` maps to the converted SmolLM2 (a 4-bit quantised build,
#: so the hub id ``HuggingFaceTB/SmolLM2-135M-Instruct`` is deliberately not an alias).
CAUSAL_LM_ALIASES: frozenset[str] = frozenset({"smollm2", "smollm2-135m"})
DEFAULT_ENCODER = "minilm"
DEFAULT_CAUSAL_LM = "smollm2"


def _looks_like_path(name: str) -> bool:
    return (
        name.startswith(("/", "./", "../", "~", ".\\", "..\\"))
        or name in (".", "..")
        or os.path.isabs(name)
        or name.endswith(("/", "\\"))
    )


def resolve_model(name_or_path: str) -> str:
    """Turn a model option into what ``from_pretrained`` should load.

    - An existing local directory is used as is (returned as an absolute path).
    - ``minilm``, ``default``, ``all-MiniLM-L6-v2`` or ``sentence-transformers/all-MiniLM-L6-v2``
      (any case) give the bundled encoder (:func:`default_encoder_path`).
    - ``smollm2`` / ``smollm2-135m`` give the converted SmolLM2 (:func:`causal_lm_path`,
      converting it on first use).
    - A path-like string (``/``, ``./``, ``~`` ...) that is not a directory raises
      :class:`ResourceMissingError`.
    - Anything else is a Hugging Face hub id: the directory of its snapshot in the local
      Hugging Face cache (the hub is never contacted), else :class:`ResourceMissingError`
      naming it and how to provide it.
    """
    name = name_or_path.strip()
    path = Path(name).expanduser()
    if name and path.is_dir():
        return str(path.resolve())
    key = name.lower()
    if key in ENCODER_ALIASES:
        return str(default_encoder_path())
    if key in CAUSAL_LM_ALIASES:
        return str(causal_lm_path())
    if not name or _looks_like_path(name) or path.exists():
        raise ResourceMissingError(
            f"model directory {name_or_path!r}",
            [str(Path(os.path.abspath(path)))],
            f"pass an existing model directory, or {DEFAULT_ENCODER!r} for the bundled encoder",
        )
    cached = _hub_snapshot(name)
    if cached is None:
        raise ResourceMissingError(
            f"model {name!r} (a Hugging Face hub id; brittle downloads nothing at run time)",
            [f"the local Hugging Face cache ({_hub_cache()})", f"a directory named {name!r}"],
            f"download it once where there is internet (hf download {name}) or pass the "
            "directory of a saved model",
        )
    return cached


def _hub_cache() -> str:
    """Where the local Hugging Face cache is."""
    try:
        # Deferred: huggingface_hub comes with transformers; only hub ids need it.
        from huggingface_hub import constants
    except ImportError:  # pragma: no cover - transformers depends on it
        return "~/.cache/huggingface/hub"
    return str(constants.HF_HUB_CACHE)


def _hub_snapshot(repo_id: str) -> str | None:
    """The directory of ``repo_id``'s snapshot in the local Hugging Face cache (the one
    its ``main`` reference names), or ``None``; looks at files only."""
    try:
        # Deferred: huggingface_hub comes with transformers; only hub ids need it.
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on it
        return None
    try:
        found = try_to_load_from_cache(repo_id=repo_id, filename="config.json")
    except Exception:  # a name that is no valid hub id is simply not there
        return None
    return str(Path(found).parent) if isinstance(found, str) else None
