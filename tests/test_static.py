"""Static hygiene of the package: no undefined names, no stale __all__ entries, no unused imports.

pyflakes catches what a test run only finds when the broken line happens to execute (a name
removed with dead code but still used on a rarely taken branch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pyflakes_api = pytest.importorskip("pyflakes.api", reason="pyflakes is a dev dependency (pip install -e '.[dev]')")
from pyflakes.reporter import Reporter  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src" / "stickyproof"


def test_pyflakes_finds_nothing_in_the_package():
    import io

    out, err = io.StringIO(), io.StringIO()
    count = pyflakes_api.checkRecursive([str(SRC)], Reporter(out, err))
    assert count == 0, out.getvalue() + err.getvalue()


# ------------------------------------------------------------------------------------------
# Exports (Hypothesis's _check_exports, as a test) and the error tree


def _modules():
    import importlib
    import pkgutil

    import stickyproof

    yield "stickyproof", stickyproof, True
    for info in pkgutil.walk_packages(stickyproof.__path__, "stickyproof."):
        if info.name.endswith(".__main__"):
            continue
        yield info.name, importlib.import_module(info.name), info.ispkg


def test_every_all_lists_only_names_that_exist():
    problems = []
    for name, module, _ in _modules():
        missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
        if missing:
            problems.append(f"{name}.__all__ names what the module does not define: {missing}")
    assert not problems, "\n".join(problems)


def test_every_package_exports_exactly_its_public_names():
    """A package's ``__all__`` is its public API: every public name it binds from its own modules is
    listed, and nothing else is (a name imported from another room is not re-exported)."""
    import types

    problems = []
    for name, module, is_package in _modules():
        if not is_package:
            continue
        exported = getattr(module, "__all__", None)
        if exported is None:
            problems.append(f"{name}: a package without __all__")
            continue
        own = {
            n
            for n, value in vars(module).items()
            if not n.startswith("_")
            and not isinstance(value, types.ModuleType)
            and str(getattr(value, "__module__", "")).startswith(name)
        }
        unlisted = sorted(own - set(exported))
        if unlisted:
            problems.append(f"{name}: public names missing from __all__: {unlisted}")
    assert not problems, "\n".join(problems)


def test_every_stickyproof_error_is_drawn_in_the_error_tree():
    """errors.py draws the whole family; a subclass defined anywhere in the package appears in that
    tree under its own name, and says when it is raised."""
    import stickyproof.errors as errors

    for _ in _modules():  # import everything, so every subclass is defined
        pass

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    tree = errors.__doc__ or ""
    family = sorted({c for c in subclasses(errors.StickyproofError) if c.__module__.startswith("stickyproof")}, key=lambda c: c.__name__)
    assert family, "no subclass of StickyproofError found"
    undrawn = [f"{c.__module__}.{c.__name__}" for c in family if f" {c.__name__} " not in tree]
    assert not undrawn, f"errors.py's tree does not draw: {undrawn}"
    undocumented = [c.__name__ for c in family if not (c.__doc__ or "").strip()]
    assert not undocumented, f"errors without a docstring saying when they are raised: {undocumented}"
