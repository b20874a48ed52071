"""The oracle: ownership, balance and stickiness stated from models/, never from the assignors.

A façade: the public API below is imported lazily (PEP 562), so ``import stickyproof.oracle``
loads neither OR-Tools nor Z3 (``stickyproof --help`` starts fast).
Each name comes from the module that owns it:

- ``invariants``: ``check_assignment`` (Z3) and its verdict types, the invariant identifiers.
- ``flow``: ``solve_flow``, the lexicographic optimum by min-cost flow with a checked certificate.
- ``optimal``: ``solve_cpsat``, the same optimum by CP-SAT.
- ``solve``: ``solve_document``, the ``stickyproof solve`` document from either engine.
- ``result``: ``SolveResult``, ``Objective``, the statuses.
- ``claims``: D3/D4 of models/optimal-assignment.md (who owns, who may keep, who claims).
- ``grade``: ``Grade``, one assignor's grade on one group.

``grade()`` and ``solve()`` share their names with their modules, so they are not re-exported
here (``stickyproof.oracle.grade`` is the module once it is imported): import them from
``stickyproof.oracle.grade`` and ``stickyproof.oracle.solve``.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ASSIGNMENT_INVARIANTS": "invariants",
    "BALANCE_MODES": "invariants",
    "CHECK_MODES": "invariants",
    "CONTRACTS": "contracts",
    "Contract": "contracts",
    "ContractOptimum": "contracts",
    "contract_optimum": "contracts",
    "CheckResult": "invariants",
    "INVARIANTS": "invariants",
    "RUN_INVARIANTS": "invariants",
    "Violation": "invariants",
    "check_assignment": "invariants",
    "default_balance": "invariants",
    "subscriptions_equal": "invariants",
    "solve_flow": "flow",
    "solve_cpsat": "optimal",
    "ENGINES": "solve",
    "solve_document": "solve",
    "STATUSES": "result",
    "Objective": "result",
    "SolveResult": "result",
    "claimants": "claims",
    "current_owners": "claims",
    "retainable_claims": "claims",
    "Grade": "grade",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # resolved once; later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
