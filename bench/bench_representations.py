"""Representation extraction throughput against the bare model forward on the same batches.

Runs the bundled encoder over treebank sentences twice, alternating:

- ``bare``: the padded batches the backend builds, fed straight to ``model(...)`` with
  ``output_hidden_states=True`` (nothing else);
- ``full``: :meth:`TransformerEncoder.encode_flat` on the same sentences (tokenization,
  alignment, windows, batching, forward, pooling of every asked layer, copy to numpy).

The ratio full / bare is the cost of everything that is not the model; the target is at
most 1.10.

Usage::

    python bench/bench_representations.py [CONLLU] [--sentences 400] [--layers -1 -5]
        [--pooling mean] [--threads 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import SHARED_UD  # noqa: E402

DEFAULT_TREEBANK = SHARED_UD / "UD_English-EWT" / "en_ewt-ud-dev.conllu"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("treebank", nargs="?", type=Path, default=DEFAULT_TREEBANK)
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--layers", type=int, nargs="+", default=[-1, -5])
    parser.add_argument("--pooling", default="mean", choices=("first", "mean", "last"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import torch

    from brittle.engine.core.conllu import read_conllu
    from brittle.scorers.transformer_backend import TransformerEncoder

    torch.set_num_threads(args.threads)
    sentences = [s.forms for s in read_conllu(args.treebank)[: args.sentences]]
    n_words = sum(len(s) for s in sentences)
    encoder = TransformerEncoder(pooling=args.pooling)
    layers = tuple(encoder.layer_index(layer) for layer in args.layers)
    rows, offsets, _ = encoder.plan(sentences)
    batches = [encoder.collate(rows, index, offsets)[:2] for index in encoder.batches(rows)]

    def bare() -> None:
        with torch.inference_mode():
            for ids, mask in batches:
                encoder.net(input_ids=ids, attention_mask=mask, output_hidden_states=True)

    def full() -> None:
        encoder.encode_flat(sentences, layers=args.layers)

    bare()  # warm-up
    full()
    times: dict[str, list[float]] = {"bare": [], "full": []}
    for _ in range(args.repeats):
        for name, fn in (("bare", bare), ("full", full)):
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    best = {k: min(v) for k, v in times.items()}
    print(
        f"{len(sentences)} sentences, {n_words} words, {len(batches)} batches, "
        f"layers {list(args.layers)} (indices {list(layers)}), pooling {args.pooling}, "
        f"{args.threads} thread(s), best of {args.repeats}"
    )
    for name in ("bare", "full"):
        print(
            f"{name:>5}: {best[name]:7.3f} s  {len(sentences) / best[name]:7.1f} sentences/s  "
            f"{n_words / best[name]:8.0f} words/s"
        )
    print(f"ratio full / bare: {best['full'] / best['bare']:.3f}")


if __name__ == "__main__":
    main()
