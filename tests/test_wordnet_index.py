"""The lazily read WordNet lemma map against an eager reading of the same files."""

from __future__ import annotations

import warnings
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.core.errors import BrittleError, ResourceMissingError
from brittle.engine.core.resources import wordnet
from brittle.engine.core.resources.wordnet_index import (
    Entry,
    IndexFile,
    LazyLemmaIndex,
    parse_index_line,
)

HEADER = "  1 This software and database is being provided\n  2 licence text\n"
NAMES = ("adj", "adv", "noun", "verb")
POS = {"adj": "a", "adv": "r", "noun": "n", "verb": "v"}


def _line(lemma: str, pos: str, offsets: list[int]) -> str:
    n = len(offsets)
    return f"{lemma} {pos} {n} 1 @ {n} 0 " + " ".join(f"{x:08d}" for x in offsets)


def _eager(files: list[Path], satellites: set[int]) -> defaultdict[str, Entry]:
    """The obviously-right reading: every line, file by file, as NLTK's reader does."""
    out: defaultdict[str, Entry] = defaultdict(dict)
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
            if line.startswith(" ") or not line.strip():
                continue
            lemma, pos, offsets = parse_index_line(line, f"{path}, line {number}")
            out[lemma][pos] = offsets
            if pos == "a":
                out[lemma]["s"] = [x for x in offsets if x in satellites]
    return out


def _write(root: Path, table: dict[str, dict[str, list[int]]]) -> list[Path]:
    paths = []
    for name in NAMES:
        rows = sorted((lemma, entry[name]) for lemma, entry in table.items() if name in entry)
        path = root / f"index.{name}"
        body = "".join(_line(lemma, POS[name], offs) + "\n" for lemma, offs in rows)
        path.write_text(HEADER + body, encoding="utf8")
        paths.append(path)
    return paths


lemmas = st.text(alphabet="abcz_-'.19", min_size=1, max_size=6)
offsets = st.lists(st.integers(1, 60), min_size=1, max_size=3, unique=True)
tables = st.dictionaries(
    lemmas, st.dictionaries(st.sampled_from(NAMES), offsets, min_size=1), max_size=25
)
ops = st.lists(st.tuples(st.sampled_from(["get", "in", "iter"]), lemmas), max_size=30)


@settings(max_examples=150, deadline=None)
@given(table=tables, queries=ops, satellites=st.sets(st.integers(1, 60)))
def test_lazy_map_behaves_as_the_eager_defaultdict(
    tmp_path_factory: pytest.TempPathFactory,
    table: dict[str, dict[str, list[int]]],
    queries: list[tuple[str, str]],
    satellites: set[int],
) -> None:
    paths = _write(tmp_path_factory.mktemp("wn"), table)
    lazy = LazyLemmaIndex([IndexFile(p) for p in paths], satellites)
    eager = _eager(paths, satellites)
    for op, lemma in queries:
        if op == "get":
            assert lazy[lemma] == eager[lemma]  # both store an empty entry when missing
        elif op == "in":
            assert (lemma in lazy) == (lemma in eager)
        else:
            assert list(lazy) == list(eager)  # the same lemmas, in the same order
            assert len(lazy) == len(eager)
    assert dict(lazy) == dict(eager)
    assert list(lazy) == list(eager)
    assert [list(e) for e in lazy.values()] == [list(e) for e in eager.values()]  # pos order


def test_an_entry_read_before_is_the_same_object_after_a_full_read(tmp_path: Path) -> None:
    paths = _write(tmp_path, {"dog": {"noun": [2], "verb": [7]}, "cat": {"noun": [3]}})
    lazy = LazyLemmaIndex([IndexFile(p) for p in paths], set())
    dog = lazy["dog"]
    assert dog == {"n": [2], "v": [7]}
    assert "unicorn" not in lazy and "unicorn" not in list(lazy)
    assert lazy["unicorn"] == {} and "unicorn" in lazy  # as a defaultdict stores it
    assert list(lazy) == ["cat", "dog", "unicorn"]
    assert lazy["dog"] is dog


def test_a_malformed_line_is_named_when_its_lemma_is_read(tmp_path: Path) -> None:
    path = tmp_path / "index.noun"
    path.write_text(HEADER + "cat n 1 0 1 0 02121620\ndog n 2 1 @ 2 1 02084071\n")
    lazy = LazyLemmaIndex([IndexFile(path)], set())
    assert lazy["cat"] == {"n": [2121620]}
    with pytest.raises(ValueError, match=r"index.noun, line 4: too few synset offsets") as err:
        lazy["dog"]
    # met in the middle of a run: the command line reports brittle's errors in one line
    assert isinstance(err.value, BrittleError)


def test_unsorted_lines_are_not_an_index_file(tmp_path: Path) -> None:
    path = tmp_path / "index.noun"
    path.write_text(HEADER + "dog n 1 0 1 0 02084071\ncat n 1 0 1 0 02121620\n")
    with pytest.raises(ValueError, match=r"index.noun, line 4: not in sorted order"):
        IndexFile(path)


def test_real_wordnet_reads_nltks_own_map_lazily() -> None:
    """On the real corpus: looked up one by one, then iterated, the map is NLTK's."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    try:
        reader = wordnet._open_wordnet(wordnet.wordnet_data_dir())
    except ResourceMissingError:
        pytest.skip("WordNet is not available")

    class Plain(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:  # not what is compared
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        plain = Plain(reader.root, None)  # NLTK's own reading of the files
    ours = reader._lemma_pos_offset_map
    theirs = plain._lemma_pos_offset_map
    assert isinstance(ours, LazyLemmaIndex)
    for lemma in ("good", "dog", "run", "quickly", "new_york", "zzzz", "set"):
        assert ours[lemma] == theirs[lemma]
    assert {s.name() for s in reader.synsets("bank")} == {s.name() for s in plain.synsets("bank")}
    assert list(reader.all_lemma_names()) == list(plain.all_lemma_names())
    assert dict(ours) == dict(theirs)
