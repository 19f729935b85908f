"""How a verb is used in its tree, and which WordNet frames allow that use."""

from __future__ import annotations

import pytest
from test_generators_helpers import make_sentence

from brittle.search.generators.frames import FRAMES_BY_USE, fits, verb_use

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
}


@pytest.mark.parametrize(
    ("case", "index", "use"),
    [
        ("transitive", 1, "transitive"),
        ("passive", 2, "transitive"),
        ("clause", 1, "clause"),
        ("intransitive", 1, "intransitive"),
        ("open", 1, "other"),
        ("clause", 4, "intransitive"),  # "rained" has only a marker and a subject
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
