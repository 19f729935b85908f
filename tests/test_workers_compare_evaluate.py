"""``evaluate`` and ``compare-methods`` sharded over worker processes (and Ray actors):
the same reports, tables and files as one process; ``evaluate --probe DIR`` over a
directory of probes.

Real probes on a tiny random BERT (so the representations go through a transformer,
its batching and the disk cache), real ``spawn`` processes, the gold parser.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from repr_models import tiny_bert

from brittle.cli.main import main
from brittle.engine.compare.compare_run import CompareResult, compare_methods
from brittle.engine.evaluate.evaluation import evaluate_probes, expand_probe_dirs, natural_key
from brittle.engine.evaluate.paired_evaluation import evaluate_paired
from brittle.engine.runs.shards import LocalProcesses, RayActors

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
#: Sentences per shard in the library tests (119 sentences: 4 shards).
CHUNK = 32


def _run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data home of this module's own (the representation cache lives there)."""
    root = tmp_path_factory.mktemp("home")
    previous = os.environ.get("BRITTLE_HOME")
    os.environ["BRITTLE_HOME"] = str(root)
    try:
        yield root
    finally:
        if previous is None:
            os.environ.pop("BRITTLE_HOME", None)
        else:
            os.environ["BRITTLE_HOME"] = previous


@pytest.fixture(scope="module")
def probe_set(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``set/layer2`` (distance, layer 1) and ``set/layer10`` (pos, layer 2) on a tiny
    BERT, beside a summary file, as ``train-probe --layer all`` lays them out."""
    root = tmp_path_factory.mktemp("probes")
    bert = tiny_bert(root / "bert")
    for name, task, layer in (("layer10", "pos", "2"), ("layer2", "distance", "1")):
        _run(
            "train-probe", str(TREEBANK), "--dev", str(TREEBANK), "--out",
            str(root / "set" / name), "--model", str(bert), "--layer", layer, "--task", task,
            "--epochs", "1", "--threads", "1", "--quiet",
        )  # fmt: skip
    (root / "set" / "layers.json").write_text("{}\n")
    return root / "set"


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalProcesses]:
    """Two worker processes shared by the tests of this module."""
    with LocalProcesses(2) as workers:
        yield workers


# ---------------------------------------------------------------- probe directories
def test_natural_order_compares_numbers_as_numbers() -> None:
    names = ["layer10", "layer2", "layer1", "layers", "layer0"]
    assert sorted(names, key=natural_key) == ["layer0", "layer1", "layer2", "layer10", "layers"]


def test_a_directory_of_probes_expands_in_natural_order(probe_set: Path, tmp_path: Path) -> None:
    assert expand_probe_dirs([probe_set]) == [probe_set / "layer2", probe_set / "layer10"]
    # A probe directory stays itself; a path that does not exist is left to the loader.
    single = probe_set / "layer10"
    assert expand_probe_dirs([single, tmp_path / "absent"]) == [single, tmp_path / "absent"]


def test_a_directory_without_probes_is_one_line_error(probe_set: Path, tmp_path: Path) -> None:
    empty = tmp_path / "nothing"
    (empty / "sub").mkdir(parents=True)
    (empty / "layers.json").write_text("{}\n")
    result = CliRunner().invoke(main, ["evaluate", str(TREEBANK), "--probe", str(empty)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and str(empty) in lines[0], result.output
    assert "neither a probe directory" in lines[0]


# ---------------------------------------------------------------- evaluate
def test_evaluate_with_workers_is_the_report_of_one_process(
    probe_set: Path, executor: LocalProcesses, tmp_path: Path
) -> None:
    one = evaluate_probes(TREEBANK, [probe_set], chunk=CHUNK, cache_dir=tmp_path / "c1")
    two = evaluate_probes(
        TREEBANK, [probe_set], chunk=CHUNK, cache_dir=tmp_path / "c2", executor=executor
    )
    assert [p.name for p in one.probes] == ["set/layer2", "set/layer10"]
    assert json.dumps(one.to_dict()) == json.dumps(two.to_dict())
    # Again, from the vectors the workers cached per shard.
    assert len(list((tmp_path / "c2").glob("*.f32"))) == 2 * 4
    again = evaluate_probes(
        TREEBANK, [probe_set], chunk=CHUNK, cache_dir=tmp_path / "c2", executor=executor
    )
    assert json.dumps(one.to_dict()) == json.dumps(again.to_dict())


def test_paired_evaluate_with_workers_is_the_report_of_one_process(
    probe_set: Path, executor: LocalProcesses, tmp_path: Path
) -> None:
    perturbed = tmp_path / "perturbed.conllu"
    _run(
        "perturb", str(TREEBANK), "--method", "neighbour-flip", "--parser", "gold",
        "--no-quality", "--out", str(perturbed), "--quiet",
    )  # fmt: skip
    one = evaluate_paired(
        perturbed, TREEBANK, [probe_set], chunk=CHUNK, resamples=20, use_cache=False
    )
    two = evaluate_paired(
        perturbed,
        TREEBANK,
        [probe_set],
        chunk=CHUNK,
        resamples=20,
        use_cache=False,
        executor=executor,
    )
    assert json.dumps(one.to_dict()) == json.dumps(two.to_dict())


def test_cli_evaluate_workers_match_one_process(probe_set: Path, tmp_path: Path) -> None:
    args = ["evaluate", str(TREEBANK), "--probe", str(probe_set), "--quiet", "--no-cache"]
    one = _run(*args, "--json", str(tmp_path / "one.json"))
    two = _run(*args, "--json", str(tmp_path / "two.json"), "--workers", "2")
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    strip = str(tmp_path)
    assert one.output.replace(strip, "") == two.output.replace(strip, "").replace("two", "one")
    report = json.loads((tmp_path / "one.json").read_text())
    assert list(report["probes"]) == ["set/layer2", "set/layer10"]


def test_evaluate_on_ray_actors_is_the_report_of_one_process(probe_set: Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'brittle[ray]')")
    one = evaluate_probes(TREEBANK, [probe_set], chunk=CHUNK, use_cache=False)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
    )
    try:
        with RayActors(None, 2) as actors:
            two = evaluate_probes(
                TREEBANK, [probe_set], chunk=CHUNK, use_cache=False, executor=actors
            )
    finally:
        ray.shutdown()
    assert json.dumps(one.to_dict()) == json.dumps(two.to_dict())


# ---------------------------------------------------------------- compare-methods
def timeless(result: CompareResult) -> str:
    """The result's JSON without its wall times."""
    data = result.to_dict()
    rows = data["rows"]
    assert isinstance(rows, list)
    for row in rows:
        row.pop("seconds")
    return json.dumps(data)


def compare(parser: str, executor: LocalProcesses | RayActors | None = None) -> CompareResult:
    return compare_methods(
        TREEBANK,
        methods=["neighbour-flip", "shuffle"],
        budgets=[2, 3],
        candidates=3,
        parser=parser,
        seed=7,
        limit=40,
        quality=False,
        chunk_size=16,
        executor=executor,
    )


@pytest.mark.needs("spacy-model")
def test_compare_methods_with_workers_is_the_result_of_one_process(
    executor: LocalProcesses,
) -> None:
    done: list[tuple[str, int, int]] = []
    one = compare("spacy")
    two = compare_methods(
        TREEBANK,
        methods=["neighbour-flip", "shuffle"],
        budgets=[2, 3],
        candidates=3,
        parser="spacy",
        seed=7,
        limit=40,
        quality=False,
        chunk_size=16,
        executor=executor,
        progress=lambda method, k, total: done.append((method, k, total)),
    )
    assert timeless(one) == timeless(two)
    # Every method's bar moves a shard at a time (shards finish in any order), to the end.
    seen = [k for method, k, _ in done if method == "shuffle"]
    assert len(seen) == 3 and seen == sorted(seen) and seen[-1] == 40
    assert len(one.rows) == 2 * 2 + 2 and one.rows[0].candidates > 0


def test_compare_methods_on_ray_actors_is_the_result_of_one_process() -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'brittle[ray]')")
    one = compare("gold")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
    )
    try:
        with RayActors(None, 2) as actors:
            two = compare("gold", actors)
    finally:
        ray.shutdown()
    assert timeless(one) == timeless(two)


@pytest.mark.needs("glove")
def test_cli_compare_methods_workers_match_one_process(tmp_path: Path) -> None:
    args = [
        "compare-methods", str(TREEBANK), "--methods", "neighbour-flip,random", "--budget",
        "1,2", "--candidates", "3", "--parser", "gold", "--no-quality", "--limit", "70",
        "--quiet",
    ]  # fmt: skip
    one = _run(*args, "--out", str(tmp_path / "one"))
    two = _run(*args, "--out", str(tmp_path / "two"), "--workers", "2")
    a, b = tmp_path / "one" / "compare-methods.md", tmp_path / "two" / "compare-methods.md"
    assert a.read_bytes() == b.read_bytes()
    assert one.output.replace("one", "two") == two.output
    rows = [
        json.loads((tmp_path / name / "compare-methods.json").read_text())["rows"]
        for name in ("one", "two")
    ]
    for row in (*rows[0], *rows[1]):
        row.pop("seconds")
    assert rows[0] == rows[1]
