"""Types of JSON data: what ``json.loads`` gives back and what the writers accept.

``JSONValue`` is a decoded value (dicts and lists all the way down); ``JSONLike`` is
anything :func:`json.dump` writes as JSON with the same shape, read-only containers
(tuples, any mapping) included, so typed records can be handed over without a copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["JSONLike", "JSONObject", "JSONValue"]

#: A decoded JSON value.
JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
#: A decoded JSON object.
JSONObject: TypeAlias = "dict[str, JSONValue]"
#: What :func:`json.dump` writes: JSON values, tuples and mappings of them.
JSONLike: TypeAlias = (
    "str | int | float | bool | Sequence[JSONLike] | Mapping[str, JSONLike] | None"
)
