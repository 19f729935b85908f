"""brittle.engine.core: what every other layer stands on.

Immutable records (:class:`~brittle.engine.core.sentence.Sentence`,
:class:`~brittle.engine.core.perturbation.Perturbation`), errors, the typed component
registry, CoNLL-U reading and writing with the one safe output writer, tree utilities
with their kernels, and the offline resources. Imports no other brittle package.
"""
