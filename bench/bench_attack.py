"""End-to-end attack throughput against the bare encoder forward on the same candidates.

Runs ``brittle attack`` (coPOS, beam search, spaCy syntax constraint, the demo's MiniLM
layer -5 distance and POS probes) on treebank sentences and records every candidate
sentence the engine sends to the model. Then it feeds exactly those candidate
sentences, in the same groups, to the bare ``model(...)`` forward (tokenized and padded,
nothing else) and reports candidates scored per second for both and their ratio.
Everything the engine does besides the forward (generation, WordNet, parsing, tree
edit distance, probes, metrics, search, writing results) is in the engine's time.

The bare forward tokenizes each group the engine scored, sorts it by length and runs
it in batches of the engine's batch size (the engine pads no more than this). Two
references: the bare forward through every layer (what running the model costs)
and the bare forward through only the blocks below the probed layer (the engine stops
there too, so this ratio is the engine's own overhead).

Usage::

    python bench/bench_attack.py [CONLLU] [--sentences 20] [--search beam] [--threads 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import EWT_TEST  # noqa: E402

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from brittle.engine.core.sentence import Sentence
    from brittle.search.scoring import Evaluation, Request, TaskEvaluator

DEFAULT_TREEBANK = EWT_TEST


class Recording:
    """Wraps the probe evaluator and keeps the word lists of every evaluated batch."""

    def __init__(self, inner: TaskEvaluator) -> None:
        self.inner = inner
        self.batches: list[list[tuple[str, ...]]] = []

    @property
    def tasks(self) -> tuple[str, ...]:
        return self.inner.tasks

    @property
    def primary(self) -> tuple[str, ...]:
        return self.inner.primary

    def evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        self.batches.append([c.forms for c in candidates])
        return self.inner.evaluate(original, candidates, alignments)

    def evaluate_many(self, requests: Sequence[Request]) -> list[Evaluation]:
        # One model batch for a whole round (several sentences' candidates).
        self.batches.append([c.forms for _, cands, _ in requests for c in cands])
        return self.inner.evaluate_many(requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("treebank", nargs="?", type=Path, default=DEFAULT_TREEBANK)
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--search", default="beam", choices=("sample", "greedy", "beam"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="search one sentence at a time instead of a chunk's sentences in lock-step",
    )
    args = parser.parse_args()

    import torch

    from brittle.engine.attack import AttackConfig, build_components, run_attack
    from brittle.engine.demo import prepare_demo, train_demo_probes
    from brittle.engine.probe_eval import ProbeEvaluator
    from brittle.scorers.repcache import CachedBackend
    from brittle.scorers.transformer_backend import TransformerEncoder

    torch.set_num_threads(args.threads)
    plan = prepare_demo()
    train_demo_probes(plan)
    config = AttackConfig(
        treebank=str(args.treebank),
        probes=tuple(str(p) for p in plan.probes),
        method="copos",
        search=args.search,
        budget=2,
        candidates=5,
        beam_width=2,
        parser="spacy",
        limit=args.sentences,
        # Every WordNet sense, as docs/attack.md's speed table was measured: the engine's
        # throughput, not the sense choice (which adds one encoder pass per sentence).
        generator_options=("sense=all",),
    )
    comps = build_components(config)
    # Warm-up: WordNet, spaCy, the model and Numba kernels load outside the timing.
    warm = AttackConfig(**{**config.__dict__, "limit": 1})
    with tempfile.TemporaryDirectory() as tmp:
        run_attack(warm, Path(tmp) / "warm", components=comps)
        recording = Recording(comps.evaluator)
        timed = dataclasses.replace(comps, evaluator=recording)
        start = time.perf_counter()
        run_attack(config, Path(tmp) / "run", components=timed, lockstep=not args.one_at_a_time)
        engine_s = time.perf_counter() - start

    assert isinstance(comps.evaluator, ProbeEvaluator)
    group = comps.evaluator.groups[0]
    backend = group.backend
    encoder = backend.inner if isinstance(backend, CachedBackend) else backend
    assert isinstance(encoder, TransformerEncoder)
    tok = encoder.tokenizer
    net = encoder.net
    top = max(group.layers)
    shallow = truncated(net, encoder.n_layers, top)

    rows = encoder.batch_size

    def bare(model: Any) -> float:
        # Each recorded group is tokenized in one call, sorted by length and cut into
        # batches of the engine's batch size, so padding is as small as the engine's.
        start = time.perf_counter()
        with torch.inference_mode():
            for batch in recording.batches:
                ids = tok([list(w) for w in batch], is_split_into_words=True, truncation=True)
                seqs = sorted(ids["input_ids"], key=len, reverse=True)
                for k in range(0, len(seqs), rows):
                    part = tok.pad({"input_ids": seqs[k : k + rows]}, return_tensors="pt")
                    model(**part, output_hidden_states=True)
        return time.perf_counter() - start

    full_s = bare(net)
    shallow_s = bare(shallow)
    n = sum(len(b) for b in recording.batches)
    print(
        f"{args.sentences} sentences, {n} candidate sentences scored, "
        f"{len(recording.batches)} model batches, search {args.search}"
        f"{' (one sentence at a time)' if args.one_at_a_time else ' (lock-step rounds)'}, "
        f"{args.threads} thread(s); probes read hidden state {top} of {encoder.n_layers}"
    )
    print(f"engine (search, parsing, probes, reports): {n / engine_s:8.1f} candidates/s")
    print(f"bare forward, every layer:               {n / full_s:8.1f} candidates/s")
    print(f"bare forward, layers up to {top} only:       {n / shallow_s:8.1f} candidates/s")
    print(f"engine / bare (every layer):   {full_s / engine_s:.2f} (target >= 0.80)")
    print(f"engine / bare (same layers):   {shallow_s / engine_s:.2f}")


def truncated(net: Any, n_layers: int, top: int) -> Any:
    """A copy of ``net`` with only its first ``top`` transformer blocks."""
    import copy

    import torch

    shallow = copy.deepcopy(net)
    for name, module in shallow.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers:
            parent_name, _, attr = name.rpartition(".")
            parent = shallow.get_submodule(parent_name) if parent_name else shallow
            setattr(parent, attr, torch.nn.ModuleList(list(module)[:top]))
            return shallow
    raise SystemExit("cannot find the model's transformer blocks")


if __name__ == "__main__":
    main()
