"""Per-word surprisal under a causal LM, and the check of its increase at a substitution.

:func:`word_surprisals` reads each sentence as its words joined by single spaces
(``SpaceAfter=No`` respected), runs the LM once over all sentences of a batch (left
padded, after the BOS token) and gives each word the summed surprisal of the subword
tokens that end inside it, in bits. :func:`surprisal_check` compares, at the changed
words and at the word right after each, the perturbed sentence's surprisal with the
original's: a word that does not fit its slot surprises the LM there, and a word that
breaks the construction surprises it at the next word ("the growing pushing *to*").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from brittle.search.validity.records import ChangedWord, Check

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.engine.core.sentence import Sentence, Token
    from brittle.search.generators.lm import LoadedLM

__all__ = [
    "MAX_NEXT_INCREASE",
    "MAX_WORD_INCREASE",
    "continuations",
    "sentence_text",
    "surprisal_check",
    "word_surprisals",
]

#: Largest increase of surprisal at a changed word, bits. On the first 142 pairs read
#: for docs/validity.md a rare but well-formed content word costs up to 23 bits ("treaty" ->
#: "cockpit" 22.8, "proof" -> "carver" 22.0), so the word's own surprisal says little
#: about grammar; the bound only catches what no English word costs.
MAX_WORD_INCREASE = 24.0
#: Largest increase of surprisal at the word after a changed word, bits. A substitute
#: that breaks its construction makes the next word surprising: on the first 142 pairs read
#: for docs/validity.md the ungrammatical ones reach 8.0-18.3 ("insisted" -> "shipped that"
#: 8.0, "pointed" -> "referred out" 18.3) while well-formed ones stay below 6.5 once a
#: modifier's own head is left out (see :func:`surprisal_check`).
MAX_NEXT_INCREASE = 7.5
#: Relations of a modifier whose head, when it is a common noun right after it, is left
#: out of the next-word measure: the head noun's surprisal follows the collocation
#: ("money maker" -> "tax maker" +11.4 bits) rather than the grammar. The parts of a
#: name stay in ("United States" -> "West States").
_COLLOCATION = frozenset({"compound", "amod", "nmod:poss", "flat"})


def sentence_text(sentence: Sentence) -> tuple[str, list[tuple[int, int]]]:
    """The text the LM reads and each word's character span ``[start, end)`` in it: the
    words joined by a space unless the word's MISC says ``SpaceAfter=No``."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    words = sentence.words
    for k, tok in enumerate(words):
        spans.append((at, at + len(tok.form)))
        parts.append(tok.form)
        at += len(tok.form)
        if k < len(words) - 1 and "SpaceAfter=No" not in tok.misc:
            parts.append(" ")
            at += 1
    return "".join(parts), spans


def word_surprisals(
    lm: LoadedLM,
    sentences: Sequence[Sentence],
    *,
    upto: Sequence[int] | None = None,
    batch_size: int = 16,
) -> list[NDArray[np.float64]]:
    """Per sentence, float64 (n_words,): each word's surprisal in bits, the sum of
    ``-log2 P(token | left context)`` over the tokens whose last character lies in the
    word (a token spanning a space counts for the word it ends in).

    ``upto`` gives, per sentence, the last word (0-based) whose surprisal is needed: the
    LM reads the text only that far (a word's surprisal depends on its left context
    alone), and later words get 0.
    """
    import torch

    tok = lm.tokenizer
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    pad = next((int(v) for v in (tok.pad_token_id, tok.eos_token_id, start) if v is not None), 0)
    encoded: list[tuple[list[int], list[int]]] = []
    for k, s in enumerate(sentences):
        text, spans = sentence_text(s)
        if upto is not None and 0 <= upto[k] < len(spans) - 1:
            text = text[: spans[upto[k]][1]]
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        owner: list[int] = []
        for _, end in enc["offset_mapping"]:
            last = max(end - 1, 0)
            owner.append(next((k for k, (a, b) in enumerate(spans) if a <= last < b), -1))
        row = ([int(start)] if start is not None else []) + list(enc["input_ids"])
        encoded.append((row, owner))
    out: list[NDArray[np.float64]] = [np.zeros(len(s), dtype=np.float64) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda k: -len(encoded[k][0]))
    for b0 in range(0, len(order), batch_size):
        chunk = order[b0 : b0 + batch_size]
        width = max(len(encoded[k][0]) for k in chunk)
        ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, k in enumerate(chunk):
            tokens = encoded[k][0]
            ids[r, width - len(tokens) :] = torch.tensor(tokens, dtype=torch.long)
            mask[r, width - len(tokens) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            logits = lm.model(
                input_ids=ids.to(lm.device),
                attention_mask=mask.to(lm.device),
                position_ids=positions.to(lm.device),
            ).logits
            logp = logits[:, :-1, :].float().log_softmax(-1).cpu()
        picked = logp.gather(2, ids[:, 1:, None])[:, :, 0].double().numpy()
        for r, k in enumerate(chunk):
            owner = encoded[k][1]
            n_tokens = len(owner)
            # the scores of the text's tokens are the last n_tokens columns
            bits = -picked[r, width - 1 - n_tokens :] / math.log(2.0)
            for t, word in enumerate(owner):
                if word >= 0:
                    out[k][word] += bits[t]
    return out


def continuations(original: Sentence, index: int) -> list[int]:
    """Where the construction of the word at ``index`` continues: the next word (unless
    it is the common noun the word modifies) and the first word of each dependent's
    subtree to the right (where its arguments begin: "waving the government *of* ...").
    0-based, ascending."""
    words = original.words
    heads = original.heads
    out: set[int] = set()
    if index + 1 < len(words) and not _collocation(words, index):
        out.add(index + 1)
    for j in range(index + 2, len(words)):
        if int(heads[j]) == index + 1:
            out.add(_subtree_start(heads, j))
    return sorted(out)


def _subtree_start(heads: NDArray[np.int32], j: int) -> int:
    """The leftmost word of the subtree of word ``j`` (0-based; ``heads`` 1-based)."""
    inside = {j}
    grew = True
    while grew:
        grew = False
        for x in range(len(heads)):
            if x not in inside and int(heads[x]) - 1 in inside:
                inside.add(x)
                grew = True
    return min(inside)


def _collocation(words: Sequence[Token], index: int) -> bool:
    """Whether the word at ``index`` modifies the common noun right after it."""
    tok = words[index]
    return (
        tok.deprel in _COLLOCATION
        and tok.head == str(index + 2)
        and index + 1 < len(words)
        and words[index + 1].upos == "NOUN"
    )


def surprisal_check(
    original: Sentence,
    changed: Sequence[ChangedWord],
    original_bits: NDArray[np.float64],
    perturbed_bits: NDArray[np.float64],
) -> Check:
    """The surprisal increase (perturbed minus original, bits) at each changed word and
    where its construction continues (:func:`continuations`); fails above
    :data:`MAX_WORD_INCREASE` at a changed word or :data:`MAX_NEXT_INCREASE` at a
    continuation (the worst counts).

    Value: ``(worst increase at a changed word, worst increase at the next word)``.
    """
    at = [float(perturbed_bits[w.index] - original_bits[w.index]) for w in changed]
    indices = {w.index for w in changed}
    after = sorted({j for w in changed for j in continuations(original, w.index)} - indices)
    nxt = [float(perturbed_bits[j] - original_bits[j]) for j in after]
    worst_at = max(at, default=0.0)
    worst_next = max(nxt, default=0.0)
    bad: list[str] = []
    if worst_at > MAX_WORD_INCREASE:
        bad.append(f"changed word +{worst_at:.1f} bits")
    if worst_next > MAX_NEXT_INCREASE:
        bad.append(f"continuation +{worst_next:.1f} bits")
    return Check(
        name="surprisal",
        level="grammatical",
        measured="causal LM surprisal increase in bits at the changed word and at the "
        "next word and the start of each right dependent (worst of each)",
        value=(worst_at, worst_next),
        threshold=(MAX_WORD_INCREASE, MAX_NEXT_INCREASE),
        passed=not bad,
        failed=None if not bad else "; ".join(bad),
    )
