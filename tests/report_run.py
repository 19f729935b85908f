"""A small real attack for the report tests: probes trained, searched, reports written.

Three linear probes (structural distance, depth, POS) are trained for two epochs on the
built-in treebank over ``random:16`` word vectors (no model to load), and six of its
sentences are attacked with Jabberwocky pseudowords under the gold parser, all through
the command line in-process, as a user would run it. The probes are weak, which is what
a report must show: wrong edges, lost edges, flipped tags.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from brittle.cli.main import main

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
#: The probes of the run, by task.
TASKS = ("distance", "depth", "pos")
#: Sentences attacked.
SENTENCES = 6


def _run(*args: str) -> None:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def attack_with_probes(root: Path) -> Path:
    """Train the probes under ``root`` and attack into ``root/attack``; that directory."""
    previous = os.environ.get("BRITTLE_HOME")
    os.environ["BRITTLE_HOME"] = str(root / "home")
    try:
        probes = []
        for task in TASKS:
            out = root / f"probe-{task}"
            _run(
                "train-probe", str(TREEBANK), "--dev", str(TREEBANK), "--out", str(out),
                "--model", "random:16", "--task", task, "--epochs", "2", "--threads", "1",
                "--quiet",
            )  # fmt: skip
            probes += ["--probe", str(out)]
        out = root / "attack"
        _run(
            "attack", str(TREEBANK), *probes, "--method", "jabberwocky", "--parser", "gold",
            "--search", "greedy", "--limit", str(SENTENCES), "--out", str(out), "--quiet",
        )  # fmt: skip
        return out
    finally:
        if previous is None:
            os.environ.pop("BRITTLE_HOME", None)
        else:
            os.environ["BRITTLE_HOME"] = previous


def compare_methods_page(out: Path) -> Path:
    """Run compare-methods (shuffle, gold parser, no quality models) into ``out``; its
    HTML page."""
    args = [
        "compare-methods", str(TREEBANK), "--methods", "shuffle,neighbour-flip",
        "--budgets", "1,2", "--parser", "gold", "--limit", "6", "--candidates", "4",
        "--no-quality", "--out", str(out), "--quiet",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out / "compare-methods.html"


#: Sentences perturbed for the perturb page.
PERTURB_SENTENCES = 6


def perturb_page(out: Path, *, parser: str = "spacy", method: str = "jabberwocky") -> Path:
    """Run perturb (Jabberwocky pseudowords or ``method``, ``parser``, no quality models)
    on the built-in treebank into ``out/perturb.{conllu,json,html}``; the HTML page."""
    out.mkdir(parents=True, exist_ok=True)
    args = [
        "perturb", str(TREEBANK), "--method", method, "--budget", "2",
        "--candidates", "6", "--max-syntax-distance", "0.3", "--parser", parser,
        "--limit", str(PERTURB_SENTENCES), "--no-quality", "--seed", "0",
        "--out", str(out / "perturb.conllu"), "--report", str(out / "perturb.json"),
        "--html", str(out / "perturb.html"), "--quiet",
    ]  # fmt: skip
    _run(*args)
    return out / "perturb.html"
