"""Run machinery the jobs share: workers, lock-step rounds and the options runs resolve.

``shards`` cuts sentences into shards for worker processes or Ray actors and merges the
results back in input order, ``rounds`` batches the model calls of many searches into
lock-step rounds, and ``run_options`` resolves a run's method, generator options and
workers alike for the command line and the Python API.
"""
