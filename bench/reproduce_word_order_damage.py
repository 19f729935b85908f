"""Which of DND and IDC predicts a probe's damage better, across reordered sentences?

Each word-level configuration of ``reproduce_word_order.py`` (Clouatre et al.'s full
shuffle, random-cut phrase shuffle with rho 0.66 and neighbour flip with rho 0.5;
brittle's tree-phrase shuffle at rho 0.1 ... 0.5 and neighbour flips at rho 0.1 ... 0.4)
draws one reordering per sentence with seed 0, applied as
``brittle attack`` applies it (the words and their gold tree renumbered together). Every
trained probe given is scored per sentence on the original and on each reordering
against that sentence's own gold annotation; the damage is ``clean - reordered`` of the
probe's primary metric (UUAS for distance and perceptron probes, accuracy for POS).
Across all reordered sentences (pooled over the generators) the table gives Spearman's
rank correlation of the damage with DND and IDC, over words and over characters (the
character permutation as in ``reproduce_word_order.py``).

Probes read one vector per word, so only word-level reorderings can be scored;
subword and character reorderings have no word to probe.

Usage::

    python bench/reproduce_word_order_damage.py TREEBANK --probe DIR [--probe DIR ...]
        [--limit N] [--resamples 1000] [--json OUT.json] [--write-doc]
    python bench/reproduce_word_order_damage.py --render [--write-doc]

The figures go to ``docs/word-order-damage.json`` (``--measured``); ``--write-doc`` puts
the three tables into docs/reproductions.md between their ``<!-- generated: damage-*
-->`` and ``<!-- end generated -->`` lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from reproduce_common import add_doc_options, write_doc
from reproduce_word_order import configurations
from scipy.stats import spearmanr

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.perturbation import apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.evaluate.paired_evaluation import paired_bootstrap
from brittle.engine.probes.probe_data import encode_split_layers
from brittle.scorers.order import order_scores_batch
from brittle.scorers.probe import Probe
from brittle.scorers.probe_gold import golds_of
from brittle.scorers.representations import reopen_backend
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.order import Reordering


def char_permutation(forms: Sequence[str], order: Sequence[int]) -> np.ndarray:
    """Character permutation of a word reordering (each word moves with the space before it)."""
    lengths = [len(f) + (1 if j > 0 else 0) for j, f in enumerate(forms)]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return np.concatenate([np.arange(starts[i], starts[i] + lengths[i]) for i in order])


ROOT = Path(__file__).resolve().parents[1]
#: The tables' figures, as the last run wrote them (the page is rendered from it).
MEASURED = ROOT / "docs" / "word-order-damage.json"
DOC = ROOT / "docs" / "reproductions.md"


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The three generated blocks of docs/reproductions.md (``damage-*``)."""
    names = list(data["spearman"])
    means = [
        "| reordering | n | " + " | ".join(names) + " | DND (chars) | IDC (chars) |",
        "| --- | ---: |" + " ---: |" * (len(names) + 2),
    ]
    for g in data["generators"]:
        cells = [f"{g['damage'][name]:.3f}" for name in names]
        means.append(
            f"| {g['reordering']} | {g['n']} | " + " | ".join(cells)
            + f" | {g['dnd_chars']:.3f} | {g['idc_chars']:.3f} |"
        )  # fmt: skip
    measures = list(next(iter(data["spearman"].values())))
    spearman = [
        "| damage | " + " | ".join(measures) + " |",
        "| --- |" + " ---: |" * len(measures),
    ]
    for name, row in data["spearman"].items():
        spearman.append(f"| {name} | " + " | ".join(f"{row[m]:.3f}" for m in measures) + " |")
    leads = [
        "| damage | DND - IDC (words) [95% CI] | DND - IDC (chars) [95% CI] |",
        "| --- | --- | --- |",
    ]
    for name, by_unit in data["dnd_minus_idc"].items():
        cells = [f"{v:+.3f} [{lo:+.3f}, {hi:+.3f}]" for v, lo, hi in by_unit.values()]
        leads.append(f"| {name} | " + " | ".join(cells) + " |")
    return {
        "damage-means": "\n".join(means) + "\n",
        "damage-spearman": "\n".join(spearman) + "\n",
        "damage-lead": "\n".join(leads) + "\n",
    }


def show(data: dict[str, Any], *, write: bool) -> None:
    """Print the tables (and write them into the page with ``write``)."""
    rendered = blocks(data)
    print(f"{data['treebank']}: {data['sentences']} sentences, {data['n']} reorderings\n")
    print("Mean damage per generator:\n")
    print(rendered["damage-means"])
    print("Spearman rank correlation of the damage with each order measure (all reorderings):\n")
    print(rendered["damage-spearman"])
    print(
        "DND's lead over IDC (difference of the two correlations), with a 95% paired "
        f"bootstrap interval over the {data['sentences']} sentences ({data['resamples']} "
        "resamples):\n"
    )
    print(rendered["damage-lead"])
    if write:
        write_doc(DOC, rendered)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("treebank", type=Path, nargs="?")
    parser.add_argument("--probe", type=Path, action="append", default=[])
    parser.add_argument("--limit", type=int, default=None, help="only the first N sentences")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    if args.render:
        show(json.loads(args.measured.read_text()), write=args.write_doc)
        return 0
    if args.treebank is None or not args.probe:
        parser.error("a TREEBANK and at least one --probe are needed (or --render)")
    sentences: list[Sentence] = read_conllu(args.treebank)[: args.limit]

    # one entry per reordered sentence
    reordered: list[Sentence] = []
    config_of: list[str] = []
    source: list[int] = []
    orders: list[np.ndarray] = []
    chars: list[np.ndarray] = []
    for config in configurations():
        if "word" not in config.levels:
            continue
        cls = GENERATORS.get(config.method)
        assert issubclass(cls, Reordering), config.method
        gen = cls(level="word", **config.options)  # type: ignore[arg-type]
        drawn = gen.perturb(sentences, b=1, seed=args.seed)
        for i, (s, ps) in enumerate(zip(sentences, drawn, strict=True)):
            if not ps or ps[0].order is None:
                continue
            order = ps[0].order
            reordered.append(apply_perturbation(s, ps[0]))
            config_of.append(config.label)
            source.append(i)
            orders.append(np.asarray(order, dtype=np.int64))
            chars.append(char_permutation(s.forms, order))
    wd, wi = order_scores_batch(orders)
    cd, ci = order_scores_batch(chars)
    measures = {"DND (words)": wd, "IDC (words)": wi, "DND (chars)": cd, "IDC (chars)": ci}

    clean_golds = golds_of(sentences)
    pert_golds = golds_of(reordered)
    drops: dict[str, np.ndarray] = {}
    for path in args.probe:
        probe = Probe.load(path)
        backend = reopen_backend(probe.backend)
        try:
            (clean,) = encode_split_layers(sentences, backend, layers=[probe.key.layer])
            (pert,) = encode_split_layers(reordered, backend, layers=[probe.key.layer])
        finally:
            backend.close()
        metric = probe.task.primary
        a = probe.score_predictions(probe.predict(clean), clean_golds)
        b = probe.score_predictions(probe.predict(pert), pert_golds)
        drops[f"{path.name} {metric}"] = np.array(
            [a[i][metric] - b[k][metric] for k, i in enumerate(source)], dtype=np.float64
        )

    configs = list(dict.fromkeys(config_of))
    generators = []
    for c in configs:
        mask = np.array([x == c for x in config_of])
        generators.append(
            {
                "reordering": c,
                "n": int(mask.sum()),
                "damage": {name: float(np.nanmean(d[mask])) for name, d in drops.items()},
                "dnd_chars": float(cd[mask].mean()),
                "idc_chars": float(ci[mask].mean()),
            }
        )
    table: dict[str, dict[str, float]] = {}
    for name, d in drops.items():
        ok = ~np.isnan(d)
        table[name] = {m: float(spearmanr(v[ok], d[ok]).statistic) for m, v in measures.items()}

    # DND against IDC: a paired bootstrap over the original sentences (each resampled
    # sentence brings all its reorderings), the same resamples for both measures.
    src = np.asarray(source, dtype=np.int64)
    members = [np.flatnonzero(src == i) for i in range(len(sentences))]

    def lead(idx: np.ndarray, d: np.ndarray) -> dict[str, float]:
        rows = np.concatenate([members[i] for i in idx.tolist()])
        rows = rows[~np.isnan(d[rows])]
        out = {}
        for unit in ("words", "chars"):
            a = spearmanr(measures[f"DND ({unit})"][rows], d[rows]).statistic
            b = spearmanr(measures[f"IDC ({unit})"][rows], d[rows]).statistic
            out[unit] = float(a - b)
        return out

    leads: dict[str, dict[str, list[float]]] = {}
    everything = np.arange(len(sentences), dtype=np.int64)
    for name, d in drops.items():
        point = lead(everything, d)

        def lead_of(idx: np.ndarray, d: np.ndarray = d) -> dict[str, float]:
            return lead(idx, d)

        interval = paired_bootstrap(
            len(sentences), lead_of, resamples=args.resamples, seed=args.seed
        )
        nan = (float("nan"), float("nan"))
        leads[name] = {u: [point[u], *interval.get(u, nan)] for u in point}
    data = {
        "treebank": args.treebank.name,
        "sentences": len(sentences),
        "resamples": args.resamples,
        "n": len(reordered),
        "generators": generators,
        "spearman": table,
        "dnd_minus_idc": leads,
    }
    text = json.dumps(data, indent=1)
    args.measured.write_text(text + "\n")
    if args.json is not None:
        args.json.write_text(text)
    show(data, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
