"""Sentence.with_words: the copy's derived views (surface text, word rows, multiword
positions) carried over from the original where they still hold, and recomputed where
a replacement changes them; metadata set as with_metadata sets it."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.sentence import Sentence, Token

from support import FIXTURES

SENTENCES = read_conllu(FIXTURES / "mwt_empty.conllu")


def _fresh(s: Sentence) -> Sentence:
    """The same sentence with nothing computed yet."""
    return Sentence(s.sent_id, s.comments, s.rows, s.source, s.line)


def _warm(s: Sentence) -> Sentence:
    s.surface_text()
    _ = s.multiword_positions, s.forms
    return s


@st.composite
def edits(draw: st.DrawFn) -> tuple[Sentence, dict[int, Token], dict[str, str]]:
    s = draw(st.sampled_from(SENTENCES))
    positions = draw(st.sets(st.integers(0, len(s) - 1), max_size=len(s)))
    words: dict[int, Token] = {}
    for i in sorted(positions):
        old = s.words[i]
        form = draw(st.text("abcXYZ'", min_size=1, max_size=5))
        misc = draw(st.sampled_from(["_", "SpaceAfter=No", "Gloss=x|SpaceAfter=No", "Gloss=x"]))
        words[i] = replace(old, form=form, misc=misc)
    keys = draw(st.lists(st.sampled_from(["text", "perturbation", "sent_id", "new"]), unique=True))
    return s, words, {k: f"v-{k}" for k in keys}


@settings(max_examples=200, deadline=None)
@given(edits(), st.booleans())
def test_with_words_matches_a_copy_computed_from_scratch(
    case: tuple[Sentence, dict[int, Token], dict[str, str]], warm: bool
) -> None:
    s, words, metadata = case
    original = _warm(_fresh(s)) if warm else _fresh(s)
    edited = original.with_words(words).with_metadata_items(metadata)
    expected = _fresh(edited)
    assert edited == expected
    assert edited.surface_text() == expected.surface_text()
    assert list(edited.surface_tokens()) == list(expected.surface_tokens())
    assert edited.multiword_positions == expected.multiword_positions
    assert edited.forms == tuple(words[i].form if i in words else f for i, f in enumerate(s.forms))
    chained = original
    for key, value in metadata.items():
        chained = chained.with_metadata(key, value)
    assert edited.comments == chained.comments


def test_a_replacement_that_drops_space_after_no_changes_the_text() -> None:
    first = _warm(_fresh(SENTENCES[0]))  # "I don't like cats."
    cats = first.forms.index("cats")
    glued = first.with_words({cats: replace(first.words[cats], misc="SpaceAfter=No")})
    spaced = glued.with_words({cats: replace(first.words[cats], form="dogs", misc="_")})
    assert glued.surface_text() == "I don't like cats."
    assert spaced.surface_text() == "I don't like dogs ."


def test_copies_share_the_layout_the_original_computes_once() -> None:
    """A search edits one sentence thousands of times: its surface layout is computed on
    the original at the first edit that keeps it, and every copy reads that one."""
    original = _fresh(SENTENCES[0])
    assert "_surface_layout" not in original.__dict__
    cats = original.forms.index("cats")
    first = original.with_words({cats: replace(original.words[cats], form="dogs")})
    second = original.with_words({cats: replace(original.words[cats], form="mice")})
    layout = original.__dict__["_surface_layout"]
    assert first.__dict__["_surface_layout"] is layout
    assert second.__dict__["_surface_layout"] is layout
    assert second.surface_text() == "I don't like mice."
