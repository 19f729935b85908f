"""Probes: training them and scoring with them.

Treebanks become word vectors plus gold annotations (``probe_data``), a probe trains on
one layer (``probe_training``), the ``train-probe`` job reads, extracts, trains and
saves (``probe_jobs``; ``probe_sweep`` for ``--layer all``, one probe per layer from one
extraction); ``evaluate`` computes its probes' vectors, in one process or sharded
(``probe_vectors``), and the attack scores candidates with trained probes
(``probe_eval``).
"""
