"""Run the Z3 statements of ``proofs/`` and compare each verdict with what ``proofs/README.md`` promises.

``proofs/`` lives beside ``src/`` in the repository (it reads ``models/``, never the assignors), so it
is not part of the installed package: this module finds it (``proofs_dir``), loads it as the package
``stickyproof_proofs``, and runs its statements one by one. The README's table of statements is the
single place where the promised verdicts (and counterexample lengths) are written; a verdict that
differs from it, in either direction, is a failure: a weakened model that suddenly proves a broken
variant must fail CI just like a fixed model that stops finding KAFKA-7026.

The library returns records and never prints (``stickyproof.cli.prove`` renders them).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Sequence

from .errors import InvalidScenario, SolverError

__all__ = [
    "PROOFS_ENV",
    "Promise",
    "StatementRecord",
    "ProveReport",
    "proofs_dir",
    "load_proofs",
    "read_promises",
    "statement_names",
    "prove",
]

#: Environment variable naming the proofs folder (default: ``proofs/`` of the repository holding this file).
PROOFS_ENV = "STICKYPROOF_PROOFS"
PACKAGE = "stickyproof_proofs"
_TABLE_HEADING = "## Statements and promised verdicts"


@dataclass(frozen=True)
class Promise:
    verdict: str
    length: int | None = None
    bound: str = ""

    def describe(self) -> str:
        return f"{self.verdict}, {self.length} steps" if self.length is not None else self.verdict


@dataclass(frozen=True)
class StatementRecord:
    """One statement's run: its verdict against the promise, what was covered, how long it took."""

    name: str
    claim: str
    verdict: str
    promised: str
    ok: bool
    bound: str
    seconds: float
    length: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "claim": self.claim,
            "verdict": self.verdict,
            "promised": self.promised,
            "ok": self.ok,
            "bound": self.bound,
            "length": self.length,
            "seconds": round(self.seconds, 3),
            "detail": self.detail,
        }


@dataclass(frozen=True)
class ProveReport:
    records: tuple[StatementRecord, ...]
    deep: bool
    proofs: str
    seconds: float

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.records)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "stickyproof.prove/1",
            "ok": self.ok,
            "deep": self.deep,
            "proofs": self.proofs,
            "seconds": round(self.seconds, 3),
            "statements": [r.to_dict() for r in self.records],
        }


def proofs_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The proofs folder: ``path``, else ``$STICKYPROOF_PROOFS``, else ``<repository>/proofs``."""
    chosen = path if path is not None else os.environ.get(PROOFS_ENV)
    where = Path(chosen) if chosen else Path(__file__).resolve().parents[2] / "proofs"
    if not (where / "__init__.py").is_file() or not (where / "README.md").is_file():
        raise InvalidScenario(
            "proofs", f"{where}: not a proofs folder (needs __init__.py and README.md; set {PROOFS_ENV} or run from a clone)"
        )
    return where


def load_proofs(path: str | os.PathLike[str] | None = None) -> ModuleType:
    """Import the proofs folder as the package ``stickyproof_proofs`` (once per folder)."""
    where = proofs_dir(path)
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None and Path(getattr(loaded, "__file__", "")).parent == where:
        return loaded
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location(PACKAGE, where / "__init__.py", submodule_search_locations=[str(where)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)
    return module


_ROW = re.compile(r"^\|\s*`(?P<name>[^`]+)`\s*\|\s*(?P<verdict>[^|]+?)\s*\|\s*(?P<bound>[^|]*?)\s*\|")
_VERDICT = re.compile(r"^(?P<verdict>proved|counterexample|unknown)(?:,\s*(?P<length>\d+)\s+steps?)?$")


def read_promises(path: str | os.PathLike[str] | None = None) -> dict[str, Promise]:
    """The table under "Statements and promised verdicts" in proofs/README.md: name -> Promise."""
    readme = proofs_dir(path) / "README.md"
    text = readme.read_text(encoding="utf-8")
    start = text.find(_TABLE_HEADING)
    if start < 0:
        raise InvalidScenario("proofs/README.md", f"no section {_TABLE_HEADING!r}")
    out: dict[str, Promise] = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        m = _ROW.match(line)
        if not m:
            continue
        v = _VERDICT.match(m.group("verdict").strip())
        if not v:
            raise InvalidScenario(f"proofs/README.md: {m.group('name')}", f"unreadable verdict {m.group('verdict')!r}")
        length = int(v.group("length")) if v.group("length") else None
        out[m.group("name")] = Promise(v.group("verdict"), length, m.group("bound"))
    return out


def statement_names(path: str | os.PathLike[str] | None = None, *, deep: bool = False) -> list[str]:
    """The statements a run covers: every one without --deep-only, all of them with ``deep``."""
    return [s.name for s in load_proofs(path).statements() if deep or not s.deep_only]


def _record(stmt: Any, promise: Promise | None, outcome: Any, seconds: float) -> StatementRecord:
    promised = promise.describe() if promise is not None else "(no promise in proofs/README.md)"
    ok = promise is not None and outcome.verdict == promise.verdict
    if ok and promise is not None and promise.length is not None:
        ok = outcome.length == promise.length
    return StatementRecord(stmt.name, stmt.claim, outcome.verdict, promised, ok, outcome.bound, seconds,
                           outcome.length, dict(outcome.detail))


def prove(
    names: Sequence[str] | None = None,
    *,
    deep: bool = False,
    path: str | os.PathLike[str] | None = None,
    progress: Callable[[str, StatementRecord | None], None] | None = None,
) -> ProveReport:
    """Run the named statements (default: every statement of the run, ``deep`` or not) in README order.

    ``progress(name, None)`` is called before a statement runs and ``progress(name, record)`` after.
    An unknown name raises ``InvalidScenario``; a Z3 failure raises ``SolverError``.
    """
    start = time.perf_counter()
    module = load_proofs(path)
    promises = read_promises(path)
    available = {s.name: s for s in module.statements()}
    if names:
        unknown = [n for n in names if n not in available]
        if unknown:
            raise InvalidScenario("NAME", f"no statement {unknown[0]!r} (known: {', '.join(available)})")
        chosen = [available[n] for n in _unique(names)]
    else:
        chosen = [s for s in available.values() if deep or not s.deep_only]
    records = []
    for stmt in chosen:
        if progress is not None:
            progress(stmt.name, None)
        t0 = time.perf_counter()
        try:
            outcome = stmt.run(deep, _to_proof_promise(module, promises.get(stmt.name)))
        except Exception as exc:  # Z3 raises its own exception type; translate it here (STYLE rule 10)
            if type(exc).__module__.startswith("z3"):
                raise SolverError(f"{stmt.name}: z3 failed: {exc}") from exc
            raise
        record = _record(stmt, promises.get(stmt.name), outcome, time.perf_counter() - t0)
        records.append(record)
        if progress is not None:
            progress(stmt.name, record)
    return ProveReport(tuple(records), deep, str(proofs_dir(path)), time.perf_counter() - start)


def _to_proof_promise(module: ModuleType, promise: Promise | None) -> Any:
    """The proofs package's own ``Promise`` value (statements never import stickyproof)."""
    if promise is None:
        return None
    return module.Promise(promise.verdict, promise.length)


def _unique(names: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for n in names:
        seen.setdefault(n, None)
    return list(seen)
