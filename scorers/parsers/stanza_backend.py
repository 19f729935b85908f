"""The Stanza parser backend (used where its English models are installed).

``stanza.Pipeline("en", processors="tokenize,pos,lemma,depparse",
tokenize_pretokenized=True, download_method=None)`` parses a whole batch of word lists
as one document, one sentence per list. Nothing is downloaded: missing models raise
:class:`~brittle.engine.core.errors.ResourceMissingError`. The conversion from a Stanza
``Document`` to :class:`Parse` records is a plain function, testable without models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from brittle.engine.core.errors import ResourceMissingError
from brittle.scorers.parsers.base import PARSERS, CachedParser, Parse, Words

if TYPE_CHECKING:
    from stanza import Pipeline
    from stanza.models.common.doc import Document

__all__ = ["StanzaBackend", "document_to_parses", "stanza_parser"]

PROCESSORS = "tokenize,pos,lemma,depparse"


def document_to_parses(document: Document) -> list[Parse]:
    """One :class:`Parse` per sentence of a Stanza ``Document``.

    Uses the syntactic words (``sentence.words``), whose ``head`` is already 1-based
    with 0 for the root; a missing tag or relation becomes ``X`` / ``dep``.
    """
    out: list[Parse] = []
    for sentence in document.sentences:
        words = sentence.words
        heads = []
        for word in words:
            if word.head is None:
                raise ValueError(f"word {word.id} ({word.text!r}) has no head: was depparse run?")
            heads.append(int(word.head))
        out.append(
            Parse.build(
                heads,
                [w.upos or "X" for w in words],
                [w.deprel or "dep" for w in words],
            )
        )
    return out


@dataclass
class StanzaBackend:
    """Parses word sequences with a Stanza English pipeline.

    Attributes:
        model_dir: Stanza's resources directory (``None``: Stanza's default).
        package: the Stanza package name (``default``, ``ewt``, ...).
        batch_size: sentences per call to the pipeline.
    """

    model_dir: str | None = None
    package: str = "default"
    batch_size: int = 256
    name: str = "stanza"
    #: Stanza's English models are trained on UD treebanks.
    ud_labels: bool = True
    _nlp: Pipeline | None = field(default=None, repr=False)

    def _resolved_dir(self) -> str:
        if self.model_dir is not None:
            return self.model_dir
        try:
            from stanza.resources.common import DEFAULT_MODEL_DIR
        except ImportError:  # pragma: no cover - only without stanza
            return "~/stanza_resources"
        return str(DEFAULT_MODEL_DIR)

    def prepare(self) -> None:
        """Build the pipeline once; missing models or package raise ResourceMissingError."""
        self._pipeline()

    def _pipeline(self) -> Pipeline:
        if self._nlp is not None:
            return self._nlp
        try:
            import stanza
        except ImportError:
            raise ResourceMissingError(
                "the stanza package",
                ["the current Python environment"],
                "pip install 'brittle[stanza]'",
            ) from None
        where = self._resolved_dir()
        try:
            nlp = stanza.Pipeline(
                "en",
                dir=where,
                package=self.package,
                processors=PROCESSORS,
                tokenize_pretokenized=True,
                download_method=None,
                logging_level="WARN",
            )
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ResourceMissingError(
                f"Stanza English models ({PROCESSORS}; {type(exc).__name__}: {exc})",
                [where],
                "python -c \"import stanza; stanza.download('en')\" on a machine with "
                "internet, then copy the resources directory here",
            ) from None
        self._nlp = nlp
        return nlp

    def describe(self) -> dict[str, object]:
        """Backend, package and Stanza version."""
        import stanza

        return {
            "parser": self.name,
            "model": f"en/{self.package}",
            "model_dir": self._resolved_dir(),
            "stanza": stanza.__version__,
        }

    def parse_words(self, batch: Sequence[Words]) -> list[Parse]:
        """One parse per word sequence, ``batch_size`` sentences per pipeline call."""
        nlp = self._pipeline()
        out: list[Parse] = []
        for start in range(0, len(batch), self.batch_size):
            chunk = [list(words) for words in batch[start : start + self.batch_size]]
            parses = document_to_parses(nlp(chunk))
            if len(parses) != len(chunk):
                raise RuntimeError(
                    f"stanza returned {len(parses)} sentences for {len(chunk)} inputs"
                )
            out.extend(parses)
        return out


@PARSERS.register("stanza", help="Stanza English depparse, pre-tokenized (needs installed models)")
def stanza_parser(
    *,
    model_dir: str | None = None,
    package: str = "default",
    batch_size: int = 256,
    cache_size: int = 100_000,
) -> CachedParser:
    """A cached Stanza parser (the pipeline is built on ``prepare()`` or the first parse)."""
    backend = StanzaBackend(model_dir=model_dir, package=package, batch_size=batch_size)
    return CachedParser(backend, cache_size=cache_size)
