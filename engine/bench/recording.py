"""An evaluator that records what the attack sends to the model, for ``brittle bench``.

The end-to-end stage replays exactly those batches through the bare model forward, so
the reference does the same model work as the engine and nothing else.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from brittle.engine.core.sentence import Sentence
    from brittle.scorers.transformer_backend import TransformerEncoder
    from brittle.search.scoring import Evaluation, Request, TaskEvaluator

__all__ = ["RecordingEvaluator", "bare_forward_seconds", "encoder_of"]


class RecordingEvaluator:
    """Wraps a :class:`~brittle.search.scoring.TaskEvaluator` and keeps, per model call,
    the word lists of the candidate sentences it scored (``batches``)."""

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
        self.batches.append([c.forms for _, cands, _ in requests for c in cands])
        return self.inner.evaluate_many(requests)


def encoder_of(evaluator: TaskEvaluator) -> tuple[TransformerEncoder, int]:
    """The transformer encoder behind a probe evaluator and the deepest hidden state its
    probes read (blocks above it never run).

    Raises:
        TypeError: the evaluator does not run a transformer encoder.
    """
    # deferred: torch and transformers load only when an attack is measured
    from brittle.engine.probes.probe_eval import ProbeEvaluator
    from brittle.scorers.repcache import CachedBackend

    # deferred: as above
    from brittle.scorers.transformer_backend import TransformerEncoder

    if not isinstance(evaluator, ProbeEvaluator):
        raise TypeError(f"not a probe evaluator: {type(evaluator).__name__}")
    group = evaluator.groups[0]
    backend = group.backend
    encoder = backend.inner if isinstance(backend, CachedBackend) else backend
    if not isinstance(encoder, TransformerEncoder):
        raise TypeError(f"not a transformer encoder: {type(encoder).__name__}")
    return encoder, max(group.layers)


def bare_forward_seconds(
    encoder: TransformerEncoder, batches: Sequence[Sequence[tuple[str, ...]]], top: int | None
) -> float:
    """Seconds the bare model forward takes on ``batches`` (each tokenised in one call,
    sorted by length, cut into the encoder's batch size), through every block or only
    the first ``top``."""
    import copy

    import torch

    tok, net, rows = encoder.tokenizer, encoder.net, encoder.batch_size
    if top is not None:
        net = copy.deepcopy(net)
        for name, module in net.named_modules():
            if isinstance(module, torch.nn.ModuleList) and len(module) == encoder.n_layers:
                parent_name, _, attr = name.rpartition(".")
                parent = net.get_submodule(parent_name) if parent_name else net
                setattr(parent, attr, torch.nn.ModuleList(list(module)[:top]))
                break
    start = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            ids = tok([list(w) for w in batch], is_split_into_words=True, truncation=True)
            seqs = sorted(ids["input_ids"], key=len, reverse=True)
            for k in range(0, len(seqs), rows):
                part = tok.pad({"input_ids": seqs[k : k + rows]}, return_tensors="pt")
                net(**part.to(encoder.device), output_hidden_states=True)
    return time.perf_counter() - start
