"""Package data: the embedded default treebank and small word lists."""

from importlib.resources import files
from pathlib import Path


def default_treebank_path() -> Path:
    """Path of the embedded default treebank (UD English, written for brittle)."""
    return Path(str(files(__name__).joinpath("default.conllu")))


def bench_tables_path() -> Path:
    """Path of ``brittle bench``'s recorded coPOS tables (``bench/record_tables.py``
    writes them): the fixed candidate set its attack stages search."""
    return Path(str(files(__name__).joinpath("bench-tables.json")))


def bench_pool_tables_path() -> Path:
    """Path of the recorded tables of La Malfa et al.'s every-sense coPOS pool for the
    same sentences (``bench/record_tables.py``): the workload of ``brittle bench``'s
    anytime stage, where search strategies differ."""
    return Path(str(files(__name__).joinpath("bench-pool-tables.json")))
