"""Min-cost flow oracle (OR-Tools SimpleMinCostFlow) with a checked optimality certificate.

Interface first; the engine follows in the next commit.
"""

from __future__ import annotations

from ..model import Assignment, Scenario
from .result import SolveResult

__all__ = ["optimal_loads", "solve_flow"]


def optimal_loads(scenario: Scenario, balance: str = "global") -> dict[str, int]:
    """One optimal per-member load vector (member id -> load), proven by the flow certificate."""
    raise NotImplementedError("flow engine lands in the next commit")


def solve_flow(scenario: Scenario, *, balance: str = "global", hint: Assignment | None = None, racks: bool = False) -> SolveResult:
    """The lexicographic optimum (O1 balance, O2 kept, optional O3 racks) by min-cost flow."""
    raise NotImplementedError("flow engine lands in the next commit")
