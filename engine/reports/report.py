"""Robustness reports from ``results.jsonl``: summary.json, summary.md and plots.

Reports are data first: :func:`summarize` turns the result rows into one JSON-ready
mapping and the writers only read it. Every file is written atomically, so
``brittle report OUT`` can re-render everything from ``results.jsonl`` at any time.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

from brittle.engine.core.atomic import atomic_write, write_json
from brittle.engine.core.json_types import JSONObject, JSONValue
from brittle.engine.reports.results import ResultRow

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
CONFIG_JSON = "config.json"
PLOTS = "plots"
#: The plot of a multi-budget run's directory: each task's drop against the budget.
DROP_VS_BUDGET = "drop_vs_budget.png"


class TaskSummary(TypedDict):
    """One task's means over the sentences (``None``: no defined value).

    ``mean_worst``, present when the rows record it (``sample`` with ``check_all``): the
    mean over sentences of the task's own worst drop among the feasible candidates.
    ``mean_gain``, present when the rows record it: the mean over sentences of the
    task's largest gain among the same candidates (minus the smallest drop), the null
    ``mean_worst`` is read against.
    """

    clean: float | None
    perturbed: float | None
    mean_drop: float | None
    std_drop: float | None
    mean_worst: NotRequired[float | None]
    mean_gain: NotRequired[float | None]


class ValiditySummary(TypedDict):
    """How valid an attack's kept perturbations are (``summary.json``'s ``validity``).

    ``graded`` kept perturbations were graded; ``shares`` gives, per level (``tree``,
    ``grammatical``, ``meaning``), the share of them valid at that level;
    ``mean_drop_valid`` gives, per level and task, the mean drop over the attacked
    sentences when a perturbation not valid at that level counts as none (drop 0): the
    damage valid perturbations alone did, beside ``tasks``' mean drop over all.
    """

    graded: int
    shares: dict[str, float | None]
    mean_drop_valid: dict[str, dict[str, float | None]]


class RelationBreaks(TypedDict):
    """How often a parser target's attachments of one gold relation broke: of the words
    of that relation it attached right in the clean sentence (``attached``), those it
    attached wrong in the kept perturbation (``broken``), and their ``share``."""

    attached: int
    broken: int
    share: float | None


class Summary(TypedDict):
    """``summary.json``: the attack's summary (see :func:`summarize`).

    ``no_eligible`` counts the sentences that offered nothing to perturb
    (:attr:`~brittle.engine.reports.results.ResultRow.nothing_eligible`); they are not
    failures and stay out of the task means, the success rate and the queries.
    ``rejected_by_constraint`` adds up, per constraint, the candidates it was the first
    to reject (empty when the rows do not record it). The quality means are over the kept
    perturbations (``None`` when not measured). ``negative_worst_cases`` counts the
    sentences whose kept perturbation raised the probes' scores (a negative drop, kept
    in the means as it is: the search found nothing that lowered them);
    ``query_budget_hits`` the sentences whose search stopped at ``--query-budget``
    (their drops are lower bounds; ``None`` without a query budget). Both are absent
    from summaries written before they were counted. ``time_budget_hits``, present only
    with ``--time-budget``, counts the sentences whose search ran out of time.
    ``parser_breaks``, present only with ``--target parser:NAME``, gives per gold
    relation how often the parser's right attachments broke (:class:`RelationBreaks`).
    """

    sentences: int
    treebank_sentences: int | None
    complete: bool
    tasks: dict[str, TaskSummary]
    epsilon_l2: float | None
    epsilon_cosine: float | None
    success_rate: float | None
    queries_per_sentence: float | None
    mean_syntax_distance: float | None
    mean_hamming: float | None
    mean_dnd: float | None
    mean_idc: float | None
    no_eligible: int
    rejected_by_constraint: dict[str, int]
    mean_surprisal_increase: float | None
    mean_similarity: float | None
    retag_agreement: float | None
    negative_worst_cases: NotRequired[int]
    query_budget_hits: NotRequired[int | None]
    time_budget_hits: NotRequired[int]
    validity: NotRequired[ValiditySummary | None]
    parser_breaks: NotRequired[dict[str, RelationBreaks]]
    config: JSONObject
    objective: list[str]
    inputs: JSONObject
    versions: dict[str, str]


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(vals)) if vals else None


def _std(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.std(vals)) if vals else None


def _round(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(x, digits)


@dataclass
class Digest:
    """What the summary and the plots need from the result rows, gathered in one pass.

    Memory is a few floats per sentence and task (``array('d')``), whatever the length
    of the sentences or the number of candidates, so a whole treebank's results can be
    summarised while streaming them.

    Attributes:
        sentences: rows seen.
        no_eligible: rows whose sentence offered nothing to perturb; they enter only
            ``sentences`` and this count.
        tasks: task names in order of first appearance.
        clean, perturbed, drop: per task, one value per row that has the task.
        worst: per task, one value per row that records the task's own worst drop.
        gain: per task, one value per row that records the task's own smallest drop:
            its negative, the largest gain.
        epsilon_l2, epsilon_cosine, hamming: one value per successful row (None skipped).
        queries: one value per row.
        syntax_distance: one value per row that has one.
        successes: successful rows.
        rejected: per constraint, candidates rejected, summed over the rows that say.
        surprisal, similarity: the kept perturbations' quality (successful rows that
            have it).
        retag_words, retag_kept: changed words of the successful rows with a ``retag``
            value, and how many of them kept their gold UPOS.
        negative: successful rows whose kept worst case improved the objective (a
            negative damage: no candidate lowered the probes).
        graded: successful rows whose perturbation was graded.
        valid: per validity level (``tree``, ``grammatical``, ``meaning``), the graded
            rows valid at that level.
        valid_drop: per level and task, one drop per attacked row: the row's drop when
            its perturbation is valid at that level, else 0 (an invalid perturbation
            counts as no perturbation), once the run grades.
    """

    sentences: int = 0
    successes: int = 0
    no_eligible: int = 0
    tasks: list[str] = field(default_factory=list)
    clean: dict[str, array[float]] = field(default_factory=dict)
    perturbed: dict[str, array[float]] = field(default_factory=dict)
    drop: dict[str, array[float]] = field(default_factory=dict)
    worst: dict[str, array[float]] = field(default_factory=dict)
    gain: dict[str, array[float]] = field(default_factory=dict)
    epsilon_l2: array[float] = field(default_factory=lambda: array("d"))
    epsilon_cosine: array[float] = field(default_factory=lambda: array("d"))
    hamming: array[float] = field(default_factory=lambda: array("d"))
    queries: array[float] = field(default_factory=lambda: array("d"))
    syntax_distance: array[float] = field(default_factory=lambda: array("d"))
    dnd: array[float] = field(default_factory=lambda: array("d"))
    idc: array[float] = field(default_factory=lambda: array("d"))
    rejected: dict[str, int] = field(default_factory=dict)
    surprisal: array[float] = field(default_factory=lambda: array("d"))
    similarity: array[float] = field(default_factory=lambda: array("d"))
    retag_words: int = 0
    retag_kept: float = 0.0
    negative: int = 0
    time_budget_hits: int = 0
    graded: int = 0
    valid: dict[str, int] = field(default_factory=dict)
    valid_drop: dict[str, dict[str, array[float]]] = field(default_factory=dict)

    @property
    def attacked(self) -> int:
        """Rows whose sentence offered something to perturb."""
        return self.sentences - self.no_eligible

    @classmethod
    def of(cls, rows: Iterable[ResultRow]) -> Digest:
        """The digest of ``rows`` (any iterable; consumed once)."""
        digest = cls()
        for row in rows:
            digest.add(row)
        return digest

    def add(self, row: ResultRow) -> None:
        """Take one result row into account."""
        self.sentences += 1
        for name, n in (row.rejected or {}).items():
            self.rejected[name] = self.rejected.get(name, 0) + n
        if row.nothing_eligible:
            self.no_eligible += 1
            return
        for t, v in row.tasks.items():
            if t not in self.clean:
                self.tasks.append(t)
                self.clean[t], self.perturbed[t], self.drop[t] = array("d"), array("d"), array("d")
            self.clean[t].append(_float(v.clean))
            self.perturbed[t].append(_float(v.perturbed))
            self.drop[t].append(_float(v.drop))
            if v.worst is not None:
                self.worst.setdefault(t, array("d")).append(v.worst)
            if v.best is not None:
                self.gain.setdefault(t, array("d")).append(-v.best)
        self.queries.append(float(row.queries))
        self.time_budget_hits += bool(row.time_budget_hit)
        if row.syntax_distance is not None:
            self.syntax_distance.append(float(row.syntax_distance))
        self._add_validity(row)
        if row.success:
            self.successes += 1
            if row.damage < 0:
                self.negative += 1
            if row.epsilon_l2 is not None:
                self.epsilon_l2.append(float(row.epsilon_l2))
            if row.epsilon_cosine is not None:
                self.epsilon_cosine.append(float(row.epsilon_cosine))
            self.hamming.append(float(row.hamming))
            if row.dnd is not None and row.idc is not None:
                self.dnd.append(row.dnd)
                self.idc.append(row.idc)
            if row.surprisal_increase is not None:
                self.surprisal.append(row.surprisal_increase)
            if row.similarity is not None:
                self.similarity.append(row.similarity)
            if row.retag is not None:
                words = row.perturbation.size
                self.retag_words += words
                self.retag_kept += row.retag * words

    def _add_validity(self, row: ResultRow) -> None:
        """Count a graded row's levels, and keep every attacked row's drop per level
        (0 unless its kept perturbation is graded valid at that level)."""
        verdict = row.validity if row.success else None
        if verdict is not None:
            self.graded += 1
        for level in LEVELS:
            holds = verdict is not None and verdict.at(level) is True
            if holds:
                self.valid[level] = self.valid.get(level, 0) + 1
            drops = self.valid_drop.setdefault(level, {})
            for t, v in row.tasks.items():
                drops.setdefault(t, array("d")).append(_float(v.drop) if holds else 0.0)


#: Validity levels of the summary, from the weakest to the strictest.
LEVELS = ("tree", "grammatical", "meaning")


def _float(x: float | None) -> float:
    return math.nan if x is None else float(x)


def summarize(
    rows: Iterable[ResultRow] | Digest,
    *,
    config: Mapping[str, JSONValue],
    versions: Mapping[str, str],
    inputs: JSONObject | None = None,
    total: int | None = None,
    objective: Sequence[str] = (),
    parser_breaks: Mapping[str, RelationBreaks] | None = None,
) -> Summary:
    """The summary of an attack (Algorithms 2 and 3 of La Malfa et al.).

    ``tasks`` maps each task to its mean clean and perturbed metric and the mean and
    standard deviation of the worst-case drop per sentence; ``epsilon_l2`` is the mean
    over sentences of the farthest L2 distance between the representation of the
    original and of a perturbation, ``epsilon_cosine`` the mean lowest cosine
    similarity; ``success_rate`` is the share of sentences with a feasible perturbation.
    Sentences that offered nothing to perturb are counted in ``no_eligible`` and left
    out of the task means, the success rate and the queries per sentence. Undefined
    values (NaN, missing) are left out of every mean.
    """
    d = rows if isinstance(rows, Digest) else Digest.of(rows)
    tasks: dict[str, TaskSummary] = {
        t: {
            "clean": _round(_mean(d.clean[t])),
            "perturbed": _round(_mean(d.perturbed[t])),
            "mean_drop": _round(_mean(d.drop[t])),
            "std_drop": _round(_std(d.drop[t])),
        }
        for t in d.tasks
    }
    for t, values in d.worst.items():
        tasks[t]["mean_worst"] = _round(_mean(values))
    for t, values in d.gain.items():
        tasks[t]["mean_gain"] = _round(_mean(values))
    n = d.sentences
    attacked = d.attacked
    budget = config.get("query_budget")
    hits = sum(q >= budget for q in d.queries) if isinstance(budget, int) else None
    summary: Summary = {
        "sentences": n,
        "treebank_sentences": total,
        "complete": total is None or n >= total,
        "tasks": tasks,
        "epsilon_l2": _round(_mean(d.epsilon_l2)),
        "epsilon_cosine": _round(_mean(d.epsilon_cosine)),
        "success_rate": _round(d.successes / attacked if attacked else 0.0),
        "queries_per_sentence": _round(_mean(d.queries) or 0.0),
        "mean_syntax_distance": _round(_mean(d.syntax_distance)),
        "mean_hamming": _round(_mean(d.hamming)),
        "mean_dnd": _round(_mean(d.dnd)),
        "mean_idc": _round(_mean(d.idc)),
        "no_eligible": d.no_eligible,
        "rejected_by_constraint": dict(d.rejected),
        "mean_surprisal_increase": _round(_mean(d.surprisal)),
        "mean_similarity": _round(_mean(d.similarity)),
        "retag_agreement": _round(d.retag_kept / d.retag_words if d.retag_words else None),
        "negative_worst_cases": d.negative,
        "query_budget_hits": hits,
        "validity": _validity(d),
        "config": dict(config),
        "objective": list(objective),
        "inputs": dict(inputs or {}),
        "versions": dict(versions),
    }
    if config.get("time_budget") is not None:  # written only with a time budget
        summary["time_budget_hits"] = d.time_budget_hits
    if parser_breaks is not None:  # written only with a parser target
        summary["parser_breaks"] = dict(parser_breaks)
    return summary


def changed_sentences(summary: Summary) -> int:
    """Sentences that kept a perturbation: the success rate is over the sentences that
    offered something to perturb."""
    attacked = summary["sentences"] - summary["no_eligible"]
    return round((summary["success_rate"] or 0.0) * attacked)


def _validity(d: Digest) -> ValiditySummary | None:
    """The validity part of a summary (``None`` when nothing was graded)."""
    if not d.graded:
        return None
    return {
        "graded": d.graded,
        "shares": {level: _round(d.valid.get(level, 0) / d.graded) for level in LEVELS},
        "mean_drop_valid": {
            level: {t: _round(_mean(d.valid_drop[level][t])) for t in d.tasks} for level in LEVELS
        },
    }


def validity_lines(summary: Summary) -> list[str]:
    """How valid the kept perturbations are and what the valid ones did, per level; or
    that they were not graded."""
    validity = summary.get("validity")
    if validity is None:
        if not summary["success_rate"]:
            return []
        return [
            "Validity of the kept perturbations: not graded (the run had `--no-grade`; "
            "`brittle grade` on the treebank and adversarial.conllu grades them).",
            "",
        ]
    tasks = list(summary["tasks"])
    return [
        "## Validity of the kept perturbations",
        "",
        f"{validity['graded']} kept perturbations graded by brittle's judges "
        "(docs/validity.md). Mean drop over the attacked sentences when a perturbation "
        "that is not valid at the level counts as none, beside the mean drop over all:",
        "",
        "| level | share valid | " + " | ".join(tasks) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in tasks) + " |",
        "| all kept | – | "
        + " | ".join(_fmt(summary["tasks"][t]["mean_drop"]) for t in tasks)
        + " |",
        *(
            f"| {level} | {_fmt(validity['shares'][level])} | "
            + " | ".join(_fmt(validity["mean_drop_valid"][level].get(t)) for t in tasks)
            + " |"
            for level in LEVELS
        ),
        "",
    ]


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def incomplete_note(summary: Summary) -> list[str]:
    """The warning lines of a summary that covers only part of the treebank."""
    if summary["complete"]:
        return []
    return [
        f"**Incomplete:** {summary['sentences']} of {summary['treebank_sentences']} "
        "sentences (the run was interrupted; `brittle attack ... --resume` finishes it).",
        "",
    ]


def objective_line(summary: Summary) -> list[str]:
    """The line that names the objective the search maximised."""
    if not summary["objective"]:
        return []
    return [f"Objective: the mean drop of {', '.join(summary['objective'])}.", ""]


def order_lines(summary: Summary) -> list[str]:
    """The word-order displacement of reorderings (none for substitutions)."""
    if summary["mean_dnd"] is None:
        return []
    return [
        f"Word order of the chosen reorderings: mean DND {_fmt(summary['mean_dnd'])}, "
        f"mean IDC {_fmt(summary['mean_idc'])} (Clouatre et al.; 0 = unchanged).",
        "",
    ]


def eligible_lines(summary: Summary) -> list[str]:
    """The line that counts the sentences with nothing to perturb (none when all had
    something)."""
    n = summary["no_eligible"]
    if not n:
        return []
    return [
        f"{n} of {summary['sentences']} sentences had no eligible position: they are not "
        "counted as failures and are left out of the task means, the success rate and "
        "the queries per sentence.",
        "",
    ]


def bound_lines(summary: Summary) -> list[str]:
    """How the means treat worst cases that raised the scores, and how many searches
    stopped at the query budget (none when neither happened)."""
    lines = []
    negative = summary.get("negative_worst_cases", 0)
    if negative:
        lines.append(
            f"{negative} sentence(s) kept a worst case that raised the probes' scores "
            "(a negative drop): no admissible candidate lowered them; they count in the "
            "means with their negative drop."
        )
    hits = summary.get("query_budget_hits")
    if hits:
        lines.append(
            f"{hits} sentence(s) stopped at the query budget: their drops are lower bounds."
        )
    timed = summary.get("time_budget_hits")
    if timed:
        lines.append(
            f"{timed} sentence(s) stopped at the time budget: their drops are lower bounds, "
            "and depend on the machine's speed."
        )
    return [*lines, ""] if lines else []


def rejection_lines(summary: Summary) -> list[str]:
    """The candidates each constraint was the first to reject (none when the rows do not
    record it)."""
    rejected = summary["rejected_by_constraint"]
    if not rejected:
        return []
    return [
        "Candidates rejected, per constraint (each counts for the first constraint that "
        "rejected it; the later ones did not judge it):",
        "",
        "| constraint | rejected |",
        "| --- | ---: |",
        *(f"| {name} | {n} |" for name, n in rejected.items()),
        "",
    ]


def quality_lines(summary: Summary) -> list[str]:
    """How natural the kept perturbations leave the sentences (none when not measured)."""
    if summary["mean_surprisal_increase"] is None and summary["mean_similarity"] is None:
        return []
    retag = summary["retag_agreement"]
    return [
        "## Quality of the kept perturbations",
        "",
        "| words changed | surprisal increase (bits/word) | similarity (MiniLM cosine) "
        "| retag agreement (gold) |",
        "| ---: | ---: | ---: | ---: |",
        f"| {_fmt(summary['mean_hamming'], 2)} | {_fmt(summary['mean_surprisal_increase'])} | "
        f"{_fmt(summary['mean_similarity'])} | {'–' if retag is None else f'{retag:.1%}'} |",
        "",
    ]


def measured_in(summary: Summary) -> list[str]:
    """The line that says which representation epsilon is measured in (the first
    probe's), when the summary records the probes."""
    probes = summary["inputs"].get("probes")
    if not isinstance(probes, list) or not probes or not isinstance(probes[0], dict):
        return []
    return [f"Measured in the first probe's representation: {probes[0].get('representation')}.", ""]


def parser_break_lines(summary: Summary) -> list[str]:
    """The parser target's broken attachments per gold relation, most broken first."""
    breaks = summary.get("parser_breaks")
    if not breaks:
        return []
    lines = [
        "## Parser attachments broken, by gold relation",
        "",
        "Of the words the parser attached right in the clean sentence, the share it "
        "attached wrong in the kept perturbation.",
        "",
        "| relation | attached right | broken | share |",
        "| --- | ---: | ---: | ---: |",
    ]
    order = sorted(breaks, key=lambda r: (-(breaks[r]["share"] or 0.0), r))
    for rel in order:
        b = breaks[rel]
        lines.append(f"| {rel} | {b['attached']} | {b['broken']} | {_fmt(b['share'])} |")
    return [*lines, ""]


def render_markdown(summary: Summary) -> str:
    """``summary.md``: the tables a reader wants first, then configuration and versions."""
    cfg = summary["config"]
    lines = [
        "# brittle attack summary",
        "",
        f"{summary['sentences']} sentences of `{cfg.get('treebank', '?')}`, method "
        f"`{cfg.get('method', '?')}`, search `{cfg.get('search', '?')}`, budget "
        f"tau = {cfg.get('budget', '?')}, seed {cfg.get('seed', '?')}.",
        "",
        *incomplete_note(summary),
        "## Worst-case drop per task (Algorithm 3)",
        "",
        *objective_line(summary),
    ]
    alone = any("mean_worst" in v for v in summary["tasks"].values())
    null = any("mean_gain" in v for v in summary["tasks"].values())
    header = "| task | clean | perturbed | mean drop | std drop |"
    if alone:
        header += " worst drop, task alone |"
    if null:
        header += " largest gain, task alone (the null) |"
    lines += [header, "| --- |" + " ---: |" * (header.count("|") - 2)]
    for task, v in summary["tasks"].items():
        lines.append(
            f"| {task} | {_fmt(v['clean'])} | {_fmt(v['perturbed'])} | "
            f"{_fmt(v['mean_drop'])} | {_fmt(v['std_drop'])} |"
            + (f" {_fmt(v.get('mean_worst'))} |" if alone else "")
            + (f" {_fmt(v.get('mean_gain'))} |" if null else "")
        )
    if alone:
        lines += [
            "",
            "Worst drop, task alone: per sentence the largest drop of that task over every "
            "feasible candidate (Algorithm 1 run for the task by itself), averaged.",
        ]
    if null:
        lines += [
            "",
            "Largest gain, task alone: per sentence the largest rise of that task's score "
            "over the same candidates, averaged: what the worst of b finds by chance if "
            "the changes do nothing to the task on average. A worst drop above it is "
            "damage the changes do; one near it is the maximum of noise.",
        ]
    lines += [
        "",
        "## Representation distance (Algorithm 2)",
        "",
        "| epsilon L2 (mean of per-sentence farthest) "
        "| epsilon cosine (mean of per-sentence lowest) |",
        "| ---: | ---: |",
        f"| {_fmt(summary['epsilon_l2'])} | {_fmt(summary['epsilon_cosine'])} |",
        "",
        *measured_in(summary),
        "## Search",
        "",
        "| success rate | queries per sentence | mean syntax distance | mean words changed |",
        "| ---: | ---: | ---: | ---: |",
        f"| {_fmt(summary['success_rate'])} | {_fmt(summary['queries_per_sentence'], 1)} | "
        f"{_fmt(summary['mean_syntax_distance'])} | {_fmt(summary['mean_hamming'], 2)} |",
        "",
        *eligible_lines(summary),
        *bound_lines(summary),
        *validity_lines(summary),
        *parser_break_lines(summary),
        *rejection_lines(summary),
        *order_lines(summary),
        *quality_lines(summary),
        "## Configuration",
        "",
        "```json",
        json.dumps(cfg, indent=2, sort_keys=True),
        "```",
        "",
        "## Versions",
        "",
        "| package | version |",
        "| --- | --- |",
    ]
    lines += [f"| {k} | {v} |" for k, v in sorted(summary["versions"].items())]
    return "\n".join(lines) + "\n"


def _figure(width: float, height: float) -> Figure:
    """A figure outside pyplot's global state (nothing to close, safe in threads)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def plot_clean_vs_perturbed(rows: Iterable[ResultRow] | Digest, path: Path) -> None:
    """Per task, each sentence's clean metric against its perturbed metric (PNG)."""
    from matplotlib.ticker import MaxNLocator  # deferred with matplotlib itself

    d = rows if isinstance(rows, Digest) else Digest.of(rows)
    names = d.tasks
    cols = max(1, min(3, len(names)))
    nrows = max(1, math.ceil(len(names) / cols))
    fig = _figure(3.6 * cols, 3.4 * nrows)
    # Drawing cost is per artist: fixed margins instead of tight_layout (the labels are
    # the same on every panel), titles at a fixed height (no search for the tick
    # labels' extents), at most 5 ticks per axis, and no empty panels.
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.12, top=0.92, wspace=0.32, hspace=0.42)
    axes = fig.subplots(nrows, cols, squeeze=False)
    for ax, t in zip(axes.flat, names, strict=False):
        clean = np.asarray(d.clean[t])
        pert = np.asarray(d.perturbed[t])
        ax.scatter(clean, pert, s=10, alpha=0.6)
        finite = np.concatenate([clean, pert, [0.0, 1.0]])
        finite = finite[np.isfinite(finite)]
        lo, hi = float(finite.min()), float(finite.max())
        ax.plot([lo, hi], [lo, hi], color="grey", linewidth=1, linestyle="--")
        ax.set_title(t, fontsize="medium", y=1.02)
        ax.set_xlabel("clean")
        ax.set_ylabel("perturbed")
        ax.xaxis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))
    for ax in list(axes.flat)[len(names) :]:
        fig.delaxes(ax)
    _save(fig, path)


def plot_drop_vs_budget(summaries: Mapping[int, Summary], path: Path) -> None:
    """Mean worst-case drop per task against the budget tau, one line per task (PNG)."""
    budgets = sorted(summaries)
    tasks: list[str] = []
    for b in budgets:
        for t in summaries[b]["tasks"]:
            if t not in tasks:
                tasks.append(t)
    fig = _figure(5, 4)
    ax = fig.subplots()
    for t in tasks:
        ys = [_mean_drop(summaries[b], t) for b in budgets]
        ax.plot(budgets, [np.nan if y is None else y for y in ys], marker="o", label=t)
    ax.set_xlabel("budget tau (words)")
    ax.set_ylabel("mean worst-case drop")
    ax.set_xticks(budgets)
    ax.legend(fontsize="small")
    fig.tight_layout()
    _save(fig, path)


def _mean_drop(summary: Summary, task: str) -> float | None:
    scores = summary["tasks"].get(task)
    return None if scores is None else scores["mean_drop"]


def _save(fig: Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Fixed metadata keeps PNGs byte-identical across runs.
    with atomic_write(path, mode="wb") as handle:
        fig.savefig(handle, format="png", dpi=100, metadata={"Software": None})


def render_reports(
    out: Path,
    rows: Iterable[ResultRow] | Digest,
    *,
    config: Mapping[str, JSONValue],
    versions: Mapping[str, str],
    inputs: JSONObject | None = None,
    total: int | None = None,
    objective: Sequence[str] = (),
    parser_breaks: Mapping[str, RelationBreaks] | None = None,
) -> Summary:
    """Write summary.json, summary.md and plots/ for one attack directory.

    ``inputs`` (treebank and probe hashes) and ``total`` (sentences the run covers) go
    into the summary, which says when it covers only part of the treebank.
    """
    digest = rows if isinstance(rows, Digest) else Digest.of(rows)
    summary = summarize(
        digest,
        config=config,
        versions=versions,
        inputs=inputs,
        total=total,
        objective=objective,
        parser_breaks=parser_breaks,
    )
    write_json(out / SUMMARY_JSON, summary, sort_keys=True)
    with atomic_write(out / SUMMARY_MD) as handle:
        handle.write(render_markdown(summary))
    if digest.sentences:
        plot_clean_vs_perturbed(digest, out / PLOTS / "clean_vs_perturbed.png")
    return summary


def iter_budget_runs(out: Path) -> Iterable[tuple[int, Path]]:
    """Sub-directories ``tau=K`` of a multi-budget attack, by budget."""
    for child in sorted(out.glob("tau=*")):
        try:
            yield int(child.name.split("=", 1)[1]), child
        except ValueError:
            continue
