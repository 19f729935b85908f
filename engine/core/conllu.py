"""Reading and writing CoNLL-U.

Lines are split by this module so that every problem is reported with its file and
line number (:class:`~brittle.engine.core.errors.BrittleInputError`, one line
``file:line: problem``). Every column is kept as raw text, so
``write_conllu(read_conllu(p))`` reproduces a valid file byte for byte.

What is checked, as UD's validator checks it at levels 1 and 2 for the columns brittle
reads or writes:

- the file: UTF-8 text (a gzip, bzip2, xz, zstd or zip file and a UTF-16 or UTF-32
  file are named as such, with what to do), no byte-order mark, LF line ends, no line
  longer than :data:`MAX_LINE_BYTES` (reading stops there, so it never holds much more
  than that of one line), no sentence block over :data:`MAX_SENTENCE_BYTES` or
  :data:`MAX_SENTENCE_LINES`, no ``sent_id`` twice in one file;
- each line: comments before token lines, ten tab-separated columns, none empty;
- IDs: words numbered 1..n; a multiword token ``a-b`` (``a <= b``) right before its
  first word ``a``, with ``b`` inside the sentence, overlapping no other, and only FORM
  and MISC filled (FEATS may be ``Typo=Yes``); an empty node ``w.k`` right after word
  ``w`` (``0.k`` before the first word), numbered ``w.1``, ``w.2``..., with ``_`` as
  HEAD and DEPREL;
- HEAD: ``0`` or a word of the sentence, one root, no cycle;
- UPOS: one of the 17 UD tags (:data:`UPOS_TAGS`); ``_`` on an empty node;
- FEATS: ``_`` or ``Name=Value`` items separated by ``|``, sorted by name
  (case-insensitively, as the validator compares them), no name twice, names like
  ``Number`` or ``Number[psor]`` and values like ``Sing`` or ``Plur,Sing`` (sorted,
  none twice);
- DEPS: ``_`` or ``head:relation`` items separated by ``|``, sorted by head and then
  relation, no item twice, each head ``0``, a word or an empty node of the sentence
  other than the token itself.

Where the reader is more lenient than the validator, on purpose: a sentence whose
words all have UPOS ``_`` (an untagged treebank; a method that reads UPOS refuses a
treebank with no tag at all);
the relation names of DEPREL and DEPS, XPOS, LEMMA and MISC are not checked; nor are
the ``# text`` comment and the FORMs, nor the features' and relations' names against
UD's lists. A multiword token must come right before its first word, which the
validator only partly checks.

Control characters (Unicode category Cc, such as NUL or ESC) are an error in any column
of a token line and in comments; only TAB (between columns) and LF (the line end) are
allowed. This is stricter than UD's validator, which only checks whitespace and NFC.
Format characters (category Cf: soft hyphen, zero-width space, ZWJ/ZWNJ, direction
marks) are accepted: they are legitimate text in some treebanks, and UD's validator
accepts them too.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from conllu.parser import parse_pair_value

from brittle.engine.core.atomic import atomic_write
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.sentence import Sentence, Token

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_SENTENCE_BYTES",
    "MAX_SENTENCE_LINES",
    "UPOS_TAGS",
    "ReadStats",
    "format_conllu",
    "iter_conllu",
    "read_conllu",
    "write_conllu",
]

#: The longest line read, in bytes, not counting its LF (1 MiB). A longer line is an
#: error, found after reading this much of it: a file without line ends (``/dev/zero``,
#: a binary file) stops there instead of filling memory.
MAX_LINE_BYTES = 1 << 20

#: The most bytes of one sentence block, line ends included (8 MiB).
MAX_SENTENCE_BYTES = 8 << 20

#: The most lines (comments and token lines) of one sentence block.
MAX_SENTENCE_LINES = 20_000

#: The 17 universal part-of-speech tags.
UPOS_TAGS = frozenset(
    {
        "ADJ",
        "ADP",
        "ADV",
        "AUX",
        "CCONJ",
        "DET",
        "INTJ",
        "NOUN",
        "NUM",
        "PART",
        "PRON",
        "PROPN",
        "PUNCT",
        "SCONJ",
        "SYM",
        "VERB",
        "X",
    }
)

_COLUMN_NAMES = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

# Every character of category Cc (U+0000-U+001F and U+007F-U+009F) except TAB (U+0009).
# One search per line keeps the check in C; the slow path only runs on an error.
_find_control = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]").search

# A word (group 1), a multiword token (2, 3) or an empty node (4, 5), as UD writes IDs.
_match_id = re.compile(
    r"(0|[1-9][0-9]*)|([1-9][0-9]*)-([1-9][0-9]*)|([0-9]+)\.([1-9][0-9]*)"
).fullmatch
_match_head = re.compile(r"0|[1-9][0-9]*").fullmatch
# One FEATS item: Name or Name[layer], then sorted values separated by commas.
_match_feature = re.compile(
    r"([A-Z][A-Za-z0-9]*(?:\[[a-z0-9]+\])?)=([A-Z0-9][A-Za-z0-9]*(?:,[A-Z0-9][A-Za-z0-9]*)*)"
).fullmatch
# One DEPS item: a head (word 0..n or empty node w.k), a colon and a relation.
_match_dep = re.compile(r"(0|[1-9][0-9]*)(?:\.([1-9][0-9]*))?:(\S+)").fullmatch


def _compressed(what: str, tool: str) -> str:
    """The problem of a compressed file or an archive, and the tool that opens it."""
    return f"file is {what}, not CoNLL-U text: decompress it first ({tool})"


def _encoded(encoding: str, order: str) -> str:
    """The problem of a file in another Unicode encoding, and how to convert it."""
    return (
        f"file is {encoding} ({order}), not UTF-8: re-encode it as UTF-8 "
        f"(iconv -f {encoding} -t UTF-8)"
    )


# What a file that is not UTF-8 CoNLL-U starts with, and what to say about it (the
# UTF-32 marks before the UTF-16 ones they start with).
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", _compressed("gzip-compressed", "gunzip")),
    (b"\xfd7zXZ\x00", _compressed("xz-compressed", "unxz")),
    (b"\x28\xb5\x2f\xfd", _compressed("zstd-compressed", "unzstd")),
    (b"PK\x03\x04", _compressed("a zip archive", "unzip")),
    (b"\xff\xfe\x00\x00", _encoded("UTF-32", "little-endian byte-order mark")),
    (b"\x00\x00\xfe\xff", _encoded("UTF-32", "big-endian byte-order mark")),
    (b"\xff\xfe", _encoded("UTF-16", "little-endian byte-order mark")),
    (b"\xfe\xff", _encoded("UTF-16", "big-endian byte-order mark")),
    (b"\xef\xbb\xbf", "file starts with a byte-order mark (BOM); save it as UTF-8 without BOM"),
)
_match_bzip2 = re.compile(rb"BZh[1-9]1AY&SY").match


@dataclass
class ReadStats:
    """What a read saw: sentences kept and the errors of the sentences skipped."""

    sentences: int = 0
    skipped: list[BrittleInputError] = field(default_factory=list)


def read_conllu(
    path: str | os.PathLike[str],
    *,
    skip_invalid: bool = False,
    stats: ReadStats | None = None,
) -> list[Sentence]:
    """Every sentence of a CoNLL-U file, checked as the module docstring says.

    Args:
        path: the file.
        skip_invalid: skip sentences with errors (each gives a warning and is counted in
            ``stats.skipped``) instead of raising. Errors of the file itself (its
            encoding, line ends, a line or block over the limits) still raise.
        stats: filled with what was read and skipped.

    Raises:
        BrittleInputError: naming the file, the line and the problem.
    """
    return list(iter_conllu(path, skip_invalid=skip_invalid, stats=stats))


def iter_conllu(
    path: str | os.PathLike[str],
    *,
    skip_invalid: bool = False,
    stats: ReadStats | None = None,
) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U file, one block at a time (see :func:`read_conllu`)."""
    name = str(path)
    stats = stats if stats is not None else ReadStats()
    with _open(Path(path), name) as handle:
        _check_start(handle.peek(64)[:64], name)
        sent_ids: dict[str, int] = {}
        any_line = False
        for lineno, block in _blocks(handle, name):
            any_line = True
            try:
                index = len(stats.skipped) + stats.sentences
                sentence, id_line = _parse_block(block, name, lineno, index)
                _check_unique_id(sentence.sent_id, id_line, sent_ids, name)
            except BrittleInputError as err:
                if not skip_invalid:
                    raise
                stats.skipped.append(err)
                warnings.warn(f"skipped invalid sentence: {err}", stacklevel=2)
                continue
            stats.sentences += 1
            yield sentence
        if not any_line:
            raise BrittleInputError(name, None, "file is empty: no sentences")


def _open(path: Path, name: str) -> io.BufferedReader:
    """``path`` opened for reading bytes; a file that cannot be is a BrittleInputError."""
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise BrittleInputError(name, None, "file not found") from None
    except IsADirectoryError:
        raise BrittleInputError(name, None, "is a directory, not a CoNLL-U file") from None
    except OSError as exc:
        raise BrittleInputError(name, None, f"cannot be read: {exc.strerror}") from None


def _check_start(head: bytes, name: str) -> None:
    """Check the first bytes of a file: not compressed, not UTF-16 or UTF-32, no BOM."""
    for signature, problem in _SIGNATURES:
        if head.startswith(signature):
            raise BrittleInputError(name, 1, problem)
    if _match_bzip2(head):
        raise BrittleInputError(name, 1, _compressed("bzip2-compressed", "bunzip2"))
    nul = head.count(0)
    if nul and nul < len(head) and 4 * nul >= len(head):
        raise BrittleInputError(
            name, 1, _encoded("UTF-16", "no byte-order mark, NUL bytes between the letters")
        )


def _check_unique_id(sent_id: str, line: int, seen: dict[str, int], name: str) -> None:
    """A ``# sent_id`` (on ``line``; 0 for an ID made from the file name) must not
    repeat one of ``seen`` (ID -> line), which it joins."""
    if not line:
        return
    first = seen.setdefault(sent_id, line)
    if first != line:
        raise BrittleInputError(name, line, f"sent_id {sent_id!r} repeats the one on line {first}")


def _blocks(handle: io.BufferedReader, name: str) -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """Blocks of (line number, text) pairs separated by blank lines, decoded and checked:
    LF line ends, UTF-8, no line over :data:`MAX_LINE_BYTES` and no block over
    :data:`MAX_SENTENCE_BYTES` or :data:`MAX_SENTENCE_LINES`."""
    block: list[tuple[int, str]] = []
    start = size = lineno = 0
    limit = MAX_LINE_BYTES + 1  # the line's bytes and its LF
    readline = handle.readline
    while raw := readline(limit):
        lineno += 1
        if len(raw) == limit and raw[-1] != 0x0A:
            raise BrittleInputError(name, lineno, f"line longer than {MAX_LINE_BYTES} bytes")
        if raw.endswith(b"\r\n") or raw.endswith(b"\r"):
            raise BrittleInputError(
                name, lineno, "line ends with CR LF (Windows line ending); CoNLL-U needs LF"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BrittleInputError(name, lineno, f"not valid UTF-8 ({exc.reason})") from None
        text = text.removesuffix("\n")
        if text.strip() == "":
            if text:
                raise BrittleInputError(name, lineno, "blank line contains whitespace")
            if block:
                yield start, block
                block = []
            continue
        if not block:
            start, size = lineno, 0
        size += len(raw)
        if size > MAX_SENTENCE_BYTES or len(block) >= MAX_SENTENCE_LINES:
            raise BrittleInputError(name, lineno, _oversized(start))
        block.append((lineno, text))
    if block:
        yield start, block


def _oversized(start: int) -> str:
    """The problem of a sentence block over the size limits."""
    return (
        f"sentence starting on line {start} is longer than {MAX_SENTENCE_BYTES} bytes or "
        f"{MAX_SENTENCE_LINES} lines (is a blank line missing between sentences?)"
    )


def _parse_block(
    block: list[tuple[int, str]], name: str, start: int, index: int
) -> tuple[Sentence, int]:
    """The sentence of a block, checked, and the line of its ``# sent_id`` (0 when it has
    none and gets ``<file>#<index + 1>``)."""
    comments: list[str] = []
    checker = _TokenLines(name)
    for lineno, text in block:
        bad = _find_control(text)
        if bad is not None:
            raise BrittleInputError(name, lineno, _control_problem(text, bad.start()))
        if text.startswith("#"):
            if checker.rows:
                raise BrittleInputError(
                    name,
                    lineno,
                    "comment after token lines: a blank line is missing between sentences",
                )
            comments.append(text)
            continue
        checker.add(lineno, text)
    checker.finish(start)
    sent_id, id_line = "", 0
    for i, comment in enumerate(comments):
        key, value = parse_pair_value(comment[1:])
        if key == "sent_id" and value:
            sent_id, id_line = value, start + i
            break
    if not sent_id:
        sent_id = f"{Path(name).name}#{index + 1}"
    sentence = Sentence(sent_id, tuple(comments), tuple(checker.rows), source=name, line=start)
    return sentence, id_line


class _TokenLines:
    """The token lines of one sentence, checked as they come (:meth:`add`) and as a
    whole (:meth:`finish`).

    Attributes:
        rows: the tokens so far, in file order.
        word: ID of the last word line (0 before the first).
        empty: minor ID of the last empty node after that word (0 when none).
        span: the last multiword token so far as (first word, last word, token, line).
        pending: whether that token still waits for its first word.
    """

    __slots__ = (
        "deps",
        "empty",
        "empty_ids",
        "name",
        "pending",
        "rows",
        "seen",
        "span",
        "untagged",
        "word",
        "words",
    )

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: list[Token] = []
        self.words: list[tuple[int, Token]] = []
        self.seen: dict[str, int] = {}
        self.word = self.empty = 0
        self.span: tuple[int, int, Token, int] | None = None
        self.pending = False
        self.untagged: list[tuple[int, Token]] = []
        self.deps: list[tuple[int, Token]] = []
        self.empty_ids: set[str] = set()

    def error(self, line: int, problem: str) -> BrittleInputError:
        """The error to raise for ``problem`` on ``line``."""
        return BrittleInputError(self.name, line, problem)

    def add(self, lineno: int, text: str) -> None:
        """Check one token line and keep its token."""
        cols = text.split("\t")
        if len(cols) != 10:
            raise self.error(lineno, f"expected 10 tab-separated columns, found {len(cols)}")
        if "" in cols:
            raise self.error(
                lineno, f"empty column {cols.index('') + 1} (use '_' for an empty value)"
            )
        tok = Token(*cols)
        m = _match_id(tok.id)
        if m is None:
            raise self.error(
                lineno, f"ID {tok.id!r} is not an integer, a range (3-4) or a decimal (5.1)"
            )
        self._check_new_id(lineno, tok)
        word, first, last, major, minor = m.groups()
        if word is not None:
            self._word(lineno, tok, int(word))
        elif first is not None:
            self._range(lineno, tok, int(first), int(last))
        else:
            self._empty(lineno, tok, int(major), int(minor))
        self.rows.append(tok)

    def _check_new_id(self, lineno: int, tok: Token) -> None:
        """An ID appears once in a sentence; a second word 1 means a missing blank line."""
        first = self.seen.setdefault(tok.id, lineno)
        if first == lineno:
            return
        if tok.id == "1":
            raise self.error(
                lineno, "word ID 1 appears again: a blank line is missing between sentences"
            )
        raise self.error(lineno, f"duplicate ID {tok.id} (first on line {first})")

    def _between(self, lineno: int, tok: Token) -> BrittleInputError:
        """The error of a token line between a multiword token and its first word."""
        assert self.span is not None
        first, _, mwt, _ = self.span
        return self.error(
            lineno,
            f"{_owner(tok.id)} comes between multiword token {mwt.id} and its first word {first}",
        )

    def _word(self, lineno: int, tok: Token, number: int) -> None:
        """A word: next in sequence, HEAD a number, UPOS, FEATS."""
        if number != self.word + 1:
            raise self.error(lineno, f"word ID {tok.id} out of sequence (expected {self.word + 1})")
        self.word, self.empty, self.pending = number, 0, False
        if _match_head(tok.head) is None:
            if tok.head == "_":
                raise self.error(lineno, "HEAD is '_' on a word line")
            raise self.error(lineno, f"HEAD {tok.head!r} is not a non-negative integer")
        if tok.upos not in UPOS_TAGS:
            if tok.upos != "_":
                raise self.error(lineno, _upos_problem(tok))
            self.untagged.append((lineno, tok))
        self._node_columns(lineno, tok)
        self.words.append((lineno, tok))

    def _range(self, lineno: int, tok: Token, first: int, last: int) -> None:
        """A multiword token: right before its first word, overlapping no other, only
        FORM and MISC filled (FEATS may be ``Typo=Yes``)."""
        if self.pending:
            raise self._between(lineno, tok)
        if last < first:
            raise self.error(lineno, f"multiword token {tok.id} ends before it starts")
        if self.span is not None and first <= self.span[1]:
            other, line = self.span[2].id, self.span[3]
            raise self.error(
                lineno, f"multiword token {tok.id} overlaps multiword token {other} (line {line})"
            )
        if first <= self.word:
            raise self.error(
                lineno,
                f"multiword token {tok.id} comes after its first word {first}: it belongs "
                "right before it",
            )
        if first > self.word + 1:
            raise self.error(
                lineno,
                f"multiword token {tok.id} comes before word {self.word + 1}: it belongs "
                f"right before word {first}",
            )
        for column, value in zip(_COLUMN_NAMES[2:9], tok.columns()[2:9], strict=True):
            if value != "_" and not (column == "FEATS" and value == "Typo=Yes"):
                raise self.error(
                    lineno,
                    f"multiword token {tok.id} has {column} {value!r}: only FORM and MISC "
                    "are filled on a multiword token line",
                )
        self.span = (first, last, tok, lineno)
        self.pending = True

    def _empty(self, lineno: int, tok: Token, major: int, minor: int) -> None:
        """An empty node: right after its word, numbered in order, no HEAD or DEPREL,
        UPOS ``_`` or a tag, FEATS."""
        if self.pending:
            raise self._between(lineno, tok)
        if major != self.word or minor != self.empty + 1:
            raise self.error(
                lineno,
                f"empty node {tok.id} is out of place: expected {self.word}.{self.empty + 1} here",
            )
        self.empty = minor
        for column, value in (("HEAD", tok.head), ("DEPREL", tok.deprel)):
            if value != "_":
                raise self.error(
                    lineno,
                    f"empty node {tok.id} has {column} {value!r}: an empty node's HEAD and "
                    "DEPREL are '_'",
                )
        if tok.upos != "_" and tok.upos not in UPOS_TAGS:
            raise self.error(lineno, _upos_problem(tok))
        self.empty_ids.add(tok.id)
        self._node_columns(lineno, tok)

    def _node_columns(self, lineno: int, tok: Token) -> None:
        """FEATS of a word or empty node checked now, DEPS kept for :meth:`finish`."""
        if tok.feats != "_":
            problem = _feats_problem(tok.feats)
            if problem is not None:
                raise self.error(lineno, f"FEATS {tok.feats!r} of {_owner(tok.id)}: {problem}")
        if tok.deps != "_":
            self.deps.append((lineno, tok))

    def finish(self, start: int) -> None:
        """Check what needs the whole sentence: words, the last multiword token's end,
        UPOS ``_``, DEPS heads and the tree."""
        if not self.words:
            raise self.error(start, "sentence has no word lines")
        n = len(self.words)
        if self.span is not None and self.span[1] > n:
            _, _, mwt, line = self.span
            raise self.error(
                line,
                f"multiword token {mwt.id} ends after the last word: the sentence has {n} words",
            )
        if self.untagged and len(self.untagged) != n:
            line, tok = self.untagged[0]
            raise self.error(
                line, f"word {tok.id} has UPOS '_' but other words of the sentence are tagged"
            )
        for line, tok in self.deps:
            problem = _deps_problem(tok, n, self.empty_ids)
            if problem is not None:
                raise self.error(line, f"DEPS {tok.deps!r} of {_owner(tok.id)}: {problem}")
        _check_tree(self.words, self.name)


def _upos_problem(tok: Token) -> str:
    """The problem of a UPOS outside the 17 tags."""
    return f"UPOS {tok.upos!r} of {_owner(tok.id)} is not one of the 17 UD tags"


@lru_cache(maxsize=4096)
def _feats_problem(feats: str) -> str | None:
    """What is wrong with a FEATS value other than ``_`` (``None``: nothing): each item
    ``Name=Value[,Value...]`` with UD's characters, values sorted and unique, names
    unique, items sorted case-insensitively."""
    items = feats.split("|")
    names: set[str] = set()
    for item in items:
        m = _match_feature(item)
        if m is None:
            return (
                f"{item!r} is not Name=Value (names like Number or Number[psor], values "
                "like Sing or Plur,Sing)"
            )
        name, values = m.groups()
        if name in names:
            return f"feature {name} appears twice"
        names.add(name)
        split = values.split(",")
        lowered = [v.lower() for v in split]
        if lowered != sorted(lowered) or len(set(split)) != len(split):
            return f"the values of {name} are not sorted or repeat"
    lowered = [item.lower() for item in items]
    if lowered != sorted(lowered):
        return "features not sorted by name (case-insensitively)"
    return None


@lru_cache(maxsize=4096)
def _deps_items(deps: str) -> tuple[tuple[str, ...], str | None]:
    """The heads of a DEPS value other than ``_``, and what is wrong with its form
    (``None``: nothing): ``head:relation`` items, sorted by head (``5`` < ``5.1`` <
    ``5.2`` < ``6``) and then relation, none twice."""
    heads: list[str] = []
    last: tuple[int, int, str] | None = None
    for item in deps.split("|"):
        m = _match_dep(item)
        if m is None:
            return (), f"{item!r} is not head:relation"
        key = (int(m[1]), int(m[2] or 0), m[3])
        if last is not None and key <= last:
            return (
                (),
                f"{item!r} repeats an item" if key == last else "not sorted by head, then relation",
            )
        last = key
        heads.append(item.split(":", 1)[0])
    return tuple(heads), None


def _deps_problem(tok: Token, n: int, empty_ids: set[str]) -> str | None:
    """What is wrong with the DEPS of ``tok`` in a sentence of ``n`` words and the empty
    nodes ``empty_ids`` (``None``: nothing)."""
    heads, problem = _deps_items(tok.deps)
    if problem is not None:
        return problem
    for head in heads:
        if head == tok.id:
            return "points to itself"
        if "." in head:
            if head not in empty_ids:
                return f"head {head} is not an empty node of the sentence"
        elif int(head) > n:
            return f"head {head} out of range: the sentence has {n} words"
    return None


def _owner(tid: str) -> str:
    """What a token line with ID ``tid`` is, for messages: ``word 3``, ``multiword token
    2-3``, ``empty node 5.1`` or ``token 'x'``."""
    if tid.isascii() and tid.isdigit():
        return f"word {tid}"
    if "-" in tid:
        return f"multiword token {tid}"
    if "." in tid:
        return f"empty node {tid}"
    return f"token {tid!r}"


def _control_problem(text: str, pos: int) -> str:
    """Where the control character at ``text[pos]`` is, for the error message."""
    found = f"contains a control character (U+{ord(text[pos]):04X})"
    if text.startswith("#"):
        return f"comment {found}"
    column = text.count("\t", 0, pos)
    if column == 0:
        return f"ID {found}"
    owner = _owner(text.split("\t", 1)[0])
    where = _COLUMN_NAMES[column] if column < len(_COLUMN_NAMES) else f"column {column + 1}"
    return f"{where} of {owner} {found}"


def _check_tree(words: list[tuple[int, Token]], name: str) -> None:
    """HEADs (non-negative integers, checked before) form one tree over the words: each
    at most the number of words, not the word itself, one root, no cycle."""
    n = len(words)
    heads = [int(t.head) for _, t in words]
    for (lineno, tok), head in zip(words, heads, strict=True):
        if head > n:
            raise BrittleInputError(
                name, lineno, f"HEAD {head} out of range: the sentence has {n} words"
            )
        if head == int(tok.id):
            raise BrittleInputError(name, lineno, f"word {tok.id} is its own head")
    roots = [(ln, t) for (ln, t), h in zip(words, heads, strict=True) if h == 0]
    if not roots:
        raise BrittleInputError(name, words[0][0], "sentence has no root (no word with HEAD 0)")
    if len(roots) > 1:
        ids = ", ".join(t.id for _, t in roots)
        raise BrittleInputError(
            name, roots[1][0], f"sentence has several roots: words {ids} have HEAD 0"
        )
    # Cycle check: follow heads from every word; a walk longer than n never reaches 0.
    done = [False] * (n + 1)
    done[0] = True
    for start in range(1, n + 1):
        path: list[int] = []
        on_path: set[int] = set()
        node = start
        while not done[node]:
            if node in on_path:
                cycle = path[path.index(node) :]
                lineno = words[cycle[0] - 1][0]
                chain = " -> ".join(map(str, [*cycle, node]))
                raise BrittleInputError(name, lineno, f"cycle in HEAD: {chain}")
            on_path.add(node)
            path.append(node)
            node = heads[node - 1]
        for p in path:
            done[p] = True


def write_conllu(sentences: Iterable[Sentence], path: str | os.PathLike[str]) -> int:
    """Write sentences to ``path`` atomically; returns the number written."""
    count = 0
    with atomic_write(path) as handle:
        for sentence in sentences:
            handle.write(sentence.to_conllu())
            count += 1
    return count


def format_conllu(sentences: Iterable[Sentence]) -> str:
    """Sentences as one CoNLL-U string."""
    return "".join(s.to_conllu() for s in sentences)
