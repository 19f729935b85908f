"""A generator's keyword options from the command line: ``NAME=VALUE`` strings, typed.

Every generator declares its options as keyword-only dataclass fields, so the command
line reaches all of them without a list anywhere: ``-o level=character -o rho=0.3``,
``-o kind=masked -o model=DIR``, ``-o eligibility.include_upos=NOUN,ADJ``. Values are
converted by the field's type: numbers, ``true``/``false``, one of a ``Literal``'s
values, ``none`` for an optional field, comma lists for sets of strings, and dotted
names for the fields of a nested options record (``eligibility``; the parts not named
keep the generator's own default). Fields of other
types (a lexicon object, a WordNet reader) are for Python callers only.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Literal, Union

from brittle.engine.core.errors import ConfigError

__all__ = ["SHORTHANDS", "option_help", "parse_options", "shorthand_options"]

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


class _Unresolved:
    """Stands for a type imported only for type checking (a reader, a tokenizer)."""

    def __class_getitem__(cls, item: object) -> type[_Unresolved]:
        return cls


def _hints(cls: type) -> dict[str, object]:
    """``cls``'s resolved field types; names only imported for type checking resolve
    to :class:`_Unresolved` (such fields cannot be set from text anyway)."""
    missing: dict[str, object] = {}
    while True:
        try:
            return dict(typing.get_type_hints(cls, localns=missing))
        except NameError as err:
            if err.name is None or err.name in missing:
                raise
            missing[err.name] = _Unresolved


def _settable_hint(hint: object) -> bool:
    """Whether a value of type ``hint`` can be written as text."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return all(_settable_hint(a) for a in rest)
    if origin is Literal or hint in (bool, int, float, str):
        return True
    return origin in (frozenset, set, tuple, Sequence) and bool(args) and args[0] is str


def _settable(cls: type) -> dict[str, dataclasses.Field[object]]:
    return {f.name: f for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_")}


def _convert(name: str, hint: object, text: str) -> object:
    """``text`` as a value of type ``hint``; :class:`ConfigError` when it is not one."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType) and type(None) in args:
        if text.lower() == "none":
            return None
        rest = [a for a in args if a is not type(None)]
        return _convert(name, rest[0] if len(rest) == 1 else Union[tuple(rest)], text)  # noqa: UP007
    if origin is Literal:
        if text in args:
            return text
        raise ConfigError(
            f"option {name}: expected one of {', '.join(map(str, args))}, got {text!r}"
        )
    if hint is bool:
        if text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        raise ConfigError(f"option {name}: expected true or false, got {text!r}")
    if hint is int or hint is float:
        try:
            return hint(text)  # type: ignore[operator]
        except ValueError:
            kind = "a whole number" if hint is int else "a number"
            raise ConfigError(f"option {name}: expected {kind}, got {text!r}") from None
    if hint is str:
        return text
    if origin in (frozenset, set, tuple, Sequence) and args and args[0] is str:
        items = frozenset(x.strip() for x in text.split(",") if x.strip())
        return items if origin in (frozenset, set) else tuple(sorted(items))
    raise ConfigError(f"option {name} cannot be set from the command line (Python only)")


def parse_options(
    cls: type, specs: Sequence[str], *, reserved: Mapping[str, str] = {}
) -> dict[str, object]:
    """Keyword arguments for ``cls`` from ``NAME=VALUE`` strings.

    Args:
        cls: a dataclass (a generator class).
        specs: the strings, as given on the command line.
        reserved: options the command sets itself, each with the flag to use instead.

    Raises:
        ConfigError: an unknown or reserved option, a malformed spec or a bad value.
    """
    fields = _settable(cls)
    hints = _hints(cls)
    values: dict[str, object] = {}
    nested: dict[str, dict[str, str]] = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigError(f"option {spec!r}: expected NAME=VALUE")
        head, dot, tail = name.partition(".")
        if head in reserved:
            raise ConfigError(f"option {head} is set by {reserved[head]}")
        if head not in fields:
            known = ", ".join(option_help(cls)) or "none"
            raise ConfigError(
                f"{getattr(cls, 'method', cls.__name__)} has no option {head!r} (options: {known})"
            )
        if dot:
            nested.setdefault(head, {})[tail] = text
        else:
            values[head] = _convert(head, hints[head], text)
    for head, parts in nested.items():
        inner = hints[head]
        if not (isinstance(inner, type) and dataclasses.is_dataclass(inner)):
            raise ConfigError(f"option {head} has no parts to set")
        base = values.get(head, _default(fields[head]))
        kwargs = parse_options(inner, [f"{k}={v}" for k, v in parts.items()])
        values[head] = dataclasses.replace(base, **kwargs) if base is not None else inner(**kwargs)  # type: ignore[type-var]
    return values


def _default(f: dataclasses.Field[object]) -> object:
    """The default value of a dataclass field, ``None`` when it has none. A nested
    record's parts given on the command line change the generator's own default record
    (coPOS's eligibility differs from the plain one), not a fresh one."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def option_help(cls: type) -> list[str]:
    """``NAME`` (and ``NAME.PART``) of every option settable from the command line."""
    out: list[str] = []
    hints = _hints(cls)
    for name in _settable(cls):
        hint = hints[name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            out.extend(f"{name}.{part}" for part in option_help(hint))
        elif _settable_hint(hint):
            out.append(name)
    return out


#: Command-line flags that set a generator option by name, for every generator that has
#: the option (``--lm DIR`` is ``-o model=DIR`` for ``coco``): flag -> option name.
SHORTHANDS: dict[str, str] = {"--lm": "model", "--lm-kind": "kind", "--sense": "sense"}


def shorthand_options(
    methods: Sequence[str], generators: Mapping[str, type], given: Mapping[str, str | None]
) -> dict[str, tuple[str, ...]]:
    """``NAME=VALUE`` option strings per method from shorthand flags.

    Args:
        methods: the run's generator names.
        generators: the generator class of each method.
        given: flag (a key of :data:`SHORTHANDS`) -> value, ``None`` when not given.

    Returns:
        For each method, the option strings of the flags it takes (possibly none).

    Raises:
        ConfigError: a flag given that none of ``methods`` takes.
    """
    out: dict[str, tuple[str, ...]] = {m: () for m in methods}
    for flag, value in given.items():
        if value is None:
            continue
        option = SHORTHANDS[flag]
        takers = [m for m in methods if option in option_help(generators[m])]
        if not takers:
            owners = ", ".join(
                sorted(m for m, cls in generators.items() if option in option_help(cls))
            )
            raise ConfigError(
                f"{flag} sets the {option!r} option, which {', '.join(methods)} does not have"
                + (f" (it applies to: {owners})" if owners else "")
            )
        for m in takers:
            out[m] = (*out[m], f"{option}={value}")
    return out
