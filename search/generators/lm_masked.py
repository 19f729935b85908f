"""Whole-word fillers for a masked word, from a masked language model.

For each query ``(left, right)`` the word between is replaced by ``m`` mask tokens for
``m = 1 .. max_masks`` and the model fills them in one forward pass per batch:

- ``m = 1``: the ``n_first`` most likely tokens that begin a word and consist of letters
  (vocabulary entries that are whole words: ``##`` pieces and punctuation are out).
- ``m > 1`` (multi-piece words): the ``n_first`` best word-beginning tokens at the first
  mask, each completed by the most likely continuation piece (no leading space, letters
  only) at every later mask, predicted in the same pass (the masks are filled
  independently, not left to right). A word needs every later mask to be a continuation.

A word's score is the sum of its pieces' log-probabilities (natural log); scores of
different ``m`` are not normalised, so longer words rank lower. The best score is kept
when a word comes from several ``m``. Texts longer than the model's limit are cut on
the right (the mask is kept when it still fits, else the query gets no words).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from brittle.search.generators.lm import LoadedLM, fit_flags

__all__ = ["masked_words"]

WordScores = list[tuple[str, float]]


def masked_words(
    lm: LoadedLM,
    queries: Sequence[tuple[str, str]],
    *,
    n_first: int,
    max_masks: int = 1,
    batch_size: int = 16,
) -> list[WordScores]:
    """Words that fill the gap of each ``(left, right)`` query, best first.

    Args:
        lm: a masked LM from :func:`~brittle.search.generators.lm.load_lm`.
        queries: text before the word (no trailing space) and after it (with its space).
        n_first: word-beginning tokens kept per query and mask count.
        max_masks: most mask tokens (word pieces) tried.
        batch_size: texts per forward pass.

    Returns:
        For each query, ``(word, log-probability)`` pairs, distinct words, best first.
    """
    if max_masks < 1:
        raise ValueError(f"max_masks must be at least 1, got {max_masks}")
    mask_token = lm.tokenizer.mask_token
    if mask_token is None:
        raise ValueError(f"{lm.name} has no mask token: it is not a masked language model")
    found: list[dict[str, float]] = [{} for _ in queries]
    for m in range(1, max_masks + 1):
        gap = mask_token * m
        texts = [(f"{left} {gap}" if left else gap) + right for left, right in queries]
        for start in range(0, len(texts), batch_size):
            chunk = texts[start : start + batch_size]
            for j, words in enumerate(_fill(lm, chunk, m, n_first)):
                best_of = found[start + j]
                for word, score in words:
                    if word not in best_of or score > best_of[word]:
                        best_of[word] = score
    return [sorted(d.items(), key=lambda item: -item[1]) for d in found]


def _fill(lm: LoadedLM, texts: Sequence[str], m: int, n_first: int) -> list[WordScores]:
    import torch

    tok = lm.tokenizer
    limit = getattr(tok, "model_max_length", 512)
    limit = 512 if not isinstance(limit, int) or limit > 100_000 else limit
    enc = tok(list(texts), return_tensors="pt", padding=True, truncation=True, max_length=limit)
    with torch.inference_mode():
        logits = lm.model(**{k: v.to(lm.device) for k, v in enc.items()}).logits
    vocab = logits.shape[-1]
    starts = torch.from_numpy(fit_flags(lm.pieces.word_starts, vocab))
    cont = torch.from_numpy(fit_flags(lm.pieces.continuations, vocab))
    ids = enc["input_ids"]
    out: list[WordScores] = []
    for b in range(len(texts)):
        where = (ids[b] == tok.mask_token_id).nonzero()[:, 0]
        if where.numel() != m:
            out.append([])
            continue
        logp = logits[b, where.to(logits.device)].float().log_softmax(-1).cpu()  # (m, V)
        first = logp[0].masked_fill(~starts, float("-inf"))
        k = min(n_first, vocab)
        scores, tokens = first.topk(k)
        tail = ""
        tail_score = 0.0
        ok = True
        for j in range(1, m):
            piece_lp = logp[j].masked_fill(~cont, float("-inf"))
            best = int(piece_lp.argmax())
            if not bool(cont[best]):
                ok = False
                break
            tail += lm.pieces.text[best]
            tail_score += float(piece_lp[best])
        if not ok:
            out.append([])
            continue
        words = [
            (lm.pieces.text[int(t)] + tail, float(s) + tail_score)
            for s, t in zip(scores, tokens, strict=True)
            if np.isfinite(float(s))
        ]
        out.append(words)
    return out
