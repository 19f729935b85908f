"""Tree-level checks against the gold tree, through a re-parse of the perturbed sentence.

The parser reads the perturbed sentence, and its analysis at the changed words is
compared with the *gold* tree of the original (not with its parse of the original):

- ``retag``: each changed word keeps its gold UPOS;
- ``attachment``: each arc of and to a changed word (the word's own head, and the words
  whose gold head it is) keeps its gold head, with the relation the parser gives that
  arc in the original (the parser's labels need not be UD's: spaCy's are ClearNLP's).

The parser's own errors on the original do not count against the perturbation: where
the parser already gets a changed word's tag, or an arc's head, wrong in the original,
that item is *unknown* (the evidence cannot decide it), not invalid. Nor does its guess
at a nonword (a new word no lexicon knows): it has only the word's shape and its
context to go on, so where it reads a Jabberwocky word otherwise, that says nothing
about what the sentence is; the tag and the arcs of and to a nonword are unknown here,
and its shape is judged by the form check
(:func:`~brittle.search.validity.lexical.form_check`). An attack picks exactly the
nonwords the parser misreads (its probes misread them too): judged by the parse, 27 of
the 59 kept by the ``tree`` preset on 60 GUM test sentences failed, all of them read
as valid. A check with no known item at all is unknown as a whole.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from brittle.search.validity.records import ChangedWord, Check

if TYPE_CHECKING:
    from brittle.engine.core.sentence import Sentence
    from brittle.scorers.parsers.base import Parse

__all__ = [
    "MAX_BROKEN_ARCS",
    "MAX_RETAG_ERRORS",
    "arcs_of",
    "attachment_check",
    "relation_class",
    "retag_check",
    "same_relation",
]

#: Changed words the parser may re-tag away from their gold UPOS (where it tags the
#: original right) before the tree counts as changed: none. Of the 10 changed words
#: re-tagged on the 222 pairs read for docs/validity.md, 8 were real changes of
#: analysis ("no proof" -> "no clear", "a nice" -> "a dised search engine", read as a
#: participle) and 2 were the parser's ("then hide" -> "then neighbor" tagged NOUN).
MAX_RETAG_ERRORS = 0
#: Arcs of and to the changed words the parser may attach or label differently (where
#: it gets them right in the original) before the tree counts as changed: none, by the
#: same reading.
MAX_BROKEN_ARCS = 0


#: Common noun and name: in capitals, the parser tells them apart by case alone.
_NOMINAL = frozenset({"NOUN", "PROPN"})


def _capitals(word: str) -> bool:
    """Whether ``word`` is written in capitals (two letters or more)."""
    letters = [c for c in word if c.isalpha()]
    return len(letters) > 1 and all(c.isupper() for c in letters)


def retag_check(
    original: Sentence,
    changed: Sequence[ChangedWord],
    parse_original: Parse,
    parse_perturbed: Parse,
    nonwords: Collection[int] = (),
) -> Check:
    """The parser's UPOS of each changed word against its gold UPOS.

    Value: ``(kept, broken, unknown)`` changed words; unknown where the parser already
    mis-tags the original word, at the ``nonwords`` (0-based positions), and where a
    word in capitals turns from a noun to a name or back ("KEEP UP THE GOOD WORK" ->
    "NIGHTINGALE" tagged PROPN: case is all the parser has to tell them apart, and
    capitals take it away).
    """
    gold = original.upos
    kept = broken = unknown = 0
    bad: list[str] = []
    for w in changed:
        i = w.index
        if parse_original.upos[i] != gold[i] or i in nonwords:
            unknown += 1
        elif _capitals(w.new) and {gold[i], parse_perturbed.upos[i]} == _NOMINAL:
            unknown += 1  # in capitals, the parser takes a noun for a name and back
        elif parse_perturbed.upos[i] == gold[i]:
            kept += 1
        else:
            broken += 1
            bad.append(f"{w.new} {gold[i]}->{parse_perturbed.upos[i]}")
    return Check(
        name="retag",
        level="tree",
        measured="changed words tagged with their gold UPOS by the parser: kept, broken, "
        "unknown (parser wrong on the original)",
        value=(kept, broken, unknown),
        threshold=MAX_RETAG_ERRORS,
        passed=None if kept + broken == 0 else broken <= MAX_RETAG_ERRORS,
        failed=None if broken <= MAX_RETAG_ERRORS else f"re-tagged: {'; '.join(bad)}",
    )


#: ClearNLP relations (spaCy's English label set) by the UD relation each stands for;
#: labels whose UD counterpart has another head (``prep``, ``pobj``, ``attr``) are not
#: mapped and compare as they are. UD labels map to themselves (subtype dropped).
_CLEAR_TO_UD: dict[str, str] = {
    "nsubjpass": "nsubj",
    "csubjpass": "csubj",
    "dobj": "obj",
    "dative": "iobj",
    "auxpass": "aux",
    "neg": "advmod",
    "npadvmod": "obl",
    "poss": "nmod",
    "prt": "compound",
    "relcl": "acl",
    "acomp": "xcomp",
    "oprd": "xcomp",
    "quantmod": "advmod",
    "predet": "det",
    "preconj": "cc",
    "ROOT": "root",
}


#: Relations of a prenominal modifier that UD tells apart by the modifier's word class
#: alone (an adjective is ``amod``, a noun ``compound``): with the same head, the parser's
#: switch between them is its guess at a word class, which :func:`retag_check` judges at
#: the changed words (an unchanged word keeps its gold class). On the attack outputs read
#: for docs/validity.md the switch came only from the parser ("Respondent race" ->
#: "Respondent hypothermia": *Respondent* amod -> compound; "analytical" -> "bawdy"
#: sample, tagged ADJ yet labelled compound).
_NOMINAL_MODIFIERS = frozenset({"amod", "compound"})


def same_relation(before: str, after: str) -> bool:
    """Whether two parser labels of one arc (same head) give it the same relation: the
    same UD relation (:func:`relation_class`), or two prenominal modifier relations that
    differ only by the modifier's word class (:data:`_NOMINAL_MODIFIERS`)."""
    a, b = relation_class(before), relation_class(after)
    return a == b or (a in _NOMINAL_MODIFIERS and b in _NOMINAL_MODIFIERS)


def relation_class(label: str) -> str:
    """The UD relation (no subtype) a parser label stands for: ``dobj`` -> ``obj``,
    ``relcl`` -> ``acl``, ``nsubj:pass`` -> ``nsubj``; unmapped labels as they are."""
    return _CLEAR_TO_UD.get(label, label.split(":")[0])


def arcs_of(original: Sentence, indices: Sequence[int]) -> list[int]:
    """0-based dependents of the gold arcs of and to the words at ``indices``: each word
    itself (its arc to its head) and every word whose gold head it is, ascending."""
    heads = original.heads
    wanted = set(indices)
    ids = {i + 1 for i in indices}
    wanted.update(j for j in range(len(heads)) if int(heads[j]) in ids)
    return sorted(wanted)


def attachment_check(
    original: Sentence,
    changed: Sequence[ChangedWord],
    parse_original: Parse,
    parse_perturbed: Parse,
    nonwords: Collection[int] = (),
) -> Check:
    """The parser's heads and relations on the arcs of and to the changed words against
    the gold heads.

    An arc is known when the parser attaches it to its gold head in the original; it is
    kept when the parser of the perturbed sentence gives it the same head and the same
    relation as in the original. An arc of or to one of the ``nonwords`` (0-based
    positions) is unknown. Value: ``(kept, broken, unknown)`` arcs.
    """
    gold = original.heads
    forms = original.forms
    deprels = original.deprels
    kept = broken = unknown = 0
    bad: list[str] = []
    for j in arcs_of(original, [w.index for w in changed]):
        head = int(gold[j])
        if j in nonwords or head - 1 in nonwords:
            unknown += 1
            continue
        if int(parse_original.heads[j]) != head:
            unknown += 1
            continue
        before = relation_class(parse_original.deprels[j])
        if before != parse_original.deprels[j] and before != relation_class(deprels[j]):
            unknown += 1  # a mapped label that is not the gold relation: parser error
            continue
        same_head = int(parse_perturbed.heads[j]) == head
        same_label = same_relation(parse_original.deprels[j], parse_perturbed.deprels[j])
        if same_head and same_label:
            kept += 1
        else:
            broken += 1
            where = "root" if head == 0 else forms[head - 1]
            got = int(parse_perturbed.heads[j])
            now = "root" if got == 0 else forms[got - 1]
            bad.append(
                f"{forms[j]} {parse_original.deprels[j]}->{where} became "
                f"{parse_perturbed.deprels[j]}->{now}"
            )
    return Check(
        name="attachment",
        level="tree",
        measured="gold arcs of and to the changed words re-parsed with the same head and "
        "relation: kept, broken, unknown (parser wrong on the original)",
        value=(kept, broken, unknown),
        threshold=MAX_BROKEN_ARCS,
        passed=None if kept + broken == 0 else broken <= MAX_BROKEN_ARCS,
        failed=None if broken <= MAX_BROKEN_ARCS else f"arcs moved: {'; '.join(bad)}",
    )
