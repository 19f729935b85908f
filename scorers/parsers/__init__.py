"""Dependency parsers behind one batch interface, registered in ``PARSERS``.

Importing this package registers ``spacy``, ``stanza`` and ``gold``; none of them loads
a model until it is used. :func:`make_parser` builds one by name.
"""

from __future__ import annotations

from brittle.scorers.parsers.base import (
    PARSERS,
    CachedParser,
    CacheStats,
    Parse,
    Parser,
    ParserFactory,
    WordParser,
)
from brittle.scorers.parsers.gold import GoldParser
from brittle.scorers.parsers.spacy_backend import SpacyBackend
from brittle.scorers.parsers.stanza_backend import StanzaBackend

__all__ = [
    "PARSERS",
    "CacheStats",
    "CachedParser",
    "GoldParser",
    "Parse",
    "Parser",
    "ParserFactory",
    "SpacyBackend",
    "StanzaBackend",
    "WordParser",
    "make_parser",
    "parser_names",
]


def make_parser(name: str, **options: object) -> Parser:
    """The parser registered as ``name``, built with its keyword options.

    Raises:
        ConfigError: for an unknown name (the message lists the known ones).
    """
    return PARSERS.get(name)(**options)


def parser_names() -> list[str]:
    """Registered parser names."""
    return PARSERS.names()
