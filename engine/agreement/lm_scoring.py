"""Surprisal of each verb form at the agreement slot, from a causal or a masked LM.

The surprisal of a form ``w`` is ``S(w) = -log2 p(w | context)`` in bits.

- **Causal LM** (GPT-2, SmolLM2): the context is the text left of the verb only. The
  model reads the start token (BOS, else EOS), the tokens of the left text and then the
  tokens of ``" " + w``; a form of several tokens is scored as the sum of its pieces'
  surprisals, each given the left text and the pieces before it.
- **Masked LM** (BERT, RoBERTa): the whole sentence is visible and the verb slot is
  masked. A form of ``k`` pieces gets ``k`` mask tokens; piece 1 is scored at the first
  mask, then the first mask is filled with piece 1 and piece 2 is scored at the second,
  and so on (successive masking, left to right); the surprisals are summed.

Models load through :func:`brittle.search.generators.lm.load_lm`, the loader coCO and the
fluency constraint use: ``None`` (or ``smollm2``) is the bundled SmolLM2, and any local
directory or hub id works. Rows are scored in batches sorted by length; identical
queries are scored once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from brittle.engine.agreement.stimuli import Stimulus
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.search.generators.lm import LoadedLM, load_lm

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Query", "SlotScorer", "open_lm"]

#: One agreement slot: (text left of the verb, text right of it with its leading space,
#: the verb forms to score).
Query = tuple[str, str, tuple[str, ...]]
LN2 = math.log(2.0)


def open_lm(
    name: str | None,
    *,
    kind: Literal["auto", "causal", "masked"] = "auto",
    device: str | None = None,
) -> LoadedLM:
    """Load a language model for agreement scoring (once per process).

    Args:
        name: a local directory, a hub id, ``smollm2`` or ``None`` (the bundled SmolLM2).
        kind: ``auto`` reads the model's config; ``causal``/``masked`` force the head.
        device: torch device (``None``: ``cuda`` when available, else ``cpu``).

    Raises:
        ResourceMissingError: the model cannot be loaded from ``name``.
    """
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        lm = load_lm(name, kind=kind, device=device)
    except (OSError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ResourceMissingError(
            f"language model {name!r}",
            [str(name)],
            f"give a local model directory or a hub id available offline ({first})",
        ) from None
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    if lm.kind == "masked" and lm.tokenizer.mask_token_id is None:
        raise ConfigError(f"{lm.name} has no mask token: it cannot score a masked slot")
    return lm


@dataclass
class SlotScorer:
    """Scores verb forms at agreement slots with one language model.

    Args:
        lm: the model, from :func:`open_lm`.
        batch_size: rows (one form in one sentence) per forward pass.
        max_tokens: longest row in tokens; a longer one is an error.
    """

    lm: LoadedLM
    batch_size: int = 32
    max_tokens: int = 512

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ConfigError(f"batch size must be at least 1, got {self.batch_size}")
        self._cache: dict[tuple[str, str, str], float] = {}

    @property
    def kind(self) -> str:
        """``causal`` or ``masked``."""
        return self.lm.kind

    def pieces(self, form: str) -> list[int]:
        """Token ids of ``form`` as a word after a space."""
        return list(self.lm.tokenizer.encode(" " + form, add_special_tokens=False))

    def surprisals(
        self,
        queries: Sequence[Query],
        *,
        progress: Callable[[int], None] | None = None,
    ) -> list[NDArray[np.float64]]:
        """Surprisal in bits of each form of each query: one float64 array (k,) per query.

        ``progress`` is called with the number of rows just scored.
        """
        keys: list[tuple[str, str, str]] = []
        for left, right, forms in queries:
            ctx_right = right if self.lm.kind == "masked" else ""
            keys.extend((left, ctx_right, f) for f in forms)
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        if todo:
            scored = self._score_rows(todo, progress)
            self._cache.update(zip(todo, scored.tolist(), strict=True))
        out: list[NDArray[np.float64]] = []
        i = 0
        for _, _, forms in queries:
            out.append(np.array([self._cache[keys[i + j]] for j in range(len(forms))]))
            i += len(forms)
        return out

    def stimulus_surprisals(
        self,
        stimuli: Sequence[Stimulus],
        *,
        progress: Callable[[int], None] | None = None,
    ) -> NDArray[np.float64]:
        """``S(correct)`` and ``S(wrong)`` of each stimulus in bits, float64 (m, 2)."""
        queries: list[Query] = []
        for s in stimuli:
            left, right = s.left_right()
            queries.append((left, right, (s.correct, s.wrong)))
        rows = self.surprisals(queries, progress=progress)
        return np.array(rows, dtype=np.float64).reshape(len(stimuli), 2)

    # -------------------------------------------------------------- the models
    def _score_rows(
        self, rows: Sequence[tuple[str, str, str]], progress: Callable[[int], None] | None
    ) -> NDArray[np.float64]:
        """Surprisal in bits of each ``(left, right, form)`` row, float64 (n,)."""
        if self.lm.kind == "masked":
            return self._score_masked(rows, progress)
        return self._score_causal(rows, progress)

    def _check_length(self, ids: Sequence[int]) -> None:
        if len(ids) > self.max_tokens:
            raise ConfigError(
                f"a sentence has {len(ids)} tokens, more than the model's {self.max_tokens}"
            )

    # causal: one forward pass per distinct input; forms that need the same input (every
    # one-piece form after the same left text) share it
    def _score_causal(
        self, rows: Sequence[tuple[str, str, str]], progress: Callable[[int], None] | None
    ) -> NDArray[np.float64]:
        tok = self.lm.tokenizer
        start = next((int(v) for v in (tok.bos_token_id, tok.eos_token_id) if v is not None), None)
        if start is None:
            raise ConfigError(f"{self.lm.name}: the tokenizer has neither BOS nor EOS")
        inputs: dict[tuple[int, ...], int] = {}
        needs: list[tuple[int, list[int]]] = []  # (input, pieces) per row
        lefts: dict[str, list[int]] = {}
        for left, _, form in rows:
            if left not in lefts:
                lefts[left] = [start, *tok.encode(left, add_special_tokens=False)]
            piece_ids = self.pieces(form)
            if not piece_ids:
                raise ConfigError(f"{form!r} gives no tokens")
            # the last len(pieces) positions of this input predict the pieces
            key = (*lefts[left], *piece_ids[:-1])
            self._check_length(key)
            needs.append((inputs.setdefault(key, len(inputs)), piece_ids))
        keys = list(inputs)
        keep = max(len(p) for _, p in needs)
        order = sorted(range(len(keys)), key=lambda i: (-len(keys[i]), i))
        logps: dict[int, NDArray[np.float32]] = {}
        for first in range(0, len(order), self.batch_size):
            idx = order[first : first + self.batch_size]
            block = self._causal_batch([list(keys[i]) for i in idx], keep)
            for n, i in enumerate(idx):
                logps[i] = block[n]
            if progress is not None:
                progress(len(idx))
        out = np.zeros(len(rows), dtype=np.float64)
        for r, (i, piece_ids) in enumerate(needs):
            k = len(piece_ids)
            lp = logps[i][keep - k :]  # (k, V): predictions of the pieces
            out[r] = -float(sum(float(lp[j, p]) for j, p in enumerate(piece_ids))) / LN2
        return out

    def _causal_batch(self, rows: Sequence[list[int]], keep: int) -> NDArray[np.float32]:
        """Next-token log-probabilities at the last ``keep`` positions of each
        left-padded row, float32 (B, keep, V)."""
        import inspect

        import torch

        tok = self.lm.tokenizer
        pad = next((int(v) for v in (tok.pad_token_id, tok.eos_token_id) if v is not None), 0)
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for b, row in enumerate(rows):
            ids[b, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[b, width - len(row) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        dev = self.lm.device
        extra = (
            {"logits_to_keep": keep}
            if "logits_to_keep" in inspect.signature(self.lm.model.forward).parameters
            else {}
        )
        with torch.inference_mode():
            logits = self.lm.model(
                input_ids=ids.to(dev),
                attention_mask=mask.to(dev),
                position_ids=positions.to(dev),
                **extra,
            ).logits
            logp = logits[:, -keep:, :].float().log_softmax(-1).cpu().numpy()
        return logp

    # masked: one row per (sentence, form), one forward pass per piece
    def _score_masked(
        self, rows: Sequence[tuple[str, str, str]], progress: Callable[[int], None] | None
    ) -> NDArray[np.float64]:
        encoded = [self._masked_row(*r) for r in rows]
        for ids, _ in encoded:
            self._check_length(ids)
        order = sorted(range(len(rows)), key=lambda i: (-len(encoded[i][0]), i))
        out = np.zeros(len(rows), dtype=np.float64)
        for first in range(0, len(order), self.batch_size):
            idx = order[first : first + self.batch_size]
            out[idx] = self._masked_batch([encoded[i] for i in idx])
            if progress is not None:
                progress(len(idx))
        return out

    def _masked_row(self, left: str, right: str, form: str) -> tuple[list[int], list[int]]:
        """Ids of the sentence with one mask per piece, and the pieces; the mask
        positions are found again in the ids (:meth:`_masked_batch`)."""
        tok = self.lm.tokenizer
        piece_ids = self.pieces(form)
        if not piece_ids:
            raise ConfigError(f"{form!r} gives no tokens")
        gap = str(tok.mask_token) * len(piece_ids)
        text = f"{left} {gap}{right}" if left else gap + right
        ids = list(tok(text)["input_ids"])
        if sum(1 for i in ids if i == tok.mask_token_id) != len(piece_ids):
            raise ConfigError(f"{self.lm.name}: the mask tokens of {text!r} do not survive")
        return ids, piece_ids

    def _masked_batch(self, rows: Sequence[tuple[list[int], list[int]]]) -> NDArray[np.float64]:
        import torch

        tok = self.lm.tokenizer
        pad = int(tok.pad_token_id) if tok.pad_token_id is not None else 0
        width = max(len(ids) for ids, _ in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for b, (row, _) in enumerate(rows):
            ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[b, : len(row)] = 1
        slots = [[j for j, v in enumerate(row) if v == tok.mask_token_id] for row, _ in rows]
        out = np.zeros(len(rows), dtype=np.float64)
        steps = max(len(p) for _, p in rows)
        dev = self.lm.device
        for step in range(steps):
            live = [b for b, (_, p) in enumerate(rows) if step < len(p)]
            with torch.inference_mode():
                logits = self.lm.model(
                    input_ids=ids[live].to(dev), attention_mask=mask[live].to(dev)
                ).logits
            for n, b in enumerate(live):
                pos = slots[b][step]
                piece = rows[b][1][step]
                logp = logits[n, pos].float().log_softmax(-1)[piece]
                out[b] -= float(logp) / LN2
                ids[b, pos] = piece  # fill the mask: the next piece sees this one
        return out
