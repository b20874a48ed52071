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
