"""CP-SAT oracle: aggregated (class x member counts) and per-partition (owns[m, p]) models.

Interface first; the engine follows in a later commit.
"""

from __future__ import annotations

from ..model import Assignment, Scenario
from .result import SolveResult

__all__ = ["solve_cpsat"]


def solve_cpsat(
    scenario: Scenario,
    *,
    balance: str = "global",
    time_limit: float | None = None,
    hint: Assignment | None = None,
    workers: int = 2,
    seed: int = 0,
    model: str = "aggregated",
    racks: bool = False,
    balance_source: str = "flow",
) -> SolveResult:
    """The lexicographic optimum by CP-SAT; OPTIMAL only when CP-SAT proved it."""
    raise NotImplementedError("CP-SAT engine lands in a later commit")
