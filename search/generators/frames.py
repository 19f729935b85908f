"""Which WordNet verb senses fit how a verb is used in its sentence.

WordNet lists, for each verb sense, the sentence frames it occurs in ("Somebody ----s",
"Somebody ----s something", "Somebody ----s that CLAUSE", ...; numbered 1-35 in
WordNet's ``frames.vrb``). The treebank says how the verb is used: with an object,
with a clause, or with neither. A sense none of whose frames allows that use is not
the verb's sense there: *hide* in "then hide behind lack of proof" has no object, so
it is not hide.v.01 "prevent from being seen" (frames 8-11, all with an object, whose
synonym is *conceal*) but hide.v.02 "keep out of sight" (frames 1-2); *expect* with a
that-clause is expect.v.01 (frame 26), not ask.v.04 "request and expect" (frames 16,
24), whose synonym is *ask*.

:func:`verb_use` reads the use from the word's dependents in the UD tree and
:func:`fits` tells whether a sense's frames allow it. Uses the frames cannot judge
(an open clausal complement, a verb with no tree) are allowed by every sense.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import TYPE_CHECKING, Literal

from brittle.engine.core.sentence import Sentence

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = [
    "BARE_INFINITIVE_AFTER_OBJECT",
    "CLAUSE_AFTER_OBJECT",
    "FRAMES_BY_USE",
    "PREDICATIVE_FRAMES",
    "RAISING_FRAMES",
    "VerbUse",
    "fits",
    "infinitive_after_object",
    "infinitive_fits",
    "lemma_frames",
    "slot_uses",
    "stands_alone",
    "synonym_fits",
    "verb_fits",
    "verb_frames",
    "verb_use",
]

#: How a verb is used in its sentence, as far as WordNet's frames can tell.
VerbUse = Literal["intransitive", "transitive", "clause", "infinitive", "gerund", "other"]

#: The frames (WordNet ``frames.vrb`` numbers) that allow each judged use.
FRAMES_BY_USE: dict[str, frozenset[int]] = {
    # "Something ----s", "Somebody ----s", "It is ----ing", "... is ----ing PP",
    # "... ----s Adjective/Noun", "Somebody ----s Adjective", "... ----s to somebody",
    # "... ----s on something", "Somebody ----s PP", "Somebody's (body part) ----s",
    # "Somebody ----s to somebody"
    "intransitive": frozenset({1, 2, 3, 4, 6, 7, 12, 13, 22, 23, 27}),
    # every frame with a "something" or "somebody" object
    "transitive": frozenset({5, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25, 30, 31}),
    # "Somebody ----s that CLAUSE", "Somebody ----s whether INFINITIVE",
    # "It ----s that CLAUSE"
    "clause": frozenset({26, 29, 34}),
    # "Somebody ----s to INFINITIVE", "Somebody ----s INFINITIVE",
    # "Something ----s INFINITIVE"
    "infinitive": frozenset({28, 32, 35}),
    # "Somebody ----s VERB-ing"
    "gerund": frozenset({33}),
}

#: Verbs whose that-clause follows an object ("told him that ...", never "told that
#: ..."). WordNet's frames have no "Somebody ----s somebody that CLAUSE" and give these
#: verbs frame 26, "Somebody ----s that CLAUSE", so the frames alone let "Iran says it
#: is creating ..." become "Iran tells it is creating ..."; this short list of
#: English verbs of informing and persuading, written by hand, closes that gap.
CLAUSE_AFTER_OBJECT: frozenset[str] = frozenset(
    {"tell", "inform", "notify", "remind", "assure", "convince", "persuade", "advise"}
)

#: Verbs that take an object and then a bare infinitive ("let them know", "made him
#: leave", "saw her go"). WordNet's frame 25, "Somebody ----s somebody INFINITIVE", is
#: given to *allow* and *permit* too (let.v.01), which want *to* ("allow them to
#: know"), and its frame 24 to *let* and *make* ("let them to know"), so the frames
#: cannot tell the two constructions apart; this short list of English's causative and
#: perception verbs, written by hand, does. *help* takes both.
BARE_INFINITIVE_AFTER_OBJECT: frozenset[str] = frozenset(
    {"let", "make", "have", "help", "bid", "see", "watch", "hear", "feel", "notice",
     "observe", "overhear"}
)  # fmt: skip

#: Dependents that make a use transitive (UD relations, subtypes ignored): an object,
#: or a passive subject, auxiliary or agent (the object became the subject).
_OBJECT = frozenset({"obj", "iobj"})
_PASSIVE = frozenset({"nsubj:pass", "csubj:pass", "aux:pass", "obl:agent"})
#: Dependents the frames do not judge: a copula's own arguments.
_UNJUDGED = frozenset({"cop", "expl"})


def verb_use(sentence: Sentence, index: int) -> VerbUse:
    """How the word at 0-based ``index`` is used: ``transitive`` (an object, a passive
    subject, auxiliary or agent, or a past participle modifying a noun: "a plan based
    on ..."), ``clause`` (a clausal complement and no object), ``infinitive`` or
    ``gerund`` (an open clausal complement that is a to-infinitive or an -ing verb, and
    no object), ``intransitive`` (none of these), or ``other`` (another open clausal
    complement such as a predicative adjective, a relative clause whose object may be
    the noun it modifies: "the tools they are using", or a sentence without a tree)."""
    words = sentence.words
    if any(w.head in ("_", "") for w in words):
        return "other"
    head = str(index + 1)
    relations = {w.deprel for w in words if w.head == head}
    bare = {r.split(":")[0] for r in relations}
    own = words[index].deprel
    if relations & _PASSIVE or bare & _OBJECT or (own == "acl" and words[index].xpos == "VBN"):
        return "transitive"
    if bare & _UNJUDGED or own == "acl:relcl":
        return "other"
    complements = [j for j, w in enumerate(words) if w.head == head and w.deprel == "xcomp"]
    if complements:
        return _open_use(sentence, complements[0])
    if "ccomp" in bare:
        return "clause"
    return "intransitive"


def _open_use(sentence: Sentence, index: int) -> VerbUse:
    """The use an open clausal complement at ``index`` gives its verb: ``infinitive``
    (a verb with the marker *to*), ``gerund`` (an ``-ing`` verb), else ``other``."""
    word = sentence.words[index]
    if word.upos != "VERB":
        return "other"
    if _marked_to(sentence, index):
        return "infinitive"
    return "gerund" if word.xpos == "VBG" else "other"


def _marked_to(sentence: Sentence, index: int) -> bool:
    """Whether the word at 0-based ``index`` has the marker *to* (a to-infinitive)."""
    head = str(index + 1)
    return any(
        w.head == head and w.deprel == "mark" and w.form.lower() == "to" for w in sentence.words
    )


def infinitive_after_object(sentence: Sentence, index: int) -> Literal["bare", "to"] | None:
    """Whether the verb at 0-based ``index`` has an object and then an infinitive as
    its open clausal complement: ``"bare"`` ("let leaders know"), ``"to"`` ("allow
    leaders to know"), ``None`` (no object, or no infinitive complement)."""
    head = str(index + 1)
    words = sentence.words
    if not any(w.head == head and w.deprel.split(":")[0] == "obj" for w in words):
        return None
    for j, word in enumerate(words):
        if word.head != head or word.deprel != "xcomp" or word.upos not in ("VERB", "AUX"):
            continue
        if _marked_to(sentence, j):
            return "to"
        return "bare" if word.xpos == "VB" else None
    return None


def infinitive_fits(lemma: str, after: Literal["bare", "to"] | None) -> bool:
    """Whether a verb ``lemma`` takes the infinitive ``after`` its object
    (:func:`infinitive_after_object`): a bare one only the verbs of
    :data:`BARE_INFINITIVE_AFTER_OBJECT`, one with *to* every verb but those (*help*
    takes both); always when ``after`` is ``None``."""
    key = lemma.lower()
    if after == "bare":
        return key in BARE_INFINITIVE_AFTER_OBJECT
    if after == "to":
        return key == "help" or key not in BARE_INFINITIVE_AFTER_OBJECT
    return True


def synonym_fits(lemma: str, frames: Collection[int], use: VerbUse) -> bool:
    """Whether a synonym ``lemma`` with WordNet ``frames`` allows ``use``: :func:`fits`,
    and no bare that-clause for the verbs of :data:`CLAUSE_AFTER_OBJECT`."""
    if use == "clause" and lemma.lower() in CLAUSE_AFTER_OBJECT:
        return False
    return fits(frames, use)


def fits(frames: Collection[int], use: VerbUse) -> bool:
    """Whether a sense with WordNet ``frames`` allows ``use`` (always for ``other``, and
    for a sense WordNet gives no frames)."""
    if use == "other" or not frames:
        return True
    return bool(FRAMES_BY_USE[use].intersection(frames))


def lemma_frames(
    wordnet: WordNetCorpusReader, lemma: str, senses: int | None = None
) -> frozenset[int]:
    """The WordNet sentence frames (``frames.vrb`` numbers) of ``lemma`` in its first
    ``senses`` verb senses (``None``: all; empty when WordNet has no such verb)."""
    key = lemma.lower().replace(" ", "_")
    frames: set[int] = set()
    for synset in wordnet.synsets(key, pos="v")[:senses]:
        for entry in synset.lemmas():
            if entry.name().lower() == key:
                frames.update(entry.frame_ids())
    return frozenset(frames)


@cache
def verb_frames(lemma: str) -> frozenset[int]:
    """WordNet's frame numbers of every verb sense of ``lemma`` (empty: not a verb
    WordNet knows), cached: drawing looks up the same lemmas again and again."""
    from brittle.engine.core.resources import load_wordnet  # deferred: reads WordNet

    return lemma_frames(load_wordnet(), lemma)


#: WordNet frames of a verb with a predicative complement: "Something ----s something
#: Adjective/Noun", "Something ----s Adjective/Noun", "Somebody ----s Adjective".
PREDICATIVE_FRAMES = frozenset({5, 6, 7})
#: WordNet frames of a raising verb: "Somebody ----s to INFINITIVE", "It ----s that
#: CLAUSE".
RAISING_FRAMES = frozenset({28, 34})


def stands_alone(frames: Collection[int]) -> bool:
    """Whether a verb with WordNet ``frames`` (of the senses looked at) can stand with no
    complement at all. Not a raising verb whose only intransitive frames are
    predicative: WordNet files "Something ----s Adjective/Noun" and "Somebody ----s
    Adjective" among the intransitive frames, and *seem* (with "It ----s that CLAUSE"
    and "Somebody ----s to INFINITIVE") has no other, so "the piece has *seemed* at
    Newsday" is not English where "has *appeared*" is. A verb with a predicative frame
    and no raising one is not refused: WordNet also gives "Somebody ----s Adjective"
    to verbs of digging (*excavate*, *unearth*), which stand alone ("excavating deep
    into"). A verb WordNet gives no frames is not judged (True)."""
    frames = set(frames)
    bare = (FRAMES_BY_USE["intransitive"] - PREDICATIVE_FRAMES) & frames
    return not frames or bool(bare) or not (PREDICATIVE_FRAMES & frames and RAISING_FRAMES & frames)


def slot_uses(sentence: Sentence, index: int) -> frozenset[VerbUse | str]:
    """Every use the verb at 0-based ``index`` has in the tree, for a new verb to allow
    all of them: ``transitive`` (an object, or passive), ``clause``, ``infinitive``,
    ``gerund``, ``predicative`` (an adjective or noun complement: "can be *considered*
    representative"), ``bare-infinitive-after-object`` or ``to-infinitive-after-object``
    (:func:`infinitive_after_object`), else ``intransitive``. Unlike :func:`verb_use`,
    which names the one use a sense must allow, a passive with a predicative complement
    gives both."""
    head = str(index + 1)
    uses: set[VerbUse | str] = set()
    first = verb_use(sentence, index)
    if first in ("transitive", "clause", "infinitive", "gerund"):
        uses.add(first)
    after = infinitive_after_object(sentence, index)
    if after is not None:
        uses.add(f"{after}-infinitive-after-object")
    for word in sentence.words:
        if word.head != head:
            continue
        relation = word.deprel.split(":")[0]
        if relation in ("obj", "iobj") or word.deprel in ("nsubj:pass", "aux:pass"):
            uses.add("transitive")
        elif relation == "ccomp":
            uses.add("clause")
        elif relation == "xcomp":
            uses.add("predicative" if word.upos != "VERB" else "complement")
    return frozenset(uses or {"intransitive"})


def verb_fits(lemma: str, uses: frozenset[VerbUse | str]) -> bool:
    """Whether WordNet knows ``lemma`` as a verb with a frame for each of ``uses``
    (frames of any of its senses)."""
    frames = verb_frames(lemma)
    if not frames:
        return False
    for use in uses:
        if use == "predicative":
            allowed = bool(PREDICATIVE_FRAMES & frames)
        elif use in _AFTER_OBJECT:
            allowed = infinitive_fits(lemma, _AFTER_OBJECT[use])
        else:
            allowed = use not in _JUDGED or synonym_fits(lemma, frames, _JUDGED[use])
        if not allowed:
            return False
    return True


#: The uses of :func:`slot_uses` that name the infinitive after an object.
_AFTER_OBJECT: dict[str, Literal["bare", "to"]] = {
    "bare-infinitive-after-object": "bare",
    "to-infinitive-after-object": "to",
}

#: The uses :func:`fits` judges, by name.
_JUDGED: dict[str, VerbUse] = {
    "intransitive": "intransitive",
    "transitive": "transitive",
    "clause": "clause",
    "infinitive": "infinitive",
    "gerund": "gerund",
}
