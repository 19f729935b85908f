"""How a verb is used in its tree, and which WordNet frames allow that use."""

from __future__ import annotations

import pytest
from test_generators_helpers import make_sentence

from brittle.search.generators.frames import (
    FRAMES_BY_USE,
    fits,
    infinitive_after_object,
    infinitive_fits,
    slot_uses,
    synonym_fits,
    verb_fits,
    verb_use,
)

# one verb (word 2) per sentence, with the dependents that decide its use
CASES = {
    "transitive": "1 I I PRON PRP _ 2 nsubj\n2 hid hide VERB VBD _ 0 root\n"
    "3 it it PRON PRP _ 2 obj",
    "passive": "1 It it PRON PRP _ 3 nsubj:pass\n2 was be AUX VBD _ 3 aux:pass\n"
    "3 hidden hide VERB VBN _ 0 root",
    "clause": "1 I I PRON PRP _ 2 nsubj\n2 said say VERB VBD _ 0 root\n"
    "3 that that SCONJ IN _ 5 mark\n4 it it PRON PRP _ 5 nsubj\n5 rained rain VERB VBD _ 2 ccomp",
    "intransitive": "1 I I PRON PRP _ 2 nsubj\n2 hid hide VERB VBD _ 0 root\n"
    "3 behind behind ADP IN _ 4 case\n4 it it PRON PRP _ 2 obl",
    "open": "1 I I PRON PRP _ 2 nsubj\n2 want want VERB VBP _ 0 root\n3 to to PART TO _ 4 mark\n"
    "4 go go VERB VB _ 2 xcomp",
    "gerund": "1 I I PRON PRP _ 2 nsubj\n2 kept keep VERB VBD _ 0 root\n"
    "3 going go VERB VBG _ 2 xcomp",
    "predicative": "1 It it PRON PRP _ 2 nsubj\n2 seems seem VERB VBZ _ 0 root\n"
    "3 fine fine ADJ JJ _ 2 xcomp",
    # "the tools they use": the object is the noun the relative clause modifies
    "relative": "1 the the DET DT _ 2 det\n2 tools tool NOUN NNS _ 0 root\n"
    "3 they they PRON PRP _ 4 nsubj\n4 use use VERB VBP _ 2 acl:relcl",
    # "thwarted by Britain": a passive participle with its agent
    "agent": "1 plots plot NOUN NNS _ 0 root\n2 thwarted thwart VERB VBN _ 1 acl\n"
    "3 by by ADP IN _ 4 case\n4 Britain Britain PROPN NNP _ 2 obl:agent",
    # "a plan based in Pakistan": the participle's object is the noun it modifies
    "participle": "1 a a DET DT _ 2 det\n2 plan plan NOUN NN _ 0 root\n"
    "3 based base VERB VBN _ 2 acl\n4 in in ADP IN _ 5 case\n5 Pakistan Pakistan PROPN NNP _ 3 obl",
}


@pytest.mark.parametrize(
    ("case", "index", "use"),
    [
        ("transitive", 1, "transitive"),
        ("passive", 2, "transitive"),
        ("clause", 1, "clause"),
        ("intransitive", 1, "intransitive"),
        ("open", 1, "infinitive"),
        ("gerund", 1, "gerund"),
        ("predicative", 1, "other"),
        ("clause", 4, "intransitive"),  # "rained" has only a marker and a subject
        ("relative", 3, "other"),
        ("agent", 1, "transitive"),
        ("participle", 2, "transitive"),
    ],
)
def test_verb_use_reads_the_dependents(case: str, index: int, use: str) -> None:
    assert verb_use(make_sentence(case, CASES[case]), index) == use


def test_a_sentence_without_a_tree_is_not_judged() -> None:
    bare = make_sentence("bare", "1 I I PRON PRP _ _ _\n2 hid hide VERB VBD _ _ _")
    assert verb_use(bare, 1) == "other"


def test_fits() -> None:
    assert fits([8, 9, 10, 11], "transitive") and not fits([8, 9, 10, 11], "intransitive")
    assert fits([1, 2], "intransitive") and not fits([1, 2], "clause")
    assert fits([8, 11, 26], "clause") and not fits([16, 24], "clause")
    assert fits([16, 24], "other") and fits([], "intransitive")  # unjudged, or no frames
    assert all(1 <= f <= 35 for frames in FRAMES_BY_USE.values() for f in frames)
    assert fits([28], "infinitive") and not fits([8, 11], "infinitive")
    assert fits([33], "gerund") and not fits([28], "gerund")


def test_verbs_of_informing_take_no_bare_clause() -> None:
    # WordNet gives "tell" frame 26 ("Somebody ----s that CLAUSE"); English does not
    assert fits([8, 11, 26], "clause") and not synonym_fits("tell", [8, 11, 26], "clause")
    assert synonym_fits("tell", [8, 11, 26], "transitive")
    assert synonym_fits("state", [8, 11, 26], "clause")


# "Let me know" and "Allow me to know": an object, then a bare or a to-infinitive
LET = "1 Let let VERB VB _ 0 root\n2 me I PRON PRP _ 1 obj\n3 know know VERB VB _ 1 xcomp"
ALLOW = (
    "1 Allow allow VERB VB _ 0 root\n2 me I PRON PRP _ 1 obj\n3 to to PART TO _ 4 mark\n"
    "4 know know VERB VB _ 1 xcomp"
)


def test_the_infinitive_after_an_object_is_read_from_the_tree() -> None:
    let, allow = make_sentence("let", LET), make_sentence("allow", ALLOW)
    assert infinitive_after_object(let, 0) == "bare"
    assert infinitive_after_object(allow, 0) == "to"
    assert infinitive_after_object(make_sentence("open", CASES["open"]), 1) is None  # no object
    assert infinitive_after_object(make_sentence("t", CASES["transitive"]), 1) is None
    assert "bare-infinitive-after-object" in slot_uses(let, 0)
    assert "to-infinitive-after-object" in slot_uses(allow, 0)


def test_only_causative_and_perception_verbs_take_a_bare_infinitive() -> None:
    # WordNet gives "allow" and "permit" frame 25 ("Somebody ----s somebody INFINITIVE")
    # in let.v.01; English wants "allow them to know"
    assert infinitive_fits("let", "bare") and infinitive_fits("Make", "bare")
    assert not infinitive_fits("allow", "bare") and not infinitive_fits("permit", "bare")
    assert infinitive_fits("allow", "to") and not infinitive_fits("let", "to")
    assert infinitive_fits("help", "to") and infinitive_fits("help", "bare")
    assert infinitive_fits("allow", None) and infinitive_fits("let", None)


def test_a_verb_in_a_bare_infinitive_slot_must_take_one() -> None:
    uses = slot_uses(make_sentence("let", LET), 0)
    assert verb_fits("make", uses) and not verb_fits("allow", uses)
    assert verb_fits("allow", slot_uses(make_sentence("allow", ALLOW), 0))
