"""Validity presets: a generator, its options and its constraints, named for what they keep.

A perturbation is *tree-valid* when the original gold tree (heads, relations, UPOS) is
still the right analysis of the new sentence, *grammatical* when it is also good
English, and *meaning-keeping* when it says the same thing. Generators alone do not
say which of these their output is: a preset does, by construction.

- ``tree``: Jabberwocky as Hall Maudslay & Cotterell built it, short pronounceable
  nonwords (``stems=syllable``) in the slots whose fine tag a regular English form
  shows (``slots=regular``: common nouns, lexical verbs, adjectives, ``-ly`` manner
  adverbs; a proper adjective standing on its own, *Iraqi* troops, gets a capitalised
  nonword in ``-ian``). A nonword carries no lexical meaning, so the gold tree stays the analysis
  by construction; no re-parse is asked for (a parser's guess about a nonword would
  reject exactly the sentences the preset is for), only the word budget.
- ``grammatical``: random real words in the same regularly inflected slots, drawn
  only among content words (no function word in or out), verbs with a WordNet frame
  for the use the tree shows, count or mass nouns as the slot needs, inflected to
  agree; the ``retag`` constraint then asks the parser to tag each new word with the
  gold UPOS (a word the parser reads as another class would change the analysis), and
  ``judged:grammatical`` asks brittle's judges to grade the sentence grammatical (on
  the first 60 sentences of GUM test: 58 changed, as without it, where the judges had
  graded 90% grammatical).
- ``meaning``: coPOS synonyms of the sense each word has in its sentence (a verb's
  senses only those whose WordNet frames fit its use, ``verb_frames``; a word whose
  sense is unsure only with the synonyms that are read in that sense once put in the
  sentence, ``confirm``), kept only when each changed word and the sentence stay close
  in meaning (``word-similarity``, ``similarity``) and brittle's own judges grade it
  meaning-kept (``judged:meaning``: they read the tree and the surprisal at the changed
  words, which ``syntax`` and ``fluency`` read more coarsely over the whole sentence
  and which rejected good synonyms there: *Results* → *Outcomes*, *consequences* →
  *effects*). On the first 60 sentences of GUM test (beam, tau 2) it changes 35, 32 of
  them read as keeping the meaning; on held-out text fewer keep it (GUM dev 28 of 40,
  EWT test 15 of 18, EWT dev 19 of 25: docs/validity.md).

``attack``, ``perturb`` and the demo resolve ``--validity NAME`` through
:data:`PRESETS` and print the resolved generator and constraints when they start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.registry import Registry

__all__ = [
    "MEANING_CONSTRAINTS",
    "PRESETS",
    "ValidityLevel",
    "ValidityPreset",
    "presets_markdown",
    "resolve_preset",
]

#: What a preset keeps, from the weakest to the strictest.
ValidityLevel = Literal["tree", "grammatical", "meaning"]

#: The constraints that keep a sentence as likely and as close in meaning (coPOS, coCO).
#: What passes does not depend on their order; the attack checks each only on what the
#: ones before it admitted, so the cheapest filter comes first: ``word-similarity``
#: rejects most of what coCO and coPOS propose (1,363 of coCO's candidates on 16 GUM
#: sentences, leaving ``similarity`` none to reject), and the sentence encoder then
#: reads only what it kept.
MEANING_CONSTRAINTS: tuple[str, ...] = ("word-similarity", "similarity", "fluency")


@dataclass(frozen=True, slots=True)
class ValidityPreset:
    """A generator with its options and constraints, valid at ``level`` by construction.

    Attributes:
        level: what every perturbation it keeps preserves.
        method: the registered generator.
        generator_options: ``NAME=VALUE`` options of the generator.
        constraints: constraint specs (``NAME[:VALUE]``); a bare ``syntax`` or
            ``budget`` takes the run's threshold and budget.
        summary: one line for ``--help`` and the start of a run.
    """

    level: ValidityLevel
    method: str
    generator_options: tuple[str, ...]
    constraints: tuple[str, ...]
    summary: str

    def describe(self) -> str:
        """``method -o options... constraints: ...``, as a run prints it."""
        options = "".join(f" -o {o}" for o in self.generator_options)
        return f"{self.method}{options}; constraints: {', '.join(self.constraints)}"


#: The presets, by name (``--validity NAME``).
PRESETS: Registry[ValidityPreset] = Registry(
    "presets", contract=ValidityPreset, item="validity preset"
)

PRESETS.register("tree", help="nonwords in regularly inflected slots: the gold tree holds")(
    ValidityPreset(
        level="tree",
        method="jabberwocky",
        generator_options=("stems=syllable", "slots=regular"),
        constraints=("budget",),
        summary="Jabberwocky nonwords (one syllable, the slot's regular inflection) in "
        "common nouns, lexical verbs, adjectives (a proper adjective gets a capitalised "
        "one in -ian) and -ly adverbs",
    )
)
PRESETS.register("grammatical", help="real words of the slot's class, frame and count")(
    ValidityPreset(
        level="grammatical",
        method="random",
        generator_options=(
            "slots=regular",
            "function_words=false",
            "frames=true",
            "countability=true",
            "wordnet_pos=true",
            "oversample=10",
        ),
        constraints=("budget", "retag", "judged:grammatical"),
        summary="random real words of the slot's fine tag that WordNet knows in the "
        "slot's part of speech, no function words, verbs with a frame for the slot's use, "
        "adjectives that may stand where the slot's does, count or mass nouns as the slot "
        "needs, the parser's tag of each new word the gold one, and brittle's judges "
        "grading it grammatical",
    )
)
PRESETS.register("meaning", help="in-sense WordNet synonyms, checked for sense and syntax")(
    ValidityPreset(
        level="meaning",
        method="copos",
        generator_options=("confirm=true", "verb_frames=true"),
        constraints=("budget", "word-similarity", "similarity", "judged:meaning"),
        summary="coPOS synonyms of each word's sense in context (a verb's senses only "
        "those whose frames fit its use; a word of unsure sense only with synonyms read "
        "in that sense), each changed word and the sentence as close in meaning, and "
        "brittle's judges grading it meaning-kept",
    )
)


def resolve_preset(
    name: str, *, method: str | None, constraints: tuple[str, ...]
) -> tuple[ValidityPreset, tuple[str, ...]]:
    """The preset ``name`` and the constraints a run applies with it.

    Args:
        name: the preset (``--validity``).
        method: a ``--method`` the user gave as well (``None``: none); it must be the
            preset's own.
        constraints: ``--constraint`` specs the user gave; they are added after the
            preset's.

    Raises:
        ConfigError: an unknown preset, or a ``--method`` that is not the preset's.
    """
    preset = PRESETS.get(name)
    if method is not None and method != preset.method:
        raise ConfigError(
            f"--validity {name} uses --method {preset.method}; drop --method {method} "
            "or drop --validity"
        )
    extra = tuple(c for c in constraints if c not in preset.constraints)
    return preset, preset.constraints + extra


def presets_markdown() -> str:
    """docs/presets.md, generated from :data:`PRESETS` (``make docs`` writes it; a test
    checks the committed page is today's)."""
    lines = [
        "# Validity presets",
        "",
        "<!-- generated by `make docs` from brittle.search.presets; do not edit -->",
        "",
        "`--validity NAME` (in `brittle perturb` and `brittle attack`) picks a generator with",
        "the options and constraints that keep, by construction, what the preset is named",
        "for. Extra `--constraint` and `-o` options are added to the preset's; a `--method`",
        "other than the preset's is refused. The run prints the constraints it applies.",
        "",
        "| preset | keeps | method | generator options | constraints |",
        "| --- | --- | --- | --- | --- |",
    ]
    for entry in PRESETS.entries():
        preset = entry.obj
        options = ", ".join(f"`{o}`" for o in preset.generator_options) or "–"
        constraints = ", ".join(f"`{c}`" for c in preset.constraints)
        lines.append(
            f"| `{entry.name}` | {preset.level} | `{preset.method}` | {options} | {constraints} |"
        )
    lines.append("")
    for entry in PRESETS.entries():
        lines += [f"**{entry.name}**: {entry.obj.summary}.", ""]
    return "\n".join(lines)
