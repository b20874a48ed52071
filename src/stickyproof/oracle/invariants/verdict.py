"""What a check reports: the invariants' identifiers, one violation with its witness, the verdict.

The identifiers and witnesses are those of models/invariants.md; every invariant module builds
``Violation`` values, and ``check_assignment`` gathers them into a ``CheckResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["INVARIANTS", "ASSIGNMENT_INVARIANTS", "RUN_INVARIANTS", "Violation", "CheckResult"]

INVARIANTS = (
    "unassigned",
    "duplicate",
    "unsubscribed",
    "nonexistent",
    "imbalance",
    "cooperative-unsafe",
    "revoking-unclaimed",
    "nondeterministic",
    "unstable",
)
ASSIGNMENT_INVARIANTS = INVARIANTS[:7]
"""The invariants of one assignment (``check_assignment``)."""

RUN_INVARIANTS = INVARIANTS[7:]
"""The invariants that need the assignor itself (``grade`` with ``run``)."""


@dataclass(frozen=True, eq=True)
class Violation:
    """One broken invariant and the witness read from Z3's answer (JSON-ready values)."""

    invariant: str
    witness: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "witness": dict(self.witness)}



@dataclass(frozen=True)
class CheckResult:
    """The verdict on one assignment.

    ``valid`` is True when no invariant was violated. ``deferred`` lists invariants that were
    not judged (``imbalance`` in a cooperative round with partitions pending revocation, R40).
    """

    valid: bool
    violations: tuple[Violation, ...]
    balance: str = "global"
    cooperative: bool = False
    deferred: tuple[str, ...] = ()

    def violated(self) -> tuple[str, ...]:
        """The identifiers of the broken invariants, in INVARIANTS order, each once."""
        names = {v.invariant for v in self.violations}
        return tuple(n for n in INVARIANTS if n in names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "violations": [v.to_dict() for v in self.violations],
            "balance": self.balance,
            "cooperative": self.cooperative,
            "deferred": list(self.deferred),
        }
