"""Reading and writing CoNLL-U.

Lines are split by this module so that every problem can be reported with its file and
line number; the values of the ID, HEAD and FEATS columns are checked with the
``conllu`` package's own field parsers, and comments are read with its pair parser.
Every column is kept as raw text, so ``write_conllu(read_conllu(p))`` reproduces a
valid file byte for byte.

Control characters (Unicode category Cc, such as NUL or ESC) are an error in any column
of a token line and in comments; only TAB (between columns) and LF (the line end) are
allowed. This is stricter than UD's validator, which only checks whitespace and NFC.
Format characters (category Cf: soft hyphen, zero-width space, ZWJ/ZWNJ, direction
marks) are accepted: they are legitimate text in some treebanks, and UD's validator
accepts them too.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from conllu.exceptions import ParseException
from conllu.parser import parse_dict_value, parse_id_value, parse_int_value, parse_pair_value

from brittle.engine.core.atomic import atomic_write
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.sentence import Sentence, Token

__all__ = [
    "ReadStats",
    "iter_conllu",
    "read_conllu",
    "write_conllu",
]


_COLUMN_NAMES = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

# Every character of category Cc (U+0000-U+001F and U+007F-U+009F) except TAB (U+0009).
# One search per line keeps the check in C; the slow path only runs on an error.
_find_control = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]").search


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
    """Every sentence of a CoNLL-U file.

    Args:
        path: the file.
        skip_invalid: skip sentences with errors (each gives a warning and is counted in
            ``stats.skipped``) instead of raising.
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
    p = Path(path)
    name = str(path)
    stats = stats if stats is not None else ReadStats()
    try:
        handle = p.open("rb")
    except FileNotFoundError:
        raise BrittleInputError(name, None, "file not found") from None
    except IsADirectoryError:
        raise BrittleInputError(name, None, "is a directory, not a CoNLL-U file") from None
    except OSError as exc:
        raise BrittleInputError(name, None, f"cannot be read: {exc.strerror}") from None
    with handle:
        any_line = False
        for lineno, block in _blocks(handle, name):
            any_line = True
            try:
                sentence = _parse_block(block, name, lineno, len(stats.skipped) + stats.sentences)
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


def _blocks(handle: IO[bytes], name: str) -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """Blocks of (line number, text) pairs separated by blank lines, decoded and checked."""
    block: list[tuple[int, str]] = []
    start = 0
    for lineno, raw in enumerate(handle, start=1):
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raise BrittleInputError(
                name, 1, "file starts with a byte-order mark (BOM); save it as UTF-8 without BOM"
            )
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
            start = lineno
        block.append((lineno, text))
    if block:
        yield start, block


def _parse_block(block: list[tuple[int, str]], name: str, start: int, index: int) -> Sentence:
    comments: list[str] = []
    rows: list[Token] = []
    seen_ids: dict[str, int] = {}
    expected_word = 1
    for lineno, text in block:
        bad = _find_control(text)
        if bad is not None:
            raise BrittleInputError(name, lineno, _control_problem(text, bad.start()))
        if text.startswith("#"):
            if rows:
                raise BrittleInputError(
                    name,
                    lineno,
                    "comment after token lines: a blank line is missing between sentences",
                )
            comments.append(text)
            continue
        cols = text.split("\t")
        if len(cols) != 10:
            raise BrittleInputError(
                name, lineno, f"expected 10 tab-separated columns, found {len(cols)}"
            )
        if "" in cols:
            empty = [i + 1 for i, c in enumerate(cols) if c == ""]
            raise BrittleInputError(
                name, lineno, f"empty column {empty[0]} (use '_' for an empty value)"
            )
        tok = Token(*cols)
        try:
            tid = parse_id_value(tok.id)
        except ParseException:
            raise BrittleInputError(
                name, lineno, f"ID {tok.id!r} is not an integer, a range (3-4) or a decimal (5.1)"
            ) from None
        if tid is None:
            raise BrittleInputError(name, lineno, "ID is empty")
        if tok.id in seen_ids:
            if tok.id == "1" and rows:
                problem = "word ID 1 appears again: a blank line is missing between sentences"
            else:
                problem = f"duplicate ID {tok.id} (first on line {seen_ids[tok.id]})"
            raise BrittleInputError(name, lineno, problem)
        seen_ids[tok.id] = lineno
        kind = tok.kind
        if kind == "word":
            if int(tok.id) != expected_word:
                raise BrittleInputError(
                    name, lineno, f"word ID {tok.id} out of sequence (expected {expected_word})"
                )
            expected_word += 1
            try:
                head = parse_int_value(tok.head)
            except ParseException:
                raise BrittleInputError(
                    name, lineno, f"HEAD {tok.head!r} is not a non-negative integer"
                ) from None
            if head is None:
                raise BrittleInputError(name, lineno, "HEAD is '_' on a word line")
        try:
            parse_dict_value(tok.feats)
        except ParseException:  # pragma: no cover - conllu accepts almost anything here
            raise BrittleInputError(name, lineno, f"FEATS {tok.feats!r} is malformed") from None
        rows.append(tok)
    words = [(ln, t) for (ln, _), t in zip(_token_lines(block), rows, strict=True)]
    words = [(ln, t) for ln, t in words if t.kind == "word"]
    if not words:
        raise BrittleInputError(name, start, "sentence has no word lines")
    _check_tree(words, name)
    sent_id = ""
    for comment in comments:
        key, value = parse_pair_value(comment[1:])
        if key == "sent_id" and value:
            sent_id = value
            break
    if not sent_id:
        sent_id = f"{Path(name).name}#{index + 1}"
    return Sentence(sent_id, tuple(comments), tuple(rows), source=name, line=start)


def _control_problem(text: str, pos: int) -> str:
    """Where the control character at ``text[pos]`` is, for the error message."""
    found = f"contains a control character (U+{ord(text[pos]):04X})"
    if text.startswith("#"):
        return f"comment {found}"
    column = text.count("\t", 0, pos)
    if column == 0:
        return f"ID {found}"
    tid = text.split("\t", 1)[0]
    if tid.isascii() and tid.isdigit():
        owner = f"word {tid}"
    elif "-" in tid:
        owner = f"multiword token {tid}"
    elif "." in tid:
        owner = f"empty node {tid}"
    else:
        owner = f"token {tid!r}"
    where = _COLUMN_NAMES[column] if column < len(_COLUMN_NAMES) else f"column {column + 1}"
    return f"{where} of {owner} {found}"


def _token_lines(block: list[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(ln, text) for ln, text in block if not text.startswith("#")]


def _check_tree(words: list[tuple[int, Token]], name: str) -> None:
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
