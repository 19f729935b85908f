"""Word representations: the backend interface, its records and name resolution.

A backend turns a batch of word lists into one vector per word. Every backend is
batch-first and returns a :class:`FlatReps`: the vectors of all words of the batch,
for one or several layers, in one contiguous float32 array, plus the offsets that cut
it into sentences (so callers pay no per-sentence overhead unless they want lists).
One layer of many sentences, held flat, is a :class:`FlatVectors`.

Backends are classes registered in :data:`REPRESENTATIONS` (the ``representations``
kind); :func:`open_backend` resolves a name and calls the class's
:meth:`RepresentationBackend.open`. The built-in ones live in their own modules, which
import this one (never the other way round) and are found through the registry's
``packages``:

- ``transformer``: hidden layers of a Hugging Face encoder or decoder
  (:mod:`brittle.scorers.transformer_backend`);
- ``static``: GloVe or any word2vec/GloVe/gensim file (:mod:`brittle.scorers.static_backend`);
- ``static-pos``: static vectors with the bundled encoder's position embeddings
  appended (``glove+pos``), the Fast+Pos control (:mod:`brittle.scorers.static_backend`);
- ``random``: a fixed random vector per word type, the control
  (:mod:`brittle.scorers.static_backend`).

Layers: a model with ``L`` layers has ``L + 1`` hidden states, index 0 being the
embedding output and ``L`` the last layer; negative indices count from the output
(-1 is the last layer, -(L + 1) the embeddings). Static backends have one "layer",
0 (or -1).
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.registry import Registry

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray

__all__ = [
    "DTYPES",
    "REPRESENTATIONS",
    "BackendOptions",
    "BackendRequest",
    "EffectsRequest",
    "FlatReps",
    "FlatVectors",
    "OOVReport",
    "RepresentationBackend",
    "RepresentationKey",
    "WordLoss",
    "backend_for",
    "check_device",
    "check_dtype",
    "guess_backend",
    "native_bfloat16",
    "needs_gpu",
    "normalise_layer",
    "offsets_of",
    "open_backend",
    "pick_device",
    "reopen_backend",
    "torch_dtype",
]

#: The words of one sentence (CoNLL-U word forms).
Words = Sequence[str]

#: A differentiable loss of one sentence's word vectors: one torch tensor (n, dim) per
#: layer asked for, in order, to a scalar tensor.
WordLoss: TypeAlias = "Callable[[list[torch.Tensor]], torch.Tensor]"


@dataclass(frozen=True)
class EffectsRequest:
    """One sentence's question to :meth:`RepresentationBackend.substitution_effects_many`.

    Attributes:
        words: the sentence's words.
        loss: its loss of its word vectors (:data:`WordLoss`).
        options: (0-based word position, replacement forms) pairs.
    """

    words: Words
    loss: WordLoss
    options: Sequence[tuple[int, Sequence[str]]]


#: What reopens a backend (``RepresentationBackend.describe()``), JSON-ready.
BackendOptions: TypeAlias = dict[str, str | int | bool | None]


def normalise_layer(layer: int, n_layers: int, *, model: str) -> int:
    """The hidden-state index (0..n_layers) of ``layer``; negative counts from the output.

    Raises:
        ConfigError: when the model has fewer layers than asked for.
    """
    index = layer + n_layers + 1 if layer < 0 else layer
    if not 0 <= index <= n_layers:
        raise ConfigError(
            f"layer {layer} does not exist in {model}: it has {n_layers} layer(s), so "
            f"layers run from {-(n_layers + 1)} to {n_layers} (-1 is the last, "
            f"0 and {-(n_layers + 1)} the embeddings)"
        )
    return index


@dataclass(frozen=True, slots=True)
class RepresentationKey:
    """What identifies a representation: backend, model, layer and pooling.

    Attributes:
        backend: registered backend name (``transformer``, ``static``, ``random``).
        model: the model as named by the user (hub id, directory, ``glove``, a file).
        layer: hidden-state index, 0..n_layers (0 for static vectors).
        pooling: subword pooling (``first``, ``mean``, ``last``; ``-`` for static).
        n_layers: layers of the model (0 for static vectors), kept to print ``layer``
            the way it was asked for.
    """

    backend: str
    model: str
    layer: int
    pooling: str
    n_layers: int = field(default=0, compare=False)

    @property
    def layer_from_output(self) -> int:
        """The layer counted from the output: -1 is the last layer."""
        return self.layer - self.n_layers - 1

    def describe(self) -> str:
        """One line for tables and messages, e.g. ``MiniLM layer -1 (mean)``."""
        if self.backend != "transformer":
            return f"{self.model} ({self.backend})"
        return f"{self.model} layer {self.layer_from_output} ({self.pooling} pooling)"

    def to_dict(self) -> dict[str, str | int]:
        """JSON-ready form."""
        return {
            "backend": self.backend,
            "model": self.model,
            "layer": self.layer,
            "layer_from_output": self.layer_from_output,
            "pooling": self.pooling,
            "n_layers": self.n_layers,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RepresentationKey:  # Any: decoded JSON
        """Inverse of :meth:`to_dict` (``data`` is read from JSON)."""
        return cls(
            backend=str(data["backend"]),
            model=str(data["model"]),
            layer=int(data["layer"]),
            pooling=str(data["pooling"]),
            n_layers=int(data.get("n_layers", 0)),
        )


def offsets_of(sentences: Sequence[Words]) -> NDArray[np.int64]:
    """Word offsets of a batch, shape (n_sentences + 1,), int64: sentence ``i`` owns
    words ``offsets[i]:offsets[i + 1]``."""
    out = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sentences], out=out[1:])
    return out


@dataclass(frozen=True)
class FlatVectors:
    """One vector per word of many sentences, all words in one array.

    The flat form every consumer of word vectors shares: a probe predicts from it, the
    disk cache maps it back, training data extends it with gold annotations.

    Attributes:
        vectors: shape (total_words, dim), float32 (a read-only memory map is fine).
        offsets: shape (n_sentences + 1,), int64; sentence ``i`` owns rows
            ``offsets[i]:offsets[i + 1]``.
    """

    vectors: NDArray[np.float32]
    offsets: NDArray[np.int64]

    @classmethod
    def stack(cls, arrays: Sequence[NDArray[np.float32]]) -> FlatVectors:
        """The flat form of one array (n_i, dim) per sentence (copied, as float32)."""
        lengths = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.concatenate([np.asarray(a, dtype=np.float32) for a in arrays], axis=0)
        return cls(flat, offsets)

    @classmethod
    def stack_sums(
        cls,
        parts: Sequence[tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]],
    ) -> FlatVectors:
        """The flat form of ``x + y - z`` for each ``(x, y, z)`` of ``parts`` (three
        arrays (n_i, dim) each), as float32: what :meth:`stack` gives of those sums.

        Hand-written for the hot loop of composing pairs of substitutions (tens of
        thousands of small sums a guided search): each sum is written in place into its
        rows of one array, with no temporary per part and no concatenation after (the
        same float32 operations in the same order, so the same bits).
        """
        lengths = np.fromiter((x.shape[0] for x, _, _ in parts), dtype=np.int64, count=len(parts))
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        dim = parts[0][0].shape[1] if parts else 0
        flat = np.empty((int(offsets[-1]), dim), dtype=np.float32)
        single = np.dtype(np.float32)
        bounds = zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
        for (x, y, z), (a, b) in zip(parts, bounds, strict=True):
            rows = flat[a:b]
            if x.dtype == y.dtype == z.dtype == single:
                np.add(x, y, out=rows)
                np.subtract(rows, z, out=rows)
            else:  # summed in their own precision, then rounded once, as stack does
                rows[...] = x + y - z
        return cls(flat, offsets)

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1

    @property
    def dim(self) -> int:
        """Vector size."""
        return int(self.vectors.shape[1])

    def sentence(self, i: int) -> NDArray[np.float32]:
        """Vectors of sentence ``i``, shape (n_i, dim) (a view)."""
        return self.vectors[self.offsets[i] : self.offsets[i + 1]]

    def split(self) -> list[NDArray[np.float32]]:
        """One array (n_i, dim) per sentence (views)."""
        return np.split(np.asarray(self.vectors), self.offsets[1:-1])


@dataclass(frozen=True)
class FlatReps:
    """Word vectors of a batch of sentences for one or several layers, all words in one
    array per layer.

    Attributes:
        vectors: shape (n_layers_asked, total_words, dim), float32.
        offsets: shape (n_sentences + 1,), int64; sentence ``i`` owns words
            ``offsets[i]:offsets[i + 1]``.
        layers: hidden-state index of each entry of the first axis.
    """

    vectors: NDArray[np.float32]
    offsets: NDArray[np.int64]
    layers: tuple[int, ...]

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def _pos(self, layer: int | None) -> int:
        if layer is None:
            if len(self.layers) != 1:
                raise ConfigError(f"several layers {self.layers}: name the one you want")
            return 0
        try:
            return self.layers.index(layer)
        except ValueError:
            raise ConfigError(f"layer {layer} was not extracted (have {self.layers})") from None

    def layer(self, layer: int | None = None) -> NDArray[np.float32]:
        """All words of one layer, shape (total_words, dim)."""
        return self.vectors[self._pos(layer)]

    def flat(self, layer: int | None = None) -> FlatVectors:
        """One layer as :class:`FlatVectors` (vectors (total_words, dim), a view)."""
        return FlatVectors(self.layer(layer), self.offsets)

    def sentence(self, i: int, layer: int | None = None) -> NDArray[np.float32]:
        """Vectors of sentence ``i``, shape (n_i, dim) (a view)."""
        return self.vectors[self._pos(layer), self.offsets[i] : self.offsets[i + 1]]

    def split(self, layer: int | None = None) -> list[NDArray[np.float32]]:
        """One array (n_i, dim) per sentence (views)."""
        return np.split(self.layer(layer), self.offsets[1:-1])


@dataclass(frozen=True, slots=True)
class OOVReport:
    """How many words a backend with a vocabulary could not find.

    Attributes:
        policy: ``zero`` or ``random``, and whether lowercase fallback was on.
        tokens: words looked up.
        oov_tokens: words not found (after the lowercase fallback).
        lowercased: words found only lowercased.
        oov_types: distinct unknown words.
    """

    policy: str
    tokens: int
    oov_tokens: int
    lowercased: int
    oov_types: int

    @property
    def oov_rate(self) -> float:
        """Share of looked-up words that were unknown."""
        return self.oov_tokens / self.tokens if self.tokens else 0.0

    def to_dict(self) -> dict[str, str | int | float]:
        """JSON-ready form."""
        return {
            "policy": self.policy,
            "tokens": self.tokens,
            "oov_tokens": self.oov_tokens,
            "lowercased": self.lowercased,
            "oov_types": self.oov_types,
            "oov_rate": self.oov_rate,
        }


class RepresentationBackend(abc.ABC):
    """Turns batches of word lists into one vector per word.

    The contract of the :data:`REPRESENTATIONS` registry. Subclasses implement
    :meth:`open` (build one from a :class:`BackendRequest`, which is how a name is
    opened) and :meth:`encode_flat`; :meth:`encode` and :meth:`encode_layers` are
    conveniences over it.
    """

    #: Registered name (a class attribute that registering the class in
    #: :data:`REPRESENTATIONS` sets; a wrapper such as ``CachedBackend`` sets its inner
    #: backend's per instance).
    name: str = ""

    def __init__(self, *, model: str, dim: int, n_layers: int, pooling: str) -> None:
        self.model = model
        self.dim = dim
        self.n_layers = n_layers
        self.pooling = pooling

    @classmethod
    @abc.abstractmethod
    def open(cls, request: BackendRequest) -> RepresentationBackend:
        """A backend of this class for ``request`` (the fields it understands)."""

    def layer_index(self, layer: int) -> int:
        """Hidden-state index of ``layer`` (see :func:`normalise_layer`)."""
        return normalise_layer(layer, self.n_layers, model=self.model)

    def key(self, layer: int) -> RepresentationKey:
        """The :class:`RepresentationKey` of ``layer`` of this backend."""
        return RepresentationKey(
            self.name, self.model, self.layer_index(layer), self.pooling, self.n_layers
        )

    @abc.abstractmethod
    def encode_flat(self, sentences: Sequence[Words], *, layers: Sequence[int]) -> FlatReps:
        """Vectors of every word for each layer in ``layers``.

        Args:
            sentences: word lists (CoNLL-U word forms), each non-empty.
            layers: layer numbers (negative from the output).

        Returns:
            A :class:`FlatReps` whose ``layers`` are the normalised indices: vectors
            (len(layers), total_words, dim).
        """

    def encode(self, sentences: Sequence[Words], *, layer: int = -1) -> list[NDArray[np.float32]]:
        """One float32 array (n_i, dim) per sentence for one layer."""
        return self.encode_flat(sentences, layers=(layer,)).split()

    def encode_layers(
        self, sentences: Sequence[Words], *, layers: Sequence[int]
    ) -> dict[int, list[NDArray[np.float32]]]:
        """Several layers in one pass: ``{layer as asked: [array (n_i, dim), ...]}``."""
        flat = self.encode_flat(sentences, layers=layers)
        return {asked: flat.split(idx) for asked, idx in zip(layers, flat.layers, strict=True)}

    def describe(self) -> BackendOptions:
        """Backend options needed to open the same backend again (JSON-ready)."""
        return {"backend": self.name, "model": self.model, "pooling": self.pooling}

    def substitution_effects(
        self,
        words: Words,
        *,
        layers: Sequence[int],
        loss: WordLoss,
        options: Sequence[tuple[int, Sequence[str]]],
    ) -> list[NDArray[np.float64]] | None:
        """First-order estimates of how much ``loss`` rises when one word is replaced.

        ``loss`` maps the sentence's word vectors of each layer in ``layers`` (torch
        tensors (n, dim), in that order) to a scalar; ``options`` pairs a 0-based word
        position with replacement forms. The answer has one float64 array per pair,
        shape (len(forms),): the loss's gradient with respect to the model's input
        embeddings dotted with the change of embedding each replacement makes (one
        forward and one backward pass for the whole sentence). ``None``: this backend
        has no input gradient (static vectors, which the base class stands for).
        """
        found = self.substitution_effects_many(
            [EffectsRequest(words, loss, options)], layers=layers
        )
        return None if found is None else found[0]

    def substitution_effects_many(
        self, requests: Sequence[EffectsRequest], *, layers: Sequence[int]
    ) -> list[list[NDArray[np.float64]]] | None:
        """:meth:`substitution_effects` of several sentences, one answer per request in
        order; a backend batches their passes (sentences are independent, so each
        sentence's gradient is its own loss's). ``None``: no input gradient."""
        return None

    def oov_report(self) -> OOVReport | None:
        """Words not found since the backend was opened; ``None`` for backends without
        a vocabulary (every word has a vector)."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the backend holds (models, memory maps)."""


#: Representation backends by name (classes; :func:`open_backend` opens one).
REPRESENTATIONS: Registry[type[RepresentationBackend]] = Registry(
    "representations",
    contract=RepresentationBackend,
    packages=("brittle.scorers.static_backend", "brittle.scorers.transformer_backend"),
    item="representation backend",
    name_attr="name",
)


@dataclass(frozen=True, slots=True)
class BackendRequest:
    """What the user asked for; each backend reads the fields it understands.

    Attributes:
        model: hub id, directory, ``glove``, a vectors file, ``random[:DIM]``; ``None``
            is the bundled encoder.
        pooling: subword pooling for transformers.
        device: ``cuda``, ``cpu`` or ``None`` (``cuda`` when available).
        dtype: ``float32``, ``float16`` or ``bfloat16`` (half precision on GPU).
        batch_size: most sentences (rows) per forward pass.
        oov: static vectors: ``zero`` or ``random`` (fixed by ``seed``) for unknown words.
        lowercase: static vectors: look a word up lowercased when it is unknown as is.
        seed: seed of random vectors (OOV policy ``random`` and the random control).
        dim: dimension of the random control (default 384).
    """

    model: str | None = None
    pooling: str = "mean"
    device: str | None = None
    dtype: str = "float32"
    batch_size: int = 64
    oov: str = "zero"
    lowercase: bool = True
    seed: int = 0
    dim: int | None = None


def guess_backend(model: str | None) -> str:
    """The backend name for a model string.

    ``glove`` and existing vector files (not directories) are ``static``, either with
    ``+pos`` appended (``glove+pos``) is ``static-pos``, ``random`` or ``random:DIM`` is
    ``random``, anything else (hub ids, directories, ``None``) is ``transformer``.
    """
    if model is None:
        return "transformer"
    low = model.lower()
    if low.endswith("+pos") and guess_backend(model[: -len("+pos")] or "glove") == "static":
        return "static-pos"
    if low == "glove" or low.startswith("glove:"):
        return "static"
    if low == "random" or low.startswith("random:"):
        return "random"
    p = Path(model)
    if p.is_file() and p.suffix.lower() in (".txt", ".bin", ".vec", ".kv", ".gz", ".w2v"):
        return "static"
    return "transformer"


def backend_for(name: str) -> type[RepresentationBackend]:
    """The backend class registered as ``name``.

    Raises:
        ConfigError: no backend has that name (the message lists the known ones).
    """
    return REPRESENTATIONS.get(name)


def open_backend(request: BackendRequest, *, backend: str = "auto") -> RepresentationBackend:
    """Open the backend for ``request`` (``backend="auto"`` guesses from the model)."""
    name = guess_backend(request.model) if backend == "auto" else backend
    return backend_for(name).open(request)


#: ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (what :func:`check_device` accepts).
_DEVICE = re.compile(r"(cpu|cuda(?::(\d+))?|mps)")


def check_device(device: str | None) -> str | None:
    """``device`` normalised (lower case, trimmed) once this machine is known to have it;
    ``None`` stays ``None`` (the device is then picked when something loads).

    Only ``cuda`` and ``mps`` import torch (to ask it); ``cpu`` and ``None`` are free.

    Raises:
        ConfigError: an unknown device string, ``cuda`` on a machine or torch build
            without CUDA (or an index past its GPUs), ``mps`` without MPS.
    """
    if device is None:
        return None
    name = device.strip().lower()
    match = _DEVICE.fullmatch(name)
    if match is None:
        raise ConfigError(f"unknown device {device!r} (known: cpu, cuda, cuda:N, mps)")
    if name == "cpu":
        return name
    import torch

    if name == "mps":
        if not torch.backends.mps.is_available():
            raise ConfigError(
                f"device {device!r} is not available: MPS needs Apple silicon and a torch "
                "build with MPS support; use --device cpu"
            )
        return name
    if not torch.cuda.is_available():
        why = (
            f"this torch build ({torch.__version__}) has no CUDA support"
            if torch.version.cuda is None
            else "no CUDA GPU is visible"
        )
        raise ConfigError(f"device {device!r} is not available: {why}; use --device cpu")
    index = match.group(2)
    count = torch.cuda.device_count()
    if index is not None and int(index) >= count:
        raise ConfigError(
            f"device {device!r} is not available: this machine has {count} CUDA GPU(s), "
            f"cuda:0 to cuda:{count - 1}"
        )
    return name


#: The precisions a torch model can run in (``--dtype``).
DTYPES = ("float32", "float16", "bfloat16")


def check_dtype(dtype: str | None, device: str | None) -> str | None:
    """``dtype`` once it is known to run on ``device``; ``None`` (each model's own
    precision) stays ``None``.

    ``device`` is the run's device as the user gave it (``None``: ``cuda`` when
    available, else ``cpu``). Only ``float16`` asks torch about the device
    (:func:`needs_gpu`); nothing loads.

    Raises:
        ConfigError: an unknown precision, or ``float16`` where no CUDA GPU runs it.
    """
    if dtype is None:
        return None
    if dtype not in DTYPES:
        raise ConfigError(f"unknown --dtype {dtype!r} (known: {', '.join(DTYPES)})")
    if needs_gpu(dtype):
        where = pick_device(device)
        if not where.startswith("cuda"):
            raise ConfigError(
                f"--dtype float16 needs a GPU (the device is {where}); use --dtype bfloat16 "
                "or float32 on CPU"
            )
    return dtype


def needs_gpu(dtype: str) -> bool:
    """Whether ``dtype`` runs only on a CUDA GPU (``float16``: CPU kernels lack it)."""
    return dtype == "float16"


def torch_dtype(dtype: str) -> torch.dtype:
    """The ``torch.dtype`` of a name of :data:`DTYPES`."""
    import torch

    found: dict[str, torch.dtype] = {
        "float32": torch.float32,
        "float16": torch.float16,
        "bfloat16": torch.bfloat16,
    }
    if dtype not in found:
        raise ConfigError(f"unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
    return found[dtype]


def native_bfloat16(device: str) -> bool:
    """Whether ``device`` multiplies bfloat16 matrices in hardware: a CPU with
    AVX512-BF16 or AMX tiles (torch's own CPU probes). There a small model's matrix
    products run about four times float32's rate (a 576 x 1,536 product of 40 rows: 0.19
    against 0.80 ms on one core of the AMD EPYC the docs were measured on); elsewhere
    bfloat16 is converted to float32 and gains nothing. CUDA devices answer ``False``:
    their float32 needs no help here."""
    if not device.startswith("cpu"):
        return False
    import torch

    probes: tuple[Callable[[], bool], ...] = ()
    try:  # private probes, present since torch 2.1; a build without them: no
        probes = (torch.cpu._is_avx512_bf16_supported, torch.cpu._is_amx_tile_supported)
    except AttributeError:
        return False
    return any(probe() for probe in probes)


def pick_device(device: str | None) -> str:
    """``device`` if given (checked by :func:`check_device`), else ``cuda`` when
    available, else ``cpu``.

    Raises:
        ConfigError: ``device`` is unknown or not available here.
    """
    checked = check_device(device) if device else None
    if checked:
        return checked
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def reopen_backend(
    description: Mapping[str, Any],  # Any: decoded JSON, each field converted below
    *,
    device: str | None = None,
    dtype: str | None = None,
) -> RepresentationBackend:
    """Open the backend a probe recorded (``Probe.backend``: ``describe()`` output, read
    back from JSON), in the precision it recorded unless ``dtype`` names another."""
    try:
        pooling = _text(description, "pooling", "mean")
        model = description.get("model")
        request = BackendRequest(
            model=None if model is None else _text(description, "model", ""),
            pooling=pooling if pooling != "-" else "mean",
            device=device,
            dtype=dtype if dtype is not None else _text(description, "dtype", "float32"),
            oov=_text(description, "oov", "zero"),
            lowercase=bool(description.get("lowercase", True)),
            seed=int(description.get("seed", 0)),
        )
        backend = _text(description, "backend", "auto")
    except (TypeError, ValueError) as err:
        raise ConfigError(f"the probe's backend options are damaged ({err})") from None
    return open_backend(request, backend=backend)


def _text(description: Mapping[str, Any], key: str, default: str) -> str:  # Any: JSON
    """The string ``description[key]`` (``default`` when absent).

    Raises:
        TypeError: the value is not a string.
    """
    value = description.get(key, default)
    if not isinstance(value, str):  # decoded JSON: any value
        raise TypeError(f"{key} {value!r} is not a string")
    return value
