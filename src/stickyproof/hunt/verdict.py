"""Judging one group for the hunt: the grade (``grading.grade_assignor``) read as a list of failures.

What counts as a failure, its kinds and its signature, is ``grading.failure`` (the sweep reads it
too): the assignor raised (``error``), ran past its time limit (``time-limit``), broke an invariant
of ``models/invariants.md`` (its id: ``unassigned``, ``duplicate``, ... ``unstable``), or kept less
than ``min_stickiness`` of the proven optimal stickiness (``stickiness``). This module adds what only
the hunt does with a verdict: ``--skip`` and ``--reference``.
"""

from __future__ import annotations

from dataclasses import replace

from ..assignors.registry import AssignorInfo
from ..grading import BalanceMode, Limits, grade_assignor
from ..grading.failure import ERROR_KINDS, FAILURE_KINDS, Verdict, message_shape, verdict_of
from ..model import Scenario

__all__ = ["FAILURE_KINDS", "Verdict", "judge", "verdict_of", "message_shape", "triaged", "check_skip"]


def check_skip(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """``--skip`` values: a failure kind (``unstable``, ``error``, ...) or an error type (``error:KeyError``)."""
    from ..scenarios.space import InvalidSpace

    for kind in kinds:
        base = kind.split(":", 1)[0]
        if base not in FAILURE_KINDS or (":" in kind and base not in ERROR_KINDS):
            raise InvalidSpace("skip", f"{kind!r} is not a failure kind ({', '.join(FAILURE_KINDS)}) or error:TYPE")
    return tuple(kinds)


def _skipped(verdict: Verdict, kind: str, skip: tuple[str, ...]) -> bool:
    if kind in skip:
        return True
    error = verdict.run_error
    return error is not None and kind in ERROR_KINDS and f"{kind}:{error.type}" in skip


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
