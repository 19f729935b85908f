"""Which word positions a substitution generator may change.

A small, configurable, immutable rule set applied before any candidate is generated
(cheap constraints prune positions first). By default only content words (NOUN, VERB,
ADJ, ADV) written in letters are eligible; proper nouns, punctuation, determiners,
pronouns and auxiliaries are excluded even when ``include_upos`` is widened to every
tag; words inside multiword tokens (``don't`` = ``do`` + ``n't``) are never eligible,
because a substitution there cannot be written back as CoNLL-U. Nor, by default, are the
words of fixed expressions (UD ``fixed`` and ``goeswith`` with their heads: *as well*,
*of course*, *at least*): their meaning is the expression's, so replacing one word by a
synonym of the word alone (*as well* -> *equally easily*) breaks it.

Two more rules are available for generators that mean to keep the meaning (coPOS turns
them on): the closed list :data:`FUNCTION_ADVERBS` of focus, degree, aspect and
discourse adverbs (*just*, *only*, *still*, *pretty*, ...), and the words of UD ``flat``
expressions (*Part I*, *Paragraph 13*).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from brittle.engine.core.sentence import Sentence

__all__ = [
    "CONTENT_UPOS",
    "EXCLUDED_UPOS",
    "FUNCTION_ADVERBS",
    "Eligibility",
    "fixed_expression_positions",
    "hyphen_part_positions",
    "related_positions",
    "title_positions",
]

#: UPOS tags eligible by default.
CONTENT_UPOS: frozenset[str] = frozenset({"NOUN", "VERB", "ADJ", "ADV"})
#: UPOS tags excluded by default, whatever ``include_upos`` says.
EXCLUDED_UPOS: frozenset[str] = frozenset({"PROPN", "PUNCT", "DET", "PRON", "AUX"})

#: Adverbs (UPOS ``ADV``, lowercase forms) whose role is grammatical rather than lexical:
#: focus particles (*just*, *only*, *even*), degree modifiers (*pretty*, *so*, *too*),
#: aspect and time deictics (*still*, *already*, *now*) and discourse markers and
#: particles (*well*, *right*, *back*). Their reading depends on the construction, not
#: on a WordNet sense: WordNet gives *just* 6 senses with *merely*, *only*, *hardly* and
#: *simply* among them, and the sense choice picks among glosses that do not describe
#: the use ("is anybody else just a little nostalgic" became "only a little", "he's
#: worried that Berkshire just can't grow" became "merely can't grow", "are still
#: reluctant" "are nonetheless reluctant", "pretty rational" "moderately rational").
#: No resource marks these words (WordNet files them as ordinary adverbs, UD tags them
#: ``ADV``), so the list is written by hand: the closed focusing, intensifying,
#: aspectual and deictic adverbs of English grammars. Content adverbs with one stable
#: meaning (*almost*, *actually*, *probably*, *mostly*, *soon*) are not in it, nor are
#: linking adverbs with plain synonyms (*however*, *thus*, *anyway*).
FUNCTION_ADVERBS: frozenset[str] = frozenset(
    {
        # focus: restrict or add to what they modify
        "just", "only", "even", "also", "merely", "simply", "alone", "either", "neither",
        "too",
        # degree: scale an adjective, adverb or quantity
        "so", "very", "pretty", "quite", "rather", "fairly", "enough", "much", "far",
        "way", "more", "most", "less", "least", "real", "somewhat", "kinda", "hardly",
        "barely", "scarcely",
        # aspect and time deixis
        "still", "yet", "already", "again", "ever", "never", "always", "now", "then",
        "once", "ago",
        # discourse markers, place deixis and particles
        "well", "right", "though", "there", "here", "back", "up", "down", "out", "off",
        "away", "on", "over", "around", "like", "else",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Eligibility:
    """Rules deciding which positions may be substituted.

    Attributes:
        include_upos: eligible UPOS tags; ``None`` means every tag not excluded.
        exclude_upos: UPOS tags never eligible (applied after ``include_upos``).
        letters_only: require the FORM to consist of letters, optionally joined by single
            hyphens or apostrophes (``well-known``); rules out numbers, symbols, URLs.
        min_length: minimum FORM length in characters.
        exclude_forms: lowercase forms never eligible (e.g. ``{"be", "have"}``).
        fixed_expressions: let the words of fixed expressions (``fixed``/``goeswith``
            dependents and their heads) be eligible.
        hyphen_parts: let the parts of hyphenated words be eligible: words written
            against a hyphen token with no space between (EWT splits *opt-out* into
            ``opt - out``), where a synonym of the part alone breaks the word
            (*prefer-out*).
        compounds: let the words of compounds (``compound`` dependents and their heads:
            *search engine*) be eligible; a synonym of one of them (*hunting engine*)
            rarely names the same thing.
        function_adverbs: let the adverbs of :data:`FUNCTION_ADVERBS` (UPOS ``ADV``)
            be eligible.
        flat_expressions: let the words of UD ``flat`` expressions (``flat``
            dependents and their heads: *Parts I and II*, *Paragraph 13*) be eligible;
            the noun there is part of a name (*Components I and II*).
        title_words: let capitalised words inside the sentence be eligible when a
            capitalised word stands beside them (*a Working Out Loud principle*): a
            run of capitals there is a name or a title, which a synonym of one of its
            words does not keep (*Working Out Loudly*). The sentence's first word is
            capitalised for its place and counts for neither.
    """

    include_upos: frozenset[str] | None = CONTENT_UPOS
    exclude_upos: frozenset[str] = EXCLUDED_UPOS
    letters_only: bool = True
    min_length: int = 1
    exclude_forms: frozenset[str] = frozenset()
    fixed_expressions: bool = False
    hyphen_parts: bool = True
    compounds: bool = True
    function_adverbs: bool = True
    flat_expressions: bool = True
    title_words: bool = True

    def allows(self, upos: str, form: str) -> bool:
        """Whether a word with this UPOS and FORM is eligible (multiword tokens aside)."""
        if upos in self.exclude_upos:
            return False
        if not self.function_adverbs and upos == "ADV" and form.lower() in FUNCTION_ADVERBS:
            return False
        if self.include_upos is not None and upos not in self.include_upos:
            return False
        if len(form) < self.min_length or form.lower() in self.exclude_forms:
            return False
        return not self.letters_only or is_lettered(form)

    def positions(self, sentence: Sentence) -> tuple[int, ...]:
        """Eligible 0-based positions of one sentence, ascending."""
        blocked = sentence.multiword_positions
        if not self.fixed_expressions:
            blocked = blocked | fixed_expression_positions(sentence)
        if not self.hyphen_parts:
            blocked = blocked | hyphen_part_positions(sentence)
        if not self.compounds:
            blocked = blocked | related_positions(sentence, _COMPOUND_RELATIONS)
        if not self.flat_expressions:
            blocked = blocked | related_positions(sentence, _FLAT_RELATIONS)
        if not self.title_words:
            blocked = blocked | title_positions(sentence)
        return tuple(
            i
            for i, (upos, form) in enumerate(zip(sentence.upos, sentence.forms, strict=True))
            if i not in blocked and self.allows(upos, form)
        )

    def positions_batch(self, sentences: Sequence[Sentence]) -> list[tuple[int, ...]]:
        """Eligible positions of every sentence of a batch."""
        return [self.positions(s) for s in sentences]


#: Relations whose dependent and head together spell one expression.
_FIXED_RELATIONS = frozenset({"fixed", "goeswith"})
#: Relations of names and other headless expressions (``flat:foreign`` included).
_FLAT_RELATIONS = frozenset({"flat"})
#: Relations of compounds (``compound:prt`` and other subtypes included).
_COMPOUND_RELATIONS = frozenset({"compound"})
#: Tokens that join the parts of a hyphenated word.
_HYPHENS = frozenset({"-", "\u2010", "\u2011", "\u2013"})


def related_positions(sentence: Sentence, relations: frozenset[str]) -> frozenset[int]:
    """0-based positions of every word attached by one of ``relations`` (subtypes
    included) and of the word it attaches to."""
    out: set[int] = set()
    for i, word in enumerate(sentence.words):
        if word.deprel.split(":", 1)[0] in relations:
            out.add(i)
            if word.head.isdigit() and word.head != "0":
                out.add(int(word.head) - 1)
    return frozenset(out)


def fixed_expression_positions(sentence: Sentence) -> frozenset[int]:
    """0-based positions of the words of fixed expressions: every word attached by
    ``fixed`` or ``goeswith`` (subtypes included) and the word it attaches to."""
    return related_positions(sentence, _FIXED_RELATIONS)


def hyphen_part_positions(sentence: Sentence) -> frozenset[int]:
    """0-based positions of the words written against a hyphen token with no space in
    between (``SpaceAfter=No``): the parts of a hyphenated word split into tokens."""
    words = sentence.words
    glued = [w.no_space_after for w in words]
    out: set[int] = set()
    for i, word in enumerate(words):
        if word.form not in _HYPHENS:
            continue
        if i > 0 and glued[i - 1]:
            out.add(i - 1)
        if i + 1 < len(words) and glued[i]:
            out.add(i + 1)
    return frozenset(out)


def title_positions(sentence: Sentence) -> frozenset[int]:
    """0-based positions of the capitalised words (first letter upper case, not all
    upper case) after the sentence's first word that have a capitalised neighbour after
    the first word: the words of a title or a name written inside the sentence."""
    forms = sentence.forms
    title = [i > 0 and f[:1].isupper() and not f.isupper() for i, f in enumerate(forms)]
    return frozenset(
        i
        for i, t in enumerate(title)
        if t and ((i > 0 and title[i - 1]) or (i + 1 < len(title) and title[i + 1]))
    )


def is_lettered(text: str) -> bool:
    """Letters, possibly joined by single ``-`` or ``'`` (``well-known``, ``o'clock``)."""
    if not text or not text[0].isalpha() or not text[-1].isalpha():
        return False
    prev_joint = False
    for ch in text:
        if ch.isalpha():
            prev_joint = False
        elif ch in "-'":
            if prev_joint:
                return False
            prev_joint = True
        else:
            return False
    return True
