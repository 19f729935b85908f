"""Agreement-attraction stimuli: a small grammar that writes gold UD trees.

Two experiments after Chaves & Richter's design, with brittle's own grammar and lexicon
(:mod:`brittle.engine.agreement.lexicon`):

**Experiment 1 (local agreement).** The target subject stands right before the verb;
embeddings before it bring attractors (nouns and pronouns, all of one number in the
design). Depth ``d`` is the number of attractors::

    E0  The lawyer is upset.
    E1  The engineers said that the lawyer is upset.
    E2  The engineers said that we thought the lawyer is upset.
    E3  The engineers reviewing the reports said that we thought the lawyer is upset.
    E4  The engineers reviewing the reports for the agencies said that we thought the
        lawyer is upset.

**Experiment 2 (long-distance agreement).** An it-cleft extracts the target across
``d`` = 1..4 bare clauses of ``I``/``you`` and a past-tense verb; the matrix subject
(none, a noun, or a noun with a prepositional phrase) has the other number::

    none     It was the cousin who I thought you said was upset.
    simple   The lawyers said it was the cousin who I thought you said was upset.
    complex  The lawyers from the agencies said it was the cousin who ... was upset.

Every stimulus is a :class:`~brittle.engine.core.sentence.Sentence` with gold HEAD,
DEPREL, UPOS, XPOS and FEATS (``Number`` on nouns, pronouns and the agreeing verb), so
every other brittle tool reads it. The agreeing form is written; MISC marks the target
(``Agreement=Target``), the verb (``Agreement=Verb``) and the attractors
(``Agreement=Attractor``), and ``# agreement_*`` comments give experiment, condition,
verb pair and item. :class:`Stimulus` reads those back from any sentence that has them,
so the CoNLL-U of the generator and of the attack score alike.

UD analysis: ``be`` is a copula (the adjective heads the clause, the target is its
``nsubj``, the verb its ``cop``); the other linking verbs head their clause and take the
adjective as ``xcomp``. The cleft's ``it`` is ``expl``, the focused noun heads the cleft
and the extracted clause is its ``acl:relcl``, in which ``who`` is the ``nsubj`` of the
deepest predicate (a non-projective arc, as extraction gives).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from brittle.engine.agreement.lexicon import (
    ADJECTIVES,
    NEUTRAL_PRONOUNS,
    PARTICIPLES,
    PEOPLE,
    PLACES,
    PRONOUN_PAIRS,
    SAY_VERBS,
    THINGS,
    THINK_VERBS,
    VERB_PAIRS,
    Number,
    VerbPair,
    noun_by_lemma,
    pronoun_by_form,
    verb_pair,
)
from brittle.engine.core.errors import BrittleError, ConfigError
from brittle.engine.core.sentence import Sentence, Token

__all__ = [
    "BRIDGE_VERBS",
    "EXP1_DEPTHS",
    "EXP2_DEPTHS",
    "MATRIX_KINDS",
    "Frame",
    "Stimulus",
    "StimulusError",
    "build_sentence",
    "design_frames",
    "generate",
    "other",
    "validate_stimulus",
]

#: Embedding depths of experiment 1 (E0..E4) and experiment 2 (E1..E4).
EXP1_DEPTHS: tuple[int, ...] = (0, 1, 2, 3, 4)
EXP2_DEPTHS: tuple[int, ...] = (1, 2, 3, 4)
#: Matrix subjects of experiment 2, simplest first.
MATRIX_KINDS: tuple[str, ...] = ("none", "simple", "complex")
Matrix = Literal["none", "simple", "complex"]
#: Experiment-2 embedding verbs: past tense, taking a bare clause whose subject is
#: extracted (``who I thought you said was upset``).
BRIDGE_VERBS: tuple[str, ...] = (
    "thought",
    "said",
    "believed",
    "knew",
    "assumed",
    "suspected",
    "guessed",
    "claimed",
    "figured",
)
#: Comment keys written on every stimulus.
_META = ("agreement_experiment", "agreement_condition", "agreement_verb", "agreement_item")


class StimulusError(BrittleError):
    """A sentence lacks what an agreement stimulus needs (metadata, marked words)."""


def other(number: Number) -> Number:
    """The other number."""
    return "pl" if number == "sg" else "sg"


@dataclass(frozen=True)
class Frame:
    """Every lexical and structural choice of one stimulus.

    Attributes:
        experiment: ``1`` (local) or ``2`` (long-distance).
        verb: the verb pair's singular form (``is``, ``seems``).
        item: the item number (one lexical frame realised in every condition).
        target: lemma of the target noun (a :data:`~.lexicon.PEOPLE` noun).
        target_number: number of the target.
        adjective: the predicate after the verb.
        depth: embeddings before the target (experiment 1: 0-4; experiment 2: 1-4).
        person: experiment 1: the subject of ``said`` (first attractor); experiment 2:
            the matrix subject.
        thing: experiment 1: object of the participle (a THINGS lemma).
        place: the noun of the prepositional phrase (a PLACES lemma).
        numbers: numbers of (person, thing, place, pronoun); experiment 2 uses the first
            and third for the matrix subject and its prepositional phrase.
        pronoun_pair: experiment 1: index into :data:`~.lexicon.PRONOUN_PAIRS`.
        participle: experiment 1: the participle's form.
        say: experiment 1: the verb of saying.
        think: experiment 1: the verb of thinking.
        matrix: experiment 2: the matrix subject's complexity.
        clause_pronouns: experiment 2: the subjects of the embeddings (``I``/``you``).
        clause_verbs: experiment 2: the verbs of the embeddings (past tense forms).
    """

    experiment: int
    verb: str
    item: int
    target: str
    target_number: Number
    adjective: str
    depth: int
    person: str
    thing: str = "report"
    place: str = "agency"
    numbers: tuple[Number, Number, Number, Number] = ("sg", "sg", "sg", "sg")
    pronoun_pair: int = 0
    participle: str = "reviewing"
    say: str = "said"
    think: str = "thought"
    matrix: Matrix = "none"
    clause_pronouns: tuple[str, ...] = ("I", "you", "I", "you")
    clause_verbs: tuple[str, ...] = ("thought", "said", "believed", "claimed")

    @property
    def context(self) -> str:
        """The second factor of the condition: the attractors' number (experiment 1;
        ``mixed`` when they differ, ``none`` at E0) or the matrix kind (experiment 2)."""
        if self.experiment == 2:
            return self.matrix
        if self.depth == 0:
            return self.numbers[0]  # the design's nominal attractor number (none realised)
        used = self.attractor_numbers
        return used[0] if len(set(used)) == 1 else "mixed"

    @property
    def attractor_numbers(self) -> tuple[Number, ...]:
        """Experiment 1: the numbers of the attractors the depth realises, in order."""
        person, thing, place, pronoun = self.numbers
        return {0: (), 1: (person,), 2: (person, pronoun), 3: (person, thing, pronoun)}.get(
            self.depth, (person, thing, place, pronoun)
        )

    @property
    def condition(self) -> str:
        """``<target>-<context>-E<depth>``, e.g. ``sg-pl-E3`` or ``pl-complex-E2``."""
        return f"{self.target_number}-{self.context}-E{self.depth}"

    @property
    def sent_id(self) -> str:
        """``agr<experiment>-<verb>-<item>-<condition>``."""
        return f"agr{self.experiment}-{self.verb}-{self.item:03d}-{self.condition}"


# ------------------------------------------------------------------ building
@dataclass
class _Words:
    """Words added in order with symbolic heads, resolved to 1-based HEAD at the end."""

    rows: list[tuple[str, str, str, str, str, str, str, str]] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)

    def add(
        self,
        name: str,
        form: str,
        lemma: str,
        upos: str,
        xpos: str,
        feats: str,
        head: str,
        deprel: str,
        misc: str = "_",
    ) -> None:
        self.names[name] = len(self.rows) + 1
        self.rows.append((form, lemma, upos, xpos, feats or "_", head, deprel, misc))

    def det(self, head: str) -> None:
        self.add(f"det-{head}", "the", "the", "DET", "DT", "Definite=Def|PronType=Art", head, "det")

    def noun(
        self, name: str, lemma: str, number: Number, head: str, deprel: str, misc: str
    ) -> None:
        noun = noun_by_lemma(lemma)
        xpos, feat = ("NN", "Number=Sing") if number == "sg" else ("NNS", "Number=Plur")
        self.add(name, noun.form(number), lemma, "NOUN", xpos, feat, head, deprel, misc)

    def tokens(self) -> tuple[Token, ...]:
        out: list[Token] = []
        n = len(self.rows)
        for i, (form, lemma, upos, xpos, feats, head, deprel, misc) in enumerate(self.rows):
            head_id = 0 if head == "ROOT" else self.names[head]
            if i == 0:
                form = form[:1].upper() + form[1:]
            if i == n - 2 and self.rows[-1][2] == "PUNCT":
                misc = "SpaceAfter=No" if misc == "_" else f"{misc}|SpaceAfter=No"
            out.append(
                Token(str(i + 1), form, lemma, upos, xpos, feats, str(head_id), deprel, "_", misc)
            )
        return tuple(out)


def _verb_feats(pair: VerbPair, number: Number) -> str:
    num = "Sing" if number == "sg" else "Plur"
    return f"Mood=Ind|Number={num}|Person=3|Tense={pair.tense}|VerbForm=Fin"


def _verb_xpos(pair: VerbPair, number: Number) -> str:
    if pair.tense == "Past":
        return "VBD"
    return "VBZ" if number == "sg" else "VBP"


_PAST = "Mood=Ind|Tense=Past|VerbForm=Fin"


def _lemma_of(form: str, table: Sequence[tuple[str, str]]) -> str:
    for f, lemma in table:
        if f == form:
            return lemma
    raise ConfigError(f"{form!r} is not in the lexicon")


def _predicate(w: _Words, frame: Frame, head: str, deprel: str, *, verb_misc: str) -> str:
    """Add verb and adjective of the target clause after its subject was added as
    ``subj`` (its head is the name returned); returns the clause head's name."""
    pair = verb_pair(frame.verb)
    number = frame.target_number
    upos = "AUX" if pair.is_copula else "VERB"
    clause = "adj" if pair.is_copula else "verb"
    w.add(
        "verb",
        pair.form(number),
        pair.lemma,
        upos,
        _verb_xpos(pair, number),
        _verb_feats(pair, number),
        "adj" if pair.is_copula else head,
        "cop" if pair.is_copula else deprel,
        verb_misc,
    )
    w.add(
        "adj",
        frame.adjective,
        frame.adjective,
        "ADJ",
        "JJ",
        "Degree=Pos",
        head if pair.is_copula else "verb",
        deprel if pair.is_copula else "xcomp",
    )
    return clause


def _build_exp1(frame: Frame) -> _Words:
    w = _Words()
    d = frame.depth
    n_person, n_thing, n_place, n_pron = frame.numbers
    att = "Agreement=Attractor"
    pair = verb_pair(frame.verb)
    clause = "adj" if pair.is_copula else "verb"
    if d >= 1:
        w.det("person")
        w.noun("person", frame.person, n_person, "say", "nsubj", att)
        if d >= 3:
            w.add(
                "part",
                frame.participle,
                _lemma_of(frame.participle, PARTICIPLES),
                "VERB",
                "VBG",
                "VerbForm=Ger",
                "person",
                "acl",
            )
            w.det("thing")
            w.noun("thing", frame.thing, n_thing, "part", "obj", att)
            if d >= 4:
                w.add("for", "for", "for", "ADP", "IN", "", "place", "case")
                w.det("place")
                w.noun("place", frame.place, n_place, "thing", "nmod", att)
        w.add(
            "say", frame.say, _lemma_of(frame.say, SAY_VERBS), "VERB", "VBD", _PAST, "ROOT", "root"
        )
        if d >= 2:
            w.add("that", "that", "that", "SCONJ", "IN", "", "think", "mark")
            pron = PRONOUN_PAIRS[frame.pronoun_pair][0 if n_pron == "sg" else 1]
            w.add(
                "pron",
                pron.form,
                pron.form.lower() if pron.form != "I" else "I",
                "PRON",
                "PRP",
                pron.feats,
                "think",
                "nsubj",
                att,
            )
            w.add(
                "think",
                frame.think,
                _lemma_of(frame.think, THINK_VERBS),
                "VERB",
                "VBD",
                _PAST,
                "say",
                "ccomp",
            )
            top, top_rel = "think", "ccomp"
        else:
            w.add("that", "that", "that", "SCONJ", "IN", "", clause, "mark")
            top, top_rel = "say", "ccomp"
    else:
        top, top_rel = "ROOT", "root"
    w.det("target")
    w.noun("target", frame.target, frame.target_number, clause, "nsubj", "Agreement=Target")
    _predicate(w, frame, top, top_rel, verb_misc="Agreement=Verb")
    w.add("punct", ".", ".", "PUNCT", ".", "", "say" if d >= 1 else clause, "punct")
    return w


def _build_exp2(frame: Frame) -> _Words:
    w = _Words()
    att = "Agreement=Attractor"
    n_person, _, n_place, _ = frame.numbers
    root = "target"
    if frame.matrix != "none":
        w.det("person")
        w.noun("person", frame.person, n_person, "say", "nsubj", att)
        if frame.matrix == "complex":
            w.add("from", "from", "from", "ADP", "IN", "", "place", "case")
            w.det("place")
            w.noun("place", frame.place, n_place, "person", "nmod", att)
        w.add("say", "said", "say", "VERB", "VBD", _PAST, "ROOT", "root")
        root = "say"
    w.add(
        "it",
        "it",
        "it",
        "PRON",
        "PRP",
        "Case=Nom|Gender=Neut|Number=Sing|Person=3|PronType=Prs",
        "target",
        "expl",
    )
    w.add(
        "was",
        "was",
        "be",
        "AUX",
        "VBD",
        "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin",
        "target",
        "cop",
    )
    w.det("target")
    w.noun(
        "target",
        frame.target,
        frame.target_number,
        "ROOT" if root == "target" else "say",
        "root" if root == "target" else "ccomp",
        "Agreement=Target",
    )
    clause = "adj" if verb_pair(frame.verb).is_copula else "verb"
    w.add("who", "who", "who", "PRON", "WP", "PronType=Rel", clause, "nsubj")
    head, rel = "target", "acl:relcl"
    for k in range(frame.depth):
        pron = pronoun_by_form(frame.clause_pronouns[k])
        verb = frame.clause_verbs[k]
        lemma = _lemma_of(verb, SAY_VERBS + THINK_VERBS)
        if verb not in BRIDGE_VERBS:
            raise ConfigError(f"{verb!r} does not take a clause with an extracted subject")
        w.add(
            f"p{k}",
            pron.form,
            pron.form if pron.form == "I" else pron.form.lower(),
            "PRON",
            "PRP",
            pron.feats,
            f"v{k}",
            "nsubj",
        )
        w.add(f"v{k}", verb, lemma, "VERB", "VBD", _PAST, head, rel)
        head, rel = f"v{k}", "ccomp"
    # the extracted clause: "was upset", subject "who" (added above)
    _predicate(w, frame, head, rel, verb_misc="Agreement=Verb")
    w.add("punct", ".", ".", "PUNCT", ".", "", root, "punct")
    return w


def build_sentence(frame: Frame) -> Sentence:
    """The stimulus of ``frame`` as a sentence with gold tree, FEATS and metadata."""
    _check_frame(frame)
    words = _build_exp1(frame) if frame.experiment == 1 else _build_exp2(frame)
    tokens = words.tokens()
    text = "".join(t.form + ("" if "SpaceAfter=No" in t.misc else " ") for t in tokens).strip()
    pair = verb_pair(frame.verb)
    comments = (
        f"# sent_id = {frame.sent_id}",
        f"# text = {text}",
        f"# agreement_experiment = {frame.experiment}",
        f"# agreement_condition = {frame.condition}",
        f"# agreement_verb = {pair.key}",
        f"# agreement_item = {frame.item}",
    )
    return Sentence(frame.sent_id, comments, tokens)


def _check_frame(frame: Frame) -> None:
    verb_pair(frame.verb)
    if frame.experiment == 1:
        if frame.depth not in EXP1_DEPTHS:
            raise ConfigError(f"experiment 1 depth must be 0-4, got {frame.depth}")
    elif frame.experiment == 2:
        if frame.depth not in EXP2_DEPTHS:
            raise ConfigError(f"experiment 2 depth must be 1-4, got {frame.depth}")
        if frame.matrix not in MATRIX_KINDS:
            raise ConfigError(f"unknown matrix subject {frame.matrix!r}")
        if len(frame.clause_pronouns) < frame.depth or len(frame.clause_verbs) < frame.depth:
            raise ConfigError("experiment 2 needs a pronoun and a verb per embedding")
    else:
        raise ConfigError(f"experiment must be 1 or 2, got {frame.experiment}")


# ------------------------------------------------------------------ the design
_NUMBERS: tuple[Number, Number] = ("sg", "pl")


def _pick(rng: np.random.Generator, options: Sequence[str], avoid: Iterable[str] = ()) -> str:
    banned = set(avoid)
    pool = [o for o in options if o not in banned]
    return pool[int(rng.integers(len(pool)))]


def _alternating(start: int) -> tuple[str, ...]:
    """Four embedding subjects alternating between ``I`` and ``you`` from ``start``."""
    n = len(NEUTRAL_PRONOUNS)
    return tuple(NEUTRAL_PRONOUNS[(start + k) % n].form for k in range(4))


def _base_frames(
    experiment: int, verb: VerbPair, n_items: int, rng: np.random.Generator
) -> list[Frame]:
    people = [n.lemma for n in PEOPLE]
    out: list[Frame] = []
    for item in range(n_items):
        target = _pick(rng, people)
        person = _pick(rng, people, avoid=[target])
        frame = Frame(
            experiment=experiment,
            verb=verb.singular,
            item=item,
            target=target,
            target_number="sg",
            adjective=_pick(rng, ADJECTIVES),
            depth=EXP1_DEPTHS[-1] if experiment == 1 else EXP2_DEPTHS[-1],
            person=person,
            thing=_pick(rng, [n.lemma for n in THINGS]),
            place=_pick(rng, [n.lemma for n in PLACES]),
            pronoun_pair=int(rng.integers(len(PRONOUN_PAIRS))),
            participle=_pick(rng, [f for f, _ in PARTICIPLES]),
            say=_pick(rng, [f for f, _ in SAY_VERBS]),
            think=_pick(rng, [f for f, _ in THINK_VERBS]),
            clause_pronouns=_alternating(int(rng.integers(len(NEUTRAL_PRONOUNS)))),
            clause_verbs=tuple(
                str(v) for v in rng.choice(BRIDGE_VERBS, size=4, replace=False).tolist()
            ),
        )
        out.append(frame)
    return out


def design_frames(
    *,
    experiments: Sequence[int] = (1, 2),
    items: int = 20,
    seed: int = 0,
    verbs: Sequence[str] | None = None,
) -> list[Frame]:
    """Every frame of the full design, in a fixed order.

    Experiment 1: for each verb pair (all seven unless ``verbs`` names some), ``items``
    lexical frames, each realised in the 2 x 2 x 5 conditions (target number x attractor
    number x E0-E4). Experiment 2: ``was/were`` only, ``items`` frames, each in the
    2 x 3 x 4 conditions (target number x matrix subject x E1-E4), the matrix subject
    of the other number. The same seed gives the same frames.

    Args:
        experiments: which experiments.
        items: lexical frames per verb pair and experiment (>= 1).
        seed: seed of the lexical draws.
        verbs: verb pairs of experiment 1 (singular form or ``is/are``); ``None``: all.
    """
    if items < 1:
        raise ConfigError(f"items must be at least 1, got {items}")
    try:
        pairs = [verb_pair(v) for v in verbs] if verbs else list(VERB_PAIRS)
    except KeyError as err:
        raise ConfigError(str(err.args[0])) from None
    out: list[Frame] = []
    for experiment in experiments:
        if experiment not in (1, 2):
            raise ConfigError(f"experiment must be 1 or 2, got {experiment}")
        rng = np.random.default_rng([seed, experiment])
        if experiment == 1:
            for pair in pairs:
                for base in _base_frames(1, pair, items, rng):
                    for t in _NUMBERS:
                        for a in _NUMBERS:
                            for d in EXP1_DEPTHS:
                                out.append(
                                    replace(base, target_number=t, depth=d, numbers=(a, a, a, a))
                                )
        else:
            for base in _base_frames(2, verb_pair("was"), items, rng):
                for t in _NUMBERS:
                    m = other(t)
                    for matrix in MATRIX_KINDS:
                        for d in EXP2_DEPTHS:
                            out.append(
                                replace(
                                    base,
                                    target_number=t,
                                    depth=d,
                                    matrix=matrix,  # type: ignore[arg-type]
                                    numbers=(m, m, m, m),
                                )
                            )
    return out


def generate(
    *,
    experiments: Sequence[int] = (1, 2),
    items: int = 20,
    seed: int = 0,
    verbs: Sequence[str] | None = None,
) -> list[Sentence]:
    """The stimuli of :func:`design_frames`, as sentences (see there for the design)."""
    return [
        build_sentence(f)
        for f in design_frames(experiments=experiments, items=items, seed=seed, verbs=verbs)
    ]


# ------------------------------------------------------------------ reading back
@dataclass(frozen=True)
class Stimulus:
    """An agreement stimulus as the scorer and the probes read it.

    Attributes:
        sentence: the sentence (gold tree, FEATS, metadata).
        experiment: ``1`` or ``2``.
        condition: ``<target>-<context>-E<depth>``.
        verb: the verb pair (the written form agrees with the target).
        item: the item number.
        target: 0-based index of the target noun.
        verb_index: 0-based index of the agreeing verb.
        attractors: 0-based indices of the attractors.
        target_number: the target's number (from its FEATS).
    """

    sentence: Sentence
    experiment: int
    condition: str
    verb: VerbPair
    item: int
    target: int
    verb_index: int
    attractors: tuple[int, ...]
    target_number: Number

    @property
    def sent_id(self) -> str:
        """The sentence's id."""
        return self.sentence.sent_id

    @property
    def context(self) -> str:
        """The condition's second factor (attractor number or matrix kind)."""
        return self.condition.split("-")[1]

    @property
    def depth(self) -> int:
        """Embedding depth."""
        return int(self.condition.rsplit("-E", 1)[1])

    @property
    def correct(self) -> str:
        """The agreeing verb form."""
        return self.verb.form(self.target_number)

    @property
    def wrong(self) -> str:
        """The non-agreeing verb form."""
        return self.verb.form(other(self.target_number))

    def left_right(self) -> tuple[str, str]:
        """The text before the verb (no trailing space) and after it (with its leading
        space, or none before attached punctuation)."""
        words = self.sentence.words
        left = _join(words[: self.verb_index])
        tail = words[self.verb_index + 1 :]
        right = _join(tail)
        glue = "" if "SpaceAfter=No" in words[self.verb_index].misc or not right else " "
        return left, glue + right

    def text_with(self, form: str) -> str:
        """The sentence's text with ``form`` at the verb."""
        left, right = self.left_right()
        return f"{left} {form}{right}"

    @classmethod
    def from_sentence(cls, sentence: Sentence) -> Stimulus:
        """Read a stimulus's metadata and marked words (raises :class:`StimulusError`)."""
        meta = sentence.metadata
        missing = [k for k in _META if k not in meta]
        where = sentence.source or "input"
        if missing:
            raise StimulusError(
                f"{where}:{sentence.line}: sentence {sentence.sent_id} is not an agreement "
                f"stimulus (no {', '.join('# ' + k for k in missing)})"
            )
        marks: dict[str, list[int]] = {"Target": [], "Verb": [], "Attractor": []}
        for i, tok in enumerate(sentence.words):
            role = tok.misc_dict.get("Agreement")
            if role in marks:
                marks[role].append(i)
        if len(marks["Target"]) != 1 or len(marks["Verb"]) != 1:
            raise StimulusError(
                f"{where}:{sentence.line}: sentence {sentence.sent_id} needs exactly one "
                "Agreement=Target and one Agreement=Verb word"
            )
        target = marks["Target"][0]
        feats = sentence.words[target].feats_dict.get("Number")
        if feats not in ("Sing", "Plur"):
            raise StimulusError(
                f"{where}:{sentence.line}: target of {sentence.sent_id} has no Number feature"
            )
        try:
            pair = verb_pair(meta["agreement_verb"])
            experiment = int(meta["agreement_experiment"])
            item = int(meta["agreement_item"])
        except (KeyError, ValueError) as err:
            raise StimulusError(
                f"{where}:{sentence.line}: bad agreement metadata in {sentence.sent_id}: {err}"
            ) from None
        return cls(
            sentence=sentence,
            experiment=experiment,
            condition=meta["agreement_condition"],
            verb=pair,
            item=item,
            target=target,
            verb_index=marks["Verb"][0],
            attractors=tuple(marks["Attractor"]),
            target_number="sg" if feats == "Sing" else "pl",
        )


def _join(words: Sequence[Token]) -> str:
    return "".join(t.form + ("" if "SpaceAfter=No" in t.misc else " ") for t in words).strip()


# ------------------------------------------------------------------ validation
def validate_stimulus(stimulus: Stimulus) -> list[str]:
    """What is wrong with a stimulus's gold annotation (empty when nothing is).

    Checks: one root and no cycle (the tree problems of the sentence); every noun's and
    pronoun's ``Number`` matches its form in the lexicon; the verb is the agreeing form
    of its pair with ``Number`` equal to the target's; the target is the ``nsubj`` of
    the verb's clause (experiment 1: of the verb, or of the adjective the copula
    ``cop``-attaches to, and directly before the verb); the attractors have the other
    number's features only where the condition says so.
    """
    s = stimulus.sentence
    problems = list(s.problems())
    words = s.words
    heads = s.heads
    for i, tok in enumerate(words):
        number = tok.feats_dict.get("Number")
        if tok.upos == "NOUN":
            noun = noun_by_lemma(tok.lemma)
            want = "Sing" if tok.form.lower() == noun.lemma else "Plur"
            if tok.form.lower() not in (noun.lemma, noun.plural) or number != want:
                problems.append(f"word {i + 1} {tok.form!r}: Number={number} does not fit")
        if tok.upos == "PRON" and tok.xpos == "PRP" and tok.deprel == "nsubj":
            pron = pronoun_by_form(tok.form if tok.form == "I" else tok.form.lower())
            want_p = None if pron.number is None else ("Sing" if pron.number == "sg" else "Plur")
            if number != want_p:
                problems.append(f"word {i + 1} {tok.form!r}: Number={number} does not fit")
    v = stimulus.verb_index
    verb = words[v]
    want_v = "Sing" if stimulus.target_number == "sg" else "Plur"
    if verb.form != stimulus.correct or verb.feats_dict.get("Number") != want_v:
        problems.append(f"verb {verb.form!r} does not agree with the target")
    t = stimulus.target
    clause = int(heads[v]) - 1 if verb.deprel == "cop" else v
    if not (int(heads[t]) - 1 == clause and words[t].deprel == "nsubj"):
        subj = [
            i for i in range(len(words)) if heads[i] - 1 == clause and words[i].deprel == "nsubj"
        ]
        # experiment 2: the relative pronoun is the subject and the cleft noun its antecedent
        ok = (
            stimulus.experiment == 2
            and len(subj) == 1
            and words[subj[0]].xpos == "WP"
            and _relcl_reaches(s, clause, t)
        )
        if not ok:
            problems.append("the target is not the subject of the verb's clause")
    if stimulus.experiment == 1 and t != v - 1:
        problems.append("experiment 1: the target does not stand right before the verb")
    return problems


def _relcl_reaches(s: Sentence, clause: int, target: int) -> bool:
    """Whether ``clause`` sits, through ``ccomp`` links, in an ``acl:relcl`` of ``target``."""
    heads = s.heads
    words = s.words
    node = clause
    for _ in range(len(words)):
        rel = words[node].deprel
        parent = int(heads[node]) - 1
        if rel == "acl:relcl":
            return parent == target
        if rel != "ccomp" or parent < 0:
            return False
        node = parent
    return False
