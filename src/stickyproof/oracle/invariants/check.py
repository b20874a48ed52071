"""``check_assignment``: one assignment against every invariant of models/invariants.md §2.

Reads the facts once (``facts``), then runs the invariants asked for, each one Datalog program
(``z3_datalog``), and gathers their violations into a ``CheckResult``.
"""

from __future__ import annotations

from typing import Iterable

from ...errors import InvalidScenario
from ...model import Assignment, Scenario
from .balance import (
    CHECK_MODES,
    check_global,
    check_kafka,
    check_pairwise,
    check_per_topic,
    check_uniform,
    default_balance,
    subscriptions_equal,
)
from .cooperative import check_cooperative_unsafe, check_revoking_unclaimed
from .facts import facts
from .placement import check_nonexistent, check_placement, check_unsubscribed
from .verdict import ASSIGNMENT_INVARIANTS, CheckResult, Violation

__all__ = ["check_assignment"]


def check_assignment(
    scenario: Scenario,
    assignment: Assignment,
    *,
    balance: str | None = None,
    cooperative: bool | None = None,
    only: Iterable[str] | None = None,
    max_witnesses: int = 1,
    z3_query_seconds: float | None = None,
) -> CheckResult:
    """Check ``assignment`` against every invariant of one assignment (models/invariants.md §2).

    ``balance``: ``uniform``, ``global``, ``kafka``, ``per-topic``, ``pairwise`` (§2, §5), or None
    (uniform if all subscriptions are equal, else global); ``uniform`` on unequal subscriptions
    raises ``InvalidScenario``.
    ``cooperative``: None means ``scenario.protocol == "cooperative"``. ``only`` restricts the
    check to some invariants. Each broken invariant yields up to ``max_witnesses`` violations,
    each with a witness from its own Z3 model. ``z3_query_seconds`` bounds each Z3 query; a
    query that runs out raises ``SolverError`` rather than passing.
    """
    if balance is None:
        balance = default_balance(scenario)
    elif balance not in CHECK_MODES:
        raise InvalidScenario("balance", f"unknown balance mode {balance!r} (expected one of {', '.join(CHECK_MODES)})")
    elif balance == "uniform" and not subscriptions_equal(scenario):
        raise InvalidScenario(
            "balance", "uniform balance is defined only when every member subscribes to the same topics; use global or kafka"
        )
    if max_witnesses < 1:
        raise InvalidScenario("max_witnesses", f"must be at least 1, got {max_witnesses}")
    timeout = z3_query_seconds  # the check_* functions' name for it: seconds of one Z3 query
    coop = scenario.protocol == "cooperative" if cooperative is None else bool(cooperative)
    wanted = set(ASSIGNMENT_INVARIANTS if only is None else only)
    unknown = wanted - set(ASSIGNMENT_INVARIANTS)
    if unknown:
        raise InvalidScenario("only", f"not an invariant of one assignment: {', '.join(sorted(unknown))}")
    f = facts(scenario, assignment, coop)
    lim = max_witnesses
    violations: list[Violation] = []
    deferred: list[str] = []
    if "unassigned" in wanted:
        violations += check_placement(f, "unassigned", lim, timeout)
    if "duplicate" in wanted:
        violations += check_placement(f, "duplicate", lim, timeout)
    if "unsubscribed" in wanted:
        violations += check_unsubscribed(f, lim, timeout)
    if "nonexistent" in wanted:
        violations += check_nonexistent(f, lim, timeout)
    if "imbalance" in wanted:
        if f.pending:  # R40: a cooperative round's balance is judged after its follow-up
            deferred.append("imbalance")
        elif balance == "uniform":
            violations += check_uniform(f, lim, timeout)
        elif balance == "kafka":
            violations += check_kafka(f, lim, timeout)
        elif balance == "per-topic":
            violations += check_per_topic(f, lim, timeout)
        elif balance == "pairwise":
            violations += check_pairwise(f, lim, timeout)
        else:
            violations += check_global(f, lim, timeout)
    if "cooperative-unsafe" in wanted and coop:
        violations += check_cooperative_unsafe(f, lim, timeout)
    if "revoking-unclaimed" in wanted:
        violations += check_revoking_unclaimed(f, lim, timeout)
    return CheckResult(
        valid=not violations,
        violations=tuple(violations),
        balance=balance,
        cooperative=coop,
        deferred=tuple(deferred),
    )
