"""Grading a server-side (KIP-848) assignor on a consumer group: its own promise, then the optimum.

    grade_consumer_group(scenario, info, *, limits=Limits(), answer=None) -> Grade
    grade_consumer_assignment(scenario, assignment, *, name="") -> Grade
    consumer_group_row(scenario, assignor) -> dict          (the sweep's hook: one row's fields)

The assignor runs as the coordinator calls it (``consumer_group_run``); the oracle judges the
answer: validity (V1, Z3), the contract of models/invariants.md §5.2 (``oracle.consumer_contracts``),
the fixed point, a re-run on its own answer (stable), two re-runs with the members reordered and
renamed (order independence), and the distance to the proven optimum of balance, per-topic spread,
rack locality and partitions kept (``oracle.consumer``). The result is the classic ``Grade`` with
the consumer-group record under ``consumer``, so ``stickyproof grade`` prints and serialises both
the same way.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable

from ..assignors.info import AssignorInfo
from ..errors import StickyproofError
from ..lookup import get_assignor
from ..model import Assignment, Scenario
from ..oracle.consumer import TIERS, consumer_objective, solve_consumer
from ..oracle.consumer_contracts import (CONSUMER_CONTRACTS, ConsumerContract, balanced_columns, consumer_contract,
                                         contract_violations, first_move, fixed_point_owed, homogeneous, member_sizes)
from ..oracle.grade import Grade, RunError
from ..oracle.invariants import Violation, check_assignment

__all__ = ["grade_consumer_group", "grade_consumer_assignment", "promise_of", "consumer_group_row", "consumer_row_fields", "order_verdict", "ORDER_VERDICTS"]

VALIDITY = ("unassigned", "duplicate", "unsubscribed", "nonexistent")

ORDER_VERDICTS = ("identical", "same-sizes-and-kept", "differs")
"""What a re-run with the members reordered or renamed gives, best first (models/invariants.md §5.2, O1-O2)."""

_ORDER_RANK = {v: i for i, v in enumerate(ORDER_VERDICTS)}


def _kept(scenario: Scenario, a: Assignment) -> int:
    holder = {tp: m.id for m in scenario.members for tp in m.owned}
    return sum(holder.get(tp) == m for m, tps in a.assignment.items() for tp in tps)


def _with_own_answer(scenario: Scenario, a: Assignment) -> Scenario:
    """The same group after the coordinator installed ``a`` as every member's target."""
    return replace(scenario, members=tuple(replace(m, owned=tuple(a.assignment.get(m.id, ()))) for m in scenario.members))


def _renamed(scenario: Scenario) -> tuple[Scenario, dict[str, str]]:
    """Every member id given a new spelling (so hashes, sort orders and map orders change); the map back."""
    back = {f"r{i:03d}-{m.id[::-1]}": m.id for i, m in enumerate(sorted(scenario.members, key=lambda m: m.id[::-1]))}
    there = {v: k for k, v in back.items()}
    return replace(scenario, members=tuple(replace(m, id=there[m.id]) for m in scenario.members)), back


def order_verdict(scenario: Scenario, base: Assignment, other: Assignment) -> str:
    """``identical``, or ``same-sizes-and-kept`` (the multiset of member sizes and the kept count
    agree: ties broken another way), or ``differs``."""
    if {m: tuple(sorted(t)) for m, t in base.assignment.items() if t} == {m: tuple(sorted(t)) for m, t in other.assignment.items() if t}:
        return "identical"
    same = member_sizes(base) == member_sizes(other) and _kept(scenario, base) == _kept(scenario, other)
    return "same-sizes-and-kept" if same else "differs"


def _order_checks(scenario: Scenario, run: Callable[[Scenario], Assignment], answer: Assignment) -> dict[str, str]:
    """O1: members listed in reverse order; O2: every member id respelled. Each re-run mapped back and compared."""
    out: dict[str, str] = {}
    try:
        out["reordered"] = order_verdict(scenario, answer, run(replace(scenario, members=scenario.members[::-1])))
    except StickyproofError as exc:
        out["reordered"] = f"error: {exc}"
    renamed, back = _renamed(scenario)
    try:
        got = run(renamed)
        mapped = Assignment({back[m]: tps for m, tps in got.assignment.items()})
        out["renamed"] = order_verdict(scenario, answer, mapped)
    except StickyproofError as exc:
        out["renamed"] = f"error: {exc}"
    return out


def _optimum_record(scenario: Scenario, answer: Assignment | None) -> tuple[dict[str, Any], Any]:
    full = solve_consumer(scenario, tiers=TIERS)
    record: dict[str, Any] = {"optimum": full.to_dict()}
    if answer is not None and full.objective is not None:
        got = consumer_objective(scenario, answer)
        record["objective"] = got.to_dict()
        record["gap"] = {
            "sum_squares": got.sum_squares - full.objective.sum_squares,
            "spread": got.spread - full.objective.spread,
            "rack_local": full.objective.rack_local - got.rack_local,
            "kept": full.objective.kept - got.kept,
        }
        record["at_optimum"] = got.key() == full.objective.key()
        record["first_worse_tier"] = next(
            (t for t, a, b in zip(TIERS, got.key(), full.objective.key()) if a != b), None)
    return record, full


def _grade(scenario: Scenario, name: str, contract: ConsumerContract | None, answer: Assignment,
           assign_seconds: float | None, run: Callable[[Scenario], Assignment] | None, limits: Any) -> Grade:
    check = check_assignment(scenario, answer, cooperative=False, only=VALIDITY,
                             z3_query_seconds=getattr(limits, "z3_query_seconds", None))
    violations = list(check.violations)
    solve_start = time.perf_counter()
    kept = _kept(scenario, answer)
    # S1's optimum: the most a within-one assignment keeps (balance, then kept); K1 is within one on a homogeneous group.
    kept_optimum = solve_consumer(scenario, tiers=("balance", "kept"))
    record, full = _optimum_record(scenario, answer)
    solve_seconds = time.perf_counter() - solve_start
    if contract is not None:
        violations += contract_violations(scenario, contract, answer, kept=kept,
                                          optimal_kept=kept_optimum.objective.kept if kept_optimum.proven else None)
    record.update({
        "contract": None if contract is None else contract.name,
        "promise": None if contract is None else contract.promise,
        "subscription": "homogeneous" if homogeneous(scenario) else "heterogeneous",
        "fixed_point_owed": contract is not None and fixed_point_owed(scenario, contract),
    })
    if run is not None:
        again = run(_with_own_answer(scenario, answer))
        moved = first_move(answer, again)
        record["stable"] = moved is None
        if moved is not None and contract is not None and contract.fixed_point == "FP3":
            violations.append(Violation("not-fixed-point", {"rule": "FP3", **moved}))
        record["order"] = order = _order_checks(scenario, run, answer)
        for check in ("reordered", "renamed"):
            allowed = None if contract is None else getattr(contract, check)
            got = order[check]
            if allowed is not None and (got not in _ORDER_RANK or _ORDER_RANK[got] > _ORDER_RANK[allowed]):
                violations.append(Violation("order-dependent", {"rule": "O1" if check == "reordered" else "O2", "verdict": got}))
    valid = not violations
    return Grade(
        assignor=name,
        valid=valid,
        violations=tuple(violations),
        balanced=balanced_columns(scenario, answer),
        kept=kept,
        optimal_kept=kept_optimum.objective.kept if kept_optimum.objective is not None else None,
        optimal_kept_global=full.objective.kept if full.objective is not None else None,
        proven=kept_optimum.proven and full.proven,
        # against the most a balanced assignment keeps; an assignor that owes no balance (heterogeneous
        # uniform) may keep more by staying unbalanced, so it has no stickiness to state: unmeasured
        # (the gap per tier in ``consumer`` still says how far it is from the optimum), never above 1
        stickiness=None if contract is not None and contract.balance is None
        else _ratio(kept, kept_optimum.objective.kept if kept_optimum.objective is not None else None),
        moved=sum(1 for m in scenario.members for tp in m.owned if tp not in set(answer.assignment.get(m.id, ()))),
        assign_seconds=assign_seconds,
        solve_seconds=solve_seconds,
        contract=contract.name if contract is not None else "none",
        contract_check=None if contract is None else contract.balance,
        notion="consumer",
        consumer=record,
    )


def _ratio(kept: int, optimum: int | None) -> float | None:
    if optimum is None:
        return None
    return 1.0 if optimum == 0 else kept / optimum


def grade_consumer_group(scenario: Scenario, assignor: str | AssignorInfo, *, limits: Any = None,
                         answer: Assignment | None = None) -> Grade:
    """Grade a server-side assignor on a consumer-group scenario (its promise, stability, order, optimum).
    An assignor's throw is recorded in ``error``/``run_error``, never raised."""
    from . import Limits, consumer_group_run

    limits = limits or Limits()
    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    run = consumer_group_run(info, limits=limits)
    contract = consumer_contract(info.kafka_name, scenario)
    start = time.perf_counter()
    if answer is None:
        try:
            answer = run(scenario)
        except StickyproofError as exc:
            error = RunError.of(exc)
            return Grade(info.name, False, (), {}, None, None, None, False, None, None, time.perf_counter() - start, None,
                         error=str(error), run_error=error, contract=contract.name if contract else "none",
                         contract_check=None if contract is None else contract.balance, notion="consumer")
    return _grade(scenario, info.name, contract, answer, time.perf_counter() - start, run, limits)


def promise_of(assignor: str, scenario: Scenario) -> str | None:
    """The name of the contract a server-side assignor (Kafka's name: ``uniform``, ``range``) owes on
    this group (``uniform`` homogeneous or heterogeneous by its subscriptions), or None."""
    contract = consumer_contract(assignor, scenario)
    return None if contract is None else contract.name


def grade_consumer_assignment(scenario: Scenario, assignment: Assignment, *, name: str = "",
                              contract: str | None = None, limits: Any = None) -> Grade:
    """Grade a given target of a consumer group: validity and the optimum; ``contract`` (a name of
    ``CONSUMER_CONTRACTS``) also holds it to that promise (default: none, no assignor to re-run)."""
    promise = CONSUMER_CONTRACTS[contract] if contract is not None else None
    return _grade(scenario, name, promise, assignment, None, None, limits)


def consumer_group_row(scenario: Scenario, assignor: str | AssignorInfo, *, limits: Any = None,
                       answer: Assignment | None = None) -> dict[str, Any]:
    """The sweep's hook: ``grade_consumer_group``'s grade as the flat fields of a classic row
    (``Grade.to_dict``) plus ``consumer_*`` columns: contract, fixed point, stable, order verdicts, tier gaps.
    ``answer``: what the assignor already answered on this very group (a history's step), not asked again."""
    return consumer_row_fields(grade_consumer_group(scenario, assignor, limits=limits, answer=answer))


def consumer_row_fields(g: Grade) -> dict[str, Any]:
    """``consumer_group_row`` of a grade already made (the sweep keeps the grade for its verdict)."""
    row = g.to_dict()
    rec = row.pop("consumer", None) or {}
    gap = rec.get("gap") or {}
    order = rec.get("order") or {}
    row.update({
        "consumer_contract": rec.get("contract"),
        "consumer_subscription": rec.get("subscription"),
        "consumer_fixed_point_owed": rec.get("fixed_point_owed"),
        "consumer_stable": rec.get("stable"),
        "consumer_order_reordered": order.get("reordered"),
        "consumer_order_renamed": order.get("renamed"),
        "consumer_at_optimum": rec.get("at_optimum"),
        "consumer_first_worse_tier": rec.get("first_worse_tier"),
        **{f"consumer_gap_{k}": v for k, v in gap.items()},
    })
    return row
