"""The UD structure the reader checks (UD's validator, levels 1 and 2): multiword tokens,
empty nodes, HEAD, UPOS, FEATS, DEPS, unique sentence IDs, line and block limits and
files that are not UTF-8 text.

Every rejected file is written by its test and, where UD's validator (``udtools``) is
installed, rejected by it too; every accepted one reads back byte for byte.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from brittle.engine.core import conllu
from brittle.engine.core.conllu import MAX_LINE_BYTES, format_conllu, read_conllu
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.sentence import Sentence

from support import EWT_TEST

# Passes UD's validator at level 2: a multiword token (line 4), an empty node (line 11),
# enhanced DEPS and FEATS; a second sentence from line 15.
BASE_LINES = [
    "# sent_id = s1",
    "# text = We don't like cats and Sue dogs.",
    "1\tWe\twe\tPRON\tPRP\tCase=Nom|Number=Plur|Person=1|PronType=Prs\t4\tnsubj\t4:nsubj\t_",
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    "2\tdo\tdo\tAUX\tVBP\tMood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin\t4\taux\t4:aux\t_",
    "3\tn't\tnot\tPART\tRB\tPolarity=Neg\t4\tadvmod\t4:advmod\t_",
    "4\tlike\tlike\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\t_",
    "5\tcats\tcat\tNOUN\tNNS\tNumber=Plur\t4\tobj\t4:obj\t_",
    "6\tand\tand\tCCONJ\tCC\t_\t7\tcc\t7:cc|7.1:cc\t_",
    "7\tSue\tSue\tPROPN\tNNP\tNumber=Sing\t4\tconj\t4:conj:and|7.1:nsubj\t_",
    "7.1\tlike\tlike\tVERB\tVB\t_\t_\t_\t4:conj:and\tCopyOf=4",
    "8\tdogs\tdog\tNOUN\tNNS\tNumber=Plur\t4\tconj\t7.1:obj\tSpaceAfter=No",
    "9\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_",
    "",
    "# sent_id = s2",
    "# text = Dogs bark.",
    "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t2:nsubj\t_",
    "2\tbark\tbark\tVERB\tVBP\tMood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin\t0\troot"
    "\t0:root\tSpaceAfter=No",
    "3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_",
    "",
]

COLUMN = {"ID": 0, "LEMMA": 2, "UPOS": 3, "FEATS": 5, "HEAD": 6, "DEPREL": 7, "DEPS": 8}


def text_of(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def with_columns(*changes: tuple[int, str, str]) -> str:
    """BASE with columns set: (1-based line, column name, value) each."""
    out = list(BASE_LINES)
    for lineno, column, value in changes:
        cols = out[lineno - 1].split("\t")
        cols[COLUMN[column]] = value
        out[lineno - 1] = "\t".join(cols)
    return text_of(out)


def with_column(lineno: int, column: str, value: str) -> str:
    """BASE with one column of line ``lineno`` (1-based) set."""
    return with_columns((lineno, column, value))


def with_line(after: int, line: str) -> str:
    """BASE with ``line`` inserted after line ``after`` (it becomes line ``after + 1``)."""
    out = list(BASE_LINES)
    out.insert(after, line)
    return text_of(out)


def moved(lineno: int, after: int) -> str:
    """BASE with line ``lineno`` moved to just after line ``after`` (after > lineno)."""
    out = list(BASE_LINES)
    line = out.pop(lineno - 1)
    out.insert(after - 1, line)
    return text_of(out)


def mwt(span: str, form: str) -> str:
    return f"{span}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_"


def write(tmp_path: Path, data: str | bytes, name: str = "case.conllu") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def validator_passes(path: Path) -> bool:
    """Whether UD's validator passes ``path`` at level 2 (skips when not installed)."""
    udtools = pytest.importorskip("udtools")
    state = udtools.Validator(lang="ud", level=2, output=None).validate_files([str(path)])
    return bool(state.passed())


def test_the_base_file_is_valid_for_both(tmp_path: Path) -> None:
    path = write(tmp_path, text_of(BASE_LINES))
    assert format_conllu(read_conllu(path)) == path.read_text(encoding="utf-8")
    assert validator_passes(path)


# (name, file text, line of the error, words of the message)
REJECTED = [
    # multiword tokens
    (
        "overlapping multiword tokens",
        with_line(5, mwt("3-4", "n'tlike")),
        6,
        "multiword token 3-4 overlaps multiword token 2-3 (line 4)",
    ),
    ("multiword token after its first word", moved(4, 5), 5, "comes after its first word 2"),
    (
        "multiword token before an earlier word",
        with_line(6, mwt("5-6", "catsand")),
        7,
        "multiword token 5-6 comes before word 4: it belongs right before word 5",
    ),
    (
        "multiword token beyond the sentence",
        with_line(9, mwt("7-12", "Suedogs.")),
        10,
        "multiword token 7-12 ends after the last word: the sentence has 9 words",
    ),
    (
        "empty node between a multiword token and its first word",
        with_line(10, mwt("8-9", "dogs.")),
        12,
        "empty node 7.1 comes between multiword token 8-9 and its first word 8",
    ),
    ("multiword token ending before it starts", with_column(4, "ID", "3-2"), 4, "ends before"),
    ("multiword token with HEAD", with_column(4, "HEAD", "4"), 4, "2-3 has HEAD '4'"),
    ("multiword token with DEPREL", with_column(4, "DEPREL", "aux"), 4, "has DEPREL 'aux'"),
    ("multiword token with LEMMA", with_column(4, "LEMMA", "do"), 4, "has LEMMA 'do'"),
    ("multiword token with UPOS", with_column(4, "UPOS", "AUX"), 4, "has UPOS 'AUX'"),
    # empty nodes
    (
        "empty node after the wrong word",
        moved(11, 12),
        12,
        "empty node 7.1 is out of place: expected 8.1 here",
    ),
    ("empty node numbered wrong", with_column(11, "ID", "7.2"), 11, "expected 7.1 here"),
    ("empty node with HEAD", with_column(11, "HEAD", "4"), 11, "empty node 7.1 has HEAD '4'"),
    ("empty node with DEPREL", with_column(11, "DEPREL", "conj"), 11, "has DEPREL 'conj'"),
    # DEPS
    ("DEPS item without relation", with_column(3, "DEPS", "4nsubj"), 3, "is not head:relation"),
    ("DEPS empty relation", with_column(3, "DEPS", "4:"), 3, "'4:' is not head:relation"),
    ("DEPS negative head", with_column(3, "DEPS", "-1:nsubj"), 3, "is not head:relation"),
    ("DEPS unsorted heads", with_column(9, "DEPS", "7.1:cc|7:cc"), 9, "not sorted by head"),
    ("DEPS unsorted relations", with_column(8, "DEPS", "4:obj|4:dep"), 8, "then relation"),
    ("DEPS repeated item", with_column(8, "DEPS", "4:obj|4:obj"), 8, "'4:obj' repeats an item"),
    (
        "DEPS head beyond the sentence",
        with_column(3, "DEPS", "12:nsubj"),
        3,
        "DEPS '12:nsubj' of word 1: head 12 out of range: the sentence has 9 words",
    ),
    (
        "DEPS head is a missing empty node",
        with_column(9, "DEPS", "7:cc|7.2:cc"),
        9,
        "head 7.2 is not an empty node of the sentence",
    ),
    ("DEPS pointing to itself", with_column(7, "DEPS", "0:root|4:dep"), 7, "points to itself"),
    # FEATS
    ("FEATS item without a name", with_column(8, "FEATS", "Plur"), 8, "'Plur' is not Name=Value"),
    (
        "FEATS not sorted",
        with_column(3, "FEATS", "Number=Plur|Case=Nom"),
        3,
        "features not sorted by name",
    ),
    (
        "FEATS not sorted case-insensitively",
        with_column(3, "FEATS", "NumType=Card|Number=Plur"),
        3,
        "features not sorted by name",
    ),
    ("FEATS lower-case value", with_column(8, "FEATS", "Number=plur"), 8, "is not Name=Value"),
    ("FEATS lower-case name", with_column(8, "FEATS", "number=Plur"), 8, "is not Name=Value"),
    ("FEATS bad layer", with_column(8, "FEATS", "Number[Psor]=Plur"), 8, "is not Name=Value"),
    ("FEATS empty item", with_column(8, "FEATS", "Number=Plur|"), 8, "'' is not Name=Value"),
    (
        "FEATS repeated name",
        with_column(8, "FEATS", "Number=Plur|Number=Sing"),
        8,
        "feature Number appears twice",
    ),
    ("FEATS unsorted values", with_column(8, "FEATS", "Number=Sing,Plur"), 8, "not sorted"),
    # UPOS
    (
        "UPOS not a UD tag",
        with_column(8, "UPOS", "NOUNS"),
        8,
        "UPOS 'NOUNS' of word 5 is not one of the 17 UD tags",
    ),
    ("UPOS lower-case", with_column(8, "UPOS", "noun"), 8, "UPOS 'noun'"),
    (
        "UPOS '_' on one word of a tagged sentence",
        with_column(8, "UPOS", "_"),
        8,
        "word 5 has UPOS '_' but other words of the sentence are tagged",
    ),
    ("UPOS of an empty node", with_column(11, "UPOS", "VERBS"), 11, "of empty node 7.1"),
    # sentence IDs
    (
        "repeated sent_id",
        text_of(["# sent_id = s1" if line == "# sent_id = s2" else line for line in BASE_LINES]),
        15,
        "sent_id 's1' repeats the one on line 1",
    ),
    # HEAD
    (
        "negative HEAD",
        with_column(19, "HEAD", "-1"),
        19,
        "HEAD '-1' is not a non-negative integer",
    ),
    ("HEAD with a sign", with_column(19, "HEAD", "+2"), 19, "HEAD '+2' is not a non-negative"),
    ("HEAD with a leading zero", with_column(19, "HEAD", "02"), 19, "HEAD '02' is not"),
    ("ID with a leading zero", with_column(17, "ID", "01"), 17, "ID '01' is not an integer"),
]


@pytest.mark.parametrize(
    ("name", "text", "line", "message"), REJECTED, ids=[case[0] for case in REJECTED]
)
def test_rejected_structure_names_the_line_and_the_validator_agrees(
    tmp_path: Path, name: str, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(BrittleInputError) as info:
        read_conllu(path)
    assert (info.value.line, info.value.path) == (line, str(path))
    assert message in info.value.problem
    assert str(info.value) == f"{path}:{line}: {info.value.problem}"
    assert "\n" not in str(info.value)
    assert not validator_passes(path)


# (name, file text, whether UD's validator passes it too)
ACCEPTED = [
    (
        "feature names with a layer",
        with_column(3, "FEATS", "Case=Nom|Number=Plur|Number[psor]=Sing|Person=1"),
        True,
    ),
    (
        "features sorted case-insensitively",
        with_column(3, "FEATS", "Number=Plur|NumType=Card"),
        True,
    ),
    ("several sorted values", with_column(3, "FEATS", "Case=Acc,Nom|Number=Plur"), True),
    ("typo on a multiword token", with_column(4, "FEATS", "Typo=Yes"), True),
    ("empty node with a tag", with_column(11, "UPOS", "VERB"), True),
    ("enhanced relation with a preposition", with_column(8, "DEPS", "4:obj|7:nmod:за"), True),
    (
        "empty node before the first word",
        with_line(2, "0.1\tit\tit\tPRON\t_\t_\t_\t_\t4:dep\t_"),
        True,
    ),
    ("an untagged sentence", with_columns(*((k, "UPOS", "_") for k in (17, 18, 19))), False),
]


@pytest.mark.parametrize(("name", "text", "valid"), ACCEPTED, ids=[case[0] for case in ACCEPTED])
def test_lenient_where_harmless_and_passed_through_unchanged(
    tmp_path: Path, name: str, text: str, valid: bool
) -> None:
    path = write(tmp_path, text)
    assert format_conllu(read_conllu(path)) == text
    assert validator_passes(path) == valid


# --------------------------------------------------------------- sentence IDs
def test_a_sentence_id_may_repeat_across_files_and_without_comment(tmp_path: Path) -> None:
    one = write(tmp_path, text_of(BASE_LINES), "one.conllu")
    two = write(tmp_path, text_of(BASE_LINES), "two.conllu")
    assert [s.sent_id for s in read_conllu(one) + read_conllu(two)] == ["s1", "s2", "s1", "s2"]
    bare = [line for line in BASE_LINES if not line.startswith("# sent_id")]
    path = write(tmp_path, text_of(bare + bare), "bare.conllu")
    assert [s.sent_id for s in read_conllu(path)] == [f"bare.conllu#{i}" for i in (1, 2, 3, 4)]


def test_skip_invalid_keeps_the_first_sentence_of_a_repeated_id(tmp_path: Path) -> None:
    lines = [*BASE_LINES, "# sent_id = s1", *BASE_LINES[1:14]]
    path = write(tmp_path, text_of(lines))
    stats = conllu.ReadStats()
    with pytest.warns(UserWarning, match="repeats the one on line 1"):
        kept = read_conllu(path, skip_invalid=True, stats=stats)
    assert [s.sent_id for s in kept] == ["s1", "s2"]
    assert [err.line for err in stats.skipped] == [21]


# ------------------------------------------------------------------- limits
def test_a_line_over_the_limit_is_an_error(tmp_path: Path) -> None:
    fits = "# note = " + "a" * (MAX_LINE_BYTES - 9)
    assert len(fits.encode()) == MAX_LINE_BYTES
    path = write(tmp_path, text_of([fits, *BASE_LINES]))
    assert len(read_conllu(path)) == 2
    path = write(tmp_path, text_of([fits + "a", *BASE_LINES]))
    with pytest.raises(BrittleInputError) as info:
        read_conllu(path)
    assert str(info.value) == f"{path}:1: line longer than {MAX_LINE_BYTES} bytes"


def test_a_file_without_line_ends_is_read_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "one-line.conllu"
    with path.open("wb") as handle:
        for _ in range(32):
            handle.write(b"a" * MAX_LINE_BYTES)
    tracemalloc.start()
    try:
        with pytest.raises(BrittleInputError, match=r":1: line longer than"):
            read_conllu(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * MAX_LINE_BYTES  # the file is 32 times that


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_stops_at_the_line_limit() -> None:
    with pytest.raises(BrittleInputError) as info:
        read_conllu("/dev/zero")
    assert str(info.value) == f"/dev/zero:1: line longer than {MAX_LINE_BYTES} bytes"


def test_a_sentence_block_over_the_limits_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conllu, "MAX_SENTENCE_LINES", 12)  # the first block has 13
    path = write(tmp_path, text_of(BASE_LINES))
    with pytest.raises(BrittleInputError) as info:
        read_conllu(path)
    assert info.value.line == 13
    assert info.value.problem.startswith("sentence starting on line 1 is longer than")
    monkeypatch.setattr(conllu, "MAX_SENTENCE_LINES", 20)
    monkeypatch.setattr(conllu, "MAX_SENTENCE_BYTES", 200)
    with pytest.raises(BrittleInputError, match="longer than 200 bytes"):
        read_conllu(path)


# ------------------------------------------------------ not UTF-8 CoNLL-U text
def _zipped(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("x.conllu", text)
    return buffer.getvalue()


NOT_TEXT: list[tuple[str, Callable[[str], bytes], str, str]] = [
    ("gzip", lambda t: gzip.compress(t.encode()), "file is gzip-compressed", "gunzip"),
    ("bzip2", lambda t: bz2.compress(t.encode()), "file is bzip2-compressed", "bunzip2"),
    ("xz", lambda t: lzma.compress(t.encode()), "file is xz-compressed", "unxz"),
    ("zstd", lambda t: b"\x28\xb5\x2f\xfd" + t.encode(), "file is zstd-compressed", "unzstd"),
    ("zip", _zipped, "file is a zip archive", "unzip"),
    ("utf-16", lambda t: t.encode("utf-16"), "file is UTF-16 (little-endian", "iconv"),
    (
        "utf-16-be",
        lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
        "file is UTF-16 (big-endian",
        "iconv",
    ),
    (
        "utf-16 without mark",
        lambda t: t.encode("utf-16-le"),
        "file is UTF-16 (no byte-order mark",
        "iconv",
    ),
    ("utf-32", lambda t: t.encode("utf-32"), "file is UTF-32 (little-endian", "iconv"),
    (
        "utf-32-be",
        lambda t: b"\x00\x00\xfe\xff" + t.encode("utf-32-be"),
        "file is UTF-32 (big-endian",
        "iconv",
    ),
]


@pytest.mark.parametrize(
    ("name", "encode", "what", "fix"), NOT_TEXT, ids=[case[0] for case in NOT_TEXT]
)
def test_compressed_and_utf16_files_are_named_with_the_fix(
    tmp_path: Path, name: str, encode: Callable[[str], bytes], what: str, fix: str
) -> None:
    path = write(tmp_path, encode(text_of(BASE_LINES)))
    with pytest.raises(BrittleInputError) as info:
        read_conllu(path)
    assert info.value.line == 1
    assert info.value.problem.startswith(what) and fix in info.value.problem
    assert "valid UTF-8" not in info.value.problem


# ------------------------------------------------- perturb output is valid UD
def _ewt_with_multiword_tokens_and_empty_nodes(limit: int) -> list[Sentence]:
    if not EWT_TEST.exists():
        pytest.skip("the shared UD treebanks are not available")
    picked = []
    for sentence in read_conllu(EWT_TEST):
        if any(t.kind != "word" for t in sentence.rows):
            picked.append(sentence)
        if len(picked) == limit:
            break
    return picked


@pytest.mark.parametrize("method", ["neighbour-flip", "fixed"])
def test_perturb_output_of_valid_input_passes_the_validator(tmp_path: Path, method: str) -> None:
    from test_perturb import ChainParser, FixedWords

    from brittle.engine.perturb.perturb_run import (
        PerturbConfig,
        make_generator,
        perturb_sentences,
        write_perturb_outputs,
    )
    from brittle.scorers.parsers import CachedParser, make_parser
    from brittle.scorers.parsers.base import Parser
    from brittle.search.generators.base import Generator

    generator: Generator
    parser: Parser
    sentences = _ewt_with_multiword_tokens_and_empty_nodes(30)
    source = tmp_path / "in.conllu"
    conllu.write_conllu(sentences, source)
    assert validator_passes(source)
    if method == "fixed":
        config = PerturbConfig(method="fixed", budget=2, candidates=6, seed=1, parser="chain")
        generator, parser = FixedWords(), CachedParser(ChainParser())
    else:
        config = PerturbConfig(method=method, budget=2, candidates=6, seed=1, parser="gold")
        generator, parser = make_generator(method), make_parser("gold")
    result = perturb_sentences(sentences, config=config, generator=generator, parser=parser)
    assert result.counts()["perturbed"] > 0
    out = tmp_path / "out.conllu"
    write_perturb_outputs(result, out, report=tmp_path / "report.json")
    assert len(read_conllu(out)) == len(sentences)
    assert validator_passes(out)
