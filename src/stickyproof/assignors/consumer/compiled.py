"""The compiled KIP-848 ports, used only while they are the ports on disk.

setup.py compiles each port (``PORTS``) with Cython in pure-Python mode as ``_compiled_<name>``,
from a copy of ``<name>.py`` that records the sha256 of the ``.py`` and of ``ports.pxd`` (the C
declarations every port is compiled with; ``SOURCE_SHA256``). The ``.py`` stays the one source: a
compiled module runs only while that hash is that of the ``.py`` and ``ports.pxd`` on disk, so a
port edited after the build runs as pure Python (said once, in one log line) instead of running
stale.
Without a build (no Cython, no C compiler) the pure ports run and nothing is said: the install said
so already.

    port_module(name, compiled=True) -> module     ports_status() -> {name: status}
    ports_summary() -> "compiled" | "pure Python (not built)" | "compiled except ..." (stickyproof --version)
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from functools import cache
from pathlib import Path
from types import ModuleType

__all__ = ["PORTS", "COMPILED_PREFIX", "port_module", "ports_status", "ports_summary", "compiled_ports_in_use",
           "source_sha256"]

PORTS = ("range", "uniform_homogeneous", "uniform_heterogeneous", "uniform_heterogeneous_3_9")
COMPILED_PREFIX = "_compiled_"

_log = logging.getLogger("stickyproof")


def source_sha256(name: str) -> str:
    """The sha256 of port ``name``'s ``.py`` and ``ports.pxd`` (the C declarations it is compiled
    with) as they are on disk now."""
    here = Path(__file__).parent
    return hashlib.sha256((here / f"{name}.py").read_bytes() + (here / "ports.pxd").read_bytes()).hexdigest()


@cache
def _compiled(name: str) -> tuple[ModuleType | None, str]:
    """Port ``name``'s compiled module if it is built from the ``.py`` on disk, with its status:
    ``compiled``, ``not built`` or ``stale (...)``."""
    try:
        module = importlib.import_module(f".{COMPILED_PREFIX}{name}", __package__)
    except ImportError:
        return None, "not built"
    if str(getattr(module, "__file__", "")).endswith(".py"):  # a stray copy, not a build
        return None, "not built"
    if getattr(module, "SOURCE_SHA256", None) != source_sha256(name):
        return None, f"stale: {name}.py or ports.pxd changed after the build"
    return module, "compiled"


@cache
def ports_status() -> dict[str, str]:
    """Each port's status; logs one warning line, once, if any compiled port is stale."""
    status = {name: _compiled(name)[1] for name in PORTS}
    stale = [name for name, s in status.items() if s.startswith("stale")]
    if stale:
        _log.warning("stickyproof: compiled KIP-848 ports out of date (%s.py or ports.pxd edited after the build): running them as "
                     "pure Python; rebuild with pip install -e . (or setup.py build_ext --inplace, setuptools >= 77)",
                     ".py, ".join(stale))
    return status


def ports_summary() -> str:
    """One phrase for ``stickyproof --version``: which ports run compiled."""
    status = ports_status()
    if all(s == "compiled" for s in status.values()):
        return "compiled"
    if all(s == "not built" for s in status.values()):
        return "pure Python (not built)"
    return "compiled except " + ", ".join(f"{name} ({s})" for name, s in status.items() if s != "compiled")


def compiled_ports_in_use() -> bool:
    """Whether every port runs compiled."""
    return all(s == "compiled" for s in ports_status().values())


@cache
def port_module(name: str, *, compiled: bool = True) -> ModuleType:
    """Port ``name``: the compiled module when ``compiled`` and it is current, else the pure one
    (cached: the assignors look their builder up on every call)."""
    if name not in PORTS:
        raise KeyError(name)
    if compiled:
        ports_status()
        module = _compiled(name)[0]
        if module is not None:
            return module
    return importlib.import_module(f".{name}", __package__)
