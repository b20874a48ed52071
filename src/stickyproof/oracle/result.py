"""What every oracle engine returns: the assignment, its objective tiers, and how sure we are.

Status honesty: ``proven`` is True only when
the status is backed by a proof: CP-SAT returned ``OPTIMAL`` (or ``INFEASIBLE``), or the
min-cost flow's optimality certificate passed the independent checker. A time-limited
incumbent is ``FEASIBLE`` with its ``bound`` and ``gap`` and is never proven.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model import Assignment, assignment_to_dict

__all__ = ["BALANCE_MODES", "STATUSES", "Objective", "SolveResult", "check_balance_mode"]

BALANCE_MODES = ("uniform", "global", "kafka")
STATUSES = ("OPTIMAL", "FEASIBLE", "INFEASIBLE", "UNKNOWN")


def check_balance_mode(balance: str) -> str:
    from ..errors import InvalidScenario

    if balance not in BALANCE_MODES:
        raise InvalidScenario("balance", f"unknown balance mode {balance!r} (expected one of {', '.join(BALANCE_MODES)})")
    return balance


@dataclass(frozen=True)
class Objective:
    """The objective tiers of one assignment (models/optimal-assignment.md §3).

    O1 balance: ``sum_squares`` = sum of load^2 (minimised; for ``uniform`` it is constant on
    the feasible set); ``max_load`` is reported for reading, it is implied by O1.
    O2 stickiness: ``kept`` = partitions that stay with their retainable claimant (maximised).
    O3 rack locality: ``rack_local`` = partitions on a member whose rack holds a replica
    (maximised), or None when the tier is off.
    """

    sum_squares: int
    max_load: int
    kept: int
    rack_local: int | None = None

    def key(self) -> tuple[int, int, int]:
        """Lexicographic sort key: smaller is better."""
        return (self.sum_squares, -self.kept, -(self.rack_local or 0))

    def to_dict(self) -> dict[str, Any]:
        return {
            "sum_squares": self.sum_squares,
            "max_load": self.max_load,
            "kept": self.kept,
            "rack_local": self.rack_local,
        }


@dataclass(frozen=True)
class SolveResult:
    """One engine's answer.

    ``status``: OPTIMAL, FEASIBLE, INFEASIBLE or UNKNOWN (no solution within the limit).
    ``assignment``: for a cooperative scenario the round-1 assignment (target minus transferring
    partitions, which appear under ``revoking``, O4); ``target`` is the full optimal target.
    ``objective`` is the target's tiers (None without a solution). ``score`` is what the last
    solver stage maximised (``kept``, or ``kept * rack_scale + rack_local`` with the rack tier);
    ``bound`` is the solver's proven upper bound on ``score`` and ``gap = bound - score``.
    """

    engine: str
    status: str
    proven: bool
    balance: str
    assignment: Assignment | None
    target: Assignment | None
    objective: Objective | None
    kept: int | None
    score: int | None
    bound: int | None
    gap: int | None
    seconds: float
    time_limit: float | None = None
    workers: int | None = None
    seed: int | None = None
    detail: str = ""

    @property
    def optimal(self) -> bool:
        return self.status == "OPTIMAL" and self.proven

    def to_dict(self) -> dict[str, Any]:
        """The interchange assignment document plus the solve record (CLI ``solve`` output)."""
        doc: dict[str, Any]
        if self.assignment is not None:
            doc = assignment_to_dict(self.assignment)
        else:
            doc = {"format": "stickyproof.assignment/1", "assignment": {}, "revoking": {}}
        doc.update(
            {
                "engine": self.engine,
                "balance": self.balance,
                "status": self.status,
                "proven": self.proven,
                "kept": self.kept,
                "bound": self.bound,
                "gap": self.gap,
                "objective": None if self.objective is None else self.objective.to_dict(),
                "seconds": round(self.seconds, 6),
                "time_limit": self.time_limit,
                "workers": self.workers,
                "seed": self.seed,
            }
        )
        if self.detail:
            doc["detail"] = self.detail
        return doc
