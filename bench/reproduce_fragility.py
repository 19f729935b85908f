"""La Malfa et al.'s fragility tables (1, 2, 5) and figures (10-11) with brittle's own commands.

For each representation (the bundled MiniLM at one hidden state, GloVe, and the bundled
causal LM SmolLM2-135M at one hidden state, its inputs standardised: ``--smollm2-layer``,
by default 30, the last, its best for a distance probe in docs/probes.md; and MiniLM again
with La Malfa et al.'s own probe, one network over the whole sentence, every treebank
cut to 20 words: ``minilm2-sentence``) and each task La Malfa et al. probe (structural
distance, depth, POS, root, tree depth):

1. ``brittle train-probe`` trains a linear probe (the sentence probe for
   ``minilm2-sentence``) on LinES train + EWT dev (early stopping on LinES dev);
2. ``brittle attack --search sample --check-all`` runs the paper's Algorithm 3 (per
   task, the worst drop over k = b random perturbations of tau words: "worst of b") for
   coPOS, coCO and random words at tau 1, 2, 3 on the first ``--limit`` sentences of EWT
   test. A draw counts only when the spaCy re-parse stays within the syntax constraint
   (``syntax:0.2``), brittle's stand-in for the paper's Algorithm 1, which keeps the
   draw of least syntactic distance. With ``--check-all`` every candidate is checked,
   so each task's own worst drop over the feasible candidates is recorded (Algorithm 3
   runs per task on the same draws) and epsilon (Algorithm 2: the farthest perturbation
   in the representation, L2 and cosine) covers them all.

It prints, per representation, method and tau, each task's clean score and its
worst-case drop with a 95% bootstrap interval over sentences and its null (the largest
gain of the task among the same draws: if the changes did nothing to the task on
average, the largest drop and the largest gain of b draws would be alike; the JSON
adds the interval of the drop's excess over it), the mean relative drop over tasks,
and epsilon; and draws the drops against tau (``--plot``). The JSON adds,
for POS, the drop in words (the accuracy drop times the sentence's length, per
sentence: the paper's "# Words Adv"). Steps whose
output exists are skipped, so a rerun only prints the tables.

Usage::

    python bench/reproduce_fragility.py [--work DIR] [--limit 100] [--coco-limit 20]
        [--candidates 20] [--layer 2] [--smollm2-layer 30] [--only NAME,...]
        [--plot fragility.png] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from reproduce_common import (
    DEV,
    TEST,
    TRAIN,
    add_doc_options,
    add_smollm2_layer,
    brittle,
    smollm2_args,
    write_doc,
)

from brittle.engine.evaluate.paired_evaluation import paired_bootstrap

ROOT = Path(__file__).resolve().parents[1]
#: The figures of the tables, as the last run wrote them (the docs are rendered from it).
MEASURED = ROOT / "docs" / "fragility.json"
DOC = ROOT / "docs" / "reproductions.md"
TASKS = ("distance", "depth", "pos", "root", "tree-depth")
METHODS = ("copos", "coco", "random")
#: Each method's options: coPOS draws its synonyms as La Malfa et al. do, from every
#: WordNet sense of the word and every lemma of each sense (brittle's default chooses
#: the sense in context and filters the synonyms by use, a far smaller pool); coCO's
#: language model runs in float32.
METHOD_OPTIONS: dict[str, tuple[str, ...]] = {
    "copos": (
        "--sense", "all", "-o", "min_count=0", "-o", "max_senses=0",
        "-o", "max_substitute_senses=0", "-o", "usage_checks=false",
    ),
    # float32 on every machine: in bfloat16, where the CPU has it, the language model
    # proposes other words, and the table would depend on the machine
    "coco": ("-o", "dtype=float32"),
}  # fmt: skip
BUDGETS = (1, 2, 3)
#: La Malfa et al.'s probe: one fully connected network (three hidden layers) over the
#: sentence cut or padded to this many words; 1,024 hidden units give about 10-18M
#: parameters on MiniLM, their "order of 10M".
SENTENCE_WORDS = 20
SENTENCE_PROBE: tuple[str, ...] = (
    "--arch", "sentence", "--words", str(SENTENCE_WORDS), "--hidden", "1024",
)  # fmt: skip


@dataclass(frozen=True)
class Representation:
    """One row group of the tables: what is probed, how, and on which data.

    Attributes:
        model: ``train-probe`` options naming the representation.
        probe: ``train-probe`` options of the probe (architecture).
        cut: sentences cut to this many words in every treebank (0: as they are).
    """

    model: tuple[str, ...]
    probe: tuple[str, ...] = ()
    cut: int = 0


@dataclass(frozen=True)
class Data:
    """The treebanks of a representation's probes and attacks."""

    train: tuple[Path, ...]
    dev: Path
    test: Path


def data_for(work: Path, cut: int) -> Data:
    """The treebanks, cut to ``cut`` words into ``WORK/cut-N`` when ``cut`` (once)."""
    if not cut:
        return Data(TRAIN, DEV, TEST)
    folder = work / f"cut-{cut}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for source in (*TRAIN, DEV, TEST):
        target = folder / source.name
        if not target.exists():
            brittle("cut", source, "--words", cut, "--out", target)
        paths.append(target)
    return Data(tuple(paths[: len(TRAIN)]), paths[-2], paths[-1])


def train_probes(
    work: Path, models: dict[str, Representation]
) -> dict[str, tuple[Data, list[Path]]]:
    """Each representation's treebanks and probe directories, trained when missing."""
    probes: dict[str, tuple[Data, list[Path]]] = {}
    for name, rep in models.items():
        data = data_for(work, rep.cut)
        probes[name] = (data, [])
        for task in TASKS:
            out = work / "probes" / f"{name}-{task}"
            if not (out / "probe.json").exists():
                brittle(
                    "train-probe", *data.train, "--dev", data.dev, *rep.model, *rep.probe,
                    "--task", task, "--quiet", "--out", out,
                )  # fmt: skip
            probes[name][1].append(out)
    return probes


def run_attack(
    out: Path, test: Path, probes: Sequence[Path], method: str, limit: int, b: int
) -> None:
    """One ``brittle attack`` over every budget, unless every budget's summary exists."""
    if all((out / f"tau={t}" / "summary.json").exists() for t in BUDGETS):
        return
    resume = ("--resume",) if out.exists() else ()
    brittle(
        "attack", test, *[x for p in probes for x in ("--probe", p)], "--method", method,
        *METHOD_OPTIONS.get(method, ()),
        "--constraint", "syntax:0.2",  # the tables' constraint
        "--search", "sample", "-b", b, "--check-all",
        "--budget", ",".join(map(str, BUDGETS)), "--limit", limit, "--seed", 0,
        "--quiet", "--out", out, *resume,
    )  # fmt: skip


def primary_columns(rows: list[dict[str, Any]]) -> list[str]:
    """One column per task: its primary metric (what ``attack`` lowers by default)."""
    names = list(rows[0]["tasks"])
    columns = []
    for task in TASKS:
        prefix = f"{task}."
        mine = [n for n in names if n.startswith(prefix)]
        preferred = {
            "distance": "uuas",
            "depth": "depth_spearman",
            "pos": "pos_acc",
            "root": "root_acc",
            "tree-depth": "tree_depth_acc",
        }[task]
        pick = [n for n in mine if n.endswith("." + preferred)] or mine[:1]
        columns.extend(pick)
    return columns


def tau_table(
    out: Path, tau: int, resamples: int
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per task: clean, worst drop (task alone) and its interval, over attacked rows."""
    rows = [json.loads(line) for line in (out / f"tau={tau}" / "results.jsonl").open()]
    attacked = [r for r in rows if not (r["eligible_positions"] == 0 and r["evaluated"] == 0)]
    summary = json.loads((out / f"tau={tau}" / "summary.json").read_text())
    table: dict[str, dict[str, Any]] = {}
    for col in primary_columns(attacked):
        clean = np.array([r["tasks"][col]["clean"] for r in attacked], dtype=np.float64)
        worst = np.array([r["tasks"][col]["worst"] for r in attacked], dtype=np.float64)
        # the null: the largest gain among the same draws (rows written before it was
        # recorded have none: NaN, and the table says so)
        gain = np.array([-r["tasks"][col].get("best", np.nan) for r in attacked], dtype=np.float64)
        length = np.array([len(r["words"]) for r in attacked], dtype=np.float64)
        ok = ~(np.isnan(clean) | np.isnan(worst))
        clean, worst, gain, length = clean[ok], worst[ok], gain[ok], length[ok]

        def mean_of(
            idx: np.ndarray, w: np.ndarray = worst, g: np.ndarray = gain
        ) -> dict[str, float]:
            return {"worst": float(w[idx].mean()), "excess": float((w[idx] - g[idx]).mean())}

        cis = paired_bootstrap(worst.size, mean_of, resamples=resamples, seed=0)
        ci = cis.get("worst", (float("nan"), float("nan")))
        excess = cis.get("excess", (float("nan"), float("nan")))
        table[col] = {
            "clean": float(clean.mean()),
            "worst": float(worst.mean()),
            "ci_low": ci[0],
            "ci_high": ci[1],
            "null": float(gain.mean()),
            "excess_low": excess[0],
            "excess_high": excess[1],
            "relative": float(worst.mean() / clean.mean()) if clean.mean() else float("nan"),
            "n": int(worst.size),
        }
        if col.endswith(".pos_acc"):
            words = worst * length

            def words_of(idx: np.ndarray, w: np.ndarray = words) -> dict[str, float]:
                return {"w": float(w[idx].mean())}

            wci = paired_bootstrap(words.size, words_of, resamples=resamples, seed=0).get(
                "w", (float("nan"), float("nan"))
            )
            table[col]["words"] = [float(words.mean()), wci[0], wci[1]]
    return table, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-fragility"))
    parser.add_argument("--limit", type=int, default=100, help="EWT test sentences attacked")
    parser.add_argument(
        "--coco-limit", type=int, default=20, help="sentences for coCO (language-model bound)"
    )
    parser.add_argument("--candidates", type=int, default=20, help="b of best-of-b")
    parser.add_argument("--layer", type=int, default=2, help="MiniLM hidden state probed")
    add_smollm2_layer(parser, "MiniLM and GloVe")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument(
        "--only",
        default="",
        help="run only these representations (comma-separated names, e.g. minilm2-sentence)",
    )
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--plot", type=Path, default=None, help="write the figure here")
    parser.add_argument("--json", type=Path, default=None, help="write the tables here")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    if args.render:
        kept = json.loads(args.measured.read_text())
        print_tables(kept)
        if args.write_doc:
            write_doc(DOC, blocks(kept))
        return 0
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    layer = ("--layer", str(args.layer))
    models: dict[str, Representation] = {
        f"minilm{args.layer}": Representation(layer),
        "glove": Representation(("--model", "glove")),
    }
    if args.smollm2_layer >= 0:
        models[f"smollm2-{args.smollm2_layer}"] = Representation(smollm2_args(args.smollm2_layer))
    # La Malfa et al.'s own probe and data shape: every treebank cut to 20 words
    models[f"minilm{args.layer}-sentence"] = Representation(
        layer, SENTENCE_PROBE, cut=SENTENCE_WORDS
    )
    only = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(only) - set(models))
    if unknown:
        parser.error(f"unknown representation(s) {', '.join(unknown)} (known: {', '.join(models)})")
    if only:
        models = {n: r for n, r in models.items() if n in only}
    probes = train_probes(work, models)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    results: dict[str, dict[str, dict[int, Any]]] = {}
    for name in models:
        data, directories = probes[name]
        for method in methods:
            if method == "coco" and models[name].cut:
                continue  # left out: the slowest method, and no claim compares it here
            limit = args.coco_limit if method == "coco" else args.limit
            out = work / "attack" / f"{name}-{method}"
            run_attack(out, data.test, directories, method, limit, args.candidates)
            for tau in BUDGETS:
                table, summary = tau_table(out, tau, args.resamples)
                results.setdefault(name, {}).setdefault(method, {})[tau] = {
                    "tasks": table,
                    "sentences": summary["sentences"],
                    "no_eligible": summary["no_eligible"],
                    "success_rate": summary["success_rate"],
                    "epsilon_l2": summary["epsilon_l2"],
                    "epsilon_cosine": summary["epsilon_cosine"],
                }
    if only and args.measured.exists():  # the other representations' figures stay
        results = {**json.loads(args.measured.read_text()), **results}
    print_tables(results)
    text = json.dumps(results, indent=2) + "\n"
    args.measured.write_text(text)
    if args.json is not None:
        args.json.write_text(text)
    if args.write_doc:
        write_doc(DOC, blocks(results))
    if args.plot is not None:
        plot(results, args.plot)
    return 0


def render_table(by_method: dict[str, dict[Any, Any]]) -> str:
    """One representation's Markdown table: a row per method and tau."""
    first = next(iter(next(iter(by_method.values())).values()))
    cols = list(first["tasks"])
    lines = [
        "| method | tau | n | "
        + " | ".join(f"{c} clean → drop [CI] (null)" for c in cols)
        + " | mean relative drop | epsilon L2 / cosine |",
        "| --- | ---: | ---: |" + " --- |" * len(cols) + " ---: | ---: |",
    ]
    for method, by_tau in by_method.items():
        for tau, r in by_tau.items():
            cells = []
            for c in cols:
                t = r["tasks"][c]
                ci = f"[{t['ci_low']:.3f}, {t['ci_high']:.3f}]"
                null = "–" if np.isnan(t["null"]) else f"{t['null']:.3f}"
                cells.append(f"{t['clean']:.3f} → {t['worst']:.3f} {ci} ({null})")
            rel = np.nanmean([r["tasks"][c]["relative"] for c in cols])
            n = r["sentences"] - r["no_eligible"]
            lines.append(
                f"| {method} | {tau} | {n} | " + " | ".join(cells) + f" | {rel:.1%} | "
                f"{r['epsilon_l2']:.1f} / {r['epsilon_cosine']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def blocks(results: dict[str, dict[str, dict[Any, Any]]]) -> dict[str, str]:
    """The generated blocks of docs/reproductions.md: ``fragility-NAME`` per representation."""
    return {f"fragility-{name}": render_table(by_method) for name, by_method in results.items()}


def print_tables(results: dict[str, dict[str, dict[Any, Any]]]) -> None:
    """One Markdown table per representation, each under its generated-block markers."""
    for name, text in blocks(results).items():
        print(
            f"\n{name.removeprefix('fragility-')}: worst-case drop per task (task alone; 95% "
            "CI over sentences; the null: the largest gain among the same draws)\n"
        )
        print(f"<!-- generated: {name} -->\n{text}<!-- end generated -->")


def plot(results: dict[str, dict[str, dict[int, Any]]], path: Path) -> None:
    """Mean worst-case drop per task against tau: a panel per representation and method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    methods = list(dict.fromkeys(m for by_method in results.values() for m in by_method))
    fig, axes = plt.subplots(
        len(names),
        len(methods),
        figsize=(3.2 * len(methods), 2.8 * len(names)),
        squeeze=False,
        sharey=True,
    )
    for i, name in enumerate(names):
        for j, method in enumerate(methods):
            ax = axes[i][j]
            if method not in results[name]:
                ax.axis("off")
                continue
            by_tau = results[name][method]
            taus = sorted(by_tau)
            for col in by_tau[taus[0]]["tasks"]:
                ys = [by_tau[t]["tasks"][col]["worst"] for t in taus]
                lo = [by_tau[t]["tasks"][col]["ci_low"] for t in taus]
                hi = [by_tau[t]["tasks"][col]["ci_high"] for t in taus]
                ax.plot(taus, ys, marker="o", label=col)
                ax.fill_between(taus, lo, hi, alpha=0.15)
            ax.set_title(f"{name}, {method}", fontsize=9)
            ax.set_xticks(taus)
            ax.set_xlabel("tau (words changed)")
            if j == 0:
                ax.set_ylabel("worst-case drop")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
