"""``stickyproof solve``: run one or both optimality engines and build the output document.

The document is the interchange assignment format (docs/scenario-format.md) plus the solve record:
``status``, ``proven``, ``kept``, ``bound``, ``seconds`` (and ``engine``, ``balance``, ``gap``,
``objective``, ``time_limit``, ``workers``, ``seed``). With ``engine="both"`` the assignment is
CP-SAT's, ``engines`` holds both records, and ``agree`` says whether two proven results have the
same objective (None when either is unproven: nothing to compare).
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidScenario
from ..model import Scenario
from .result import SolveResult, check_balance_mode

__all__ = ["ENGINES", "solve", "solve_document"]

ENGINES = ("cpsat", "flow", "both")


def _record(r: SolveResult) -> dict[str, Any]:
    doc = r.to_dict()
    return {k: v for k, v in doc.items() if k not in ("format", "assignment", "revoking")}


def solve(
    scenario: Scenario,
    *,
    engine: str = "cpsat",
    balance: str = "global",
    cpsat_seconds: float | None = None,
    racks: bool | str = False,
) -> tuple[SolveResult, ...]:
    """The results of the chosen engine(s), CP-SAT first for ``both``; ``cpsat_seconds`` bounds the
    CP-SAT solve (``Limits.cpsat_seconds``; its ``SolveResult.time_limit`` records it)."""
    check_balance_mode(balance)
    if engine not in ENGINES:
        raise InvalidScenario("engine", f"unknown engine {engine!r} (expected one of {', '.join(ENGINES)})")
    from .flow import solve_flow
    from .optimal import solve_cpsat

    out = []
    if engine in ("cpsat", "both"):
        out.append(solve_cpsat(scenario, balance=balance, time_limit=cpsat_seconds, racks=racks))
    if engine in ("flow", "both"):
        out.append(solve_flow(scenario, balance=balance, racks=racks))
    return tuple(out)


def solve_document(
    scenario: Scenario,
    *,
    engine: str = "cpsat",
    balance: str = "global",
    cpsat_seconds: float | None = None,
    racks: bool | str = False,
) -> dict[str, Any]:
    """The ``stickyproof solve`` output document."""
    results = solve(scenario, engine=engine, balance=balance, cpsat_seconds=cpsat_seconds, racks=racks)
    doc = results[0].to_dict()
    if engine == "both":
        cp, fl = results
        doc["engines"] = {"cpsat": _record(cp), "flow": _record(fl)}
        if cp.proven and fl.proven:
            doc["agree"] = cp.status == fl.status and cp.objective == fl.objective
        else:
            doc["agree"] = None
    return doc
