"""How much word position and tree depth each hidden layer encodes linearly.

For every hidden state of the encoder (0 = embeddings ... L = last layer) this prints:

- ``cos``: mean cosine similarity between the vectors of two words of the same
  sentence (how alike the words of a sentence look to each other);
- ``norm``: mean vector norm;
- ``R2 position`` / ``R2 depth``: R^2 on held-out sentences of a least-squares linear
  map from the word vector to the word's position in the sentence / its depth in the
  gold tree (fitted on the first half of the sentences, scored on the second).

It explains probe results layer by layer: a distance probe cannot beat the Path
baseline on a layer that has lost word order.

Usage::

    python bench/layer_linear_info.py [CONLLU] [--model MODEL] [--sentences 600]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import SHARED_UD  # noqa: E402

DEFAULT_TREEBANK = SHARED_UD / "UD_English-LinES" / "en_lines-ud-dev.conllu"


def r_squared(x: np.ndarray, y: np.ndarray, split: int) -> float:
    """Held-out R^2 of a least-squares linear map (with intercept) from x to y."""
    design = np.c_[x, np.ones(len(x))]
    w = np.linalg.lstsq(design[:split], y[:split], rcond=None)[0]
    pred = design[split:] @ w
    return float(1.0 - ((pred - y[split:]) ** 2).mean() / y[split:].var())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("treebank", nargs="?", type=Path, default=DEFAULT_TREEBANK)
    parser.add_argument("--model", default=None, help="default: the bundled MiniLM")
    parser.add_argument("--sentences", type=int, default=600)
    parser.add_argument("--pooling", default="mean", choices=("first", "mean", "last"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch

    from brittle.engine.core.conllu import read_conllu
    from brittle.scorers.transformer_backend import TransformerEncoder

    torch.set_num_threads(args.threads)
    sentences = read_conllu(args.treebank)[: args.sentences]
    encoder = TransformerEncoder(args.model, pooling=args.pooling)
    layers = list(range(encoder.n_layers + 1))
    flat = encoder.encode_flat([s.forms for s in sentences], layers=layers)
    position = np.concatenate([np.arange(len(s)) for s in sentences]).astype(np.float64)
    depth = np.concatenate([s.depths() for s in sentences]).astype(np.float64)
    half = len(sentences) // 2
    split = int(flat.offsets[half])
    print(f"{encoder.model}, {len(sentences)} sentences of {args.treebank.name}")
    print(
        f"{'layer':>5} {'from out':>8} {'cos':>6} {'norm':>6} {'R2 position':>12} {'R2 depth':>9}"
    )
    for layer in layers:
        vectors = flat.layer(layer).astype(np.float64)
        cosines = []
        for i in range(half):
            x = flat.sentence(i, layer)
            n = x.shape[0]
            if n < 2:
                continue
            unit = x / np.linalg.norm(x, axis=1, keepdims=True)
            cosines.append(((unit @ unit.T).sum() - n) / (n * n - n))
        print(
            f"{layer:>5} {layer - encoder.n_layers - 1:>8} {np.mean(cosines):6.3f} "
            f"{np.linalg.norm(vectors, axis=1).mean():6.2f} "
            f"{r_squared(vectors, position, split):12.3f} {r_squared(vectors, depth, split):9.3f}"
        )


if __name__ == "__main__":
    main()
