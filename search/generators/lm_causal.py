"""Whole-word continuations and sentence log-likelihoods from a causal language model.

:func:`next_words_at` proposes, for cut points in texts, the words that best continue
the text left of each cut (:func:`next_words` does it for bare left contexts):

1. Every text goes through the model once, left-padded and preceded by the BOS token
   (or EOS when the tokenizer has no BOS, so an empty context works too); the
   next-token distribution after a cut is read at the cut's last token. This needs the
   text's tokens to split at the cut (true for pre-tokenizers that split at spaces and
   punctuation, checked with the tokenizer's character offsets); a cut that falls
   inside a token gets its left context encoded and run on its own.
2. The ``n_first`` most likely tokens that begin a new word with letters are kept (at
   the start of a text, any letter token).
3. Greedy completion: each first piece is appended and the model asked for the next
   token; while the most likely next token continues the word (no leading space,
   letters only) it is appended, up to ``max_pieces`` pieces. A word still continuing
   after ``max_pieces`` pieces is dropped. Each candidate reuses its text's key/value
   cache with the positions after the cut masked out, so a completion step costs one
   token per candidate. With ``complete="unknown"`` only first pieces that are not
   known words are completed (known words are taken as they are), which saves most of
   that cost.

A word's score is the sum of its pieces' log-probabilities (natural log). The model's
``forward`` sees ``input_ids``, ``attention_mask`` and ``position_ids`` (so padding and
masked positions do not shift positions).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from brittle.scorers.batching import padded_batches
from brittle.search.generators.lm import LoadedLM, fit_flags

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray
    from transformers import PreTrainedTokenizerBase
    from transformers.cache_utils import Cache

__all__ = [
    "AnchorState",
    "AnchorStates",
    "anchored_logprobs",
    "next_words",
    "next_words_at",
    "sentence_logprobs",
    "shared_prefix_logprobs",
    "substitution_logprobs",
]

WordScores = list[tuple[str, float]]
K = TypeVar("K")
Completion = Literal["all", "unknown", "none"]


def _start_id(tokenizer: PreTrainedTokenizerBase) -> int | None:
    for name in ("bos_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    return None


def _pad_id(tokenizer: PreTrainedTokenizerBase) -> int:
    for name in ("pad_token_id", "eos_token_id", "bos_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    return 0


def _left_padded(
    rows: Sequence[Sequence[int]], pad: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
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


def _right_padded(rows: Sequence[Sequence[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``input_ids`` and the mask of the real tokens, long tensors (B, L): each row at
    the left, padded on the right to the longest (a row's tokens never attend to the
    padding after them)."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for b, row in enumerate(rows):
        ids[b, : len(row)] = torch.tensor(list(row), dtype=torch.long)
        mask[b, : len(row)] = 1
    return ids, mask


def _encode(lm: LoadedLM, text: str) -> list[int]:
    ids = lm.tokenizer.encode(text, add_special_tokens=False) if text else []
    start = _start_id(lm.tokenizer)
    return ([start] if start is not None else []) + list(ids)


def _split_at(lm: LoadedLM, text: str, cuts: Sequence[int]) -> tuple[list[int], list[int | None]]:
    """Token ids of ``text`` (start token first) and, per cut, the tokens left of it.

    A count includes the start token; it is ``None`` when a token straddles the cut or
    the tokenizer gives no character offsets.
    """
    start = _start_id(lm.tokenizer)
    if start is None:
        raise ValueError("the tokenizer has neither BOS nor EOS: empty contexts cannot be scored")
    if not text:
        return [start], [1 if c == 0 else None for c in cuts]
    try:
        enc = lm.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = [tuple(o) for o in enc["offset_mapping"]]
    except (NotImplementedError, KeyError, TypeError, ValueError):
        return _encode(lm, text), [None for _ in cuts]
    counts: list[int | None] = []
    for c in cuts:
        if any(a < c < b for a, b in offsets):
            counts.append(None)
        else:
            counts.append(1 + sum(1 for a, _ in offsets if a < c))
    return [start, *enc["input_ids"]], counts


@dataclass(frozen=True, slots=True)
class _Query:
    """A cut of text ``row``: the context is the first ``n_ctx`` tokens of that row.

    ``text`` and ``cut`` index the caller's texts and cuts (for ``accept``).
    """

    row: int
    n_ctx: int
    text: int
    cut: int


def next_words(
    lm: LoadedLM,
    contexts: Sequence[str],
    *,
    n_first: int,
    max_pieces: int = 3,
    complete: Completion = "all",
    is_word: Callable[[str], bool] | None = None,
    batch_size: int = 8,
) -> list[WordScores]:
    """Whole words that continue each left context (no trailing space), best first.

    See :func:`next_words_at`; each context is a text cut at its end.
    """
    per_text = next_words_at(
        lm,
        contexts,
        [[len(c)] for c in contexts],
        n_first=n_first,
        max_pieces=max_pieces,
        complete=complete,
        is_word=is_word,
        batch_size=batch_size,
    )
    return [ws[0] for ws in per_text]


def next_words_at(
    lm: LoadedLM,
    texts: Sequence[str],
    cuts: Sequence[Sequence[int]],
    *,
    n_first: int,
    max_pieces: int = 3,
    complete: Completion = "all",
    is_word: Callable[[str], bool] | None = None,
    accept: Callable[[int, int, str], bool] | None = None,
    need: int | None = None,
    batch_size: int = 8,
) -> list[list[WordScores]]:
    """Whole words that continue each text at each of its cuts, best first.

    Args:
        lm: a causal LM from :func:`~brittle.search.generators.lm.load_lm`.
        texts: the texts (sentences).
        cuts: per text, character offsets where a word is to be proposed; the context
            is ``text[:cut]`` (no trailing space: the next token must begin a word).
        n_first: first pieces kept per cut.
        max_pieces: longest word, in tokens.
        complete: which first pieces go through greedy completion: ``all``;
            ``unknown`` — only pieces that ``is_word`` does not accept as a word (known
            words are taken as they are, which saves a forward pass per candidate);
            ``none`` — every first piece is taken as a whole word (fragments possible).
        is_word: the known-word test for ``complete="unknown"``.
        accept: ``accept(text, cut, word)`` — whether the caller will keep a word (its
            own filters). With ``need``, ``complete="unknown"`` skips a first piece
            ranked below ``need`` accepted known words: its word cannot score higher
            (a word's score is at most its first piece's), so it could not make the
            caller's top ``need``. Skipped pieces are dropped.
        need: words the caller keeps per cut (see ``accept``); ``None`` completes all.
        batch_size: texts per forward pass.

    Returns:
        Per text, per cut, ``(word, log-probability)`` pairs, distinct words, best first.
    """
    if complete == "unknown" and is_word is None:
        raise ValueError('complete="unknown" needs an is_word test')
    if len(texts) != len(cuts):
        raise ValueError(f"{len(texts)} texts but {len(cuts)} cut lists")
    rows: list[list[int]] = []
    queries: list[_Query] = []
    owner: list[tuple[int, int]] = []  # (text, cut) of each query
    for t, (text, text_cuts) in enumerate(zip(texts, cuts, strict=True)):
        ids, counts = _split_at(lm, text, text_cuts)
        row = len(rows)
        rows.append(ids)
        for j, (c, n) in enumerate(zip(text_cuts, counts, strict=True)):
            if n is None:  # the cut splits a token: run its context on its own
                rows.append(_encode(lm, text[:c]))
                queries.append(_Query(len(rows) - 1, len(rows[-1]), t, j))
            else:
                queries.append(_Query(row, n, t, j))
            owner.append((t, j))
    out: list[list[WordScores]] = [[[] for _ in c] for c in cuts]
    by_row: dict[int, list[int]] = {}
    for q, query in enumerate(queries):
        by_row.setdefault(query.row, []).append(q)
    for start in range(0, len(rows), batch_size):
        chunk_rows = list(range(start, min(start + batch_size, len(rows))))
        chunk_queries = [q for r in chunk_rows for q in by_row.get(r, [])]
        if not chunk_queries:
            continue
        found = _chunk_words(
            lm,
            [rows[r] for r in chunk_rows],
            [
                _Query(queries[q].row - start, queries[q].n_ctx, queries[q].text, queries[q].cut)
                for q in chunk_queries
            ],
            n_first=n_first,
            max_pieces=max_pieces,
            complete=complete,
            is_word=is_word,
            accept=accept,
            need=need,
        )
        for q, words in zip(chunk_queries, found, strict=True):
            t, j = owner[q]
            out[t][j] = words
    return out


def _last_only(lm: LoadedLM) -> dict[str, int]:
    """``{"logits_to_keep": 1}`` when the model supports it (skips unused logits)."""
    import inspect

    params = inspect.signature(lm.model.forward).parameters
    return {"logits_to_keep": 1} if "logits_to_keep" in params else {}


def _chunk_words(
    lm: LoadedLM,
    rows: Sequence[Sequence[int]],
    queries: Sequence[_Query],
    *,
    n_first: int,
    max_pieces: int,
    complete: Completion,
    is_word: Callable[[str], bool] | None,
    accept: Callable[[int, int, str], bool] | None = None,
    need: int | None = None,
) -> list[WordScores]:
    """Words for the queries of one forward pass over ``rows`` (token ids, start first)."""
    import torch

    pieces = lm.pieces
    ids, mask, positions = _left_padded(rows, _pad_id(lm.tokenizer))
    width = ids.shape[1]
    pads = [width - len(r) for r in rows]
    # Index of each query's last context token in the padded batch.
    last = torch.tensor([pads[q.row] + q.n_ctx - 1 for q in queries], dtype=torch.long)
    qrow = torch.tensor([q.row for q in queries], dtype=torch.long)
    with torch.inference_mode():
        out = lm.model(
            input_ids=ids.to(lm.device),
            attention_mask=mask.to(lm.device),
            position_ids=positions.to(lm.device),
            use_cache=complete != "none" and max_pieces >= 1,
        )
        logp = out.logits[qrow.to(lm.device), last.to(lm.device)].float().log_softmax(-1).cpu()
    vocab = logp.shape[-1]
    starts = torch.from_numpy(fit_flags(pieces.word_starts, vocab))
    any_letters = torch.from_numpy(fit_flags(pieces.word_starts | pieces.continuations, vocab))
    allowed = torch.stack([any_letters if q.n_ctx == 1 else starts for q in queries])
    k = min(n_first, vocab)
    first_scores, first_ids = logp.masked_fill(~allowed, float("-inf")).topk(k, dim=-1)

    n_cands = len(queries) * k
    first = first_ids.reshape(-1)
    words = [pieces.text[int(t)] for t in first]
    scores = first_scores.reshape(-1).double().numpy().copy()
    alive = np.isfinite(scores)
    if complete == "none" or max_pieces < 1:
        todo = np.zeros(n_cands, dtype=np.bool_)
    elif complete == "unknown" and is_word is not None:
        todo = np.zeros(n_cands, dtype=np.bool_)
        for q, query in enumerate(queries):
            kept = 0
            for c in range(q * k, (q + 1) * k):  # best first
                if not alive[c]:
                    continue
                if is_word(words[c]):
                    if accept is None or accept(query.text, query.cut, words[c]):
                        kept += 1
                elif need is None or kept < need:
                    todo[c] = True
                else:
                    alive[c] = False  # a fragment that could not make the top ``need``
    else:
        todo = alive.copy()
    cand_todo = np.flatnonzero(todo)
    if cand_todo.size:
        cont = torch.from_numpy(fit_flags(pieces.continuations, vocab))
        of_query = [queries[int(c) // k] for c in cand_todo]
        stepper = _Stepper(lm, out.past_key_values, rows, of_query, mask, pads)
        done = np.zeros(cand_todo.size, dtype=np.bool_)
        ok = np.ones(cand_todo.size, dtype=np.bool_)
        tokens = first[torch.from_numpy(cand_todo)]
        live = np.arange(cand_todo.size)  # the candidates the stepper still runs
        for step in range(1, max_pieces + 1):
            lp = stepper.step(tokens)  # (len(live), V)
            best = lp.argmax(-1)
            goes_on = cont[best].numpy()
            best_lp = lp.gather(1, best[:, None])[:, 0].double().numpy()
            for r, j in enumerate(live.tolist()):
                c = int(cand_todo[j])
                if not goes_on[r]:
                    done[j] = True
                elif step == max_pieces:
                    ok[j] = False
                else:
                    words[c] += pieces.text[int(best[r])]
                    scores[c] += best_lp[r]
            going = ~(done[live] | ~ok[live])
            if not bool(going.any()):
                break
            # a finished word leaves the batch: later steps run only the words going on
            if not bool(going.all()):
                stepper.keep(torch.from_numpy(np.flatnonzero(going)))
            live = live[going]
            tokens = best[torch.from_numpy(going)]
        alive[cand_todo] &= done & ok
    results: list[WordScores] = []
    for q in range(len(queries)):
        best_of: dict[str, float] = {}
        for c in range(q * k, (q + 1) * k):
            if alive[c]:
                word = words[c]
                if word not in best_of or scores[c] > best_of[word]:
                    best_of[word] = float(scores[c])
        results.append(sorted(best_of.items(), key=lambda item: -item[1]))
    return results


class _Stepper:
    """Feeds one more token per candidate, reusing the texts' key/value cache.

    Candidate ``j`` continues the context of ``queries[j]``: it gets its text's cache
    rows with every position after the context masked out, and the next position id.
    When the cache cannot be gathered, the context plus the tokens so far are run again.
    """

    def __init__(
        self,
        lm: LoadedLM,
        cache: Cache | None,
        rows: Sequence[Sequence[int]],
        queries: Sequence[_Query],
        mask: torch.Tensor,
        pads: Sequence[int],
    ) -> None:
        import torch

        self.lm = lm
        self.cache = cache
        self.use_cache = cache is not None and hasattr(cache, "batch_select_indices")
        if cache is not None and self.use_cache:
            index = torch.tensor([q.row for q in queries], dtype=torch.long)
            cache.batch_select_indices(index.to(lm.device))
            width = mask.shape[1]
            keep = torch.tensor([pads[q.row] + q.n_ctx for q in queries], dtype=torch.long)
            self.mask = mask[index] * (torch.arange(width)[None, :] < keep[:, None]).long()
            self.next_pos = torch.tensor([q.n_ctx for q in queries], dtype=torch.long)
        self.seqs = [list(rows[q.row][: q.n_ctx]) for q in queries]

    def keep(self, rows: torch.Tensor) -> None:
        """Keep only the candidates at ``rows`` (long, ascending) for the next steps."""
        self.seqs = [self.seqs[int(r)] for r in rows]
        if self.use_cache and self.cache is not None:
            self.cache.batch_select_indices(rows.to(self.lm.device))
            self.mask = self.mask[rows]
            self.next_pos = self.next_pos[rows]

    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (candidates, V) of the token after appending ``tokens``."""
        import torch

        for seq, t in zip(self.seqs, tokens.tolist(), strict=True):
            seq.append(int(t))
        dev = self.lm.device
        with torch.inference_mode():
            if self.use_cache:
                ones = torch.ones((self.mask.shape[0], 1), dtype=torch.long)
                self.mask = torch.cat([self.mask, ones], dim=1)
                out = self.lm.model(
                    input_ids=tokens[:, None].to(dev),
                    attention_mask=self.mask.to(dev),
                    position_ids=self.next_pos[:, None].to(dev),
                    past_key_values=self.cache,
                    use_cache=True,
                    **_last_only(self.lm),
                )
                self.cache = out.past_key_values
                self.next_pos = self.next_pos + 1
            else:
                ids, mask, positions = _left_padded(self.seqs, _pad_id(self.lm.tokenizer))
                out = self.lm.model(
                    input_ids=ids.to(dev),
                    attention_mask=mask.to(dev),
                    position_ids=positions.to(dev),
                    **_last_only(self.lm),
                )
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


def shared_prefix_logprobs(
    lm: LoadedLM, texts: Sequence[str], *, batch_size: int = 16
) -> NDArray[np.float64]:
    """:func:`sentence_logprobs` of texts that begin alike, their shared tokens run once.

    The tokens every text begins with (the start token, then the longest run of token
    ids all texts share) go through the model once, keeping their key/value cache; the
    rest of each text is then scored on a copy of that cache, ``batch_size`` texts per
    forward pass (padded on the right: a text's tokens never attend to the padding after
    them). The values are :func:`sentence_logprobs`'s up to float noise. For the texts
    of a substitution (one sentence, one word replaced in turn) the left context runs
    once and each text costs its word and its right context only. A model whose cache
    cannot be copied across a batch, or a tokenizer without a start token, gets every
    text run whole (:func:`sentence_logprobs`).
    """
    import torch

    out = np.zeros(len(texts), dtype=np.float64)
    if not texts:
        return out
    rows = [_encode(lm, t) for t in texts]
    n = _common_length(rows)
    if n == 0:
        return sentence_logprobs(lm, texts, batch_size=batch_size)
    dev = lm.device
    prefix = torch.tensor([rows[0][:n]], dtype=torch.long)
    with torch.inference_mode():
        first = lm.model(
            input_ids=prefix.to(dev),
            attention_mask=torch.ones_like(prefix).to(dev),
            position_ids=torch.arange(n)[None, :].to(dev),
            use_cache=True,
        )
        cache = first.past_key_values
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            return sentence_logprobs(lm, texts, batch_size=batch_size)
        logp = first.logits[0].float().log_softmax(-1).cpu()  # (n, V)
    base = float(logp[:-1].gather(1, prefix[0, 1:, None])[:, 0].double().sum())
    after = logp[-1]  # the next token's log-probabilities after the shared tokens
    tails = [r[n:] for r in rows]
    todo = sorted((j for j, t in enumerate(tails) if t), key=lambda j: (-len(tails[j]), j))
    out[:] = base
    for start in range(0, len(todo), batch_size):
        chunk = todo[start : start + batch_size]
        ids, rest = _tails_on_cache(lm, cache, n, [tails[j] for j in chunk], run_last=True)
        sums = after[ids[:, 0]] + rest
        for j, value in zip(chunk, sums.double().tolist(), strict=True):
            out[j] = base + value
    return out


def substitution_logprobs(
    lm: LoadedLM, original: str, texts: Sequence[str], *, batch_size: int = 64
) -> NDArray[np.float64]:
    """:func:`sentence_logprobs` of texts that are ``original`` with one stretch changed
    (a word substituted, the text perhaps cut short a few words after it), shape (m,):
    :func:`anchored_logprobs` with ``original`` as every text's anchor."""
    return anchored_logprobs(lm, [original], texts, [0] * len(texts), batch_size=batch_size)


@dataclass(frozen=True)
class AnchorState:
    """What scoring texts against one anchor needs from its forward pass.

    Attributes:
        ids: the anchor's token ids, the start token first (n,).
        keys: per layer, the anchor's cached keys, float (heads, n, head size).
        values: per layer, its cached values, the same shapes.
        before: ``before[k]``, the log-probability (natural log) of the anchor's first
            ``k`` tokens, the start token free (n + 1 floats; ``before[0] = before[1] =
            0``).
    """

    ids: tuple[int, ...]
    keys: tuple[torch.Tensor, ...]
    values: tuple[torch.Tensor, ...]
    before: tuple[float, ...]


class AnchorStates:
    """The anchors' states kept between calls of :func:`anchored_logprobs`, for one
    model: the most recently used, up to ``max_tokens`` anchor tokens in all, so a
    sentence checked again is not run again.

    Memory: per anchor token, two floats per layer, key/value head and head size (46 KB
    for SmolLM2 in float32), so the default 4,096 tokens keep at most 189 MB for it.
    """

    def __init__(self, max_tokens: int = 4096) -> None:
        self.max_tokens = max_tokens
        self._kept: dict[str, AnchorState] = {}
        self._tokens = 0

    def get(self, text: str) -> AnchorState | None:
        """The kept state of ``text`` (now the most recently used), or ``None``."""
        state = self._kept.pop(text, None)
        if state is not None:
            self._kept[text] = state
        return state

    def put(self, text: str, state: AnchorState) -> None:
        """Keep ``state`` as ``text``'s, forgetting the least recently used while more
        than ``max_tokens`` tokens are kept (the newest always stays)."""
        old = self._kept.pop(text, None)
        if old is not None:
            self._tokens -= len(old.ids)
        self._kept[text] = state
        self._tokens += len(state.ids)
        while self._tokens > self.max_tokens and len(self._kept) > 1:
            first = next(iter(self._kept))
            self._tokens -= len(self._kept.pop(first).ids)

    def clear(self) -> None:
        """Forget every kept state."""
        self._kept.clear()
        self._tokens = 0


def anchored_logprobs(
    lm: LoadedLM,
    anchors: Sequence[str],
    texts: Sequence[str],
    owners: Sequence[int],
    *,
    batch_size: int = 64,
    states: AnchorStates | None = None,
) -> NDArray[np.float64]:
    """:func:`sentence_logprobs` of texts that are each one of ``anchors`` with words
    changed (``owners[j]``: the index of text ``j``'s anchor), shape (m,).

    Each anchor goes through the model once (a few per forward pass, padded on the
    right; or not at all when ``states`` keeps it from an earlier call), keeping its
    key/value cache and the log-probability of each of its prefixes. Each text is then
    scored on its anchor's cache cut where they part: it costs its tokens from there on
    but the last (the changed words and what follows; the last token is scored, not
    run), and the token before them too when its anchor's state was kept from an earlier
    call (the anchor's next-token distributions are not kept). Texts of different
    anchors and cuts share a forward pass, ``batch_size`` texts a pass: each row's
    attention masks its anchor's cached tokens from its cut on (and the padding of
    shorter anchors), and its positions continue from its cut. Hand-written because on
    a CPU a small forward pass costs about as much as reading the model's weights once
    (60 ms for SmolLM2 in float32 on 2 cores: 13 ms a token for one row of 5 tokens,
    1.6 for 64 rows), so one pass for many cuts, and anchors run once, are what make
    scoring substitutions cheap. The values are :func:`sentence_logprobs`'s up to float
    noise. A model whose cache is not a :class:`~transformers.DynamicCache`, or a
    tokenizer without a start token, gets every text run whole.
    """
    if len(owners) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(owners)} anchor indices")
    out = np.zeros(len(texts), dtype=np.float64)
    if not texts:
        return out
    if _start_id(lm.tokenizer) is None:
        return sentence_logprobs(lm, texts, batch_size=batch_size)
    kept = states if states is not None else AnchorStates(max_tokens=sys.maxsize)
    rows = [_encode(lm, t) for t in texts]
    heads = {anchors[a]: _encode(lm, anchors[a]) for a in sorted(set(owners))}
    shared: dict[int, int] = {}  # text -> the tokens it begins with as its anchor does
    for j, (row, a) in enumerate(zip(rows, owners, strict=True)):
        n = min(_common_length([row, heads[anchors[a]]]), len(row) - 1)
        if n >= 1:  # else nothing to score after the start token: the text is empty
            shared[j] = n
    found = {a: kept.get(a) for a in heads}
    # the first parted token of each text whose anchor runs now: read off the anchor's
    # next-token distribution there instead of run again
    wanted = {
        (anchors[owners[j]], n - 1, rows[j][n])
        for j, n in shared.items()
        if found[anchors[owners[j]]] is None
    }
    made = _run_anchors(
        lm, [a for a, s in found.items() if s is None], heads, wanted, kept, batch_size
    )
    if made is None:
        return sentence_logprobs(lm, texts, batch_size=batch_size)
    fresh, picked = made
    states_of = {a: s for a, s in found.items() if s is not None} | fresh  # every anchor
    cuts: dict[int, int] = {}  # text -> the anchor's tokens it runs on
    start: dict[int, float] = {}  # text -> log-probability up to its cut, and past it
    for j, n in shared.items():
        anchor = anchors[owners[j]]
        state = states_of[anchor]
        if anchor in fresh:
            cuts[j] = n
            start[j] = state.before[n] + picked[(anchor, n - 1, rows[j][n])]
        else:
            cuts[j] = n - 1
            start[j] = state.before[n]
    tails = {j: rows[j][cut:] for j, cut in cuts.items()}
    todo = sorted(cuts, key=lambda j: (-len(tails[j]), j))
    vocab = len(lm.tokenizer)  # the logits' width, near enough for their bound
    for chunk in _cheapest_batches(todo, [len(tails[j]) for j in todo], batch_size, vocab):
        rest = _tails_on_anchors(
            lm,
            [states_of[anchors[owners[j]]] for j in chunk],
            [cuts[j] for j in chunk],
            [tails[j] for j in chunk],
        )
        for j, value in zip(chunk, rest.tolist(), strict=True):
            out[j] = start[j] + value
    return out


def _run_anchors(
    lm: LoadedLM,
    missing: Sequence[str],
    heads: Mapping[str, Sequence[int]],
    wanted: set[tuple[str, int, int]],
    kept: AnchorStates,
    batch_size: int,
) -> tuple[dict[str, AnchorState], dict[tuple[str, int, int], float]] | None:
    """Runs the ``missing`` anchors (a few per forward pass, longest first), keeps their
    states in ``kept`` and returns them, with the ``wanted`` next-token
    log-probabilities ``(anchor, position, token)``. ``None`` when the model's cache is
    not a :class:`~transformers.DynamicCache`."""
    import torch

    made: dict[str, AnchorState] = {}
    picked: dict[tuple[str, int, int], float] = {}
    order = sorted(missing, key=lambda a: (-len(heads[a]), a))
    vocab = len(lm.tokenizer)  # the logits' width, near enough for their bound
    dev = lm.device
    for group in _cheapest_batches(order, [len(heads[a]) for a in order], batch_size, vocab):
        ids, mask = _right_padded([heads[a] for a in group], _pad_id(lm.tokenizer))
        width = ids.shape[1]
        asked = sorted(w for w in wanted if w[0] in group)
        slot = {a: g for g, a in enumerate(group)}
        with torch.inference_mode():
            run = lm.model(
                input_ids=ids.to(dev),
                attention_mask=mask.to(dev),
                position_ids=torch.arange(width)[None, :].expand(len(group), -1).to(dev),
                use_cache=True,
            )
            layers = _layer_tensors(run.past_key_values)
            if layers is None:
                return None
            logp = run.logits.float().log_softmax(-1)  # (A, width, V)
            steps = logp[:, :-1].gather(2, ids[:, 1:, None].to(dev))[:, :, 0].double().cpu()
            if asked:
                at_row = torch.tensor([slot[a] for a, _, _ in asked], dtype=torch.long)
                at_pos = torch.tensor([p for _, p, _ in asked], dtype=torch.long)
                at_tok = torch.tensor([t for _, _, t in asked], dtype=torch.long)
                values = logp[at_row.to(dev), at_pos.to(dev), at_tok.to(dev)].double().cpu()
                picked.update(zip(asked, values.tolist(), strict=True))
        for g, a in enumerate(group):
            n = len(heads[a])
            before = [0.0, 0.0, *torch.cumsum(steps[g, : n - 1], 0).tolist()]
            state = AnchorState(
                ids=tuple(heads[a]),
                keys=tuple(k[g, :, :n].clone() for k, _ in layers),
                values=tuple(v[g, :, :n].clone() for _, v in layers),
                before=tuple(before[: n + 1]),
            )
            kept.put(a, state)
            made[a] = state
    return made, picked


def _layer_tensors(cache: Cache | None) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
    """Each layer's keys and values, (B, heads, n, head size), of a cache of plain
    full-attention layers; ``None`` for any other cache (a sliding window's layers keep
    only their window, a recurrent layer keeps no keys), which the callers score
    without."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    if not isinstance(cache, DynamicCache):
        return None
    out: list[tuple[torch.Tensor, torch.Tensor]] = []
    for layer in cache.layers:
        if type(layer) is not DynamicLayer or layer.keys is None or layer.values is None:
            return None
        out.append((layer.keys, layer.values))
    return out


def _tails_on_anchors(
    lm: LoadedLM,
    anchors: Sequence[AnchorState],
    cuts: Sequence[int],
    tails: Sequence[Sequence[int]],
) -> torch.Tensor:
    """Tails of texts (non-empty token lists, longest first), row ``b`` continuing the
    first ``cuts[b]`` tokens of ``anchors[b]``, run in one forward pass on a cache of
    those anchors (padded on the right); a tail's last token is scored, never run, so a
    batch of one-token tails runs nothing. Returns each tail's log-probability from its
    second token on, float64 (B,)."""
    import torch
    from transformers import DynamicCache

    longest = len(tails[0])
    run = longest - 1
    if run == 0:
        return torch.zeros(len(tails), dtype=torch.float64)
    ids, real_tokens = _right_padded(tails, _pad_id(lm.tokenizer))
    lengths = real_tokens.sum(-1)
    n = torch.tensor(list(cuts), dtype=torch.long)
    width = max(len(a.ids) for a in anchors)
    # each row sees its anchor's tokens before its cut, then its own tail
    seen = torch.cat(
        [
            torch.arange(width)[None, :] < n[:, None],
            torch.ones((len(tails), run), dtype=torch.bool),
        ],
        1,
    ).long()
    dev = lm.device

    def stacked(parts: Sequence[torch.Tensor]) -> torch.Tensor:
        """Per-anchor (heads, n, size) tensors, zero-padded to ``width``, as one
        (B, heads, width, size)."""
        out = parts[0].new_zeros((len(parts), parts[0].shape[0], width, parts[0].shape[2]))
        for b, part in enumerate(parts):
            out[b, :, : part.shape[1]] = part
        return out

    with torch.inference_mode():
        cache = DynamicCache(
            ddp_cache_data=[
                (stacked([a.keys[i] for a in anchors]), stacked([a.values[i] for a in anchors]))
                for i in range(len(anchors[0].keys))
            ],
        )
        logits = lm.model(
            input_ids=ids[:, :run].to(dev),
            attention_mask=seen.to(dev),
            position_ids=(n[:, None] + torch.arange(run)[None, :]).to(dev),
            past_key_values=cache,
            use_cache=True,
        ).logits
        logp = logits.float().log_softmax(-1)  # (B, run, V)
        picked = logp.gather(2, ids[:, 1:, None].to(dev))[:, :, 0].double().cpu()
    real = torch.arange(run)[None, :] < (lengths - 1)[:, None]
    return torch.where(real, picked, 0.0).sum(-1)


def _tails_on_cache(
    lm: LoadedLM, cache: Cache, n: int, tails: Sequence[Sequence[int]], *, run_last: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tails of texts (non-empty token lists, longest first) that continue the first
    ``n`` tokens of ``cache``, run in one forward pass on copies of it (padded on the
    right). Returns their token ids, long (B, width), and each tail's log-probability
    from its second token on, float32 (B,); the first token's is the caller's (the
    cache's own next-token distribution). The cache may hold more than ``n`` tokens (it
    is cut). ``run_last``: the last column runs too (its outputs are not used); without
    it a tail's last token is scored, never run, and a batch of one-token tails runs
    nothing."""
    import torch

    width = len(tails[0])
    ids, real_tokens = _right_padded(tails, _pad_id(lm.tokenizer))
    lengths = real_tokens.sum(-1)
    run = width if run_last else width - 1
    if run == 0:
        return ids, torch.zeros(len(tails), dtype=torch.float32)
    dev = lm.device
    with torch.inference_mode():
        kv = copy.deepcopy(cache)
        if kv.get_seq_length() > n:
            kv.crop(n - kv.get_seq_length())  # negative: tokens removed from the end
        kv.batch_repeat_interleave(len(tails))
        logits = lm.model(
            input_ids=ids[:, :run].to(dev),
            attention_mask=torch.ones((len(tails), n + run), dtype=torch.long).to(dev),
            position_ids=torch.arange(n, n + run)[None, :].expand(len(tails), -1).to(dev),
            past_key_values=kv,
            use_cache=True,
        ).logits
        rest = logits[:, : width - 1, :].float().log_softmax(-1)  # (B, width - 1, V)
        # the next tokens' log-probabilities picked where the model ran: only (B, width
        # - 1) floats leave a GPU, not the whole distribution
        picked = rest.gather(2, ids[:, 1:, None].to(dev))[:, :, 0].cpu()
    real = torch.arange(width - 1)[None, :] < (lengths - 1)[:, None]
    return ids, torch.where(real, picked, 0.0).sum(-1)


#: Most floats of next-token distributions one forward pass of tails computes (rows x
#: tokens x vocabulary; 64 MB of float32, and as much again for their log-softmax).
TAIL_LOGIT_FLOATS = 1 << 24


#: What one forward pass costs beyond its tokens, in tokens: a small pass reads the
#: model's weights once whatever its size. Measured with SmolLM2 on 2 cores: one row of
#: 5 tokens takes 68 ms in float32 and 37 in bfloat16, against 1.6 and 0.85 ms a token
#: in passes of 64 rows.
PASS_TOKENS = 40


def _cheapest_batches(
    todo: Sequence[K], lengths: Sequence[int], batch_size: int, vocab: int
) -> list[list[K]]:
    """``todo`` (longest first; ``lengths[i]``: the tokens of ``todo[i]``) cut, in order,
    into the batches that cost least (:func:`~brittle.scorers.batching.padded_batches`
    with :data:`PASS_TOKENS` a pass): each has at most ``batch_size`` rows and, but for a
    batch of one, :data:`TAIL_LOGIT_FLOATS` floats of logits (every pass's logits and
    their log-softmax stay bounded, as long sentences' substitutions would not be)."""
    if len(lengths) != len(todo):
        raise ValueError(f"{len(todo)} rows but {len(lengths)} lengths")
    cuts = padded_batches(
        np.maximum(np.asarray(lengths, dtype=np.int64), 1),
        max_rows=batch_size,
        max_tokens=max(1, TAIL_LOGIT_FLOATS // max(1, vocab)),
        call_cost=PASS_TOKENS,
    )
    return [[todo[i] for i in batch] for batch in cuts]


def _common_length(rows: Sequence[Sequence[int]]) -> int:
    """How many tokens every row begins with (at most the shortest row's length)."""
    n = min(len(r) for r in rows)
    for r in rows[1:]:
        k = 0
        while k < n and r[k] == rows[0][k]:
            k += 1
        n = k
    return n
