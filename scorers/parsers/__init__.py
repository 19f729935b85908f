"""Dependency parsers behind one batch interface, registered in ``registry("parsers")``.

Importing this package registers ``spacy``, ``stanza`` and ``gold``; none of them loads
a model until it is used. :func:`make_parser` builds one by name.
"""

from __future__ import annotations

from brittle.engine.registry import registry
from brittle.scorers.parsers.base import CachedParser, CacheStats, Parse, Parser, WordParser
from brittle.scorers.parsers.gold import GoldParser
from brittle.scorers.parsers.spacy_backend import SpacyBackend
from brittle.scorers.parsers.stanza_backend import StanzaBackend

__all__ = [
    "CacheStats",
    "CachedParser",
    "GoldParser",
    "Parse",
    "Parser",
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
    factory = registry("parsers").get(name)
    parser = factory(**options)  # type: ignore[operator]
    assert isinstance(parser, Parser)
    return parser


def parser_names() -> list[str]:
    """Registered parser names."""
    return registry("parsers").names()
