"""Agreement results: per-item scores, accuracies, paired t-tests and the tables.

An item is **correct** when the agreeing verb form has the lower surprisal
(``S(correct) < S(wrong)``; a tie counts as an error). Its **error margin** is
``S(correct) - S(wrong)`` in bits: negative when the model prefers the agreeing form,
positive when it prefers the wrong one (the attack maximises it).

Per condition the one-tailed paired t-test asks whether ``S(correct)`` is lower than
``S(wrong)`` over the items: ``d = S(wrong) - S(correct)``,
``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom (sample standard
deviation) and ``p = P(T >= t)`` from Student's t distribution (scipy).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from brittle.engine.agreement.lexicon import VERB_PAIRS
from brittle.engine.agreement.stimuli import Stimulus

__all__ = [
    "ItemScore",
    "PairedT",
    "Summary",
    "item_scores",
    "paired_t",
    "summarise",
]


@dataclass(frozen=True)
class ItemScore:
    """One stimulus scored by one model.

    Attributes:
        model: the model's label.
        sent_id: the stimulus.
        experiment: ``1`` or ``2``.
        condition: ``<target>-<context>-E<depth>``.
        verb: the verb pair (``is/are``).
        item: the item number.
        s_correct: surprisal of the agreeing form, bits.
        s_wrong: surprisal of the other form, bits.
    """

    model: str
    sent_id: str
    experiment: int
    condition: str
    verb: str
    item: int
    s_correct: float
    s_wrong: float

    @property
    def margin(self) -> float:
        """Error margin ``S(correct) - S(wrong)`` in bits (> 0: the wrong form wins)."""
        return self.s_correct - self.s_wrong

    @property
    def correct(self) -> bool:
        """Whether the agreeing form has the lower surprisal."""
        return self.s_correct < self.s_wrong

    @property
    def depth(self) -> int:
        """Embedding depth."""
        return int(self.condition.rsplit("-E", 1)[1])

    @property
    def target_number(self) -> str:
        """``sg`` or ``pl``."""
        return self.condition.split("-")[0]

    @property
    def context(self) -> str:
        """Attractor number (experiment 1) or matrix kind (experiment 2)."""
        return self.condition.split("-")[1]

    @property
    def mismatch(self) -> bool:
        """Whether the condition sets attractors against the target: experiment 1, an
        attractor number other than the target's at depth >= 1; experiment 2, a matrix
        subject (it always has the other number)."""
        if self.experiment == 2:
            return self.context != "none"
        return self.depth > 0 and self.context != self.target_number


def item_scores(
    model: str, stimuli: Sequence[Stimulus], surprisal: NDArray[np.float64]
) -> list[ItemScore]:
    """Records from :meth:`~.lm_scoring.SlotScorer.stimulus_surprisals` (m, 2) bits."""
    return [
        ItemScore(
            model,
            s.sent_id,
            s.experiment,
            s.condition,
            s.verb.key,
            s.item,
            float(surprisal[i, 0]),
            float(surprisal[i, 1]),
        )
        for i, s in enumerate(stimuli)
    ]


@dataclass(frozen=True)
class PairedT:
    """A one-tailed paired t-test of ``S(correct) < S(wrong)``.

    Attributes:
        n: pairs.
        mean_diff: mean of ``S(wrong) - S(correct)`` in bits.
        t: the t statistic (``nan`` for fewer than two pairs or no variance with a zero
            mean; ``+-inf`` for no variance with a non-zero mean).
        df: degrees of freedom, ``n - 1``.
        p: one-tailed p-value ``P(T >= t)``.
    """

    n: int
    mean_diff: float
    t: float
    df: int
    p: float


def paired_t(s_correct: NDArray[np.float64], s_wrong: NDArray[np.float64]) -> PairedT:
    """The one-tailed paired t-test of ``s_correct < s_wrong`` over pairs (n,) bits."""
    from scipy.stats import t as student_t

    d = np.asarray(s_wrong, dtype=np.float64) - np.asarray(s_correct, dtype=np.float64)
    n = int(d.size)
    if n < 2:
        mean = float(d.mean()) if n else math.nan
        return PairedT(n, mean, math.nan, max(n - 1, 0), math.nan)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        t = math.nan if mean == 0.0 else math.copysign(math.inf, mean)
    else:
        t = mean / (sd / math.sqrt(n))
    p = math.nan if math.isnan(t) else float(student_t.sf(t, n - 1))
    return PairedT(n, mean, t, n - 1, p)


@dataclass(frozen=True)
class Row:
    """One group of items: accuracy, mean surprisals and the t-test.

    Attributes:
        key: the group's labels (model, experiment, then the grouping values).
        n: items.
        accuracy: share of correct items.
        s_correct: mean surprisal of the agreeing form, bits.
        s_wrong: mean surprisal of the other form, bits.
        margin: mean error margin, bits.
        test: the paired t-test of the group.
    """

    key: tuple[str, ...]
    n: int
    accuracy: float
    s_correct: float
    s_wrong: float
    margin: float
    test: PairedT

    def to_dict(self, names: Sequence[str]) -> dict[str, object]:
        """The row as JSON-ready values, keyed by ``names`` for the key's fields."""
        out: dict[str, object] = dict(zip(names, self.key, strict=True))
        out.update(
            n=self.n,
            accuracy=self.accuracy,
            s_correct=self.s_correct,
            s_wrong=self.s_wrong,
            margin=self.margin,
            t=_finite(self.test.t),
            df=self.test.df,
            p=_finite(self.test.p),
        )
        return out


def _finite(x: float) -> float | str | None:
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _group(scores: Iterable[ItemScore], key: Callable[[ItemScore], tuple[str, ...]]) -> list[Row]:
    groups: dict[tuple[str, ...], list[ItemScore]] = {}
    for s in scores:
        groups.setdefault(key(s), []).append(s)
    rows: list[Row] = []
    for k, items in groups.items():
        c = np.array([s.s_correct for s in items])
        w = np.array([s.s_wrong for s in items])
        rows.append(
            Row(
                k,
                len(items),
                float(np.mean(c < w)),
                float(c.mean()),
                float(w.mean()),
                float((c - w).mean()),
                paired_t(c, w),
            )
        )
    return rows


def _condition_order(condition: str) -> tuple[int, int, int]:
    target, context, depth = condition.split("-")
    contexts = ["sg", "pl", "none", "simple", "complex", "mixed"]
    return (
        0 if target == "sg" else 1,
        contexts.index(context) if context in contexts else len(contexts),
        int(depth[1:]),
    )


def _verb_order(verb: str) -> int:
    keys = [p.key for p in VERB_PAIRS]
    return keys.index(verb) if verb in keys else len(keys)


@dataclass(frozen=True)
class Summary:
    """Every table of one scoring run.

    Attributes:
        models: model labels, in the order scored.
        by_condition: (model, experiment, condition) rows (Table 1).
        by_verb: (model, experiment, verb) rows.
        by_depth: (model, experiment, depth) rows.
        by_verb_condition: (model, experiment, verb, condition) rows (Tables 2-3).
        hardest: (model, experiment, verb) rows at depth 4 in the mismatching conditions
            (experiment 1: attractors of the other number; experiment 2: the complex
            matrix subject) (Table 4).
    """

    models: tuple[str, ...]
    by_condition: tuple[Row, ...]
    by_verb: tuple[Row, ...]
    by_depth: tuple[Row, ...]
    by_verb_condition: tuple[Row, ...]
    hardest: tuple[Row, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready tables."""
        return {
            "models": list(self.models),
            "by_condition": [
                r.to_dict(("model", "experiment", "condition")) for r in self.by_condition
            ],
            "by_verb": [r.to_dict(("model", "experiment", "verb")) for r in self.by_verb],
            "by_depth": [r.to_dict(("model", "experiment", "depth")) for r in self.by_depth],
            "by_verb_condition": [
                r.to_dict(("model", "experiment", "verb", "condition"))
                for r in self.by_verb_condition
            ],
            "hardest": [r.to_dict(("model", "experiment", "verb")) for r in self.hardest],
        }


def summarise(scores: Sequence[ItemScore]) -> Summary:
    """The tables of :class:`Summary`, rows in a fixed order (model as scored, then
    experiment, condition and verb in design order)."""
    models = tuple(dict.fromkeys(s.model for s in scores))
    m_index = {m: i for i, m in enumerate(models)}

    def order(r: Row) -> tuple[object, ...]:
        out: list[object] = [m_index[r.key[0]], r.key[1]]
        for k in r.key[2:]:
            if "-E" in k:
                out.append(_condition_order(k))
            elif "/" in k:
                out.append(_verb_order(k))
            else:
                out.append(int(k) if k.isdigit() else k)
        return tuple(out)

    def rows(
        key: Callable[[ItemScore], tuple[str, ...]], subset: Iterable[ItemScore]
    ) -> tuple[Row, ...]:
        return tuple(sorted(_group(subset, key), key=order))

    return Summary(
        models,
        rows(lambda s: (s.model, str(s.experiment), s.condition), scores),
        rows(lambda s: (s.model, str(s.experiment), s.verb), scores),
        rows(lambda s: (s.model, str(s.experiment), str(s.depth)), scores),
        rows(lambda s: (s.model, str(s.experiment), s.verb, s.condition), scores),
        rows(
            lambda s: (s.model, str(s.experiment), s.verb),
            [
                s
                for s in scores
                if s.depth == 4 and s.mismatch and (s.experiment == 1 or s.context == "complex")
            ],
        ),
    )


# ------------------------------------------------------------------ rendering
def _stars(p: float) -> str:
    if math.isnan(p):
        return "n/a"
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "ns"


def _fmt_t(t: float) -> str:
    return "n/a" if math.isnan(t) else ("inf" if math.isinf(t) else f"{t:.2f}")


def _fmt_p(p: float) -> str:
    return "n/a" if math.isnan(p) else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


def render_markdown(summary: Summary) -> str:
    """The tables as Markdown: per model, Table 1 (conditions), accuracy per verb and
    per depth, per-verb significance (Tables 2-3) and Table 4 (E4, mismatching)."""
    lines: list[str] = []
    for model in summary.models:
        lines += [f"## {model}", ""]
        for exp in ("1", "2"):
            conds = [r for r in summary.by_condition if r.key[0] == model and r.key[1] == exp]
            if not conds:
                continue
            factor = "attractors" if exp == "1" else "matrix subject"
            lines += [
                f"### Experiment {exp}: accuracy and paired t-tests per condition",
                "",
                f"| target | {factor} | depth | n | accuracy | S(correct) | S(wrong) "
                "| t | df | p |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for r in conds:
                target, context, depth = r.key[2].split("-")
                lines.append(
                    f"| {target} | {context} | {depth} | {r.n} | {r.accuracy:.3f} | "
                    f"{r.s_correct:.2f} | {r.s_wrong:.2f} | {_fmt_t(r.test.t)} | "
                    f"{r.test.df} | {_fmt_p(r.test.p)} |"
                )
            lines.append("")
            verbs = [r for r in summary.by_verb if r.key[0] == model and r.key[1] == exp]
            depths = [r for r in summary.by_depth if r.key[0] == model and r.key[1] == exp]
            lines += [
                "Accuracy per verb: "
                + ", ".join(f"{r.key[2]} {r.accuracy:.3f}" for r in verbs)
                + ".  ",
                "Accuracy per depth: "
                + ", ".join(f"E{r.key[2]} {r.accuracy:.3f}" for r in depths)
                + ".",
                "",
            ]
            cells = [r for r in summary.by_verb_condition if r.key[0] == model and r.key[1] == exp]
            conditions = sorted({r.key[3] for r in cells}, key=_condition_order)
            verbs_here = sorted({r.key[2] for r in cells}, key=_verb_order)
            by = {(r.key[2], r.key[3]): r for r in cells}
            lines += [
                f"### Experiment {exp}: per-verb significance (one-tailed paired t-test; "
                "*** p<0.001, ** p<0.01, * p<0.05, ns; accuracy in brackets)",
                "",
                "| condition | " + " | ".join(verbs_here) + " |",
                "| --- |" + " ---: |" * len(verbs_here),
            ]
            for c in conditions:
                cells_c = [by.get((v, c)) for v in verbs_here]
                lines.append(
                    f"| {c} | "
                    + " | ".join(
                        "" if x is None else f"{_stars(x.test.p)} ({x.accuracy:.2f})"
                        for x in cells_c
                    )
                    + " |"
                )
            lines.append("")
    if summary.hardest:
        lines += [
            "## E4 with mismatching attractors: accuracy per verb and model",
            "",
            "Experiment 1: depth 4, attractors of the other number; experiment 2: depth 4, "
            "complex matrix subject.",
            "",
            "| experiment | verb | " + " | ".join(summary.models) + " |",
            "| --- | --- |" + " ---: |" * len(summary.models),
        ]
        by_h = {(r.key[0], r.key[1], r.key[2]): r for r in summary.hardest}
        keys = sorted(
            {(r.key[1], r.key[2]) for r in summary.hardest}, key=lambda k: (k[0], _verb_order(k[1]))
        )
        for exp, verb in keys:
            cells_h = [by_h.get((m, exp, verb)) for m in summary.models]
            lines.append(
                f"| {exp} | {verb} | "
                + " | ".join("" if x is None else f"{x.accuracy:.3f}" for x in cells_h)
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def scores_tsv(scores: Sequence[ItemScore]) -> str:
    """Per-item scores as tab-separated text with a header line."""
    head = "model\tsent_id\texperiment\tcondition\tverb\titem\ts_correct\ts_wrong\tmargin\tcorrect"
    lines = [head]
    for s in scores:
        lines.append(
            f"{s.model}\t{s.sent_id}\t{s.experiment}\t{s.condition}\t{s.verb}\t{s.item}\t"
            f"{s.s_correct:.6f}\t{s.s_wrong:.6f}\t{s.margin:.6f}\t{int(s.correct)}"
        )
    return "\n".join(lines) + "\n"
