"""Static word vectors (GloVe, word2vec) and the random-vector control.

Out-of-vocabulary policy, stated in every report
(:class:`~brittle.scorers.representations.OOVReport`):

1. the word as written is looked up;
2. with ``lowercase=True`` (the default) an unknown word is looked up lowercased
   (GloVe 6B is all lowercase, so this is what makes capitalised words known);
3. a word still unknown gets the zero vector (``oov="zero"``) or a random vector fixed
   by the seed and the word itself (``oov="random"``: the same unknown word always gets
   the same vector, with the spread of the known vectors).

The ``random`` backend is the control of the probing literature: every word type gets
a fixed random vector (seeded by the word), so a probe can use word identity but no
knowledge a model learnt. It has the dimension of the model it stands in for.

The ``static-pos`` backend (``--model glove+pos``) is Hall Maudslay & Cotterell's
Fast+Pos control: each word's static vector with a position embedding appended, so a
probe knows the word and where it sits, and nothing of its context.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core import resources
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.scorers.representations import (
    REPRESENTATIONS,
    BackendOptions,
    BackendRequest,
    FlatReps,
    OOVReport,
    RepresentationBackend,
    Words,
    offsets_of,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "OOV_POLICIES",
    "POSITIONS_SUFFIX",
    "RandomVectors",
    "StaticVectors",
    "StaticWithPositions",
    "word_vector",
]

#: Policies for words missing from the vocabulary.
OOV_POLICIES: tuple[str, ...] = ("zero", "random")

#: Default dimension of the random control (MiniLM's hidden size).
DEFAULT_RANDOM_DIM = 384


def word_vector(word: str, dim: int, *, seed: int, scale: float = 1.0) -> NDArray[np.float32]:
    """A random vector (dim,) fixed by ``seed`` and ``word``: normal with std ``scale``."""
    digest = hashlib.blake2b(f"{seed}\x1f{word}".encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return (rng.standard_normal(dim) * scale).astype(np.float32)


class _Vocab:
    """Word-to-row lookup over a (vocab, dim) matrix with the OOV policy."""

    def __init__(
        self,
        index: Mapping[str, int],
        matrix: NDArray[np.float32],
        *,
        oov: str,
        lowercase: bool,
        seed: int,
    ) -> None:
        if oov not in OOV_POLICIES:
            raise ConfigError(f"unknown OOV policy {oov!r} (known: {', '.join(OOV_POLICIES)})")
        self.index = index
        self.matrix = matrix
        self.oov = oov
        self.lowercase = lowercase
        self.seed = seed
        self.dim = int(matrix.shape[1])
        sample = np.asarray(matrix[: min(2000, matrix.shape[0])], dtype=np.float64)
        self.scale = float(sample.std()) if sample.size else 1.0
        self.tokens = 0
        self.oov_tokens = 0
        self.lowercased = 0
        self.oov_types: set[str] = set()
        self._oov_cache: dict[str, NDArray[np.float32]] = {}

    def lookup(self, words: Sequence[str], out: NDArray[np.float32]) -> None:
        """Fill ``out`` (len(words), dim) with the vectors of ``words``."""
        rows = np.empty(len(words), dtype=np.int64)
        missing: list[int] = []
        get = self.index.get
        for i, w in enumerate(words):
            r = get(w)
            if r is None and self.lowercase:
                r = get(w.lower())
                if r is not None:
                    self.lowercased += 1
            if r is None:
                missing.append(i)
                rows[i] = 0
            else:
                rows[i] = r
        self.tokens += len(words)
        if len(words):
            out[:] = self.matrix[rows]
        for i in missing:
            w = words[i]
            self.oov_tokens += 1
            self.oov_types.add(w)
            out[i] = self._oov_vector(w)

    def _oov_vector(self, word: str) -> NDArray[np.float32]:
        if self.oov == "zero":
            return np.zeros(self.dim, dtype=np.float32)
        vec = self._oov_cache.get(word)
        if vec is None:
            vec = word_vector(word, self.dim, seed=self.seed, scale=self.scale)
            self._oov_cache[word] = vec
        return vec

    def report(self) -> OOVReport:
        policy = f"{self.oov}{' after lowercase' if self.lowercase else ''}"
        return OOVReport(policy, self.tokens, self.oov_tokens, self.lowercased, len(self.oov_types))


class _StaticBase(RepresentationBackend):
    """Shared encode path of the table-lookup backends."""

    def _fill(
        self, words: Sequence[str], offsets: NDArray[np.int64], out: NDArray[np.float32]
    ) -> None:
        """Write the vector of each of ``words`` (every sentence's, back to back; sentence
        ``i`` owns ``offsets[i]:offsets[i + 1]``) into ``out``, shape (words, dim)."""
        raise NotImplementedError

    def encode_flat(self, sentences: Sequence[Words], *, layers: Sequence[int]) -> FlatReps:
        """Vectors of every word; the only layer is 0 (``-1`` means the same)."""
        idx = tuple(self.layer_index(layer) for layer in layers)
        if not idx:
            raise ConfigError("no layer asked for")
        offsets = offsets_of(sentences)
        flat_words = [w for s in sentences for w in s]
        one = np.empty((len(flat_words), self.dim), dtype=np.float32)
        self._fill(flat_words, offsets, one)
        vectors = np.broadcast_to(one, (len(idx), *one.shape))
        return FlatReps(np.ascontiguousarray(vectors), offsets, idx)


@REPRESENTATIONS.register("static", help="GloVe or word2vec vectors (text or binary files)")
class StaticVectors(_StaticBase):
    """Static word vectors from a word-to-row index and a matrix.

    Args:
        index: word -> row of ``matrix``.
        matrix: (vocab, dim) float32 (a memory map is fine).
        model: the name reports use (``glove``, a file path).
        oov: ``zero`` or ``random`` (see module docstring).
        lowercase: look unknown words up lowercased.
        seed: seed of the random OOV vectors.
    """

    def __init__(
        self,
        index: Mapping[str, int],
        matrix: NDArray[np.float32],
        *,
        model: str,
        oov: str = "zero",
        lowercase: bool = True,
        seed: int = 0,
    ) -> None:
        if matrix.ndim != 2 or matrix.shape[0] == 0:
            raise ConfigError(f"vectors of {model} must be a non-empty (vocab, dim) matrix")
        self.vocab = _Vocab(index, matrix, oov=oov, lowercase=lowercase, seed=seed)
        super().__init__(model=model, dim=int(matrix.shape[1]), n_layers=0, pooling="-")

    @classmethod
    def open(cls, request: BackendRequest) -> StaticVectors:
        """GloVe for ``glove`` (bundled 6B 50d), else a vectors file read with gensim."""
        model = request.model or "glove"
        oov, lowercase, seed = request.oov, request.lowercase, request.seed
        if model.lower() == "glove":
            return cls.glove(oov=oov, lowercase=lowercase, seed=seed)
        return cls.from_file(model, oov=oov, lowercase=lowercase, seed=seed)

    @classmethod
    def glove(cls, *, oov: str = "zero", lowercase: bool = True, seed: int = 0) -> StaticVectors:
        """The bundled GloVe 6B 50d vectors (through :mod:`brittle.engine.core.resources`)."""
        words, matrix = resources.load_glove()
        index = {w: i for i, w in enumerate(words)}
        return cls(index, matrix, model="glove", oov=oov, lowercase=lowercase, seed=seed)

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        oov: str = "zero",
        lowercase: bool = True,
        seed: int = 0,
    ) -> StaticVectors:
        """Vectors from a word2vec text or binary file or a GloVe text file.

        GloVe text files (no header line) are recognised by their first line. These
        formats are parsed, never executed; gensim's own ``.kv`` format is refused
        because loading it unpickles the file, and a vectors file can come from anyone
        (a shared probe directory names one).

        Raises:
            ResourceMissingError: no such file.
            ConfigError: a ``.kv`` file, a file gensim cannot parse, or a header that
                announces more vectors than the file can hold.
        """
        p = Path(path)
        if not p.is_file():
            raise ResourceMissingError(
                f"word vectors {str(path)!r}",
                [str(p.resolve())],
                "give an existing word2vec/GloVe text or binary file",
            )
        if p.suffix.lower() in PICKLED_SUFFIXES:
            raise ConfigError(
                f"{p}: gensim's {p.suffix} format is a pickle, which can run code when "
                "loaded, so brittle does not read it; convert it once where you trust it: "
                "KeyedVectors.load(PATH).save_word2vec_format('vectors.bin', binary=True)"
            )
        from gensim.models import KeyedVectors

        binary = p.suffix.lower() == ".bin"
        header = _header(p)
        if header is not None:
            _check_header_fits(p, header, binary=binary)
        try:
            if binary:
                kv = KeyedVectors.load_word2vec_format(str(p), binary=True)
            else:
                kv = KeyedVectors.load_word2vec_format(
                    str(p), binary=False, no_header=header is None
                )
        except (ValueError, UnicodeDecodeError, EOFError, MemoryError) as err:
            raise ConfigError(f"{p}: not a word-vector file gensim can read ({err})") from err
        matrix = np.asarray(kv.vectors, dtype=np.float32)
        return cls(
            dict(kv.key_to_index),
            matrix,
            model=str(path),
            oov=oov,
            lowercase=lowercase,
            seed=seed,
        )

    def _fill(
        self, words: Sequence[str], offsets: NDArray[np.int64], out: NDArray[np.float32]
    ) -> None:
        self.vocab.lookup(words, out)

    def oov_report(self) -> OOVReport:
        """Counts of unknown words since the backend was opened."""
        return self.vocab.report()

    def describe(self) -> BackendOptions:
        """Options that reopen this backend (JSON-ready)."""
        return {
            "backend": self.name,
            "model": self.model,
            "pooling": self.pooling,
            "oov": self.vocab.oov,
            "lowercase": self.vocab.lowercase,
            "seed": self.vocab.seed,
        }


#: Suffix of a static model that appends positions to its vectors (``glove+pos``).
POSITIONS_SUFFIX = "+pos"


@REPRESENTATIONS.register(
    "static-pos",
    help="control: static vectors with MiniLM's position embeddings appended (glove+pos)",
)
class StaticWithPositions(_StaticBase):
    """Static word vectors with a position embedding appended: the Fast+Pos control.

    Word ``i`` (0-based) of a sentence gets the bundled MiniLM's learnt position
    embedding ``i + 1`` (position 0 is BERT's ``[CLS]``; one position per word, where
    BERT gives one per word piece); words past the table's end share its last row.
    Hall Maudslay & Cotterell append BERT base's position embeddings (768) to FastText
    (300); here they are MiniLM's (384) after GloVe's (50) or another static model's.

    Args:
        words: the static vectors.
        positions: (max positions, d_pos) float32, row ``p`` for position ``p``.
        model: the name reports use (``glove+pos``).
    """

    def __init__(self, words: StaticVectors, positions: NDArray[np.float32], *, model: str) -> None:
        if positions.ndim != 2 or positions.shape[0] < 2:
            raise ConfigError(f"{model}: the position table must be (positions >= 2, dim)")
        self.words = words
        self.positions = positions
        super().__init__(
            model=model, dim=words.dim + int(positions.shape[1]), n_layers=0, pooling="-"
        )

    @classmethod
    def open(cls, request: BackendRequest) -> StaticWithPositions:
        """``MODEL+pos``: ``MODEL``'s static vectors (``glove`` when bare) with the
        bundled encoder's position embeddings."""
        model = request.model or "glove" + POSITIONS_SUFFIX
        base = model[: -len(POSITIONS_SUFFIX)] if model.endswith(POSITIONS_SUFFIX) else model
        words = StaticVectors.open(replace(request, model=base or "glove"))
        return cls(words, resources.encoder_position_embeddings(), model=model)

    def _fill(
        self, words: Sequence[str], offsets: NDArray[np.int64], out: NDArray[np.float32]
    ) -> None:
        """Each word's static vector, then its position's embedding: (words, d + d_pos)."""
        d = self.words.dim
        self.words.vocab.lookup(words, out[:, :d])
        # position of each word in its sentence, + 1 for [CLS], capped at the last row
        within = np.arange(len(words), dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))
        out[:, d:] = self.positions[np.minimum(within + 1, self.positions.shape[0] - 1)]

    def oov_report(self) -> OOVReport:
        """Counts of unknown words since the backend was opened."""
        return self.words.oov_report()

    def describe(self) -> BackendOptions:
        """Options that reopen this backend (JSON-ready)."""
        return {**self.words.describe(), "backend": self.name, "model": self.model}


@REPRESENTATIONS.register("random", help="control: a fixed random vector per word type")
class RandomVectors(_StaticBase):
    """A fixed random vector per word type (seeded by the word), the control representation.

    Args:
        dim: vector size (the size of the model it replaces).
        seed: seed mixed with each word.
    """

    def __init__(self, *, dim: int = DEFAULT_RANDOM_DIM, seed: int = 0) -> None:
        if dim < 1:
            raise ConfigError("the random control needs a positive dimension")
        self.seed = seed
        self._cache: dict[str, NDArray[np.float32]] = {}
        super().__init__(model=f"random:{dim}", dim=dim, n_layers=0, pooling="-")

    @classmethod
    def open(cls, request: BackendRequest) -> RandomVectors:
        """``random`` or ``random:DIM``; ``request.dim`` overrides the default size."""
        dim = request.dim or DEFAULT_RANDOM_DIM
        model = request.model or "random"
        if ":" in model:
            try:
                dim = int(model.split(":", 1)[1])
            except ValueError:
                raise ConfigError(f"random control: bad dimension in {model!r}") from None
        return cls(dim=dim, seed=request.seed)

    def _fill(
        self, words: Sequence[str], offsets: NDArray[np.int64], out: NDArray[np.float32]
    ) -> None:
        cache = self._cache
        for i, w in enumerate(words):
            vec = cache.get(w)
            if vec is None:
                vec = word_vector(w, self.dim, seed=self.seed)
                if len(cache) < 1_000_000:
                    cache[w] = vec
            out[i] = vec

    def describe(self) -> BackendOptions:
        """Options that reopen this backend (JSON-ready)."""
        return {"backend": self.name, "model": self.model, "pooling": "-", "seed": self.seed}


#: Suffixes of gensim's pickle-based formats (``KeyedVectors.save``), never loaded.
PICKLED_SUFFIXES = frozenset({".kv", ".model", ".pkl", ".pickle"})


def _header(path: Path) -> tuple[int, int] | None:
    """The ``count dim`` header line of a vectors file (word2vec text, gzipped text or
    binary), or ``None`` when its first line is no such header (GloVe has none). Read
    as bytes: the header is ASCII digits in every form."""
    import gzip

    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as handle:
        first = handle.readline(256).split()
    if len(first) == 2 and all(part.isdigit() for part in first):
        return int(first[0]), int(first[1])
    return None


def _check_header_fits(path: Path, header: tuple[int, int], *, binary: bool) -> None:
    """Refuse a header that announces more numbers than the file could hold.

    gensim allocates the (count, dim) matrix the header announces before reading a
    row, so a lying header of a few bytes would ask for terabytes. Each number takes
    at least 4 bytes in a binary file and 2 (a digit and a space) in a text file;
    gzip files are not checked (their size says little about what they hold).
    """
    count, dim = header
    if path.suffix == ".gz":
        return
    least = count * dim * (4 if binary else 2)
    size = path.stat().st_size
    if count < 1 or dim < 1 or least > size:
        raise ConfigError(
            f"{path}:1: the header announces {count} vectors of {dim} numbers, "
            f"which a file of {size} bytes cannot hold"
        )
