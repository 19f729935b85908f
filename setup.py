"""Builds the package ``brittle`` from this checkout; ``pyproject.toml`` holds the rest.

The checkout is the package (``package-dir = {"brittle" = "."}``), which setuptools'
own discovery cannot map: it would name the sub-packages ``engine``, ``cli``, ... So
they are found here, every folder with an ``__init__.py`` but those that are not part
of the package, and named under ``brittle``: a new sub-package needs no edit. This
script sits in the package's folder too, and is left out of it.
"""

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent

#: Folders of the checkout that are not part of the package.
NOT_PACKAGED = ("tests", "bench", "build", "docs", "reproduce")


def packages() -> list[str]:
    """``brittle`` and each of its sub-packages, found in the checkout."""
    excluded = [pattern for name in NOT_PACKAGED for pattern in (name, f"{name}.*")]
    found = find_packages(str(HERE), exclude=excluded)
    return ["brittle", *(f"brittle.{name}" for name in found)]


class BuildPy(build_py):
    """``build_py`` without this script among the package's modules."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        found = super().find_package_modules(package, package_dir)
        return [m for m in found if Path(m[2]).resolve() != Path(__file__).resolve()]


if __name__ == "__main__":
    setup(packages=packages(), cmdclass={"build_py": BuildPy})
