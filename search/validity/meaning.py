"""Meaning checks (the ``meaning`` level): synonymy of the changed words, and the
similarity of the two sentences.

- :func:`synonymy_check`: each changed word is the same word (its lemma, or a spelling
  variant of it: case, hyphens, ``a``/``an``, British or American spelling:
  :func:`spelling_variant`) or shares a WordNet synset with the
  original in the slot's part of speech, among the first :data:`MAX_SENSE_RANK` senses
  of each (a synonym in a rare sense of the original is not the sense it has in
  running text: "denied" and "refused" share only deny.v.03; nor is a rare sense of the
  new word the one a reader takes it in: *role* -> *part* share only function.n.03,
  *part*'s sixth sense).
- :func:`similarity_check`: the cosine of the two sentences' MiniLM embeddings is at
  least :data:`MIN_SIMILARITY`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from brittle.search.generators.lexicon import WORDNET_POS
from brittle.search.validity.records import ChangedWord, Check

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from brittle.engine.core.sentence import Sentence
    from brittle.search.generators.lexicon import PosLexicon

__all__ = [
    "MAX_SENSE_RANK",
    "MIN_SIMILARITY",
    "SIMILARITY_MEASURED",
    "same_lemma",
    "shared_sense",
    "similarity_check",
    "spelling_variant",
    "synonymy_check",
]

#: A shared synset must be among the first this many senses of the original lemma and
#: of the new one in their part of speech (WordNet orders senses by frequency in
#: SemCor); calibrated on the pairs of docs/validity.md.
MAX_SENSE_RANK = 3
#: Least cosine of the MiniLM sentence embeddings; calibrated on the first
#: 142 pairs of docs/validity.md (synonym substitutions there score 0.88 and above, near-synonyms
#: that change the sense lower).
MIN_SIMILARITY = 0.85
#: What the similarity check measures.
SIMILARITY_MEASURED = "cosine of the MiniLM sentence embeddings of original and perturbed"
#: Forms of one word.
_VARIANTS: dict[str, str] = {"an": "a"}


#: British spellings and their American forms, as ending rewrites applied to both words
#: before they are compared, each after a stem long enough to leave short words alone
#: (*four* is not *for*, *filled* not *filed*) (*colour*/*color*, *analyse*/*analyze*,
#: *organisation*/*organization*, *centre*/*center*, *travelled*/*traveled*,
#: *catalogue*/*catalog*): one word in two spellings is the same word.
_SPELLINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), repl)
    for pattern, repl in (
        (r"^([a-z]{2,})our(s|ed|ing|ful|less|ist|ists|ite|ites|able)?$", r"\1or\2"),
        (r"^([a-z]{3,})is(e|es|ed|ing|ation|ations|er|ers)$", r"\1iz\2"),
        (r"^([a-z]{3,})ys(e|es|ed|ing)$", r"\1yz\2"),
        (r"^([a-z]{2,}[^aeiou])re(s|d)?$", r"\1er\2"),
        (r"^([a-z]{3,}[aeiou])ll(ed|ing|er|ers)$", r"\1l\2"),
        (r"^([a-z]{3,})ogue(s)?$", r"\1og\2"),
    )
)


def _key(word: str) -> str:
    key = word.lower().replace("-", "").replace("_", "").replace(" ", "")
    return _VARIANTS.get(key, key)


def spelling_variant(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one word in British and American spelling
    (:data:`_SPELLINGS`); a word is not its own variant."""
    x, y = _key(a), _key(b)
    if x == y:
        return False
    for pattern, repl in _SPELLINGS:
        x, y = pattern.sub(repl, x), pattern.sub(repl, y)
    return x == y


def same_lemma(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` spell one word (case, hyphens, spaces, ``a``/``an``)."""
    return _key(a) == _key(b)


def shared_sense(
    wordnet: WordNetCorpusReader, old: str, new: str, pos: str
) -> tuple[str, int, int] | None:
    """A synset of ``old`` that also has ``new`` as a lemma, with its 0-based rank among
    the senses of each: the first whose ranks are both below :data:`MAX_SENSE_RANK`,
    else ``old``'s first shared one."""
    old_key, new_key = old.lower().replace(" ", "_"), new.lower().replace(" ", "_")
    own = [str(s.name()) for s in wordnet.synsets(new_key, pos=pos)]
    first: tuple[str, int, int] | None = None
    for rank, synset in enumerate(wordnet.synsets(old_key, pos=pos)):
        if synset.pos() == "s" and pos != "a":
            continue
        names = {_key(lem.name()) for lem in synset.lemmas()}
        if _key(new_key) in names:
            name = str(synset.name())
            theirs = own.index(name) if name in own else len(own)
            if rank < MAX_SENSE_RANK and theirs < MAX_SENSE_RANK:
                return name, rank, theirs
            first = first or (name, rank, theirs)
    return first


def synonymy_check(
    original: Sentence,
    changed: Sequence[ChangedWord],
    lexicon: PosLexicon,
    wordnet: WordNetCorpusReader,
) -> Check:
    """Each changed word is the original word or its WordNet synonym in a common sense.

    Value: per changed word, ``same``, the shared synset with its rank, or ``none``.
    """
    words = original.words
    found: list[str] = []
    bad: list[str] = []
    for w in changed:
        tok = words[w.index]
        old = tok.lemma if tok.lemma not in ("_", "") else w.original
        new = w.new_lemma if w.new_lemma not in ("_", "") else w.new
        if same_lemma(old, new) or same_lemma(w.original, w.new):
            found.append("same")
            continue
        if spelling_variant(w.original, w.new) or spelling_variant(old, new):
            found.append("spelling")
            continue
        pos = WORDNET_POS.get(tok.upos)
        if pos is None:
            found.append("none")
            bad.append(f"{w.original}->{w.new} is another {tok.upos}")
            continue
        candidates = dict.fromkeys([new, lexicon.lemma(w.new, tok.upos), w.new])
        shared = next(
            (s for c in candidates if c != "_" and (s := shared_sense(wordnet, old, c, pos))),
            None,
        )
        if shared is None:
            found.append("none")
            bad.append(f"{w.original}->{w.new} share no WordNet sense")
        else:
            name, rank, theirs = shared
            found.append(f"{name}#{rank + 1}/{theirs + 1}")
            if rank >= MAX_SENSE_RANK or theirs >= MAX_SENSE_RANK:
                bad.append(
                    f"{w.original}->{w.new} share only {name}, sense {rank + 1} of "
                    f"{w.original} and {theirs + 1} of {w.new}"
                )
    return Check(
        name="synonymy",
        level="meaning",
        measured="changed words that are the same lemma (same), the same word in British "
        "or American spelling (spelling) or a WordNet synonym of the original in one of "
        "the first senses of each (synset#rank of the original/rank of the new word)",
        value=tuple(found),
        threshold=MAX_SENSE_RANK,
        passed=not bad,
        failed=None if not bad else "; ".join(bad),
    )


def similarity_check(cosine: float) -> Check:
    """The sentence embeddings' cosine against :data:`MIN_SIMILARITY`."""
    ok = cosine >= MIN_SIMILARITY
    return Check(
        name="similarity",
        level="meaning",
        measured=SIMILARITY_MEASURED,
        value=float(cosine),
        threshold=MIN_SIMILARITY,
        passed=ok,
        failed=None if ok else f"similarity {cosine:.3f} < {MIN_SIMILARITY}",
    )
