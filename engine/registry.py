"""Named component registries.

Components (generators, constraints, parsers, representation backends, probes,
strategies) register themselves by decorator under a stable name; the CLI lists them
and resolves names through them, so there are no if/elif chains over names.

Example::

    from brittle.engine.registry import generators

    @generators.register("copos", help="WordNet synonyms with the same POS")
    class CoPOS: ...

    cls = generators.get("copos")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from brittle.engine.errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Entry(Generic[T]):
    """One registered component: its name, the object and a one-line help text."""

    name: str
    obj: T
    help: str


class Registry(Generic[T]):
    """A mapping from stable names to components of one kind."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, *, help: str = "") -> Callable[[T], T]:
        """Decorator that registers ``obj`` under ``name``; a name can be taken once."""

        def decorate(obj: T) -> T:
            if name in self._entries and self._entries[name].obj is not obj:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            doc = help or (getattr(obj, "__doc__", None) or "").strip().split("\n")[0]
            self._entries[name] = Entry(name, obj, doc)
            return obj

        return decorate

    def get(self, name: str) -> T:
        """The component registered as ``name``; a clear error lists the known names.

        Component modules are imported on the first miss, so a name resolves whatever
        was imported before.
        """
        if name not in self._entries:
            from brittle.engine.plugins import load_components

            load_components()
        try:
            return self._entries[name].obj
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def names(self) -> list[str]:
        """Registered names, sorted (component modules are imported first)."""
        from brittle.engine.plugins import load_components

        load_components()
        return sorted(self._entries)

    def entries(self) -> Iterator[Entry[T]]:
        """Registered entries, sorted by name."""
        for name in self.names():
            yield self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)


#: Every registry brittle has, by kind; ``brittle list`` prints them all.
REGISTRIES: dict[str, Registry[object]] = {}


def registry(kind: str) -> Registry[object]:
    """The registry of ``kind``, created on first use."""
    if kind not in REGISTRIES:
        REGISTRIES[kind] = Registry(kind)
    return REGISTRIES[kind]
