"""Worst-case agreement stimuli: brittle's search strategies over the grammar's choices.

A stimulus is a :class:`~.stimuli.Frame`: a handful of choices (the attractor nouns and
each one's number, the pronoun, the embedding verbs, the depth, the matrix subject).
The search treats each choice as a *slot* and each alternative value as an *option*,
which is exactly the shape of brittle's substitution problems: a
:class:`~brittle.search.table.SubstitutionTable` whose "positions" are the slots and
whose "replacements" are the values. So the registered strategies (``sample``,
``greedy``, ``beam``; :data:`~brittle.search.strategies.base.STRATEGIES`) search it
unchanged through :class:`~brittle.search.problem.SearchProblem`:

- ``budget`` (tau) is the number of choices that may differ from the starting stimulus;
- ``score`` rebuilds the stimulus of each candidate and returns its **error margin**
  ``S(correct) - S(wrong)`` in bits under the attacked model (higher: the model
  prefers the wrong verb form more); distinct sentences are scored once and count
  against the query budget;
- ``feasible`` keeps the target dependency intact: the rebuilt gold tree is valid
  (:func:`~.stimuli.validate_stimulus`: the target noun is the subject of the verb's
  clause, Number features agree), the target noun, the verb and (experiment 1) every
  word from the target to the verb are those of the starting stimulus, and every
  changed choice is realised in the sentence (a noun beyond the chosen depth is not).

The target, its number, the verb pair and the adjective are never slots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from brittle.engine.agreement.lexicon import (
    PARTICIPLES,
    PEOPLE,
    PLACES,
    PRONOUN_PAIRS,
    SAY_VERBS,
    THINGS,
    THINK_VERBS,
    Number,
)
from brittle.engine.agreement.stimuli import (
    BRIDGE_VERBS,
    EXP1_DEPTHS,
    EXP2_DEPTHS,
    MATRIX_KINDS,
    Frame,
    Stimulus,
    build_sentence,
    validate_stimulus,
)
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.search.problem import Outcome, SearchProblem
from brittle.search.strategies.base import STRATEGIES
from brittle.search.table import SubstitutionTable

__all__ = [
    "AttackResult",
    "MarginScorer",
    "Slot",
    "attack_frame",
    "frame_of",
    "intact",
    "slots_for",
]

#: Margins of a batch of stimuli under the attacked model, bits (m,).
MarginFn = Callable[[Sequence[Stimulus]], NDArray[np.float64]]
METHOD = "agreement"

_PRONOUNS: dict[str, tuple[int, Number]] = {}
for _k, (_sg, _pl) in enumerate(PRONOUN_PAIRS):
    _PRONOUNS.setdefault(_sg.form, (_k, "sg"))
    _PRONOUNS.setdefault(_pl.form, (_k, "pl"))


@dataclass(frozen=True)
class Slot:
    """One choice of a frame.

    Attributes:
        name: ``depth``, ``person``, ``thing``, ``place``, ``pronoun``, ``participle``,
            ``say``, ``think``, ``matrix``, ``clause_pronoun.K`` or ``clause_verb.K``.
        values: every value it can take, as text (nouns as ``lemma:number``).
    """

    name: str
    values: tuple[str, ...]


def _nouns(lemmas: Sequence[str], avoid: str) -> tuple[str, ...]:
    return tuple(f"{lemma}:{n}" for lemma in lemmas if lemma != avoid for n in ("sg", "pl"))


def slots_for(frame: Frame) -> tuple[Slot, ...]:
    """The slots of ``frame``'s experiment, the target's lemma excluded from the nouns."""
    people = [n.lemma for n in PEOPLE]
    if frame.experiment == 1:
        return (
            Slot("depth", tuple(str(d) for d in EXP1_DEPTHS)),
            Slot("person", _nouns(people, frame.target)),
            Slot("pronoun", tuple(_PRONOUNS)),
            Slot("thing", _nouns([n.lemma for n in THINGS], frame.target)),
            Slot("place", _nouns([n.lemma for n in PLACES], frame.target)),
            Slot("participle", tuple(f for f, _ in PARTICIPLES)),
            Slot("say", tuple(f for f, _ in SAY_VERBS)),
            Slot("think", tuple(f for f, _ in THINK_VERBS)),
        )
    return (
        Slot("matrix", MATRIX_KINDS),
        Slot("depth", tuple(str(d) for d in EXP2_DEPTHS)),
        Slot("person", _nouns(people, frame.target)),
        Slot("place", _nouns([n.lemma for n in PLACES], frame.target)),
        *(Slot(f"clause_pronoun.{k}", ("I", "you")) for k in range(4)),
        *(Slot(f"clause_verb.{k}", BRIDGE_VERBS) for k in range(4)),
    )


def slot_value(frame: Frame, name: str) -> str:
    """The value ``frame`` gives slot ``name``."""
    person, thing, place, pron = frame.numbers
    if name == "depth":
        return str(frame.depth)
    if name == "person":
        return f"{frame.person}:{person}"
    if name == "thing":
        return f"{frame.thing}:{thing}"
    if name == "place":
        return f"{frame.place}:{place}"
    if name == "pronoun":
        pair = PRONOUN_PAIRS[frame.pronoun_pair]
        return (pair[0] if pron == "sg" else pair[1]).form
    if name.startswith("clause_pronoun."):
        return frame.clause_pronouns[int(name.rsplit(".", 1)[1])]
    if name.startswith("clause_verb."):
        return frame.clause_verbs[int(name.rsplit(".", 1)[1])]
    return str(getattr(frame, name))


def _with(frame: Frame, name: str, value: str) -> Frame:
    numbers = list(frame.numbers)
    if name == "depth":
        return replace(frame, depth=int(value))
    if name in ("person", "thing", "place"):
        lemma, number = value.split(":")
        numbers[("person", "thing", "place").index(name)] = number  # type: ignore[call-overload]
        changes: dict[str, Any] = {name: lemma, "numbers": tuple(numbers)}
        return replace(frame, **changes)
    if name == "pronoun":
        pair, number = _PRONOUNS[value]
        numbers[3] = number
        return replace(frame, pronoun_pair=pair, numbers=tuple(numbers))  # type: ignore[arg-type]
    if name.startswith(("clause_pronoun.", "clause_verb.")):
        field, k = name.rsplit(".", 1)
        attr = field + "s"
        values = list(getattr(frame, attr))
        values[int(k)] = value
        listed: dict[str, Any] = {attr: tuple(values)}
        return replace(frame, **listed)
    plain: dict[str, Any] = {name: value}
    return replace(frame, **plain)


def frame_of(base: Frame, slots: Sequence[Slot], p: Perturbation) -> Frame:
    """The frame a perturbation of the slot table describes (``positions`` index
    ``slots``; ``replacements`` are values)."""
    frame = base
    for i, value in zip(p.positions, p.replacements, strict=True):
        frame = _with(frame, slots[i].name, value)
    return frame


def _realised(frame: Frame, name: str) -> bool:
    """Whether slot ``name`` shows in the sentence of ``frame``."""
    if name in ("depth", "matrix"):
        return True
    d = frame.depth
    if frame.experiment == 1:
        need = {"person": 1, "say": 1, "pronoun": 2, "think": 2, "thing": 3, "participle": 3}
        return d >= need.get(name, 4)
    if name == "person":
        return frame.matrix != "none"
    if name == "place":
        return frame.matrix == "complex"
    return d > int(name.rsplit(".", 1)[1])


def intact(base: Stimulus, candidate: Stimulus) -> bool:
    """Whether ``candidate`` keeps ``base``'s target dependency (see the module)."""
    if validate_stimulus(candidate):
        return False
    b, c = base.sentence.words, candidate.sentence.words
    if b[base.target].form != c[candidate.target].form:
        return False
    if b[base.verb_index].form != c[candidate.verb_index].form:
        return False
    if candidate.experiment == 1:
        before = [t.form for t in b[base.target : base.verb_index + 1]]
        after = [t.form for t in c[candidate.target : candidate.verb_index + 1]]
        return before == after
    return True


class MarginScorer:
    """Error margins of stimuli with a query budget; each distinct sentence is scored
    once (the cache outlives one search, so an item's design cells cost nothing twice).

    Args:
        margins: the model's margins of a batch of stimuli, bits (m,).
    """

    def __init__(self, margins: MarginFn) -> None:
        self.margins = margins
        self._cache: dict[str, float] = {}
        self.queries = 0

    def __call__(
        self, stimuli: Sequence[Stimulus], *, limit: int | None = None
    ) -> NDArray[np.float64]:
        """Margins (m,) for the first ``m`` stimuli whose new sentences fit in ``limit``
        more queries (``None``: no limit)."""
        keep: list[Stimulus] = []
        fresh: dict[str, Stimulus] = {}
        for s in stimuli:
            text = s.sentence.text
            if text not in self._cache and text not in fresh:
                if limit is not None and len(fresh) >= limit:
                    break
                fresh[text] = s
            keep.append(s)
        if fresh:
            values = self.margins(list(fresh.values()))
            self._cache.update(zip(fresh, values.tolist(), strict=True))
            self.queries += len(fresh)
        return np.array([self._cache[s.sentence.text] for s in keep], dtype=np.float64)


@dataclass(frozen=True)
class AttackResult:
    """The search of one starting stimulus.

    Attributes:
        base: the starting stimulus (a design cell).
        worst: the worst stimulus found (``base`` when nothing beat it).
        base_margin: the error margin of ``base``, bits.
        worst_margin: the error margin of ``worst``, bits.
        changes: ``slot=value`` of each changed choice.
        queries: distinct sentences the search scored.
    """

    base: Stimulus
    worst: Stimulus
    base_margin: float
    worst_margin: float
    changes: tuple[str, ...]
    queries: int


def attack_frame(
    base: Frame,
    scorer: MarginScorer,
    *,
    search: str = "beam",
    budget: int = 3,
    queries: int = 200,
    parameters: dict[str, int] | None = None,
    seed: int = 0,
) -> AttackResult:
    """Search the stimuli within ``budget`` changed choices of ``base`` for the largest
    error margin, with the registered strategy ``search``.

    Args:
        base: the starting frame.
        scorer: margins under the attacked model (shared across items).
        search: a strategy name (``sample``, ``greedy``, ``beam``, ...).
        budget: most choices changed (tau, >= 1).
        queries: most distinct sentences scored for this item (>= 1).
        parameters: the strategy's parameters (``candidates``, ``beam_width``).
        seed: seed of the strategy's generator.
    """
    if budget < 1:
        raise ConfigError(f"budget must be at least 1, got {budget}")
    if queries < 1:
        raise ConfigError(f"queries must be at least 1, got {queries}")
    try:
        strategy_cls = STRATEGIES.get(search)
    except KeyError:
        raise ConfigError(
            f"unknown search {search!r} (known: {', '.join(STRATEGIES.names())})"
        ) from None
    wanted = set(strategy_cls.parameters())
    strategy = strategy_cls(**{k: v for k, v in (parameters or {}).items() if k in wanted})
    slots = slots_for(base)
    base_stim = Stimulus.from_sentence(build_sentence(base))
    current = {s.name: slot_value(base, s.name) for s in slots}
    table = SubstitutionTable.from_mapping(
        base_stim.sent_id,
        METHOD,
        len(slots),
        {i: [(v, "_") for v in s.values if v != current[s.name]] for i, s in enumerate(slots)},
    )
    before = scorer.queries
    base_margin = float(scorer([base_stim])[0])

    def stimulus(p: Perturbation) -> Stimulus:
        return Stimulus.from_sentence(build_sentence(frame_of(base, slots, p)))

    def score(candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        left = queries - (scorer.queries - before)
        return scorer([stimulus(p) for p in candidates], limit=max(left, 0))

    def feasible(candidates: Sequence[Perturbation]) -> NDArray[np.bool_]:
        out = np.zeros(len(candidates), dtype=np.bool_)
        for j, p in enumerate(candidates):
            frame = frame_of(base, slots, p)
            out[j] = all(_realised(frame, slots[i].name) for i in p.positions) and intact(
                base_stim, Stimulus.from_sentence(build_sentence(frame))
            )
        return out

    problem = SearchProblem(
        table=table,
        budget=budget,
        score=score,
        feasible=feasible,
        is_exhausted=lambda: scorer.queries - before >= queries,
    )
    outcome: Outcome = strategy.search(problem, rng=np.random.default_rng([seed, base.item]))
    worst, worst_margin = base_stim, base_margin
    if outcome.success and outcome.damage > base_margin:
        worst, worst_margin = stimulus(outcome.best), float(outcome.damage)
    changes = (
        tuple(
            f"{slots[i].name}={v}"
            for i, v in zip(outcome.best.positions, outcome.best.replacements, strict=True)
        )
        if worst is not base_stim
        else ()
    )
    return AttackResult(
        base_stim, worst, base_margin, worst_margin, changes, scorer.queries - before
    )
