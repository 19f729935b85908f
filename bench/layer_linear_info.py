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
        [--write-doc]
    python bench/layer_linear_info.py --render [--write-doc]

Run with the defaults (the bundled MiniLM, 600 LinES dev sentences), the figures go to
``docs/layer-linear-info.json`` (``--measured``) and ``--write-doc`` puts the table into
docs/probes.md between ``<!-- generated: layer-linear-info -->`` and ``<!-- end
generated -->``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Literal

import numpy as np
from reproduce_common import add_doc_options, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import SHARED_UD  # noqa: E402

DEFAULT_TREEBANK = SHARED_UD / "UD_English-LinES" / "en_lines-ud-dev.conllu"
#: The figures of the page's table, as the last default run wrote them.
MEASURED = ROOT / "docs" / "layer-linear-info.json"
DOC = ROOT / "docs" / "probes.md"


def r_squared(x: np.ndarray, y: np.ndarray, split: int) -> float:
    """Held-out R^2 of a least-squares linear map (with intercept) from x to y."""
    design = np.c_[x, np.ones(len(x))]
    w = np.linalg.lstsq(design[:split], y[:split], rcond=None)[0]
    pred = design[split:] @ w
    return float(1.0 - ((pred - y[split:]) ** 2).mean() / y[split:].var())


def measure(
    treebank: Path, model: str | None, n: int, pooling: Literal["first", "mean", "last"]
) -> dict[str, Any]:
    """Every hidden state's figures: ``{"model", "treebank", "sentences", "layers":
    [{"layer", "from_out", "cos", "norm", "r2_position", "r2_depth"}]}``."""
    from brittle.engine.core.conllu import read_conllu
    from brittle.scorers.transformer_backend import TransformerEncoder

    sentences = read_conllu(treebank)[:n]
    encoder = TransformerEncoder(model, pooling=pooling)
    layers = list(range(encoder.n_layers + 1))
    flat = encoder.encode_flat([s.forms for s in sentences], layers=layers)
    position = np.concatenate([np.arange(len(s)) for s in sentences]).astype(np.float64)
    depth = np.concatenate([s.depths() for s in sentences]).astype(np.float64)
    half = len(sentences) // 2
    split = int(flat.offsets[half])
    rows = []
    for layer in layers:
        vectors = flat.layer(layer).astype(np.float64)
        cosines = []
        for i in range(half):
            x = flat.sentence(i, layer)
            k = x.shape[0]
            if k < 2:
                continue
            unit = x / np.linalg.norm(x, axis=1, keepdims=True)
            cosines.append(((unit @ unit.T).sum() - k) / (k * k - k))
        rows.append(
            {
                "layer": layer,
                "from_out": layer - encoder.n_layers - 1,
                "cos": float(np.mean(cosines)),
                "norm": float(np.linalg.norm(vectors, axis=1).mean()),
                "r2_position": r_squared(vectors, position, split),
                "r2_depth": r_squared(vectors, depth, split),
            }
        )
    return {
        "model": encoder.model,
        "treebank": treebank.name,
        "sentences": len(sentences),
        "layers": rows,
    }


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated block of docs/probes.md (``layer-linear-info``): one column per
    hidden state (the embeddings, and the layers counted from the output beside the
    indices the probes use)."""
    rows = data["layers"]
    last = rows[-1]["layer"]

    def head(row: dict[str, Any]) -> str:
        if row["layer"] == 0:
            return "0 (emb.)"
        if row["layer"] == last or row["from_out"] == -5:
            return f"{row['layer']} ({row['from_out']})"
        return str(row["layer"])

    lines = [
        "| hidden state | " + " | ".join(head(r) for r in rows) + " |",
        "| --- |" + " ---: |" * len(rows),
        "| R² position | " + " | ".join(f"{r['r2_position']:.2f}" for r in rows) + " |",
        "| R² depth | " + " | ".join(f"{r['r2_depth']:.2f}" for r in rows) + " |",
        "| within-sentence cosine | " + " | ".join(f"{r['cos']:.2f}" for r in rows) + " |",
    ]
    return {"layer-linear-info": "\n".join(lines) + "\n"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("treebank", nargs="?", type=Path, default=DEFAULT_TREEBANK)
    parser.add_argument("--model", default=None, help="default: the bundled MiniLM")
    parser.add_argument("--sentences", type=int, default=600)
    parser.add_argument("--pooling", default="mean", choices=("first", "mean", "last"))
    parser.add_argument("--threads", type=int, default=2)
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    data = kept_figures(
        args, lambda: measure(args.treebank, args.model, args.sentences, args.pooling)
    )
    print(f"{data['model']}, {data['sentences']} sentences of {data['treebank']}")
    print(
        f"{'layer':>5} {'from out':>8} {'cos':>6} {'norm':>6} {'R2 position':>12} {'R2 depth':>9}"
    )
    for r in data["layers"]:
        print(
            f"{r['layer']:>5} {r['from_out']:>8} {r['cos']:6.3f} {r['norm']:6.2f} "
            f"{r['r2_position']:12.3f} {r['r2_depth']:9.3f}"
        )
    publish(blocks(data), DOC, write=args.write_doc)


if __name__ == "__main__":
    main()
