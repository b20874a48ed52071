"""What counts as a failure: the one definition the hunt, the sweep's rows, its triage, its summary
and its report share.

A graded group *fails* when, most severe first (``FAILURE_KINDS``):

    error          the assignor raised (Kafka's Java assignor would throw: ``kafka_exception``)
    time-limit     the assignor ran past ``Limits.assignor_seconds`` (no answer; Kafka has no such
                   limit, so this is never folded into ``error``: a hang is not an exception)
    <invariant>    it broke an invariant of models/invariants.md (``unassigned``, ``duplicate``, ...
                   ``unstable``: ``oracle.invariants.INVARIANTS``, the oracle's spelling)
    stickiness     it kept less than a demanded share of the *proven* optimal stickiness (only when
                   a minimum is asked, ``hunt --min-stickiness``; a sweep asks none)

``verdict_of(grade)`` reads those failures off a grade; nothing else decides them. A sweep row also
*fails* without a verdict when stickyproof's own grading of it crashed (``failing_row``): that row's
``error`` names the stage, and the failure is stickyproof's, never the assignor's.

Signatures tell failures of one kind apart, in one scheme, ``<kind>[:<qualifier>...]``:

    an invariant, stickiness   the kind alone                    ``duplicate``
    an assignor error          ``<kind>:<type>:<message shape>``  ``error:KeyError:'_'`` (for ``KeyError('c3')``)
    a crash of the grading     ``error:<stage>:<type>``           ``error:grade:SolverError``

The message shape blanks out what names this group's members, topics and numbers, so one
``KeyError: 'c3'`` and another ``KeyError: 'c7'`` are one signature; a crash is told apart by where
it happened (``rows.error_text``'s stage), its message carrying a source location instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from ..oracle.invariants.verdict import INVARIANTS

if TYPE_CHECKING:
    from ..oracle.grade import Grade, RunError

__all__ = [
    "FAILURE_KINDS",
    "ERROR_KINDS",
    "Verdict",
    "verdict_of",
    "run_error_kind",
    "message_shape",
    "error_signature",
    "crash_signature",
    "shows",
    "failing_row",
    "crashed_row",
]

#: What a failing group can break, most severe first: the assignor raised, ran past the time
#: limit, broke an invariant of models/invariants.md, or kept too little.
FAILURE_KINDS: tuple[str, ...] = ("error", "time-limit", *INVARIANTS, "stickiness")
#: The kinds where the assignor gave no answer (the grade's ``run_error`` says why).
ERROR_KINDS: tuple[str, ...] = ("error", "time-limit")
_RANK = {k: i for i, k in enumerate(FAILURE_KINDS)}


@dataclass(frozen=True)
class Verdict:
    """How one group went: the failures found (``FAILURE_KINDS`` order), a witness for each,
    the grade, and why the assignor gave no answer (if it did not). ``reference`` and
    ``kept_delta``: the hunt's ``--reference`` assignor judged on the same group, and the kept
    partitions against it."""

    failures: tuple[str, ...]
    witnesses: Mapping[str, Mapping[str, Any]]
    stickiness: float | None
    grade: "Grade | None" = None
    run_error: "RunError | None" = None
    reference: "Verdict | None" = None
    kept_delta: int | None = None

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def first(self) -> str | None:
        return self.failures[0] if self.failures else None

    def signature(self, kind: str) -> str:
        """What tells this failure apart from others of its kind (the module docstring's scheme)."""
        if kind in ERROR_KINDS and self.run_error is not None:
            return error_signature(kind, self.run_error.type, self.run_error.message)
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


def error_signature(kind: str, type_name: str, message: str) -> str:
    """``error:<type>:<message shape>`` (or ``time-limit:...``): the signature of an assignor's error."""
    return f"{kind}:{type_name}:{message_shape(message)}"


def crash_signature(error: str | None) -> str:
    """``grade: SolverError: ...`` -> ``error:grade:SolverError``: the signature of a crash of the
    grading (a sweep row's ``error`` as ``sweep.rows.error_text`` writes it: stage, type, message)."""
    parts = [p.strip() for p in (error or "").split(":", 2)]
    if len(parts) >= 2 and parts[1] and " " not in parts[1]:
        return f"error:{parts[0]}:{parts[1]}"
    return f"error:{parts[0] or 'unknown'}"


def run_error_kind(error: "RunError") -> str:
    """``time-limit`` when the assignor ran past its limit, ``error`` for anything it raised."""
    return "time-limit" if error.kind == "time-limit" else "error"


def _error_witness(error: "RunError") -> dict[str, Any]:
    out: dict[str, Any] = {"message": str(error), "type": error.type}
    if error.kafka_exception:
        out["kafka_exception"] = error.kafka_exception
    if error.cause:
        out["cause"] = error.cause
    return out


def verdict_of(g: "Grade", *, min_stickiness: float | None = None) -> Verdict:
    """The failures of a grade: its run error, each violated invariant (first witness kept), and
    stickiness below ``min_stickiness`` -- only when the optimum it is measured against is proven."""
    failures: list[str] = []
    witnesses: dict[str, Mapping[str, Any]] = {}
    if g.run_error is not None:
        kind = run_error_kind(g.run_error)
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


def shows(verdict: Verdict, kind: str, error_type: str | None = None) -> bool:
    """Whether ``verdict`` fails "the same way": it has failure ``kind`` and, for an error or a time
    limit with ``error_type`` given, the assignor's error is of that type. What a shrinker keeps
    (the hunt's and the triage's)."""
    if kind not in verdict.failures:
        return False
    if error_type is None or kind not in ERROR_KINDS:
        return True
    return verdict.run_error is not None and verdict.run_error.type == error_type


# ------------------------------------------------------------------------------------------
# A sweep row (sweep/columns.py): the verdict's failures are its ``failures`` column, and
# ``failing`` is what every reader of the rows counts.


def _null(value: Any) -> bool:
    return value is None or value != value  # NaN from pandas


def crashed_row(row: Mapping[str, Any]) -> bool:
    """A row whose grading crashed: an ``error`` and no verdict (``valid`` null), and not a pair
    Kafka never runs (``skipped``, R36)."""
    error = row.get("error")
    return _null(row.get("valid")) and isinstance(error, str) and bool(error) and _null(row.get("skipped"))


def failing_row(row: Mapping[str, Any]) -> bool:
    """A rebalance row that failed: the assignor broke a promise (``valid`` false: a verdict with
    failures) or the grading crashed (``crashed_row``)."""
    valid = row.get("valid")
    numpy_false = getattr(getattr(valid, "dtype", None), "kind", None) == "b" and not valid  # from a pandas frame
    return valid is False or bool(numpy_false) or crashed_row(row)
