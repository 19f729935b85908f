"""The agreement runs behind ``brittle agreement``: write the stimuli, score them.

Each run is a typed function; the CLI only parses options and calls it. Outputs are
written atomically, the files of one run together (:func:`~brittle.engine.core.atomic.output_set`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from brittle.engine.agreement.analysis import (
    ItemScore,
    Summary,
    item_scores,
    render_markdown,
    scores_tsv,
    summarise,
)
from brittle.engine.agreement.lm_scoring import SlotScorer, open_lm
from brittle.engine.agreement.search import AttackResult, MarginScorer, attack_frame
from brittle.engine.agreement.stimuli import (
    Stimulus,
    build_sentence,
    design_frames,
    generate,
    validate_stimulus,
)
from brittle.engine.core.atomic import atomic_write, output_set
from brittle.engine.core.conllu import read_conllu, write_conllu
from brittle.engine.core.errors import BrittleInputError, ConfigError
from brittle.engine.core.sentence import Sentence

__all__ = [
    "AttackRun",
    "ScoreRun",
    "attack_models",
    "model_label",
    "read_stimuli",
    "render_attack",
    "score_models",
    "worst_sentences",
    "write_attack_outputs",
    "write_score_outputs",
    "write_stimuli",
]

#: Progress callback: (model label, rows just scored, rows in all for this model).
Progress = Callable[[str, int, int], None]


def write_stimuli(
    path: str | os.PathLike[str],
    *,
    experiments: Sequence[int] = (1, 2),
    items: int = 20,
    seed: int = 0,
    verbs: Sequence[str] | None = None,
) -> int:
    """Generate the design (:func:`~.stimuli.generate`), check every gold tree and
    write it as CoNLL-U; returns the number of sentences."""
    sentences = generate(experiments=experiments, items=items, seed=seed, verbs=verbs)
    for s in sentences:
        problems = validate_stimulus(Stimulus.from_sentence(s))
        if problems:  # a bug in the grammar, not a user error
            raise AssertionError(f"{s.sent_id}: {'; '.join(problems)}")
    return write_conllu(sentences, path)


def read_stimuli(path: str | os.PathLike[str]) -> list[Stimulus]:
    """Read a CoNLL-U file of agreement stimuli (the generator's or the attack's)."""
    sentences = read_conllu(path)
    if not sentences:
        raise BrittleInputError(str(path), None, "no sentences")
    stimuli = [Stimulus.from_sentence(s) for s in sentences]
    for s in stimuli:
        if s.verb_index >= len(s.sentence.words) or s.verb_index == 0:
            raise BrittleInputError(str(path), s.sentence.line, f"{s.sent_id}: verb slot misplaced")
    return stimuli


def model_label(name: str | None) -> str:
    """A short label of a model option for tables: the directory's or hub id's last part."""
    if name is None or name.lower() in ("smollm2", "smollm2-135m"):
        return "SmolLM2-135M"
    return Path(name.rstrip("/")).name or name


@dataclass(frozen=True)
class ScoreRun:
    """What a scoring run produced.

    Attributes:
        scores: per-item scores of every model, models in the order given.
        summary: the tables.
        kinds: ``causal``/``masked`` of each model label.
    """

    scores: tuple[ItemScore, ...]
    summary: Summary
    kinds: dict[str, str]


def score_models(
    stimuli: Sequence[Stimulus],
    models: Sequence[str | None],
    *,
    kind: Literal["auto", "causal", "masked"] = "auto",
    device: str | None = None,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> ScoreRun:
    """Score every stimulus under every model and summarise.

    Args:
        stimuli: the stimuli.
        models: model options (``None``: the bundled SmolLM2).
        kind: how to read the models (``auto``: from each config).
        device: torch device.
        batch_size: rows per forward pass.
        progress: told how many rows of a model are done.
    """
    if not models:
        raise ConfigError("no model to score with")
    labels = [model_label(m) for m in models]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"two models share a label: {', '.join(labels)}")
    scores: list[ItemScore] = []
    kinds: dict[str, str] = {}
    for name, label in zip(models, labels, strict=True):
        lm = open_lm(name, kind=kind, device=device)
        scorer = SlotScorer(lm, batch_size=batch_size)
        kinds[label] = lm.kind
        total = 2 * len(stimuli)

        def tick(n: int, label: str = label, total: int = total) -> None:
            if progress is not None:
                progress(label, n, total)

        surprisal = scorer.stimulus_surprisals(stimuli, progress=tick)
        scores.extend(item_scores(label, stimuli, surprisal))
    return ScoreRun(tuple(scores), summarise(scores), kinds)


def write_score_outputs(
    run: ScoreRun, out: str | os.PathLike[str], *, config: dict[str, object]
) -> list[Path]:
    """Write ``scores.tsv``, ``summary.json`` and ``report.md`` into ``out`` together."""
    directory = Path(out)
    paths = [directory / "scores.tsv", directory / "summary.json", directory / "report.md"]
    summary = {"config": config, "kinds": run.kinds, **run.summary.to_dict()}
    with output_set():
        with atomic_write(paths[0]) as handle:
            handle.write(scores_tsv(run.scores))
        with atomic_write(paths[1]) as handle:
            handle.write(json.dumps(summary, indent=2, allow_nan=False) + "\n")
        with atomic_write(paths[2]) as handle:
            handle.write("# Agreement under attractors\n\n" + render_markdown(run.summary))
    return paths


# ------------------------------------------------------------------ attack
@dataclass(frozen=True)
class AttackRun:
    """What an attack run found, per model.

    Attributes:
        results: ``(model label, result)`` per attacked item, models in order.
        design_worst: ``(model label, sent_id) -> `` the largest margin among the item's
            design cells with the same target number (the fixed design's worst case).
        config: the resolved options.
    """

    results: tuple[tuple[str, AttackResult], ...]
    design_worst: dict[tuple[str, str], float]
    config: dict[str, object]

    def summary(self) -> dict[str, dict[str, float]]:
        """Per model: mean margins (base, design worst, found), accuracies, queries."""
        out: dict[str, dict[str, float]] = {}
        for label in dict.fromkeys(m for m, _ in self.results):
            rs = [r for m, r in self.results if m == label]
            base = np.array([r.base_margin for r in rs])
            worst = np.array([r.worst_margin for r in rs])
            design = np.array([self.design_worst[(label, r.base.sent_id)] for r in rs])
            out[label] = {
                "items": len(rs),
                "base_margin": float(base.mean()),
                "design_worst_margin": float(design.mean()),
                "found_margin": float(worst.mean()),
                "shift_vs_base": float((worst - base).mean()),
                "shift_vs_design_worst": float((worst - design).mean()),
                "base_accuracy": float((base < 0).mean()),
                "design_worst_accuracy": float((design < 0).mean()),
                "found_accuracy": float((worst < 0).mean()),
                "improved": int(sum(bool(r.changes) for r in rs)),
                "mean_queries": float(np.mean([r.queries for r in rs])),
            }
        return out


def attack_models(
    models: Sequence[str | None],
    *,
    experiments: Sequence[int] = (1,),
    verbs: Sequence[str] | None = None,
    items: int = 5,
    seed: int = 0,
    search: str = "beam",
    budget: int = 3,
    queries: int = 200,
    parameters: dict[str, int] | None = None,
    kind: Literal["auto", "causal", "masked"] = "auto",
    device: str | None = None,
    batch_size: int = 32,
    progress: Callable[[str, int, int], None] | None = None,
) -> AttackRun:
    """Attack the hardest design cells of the first ``items`` frames of each verb pair.

    The starting stimuli are the depth-4 cells with mismatching attractors (experiment
    1: the attractors have the other number; experiment 2: the complex matrix subject),
    for both target numbers, from the design :func:`~.stimuli.design_frames` draws with
    ``seed``. Each is searched by :func:`~.search.attack_frame` under every model.
    """
    frames = design_frames(experiments=experiments, items=items, seed=seed, verbs=verbs)
    starts = [
        f
        for f in frames
        if f.depth == 4
        and (
            (f.experiment == 1 and f.numbers[0] != f.target_number)
            or (f.experiment == 2 and f.matrix == "complex")
        )
    ]
    labels = [model_label(m) for m in models]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"two models share a label: {', '.join(labels)}")
    results: list[tuple[str, AttackResult]] = []
    design_worst: dict[tuple[str, str], float] = {}
    for name, label in zip(models, labels, strict=True):
        slot_scorer = SlotScorer(open_lm(name, kind=kind, device=device), batch_size=batch_size)

        def margins(
            stimuli: Sequence[Stimulus], s: SlotScorer = slot_scorer
        ) -> NDArray[np.float64]:
            both = s.stimulus_surprisals(stimuli)
            return both[:, 0] - both[:, 1]

        scorer = MarginScorer(margins)
        for n, start in enumerate(starts):
            cells = [
                f
                for f in frames
                if f.experiment == start.experiment
                and f.verb == start.verb
                and f.item == start.item
                and f.target_number == start.target_number
            ]
            cell_margins = scorer([Stimulus.from_sentence(build_sentence(f)) for f in cells])
            result = attack_frame(
                start,
                scorer,
                search=search,
                budget=budget,
                queries=queries,
                parameters=parameters,
                seed=seed,
            )
            design_worst[(label, result.base.sent_id)] = float(cell_margins.max())
            results.append((label, result))
            if progress is not None:
                progress(label, n + 1, len(starts))
    config: dict[str, object] = {
        "models": [m or "smollm2" for m in models],
        "experiments": list(experiments),
        "verbs": list(verbs) if verbs else "all",
        "items": items,
        "seed": seed,
        "search": search,
        "budget": budget,
        "queries": queries,
        "parameters": parameters or {},
    }
    return AttackRun(tuple(results), design_worst, config)


def worst_sentences(run: AttackRun) -> list[Sentence]:
    """The worst stimulus of every attacked item and model, with the search's record in
    ``# agreement_attack`` (model, changes) and ``# agreement_margin`` (bits)."""
    out: list[Sentence] = []
    for label, r in run.results:
        s = r.worst.sentence
        sent_id = f"{r.base.sent_id}-worst-{label}"
        s = replace(s, sent_id=sent_id).with_metadata("sent_id", sent_id)
        s = s.with_metadata("agreement_base", r.base.sent_id)
        s = s.with_metadata(
            "agreement_attack", f"model={label} " + (" ".join(r.changes) or "unchanged")
        )
        s = s.with_metadata("agreement_margin", f"{r.base_margin:.3f} -> {r.worst_margin:.3f} bits")
        out.append(s)
    return out


def render_attack(run: AttackRun) -> str:
    """The attack summary as Markdown."""
    lines = [
        "# Worst-case agreement stimuli",
        "",
        f"search {run.config['search']}, budget {run.config['budget']} choices, "
        f"{run.config['queries']} queries per item. Margins are S(correct) - S(wrong) in "
        "bits (above 0: the wrong form wins); accuracy is the share of items still right.",
        "",
        "| model | items | base margin | design worst | found | shift vs base | "
        "shift vs design worst | accuracy base / design worst / found | queries |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, r in run.summary().items():
        lines.append(
            f"| {label} | {r['items']} | {r['base_margin']:.2f} | "
            f"{r['design_worst_margin']:.2f} | {r['found_margin']:.2f} | "
            f"{r['shift_vs_base']:+.2f} | {r['shift_vs_design_worst']:+.2f} | "
            f"{r['base_accuracy']:.2f} / {r['design_worst_accuracy']:.2f} / "
            f"{r['found_accuracy']:.2f} | {r['mean_queries']:.0f} |"
        )
    lines += ["", "| model | base | found | margin | changes |", "| --- | --- | --- | --- | --- |"]
    for label, res in run.results:
        lines.append(
            f"| {label} | {res.base.sentence.text} | {res.worst.sentence.text} | "
            f"{res.base_margin:.2f} -> {res.worst_margin:.2f} | {' '.join(res.changes) or '-'} |"
        )
    return "\n".join(lines) + "\n"


def write_attack_outputs(run: AttackRun, out: str | os.PathLike[str]) -> list[Path]:
    """Write ``worst.conllu``, ``summary.json`` and ``report.md`` into ``out`` together."""
    directory = Path(out)
    paths = [directory / "worst.conllu", directory / "summary.json", directory / "report.md"]
    rows = [
        {
            "model": label,
            "base": r.base.sent_id,
            "base_margin": r.base_margin,
            "worst_margin": r.worst_margin,
            "design_worst_margin": run.design_worst[(label, r.base.sent_id)],
            "changes": list(r.changes),
            "queries": r.queries,
            "text": r.worst.sentence.text,
        }
        for label, r in run.results
    ]
    with output_set():
        write_conllu(worst_sentences(run), paths[0])
        with atomic_write(paths[1]) as handle:
            doc = {"config": run.config, "summary": run.summary(), "items": rows}
            handle.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        with atomic_write(paths[2]) as handle:
            handle.write(render_attack(run))
    return paths
