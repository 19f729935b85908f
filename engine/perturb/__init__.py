"""The ``perturb`` job: one syntax-preserving perturbation per sentence of a treebank.

``perturb_run`` draws, checks and keeps the perturbations (Algorithm 1) and writes the
perturbed treebank and its summary; ``perturb_html`` writes the run's self-contained
page (``perturb --html``).
"""
