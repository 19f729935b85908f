"""The released package holds every module and data file the checkout has.

``pyproject.toml`` lists the packages by hand (the checkout is the package ``brittle``,
``package-dir = "."``, which setuptools' discovery cannot map), so a new sub-package
left out of the list would be missing from the wheel while the editable install of
``make`` still finds it. These tests build the wheel and compare.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Folders of the checkout that are not part of the package.
NOT_PACKAGED = {"tests", "bench", "build", "docs", "reproduce"}


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
    data = path.parent.name == "data" and path.suffix == ".conllu"
    return path.suffix == ".py" or path.name in ("report.css", "report.js", "py.typed") or data


def dotted(directory: Path) -> str:
    relative = directory.relative_to(ROOT).parts
    return ".".join(("brittle", *relative))


def test_every_package_of_the_checkout_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {dotted(d) for d in package_dirs()}
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - on_disk == set(), "these listed packages do not exist"


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


@pytest.mark.slow
def test_the_installed_wheel_runs_without_the_checkout(tmp_path: Path) -> None:
    """The wheel installed on its own (its dependencies from this environment's
    site-packages, not the checkout's editable install) runs --help, list and perturb."""
    wheel = build_wheel(tmp_path)
    target = tmp_path / "installed"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
         str(target), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    site_packages = [p for p in sys.path if p.endswith("site-packages")]
    env = {
        **os.environ,
        # -S: no site processing, so no .pth file (the editable install's among them)
        "PYTHONPATH": os.pathsep.join([str(target), *site_packages]),
        "BRITTLE_HOME": str(tmp_path / "home"),
    }
    treebank = target / "brittle" / "data" / "default.conllu"
    here = tmp_path / "elsewhere"  # the working directory holds no brittle folder
    here.mkdir()
    calls = {
        "help": ["--help"],
        "list": ["list", "presets"],
        "perturb": ["perturb", str(treebank), "--method", "shuffle", "--parser", "gold",
                    "--limit", "3", "--no-quality", "--out", str(tmp_path / "o.conllu")],
    }  # fmt: skip
    for name, args in calls.items():
        code = f"from brittle.cli.main import main; main({args!r})"
        result = subprocess.run(
            [sys.executable, "-S", "-c", code],
            cwd=here, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert result.returncode == 0, (name, result.stdout[-1500:], result.stderr[-1500:])
    located = subprocess.run(
        [sys.executable, "-S", "-c", "import brittle; print(brittle.__file__)"],
        cwd=here, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert located.startswith(str(target)), located  # the installed copy, not the checkout
    assert (tmp_path / "o.conllu").read_text().count("# sent_id") == 3


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
