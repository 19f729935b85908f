"""Perturbations as small immutable deltas, and the pure functions that apply them.

A :class:`Perturbation` either substitutes words (``positions`` + ``replacements``) or
reorders them (``order``). Applying one never mutates the sentence: it returns a new
:class:`~brittle.engine.core.sentence.Sentence` whose gold columns are kept, whose changed
tokens carry ``OrigForm=...|Perturbation=<method>`` in MISC, whose ``# text`` is
updated and which gains a ``# perturbation = ...`` comment.

**Article repair.** When a substituted word directly follows the indefinite article
``a``/``an`` (UPOS ``DET`` or unannotated, any case, not itself substituted, not inside
a multiword token) and the new word takes the other article (``a nice`` -> ``an
overnice``, ``an hour`` -> ``a day``; see :mod:`brittle.engine.core.articles`), the
article is changed too and marked like a substituted word. The repair is part of the
substitution: ``positions`` stay the substituted words, :attr:`Perturbation.size` does
not count it, and :func:`counted_forms` gives the FORMs a word budget compares
(Hamming distance), with the repairs undone. ``# perturbation`` lists repairs after
the edits: ``copos 2:nice->overnice (article 1:a->an)``.

**MISC of a changed word.** Keys that describe the old FORM or LEMMA are removed,
because they would be wrong for the new word: :data:`FORM_MISC_KEYS` (``MSeg`` and
``MGloss``, the morph segmentation and its glosses; ``Gloss``/``LGloss``; ``Translit``
and ``LTranslit``; ``CorrectForm``, the correct spelling of a misspelt old form;
``Lang`` and ``LId``, the old word's language and lemma identifier). Every other key
stays: layout (``SpaceAfter``, ``SpacesAfter``, ``SpacesBefore``, ``CorrectSpaceAfter``)
is unchanged by a substitution, and the annotations of the English treebanks
(``Entity``, ``Bridge``, ``SplitAnte``, ``Discourse``, ``PDTB``, ``XML``, ``Cxn``,
``CxnElt``, ``Negation``, ``Promoted``, ``FlatType``, ``CorrectNumber``, ...) describe
the word's place in the sentence, which substitutions keep. FEATS are gold and never
edited, so a ``Typo=Yes`` or ``Foreign=Yes`` there keeps describing the original word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from brittle.engine.core.articles import agreeing_article
from brittle.engine.core.sentence import Sentence, Token

__all__ = [
    "FORM_MISC_KEYS",
    "Perturbation",
    "apply_perturbation",
    "article_repairs",
    "counted_forms",
    "describe",
]

#: MISC keys removed from a word whose FORM changes (they describe the old form).
FORM_MISC_KEYS: tuple[str, ...] = (
    "MSeg",
    "MGloss",
    "Gloss",
    "LGloss",
    "Translit",
    "LTranslit",
    "CorrectForm",
    "Lang",
    "LId",
)
#: UPOS values an indefinite article may carry to be repaired (``_``: unannotated).
_ARTICLE_UPOS = frozenset({"DET", "_"})


@dataclass(frozen=True, slots=True)
class Perturbation:
    """A hashable change to one sentence.

    Attributes:
        sentence_id: the sentence it applies to.
        method: the generator that made it (``copos``, ``shuffle``, ...).
        positions: 0-based word indices that are substituted, ascending.
        replacements: the new FORM at each position.
        lemmas: the new LEMMA at each position (``"_"`` when unknown); empty means all
            unknown.
        order: for reorderings, ``order[j]`` is the 0-based original index of the word
            now at position ``j`` (a permutation of ``range(n)``); ``None`` otherwise.
    """

    sentence_id: str
    method: str
    positions: tuple[int, ...] = ()
    replacements: tuple[str, ...] = ()
    lemmas: tuple[str, ...] = ()
    order: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if len(self.positions) != len(self.replacements):
            raise ValueError("positions and replacements differ in length")
        if self.lemmas and len(self.lemmas) != len(self.positions):
            raise ValueError("lemmas and positions differ in length")
        if list(self.positions) != sorted(set(self.positions)):
            raise ValueError("positions must be strictly ascending")
        if self.order is not None and sorted(self.order) != list(range(len(self.order))):
            raise ValueError("order is not a permutation of 0..n-1")

    @property
    def size(self) -> int:
        """Number of words changed (substitutions) or moved (reorderings)."""
        if self.order is not None:
            return sum(1 for j, i in enumerate(self.order) if i != j)
        return len(self.positions)

    @property
    def is_identity(self) -> bool:
        """Whether it changes nothing."""
        return self.size == 0


def describe(p: Perturbation, original: Sentence) -> str:
    """One-line description for the ``# perturbation`` comment (1-based positions;
    article repairs in parentheses after the edits)."""
    if p.order is not None:
        return f"{p.method} order={','.join(str(i + 1) for i in p.order)}"
    forms = original.forms
    edits = " ".join(
        f"{i + 1}:{forms[i]}->{new}" for i, new in zip(p.positions, p.replacements, strict=True)
    )
    repairs = " ".join(f"{j + 1}:{forms[j]}->{new}" for j, new in article_repairs(original, p))
    line = f"{p.method} {edits}".rstrip()
    return f"{line} (article {repairs})" if repairs else line


def article_repairs(sentence: Sentence, p: Perturbation) -> tuple[tuple[int, str], ...]:
    """The articles applying ``p`` changes: ``(0-based position, new form)``, ascending.

    See the module docstring; empty for reorderings.
    """
    if p.order is not None or not p.positions:
        return ()
    words = sentence.words
    blocked = sentence.multiword_positions
    substituted = set(p.positions)
    out: list[tuple[int, str]] = []
    for i, form in zip(p.positions, p.replacements, strict=True):
        j = i - 1
        if j < 0 or j in substituted or j in blocked or i in blocked:
            continue
        article = words[j]
        if article.upos not in _ARTICLE_UPOS or article.no_space_after:
            continue
        new = agreeing_article(article.form, form)
        if new is not None:
            out.append((j, new))
    return tuple(out)


def counted_forms(original: Sentence, p: Perturbation, applied: Sentence) -> tuple[str, ...]:
    """FORMs of ``applied`` (``p`` applied to ``original``) with article repairs undone.

    Their Hamming distance to ``original.forms`` counts the words ``p`` itself changes,
    which is what a word budget limits; for reorderings it is ``applied.forms``.
    """
    repairs = article_repairs(original, p)
    if not repairs:
        return applied.forms
    forms = list(applied.forms)
    for j, _new in repairs:
        forms[j] = original.forms[j]
    return tuple(forms)


def apply_perturbation(sentence: Sentence, p: Perturbation) -> Sentence:
    """The perturbed sentence (a new record; ``sentence`` is unchanged).

    Substitutions keep every column but FORM (and LEMMA: the given lemma or ``_``), and
    MISC as the module docstring says; a preceding ``a``/``an`` is repaired.
    Reorderings move whole token lines and renumber HEAD and DEPS so the gold tree stays
    attached to the same words. Raises ``ValueError`` for a perturbation of another
    sentence, an out-of-range position, or a substitution inside a multiword token.
    """
    if p.sentence_id != sentence.sent_id:
        raise ValueError(f"perturbation is for {p.sentence_id!r}, not {sentence.sent_id!r}")
    if p.is_identity:
        return sentence
    if p.order is not None:
        out = _reorder(sentence, p)
        return out.with_metadata_items(_notes(out, p, sentence))
    return _substitute(sentence, p)


def _notes(perturbed: Sentence, p: Perturbation, original: Sentence) -> dict[str, str]:
    """The comments every perturbed sentence carries: its new text and what changed."""
    return {"text": perturbed.surface_text(), "perturbation": describe(p, original)}


def _substitute(sentence: Sentence, p: Perturbation) -> Sentence:
    n = len(sentence)
    blocked = sentence.multiword_positions
    words = sentence.words
    new: dict[int, Token] = {}
    for k, (i, form) in enumerate(zip(p.positions, p.replacements, strict=True)):
        if not 0 <= i < n:
            raise ValueError(f"position {i} out of range for a {n}-word sentence")
        if i in blocked:
            raise ValueError(f"word {i + 1} is part of a multiword token")
        if not form or any(ch.isspace() for ch in form):
            raise ValueError(f"replacement {form!r} is empty or contains whitespace")
        lemma = p.lemmas[k] if p.lemmas else "_"
        new[i] = _changed(words[i], form, lemma or "_", p.method)
    for j, article in article_repairs(sentence, p):
        new[j] = _changed(words[j], article, words[j].lemma, p.method)
    out = sentence.with_words(new)
    return out.with_metadata_items(_notes(out, p, sentence))


_STALE: dict[str, None] = dict.fromkeys(FORM_MISC_KEYS)


def _changed(old: Token, form: str, lemma: str, method: str) -> Token:
    """``old`` with a new FORM and LEMMA, marked as changed: stale MISC keys dropped,
    its origin added."""
    return replace(old, form=form, lemma=lemma).with_misc(
        **_STALE, OrigForm=old.form, Perturbation=method
    )


_DEP_HEAD = re.compile(r"^(\d+)(:.*)$")


def _reorder(sentence: Sentence, p: Perturbation) -> Sentence:
    assert p.order is not None
    n = len(sentence)
    if len(p.order) != n:
        raise ValueError(f"order has {len(p.order)} items for a {n}-word sentence")
    has_empty = any(t.kind == "empty" for t in sentence.rows)
    new_index = [0] * n
    for j, i in enumerate(p.order):
        new_index[i] = j
    words = sentence.words
    rows: list[Token] = []
    for j, i in enumerate(p.order):
        old = words[i]
        head = int(old.head)
        new_head = 0 if head == 0 else new_index[head - 1] + 1
        deps = "_" if has_empty else _renumber_deps(old.deps, new_index)
        tok = replace(old, id=str(j + 1), head=str(new_head), deps=deps)
        # Surface spacing no longer holds once words move: every word is followed by a space.
        tok = tok.with_misc(SpaceAfter=None)
        if i != j:
            tok = tok.with_misc(OrigPosition=str(i + 1), Perturbation=p.method)
        rows.append(tok)
    reordered = replace(sentence, rows=tuple(rows))
    dropped = _dropped_by_reordering(sentence, has_empty)
    return reordered.with_metadata(REORDER_NOTE, dropped) if dropped else reordered


#: Comment key that says what a reordering could not keep.
REORDER_NOTE = "brittle_reorder_dropped"


def _dropped_by_reordering(sentence: Sentence, has_empty: bool) -> str:
    """What a word reordering drops, as one phrase (empty when nothing).

    Multiword-token lines (``don't`` over ``do`` + ``n't``) and empty nodes describe
    the original word order and cannot follow the words; DEPS is cleared when empty
    nodes are dropped (it may point at them) and renumbered otherwise.
    """
    ranges = sum(1 for t in sentence.rows if t.kind == "multiword")
    empty = sum(1 for t in sentence.rows if t.kind == "empty")
    parts = []
    if ranges:
        parts.append(f"{ranges} multiword token line(s)")
    if empty:
        parts.append(f"{empty} empty node(s)")
    if has_empty and any(t.deps != "_" for t in sentence.words):
        parts.append("DEPS")
    return ", ".join(parts)


def _renumber_deps(deps: str, new_index: list[int]) -> str:
    if deps == "_":
        return deps
    items = []
    for item in deps.split("|"):
        m = _DEP_HEAD.match(item)
        if m is None:
            items.append(item)
            continue
        head = int(m.group(1))
        new_head = 0 if head == 0 else new_index[head - 1] + 1
        items.append(f"{new_head}{m.group(2)}")

    # Enhanced dependencies are sorted by head in valid CoNLL-U.
    def key(item: str) -> tuple[int, str]:
        head, _, rel = item.partition(":")
        return (int(head) if head.isdigit() else 0, rel)

    return "|".join(sorted(items, key=key))
