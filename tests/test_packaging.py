"""The released package: every module and data file of the checkout, and a wheel that
works on its own.

The checkout is the package ``brittle`` (``package-dir = "."``), so ``setup.py`` finds
the sub-packages itself (setuptools' own discovery would name them ``engine``, ``cli``,
...). These tests check that it finds every one, then build the wheel of a clean copy,
install it into a fresh virtual environment and run the ``brittle`` it installs, from
a directory away from the checkout: ``--help``, ``list``, ``perturb``, ``attack`` and
``demo``. ``make test`` runs them, and so does ``.ci/run``.
"""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from brittle.engine.core.resources import check_all

ROOT = Path(__file__).resolve().parents[1]
#: Folders of the checkout that are not part of the package.
NOT_PACKAGED = {"tests", "bench", "build", "docs", "reproduce"}
#: Files of the package folder that are not part of the package.
NOT_SHIPPED = {"setup.py"}


def package_dirs() -> list[Path]:
    """Every folder of the checkout that is a Python package (has ``__init__.py``)."""
    found = []
    for init in ROOT.rglob("__init__.py"):
        parts = init.relative_to(ROOT).parts
        if parts[0].startswith(".") or parts[0] in NOT_PACKAGED:
            continue
        found.append(init.parent)
    return found


def not_source(directory: str, names: list[str]) -> set[str]:
    """What a clean copy of the checkout leaves out (``shutil.copytree``'s ``ignore``)."""
    if Path(directory) != ROOT:
        return {n for n in names if n == "__pycache__"}
    return {n for n in names if n.startswith(".") or n in NOT_PACKAGED or "egg-info" in n}


def shipped(path: Path) -> bool:
    """Whether the file is part of the package: a module, or data a command reads."""
    if path.parent == ROOT and path.name in NOT_SHIPPED:
        return False
    data = path.parent.name == "data" and path.suffix in (".conllu", ".json", ".cfg")
    return path.suffix == ".py" or path.name in ("report.css", "report.js", "py.typed") or data


def dotted(directory: Path) -> str:
    relative = directory.relative_to(ROOT).parts
    return ".".join(("brittle", *relative))


def test_setup_finds_every_package_of_the_checkout() -> None:
    found = runpy.run_path(str(ROOT / "setup.py"), run_name="brittle_setup")["packages"]()
    assert sorted(found) == sorted(dotted(d) for d in package_dirs())


def build_wheel(tmp_path: Path) -> Path:
    """The wheel of a clean copy of the checkout, built into ``tmp_path``."""
    source = tmp_path / "brittle"  # a clean copy: no build/ left from an earlier build
    shutil.copytree(ROOT, source, ignore=not_source)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "--wheel-dir", str(tmp_path), str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if built.returncode != 0:
        pytest.fail(f"the wheel does not build:\n{built.stderr[-2000:]}")
    return next(tmp_path.glob("brittle-*.whl"))


def fresh_venv(path: Path, wheel: Path) -> Path:
    """A new virtual environment at ``path`` with ``wheel`` installed; its ``bin``.

    brittle's dependencies are not downloaded again: a ``.pth`` file puts this
    environment's site-packages after the new one's. Only the paths are added (the
    ``.pth`` files there are not run), so the checkout's editable install of brittle
    stays out, and ``import brittle`` finds the wheel's copy.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "brittle_dependencies.pth").write_text("\n".join(sorted(here)) + "\n")
    return path / "bin"


@pytest.mark.slow
def test_the_installed_wheel_runs_without_the_checkout(tmp_path: Path, static_probe: Path) -> None:
    """The ``brittle`` a fresh environment gets from the wheel runs --help, list,
    perturb, attack (report.html and its assets included) and the demo."""
    wheel = build_wheel(tmp_path)
    bin_dir = fresh_venv(tmp_path / "venv", wheel)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    here = tmp_path / "elsewhere"  # the working directory holds no brittle folder
    here.mkdir()

    def brittle(*args: str, own_home: bool = True) -> str:
        """``brittle ARGS`` from the fresh environment, in a data home of its own (or,
        ``own_home`` False, in the one this environment uses)."""
        home = {"BRITTLE_HOME": str(tmp_path / "home")} if own_home else {}
        done = subprocess.run(
            [str(bin_dir / "brittle"), *args],
            cwd=here, env={**env, **home}, capture_output=True, text=True, check=False,
            timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, (args, done.stdout[-1500:], done.stderr[-1500:])
        return done.stdout

    located = subprocess.run(
        [str(bin_dir / "python"), "-c", "import brittle; print(brittle.__file__)"],
        cwd=here, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert located.startswith(str(tmp_path / "venv")), located  # the wheel, not the checkout
    treebank = Path(located).parent / "data" / "default.conllu"

    assert "attack" in brittle("--help")
    assert "tree" in brittle("list", "presets")
    brittle(
        "perturb", str(treebank), "--method", "shuffle", "--parser", "gold", "--limit", "3",
        "--no-quality", "--quiet", "--out", str(tmp_path / "o.conllu"),
    )  # fmt: skip
    assert (tmp_path / "o.conllu").read_text().count("# sent_id") == 3
    attack = tmp_path / "attack"
    brittle(
        "attack", str(treebank), "--probe", str(static_probe), "--method", "shuffle",
        "--search", "sample", "--parser", "gold", "--limit", "3", "--quiet",
        "--out", str(attack),
    )  # fmt: skip
    assert len((attack / "results.jsonl").read_text().splitlines()) == 3
    page = (attack / "report.html").read_text()
    css = (ROOT / "engine" / "reports" / "report.css").read_text().strip()
    assert css.splitlines()[0] in page  # the style came from the wheel's package data

    missing = [s.name for s in check_all() if s.state == "missing"]
    if {"encoder", "spacy", "wordnet"} & set(missing):
        pytest.skip(f"the demo needs offline resources that are missing: {missing}")
    # The demo in the data home `make` provisioned: its probes are trained once, there.
    demo = tmp_path / "demo"
    shown = brittle("demo", "--limit", "2", "--quiet", "--out", str(demo), own_home=False)
    assert "Mean worst-case drop by validity preset" in shown
    assert (demo / "report.html").exists() and (demo / "tree" / "summary.json").exists()


@pytest.mark.slow
def test_the_wheel_holds_every_module_and_data_file(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = set()
    for directory in package_dirs():
        prefix = dotted(directory).replace(".", "/")
        for path in directory.iterdir():
            if shipped(path):
                wanted.add(f"{prefix}/{path.name}")
    missing = sorted(wanted - names)
    assert not missing, f"the wheel lacks {missing[:10]}"
    assert "brittle/cli/main.py" in names and "brittle/data/default.conllu" in names
    assert "brittle/api.py" in names and "brittle/setup.py" not in names
