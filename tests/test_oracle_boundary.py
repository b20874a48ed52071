"""ARCHITECTURE "the one rule": the oracle never imports the code it grades.

Scans every module under src/stickyproof/oracle/ (subpackages included) with ``ast``: no import
of ``stickyproof.assignors`` or ``stickyproof.leader`` (absolute or relative, at any depth,
inside functions too), OR-Tools only in the modules that own a solver and Z3 only in the
invariants' Z3 boundary. The ``stickyproof.oracle`` façade loads
neither OR-Tools nor Z3 on import.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ORACLE = SRC / "stickyproof" / "oracle"
FORBIDDEN = ("stickyproof.assignors", "stickyproof.leader")
# the solver modules: contracts (CP-SAT contract optima), r33 (R33's own optimum), consumer and
# consumer_staged (the consumer-group optimum: one flow, then CP-SAT tier by tier)
ORTOOLS_ALLOWED = {"flow.py", "optimal.py", "contracts.py", "r33.py", "consumer.py", "consumer_staged.py"}
Z3_ALLOWED = {"invariants/z3_datalog.py"}


def package_of(path: Path) -> str:
    """The dotted package a module under src/ belongs to (``stickyproof.oracle`` for files elsewhere)."""
    try:
        parts = path.resolve().relative_to(SRC).parts
    except ValueError:
        return "stickyproof.oracle"
    return ".".join(parts[:-1])


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an ``import``/``from ... import`` names, resolved to an absolute dotted name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = package_of(path)
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


def rel(path: Path) -> str:
    return path.relative_to(ORACLE).as_posix()


def test_the_scan_sees_relative_imports():
    sample = ORACLE / "flow.py"
    names = {name for _, name in imported_modules(sample)}
    assert "stickyproof.oracle.aggregate" in names and "stickyproof.errors" in names


def test_the_scan_resolves_relative_imports_inside_a_subpackage():
    names = {name for _, name in imported_modules(ORACLE / "invariants" / "balance.py")}
    assert {"stickyproof.errors", "stickyproof.oracle.result", "stickyproof.oracle.invariants.facts"} <= names


def test_the_scan_catches_a_forbidden_import_hidden_in_a_function(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def f():\n    from ..assignors.sticky import x\n    import stickyproof.leader as l\n")
    names = [name for _, name in imported_modules(sneaky)]
    assert "stickyproof.assignors.sticky" in names and "stickyproof.leader" in names


@pytest.mark.parametrize("path", oracle_modules(), ids=rel)
def test_oracle_never_imports_the_assignors_or_the_leader(path):
    for line, name in imported_modules(path):
        assert not any(name == f or name.startswith(f + ".") for f in FORBIDDEN), f"{path.name}:{line} imports {name}"


@pytest.mark.parametrize("path", oracle_modules(), ids=rel)
def test_ortools_only_in_the_solver_modules(path):
    if rel(path) in ORTOOLS_ALLOWED:
        return
    for line, name in imported_modules(path):
        assert not name.startswith("ortools"), f"{rel(path)}:{line} imports {name}"


@pytest.mark.parametrize("path", oracle_modules(), ids=rel)
def test_z3_only_in_the_z3_boundary(path):
    if rel(path) in Z3_ALLOWED:
        return
    for line, name in imported_modules(path):
        assert name != "z3" and not name.startswith("z3."), f"{rel(path)}:{line} imports {name}"


def test_the_boundary_is_where_z3_is_imported():
    assert any(name == "z3" for _, name in imported_modules(ORACLE / "invariants" / "z3_datalog.py"))


# ------------------------------------------------------------------------------------------
# The façade: stickyproof.oracle lists its public API and imports it lazily.


def test_importing_the_oracle_loads_neither_ortools_nor_z3():
    code = (
        "import sys, stickyproof.oracle, stickyproof.oracle.invariants\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ortools', 'z3')))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_facade_resolves_every_public_name():
    import stickyproof.oracle as oracle

    assert oracle.__all__ == sorted(set(oracle.__all__))
    for name in oracle.__all__:
        value = getattr(oracle, name)
        assert not isinstance(value, types.ModuleType), name
        assert name in dir(oracle)
    with pytest.raises(AttributeError):
        oracle.no_such_name  # noqa: B018


def test_no_public_name_is_shadowed_by_a_submodule():
    import stickyproof.oracle as oracle

    submodules = {p.stem for p in ORACLE.glob("*.py")} | {p.name for p in ORACLE.iterdir() if (p / "__init__.py").exists()}
    assert not set(oracle.__all__) & submodules
