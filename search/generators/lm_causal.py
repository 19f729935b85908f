"""Whole-word continuations and sentence log-likelihoods from a causal language model.

:func:`next_words` proposes, for each left context, the words that best continue it:

1. All contexts of a chunk go through the model in one forward pass, left-padded, each
   preceded by the BOS token (or EOS when the tokenizer has no BOS), so that an empty
   context (the first word of a sentence) works too.
2. The ``n_first`` most likely tokens that begin a new word with letters are kept (at
   the start of a sentence, any letter token).
3. Greedy completion: each first piece is appended and the model asked for the next
   token; while the most likely next token continues the word (no leading space,
   letters only) it is appended, up to ``max_pieces`` pieces. A word still continuing
   after ``max_pieces`` pieces is dropped. The contexts' key/value cache is gathered per
   candidate, so each completion step costs one token per candidate. With
   ``complete="unknown"`` only first pieces that are not known words are completed
   (known words are taken as they are), which saves most of that cost.

A word's score is the sum of its pieces' log-probabilities (natural log). The model's
``forward`` sees ``input_ids``, ``attention_mask`` and ``position_ids`` (so left padding
does not shift positions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from brittle.search.generators.lm import LoadedLM, fit_flags

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["next_words", "sentence_logprobs"]

WordScores = list[tuple[str, float]]


def _start_id(tokenizer: Any) -> int | None:
    for name in ("bos_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    return None


def _pad_id(tokenizer: Any) -> int:
    for name in ("pad_token_id", "eos_token_id", "bos_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    return 0


def _left_padded(rows: Sequence[Sequence[int]], pad: int) -> tuple[Any, Any, Any]:
    """``input_ids``, ``attention_mask``, ``position_ids``: long tensors (B, L)."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for b, row in enumerate(rows):
        if row:
            ids[b, width - len(row) :] = torch.tensor(list(row), dtype=torch.long)
            mask[b, width - len(row) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids, mask, positions


def _encode(lm: LoadedLM, text: str) -> list[int]:
    ids = lm.tokenizer.encode(text, add_special_tokens=False) if text else []
    start = _start_id(lm.tokenizer)
    return ([start] if start is not None else []) + list(ids)


def next_words(
    lm: LoadedLM,
    contexts: Sequence[str],
    *,
    n_first: int,
    max_pieces: int = 3,
    complete: Literal["all", "unknown", "none"] = "all",
    is_word: Callable[[str], bool] | None = None,
    batch_size: int = 8,
) -> list[WordScores]:
    """Whole words that continue each context, best first.

    Args:
        lm: a causal LM from :func:`~brittle.search.generators.lm.load_lm`.
        contexts: left contexts (text before the word, no trailing space).
        n_first: first pieces kept per context.
        max_pieces: longest word, in tokens.
        complete: which first pieces go through greedy completion: ``all``;
            ``unknown`` — only pieces that ``is_word`` does not accept as a word (known
            words are taken as they are, which saves a forward pass per candidate);
            ``none`` — every first piece is taken as a whole word (fragments possible).
        is_word: the known-word test for ``complete="unknown"``.
        batch_size: contexts per forward pass (completion runs at most
            ``batch_size * n_first`` rows).

    Returns:
        For each context, ``(word, log-probability)`` pairs, distinct words, best first.
    """
    if complete == "unknown" and is_word is None:
        raise ValueError('complete="unknown" needs an is_word test')
    out: list[WordScores] = []
    for start in range(0, len(contexts), batch_size):
        out.extend(
            _next_words_chunk(
                lm,
                contexts[start : start + batch_size],
                n_first=n_first,
                max_pieces=max_pieces,
                complete=complete,
                is_word=is_word,
            )
        )
    return out


def _last_only(lm: LoadedLM) -> dict[str, int]:
    """``{"logits_to_keep": 1}`` when the model supports it (skips unused logits)."""
    import inspect

    params = inspect.signature(lm.model.forward).parameters
    return {"logits_to_keep": 1} if "logits_to_keep" in params else {}


def _forward(lm: LoadedLM, *, past_key_values: Any = None, **tensors: Any) -> Any:
    """The model's output on ``tensors`` (moved to the model's device).

    Only the last position's logits are computed when the model supports it.
    """
    inputs = {name: t.to(lm.device) for name, t in tensors.items()}
    if past_key_values is not None:
        inputs["past_key_values"] = past_key_values
        inputs["use_cache"] = True
    return lm.model(**inputs, **_last_only(lm))


def _next_words_chunk(
    lm: LoadedLM,
    contexts: Sequence[str],
    *,
    n_first: int,
    max_pieces: int,
    complete: str,
    is_word: Callable[[str], bool] | None,
) -> list[WordScores]:
    import torch

    if not contexts:
        return []
    pieces = lm.pieces
    rows = [_encode(lm, c) for c in contexts]
    if any(not r for r in rows):
        raise ValueError("the tokenizer has neither BOS nor EOS: empty contexts cannot be scored")
    ids, mask, positions = _left_padded(rows, _pad_id(lm.tokenizer))
    with torch.inference_mode():
        out = lm.model(
            input_ids=ids.to(lm.device),
            attention_mask=mask.to(lm.device),
            position_ids=positions.to(lm.device),
            use_cache=True,
            **_last_only(lm),
        )
        logp = out.logits[:, -1, :].float().log_softmax(-1).cpu()
    vocab = logp.shape[-1]
    starts = torch.from_numpy(fit_flags(pieces.word_starts, vocab))
    any_letters = torch.from_numpy(fit_flags(pieces.word_starts | pieces.continuations, vocab))
    allowed = torch.stack([any_letters if not c else starts for c in contexts])
    k = min(n_first, vocab)
    first_scores, first_ids = logp.masked_fill(~allowed, float("-inf")).topk(k, dim=-1)

    n_rows = len(contexts) * k
    first = first_ids.reshape(-1)
    words = [pieces.text[int(t)] for t in first]
    scores = first_scores.reshape(-1).double().numpy().copy()
    alive = np.isfinite(scores)
    if complete == "none" or max_pieces < 1:
        todo = np.zeros(n_rows, dtype=np.bool_)
    elif complete == "unknown" and is_word is not None:
        todo = alive & np.array([not is_word(w) for w in words], dtype=np.bool_)
    else:
        todo = alive.copy()
    rows_todo = np.flatnonzero(todo)
    if rows_todo.size:
        cont = torch.from_numpy(fit_flags(pieces.continuations, vocab))
        stepper = _Stepper(lm, out.past_key_values, rows, rows_todo // k, mask, positions)
        done = np.zeros(rows_todo.size, dtype=np.bool_)
        ok = np.ones(rows_todo.size, dtype=np.bool_)
        tokens = first[torch.from_numpy(rows_todo)]
        for step in range(1, max_pieces + 1):
            lp = stepper.step(tokens)  # (len(rows_todo), V)
            best = lp.argmax(-1)
            goes_on = cont[best].numpy()
            best_lp = lp.gather(1, best[:, None])[:, 0].double().numpy()
            for j, r in enumerate(rows_todo.tolist()):
                if done[j] or not ok[j]:
                    continue
                if not goes_on[j]:
                    done[j] = True
                elif step == max_pieces:
                    ok[j] = False
                else:
                    words[r] += pieces.text[int(best[j])]
                    scores[r] += best_lp[j]
            if bool(np.all(done | ~ok)):
                break
            tokens = best
        alive[rows_todo] &= done & ok
    results: list[WordScores] = []
    for b in range(len(contexts)):
        best_of: dict[str, float] = {}
        for r in range(b * k, (b + 1) * k):
            if alive[r]:
                word = words[r]
                if word not in best_of or scores[r] > best_of[word]:
                    best_of[word] = float(scores[r])
        results.append(sorted(best_of.items(), key=lambda item: -item[1]))
    return results


class _Stepper:
    """Feeds one more token per candidate row, reusing the contexts' key/value cache.

    Row ``j`` continues context ``source[j]``. The cache is gathered per row; when the
    cache cannot be gathered the full sequences are run again instead.
    """

    def __init__(
        self,
        lm: LoadedLM,
        cache: Any,
        rows: Sequence[Sequence[int]],
        source: NDArray[np.int64],
        mask: Any,
        positions: Any,
    ) -> None:
        import torch

        self.lm = lm
        self.cache = cache
        self.use_cache = cache is not None and hasattr(cache, "batch_select_indices")
        index = torch.from_numpy(np.ascontiguousarray(source, dtype=np.int64))
        if self.use_cache:
            cache.batch_select_indices(index.to(lm.device))
            self.mask = mask[index]
            self.last = positions[index, -1]
        self.seqs = [list(rows[int(s)]) for s in source.tolist()]

    def step(self, tokens: Any) -> Any:
        """Log-probabilities (rows, V) of the token after appending ``tokens`` (rows,)."""
        import torch

        for seq, t in zip(self.seqs, tokens.tolist(), strict=True):
            seq.append(int(t))
        with torch.inference_mode():
            if self.use_cache:
                ones = torch.ones((self.mask.shape[0], 1), dtype=torch.long)
                self.mask = torch.cat([self.mask, ones], dim=1)
                self.last = self.last + 1
                out = _forward(
                    self.lm,
                    input_ids=tokens[:, None],
                    attention_mask=self.mask,
                    position_ids=self.last[:, None],
                    past_key_values=self.cache,
                )
                self.cache = out.past_key_values
            else:
                ids, mask, positions = _left_padded(self.seqs, _pad_id(self.lm.tokenizer))
                out = _forward(self.lm, input_ids=ids, attention_mask=mask, position_ids=positions)
            return out.logits[:, -1, :].float().log_softmax(-1).cpu()


def sentence_logprobs(
    lm: LoadedLM, texts: Sequence[str], *, batch_size: int = 16
) -> NDArray[np.float64]:
    """Total log-probability (natural log) of each text under a causal LM, shape (m,).

    Each text is scored after the BOS (or EOS) token; padding does not count.
    """
    import torch

    out = np.zeros(len(texts), dtype=np.float64)
    pad = _pad_id(lm.tokenizer)
    dev = lm.device
    for start in range(0, len(texts), batch_size):
        rows = [_encode(lm, t) for t in texts[start : start + batch_size]]
        ids, mask, positions = _left_padded(rows, pad)
        with torch.inference_mode():
            logits = lm.model(
                input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=positions.to(dev)
            ).logits
            logp = logits[:, :-1, :].float().log_softmax(-1).cpu()
        target = ids[:, 1:]
        picked = logp.gather(2, target[:, :, None])[:, :, 0]
        keep = mask[:, 1:].bool() & mask[:, :-1].bool()
        sums = torch.where(keep, picked, 0.0).sum(-1).double().numpy()
        out[start : start + len(rows)] = sums
    return out
