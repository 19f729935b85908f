"""Validity presets (``--validity tree|meaning``) and the nonwords of the ``tree`` preset."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from brittle.cli.main import main
from brittle.engine.core.conllu import iter_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.closed_class import is_function_word
from brittle.search.generators.frames import slot_uses, stands_alone, verb_fits, verb_frames
from brittle.search.generators.inflection import regular_inflection
from brittle.search.generators.jabberwocky import Jabberwocky
from brittle.search.generators.random_words import (
    RandomWords,
    adjective_position,
    adjective_positions,
    wordnet_has,
)
from brittle.search.generators.slots import (
    common_case,
    demonym,
    kept_slot,
    kept_word,
    proper_adjective,
    slot_tag,
)
from brittle.search.generators.syllables import ONSETS, RHYMES, SyllableStems
from brittle.search.generators.usage import deictic_determiner, is_countable
from brittle.search.presets import PRESETS, resolve_preset

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
OPEN_CLASS = ("NOUN", "VERB", "ADJ", "ADV")
#: One syllable as English spells it: a consonant onset (or none), one vowel group,
#: a consonant coda, and at most a silent e.
SYLLABLE = re.compile(r"^[b-df-hj-np-tv-z]*(a|e|i|o|u|ai|ea|ee|oa|oo)[b-df-hj-np-tv-z]+e?$")


def test_every_stem_is_one_pronounceable_syllable() -> None:
    stems = SyllableStems().stems
    assert len(stems) > 2000 and len(set(stems)) == len(stems)
    for stem in stems:
        assert SYLLABLE.match(stem), stem
        assert not stem.endswith(("s", "y", "w", "x")), stem
    assert len(ONSETS) > 30 and len(RHYMES) > 50


@given(st.integers(0, 2**32 - 1))
def test_stems_inflect_regularly(seed: int) -> None:
    stem = SyllableStems().sample(np.random.default_rng(seed))
    assert stem is not None
    plural = regular_inflection(stem, "NNS")
    ing = regular_inflection(stem, "VBG")
    past = regular_inflection(stem, "VBD")
    assert plural in (stem + "s", stem + "es")
    assert ing.endswith("ing") and past.endswith("ed")
    base = stem[:-1] if stem.endswith("e") else stem
    assert ing.startswith(base) and past.startswith(base)  # the stem stays readable
    if stem.endswith("e"):  # silent e drops: blate -> blating, blated
        assert ing == base + "ing" and past == base + "ed"


def test_slots_of_the_paper_and_the_regular_forms() -> None:
    verb = {"VerbForm": "Fin", "Mood": "Ind", "Tense": "Past"}
    assert slot_tag("VERB", "VBD", verb, "walked", "paper") is None
    assert slot_tag("VERB", "VBD", verb, "walked", "regular") == "VBD"
    assert slot_tag("VERB", "VBD", verb, "walked", "content") == "VBD"
    assert slot_tag("NOUN", "NNS", {"Number": "Plur"}, "dogs", "paper") == "NNS"
    assert slot_tag("ADJ", "JJR", {"Degree": "Cmp"}, "bigger", "regular") == "JJR"
    assert slot_tag("ADV", "RB", {}, "quickly", "regular") == "RB"
    for adverb in ("where", "soon", "also", "only", "fly"):
        assert slot_tag("ADV", "RB", {}, adverb, "regular") is None, adverb
    assert slot_tag("ADV", "RBR", {"Degree": "Cmp"}, "faster", "regular") is None
    assert slot_tag("PROPN", "NNP", {}, "Paris", "regular") is None
    assert common_case("dog", 3) and common_case("Dogs", 0)
    assert not common_case("States", 4) and not common_case("NEIGHBOURS", 0)


@pytest.mark.needs("glove")
def test_the_tree_generator_keeps_tag_shapes(ewt_test: Path) -> None:
    sentences = [s for _, s in zip(range(120), iter_conllu(ewt_test), strict=False)]
    tables = Jabberwocky(stems="syllable", slots="regular").candidates(sentences, top_k=3)
    seen = 0
    for sentence, table in zip(sentences, tables, strict=True):
        for position, options in table.entries:
            word = sentence.words[position]
            proper = proper_adjective(sentence, position)
            assert word.upos in OPEN_CLASS and (common_case(word.form, position) or proper)
            for form, lemma in options:
                seen += 1
                low = form.lower()
                if proper:  # *Iraqi* -> *Flurgian*: shaped as a proper adjective
                    assert form.istitle() and low.endswith("ian")
                if word.xpos in ("NNS", "VBZ"):
                    assert low.endswith("s")
                if word.xpos == "VBG":
                    assert low.endswith("ing")
                if word.xpos in ("VBD", "VBN"):
                    assert low.endswith("ed")
                if word.upos == "ADV":
                    assert low.endswith("ly") and lemma.endswith("ly")
                if word.xpos == "NN":
                    assert form.lower() == lemma
    assert seen > 1000


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.needs("spacy-model", "glove")
def test_perturb_tree_replaces_most_open_class_words(tmp_path: Path) -> None:
    out, report = tmp_path / "t.conllu", tmp_path / "t.json"
    result = run(
        "perturb", TREEBANK, "--validity", "tree", "--budget", "all", "--limit", "40",
        "--no-quality", "--out", out, "--report", report,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "perturb jabberwocky: constraints budget" in result.output
    assert "graded tree-valid" in result.output  # graded by default
    validity = json.loads(report.read_text())["methods"]["jabberwocky"]["validity"]
    assert validity["graded"] == 40 and validity["shares"]["tree"] >= 0.95, validity
    assert "Validity=tree" in out.read_text()
    plain = tmp_path / "plain.conllu"
    result = run(
        "perturb", TREEBANK, "--validity", "tree", "--limit", "3", "--no-quality",
        "--no-grade", "--out", plain,
    )  # fmt: skip
    assert f"brittle grade {TREEBANK} {plain} --json" in result.output  # how to grade it
    assert "Validity=" not in plain.read_text() and "graded" not in result.output
    originals = [s for _, s in zip(range(40), iter_conllu(TREEBANK), strict=False)]
    changed = total = 0
    for before, after in zip(originals, iter_conllu(out), strict=True):
        for a, b in zip(before.words, after.words, strict=True):
            assert (a.head, a.deprel, a.upos, a.xpos) == (b.head, b.deprel, b.upos, b.xpos)
            if a.upos in OPEN_CLASS:
                total += 1
                changed += a.form != b.form
    assert changed / total >= 0.8, (changed, total)


def test_presets_resolve_and_refuse_another_method() -> None:
    tree, constraints = resolve_preset("tree", method=None, constraints=("retag",))
    assert tree.method == "jabberwocky" and constraints == ("budget", "retag")
    meaning, constraints = resolve_preset("meaning", method="copos", constraints=("budget",))
    assert constraints == meaning.constraints and "similarity" in constraints
    with pytest.raises(ConfigError, match="--validity tree uses --method jabberwocky"):
        resolve_preset("tree", method="copos", constraints=())
    assert set(PRESETS.names()) >= {"tree", "meaning"}


def test_perturb_needs_a_method_or_a_preset(tmp_path: Path) -> None:
    result = run("perturb", TREEBANK, "--out", tmp_path / "o.conllu")
    assert result.exit_code == 2 and "give --method, or --validity" in result.output
    result = run("perturb", TREEBANK, "--validity", "nope", "--out", tmp_path / "o.conllu")
    assert result.exit_code == 2 and "unknown validity preset 'nope'" in result.output
    result = run(
        "perturb", TREEBANK, "--validity", "tree", "--method", "random",
        "--out", tmp_path / "o.conllu",
    )  # fmt: skip
    assert result.exit_code == 2 and "uses --method jabberwocky" in result.output


@pytest.mark.needs("spacy-model", "glove")
def test_attack_with_the_tree_preset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, static_probe: Path
) -> None:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    probe = static_probe
    out = tmp_path / "out"
    result = run(
        "attack", TREEBANK, "--probe", probe, "--validity", "tree", "--budget", "2",
        "--limit", "3", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "attack jabberwocky: constraints budget" in result.output
    config = json.loads((out / "config.json").read_text())
    assert config["method"] == "jabberwocky" and config["constraints"] == ["budget"]
    assert config["generator_options"] == ["stems=syllable", "slots=regular"]


# ------------------------------------------------------------------ grammatical preset
def sentence_of(text: str) -> Sentence:
    """One sentence from CoNLL-U rows written as ``form upos xpos head deprel`` lines
    (``form lemma upos xpos head deprel`` where the lemma matters)."""
    rows = []
    for n, line in enumerate(text.strip().splitlines(), 1):
        parts = line.split()
        form, lemma = parts[0], parts[1] if len(parts) == 6 else "_"
        upos, xpos, head, deprel = parts[-4:]
        rows.append(f"{n}\t{form}\t{lemma}\t{upos}\t{xpos}\t_\t{head}\t{deprel}\t_\t_")
    return read_sentences("# sent_id = s\n# text = x\n" + "\n".join(rows) + "\n\n")[0]


def read_sentences(text: str) -> list[Sentence]:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "s.conllu"
        path.write_text(text)
        return list(iter_conllu(path))


PASSIVE_PREDICATE = """
they PRON PRP 4 nsubj:pass
can AUX MD 4 aux
be AUX VB 4 aux:pass
considered VERB VBN 0 root
representative ADJ JJ 4 xcomp
"""
TRANSITIVE = """
we PRON PRP 2 nsubj
examined VERB VBD 0 root
the DET DT 5 det
large ADJ JJ 5 amod
proportions NOUN NNS 2 obj
"""


def test_verb_uses_and_frames() -> None:
    assert slot_uses(sentence_of(PASSIVE_PREDICATE), 3) == {"transitive", "predicative"}
    transitive = sentence_of(TRANSITIVE)
    assert slot_uses(transitive, 1) == {"transitive"}
    assert verb_fits("examine", frozenset({"transitive"}))
    assert not verb_fits("arrive", frozenset({"transitive"}))  # no object frame
    assert not verb_fits("parsley", frozenset({"intransitive"}))  # not a verb
    assert verb_fits("consider", frozenset({"transitive", "predicative"}))
    assert not verb_fits("examine", frozenset({"transitive", "predicative"}))
    # a predicative frame is no frame for a verb with no complement at all
    assert not stands_alone(verb_frames("seem")) and stands_alone(verb_frames("arrive"))
    # "Somebody ----s Adjective" without a raising frame: WordNet's for verbs of digging
    assert stands_alone(verb_frames("excavate"))
    assert verb_fits("seem", frozenset({"predicative"}))
    assert stands_alone(frozenset())  # no frames: not judged


INTRANSITIVE = """
they PRON PRP 2 nsubj
appeared VERB VBD 0 root
at ADP IN 4 case
Newsday PROPN NNP 2 obl
"""


@pytest.mark.needs("glove")
def test_a_verb_slot_with_no_complement_draws_no_verb_that_wants_one() -> None:
    """The `grammatical` preset's draws for *they appeared at Newsday*: no raising verb
    whose only intransitive frames are predicative (*seem*)."""
    options = dict(slots="regular", function_words=False, frames=True, countability=True)
    generator = RandomWords(oversample=40, **options)  # type: ignore[arg-type]
    fits = generator._fit(sentence_of(INTRANSITIVE), 1)
    assert fits("arrive") and not fits("seem") and fits("excavate")


def test_adjective_positions() -> None:
    assert adjective_positions("afloat") == {"predicative"}
    assert adjective_positions("ablaze") == {"predicative"}  # two of its four senses (p)
    assert adjective_positions("former") == {"attributive"}
    assert adjective_positions("large") == {"attributive", "predicative"}
    assert adjective_position(sentence_of(TRANSITIVE), 3) == "attributive"


def test_function_words_are_never_drawn_nor_replaced() -> None:
    lexicon = RandomWords().lexicon
    for word in ("could", "or", "where", "so", "can", "get", "might"):
        assert is_function_word(word, lexicon), word
    assert wordnet_has("dog", "n") and not wordnet_has("frosty", "n")
    assert not wordnet_has("predate", "n") and wordnet_has("predate", "v")
    for word in ("dog", "examine", "large", "quickly"):
        assert not is_function_word(word, lexicon), word


@pytest.mark.needs("glove")
def test_the_grammatical_generator_keeps_class_frame_and_count(ewt_test: Path) -> None:
    sentences = [s for _, s in zip(range(150), iter_conllu(ewt_test), strict=False)]
    options = dict(
        slots="regular", function_words=False, frames=True, countability=True, oversample=10
    )
    generator = RandomWords(**options)  # type: ignore[arg-type]
    tables = generator.candidates(sentences, top_k=4)
    drawn = 0
    for sentence, table in zip(sentences, tables, strict=True):
        for position, entries in table.entries:
            word = sentence.words[position]
            assert not is_function_word(word.form, generator.lexicon)
            if word.upos == "VERB":
                assert slot_uses(sentence, position) <= {"transitive", "intransitive"}
            for form, lemma in entries:
                drawn += 1
                assert not is_function_word(lemma, generator.lexicon), (form, word.form)
                if word.upos == "VERB":
                    assert verb_fits(lemma, slot_uses(sentence, position)), (lemma, word.form)
                if word.upos == "ADV":
                    assert form.lower().endswith("ly")
                if word.upos == "NOUN" and word.xpos == "NNS":
                    assert is_countable(lemma), lemma
    assert drawn > 300
    assert PRESETS.get("grammatical").method == "random"


def test_the_presets_page_is_generated_from_todays_presets() -> None:
    from brittle.search.presets import presets_markdown

    page = Path(__file__).resolve().parents[1] / "docs" / "presets.md"
    assert page.read_text() == presets_markdown(), "run `make docs`"


@pytest.mark.needs("spacy-model", "glove")
@pytest.mark.slow
def test_attack_grades_its_kept_perturbations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, static_probe: Path
) -> None:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    probe = static_probe
    out = tmp_path / "out"
    result = run(
        "attack", TREEBANK, "--probe", probe, "--validity", "tree", "--budget", "2",
        "--limit", "3", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "validity of the" in result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    kept = [r for r in rows if r["success"]]
    assert kept and all(set(r["validity"]) >= {"tree_valid", "grammatical"} for r in kept)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["graded"] == len(kept)
    assert set(summary["validity"]["shares"]) == {"tree", "grammatical", "meaning"}
    adversarial = (out / "adversarial.conllu").read_bytes()
    assert b"Validity=" in adversarial
    assert "## Validity of the kept perturbations" in (out / "summary.md").read_text()
    assert 'data-key="v"' in (out / "report.html").read_text()  # the validity column
    assert run("report", out).exit_code == 0
    assert (out / "adversarial.conllu").read_bytes() == adversarial  # replayed alike
    plain = tmp_path / "plain"
    result = run(
        "attack", TREEBANK, "--probe", probe, "--validity", "tree", "--budget", "2",
        "--limit", "3", "--no-grade", "--out", plain,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "validity of the" not in result.output
    rows = [json.loads(line) for line in (plain / "results.jsonl").read_text().splitlines()]
    assert all(r.get("validity") is None for r in rows)
    assert json.loads((plain / "summary.json").read_text()).get("validity") is None
    assert "not graded (the run had `--no-grade`" in (plain / "summary.md").read_text()
    assert b"Validity=" not in (plain / "adversarial.conllu").read_bytes()


FOND = """
I PRON PRP 3 nsubj
am AUX VBP 3 cop
fond ADJ JJ 0 root
of ADP IN 5 case
cats NOUN NNS 3 obl
"""
TODAY = """
court NOUN NN 2 nsubj
ruled VERB VBD 0 root
today NOUN NN 2 obl:tmod
"""


@pytest.mark.needs("glove")
def test_adjectives_with_complements_and_adverbial_nouns_keep_their_word() -> None:
    options = dict(slots="regular", function_words=False, frames=True, countability=True)
    generator = RandomWords(oversample=10, **options)  # type: ignore[arg-type]
    fond, today = sentence_of(FOND), sentence_of(TODAY)
    tables = generator.candidates([fond, today], top_k=3)
    assert 2 not in tables[0].positions  # fond (of cats)
    assert 4 in tables[0].positions  # cats is a plain plural
    assert 2 not in tables[1].positions  # today
    assert 0 in tables[1].positions  # court


CONNECTION = """
nasty ADJ JJ 0 root
in ADP IN 3 case
connection NOUN NN 1 obl
with ADP IN 6 case
the DET DT 6 det
treaty NOUN NN 3 nmod
"""


@pytest.mark.needs("glove")
def test_a_count_noun_bare_in_a_phrase_keeps_its_word() -> None:
    options = dict(slots="regular", function_words=False, frames=True, countability=True)
    generator = RandomWords(oversample=10, **options)  # type: ignore[arg-type]
    (table,) = generator.candidates([sentence_of(CONNECTION)], top_k=3)
    assert 2 not in table.positions  # "in connection with": an idiom, not "in reliance with"
    assert 5 in table.positions  # "the treaty"
    plain = RandomWords(oversample=10, **{**options, "countability": False})  # type: ignore[arg-type]
    (loose,) = plain.candidates([sentence_of(CONNECTION)], top_k=3)
    assert 2 in loose.positions


DEICTIC = """
papers paper NOUN NNS 2 nsubj
printed print VERB VBD 0 root
it it PRON PRP 2 obj
last last ADJ JJ 5 amod
September September PROPN NNP 2 obl:unmarked
and and CCONJ CC 10 cc
the the DET DT 10 det
last last ADJ JJ 10 amod
long long ADJ JJ 10 amod
chapter chapter NOUN NN 5 conj
next next ADJ JJ 12 amod
weeks week NOUN NNS 2 obl:unmarked
"""


def test_last_before_a_bare_noun_is_a_determiner() -> None:
    """*last* or *next* before a singular noun or proper noun with no determiner of its
    own works as its determiner: no other adjective, nor a nonword, can stand there
    ("papers blaip September"); before *the last chapter* or plural *next weeks* it is
    an adjective like any other."""
    sentence = sentence_of(DEICTIC)
    assert [i for i in range(len(sentence)) if deictic_determiner(sentence, i)] == [3]
    assert kept_slot(sentence, 3) and not kept_slot(sentence, 7) and not kept_slot(sentence, 8)
    assert kept_slot(sentence_of(EXISTENTIAL), 3)  # few, as before


@pytest.mark.needs("glove")
def test_the_generators_keep_last_before_a_bare_month() -> None:
    sentence = sentence_of(DEICTIC)
    (nonwords,) = Jabberwocky(stems="syllable", slots="regular").candidates([sentence], top_k=3)
    assert 3 not in nonwords.positions and {7, 8}.issubset(nonwords.positions)
    options = dict(slots="regular", function_words=False, frames=True, countability=True)
    (words,) = RandomWords(oversample=10, **options).candidates([sentence], top_k=3)  # type: ignore[arg-type]
    assert 3 not in words.positions and 8 in words.positions


BARE = """
they they PRON PRP 2 nsubj
fled flee VERB VBD 0 root
from from ADP IN 5 case
hostile hostile ADJ JJ 5 amod
fire fire NOUN NN 2 obl
"""


@pytest.mark.needs("glove")
def test_a_bare_singular_takes_no_noun_that_is_also_an_adjective() -> None:
    """*to hostile fire* wants a mass noun; a noun that is also an adjective (*anti*,
    *crisp*) is counted by its form's frequency, mostly the adjective's, and looks like
    a mass noun when it is a count noun: none is drawn there."""
    options = dict(slots="regular", function_words=False, frames=True, countability=True)
    generator = RandomWords(oversample=40, **options)  # type: ignore[arg-type]
    (table,) = generator.candidates([sentence_of(BARE)], top_k=30)
    nouns = [form for form, _ in table.options(4)]
    assert len(nouns) >= 10
    for noun in nouns:
        assert not is_countable(noun) and "ADJ" not in generator.lexicon.upos(noun), noun
    assert not is_countable("anti") and "ADJ" in generator.lexicon.upos("anti")


EXISTENTIAL = """
there there PRON EX 2 expl
is be VERB VBZ 0 root
a a DET DT 5 det
few few ADJ JJ 5 amod
proofs proof NOUN NNS 2 nsubj
"""


@pytest.mark.needs("glove")
def test_be_and_quantifiers_keep_their_word() -> None:
    sentence = sentence_of(EXISTENTIAL)
    (table,) = Jabberwocky(stems="syllable", slots="regular").candidates([sentence], top_k=3)
    assert table.positions == (4,)  # proofs; not is (there is ...), not few (a few ...)
    assert kept_word("be", "is") and kept_word("few", "few") and not kept_word("dog", "dog")


PROPER = """
the the DET DT 3 det
Iraqi Iraqi ADJ JJ 3 amod
troops troop NOUN NNS 4 nsubj
met meet VERB VBD 0 root
Most most ADV RBS 6 advmod
Costly costly ADJ JJ 7 amod
Weather weather NOUN NN 4 obj
in in ADP IN 9 case
New New ADJ NNP 10 amod
York York PROPN NNP 4 obl
"""


@pytest.mark.needs("glove")
def test_a_proper_adjective_on_its_own_gets_a_pseudoword_shaped_as_one() -> None:
    """*Iraqi* troops: a capitalised adjective standing on its own is a slot, filled by a
    capitalised pseudoword ending in -ian; one in a run of capitals (a title) or tagged
    as part of a name (*New* York) keeps its word."""
    sentence = sentence_of(PROPER)
    assert [proper_adjective(sentence, i) for i in range(len(sentence))] == [
        False, True, False, False, False, False, False, False, False, False,
    ]  # fmt: skip
    (table,) = Jabberwocky(stems="syllable", slots="regular").candidates([sentence], top_k=3)
    assert 1 in table.positions and 5 not in table.positions and 8 not in table.positions
    for form, lemma in table.options(1):
        assert form.istitle() and form.endswith("ian") and lemma.endswith("ian")
    assert demonym("flurg") == "flurgian" and demonym("blora") == "blorian"
