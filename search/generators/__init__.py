"""Candidate generators: word substitutions and reorderings, registered by name.

Importing this package registers every generator in :data:`GENERATORS`:

==================  ======================================================================
name                what it proposes
==================  ======================================================================
``copos``           WordNet synonyms with the same POS, inflected like the original
``coco``            words a causal or masked language model expects in the context
``random``          random frequent words (same UPOS, inflected)
``jabberwocky``     pronounceable pseudowords, inflected by regular English morphology
``neighbours``      nearest GloVe neighbours (same UPOS)
``shuffle``         full shuffle of words, subword tokens or characters
``phrase-shuffle``  phrases (tree subtrees or random chunks) shuffled with probability rho
``neighbour-flip``  adjacent units swapped with probability rho
==================  ======================================================================

Heavy libraries and resources load on first use, never at import.
"""

from brittle.search.generators.base import (
    GENERATORS,
    Generator,
    GeneratorFamily,
    SubstitutionGenerator,
)
from brittle.search.generators.coco import CoCO
from brittle.search.generators.copos import CoPOS
from brittle.search.generators.eligibility import Eligibility
from brittle.search.generators.jabberwocky import Jabberwocky
from brittle.search.generators.neighbours import Neighbours
from brittle.search.generators.order import (
    NeighbourFlip,
    PhraseShuffle,
    Reordering,
    Shuffle,
    TextReordering,
)
from brittle.search.generators.random_words import RandomWords
from brittle.search.table import Candidate, SubstitutionTable

__all__ = [
    "GENERATORS",
    "Candidate",
    "CoCO",
    "CoPOS",
    "Eligibility",
    "Generator",
    "GeneratorFamily",
    "Jabberwocky",
    "NeighbourFlip",
    "Neighbours",
    "PhraseShuffle",
    "RandomWords",
    "Reordering",
    "Shuffle",
    "SubstitutionGenerator",
    "SubstitutionTable",
    "TextReordering",
]
