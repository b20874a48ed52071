"""ARCHITECTURE "the one rule": the oracle never imports the code it grades.

Scans every module under src/stickyproof/oracle/ with ``ast``: no import of
``stickyproof.assignors`` or ``stickyproof.leader`` (absolute or relative, at any depth, inside
functions too), and OR-Tools only in the modules that own a solver (STYLE_EXAMPLES §5 rule d).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ORACLE = Path(__file__).resolve().parents[1] / "src" / "stickyproof" / "oracle"
FORBIDDEN = ("stickyproof.assignors", "stickyproof.leader")
ORTOOLS_ALLOWED = {"flow.py", "optimal.py"}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an ``import``/``from ... import`` names, resolved to an absolute dotted name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = "stickyproof.oracle"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                prefix = ".".join(base)
                module = f"{prefix}.{node.module}" if node.module else prefix
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return out


def oracle_modules() -> list[Path]:
    return sorted(ORACLE.rglob("*.py"))


def test_the_scan_sees_relative_imports():
    sample = ORACLE / "flow.py"
    names = {name for _, name in imported_modules(sample)}
    assert "stickyproof.oracle.aggregate" in names and "stickyproof.errors" in names


def test_the_scan_catches_a_forbidden_import_hidden_in_a_function(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def f():\n    from ..assignors.sticky import x\n    import stickyproof.leader as l\n")
    names = [name for _, name in imported_modules(sneaky)]
    assert "stickyproof.assignors.sticky" in names and "stickyproof.leader" in names


@pytest.mark.parametrize("path", oracle_modules(), ids=lambda p: p.name)
def test_oracle_never_imports_the_assignors_or_the_leader(path):
    for line, name in imported_modules(path):
        assert not any(name == f or name.startswith(f + ".") for f in FORBIDDEN), f"{path.name}:{line} imports {name}"


@pytest.mark.parametrize("path", oracle_modules(), ids=lambda p: p.name)
def test_ortools_only_in_the_solver_modules(path):
    if path.name in ORTOOLS_ALLOWED:
        return
    for line, name in imported_modules(path):
        assert not name.startswith("ortools"), f"{path.name}:{line} imports {name}"
