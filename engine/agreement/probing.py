"""Trained probes on agreement stimuli: metrics per verb and depth, and attraction.

Any probe ``brittle train-probe`` wrote runs on the stimuli (they are ordinary CoNLL-U
with gold trees); its task's per-sentence metrics (UUAS, Spearman, accuracy...) are
averaged per experiment, verb pair and depth.

A **distance** probe (structural or perceptron) also gives a predicted tree: the minimum
spanning tree of its predicted distances over the words that are not punctuation (as
its UUAS counts them). On that tree we count, per group, the share of stimuli whose
verb is joined

- ``verb_attractor``: directly to an attractor (a noun or pronoun of the embeddings or
  the matrix subject), the mistake agreement attraction would predict;
- ``verb_target``: directly to the target noun;
- ``attractor_instead``: to an attractor and not to the target;

and ``closer_attractor``: the share where some attractor is at a smaller predicted
distance from the verb than the target is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from brittle.engine.agreement.lexicon import VERB_PAIRS
from brittle.engine.agreement.stimuli import Stimulus
from brittle.engine.core.atomic import atomic_write, output_set
from brittle.engine.probes.probe_data import encode_split_layers
from brittle.scorers.mst import minimum_spanning_tree, tree_edges
from brittle.scorers.probe import Probe
from brittle.scorers.probe_gold import golds_of
from brittle.scorers.representations import reopen_backend

__all__ = ["Attachment", "ProbeRow", "attachment", "probe_stimuli", "write_probe_outputs"]


@dataclass(frozen=True)
class Attachment:
    """Where a predicted tree puts the verb of one stimulus.

    Attributes:
        verb_attractor: the verb has an edge to an attractor.
        verb_target: the verb has an edge to the target.
        closer_attractor: an attractor is nearer the verb than the target (predicted
            distance).
    """

    verb_attractor: bool
    verb_target: bool
    closer_attractor: bool


def attachment(stimulus: Stimulus, distances: NDArray[np.floating]) -> Attachment:
    """The attachment of a stimulus's verb under predicted distances (n, n) over all its
    words; the tree is the minimum spanning tree over the non-punctuation words."""
    words = stimulus.sentence.words
    keep = np.array([i for i, w in enumerate(words) if w.upos != "PUNCT"], dtype=np.int64)
    d = np.asarray(distances, dtype=np.float64)
    sub = d[np.ix_(keep, keep)]
    edges = {
        (int(keep[a]), int(keep[b])) for a, b in tree_edges(minimum_spanning_tree(sub)).tolist()
    }
    v, t = stimulus.verb_index, stimulus.target

    def joined(i: int) -> bool:
        return (min(i, v), max(i, v)) in edges

    nearest = min((d[v, a] for a in stimulus.attractors), default=np.inf)
    return Attachment(
        verb_attractor=any(joined(a) for a in stimulus.attractors),
        verb_target=joined(t),
        closer_attractor=bool(nearest < d[v, t]),
    )


@dataclass(frozen=True)
class ProbeRow:
    """Mean metrics of one probe over one group of stimuli.

    Attributes:
        probe: the probe's name (its directory's name).
        task: the probe's task.
        experiment: ``1`` or ``2``.
        verb: the verb pair, or ``all``.
        depth: the embedding depth, or ``-1`` for all depths.
        n: stimuli.
        metrics: mean of each per-sentence metric of the task (NaNs skipped), and for
            distance probes the attachment shares.
    """

    probe: str
    task: str
    experiment: int
    verb: str
    depth: int
    n: int
    metrics: dict[str, float]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready values."""
        return {
            "probe": self.probe,
            "task": self.task,
            "experiment": self.experiment,
            "verb": self.verb,
            "depth": self.depth,
            "n": self.n,
            **{k: (None if np.isnan(v) else v) for k, v in self.metrics.items()},
        }


def _rows(
    probe: str, task: str, stimuli: Sequence[Stimulus], per: Sequence[dict[str, float]]
) -> list[ProbeRow]:
    groups: dict[tuple[int, str, int], list[int]] = {}
    for i, s in enumerate(stimuli):
        for key in (
            (s.experiment, s.verb.key, s.depth),
            (s.experiment, s.verb.key, -1),
            (s.experiment, "all", s.depth),
        ):
            groups.setdefault(key, []).append(i)
    out: list[ProbeRow] = []
    for (exp, verb, depth), idx in sorted(groups.items(), key=lambda kv: _group_order(kv[0])):
        names = list(per[idx[0]])
        means = {
            k: float(np.nanmean(vals)) if np.any(~np.isnan(vals)) else float("nan")
            for k in names
            for vals in [np.array([per[i].get(k, np.nan) for i in idx], dtype=np.float64)]
        }
        out.append(ProbeRow(probe, task, exp, verb, depth, len(idx), means))
    return out


def _group_order(key: tuple[int, str, int]) -> tuple[int, int, str, int]:
    exp, verb, depth = key
    order = [p.key for p in VERB_PAIRS]
    return (exp, order.index(verb) if verb in order else len(order), verb, depth)


def probe_stimuli(
    stimuli: Sequence[Stimulus],
    probe_dirs: Sequence[str | Path],
    *,
    device: str | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> list[ProbeRow]:
    """Run each probe on the stimuli; rows per (experiment, verb, depth), per
    (experiment, verb) with depth ``-1`` and per (experiment, depth) with verb ``all``.

    ``progress`` is told the probe's name and how many sentences were encoded.
    """
    sentences = [s.sentence for s in stimuli]
    golds = golds_of(sentences)
    rows: list[ProbeRow] = []
    for directory in probe_dirs:
        probe = Probe.load(directory)
        name = Path(directory).name
        backend = reopen_backend(probe.backend, device=device)

        def tick(n: int, name: str = name) -> None:
            if progress is not None:
                progress(name, n)

        try:
            probe.check_representation(backend.key(probe.key.layer))
            data = encode_split_layers(
                sentences,
                backend,
                layers=[probe.key.layer],
                progress=tick,
            )[0]
        finally:
            backend.close()
        predictions = probe.predict(data)
        per = probe.score_predictions(predictions, golds)
        per = [dict(p) for p in per]
        for s, pred, values in zip(stimuli, predictions, per, strict=True):
            arr = np.asarray(pred, dtype=np.float64)
            if arr.ndim == 2 and arr.shape[0] == arr.shape[1] == len(s.sentence.words):
                a = attachment(s, arr)
                values["verb_attractor"] = float(a.verb_attractor) if s.attractors else np.nan
                values["verb_target"] = float(a.verb_target)
                values["attractor_instead"] = (
                    float(a.verb_attractor and not a.verb_target) if s.attractors else np.nan
                )
                values["closer_attractor"] = float(a.closer_attractor) if s.attractors else np.nan
        rows.extend(_rows(name, probe.spec.task, stimuli, per))
    return rows


def render_probe_rows(rows: Sequence[ProbeRow]) -> str:
    """The rows as Markdown tables, one per probe and experiment."""
    lines: list[str] = ["# Probes on agreement stimuli", ""]
    keyed: dict[tuple[str, int], list[ProbeRow]] = {}
    for r in rows:
        keyed.setdefault((r.probe, r.experiment), []).append(r)
    for (probe, exp), group in keyed.items():
        names = list(group[0].metrics)
        lines += [
            f"## {probe} ({group[0].task}), experiment {exp}",
            "",
            "| verb | depth | n | " + " | ".join(names) + " |",
            "| --- | --- | ---: |" + " ---: |" * len(names),
        ]
        for r in group:
            depth = "all" if r.depth < 0 else f"E{r.depth}"
            cells = ["" if np.isnan(r.metrics[k]) else f"{r.metrics[k]:.3f}" for k in names]
            lines.append(f"| {r.verb} | {depth} | {r.n} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def write_probe_outputs(
    rows: Sequence[ProbeRow], out: str | Path, *, config: dict[str, object]
) -> list[Path]:
    """Write ``probes.json`` and ``report.md`` into ``out`` together."""
    directory = Path(out)
    paths = [directory / "probes.json", directory / "report.md"]
    with output_set():
        with atomic_write(paths[0]) as handle:
            doc = {"config": config, "rows": [r.to_dict() for r in rows]}
            handle.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        with atomic_write(paths[1]) as handle:
            handle.write(render_probe_rows(rows))
    return paths
