"""Per-word surprisal under a causal LM, and the check of its increase at a substitution.

:func:`word_surprisals` reads each sentence as its words joined by single spaces
(``SpaceAfter=No`` respected), runs the LM once over all sentences of a batch (left
padded, after the BOS token) and gives each word the summed surprisal of the subword
tokens that end inside it, in bits. :func:`pair_surprisals` gives the same numbers for
(original, perturbed) pairs at a fraction of the cost: each original is read once, a
perturbed sentence only from its first changed token (on the original's key/value
cache) to the last word wanted, and the vocabulary's logits only at the wanted words.
:func:`surprisal_check` compares the perturbed sentence's surprisal with the original's
where the changed words' constructions continue (:func:`continuations`): a word that
breaks its construction surprises the LM at the function word that continues it
("come *across*" -> "attested across"), or makes the class of the content word that
continues it unlikely ("let me *say*" -> "confirm me say"); the content word itself,
and the changed word, measure the collocation ("to ally *bias*") and are not judged.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from brittle.search.validity.records import ChangedWord, Check

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray
    from torch import nn
    from transformers import PreTrainedTokenizerBase
    from transformers.cache_utils import Cache

    from brittle.engine.core.sentence import Sentence, Token
    from brittle.search.generators.lexicon import PosLexicon
    from brittle.search.generators.lm import LoadedLM

__all__ = [
    "MAX_CLASS_INCREASE",
    "MAX_NEXT_INCREASE",
    "OPEN_CLASSES",
    "SURPRISAL_MEASURED",
    "class_tokens",
    "continuation_classes",
    "continuations",
    "pair_surprisals",
    "reading_end",
    "sentence_text",
    "surprisal_check",
    "word_surprisals",
]

#: Largest increase of surprisal at a function word or a name where a changed word's
#: construction continues, bits. A substitute that breaks its construction makes the
#: word that continues it surprising: on the pairs read for docs/validity.md the broken
#: ones reach 7.8-17.9 ("told Clinton *he*" -> "said Clinton he" 7.8, "come *across*" ->
#: "attested across" 13.6, "United *States*" -> "Duplex States" 17.9) while the
#: well-formed ones stay below 7.5 but for two ("shoulders *a*" 9.4, "rife with" ->
#: "persistent *with*" 7.2).
MAX_NEXT_INCREASE = 7.5
#: Largest increase of the surprisal of a content word's class where a changed word's
#: construction continues, bits (the class's probability at the word's first token,
#: :func:`continuation_classes`). Calibrated on the pairs read for docs/validity.md: the
#: well-formed reach 2.6 ("described *above*" -> "disadvantaged above"), the broken
#: 4.1 and 5.6 ("let me *say*" -> "confirm me say", "too *nice*" -> "enough nice"). The
#: word itself would measure the collocation: "to reduce *bias*" -> "to ally bias" costs
#: 13.5 bits at *bias*, its class 0.1.
MAX_CLASS_INCREASE = 4.0
#: What the surprisal check measures.
SURPRISAL_MEASURED = (
    "causal LM surprisal increase in bits where the changed words' constructions "
    "continue (the next word and the start of each right dependent): of a function "
    "word or name itself, of a content word's class (worst of each)"
)
#: Relations of a modifier whose head, when it is a common noun right after it, is left
#: out of the next-word measure: the head noun's surprisal follows the collocation
#: ("money maker" -> "tax maker" +11.4 bits) rather than the grammar. The parts of a
#: name stay in ("United States" -> "West States").
_COLLOCATION = frozenset({"compound", "amod", "nmod:poss", "flat"})
#: Relations of dependents a word does not select, whose start is no continuation of
#: its construction: punctuation, a conjunct and its conjunction, a parataxis... (a
#: root verb's closing full stop, twenty words on, says nothing of the verb). Leaving
#: them out changed no grade of the pairs read for docs/validity.md and halved the
#: words the LM reads after a change.
_PERIPHERAL = frozenset(
    {"punct", "conj", "cc", "parataxis", "discourse", "vocative", "appos", "dep",
     "reparandum", "orphan", "list"}
)  # fmt: skip


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


def _start_token(tokenizer: PreTrainedTokenizerBase) -> int:
    """The token every text is read after: BOS, else EOS."""
    for value in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if value is not None:
            return int(value)
    raise ValueError("the tokenizer has neither BOS nor EOS: a first word cannot be scored")


def _pad_token(tokenizer: PreTrainedTokenizerBase) -> int:
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.bos_token_id):
        if value is not None:
            return int(value)
    return 0


def reading_end(sentence: Sentence, index: int) -> int:
    """The last word the LM must read for the words up to ``index`` (0-based) to be
    scored as in the whole sentence: ``index``, or further while a word is written
    without a space after it (a token may span "ca|n't", and counts for the word it
    ends in)."""
    words = sentence.words
    end = max(index, 0)
    while end < len(words) - 1 and words[end].no_space_after:
        end += 1
    return end


def _encode(
    tokenizer: PreTrainedTokenizerBase, sentence: Sentence, upto: int | None, start: int
) -> tuple[list[int], list[int]]:
    """Token ids of the sentence's text, read up to the end of word ``upto`` (``None``:
    all of it), after the ``start`` token; and per text token the word (0-based) whose
    span holds the token's last character (-1: none, a space)."""
    text, spans = sentence_text(sentence)
    if upto is not None and 0 <= upto < len(spans) - 1:
        text = text[: spans[upto][1]]
    word_at = np.full(len(text) + 1, -1, dtype=np.int64)
    for k, (a, b) in enumerate(spans):
        word_at[a : min(b, len(text))] = k
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    owner = [int(word_at[min(max(end - 1, 0), len(text))]) for _, end in enc["offset_mapping"]]
    return [start, *(int(i) for i in enc["input_ids"])], owner


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
    alone), and later words get 0. The plain computation, every sentence read whole
    from its first token; :func:`pair_surprisals` scores pairs with shared prefixes
    for less.
    """
    import torch

    tok = lm.tokenizer
    start = _start_token(tok)
    pad = _pad_token(tok)
    encoded = [
        _encode(tok, s, None if upto is None else upto[k], start) for k, s in enumerate(sentences)
    ]
    out: list[NDArray[np.float64]] = [np.zeros(len(s), dtype=np.float64) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda k: -len(encoded[k][0]))
    for b0 in range(0, len(order), batch_size):
        chunk = order[b0 : b0 + batch_size]
        ids, mask, positions = _left_padded([encoded[k][0] for k in chunk], pad)
        width = ids.shape[1]
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


def _left_padded(
    rows: Sequence[Sequence[int]], pad: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``input_ids``, ``attention_mask``, ``position_ids`` of rows padded on the left:
    long tensors (B, L); a row's first token has position 0."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for b, row in enumerate(rows):
        ids[b, width - len(row) :] = torch.tensor(list(row), dtype=torch.long)
        mask[b, width - len(row) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids, mask, positions


#: Per loaded model, whether its logits are its head applied to its body's output.
_SPLIT_CHECKED: weakref.WeakKeyDictionary[nn.Module, bool] = weakref.WeakKeyDictionary()


class _Split:
    """The LM as a body (the transformer, giving the last hidden state and the key/value
    cache) and a head (hidden state to logits), so logits are computed only where a
    score is read. A model whose logits are not its output embedding applied to the
    body's last hidden state (checked once on a short input) runs whole: its "hidden
    state" is then the logits, and the head is the identity."""

    def __init__(self, lm: LoadedLM, start: int) -> None:
        import torch

        model = lm.model
        self.model = model
        # nn.Module's __getattr__ types every attribute as a Tensor or Module
        has_head = hasattr(model, "get_output_embeddings")
        head = model.get_output_embeddings() if has_head else None  # type: ignore[operator]
        body = getattr(model, "base_model", None)
        split = _SPLIT_CHECKED.get(model)
        if split is None:
            split = False
            if head is not None and body is not None and body is not model:
                ids = torch.tensor([[start, start]], device=lm.device)
                with torch.inference_mode():
                    whole = model(input_ids=ids).logits.float()
                    parts = head(body(input_ids=ids).last_hidden_state).float()
                split = parts.shape == whole.shape and bool(
                    torch.allclose(parts, whole, atol=1e-4, rtol=1e-4)
                )
            _SPLIT_CHECKED[model] = split
        self.split: bool = split
        self.body: Callable[..., Any] = body if split and body is not None else model
        self.head: Callable[[torch.Tensor], torch.Tensor] | None = head if split else None

    def run(self, **inputs: object) -> tuple[torch.Tensor, Cache]:
        """The last hidden states (B, L, d) (the logits when not split) and the cache."""
        out = self.body(**inputs, use_cache=True)
        features = out.last_hidden_state if self.split else out.logits
        return features, out.past_key_values

    def logprobs(
        self,
        features: torch.Tensor,
        targets: Sequence[int | str],
        classes: Mapping[str, torch.Tensor],
    ) -> list[float]:
        """Per row of ``features`` (N, d): ``log P(target | position)`` of a token id, or
        for a class name, the log of the probability mass of the class's tokens
        (``classes``: the token ids of each class)."""
        import torch

        logits = features if self.head is None else self.head(features)
        logp = logits.float().log_softmax(-1)
        out: list[float] = []
        for row, target in zip(logp, targets, strict=True):
            if isinstance(target, str):
                out.append(float(torch.logsumexp(row[classes[target]], 0)))
            else:
                out.append(float(row[target]))
        return out


#: Most rows of one forward pass of :func:`pair_surprisals`, and the padding it accepts:
#: a batch (rows sorted by length) closes before its padding would exceed this share of
#: its real tokens and :data:`PAIR_BATCH_PADDING` tokens both. On CPU, padding costs as
#: much as the tokens, and each forward pass about as much as a dozen tokens of its own
#: (30 layers of small operations); a perturbation's tokens after its change vary from
#: 1 to the whole sentence.
PAIR_BATCH_ROWS = 16
PAIR_BATCH_SLACK = 0.25
PAIR_BATCH_PADDING = 16
#: Distinct originals whose key/value caches :func:`pair_surprisals` keeps at once.
PAIR_GROUP = 64

#: Open word classes whose continuations are judged by class (:func:`continuation_classes`).
OPEN_CLASSES: tuple[str, ...] = ("NOUN", "VERB", "ADJ", "ADV")
#: Per loaded LM, the token ids of each open class (:func:`class_tokens`).
_CLASS_TOKENS: weakref.WeakKeyDictionary[LoadedLM, dict[str, NDArray[np.int64]]] = (
    weakref.WeakKeyDictionary()
)


def class_tokens(lm: LoadedLM, lexicon: PosLexicon) -> dict[str, NDArray[np.int64]]:
    """Per open class (:data:`OPEN_CLASSES`), the ids of the LM's tokens that begin a
    word (a space, then letters) the lexicon knows in that class: the class's
    probability at a position is their summed probability. Built once per LM."""
    hit = _CLASS_TOKENS.get(lm)
    if hit is not None:
        return hit
    starts = np.nonzero(lm.pieces.word_starts)[0]
    members: dict[str, list[int]] = {c: [] for c in OPEN_CLASSES}
    for v in starts:
        tags = lexicon.upos(lm.pieces.text[int(v)])
        for c in OPEN_CLASSES:
            if c in tags:
                members[c].append(int(v))
    out = {c: np.asarray(ids, dtype=np.int64) for c, ids in members.items()}
    _CLASS_TOKENS[lm] = out
    return out


def _batches(lengths: Sequence[int], rows: int, slack: float) -> list[list[int]]:
    """Indices of ``lengths`` in batches: longest first, at most ``rows`` a batch, and a
    batch's padding (rows x its longest, less its tokens) at most ``slack`` times its
    tokens or :data:`PAIR_BATCH_PADDING` tokens, whichever is more."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    out: list[list[int]] = []
    for i in order:
        batch = out[-1] if out else None
        if batch is not None and len(batch) < rows:
            longest = lengths[batch[0]]
            tokens = sum(lengths[j] for j in batch) + lengths[i]
            padding = longest * (len(batch) + 1) - tokens
            if padding <= max(slack * tokens, PAIR_BATCH_PADDING):
                batch.append(i)
                continue
        out.append([i])
    return out


def _targets(
    ids: Sequence[int], owner: Sequence[int], words: Collection[int], classes: Mapping[int, str]
) -> dict[int, int | str]:
    """What is scored of a sentence, by token index (start token 0): each token of a
    wanted word (its id), and for a word judged by class, only its first token (the
    class's name)."""
    out: dict[int, int | str] = {}
    for t, word in enumerate(owner):
        if word < 0 or word not in words:
            continue
        if word in classes:
            if t == 0 or owner[t - 1] != word:
                out[t + 1] = classes[word]
        else:
            out[t + 1] = ids[t + 1]
    return out


@dataclass
class _Pair:
    """One perturbed sentence to score on its original's prefix.

    Attributes:
        original: index of its original among the distinct ones.
        ids, owner: its tokens (start token first) and each text token's word.
        targets: what is scored of it (:func:`_targets`), by token index.
        prefix: tokens it shares with its original from the start (at least 1).
        feed: the tokens the model reads for it: from the first changed one to the one
            before the last scored token (their outputs predict the tokens after).
    """

    original: int
    ids: list[int]
    owner: list[int]
    targets: dict[int, int | str]
    prefix: int
    feed: list[int]


def pair_surprisals(
    lm: LoadedLM,
    originals: Sequence[Sentence],
    perturbed: Sequence[Sentence],
    *,
    upto: Sequence[int],
    wanted: Sequence[Collection[int]] | None = None,
    classes: Sequence[Mapping[int, str]] | None = None,
    tokens_of: Mapping[str, NDArray[np.int64]] | None = None,
    batch_size: int = PAIR_BATCH_ROWS,
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """Per pair ``k``, the per-word surprisal in bits (as :func:`word_surprisals`) of
    ``originals[k]`` and of ``perturbed[k]``, read up to word ``upto[k]``, at the words
    ``wanted[k]`` (0-based; ``None``: every word up to ``upto[k]``); other words get 0.
    A word ``j`` in ``classes[k]`` gets instead the surprisal of its class at its first
    token, ``-log2`` of the probability of the tokens ``tokens_of[classes[k][j]]``
    (:func:`class_tokens`).

    The same numbers as reading each sentence whole (up to float noise), for less:

    - each distinct original is read once, however many perturbations it has, and only
      as far as a score of it or of its perturbations needs;
    - a perturbed sentence is read only from its first token that differs from its
      original's, on the original's key/value cache for the shared prefix (the tokens
      before it have the original's scores, and the first changed token is predicted
      by the original's state before it), up to its last wanted token;
    - the LM's head (hidden state to the vocabulary's logits) runs only at the tokens
      scored;
    - rows go through the model in batches of similar length (:func:`_batches`).
    """
    import torch

    if not (len(originals) == len(perturbed) == len(upto)):
        raise ValueError(
            f"{len(originals)} originals, {len(perturbed)} perturbed, {len(upto)} upto"
        )
    if classes is not None and tokens_of is None:
        raise ValueError("classes need tokens_of, the token ids of each class")
    tok = lm.tokenizer
    start = _start_token(tok)
    model = _Split(lm, start)
    class_ids = {c: torch.as_tensor(v, device=lm.device) for c, v in (tokens_of or {}).items()}
    out_o = [np.zeros(len(s), dtype=np.float64) for s in originals]
    out_p = [np.zeros(len(s), dtype=np.float64) for s in perturbed]
    groups: dict[str, list[int]] = {}
    for k, o in enumerate(originals):
        groups.setdefault(sentence_text(o)[0], []).append(k)
    members = list(groups.values())
    for g0 in range(0, len(members), PAIR_GROUP):
        part = members[g0 : g0 + PAIR_GROUP]
        ends = [max(reading_end(originals[k], upto[k]) for k in ks) for ks in part]
        enc_o = [
            _encode(tok, originals[ks[0]], end, start) for ks, end in zip(part, ends, strict=True)
        ]
        pairs: dict[int, _Pair] = {}
        wants: dict[int, dict[int, int | str]] = {}
        for g, (ks, end) in enumerate(zip(part, ends, strict=True)):
            ids_o, owner_o = enc_o[g]
            for k in ks:
                words = range(upto[k] + 1) if wanted is None else frozenset(wanted[k])
                named = {} if classes is None else classes[k]
                wants[k] = _targets(ids_o, owner_o, words, named)
                ids, owner = _encode(tok, perturbed[k], end, start)
                targets = _targets(ids, owner, words, named)
                prefix = 1
                while prefix < min(len(ids), len(ids_o)) and ids[prefix] == ids_o[prefix]:
                    prefix += 1
                last = max(targets, default=0)
                pairs[k] = _Pair(g, ids, owner, targets, prefix, ids[prefix:last])
        scores = _score_originals(model, lm, part, enc_o, pairs, wants, class_ids)
        for k, pair in pairs.items():
            for t, target in wants[k].items():
                word = enc_o[pair.original][1][t - 1]
                out_o[k][word] += -scores.logp[(pair.original, t, target)] / math.log(2.0)
            for t, target in pair.targets.items():
                if t < pair.prefix:  # the original's token in the original's context
                    word = pair.owner[t - 1]
                    out_p[k][word] += -scores.logp[(pair.original, t, target)] / math.log(2.0)
        _score_perturbed(model, lm, pairs, scores, class_ids, out_p, batch_size)
    return out_o, out_p


@dataclass
class _Originals:
    """What :func:`_score_originals` gives: the originals' log-probabilities by
    ``(original, token index, target)``; per original, its key/value cache of the shared
    prefixes (per layer, keys and values (1, heads, positions, d)); per pair, the
    log-probability of its first changed token (when it is scored)."""

    logp: dict[tuple[int, int, int | str], float]
    caches: dict[int, list[tuple[torch.Tensor, torch.Tensor]]]
    first: dict[int, float]


def _score_originals(
    model: _Split,
    lm: LoadedLM,
    part: Sequence[Sequence[int]],
    enc_o: Sequence[tuple[list[int], list[int]]],
    pairs: dict[int, _Pair],
    wants: dict[int, dict[int, int | str]],
    class_ids: Mapping[str, torch.Tensor],
) -> _Originals:
    """Run the distinct originals ``part`` (each, the pairs of one original) as far as
    needed, and score what is read off them: their own targets (``wants``, by pair), the
    perturbations' targets before their change, and each perturbation's first changed
    token (predicted by the original's state before it); keep the key/value cache of
    the prefixes the perturbations read on."""
    import torch

    dev = lm.device
    need: list[dict[int, set[int | str]]] = [{} for _ in part]  # token -> targets
    first: dict[int, tuple[int, int | str]] = {}  # pair -> (token, target)
    keep = [0 for _ in part]  # cache positions the perturbations read on
    for k, pair in pairs.items():
        g = pair.original
        for t, target in wants[k].items():
            need[g].setdefault(t, set()).add(target)
        for t, target in pair.targets.items():
            if t < pair.prefix:
                need[g].setdefault(t, set()).add(target)
        if pair.prefix in pair.targets:
            first[k] = (pair.prefix, pair.targets[pair.prefix])
        if pair.feed:
            keep[g] = max(keep[g], pair.prefix)
    # an original runs up to the token before the last one scored or read on
    reach = [max([*need[g], keep[g]], default=0) for g in range(len(part))]
    for k, (t, _) in first.items():
        reach[pairs[k].original] = max(reach[pairs[k].original], t)
    feeds = [enc_o[g][0][: reach[g]] for g in range(len(part))]
    out = _Originals({}, {}, {})
    run = [g for g in range(len(part)) if feeds[g]]
    for batch in _batches([len(feeds[g]) for g in run], PAIR_BATCH_ROWS, PAIR_BATCH_SLACK):
        rows = [run[i] for i in batch]
        ids, mask, positions = _left_padded([feeds[g] for g in rows], _pad_token(lm.tokenizer))
        width = ids.shape[1]
        with torch.inference_mode():
            hidden, cache = model.run(
                input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=positions.to(dev)
            )
            feats: list[torch.Tensor] = []
            targets: list[int | str] = []
            keys: list[tuple[int, int, int | str] | int] = []
            for r, g in enumerate(rows):
                pad = width - len(feeds[g])
                if keep[g]:
                    caches = _cache_tensors(cache)
                    out.caches[g] = [
                        (key[r : r + 1, :, pad : pad + keep[g]].clone(),
                         value[r : r + 1, :, pad : pad + keep[g]].clone())
                        for key, value in caches
                    ]  # fmt: skip
                for t in sorted(need[g]):
                    for target in need[g][t]:
                        feats.append(hidden[r, pad + t - 1])
                        targets.append(target)
                        keys.append((g, t, target))
                for k in part[g]:
                    if k in first:
                        t, target = first[k]
                        feats.append(hidden[r, pad + t - 1])
                        targets.append(target)
                        keys.append(k)
            if feats:
                scores = model.logprobs(torch.stack(feats), targets, class_ids)
                for key, lp in zip(keys, scores, strict=True):
                    if isinstance(key, tuple):
                        out.logp[key] = lp
                    else:
                        out.first[key] = lp
    return out


def _cache_tensors(cache: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per layer, the keys and values (batch, heads, positions, d) of a key/value cache:
    ``transformers``' ``DynamicCache`` (its ``layers``, or the older ``key_cache`` and
    ``value_cache``) or the legacy tuple of pairs."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "key_cache"):
        return list(zip(cache.key_cache, cache.value_cache, strict=True))
    return [(key, value) for key, value, *_ in cache]


def _score_perturbed(
    model: _Split,
    lm: LoadedLM,
    pairs: dict[int, _Pair],
    originals: _Originals,
    class_ids: Mapping[str, torch.Tensor],
    out_p: list[NDArray[np.float64]],
    batch_size: int,
) -> None:
    """Score the perturbed sentences' targets from the first changed token on into
    ``out_p``: the first from the original's state before it, the rest by reading the
    changed tokens on the original's cache of the shared prefix (left padded to the
    longest prefix of the batch)."""
    import torch
    from transformers.cache_utils import DynamicCache

    dev = lm.device
    for k, lp in originals.first.items():
        pair = pairs[k]
        out_p[k][pair.owner[pair.prefix - 1]] += -lp / math.log(2.0)
    run = [k for k, pair in pairs.items() if pair.feed]
    pad_id = _pad_token(lm.tokenizer)
    for batch in _batches([len(pairs[k].feed) for k in run], batch_size, PAIR_BATCH_SLACK):
        rows = [pairs[run[i]] for i in batch]
        past = max(p.prefix for p in rows)
        length = max(len(p.feed) for p in rows)
        ids = torch.full((len(rows), length), pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), past + length), dtype=torch.long)
        positions = torch.zeros((len(rows), length), dtype=torch.long)
        for r, p in enumerate(rows):
            ids[r, : len(p.feed)] = torch.tensor(p.feed, dtype=torch.long)
            mask[r, past - p.prefix : past + len(p.feed)] = 1
            positions[r] = p.prefix + torch.arange(length)
        with torch.inference_mode():
            try:
                cache = DynamicCache(config=getattr(lm.model, "config", None))
            except TypeError:  # transformers before 4.56: the cache takes no config
                cache = DynamicCache()
            layers = [originals.caches[p.original] for p in rows]
            for i in range(len(layers[0])):
                parts_k, parts_v = [], []
                for p, layer in zip(rows, layers, strict=True):
                    key, value = layer[i]
                    key, value = key[:, :, : p.prefix], value[:, :, : p.prefix]
                    fill = past - p.prefix
                    parts_k.append(torch.nn.functional.pad(key, (0, 0, fill, 0)))
                    parts_v.append(torch.nn.functional.pad(value, (0, 0, fill, 0)))
                cache.update(torch.cat(parts_k), torch.cat(parts_v), i)
            hidden, _ = model.run(
                input_ids=ids.to(dev),
                attention_mask=mask.to(dev),
                position_ids=positions.to(dev),
                past_key_values=cache,
            )
            feats: list[torch.Tensor] = []
            targets: list[int | str] = []
            owners: list[tuple[int, int]] = []
            for r, (i, p) in enumerate(zip(batch, rows, strict=True)):
                for t, target in p.targets.items():
                    if t > p.prefix:
                        feats.append(hidden[r, t - p.prefix - 1])
                        targets.append(target)
                        owners.append((run[i], p.owner[t - 1]))
            if feats:
                scores = model.logprobs(torch.stack(feats), targets, class_ids)
                for (k, word), lp in zip(owners, scores, strict=True):
                    out_p[k][word] += -lp / math.log(2.0)


def continuations(original: Sentence, index: int) -> list[int]:
    """Where the construction of the word at ``index`` continues: the next word (unless
    it is the common noun the word modifies) and the first word of each dependent's
    subtree to the right (where its arguments begin: "waving the government *of* ..."),
    but for dependents the word does not select (:data:`_PERIPHERAL`: punctuation,
    conjuncts, parataxis...). 0-based, ascending.

    None for a common noun: what follows a noun is a modifier any noun takes ("the
    referendum *of* discrimination experiences", "those captures *who* indicated") or
    the rest of its clause, whose agreement with the noun is the agreement check's; the
    LM's surprise there is at the collocation, not at the grammar (on the pairs read
    for docs/validity.md it failed three well-formed sentences and caught one broken
    idiom, "in connection with" -> "in case with").
    """
    words = original.words
    if words[index].upos == "NOUN":
        return []
    heads = original.heads
    out: set[int] = set()
    if index + 1 < len(words) and not _collocation(words, index):
        out.add(index + 1)
    for j in range(index + 2, len(words)):
        if int(heads[j]) == index + 1 and words[j].deprel.split(":")[0] not in _PERIPHERAL:
            out.add(_subtree_start(heads, j))
    return sorted(out)


def continuation_classes(original: Sentence, indices: Collection[int]) -> dict[int, str]:
    """The words among ``indices`` judged by their class rather than as themselves: a
    content word (gold UPOS in :data:`OPEN_CLASSES`, written with letters) continues a
    construction as well as any word of its class would ("to ally *bias*" is a
    transitive verb's object all the same), while a function word (preposition,
    particle, pronoun, determiner, punctuation) or a name is what the construction
    selects ("fond *of*" -> "feminine of", "United *States*" -> "Duplex States")."""
    words = original.words
    return {
        j: words[j].upos
        for j in indices
        if words[j].upos in OPEN_CLASSES and words[j].form[:1].isalpha()
    }


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
    """The surprisal increase (perturbed minus original, bits) where the constructions
    of the changed words continue (:func:`continuations`): at a function word or a name,
    of the word itself, which fails above :data:`MAX_NEXT_INCREASE`; at a content word,
    of its class (:func:`continuation_classes`; the bits are then the class's, as
    :func:`pair_surprisals` gives them), which fails above :data:`MAX_CLASS_INCREASE`.
    The worst of each counts. Unknown when no construction continues to the right.

    Value: ``(worst increase at a word, worst increase of a class)``.
    """
    indices = {w.index for w in changed}
    after = sorted({j for w in changed for j in continuations(original, w.index)} - indices)
    by_class = continuation_classes(original, after)
    words = [float(perturbed_bits[j] - original_bits[j]) for j in after if j not in by_class]
    kinds = [float(perturbed_bits[j] - original_bits[j]) for j in by_class]
    worst_word = max(words, default=0.0)
    worst_class = max(kinds, default=0.0)
    bad: list[str] = []
    if worst_word > MAX_NEXT_INCREASE:
        bad.append(f"continuation +{worst_word:.1f} bits")
    if worst_class > MAX_CLASS_INCREASE:
        bad.append(f"continuation's class +{worst_class:.1f} bits")
    return Check(
        name="surprisal",
        level="grammatical",
        measured=SURPRISAL_MEASURED,
        value=(worst_word, worst_class),
        threshold=(MAX_NEXT_INCREASE, MAX_CLASS_INCREASE),
        passed=None if not after else not bad,
        failed=None if not bad else "; ".join(bad),
    )
