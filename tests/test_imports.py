"""Importing a library with one of its optional extras hidden."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from brittle.engine.core.imports import hidden


@pytest.fixture
def package(tmp_path: Path) -> Iterator[str]:
    """A package ``extra_pkg`` (with a submodule) and a module that uses it if it can."""
    root = tmp_path / "extra_pkg"
    root.mkdir()
    (root / "__init__.py").write_text("VALUE = 1\n")
    (root / "sub.py").write_text("VALUE = 2\n")
    (tmp_path / "user_mod.py").write_text(
        "try:\n    import extra_pkg.sub\n    HAS = True\nexcept ImportError:\n    HAS = False\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield "extra_pkg"
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("extra_pkg", "extra_pkg.sub", "user_mod"):
            sys.modules.pop(name, None)


def test_a_hidden_module_cannot_be_imported_inside_the_block(package: str) -> None:
    with hidden(package):
        import user_mod

        assert user_mod.HAS is False
        with pytest.raises(ModuleNotFoundError, match="hidden"):
            __import__(f"{package}.sub")
    assert package not in sys.modules
    assert __import__(f"{package}.sub").sub.VALUE == 2  # imports normally afterwards


def test_an_imported_module_is_never_hidden(package: str) -> None:
    __import__(package)
    with hidden(package):
        assert __import__(f"{package}.sub").sub.VALUE == 2


def test_inflections_load_without_importing_spacy() -> None:
    code = (
        "import sys\n"
        "from brittle.search.generators.inflection import inflect_lemma, load_inflections\n"
        "load_inflections()\n"
        "print('spacy' in sys.modules, inflect_lemma('run', 'VBD'))\n"
        "import spacy\n"
        "print('spacy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "ran", "True"]
