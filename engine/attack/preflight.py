"""Every cheap check of an attack, before any model loads.

:func:`preflight` reads the treebank once (each sentence checked, the sentences
counted, the generator's columns surveyed), reads the probes' descriptions (no torch),
resolves ``--objective`` against them and checks the output directory. A mistake is
therefore reported in about the time it takes to read the treebank, and nothing is
loaded or written before it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from brittle.engine.attack.config import AttackConfig
from brittle.engine.core.atomic import check_output
from brittle.engine.core.conllu import iter_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONObject
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.core.sentence import ColumnSurvey, Sentence
from brittle.engine.probes.probe_eval import ProbeColumns, probe_columns
from brittle.engine.targets.parser import (
    PARSER_PREFIX,
    ParserTarget,
    parser_columns,
    target_labels,
)
from brittle.scorers.probe import ProbeDescription, describe_probe
from brittle.search.generators.base import GENERATORS

#: File of an attack's output directory that records its inputs.
INPUTS_JSON = "inputs.json"


@dataclass(frozen=True)
class Preflight:
    """What the checks found out.

    Attributes:
        total: sentences to attack.
        probes: the probes' descriptions, in ``--probe`` order.
        columns: the task columns the probes give.
        objective: the columns whose mean drop the attack maximises.
        warnings: things that are allowed but worth saying (one line each).
    """

    total: int
    probes: tuple[ProbeDescription, ...]
    columns: ProbeColumns
    objective: tuple[str, ...]
    warnings: tuple[str, ...]

    def inputs(self, config: AttackConfig) -> JSONObject:
        """The record of ``inputs.json``: which treebank and probes, exactly (SHA-256)."""
        return {
            "treebank": {"path": config.treebank, "sha256": file_sha256(Path(config.treebank))},
            "sentences": self.total,
            "probes": [
                {
                    "path": str(p.path),
                    "task": p.spec.task,
                    "representation": p.key.describe(),
                    "sha256": p.sha256(),
                }
                for p in self.probes
            ],
        }


def stream_sentences(config: AttackConfig) -> Iterator[Sentence]:
    """The treebank's sentences one at a time, up to ``config.limit``."""
    return itertools.islice(iter_conllu(config.treebank), config.limit)


def count_sentences(config: AttackConfig) -> int:
    """Sentences to attack, read (not kept) once up front: a bad sentence anywhere in
    the treebank is reported with its line before any search starts, and so is a
    column the generator reads that the treebank leaves blank."""
    requires = GENERATORS.get(config.method).requires
    survey = ColumnSurvey(frozenset(c for c in requires if c in SURVEYED))
    for sentence in stream_sentences(config):
        survey.add(sentence)
    if survey.blank:
        column = survey.blank[0]
        raise ConfigError(
            f"method {config.method!r} reads the {column.upper()} column, but "
            f"{config.treebank} leaves it blank ('_' on every word)"
        )
    return survey.sentences


#: Columns whose absence a survey can tell (FORM, ID and HEAD are always checked).
SURVEYED = frozenset({"lemma", "upos", "xpos", "feats", "deprel"})


def treebank_inputs(config: AttackConfig, total: int) -> JSONObject:
    """The record of ``inputs.json`` when no probe was checked (pre-built components)."""
    treebank: JSONObject = {"path": config.treebank, "sha256": file_sha256(Path(config.treebank))}
    return {"treebank": treebank, "sentences": total, "probes": []}


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_out_path(out: Path) -> None:
    """``out`` must be a directory or not exist yet, in a place that can be written.

    Raises:
        ConfigError: ``out`` is a file.
        OutputError: files cannot be created there (permission denied, a read-only
            file system), as writing would say.
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; an attack writes a directory")
    check_output(out, directory=True)


def attack_columns(tasks: Sequence[str], target_ud_labels: bool | None) -> ProbeColumns:
    """The columns of probes of ``tasks`` followed by a target parser's, if any
    (``target_ud_labels`` is not ``None``): ``parser.uas``, and ``parser.las`` for one
    whose labels are UD's."""
    columns = probe_columns(tasks)
    if target_ud_labels is None:
        return columns
    return ProbeColumns(
        (*columns.prefixes, PARSER_PREFIX),
        (*columns.columns, *parser_columns(target_ud_labels)),
        (*columns.primary, *ParserTarget.primary),
    )


def preflight(config: AttackConfig, out: Path | None = None) -> Preflight:
    """Check ``config`` (and the output directory) without loading any model.

    Raises:
        BrittleInputError: the treebank is missing or malformed (file and line).
        ResourceMissingError: a probe directory holds no probe.
        ConfigError: any other mistake, one line.
    """
    if out is not None:
        inputs = [*named("TREEBANK", config.treebank), *named("--probe", config.probes)]
        check_no_overlap(inputs, named("--out", out))
        check_out_path(out)
    probes = tuple(describe_probe(p) for p in config.probes)
    if not probes and config.target is None:
        raise ConfigError("an attack needs at least one --probe directory or a --target")
    # before anything is written: a target parser whose model is missing says so here
    labels = None if config.target is None else target_labels(config.target)
    columns = attack_columns([p.spec.task for p in probes], labels)
    objective = columns.objective(config.objective)
    warnings: list[str] = []
    representations = {(p.key.backend, p.key.model, p.key.layer, p.key.pooling) for p in probes}
    if len(representations) > 1:
        first = probes[0].key.describe()
        warnings.append(
            "the probes read different representations "
            f"({'; '.join(sorted({p.key.describe() for p in probes}))}); each is encoded "
            f"separately, and epsilon is measured in the first one ({first})"
        )
    total = count_sentences(config)
    return Preflight(total, probes, columns, objective, tuple(warnings))


def check_inputs(out: Path, inputs: JSONObject) -> None:
    """On resume: the treebank must be the one the earlier rows came from."""
    path = out / INPUTS_JSON
    if not path.exists():
        return
    try:
        previous = json.loads(path.read_text())
        before = previous["treebank"]["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    treebank = inputs["treebank"]
    if isinstance(treebank, dict) and treebank.get("sha256") != before:
        raise ConfigError(
            f"{treebank.get('path')} changed since the attack in {out} began (its SHA-256 "
            "differs); resume with the same file or choose another --out"
        )
