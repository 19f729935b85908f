"""Evaluation: the ``evaluate`` job and the treebank statistics of ``brittle stats``.

``evaluation`` scores every metric of each probe on a treebank beside the baselines,
``paired_evaluation`` (``evaluate --paired``) scores probes on a perturbed treebank
beside its plain original with a paired bootstrap, and ``stats`` counts what a treebank
holds.
"""
