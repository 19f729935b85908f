"""The data home, the status record every resource reports, and helpers the resources share.

Nothing here knows about a particular resource. The data home is where brittle writes
(``$BRITTLE_HOME``, default ``~/.cache/brittle``); :class:`ResourceStatus` is what
``brittle resources`` shows for one resource; :class:`Resource` ties a resource's name
to its status check and its one-time provisioning step.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

from brittle.engine.core.errors import ResourceMissingError

log = logging.getLogger(__name__)

#: Environment variable that moves the data home.
HOME_ENV = "BRITTLE_HOME"

#: The command that does every one-time provisioning step.
PROVISION_COMMAND = "brittle resources --provision"

_HUB_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")

#: Serialises every locate-install-load sequence of every resource in this process.
LOCK = threading.RLock()


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ResourceStatus:
    """Where one resource stands, as found by looking at files only.

    ``available`` is true when the resource can be used now; ``needs_provision`` marks
    one that is usable but still needs its one-time step (which runs on first use, or
    up front with ``fix``). ``location`` is the file or directory used (or the places
    looked when missing), ``detail`` a short human explanation, and ``fix`` the command
    to run (empty when nothing needs doing).
    """

    name: str
    available: bool
    location: str
    detail: str
    fix: str = ""
    needs_provision: bool = False

    @property
    def state(self) -> str:
        """``"ok"``, ``"provision"`` or ``"missing"``."""
        if not self.available:
            return "missing"
        return "provision" if self.needs_provision else "ok"

    def to_dict(self) -> dict[str, str | bool]:
        """A JSON-ready mapping (with ``state``)."""
        out = asdict(self)
        out["state"] = self.state
        return out


def missing_status(name: str, err: ResourceMissingError) -> ResourceStatus:
    """The status of resource ``name`` that could not be found, from the locator's error."""
    return ResourceStatus(
        name=name,
        available=False,
        location="; ".join(err.looked),
        detail=f"{err.resource} is not available",
        fix=err.fix,
    )


@dataclass(frozen=True)
class Resource:
    """One resource as ``brittle resources`` sees it.

    ``status`` looks at files only (nothing is loaded, installed or converted);
    ``provision`` does the resource's one-time work, raising
    :class:`~brittle.engine.core.errors.ResourceMissingError` when it cannot, and is
    ``None`` for resources that need none.
    """

    name: str
    status: Callable[[], ResourceStatus]
    provision: Callable[[], None] | None = None


# --------------------------------------------------------------------------- data home


def data_home() -> Path:
    """The directory brittle writes its data into: ``$BRITTLE_HOME`` or ``~/.cache/brittle``.

    The path is absolute; it is not created here.
    """
    env = os.environ.get(HOME_ENV)
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "brittle"
    return Path(os.path.abspath(base))


# --------------------------------------------------------------------------- helpers


def same_path(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name the same file once links are resolved."""
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def package_dir(module: str) -> Path | None:
    """The directory of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin:
        return Path(spec.origin).parent
    return None


def importable(module: str) -> bool:
    """Whether ``module`` could be imported (found without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def distribution_version(dist: str) -> str:
    """The installed version of distribution ``dist``, or ``"unknown"``."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def notify(message: str) -> None:
    """Tell the user about slow one-time work (on stderr) and log it."""
    log.info(message)
    try:
        from rich.console import Console

        Console(stderr=True, highlight=False).print(message)
    except ImportError:  # pragma: no cover - rich is a dependency
        print(message, file=sys.stderr)


@contextlib.contextmanager
def hf_offline() -> Iterator[None]:
    """Hub offline mode for the block: no network access, local files only; then restore.

    Sets ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` and the flag
    ``huggingface_hub`` computed from them when it was imported, so the process is not
    left offline afterwards. Use it around loads meant to come from local directories,
    together with ``local_files_only=True``.
    """
    hub_constants: ModuleType | None = None
    with contextlib.suppress(ImportError):
        hub_constants = importlib.import_module("huggingface_hub.constants")
    saved_env = {name: os.environ.get(name) for name in _HUB_OFFLINE_VARS}
    saved_flag = getattr(hub_constants, "HF_HUB_OFFLINE", None)
    os.environ.update(dict.fromkeys(_HUB_OFFLINE_VARS, "1"))
    if hub_constants is not None:
        vars(hub_constants)["HF_HUB_OFFLINE"] = True
    try:
        yield
    finally:
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if hub_constants is not None:
            vars(hub_constants)["HF_HUB_OFFLINE"] = saved_flag


def hub_offline_requested() -> bool:
    """Whether ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set to a true value."""
    return any(
        os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
        for name in _HUB_OFFLINE_VARS
    )
