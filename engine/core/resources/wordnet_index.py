"""WordNet's ``index.POS`` files as NLTK's lemma map, each lemma read when first asked for.

NLTK's WordNet reader keeps ``lemma -> pos -> synset offsets`` for all 147,306 lemmas
and builds the whole map when the corpus opens: half a second of the start of every
coPOS run, which then looks up a few thousand lemmas. WordNet's index files are sorted
by lemma (WordNet's own library binary-searches them), so :class:`LazyLemmaIndex` keeps
each file's lines and finds a lemma's line by bisection the first time NLTK asks for
it. Iterating the map (NLTK's ``all_lemma_names``) reads every line, in NLTK's order.

Hand-written rather than NLTK's reading (which has no lazy mode) or a cache of the built
map (unpickling 147,306 small dicts takes as long as parsing the files).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path

from brittle.engine.core.errors import BrittleError

__all__ = [
    "IndexFile",
    "LazyLemmaIndex",
    "WordNetIndexError",
    "parse_index_line",
    "satellite_offsets",
]


class WordNetIndexError(BrittleError, ValueError):
    """A malformed or unsorted ``index.POS`` file, named by file and line. A line is
    read when its lemma is first looked up, so this can come in the middle of a run,
    where the command line reports it as a one-line error."""


#: One lemma's entry: WordNet pos (``a``, ``s``, ``r``, ``n``, ``v``) -> synset offsets.
Entry = dict[str, list[int]]


def satellite_offsets(path: Path) -> set[int]:
    """Offsets of the adjective satellites (``s`` synsets) in WordNet's ``data.adj``."""
    found: set[int] = set()
    with path.open(encoding="utf8") as fp:
        for line in fp:
            if line.startswith(" ") or not line.strip():
                continue
            fields = line.split(maxsplit=3)
            if len(fields) >= 3 and fields[2] == "s":
                found.add(int(fields[0]))
    return found


def parse_index_line(line: str, where: str) -> tuple[str, str, list[int]]:
    """The lemma, pos and synset offsets of one line of an ``index.POS`` file.

    Raises:
        WordNetIndexError: a malformed line, named by ``where`` (file and line number).
    """
    fields = line.split()
    try:
        lemma, pos, n_synsets = fields[0], fields[1], int(fields[2])
        n_pointers = int(fields[3])
        start = 4 + n_pointers + 2  # pointer symbols, sense_cnt, tagsense_cnt
        if n_synsets < 1 or int(fields[4 + n_pointers]) != n_synsets:
            raise ValueError("synset and sense counts differ")
        offsets = [int(x) for x in fields[start : start + n_synsets]]
        if len(offsets) != n_synsets:
            raise ValueError("too few synset offsets")
    except (IndexError, ValueError) as err:
        raise WordNetIndexError(f"{where}: {err}") from err
    return lemma, pos, offsets


class IndexFile:
    """The lines of one ``index.POS`` file after its licence header (lines that start
    with a space), sorted, found by bisection.

    Raises:
        WordNetIndexError: the lines are not sorted (not a WordNet index file), named by
            file and line.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        lines = path.read_bytes().split(b"\n")
        skip = 0
        while skip < len(lines) and lines[skip].startswith(b" "):
            skip += 1
        body = lines[skip:]
        while body and not body[-1].strip():
            body.pop()
        # sorted lines are sorted lemmas, as no lemma holds a space
        if not all(map(operator.lt, body, body[1:])):
            i = next(i for i in range(1, len(body)) if body[i - 1] >= body[i])
            raise WordNetIndexError(
                f"{path}, line {skip + i + 1}: not in sorted order, so not a WordNet index file"
            )
        self.first_line = skip + 1
        self.lines = body

    def find(self, lemma: str) -> tuple[str, str] | None:
        """The line of ``lemma`` (decoded) and where it is (file, line), or ``None``."""
        key = lemma.encode("utf8") + b" "
        i = bisect.bisect_left(self.lines, key)
        if i < len(self.lines) and self.lines[i].startswith(key):
            return self.lines[i].decode("utf8"), self.where(i)
        return None

    def where(self, i: int) -> str:
        """File and line number of body line ``i``."""
        return f"{self.path}, line {self.first_line + i}"


class LazyLemmaIndex(MutableMapping[str, Entry]):
    """NLTK's ``_lemma_pos_offset_map`` over WordNet's index files, read on demand.

    Behaves as NLTK's ``defaultdict(dict)``: looking up a lemma WordNet lacks stores and
    returns an empty entry, ``in`` does not; every entry equals NLTK's (adjectives also
    under ``s``, their satellite offsets only). Iteration and ``len`` read every line
    once, and iterate in NLTK's order (the files' order, then lemmas stored later).

    Args:
        files: the index files in NLTK's order (adjectives, adverbs, nouns, verbs).
        satellites: offsets of the adjective satellites (:func:`satellite_offsets`).
    """

    def __init__(self, files: Sequence[IndexFile], satellites: set[int]) -> None:
        self._files = tuple(files)
        self._satellites = satellites
        self._known: dict[str, Entry] = {}
        self._complete = False

    def _add(self, entry: Entry, line: str, where: str) -> None:
        _, pos, offsets = parse_index_line(line, where)
        entry[pos] = offsets
        if pos == "a":
            entry["s"] = [x for x in offsets if x in self._satellites]

    def _read(self, lemma: str) -> Entry | None:
        entry: Entry = {}
        for index in self._files:
            found = index.find(lemma)
            if found is not None:
                self._add(entry, *found)
        return entry or None

    def __getitem__(self, lemma: str) -> Entry:
        entry = self._known.get(lemma)
        if entry is None:
            read = None if self._complete else self._read(lemma)
            entry = read if read is not None else {}
            self._known[lemma] = entry
        return entry

    def __contains__(self, lemma: object) -> bool:
        if lemma in self._known:
            return True
        if self._complete or not isinstance(lemma, str):
            return False
        entry = self._read(lemma)
        if entry is None:
            return False
        self._known[lemma] = entry
        return True

    def _read_all(self) -> None:
        """Read every line: the whole map, in NLTK's order."""
        if self._complete:
            return
        full: dict[str, Entry] = {}
        for index in self._files:
            for i, raw in enumerate(index.lines):
                line = raw.decode("utf8")
                where = index.where(i)
                lemma = parse_index_line(line, where)[0]
                entry = full.get(lemma)
                if entry is None:
                    known = self._known.get(lemma)
                    if known is not None:  # read before: the same entry object
                        full[lemma] = known
                        continue
                    full[lemma] = entry = {}
                elif entry is self._known.get(lemma):
                    continue
                self._add(entry, line, where)
        for lemma, entry in self._known.items():  # lemmas WordNet lacks, stored empty
            full.setdefault(lemma, entry)
        self._known = full
        self._complete = True
        self._files = ()  # every line is read: the files' lines are no longer needed

    def __iter__(self) -> Iterator[str]:
        self._read_all()
        return iter(self._known)

    def __len__(self) -> int:
        self._read_all()
        return len(self._known)

    def __setitem__(self, lemma: str, entry: Entry) -> None:
        self._known[lemma] = entry

    def __delitem__(self, lemma: str) -> None:
        self._read_all()
        del self._known[lemma]
