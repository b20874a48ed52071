"""Judging one group for the hunt: the grade (``grading.grade_assignor``) read as a list of failures.

A group *fails* when, in this order: the assignor raised (``error``), ran past its time limit
(``time-limit``), broke an invariant of ``models/invariants.md`` (its id: ``unassigned``,
``duplicate``, ... ``unstable``), or kept less than ``min_stickiness`` of the proven optimal
stickiness (``stickiness``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..assignors.registry import AssignorInfo
from ..grading import Contract, Limits, grade_assignor
from ..model import Scenario
from ..oracle.grade import Grade, RunError
from ..oracle.invariants import INVARIANTS

__all__ = ["FAILURE_KINDS", "Verdict", "judge"]

#: What a failing group can break, most severe first: the assignor raised, ran past the time
#: limit, broke an invariant of models/invariants.md, or kept too little.
FAILURE_KINDS = ("error", "time-limit", *INVARIANTS, "stickiness")
_RANK = {k: i for i, k in enumerate(FAILURE_KINDS)}


@dataclass(frozen=True)
class Verdict:
    """How one group went: the failures found (``FAILURE_KINDS`` order), a witness for each,
    the grade, and why the assignor gave no answer (if it did not)."""

    failures: tuple[str, ...]
    witnesses: Mapping[str, Mapping[str, Any]]
    stickiness: float | None
    grade: Grade | None = None
    run_error: RunError | None = None

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def first(self) -> str | None:
        return self.failures[0] if self.failures else None


def _error_witness(error: RunError) -> dict[str, Any]:
    out: dict[str, Any] = {"message": str(error), "type": error.type}
    if error.kafka_exception:
        out["kafka_exception"] = error.kafka_exception
    if error.cause:
        out["cause"] = error.cause
    return out


def verdict_of(g: Grade, *, min_stickiness: float | None = None) -> Verdict:
    """The failures of a grade: its run error, each violated invariant (first witness kept), and
    stickiness below ``min_stickiness`` — only when the optimum it is measured against is proven."""
    failures: list[str] = []
    witnesses: dict[str, Mapping[str, Any]] = {}
    if g.run_error is not None:
        kind = "time-limit" if g.run_error.kind == "time-limit" else "error"
        failures.append(kind)
        witnesses[kind] = _error_witness(g.run_error)
    for v in g.violations:
        if v.invariant not in witnesses:
            witnesses[v.invariant] = dict(v.witness)
            failures.append(v.invariant)
    if (
        min_stickiness is not None
        and g.run_error is None
        and g.stickiness is not None
        and g.proven
        and g.stickiness < min_stickiness
    ):
        failures.append("stickiness")
        witnesses["stickiness"] = {
            "stickiness": g.stickiness,
            "min_stickiness": min_stickiness,
            "kept": g.kept,
            "optimal_kept": g.optimal_kept,
            "moved": g.moved,
        }
    failures.sort(key=lambda k: _RANK.get(k, len(_RANK)))
    return Verdict(tuple(failures), witnesses, g.stickiness, g, g.run_error)


def judge(
    scenario: Scenario,
    assignor: str | AssignorInfo,
    *,
    min_stickiness: float | None = None,
    contract: Contract = None,
    direct: bool = False,
    limits: Limits = Limits(assignor_seconds=10.0),
) -> Verdict:
    """Grade ``assignor`` on ``scenario`` (``grading.grade_assignor``) and list what failed."""
    g = grade_assignor(scenario, assignor, direct=direct, contract=contract, limits=limits)
    return verdict_of(g, min_stickiness=min_stickiness)
