"""The UPOS that a spaCy pipeline's ``attribute_ruler`` would set, without running it.

English spaCy pipelines tag with Penn tags and map them to UPOS in their
``attribute_ruler``: a list of token patterns (TAG, LOWER, DEP, IS_SPACE; equal to a
value, ``IN`` or ``NOT_IN`` a list; one token or a sequence, with the index of the token the
attributes go to) applied in order, a later match overriding an earlier one. Running
the component for every candidate the syntax constraint parses costs about a fifth of
the batched parse (the Matcher and the morphology and lemma attributes it also sets,
which a :class:`~brittle.scorers.parsers.base.Parse` does not use), so
:func:`compile_upos_rules` reads the patterns that set POS once and
:meth:`UposRules.upos` applies them in plain Python per token, with the rules indexed
by tag. A pattern it cannot read (any other key or operator) makes it return ``None``,
and the component runs as before. tests/test_parsers.py checks the result equal to the
component's on EWT test sentences and their coPOS candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = ["UposRules", "compile_upos_rules"]

#: Token attributes a compiled pattern may test.
_KEYS = frozenset({"TAG", "LOWER", "DEP", "IS_SPACE"})

#: One token test: (attribute, values, whether the values are the ones it may not take).
_Test = tuple[tuple[str, frozenset[object], bool], ...]


@dataclass(frozen=True, slots=True)
class _Rule:
    """One POS-setting pattern: its position in the list, its token tests, the token
    that gets the POS (``index``) and the POS."""

    order: int
    tests: tuple[_Test, ...]
    index: int
    pos: str


@dataclass(frozen=True)
class UposRules:
    """Compiled POS rules of an ``attribute_ruler``.

    Attributes:
        by_tag: for each Penn tag, the rules whose tested token (a one-token pattern)
            requires that tag, in list order.
        general: every other rule (no tag test, or several tokens), in list order.
    """

    by_tag: Mapping[str, tuple[_Rule, ...]]
    general: tuple[_Rule, ...]

    def upos(self, doc: Doc) -> list[str]:
        """The UPOS of every token of a tagged and parsed ``doc`` (``""`` where no rule
        applies, as the component leaves it)."""
        tokens = [
            {"TAG": t.tag_, "LOWER": t.lower_, "DEP": t.dep_, "IS_SPACE": t.is_space} for t in doc
        ]
        out = [""] * len(tokens)
        for i, token in enumerate(tokens):
            found = (-1, "")
            for rule in self.by_tag.get(str(token["TAG"]), ()):
                if rule.order > found[0] and _matches(rule.tests[0], token):
                    found = (rule.order, rule.pos)
            for rule in self.general:
                start = i - rule.index
                if rule.order <= found[0] or start < 0 or start + len(rule.tests) > len(tokens):
                    continue
                if all(_matches(test, tokens[start + k]) for k, test in enumerate(rule.tests)):
                    found = (rule.order, rule.pos)
            out[i] = found[1]
        return out


def _matches(test: _Test, token: Mapping[str, object]) -> bool:
    return all((token[key] in values) != negated for key, values, negated in test)


def compile_upos_rules(patterns: Sequence[Mapping[str, object]]) -> UposRules | None:
    """The POS rules of an ``attribute_ruler``'s ``patterns`` (its list of
    ``{"patterns": [[token, ...]], "attrs": {...}, "index": i}``), or ``None`` when one
    uses a key or operator this module does not read."""
    by_tag: dict[str, list[_Rule]] = {}
    general: list[_Rule] = []
    for order, entry in enumerate(patterns):
        attrs = entry.get("attrs")
        if not isinstance(attrs, Mapping) or "POS" not in attrs:
            continue
        alternatives = entry.get("patterns")
        index = entry.get("index", 0)
        if not isinstance(alternatives, Sequence) or not isinstance(index, int):
            return None
        for pattern in alternatives:
            if not isinstance(pattern, Sequence) or not pattern:
                return None
            tests = tuple(_test(token) for token in pattern)
            if any(t is None for t in tests):
                return None
            kept = tuple(t for t in tests if t is not None)
            rule = _Rule(order, kept, index % len(kept), str(attrs["POS"]))
            tags = _required_tags(rule)
            if tags is None:
                general.append(rule)
            else:
                for tag in tags:
                    by_tag.setdefault(str(tag), []).append(rule)
    return UposRules({tag: tuple(rules) for tag, rules in by_tag.items()}, tuple(general))


def _required_tags(rule: _Rule) -> frozenset[object] | None:
    """The tags a one-token rule requires (``None``: several tokens, or no such test)."""
    if len(rule.tests) != 1:
        return None
    for key, values, negated in rule.tests[0]:
        if key == "TAG" and not negated:
            return values
    return None


def _test(token: object) -> _Test | None:
    """One token of a pattern as a test, or ``None`` when it cannot be read."""
    if not isinstance(token, Mapping):
        return None
    out: list[tuple[str, frozenset[object], bool]] = []
    for key, value in token.items():
        if key not in _KEYS:
            return None
        if isinstance(value, Mapping):
            [(operator, values)] = value.items() if len(value) == 1 else [("", None)]
            if operator not in ("IN", "NOT_IN") or not isinstance(values, Sequence):
                return None
            out.append((key, frozenset(values), operator == "NOT_IN"))
        elif isinstance(value, str | bool):
            out.append((key, frozenset([value]), False))
        else:
            return None
    return tuple(out)
