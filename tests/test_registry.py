"""The registries: a component's name is its registration, and every kind has a contract."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from brittle.engine.core.sentence import Sentence
from brittle.scorers.parsers import GoldParser, Parser, make_parser
from brittle.scorers.parsers.base import PARSERS, ParserFactory
from brittle.scorers.probe_tasks import PROBE_TASKS
from brittle.scorers.representations import REPRESENTATIONS
from brittle.search.constraints.base import CONSTRAINTS
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.table import SubstitutionTable


@dataclass(frozen=True, kw_only=True)
class Nameless(SubstitutionGenerator):
    """A test generator that states no ``method``: its registration names it."""

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        return [
            SubstitutionTable.from_mapping(s.sent_id, self.method, len(s), {}) for s in sentences
        ]


def test_a_class_registered_without_its_name_gets_the_registered_name() -> None:
    assert Nameless.method == ""
    GENERATORS.register("test-nameless")(Nameless)
    try:
        assert Nameless.method == "test-nameless"
        assert Nameless().method == "test-nameless"
        # Registering the same class under the same name again is harmless.
        GENERATORS.register("test-nameless")(Nameless)
    finally:
        GENERATORS.unregister("test-nameless")
    assert "method" not in Nameless.__dict__  # unregistering takes the name out again
    assert Nameless.method == ""


def test_a_subclass_is_named_by_its_own_registration_not_its_parents() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Child(Nameless):
        pass

    GENERATORS.register("test-parent")(Nameless)
    GENERATORS.register("test-child")(Child)
    try:
        assert (Nameless.method, Child.method) == ("test-parent", "test-child")
    finally:
        GENERATORS.unregister("test-child")
        GENERATORS.unregister("test-parent")


def test_a_class_stating_another_name_is_refused() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Misnamed(Nameless):
        method = "something-else"

    with pytest.raises(ValueError, match=r"'test-misnamed'.*Misnamed.method is 'something-else'"):
        GENERATORS.register("test-misnamed")(Misnamed)
    assert "test-misnamed" not in GENERATORS
    assert Misnamed.method == "something-else"


def test_a_class_may_repeat_its_registered_name() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Repeats(Nameless):
        method = "test-repeats"

    GENERATORS.register("test-repeats")(Repeats)
    try:
        assert GENERATORS.get("test-repeats") is Repeats
    finally:
        GENERATORS.unregister("test-repeats")
    assert Repeats.method == "test-repeats"  # its own statement stays


def test_every_built_in_component_carries_its_registered_name() -> None:
    for name in GENERATORS.names():
        assert GENERATORS.get(name).method == name
    for name in CONSTRAINTS.names():
        assert CONSTRAINTS.get(name).name == name
    for registry in (GENERATORS, CONSTRAINTS, PROBE_TASKS, REPRESENTATIONS):
        assert registry.name_attr is not None
        for entry in registry.entries():
            assert getattr(entry.obj, registry.name_attr) == entry.name


def test_parsers_are_factories_that_build_parsers() -> None:
    for name in PARSERS.names():
        assert isinstance(PARSERS.get(name), ParserFactory)
    assert isinstance(make_parser("gold"), Parser)


@pytest.mark.parametrize(
    "thing",
    [GoldParser(), "gold", 3, dict],
    ids=["a-parser-not-a-factory", "a-string", "a-number", "a-class-of-non-factories"],
)
def test_registering_a_non_parser_factory_is_refused(thing: object) -> None:
    with pytest.raises(TypeError, match="does not satisfy ParserFactory"):
        PARSERS.register("test-not-a-parser")(thing)
    assert "test-not-a-parser" not in PARSERS


def test_a_new_parser_factory_registers() -> None:
    def test_parser() -> GoldParser:
        return GoldParser()

    PARSERS.register("test-gold", help="test parser")(test_parser)
    try:
        assert isinstance(make_parser("test-gold"), GoldParser)
    finally:
        PARSERS.unregister("test-gold")
