"""Run machinery the jobs share: workers, lock-step rounds and the options runs resolve.

``shards`` cuts sentences into shards for worker processes or Ray actors and merges the
results back in input order, ``rounds`` batches the model calls of many searches into
lock-step rounds, ``run_options`` resolves a run's method, generator options and
workers alike for the command line and the Python API, and ``run_checks`` holds the
checks of the settings the runs share (counts, precision, constraints, a generator's
options), so each config refuses them alike.
"""
