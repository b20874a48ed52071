"""Judging one group for the hunt: the grade (``grading.grade_assignor``) read as a list of failures.

A group *fails* when, in this order: the assignor raised (``error``), ran past its time limit
(``time-limit``), broke an invariant of ``models/invariants.md`` (its id: ``unassigned``,
``duplicate``, ... ``unstable``), or kept less than ``min_stickiness`` of the proven optimal
stickiness (``stickiness``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..assignors.registry import AssignorInfo
from ..grading import BalanceMode, Limits, grade_assignor
from ..model import Scenario
from ..oracle.grade import Grade, RunError
from ..oracle.invariants import INVARIANTS

__all__ = ["FAILURE_KINDS", "Verdict", "judge", "verdict_of", "message_shape", "triaged", "check_skip"]

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
    reference: "Verdict | None" = None
    kept_delta: int | None = None

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def first(self) -> str | None:
        return self.failures[0] if self.failures else None

    def signature(self, kind: str) -> str:
        """What tells this failure apart from others of its kind: the invariant id, or for an
        error ``error:<type>:<message shape>`` (numbers and quoted names blanked out), so one
        ``KeyError: 'c3'`` and another ``KeyError: 'c7'`` are one signature."""
        if kind in ("error", "time-limit") and self.run_error is not None:
            return f"{kind}:{self.run_error.type}:{message_shape(self.run_error.message)}"
        return kind

    @property
    def signatures(self) -> tuple[str, ...]:
        return tuple(self.signature(k) for k in self.failures)


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def message_shape(message: str, *, limit: int = 80) -> str:
    """``"KeyError: 'c3' at index 7"`` -> ``"KeyError: '_' at index N"``: an error message with the
    parts that name this group's members, topics and numbers blanked out."""
    text = _NUMBER.sub("N", _QUOTED.sub("'_'", " ".join(message.split())))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_skip(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """``--skip`` values: a failure kind (``unstable``, ``error``, ...) or an error type (``error:KeyError``)."""
    from ..scenarios.space import InvalidSpace

    for kind in kinds:
        base = kind.split(":", 1)[0]
        if base not in FAILURE_KINDS or (":" in kind and base not in ("error", "time-limit")):
            raise InvalidSpace("skip", f"{kind!r} is not a failure kind ({', '.join(FAILURE_KINDS)}) or error:TYPE")
    return tuple(kinds)


def _skipped(verdict: Verdict, kind: str, skip: tuple[str, ...]) -> bool:
    if kind in skip:
        return True
    error = verdict.run_error
    return error is not None and kind in ("error", "time-limit") and f"{kind}:{error.type}" in skip


def triaged(verdict: Verdict, *, skip: tuple[str, ...] = (), reference: Verdict | None = None) -> Verdict:
    """``verdict`` without the failures ``skip`` names (a class already understood) and, when a
    ``reference`` assignor was judged on the same group, without the failures the reference shares
    (a failure counts only where the graded assignor fails and the reference does not)."""
    shared = set(reference.failures) if reference is not None else set()
    kept = tuple(k for k in verdict.failures if not _skipped(verdict, k, skip) and k not in shared)
    delta = None
    if reference is not None and verdict.grade is not None and reference.grade is not None:
        if verdict.grade.kept is not None and reference.grade.kept is not None:
            delta = verdict.grade.kept - reference.grade.kept
    witnesses = {k: v for k, v in verdict.witnesses.items() if k in kept}
    return replace(verdict, failures=kept, witnesses=witnesses, reference=reference, kept_delta=delta)


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
    contract: BalanceMode = None,
    direct: bool = False,
    limits: Limits = Limits(assignor_seconds=10.0),
) -> Verdict:
    """Grade ``assignor`` on ``scenario`` (``grading.grade_assignor``) and list what failed."""
    g = grade_assignor(scenario, assignor, direct=direct, balance=contract, limits=limits)
    return verdict_of(g, min_stickiness=min_stickiness)
