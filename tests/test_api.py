"""The Python API: the README's example runs, and gives the commands' rows.

The example of the README's "Python API" section (the block that starts with ``import
brittle``) is executed as it stands, in a directory holding ``treebank.conllu`` (the
built-in treebank) and ``probes/root`` (a real root probe); the commands the README
gives as its equivalent (the ``bash`` block that follows) run in the same directory,
and their files must hold the same rows.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

import brittle
from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
TREEBANK = ROOT / "data" / "default.conllu"


def api_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Python API\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def example() -> str:
    """The README's Python example of the API."""
    blocks = re.findall(r"```python\n(.*?)```", api_section(), re.S)
    chosen = [b for b in blocks if b.startswith("import brittle\n")]
    assert len(chosen) == 1, "the Python API section has one example starting `import brittle`"
    return chosen[0]


def commands() -> dict[str, list[str]]:
    """The commands the README gives as the example's equivalent, by name."""
    blocks = re.findall(r"```bash\n(.*?)```", api_section(), re.S)
    assert len(blocks) == 1
    lines = [shlex.split(line) for line in blocks[0].splitlines() if line.strip()]
    assert all(words[0] == "brittle" for words in lines)
    return {words[1]: words[1:] for words in lines}


def without_seconds(rows: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


@pytest.mark.needs("spacy-model", "glove")
@pytest.mark.slow
def test_the_readme_example_gives_the_rows_of_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, static_probe: Path
) -> None:
    pytest.importorskip("pandas", reason="pandas is a dev dependency (brittle[pandas])")
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    shutil.copy(TREEBANK, tmp_path / "treebank.conllu")
    shutil.copytree(static_probe, tmp_path / "probes" / "root")
    names: dict[str, object] = {}
    exec(compile(example(), "README.md", "exec"), names)
    assert set(names) >= {"result", "frame", "perturbed", "scores"}
    # out= not given: nothing written here
    assert {p.name for p in tmp_path.iterdir()} <= {"treebank.conllu", "probes", "home"}
    attacked = names["result"]
    assert isinstance(attacked, brittle.AttackResults) and attacked.out is None
    assert len(attacked.rows) == 5

    runner = CliRunner()
    for name, args in commands().items():
        done = runner.invoke(main, args, catch_exceptions=False)
        assert done.exit_code == 0, (name, done.output[-2000:])

    cli_rows = [json.loads(line) for line in (tmp_path / "attack/results.jsonl").open()]
    api_rows = [row.to_json() for row in attacked.rows]
    assert without_seconds(api_rows) == without_seconds(cli_rows)
    summary = json.loads((tmp_path / "attack/summary.json").read_text())
    assert attacked.summary["tasks"] == summary["tasks"]
    frame = names["frame"]
    assert list(frame["sent_id"]) == [r["sent_id"] for r in cli_rows]  # type: ignore[index]

    perturbed = names["perturbed"]
    assert isinstance(perturbed, brittle.PerturbResults)
    report = json.loads((tmp_path / "perturbed.json").read_text())
    assert [r.to_json() for r in perturbed.rows] == report["sentences"]
    assert dict(perturbed.summary) == report["methods"]["jabberwocky"]
    written = read_conllu(tmp_path / "perturbed.conllu")
    assert [s.forms for s in perturbed.sentences] == [s.forms for s in written]

    scores = names["scores"]
    assert isinstance(scores, brittle.EvaluationResults)
    saved = json.loads((tmp_path / "scores.json").read_text())
    assert {p.name: p.metrics for p in scores.rows} == {
        n: p["metrics"] for n, p in saved["probes"].items()
    }
    assert scores.summary["baselines"] == saved["baselines"]


def test_out_writes_the_commands_files(tmp_path: Path) -> None:
    out = tmp_path / "o.conllu"
    done = brittle.perturb(
        TREEBANK, method="shuffle", parser="gold", quality=False, limit=3, out=out,
        report=tmp_path / "r.json",
    )  # fmt: skip
    assert done.out == out and done.html is None
    assert [s.sent_id for s in read_conllu(out)] == [s.sent_id for s in done.sentences]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["sentences"] == [r.to_json() for r in done.rows]


def test_options_are_checked_as_the_commands_check_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--method"):
        brittle.perturb(TREEBANK)
    with pytest.raises(ConfigError, match="with out"):
        brittle.perturb(TREEBANK, method="shuffle", report=tmp_path / "r.json")
    with pytest.raises(ConfigError, match="budget"):
        brittle.attack(TREEBANK, ["p"], budget=0)
    with pytest.raises(ConfigError, match="nothing to do"):
        brittle.evaluate(TREEBANK, baselines=False)
    assert not any(tmp_path.iterdir())


def run_python(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_import_brittle_loads_the_api_only_when_used() -> None:
    code = (
        "import sys, brittle\n"
        "print('brittle.api' in sys.modules, 'numpy' in sys.modules)\n"
        "attack = brittle.attack\n"
        "import brittle.api\n"
        "print(attack is brittle.api.attack, 'perturb' in dir(brittle))\n"
    )
    assert run_python(code) == ["False", "False", "True", "True"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        brittle.nope  # type: ignore[attr-defined]  # noqa: B018


def test_to_pandas_without_pandas_says_how_to_get_it() -> None:
    code = (
        "from brittle.api import EvaluationResults\n"
        "from brittle.engine.core.errors import ResourceMissingError\n"
        "from brittle.engine.core.imports import hidden\n"
        "from brittle.engine.evaluate.evaluation import EvaluationReport\n"
        "report = EvaluationReport('t.conllu', 0, (), {}, ())\n"
        "results = EvaluationResults(report, (), {}, {}, None)\n"
        "with hidden('pandas'):\n"
        "    try:\n"
        "        results.to_pandas()\n"
        "    except ResourceMissingError as err:\n"
        "        print(str(err).replace(' ', '_'))\n"
    )
    (message,) = run_python(code)
    assert "pandas" in message and "brittle[pandas]" in message
