"""``brittle bench``: the JSON schema, the Markdown table, stage selection and errors."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.bench import BenchConfig, BenchReport, Machine, StageResult
from brittle.engine.bench.measure import PeakRSS, best_time, current_rss_mb
from brittle.engine.bench.run import DEFAULT_STAGES
from brittle.engine.bench.stages import _LIBRARY_IMPORTS, STAGES
from brittle.engine.bench.startup import MARKER
from brittle.engine.core.errors import ConfigError

STAGE_KEYS = {
    "throughput",
    "unit",
    "reference",
    "reference_throughput",
    "ratio",
    "peak_rss_mb",
    "kernel_s",
    "minor_faults",
    "detail",
}


def test_bench_json_follows_the_schema(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    table = tmp_path / "bench.md"
    args = [
        "bench", "--quick", "--stage", "hamming", "--stage", "order_metrics",
        "--stage", "tree_edit_distance", "--json", str(out), "--markdown", str(table),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert set(data) == {"stages", "machine"} | ({"notes"} if "notes" in data else set())
    assert list(data["stages"]) == ["hamming", "order_metrics", "tree_edit_distance"]
    for name, stage in data["stages"].items():
        assert set(stage) == STAGE_KEYS, name
        assert stage["throughput"] > 0 and stage["reference_throughput"] > 0
        assert stage["ratio"] == pytest.approx(
            stage["throughput"] / stage["reference_throughput"], rel=1e-4
        )
        assert stage["peak_rss_mb"] > 0
        # each stage's first row carries the kernel's work over the whole stage
        assert stage["kernel_s"] >= 0 and stage["minor_faults"] >= 0
    # The kernels beat their plain-Python references by far, whatever the machine's load.
    assert data["stages"]["hamming"]["ratio"] > 10
    assert data["stages"]["tree_edit_distance"]["reference"].startswith("apted")
    machine = data["machine"]
    assert machine["cores"] >= 1 and "numpy" in machine["versions"]
    assert machine["gpu"] is None or isinstance(machine["gpu"], str)
    markdown = table.read_text()
    assert markdown.startswith("| stage | throughput |")
    assert "| kernel s | page faults |" in markdown.splitlines()[0]
    assert markdown.count("\n| hamming |") == 1
    assert "| hamming |" in result.output


def test_unknown_stage_is_refused_in_one_line() -> None:
    result = CliRunner().invoke(main, ["bench", "--stage", "warp_drive"])
    assert result.exit_code == 2
    assert "unknown stage 'warp_drive'" in result.output
    assert "tree_edit_distance" in result.output  # the known ones are listed
    assert "Traceback" not in result.output


def test_every_default_stage_is_registered() -> None:
    for name in DEFAULT_STAGES:
        assert STAGES.get(name)
    with pytest.raises(ConfigError):
        BenchConfig(sentences=0)


def test_stage_without_reference_has_no_ratio_and_markdown_says_so() -> None:
    timed = StageResult("generator.copos", 12.5, "sentences/s", peak_rss_mb=300.0)
    assert timed.ratio is None
    assert timed.to_dict()["ratio"] is None
    ref = StageResult("parsing", 300.0, "candidates/s", "one call", 100.0, 500.0, "x")
    assert ref.ratio == pytest.approx(3.0)
    report = BenchReport((timed, ref), Machine(2, None, {"numpy": "2"}), ("no GPU",))
    lines = report.markdown().splitlines()
    assert lines[2].startswith("| generator.copos | 12.5 sentences/s | — | — | — |")
    assert lines[3].startswith("| parsing | 300 candidates/s | one call | 100 candidates/s | 3.00x")
    assert report.to_dict()["notes"] == ["no GPU"]
    assert lines[2].endswith("| 300 | — | — |")  # kernel use not measured


def test_a_bench_report_reads_back_from_its_json() -> None:
    """``BenchReport.from_dict`` reads ``brittle bench --json``'s file, so the docs'
    tables render again from a kept run."""
    timed = StageResult("generator.copos", 12.5, "sentences/s", peak_rss_mb=300.0)
    ref = StageResult(
        "parsing", 935.25, "candidates/s", "one call", 324.5, 815.0, "x", 0.75, 126_848
    )
    report = BenchReport((timed, ref), Machine(2, None, {"numpy": "2"}), ("no GPU",))
    data = json.loads(json.dumps(report.to_dict()))
    again = BenchReport.from_dict(data)
    assert again == report
    assert again.markdown() == report.markdown()
    with pytest.raises(TypeError):
        BenchReport.from_dict({**data, "stages": []})
    with pytest.raises(KeyError):
        BenchReport.from_dict({"stages": {"x": {"unit": "s"}}, "machine": data["machine"]})


def test_kernel_use_counts_the_pages_a_block_touches() -> None:
    import ctypes

    from brittle.engine.bench.measure import kernel_use

    # malloc and memset, not numpy, which asks for huge pages (one fault per 2 MiB)
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    # above 32 MiB, the most glibc's mmap threshold rises to after large frees: a block
    # this size is always mapped afresh, whatever ran before in this process
    size = 64 * 2**20
    before = kernel_use()
    block = libc.malloc(size)
    libc.memset(block, 1, size)
    used = kernel_use() - before
    libc.free(block)
    assert used.minor_faults >= size // 4096 // 2
    assert used.kernel_s >= 0.0


def test_peak_rss_sees_memory_allocated_inside_the_block() -> None:
    import numpy as np

    before = current_rss_mb()
    with PeakRSS(interval=0.001) as peak:
        block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
        block.sum()
        del block
    assert peak.peak_mb >= before + 50
    assert best_time(lambda: None, 2) >= 0.0


def test_best_time_repeats_until_the_minimum_total() -> None:
    calls: list[float] = []

    def nap() -> None:
        calls.append(time.perf_counter())
        time.sleep(0.01)

    best = best_time(nap, 2, at_least=0.1)
    assert 3 <= len(calls) <= 10  # 2 calls are not enough; ten naps add up to 0.1 s
    assert 0.01 <= best < 0.05
    calls.clear()
    best_time(nap, 3)
    assert len(calls) == 3


def test_the_startup_floor_child_imports_the_libraries_and_reports() -> None:
    code = _LIBRARY_IMPORTS.replace(
        f"print({MARKER!r})",
        "import sys\n"
        "print(sorted(m for m in ('torch', 'spacy', 'numba', 'nltk', 'scipy.stats') "
        "if m in sys.modules))\n"
        f"print({MARKER!r})",
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[-1] == MARKER
    # NLTK is imported as brittle imports it: without scipy.stats
    assert lines[-2] == "['nltk', 'numba', 'spacy', 'torch']"


def test_grading_cost_is_the_difference_but_never_below_the_floor() -> None:
    from brittle.engine.bench.stages import GRADING_FLOOR, grading_cost

    assert grading_cost(2.0, 2.5) == pytest.approx(0.5)
    # equal or faster graded runs are noise: the floor, not a division by nothing
    assert grading_cost(1.9, 1.9) == pytest.approx(GRADING_FLOOR * 1.9)
    assert grading_cost(1.9, 1.7) == pytest.approx(GRADING_FLOOR * 1.9)
    assert 16 / grading_cost(1.9, 1.7) < 16 / 1.9 / GRADING_FLOOR + 1e-9


def test_mean_drop_by_takes_each_sentences_best_within_the_limit() -> None:
    from brittle.engine.bench.stages import mean_drop_by

    records = [
        ((1, 0.1, 0.02), (5, 0.4, 0.05), (9, 1.5, 0.08)),
        ((3, 0.2, 0.01),),
        (),  # nothing admitted: 0 throughout
    ]
    assert mean_drop_by(records, 0.05, axis=1) == 0.0
    assert mean_drop_by(records, 0.5, axis=1) == pytest.approx((0.05 + 0.01) / 3)
    assert mean_drop_by(records, 2.0, axis=1) == pytest.approx((0.08 + 0.01) / 3)
    assert mean_drop_by(records, 4, axis=0) == pytest.approx((0.02 + 0.01) / 3)
    assert mean_drop_by([], 1.0, axis=1) == 0.0


def test_the_anytime_stage_searches_the_recorded_every_sense_pool() -> None:
    from brittle.data import bench_pool_tables_path, default_treebank_path
    from brittle.engine.attack import AttackConfig
    from brittle.engine.bench.stages import attack_workload, workload_of
    from brittle.engine.core.conllu import read_conllu

    sentences = read_conllu(default_treebank_path())[:20]
    method, options, per_position = attack_workload(sentences, every_sense=True)
    assert (method, options, per_position) == (
        "recorded", (f"tables={bench_pool_tables_path()}",), 20,
    )  # fmt: skip
    config = AttackConfig(treebank="t", probes=("p",), method=method, generator_options=options)
    assert "every-sense pool recorded" in workload_of(config)
    method, options, per_position = attack_workload(sentences)
    config = AttackConfig(treebank="t", probes=("p",), method=method, generator_options=options)
    assert "data/bench-tables.json" in workload_of(config) and per_position == 5
    # sentences the files do not hold: coPOS as it stands, with the pool's options
    other = [s for s in read_conllu(default_treebank_path())[64:65]]
    if other:
        method, options, _ = attack_workload(other, every_sense=True)
        assert method == "copos" and "sense=all" in options
