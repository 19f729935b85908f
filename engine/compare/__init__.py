"""The ``compare-methods`` job: how much each perturbation method disturbs the parse.

``compare_run`` perturbs, parses and measures every method and budget against the
random-pair references; ``compare_report`` writes the result as Markdown, JSON, PNG and
a self-contained HTML page.
"""
