"""Typed, named component registries.

Every component brittle resolves by name (generators, constraints, strategies, parsers,
probe tasks, representation backends) lives in a :class:`Registry` of its kind. The
layer that defines a kind creates its registry, with the contract every entry must meet
and the package its built-in components live in::

    GENERATORS: Registry[type[Generator]] = Registry(
        "generators",
        contract=Generator,
        packages=("brittle.search.generators",),
        name_attr="method",
    )

    @GENERATORS.register("copos", help="WordNet synonyms with the same POS")
    class CoPOS: ...

    GENERATORS.get("copos")  # type[Generator], no cast needed
    CoPOS.method  # "copos": the registered name is the component's name

A component's name is stated once, in its registration. Where the components of a kind
also carry their name as a class variable (``name_attr``: a generator's ``method``, a
constraint's ``name``), registering a class sets that variable to the registered name;
a class that states a different name of its own is refused where it is defined.

Components are found without a list of them anywhere: the first look-up of a name that
is not registered yet imports every module of the registries' packages and every
third-party module announced in the ``brittle.components`` entry-point group (see
:func:`load_components`). A new component is therefore one new module.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Generic, TypeVar, cast

from brittle.engine.core.errors import ConfigError

T = TypeVar("T", covariant=True)
S = TypeVar("S")

#: Entry-point group through which other packages add components.
ENTRY_POINT_GROUP = "brittle.components"


@dataclass(frozen=True, slots=True)
class Entry(Generic[T]):
    """One registered component: its name, the object and a one-line help text."""

    name: str
    obj: T
    help: str


class Registry(Generic[T]):
    """A mapping from stable names to components of one kind.

    Args:
        kind: the kind's plural name (``generators``), used in messages and by
            ``brittle list``.
        contract: a class or runtime-checkable protocol that every registered object
            (or, for classes, every instance's class) must satisfy; checked at
            registration so a wrong component fails where it is defined.
        packages: packages (or single modules) that hold the built-in components;
            all their modules are imported before a name is declared unknown.
        item: what one component is called in messages (default: ``kind`` without
            its final "s").
        name_attr: the class variable in which a registered class carries its name
            (``method``, ``name``); registration sets it to the registered name, and
            refuses a class whose own value differs. ``None``: the kind has none.
    """

    def __init__(
        self,
        kind: str,
        *,
        contract: type | None = None,
        packages: tuple[str, ...] = (),
        item: str | None = None,
        name_attr: str | None = None,
    ) -> None:
        if kind in REGISTRIES:
            raise ValueError(f"a registry of {kind} already exists")
        self.kind = kind
        self.contract = contract
        self.packages = packages
        self.item = item or kind.removesuffix("s")
        self.name_attr = name_attr
        self._entries: dict[str, Entry[T]] = {}
        #: Names whose class had its ``name_attr`` set by :meth:`register`.
        self._named: set[str] = set()
        REGISTRIES[kind] = self  # type-erased view for listings

    def register(self, name: str, *, help: str = "") -> Callable[[S], S]:
        """Decorator that registers its object under ``name``; a name can be taken once.

        ``help`` defaults to the first line of the object's docstring. A class of a kind
        with a ``name_attr`` gets ``name`` there (see :meth:`_bind_name`).

        Raises:
            ValueError: ``name`` is taken by another object, or the class states
                another name.
            TypeError: the object does not satisfy the registry's contract.
        """

        def decorate(obj: S) -> S:
            if name in self._entries and self._entries[name].obj is not obj:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._check_contract(name, obj)
            self._bind_name(name, obj)
            doc = help or (obj.__doc__ or "").strip().split("\n")[0]
            self._entries[name] = Entry(name, cast("T", obj), doc)
            return obj

        return decorate

    def _check_contract(self, name: str, obj: object) -> None:
        contract = self.contract
        if contract is None:
            return
        if isinstance(obj, type):
            try:
                ok = issubclass(obj, contract)
            except TypeError:  # a protocol with data members cannot judge a class
                ok = True
        else:
            ok = isinstance(obj, contract)
        if not ok:
            raise TypeError(f"{self.kind} {name!r}: {obj!r} does not satisfy {contract.__name__}")

    def _bind_name(self, name: str, obj: object) -> None:
        """Make ``name`` the class's ``name_attr``: set it where the class leaves it unset
        or empty (an inherited value is the parent's name, not this class's), refuse a
        class whose own value is another name."""
        attr = self.name_attr
        if attr is None or not isinstance(obj, type):
            return
        own = obj.__dict__.get(attr, "")
        if own == "":
            setattr(obj, attr, name)
            self._named.add(name)
        elif own != name:
            raise ValueError(
                f"{self.kind} {name!r}: {obj.__qualname__}.{attr} is {own!r}; a {self.item} "
                f"is named by its registration, so leave {attr} unset (or equal to {name!r})"
            )

    def get(self, name: str) -> T:
        """The component registered as ``name``.

        Raises:
            ConfigError: the name is unknown (the message lists the known names).
        """
        if name not in self._entries:
            load_components()
        try:
            return self._entries[name].obj
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise ConfigError(f"unknown {self.item} {name!r} (known: {known})") from None

    def entry(self, name: str) -> Entry[T]:
        """The entry (name, object, help) of ``name``; :class:`ConfigError` if unknown."""
        self.get(name)
        return self._entries[name]

    def names(self) -> list[str]:
        """Every registered name, sorted (component modules are imported first)."""
        load_components()
        return sorted(self._entries)

    def entries(self) -> Iterator[Entry[T]]:
        """Every entry, sorted by name."""
        for name in self.names():
            yield self._entries[name]

    def unregister(self, name: str) -> None:
        """Forget ``name`` (tests that register temporary components clean up with it).

        A name that registration wrote into the class is taken out again.
        """
        entry = self._entries.pop(name, None)
        if name in self._named:
            self._named.discard(name)
            if entry is not None and self.name_attr is not None:
                delattr(entry.obj, self.name_attr)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)


#: Every registry, by kind (filled as the layers that define them are imported).
REGISTRIES: dict[str, Registry[object]] = {}

#: Third-party entry points that failed to load: ``(entry point, error)``.
PLUGIN_ERRORS: list[tuple[str, str]] = []

_imported_packages: set[str] = set()
_entry_points_loaded = False


def load_components() -> None:
    """Import every built-in component module and every ``brittle.components`` entry
    point (each once).

    Built-in modules are those of the registries' ``packages`` (a registry created
    later has its package imported at its first look-up). An entry point names a module
    (its import registers components) or a callable (called with no arguments). A
    plug-in that fails to load is recorded in :data:`PLUGIN_ERRORS` (``brittle list``
    shows it) rather than breaking every command.
    """
    global _entry_points_loaded
    for package in sorted({p for r in list(REGISTRIES.values()) for p in r.packages}):
        if package not in _imported_packages:
            _imported_packages.add(package)
            _import_package(package)
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
            if callable(loaded):
                loaded()
        except Exception as err:  # a broken plug-in must not break brittle
            PLUGIN_ERRORS.append((f"{ep.name} = {ep.value}", f"{type(err).__name__}: {err}"))


def _import_package(package: str) -> None:
    """Import ``package`` (a package or a single module) and every module below it."""
    module = importlib.import_module(package)
    if not hasattr(module, "__path__"):
        return
    for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):
        importlib.import_module(info.name)
