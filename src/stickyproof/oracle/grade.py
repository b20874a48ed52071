"""One grade per scenario x assignor: validity, balance per mode, stickiness against the proven optimum.

What each field measures is models/invariants.md §3-§4. The grader never imports the assignors or
the leader (the layer table, tests/test_layers.py): it receives ``run``, a callable ``Scenario -> Assignment``, from
``grading.grade_assignor``, or a given ``assignment``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ..model import Assignment, Scenario, TopicPartition, assignment_to_dict
from .claims import current_owners, retainable_claims
from .contracts import DEFAULT_CONTRACT, Contract, contract_named, contract_optimum
from .invariants import ASSIGNMENT_INVARIANTS, Violation, check_assignment, subscriptions_equal
from .racks import count_aligned, kafka_rack_path

__all__ = ["Grade", "RunError", "grade", "MAX_FOLLOW_UPS", "BALANCE_COLUMNS", "next_generation"]

MAX_FOLLOW_UPS = 4
"""Cooperative follow-up rounds replayed before balance is judged (Kafka's tests replay at most 4)."""

Run = Callable[[Scenario], Assignment]


@dataclass(frozen=True)
class RunError:
    """Why the assignor gave no answer: ``kind`` (``error``; ``time-limit`` ...: the raised error's
    ``kind``), the exception's type name and message, the Java exception Kafka would throw (when
    the assignor reproduces one), and the type of the exception it was raised from (a user
    callable's own exception behind ``AssignorFailure``)."""

    kind: str
    type: str
    message: str
    kafka_exception: str | None = None
    cause: str | None = None

    @classmethod
    def of(cls, exc: BaseException) -> "RunError":
        cause = exc.__cause__
        return cls(
            kind=str(getattr(exc, "kind", "error")),
            type=type(exc).__name__,
            message=str(exc),
            kafka_exception=getattr(exc, "kafka_exception", None),
            cause=None if cause is None else type(cause).__name__,
        )

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


BALANCE_COLUMNS = ("uniform", "global", "kafka", "per-topic", "pairwise")
"""Every balance a grade reports on the settled assignment (quality columns; only the contract's is a promise)."""


@dataclass(frozen=True)
class Grade:
    """The verdict on one assignor (or one given assignment) for one scenario (models/invariants.md §4)."""

    assignor: str
    valid: bool
    violations: tuple[Violation, ...]
    balanced: Mapping[str, bool | None]
    kept: int | None
    optimal_kept: int | None
    optimal_kept_global: int | None
    proven: bool
    stickiness: float | None
    moved: int | None
    assign_seconds: float | None
    solve_seconds: float | None
    error: str | None = None
    follow_ups: int = 0
    deferred: tuple[str, ...] = field(default=())
    run_error: RunError | None = None
    contract: str = DEFAULT_CONTRACT
    contract_check: str | None = None
    notion: str | None = None
    unnecessary: tuple[TopicPartition, ...] = ()
    optimal_kept_view: int | None = None
    stability_judged: bool = True
    #: Known Kafka behaviour explaining a failure (``grading.hazards``; the oracle only carries them).
    labels: tuple[Any, ...] = ()
    #: The name the assignor's program gives itself (an ``exec:`` child's hello), when not ``assignor``.
    assignor_name: str | None = None
    #: A consumer group's (KIP-848) record: contract, fixed point, stable, order, the optimum and the
    #: gap per tier (``grading.consumer``); None for a classic group.
    consumer: Mapping[str, Any] | None = None

    @property
    def contract_balanced(self) -> bool | None:
        """The promised balance on the settled assignment (True when the contract promises none)."""
        if self.contract_check is None:
            return None if self.run_error is not None else True
        return self.balanced.get(self.contract_check)

    def violated(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for v in self.violations:
            seen.setdefault(v.invariant)
        return tuple(seen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.assignor,
            "assignor_name": self.assignor_name,
            "contract": self.contract,
            "valid": self.valid,
            "violations": [v.to_dict() for v in self.violations],
            "contract_balanced": self.contract_balanced,
            "balanced": dict(self.balanced),
            "kept": self.kept,
            "optimal_kept": self.optimal_kept,
            "proven": self.proven,
            "stickiness": None if self.stickiness is None else round(self.stickiness, 6),
            "unnecessary_moves": [[tp.topic, tp.partition] for tp in self.unnecessary],
            "moved": self.moved,
            "notion": self.notion,
            "optimal_kept_global": self.optimal_kept_global,
            "optimal_kept_view": self.optimal_kept_view,
            "assign_seconds": None if self.assign_seconds is None else round(self.assign_seconds, 6),
            "solve_seconds": None if self.solve_seconds is None else round(self.solve_seconds, 6),
            "error": self.error,
            "follow_ups": self.follow_ups,
            "deferred": list(self.deferred),
            "stability_judged": self.stability_judged,
            "hazards": [label.to_dict() for label in self.labels],
            **({} if self.consumer is None else {"consumer": dict(self.consumer)}),
        }


def grade(
    scenario: Scenario,
    *,
    run: Run | None = None,
    assignment: Assignment | None = None,
    view: Scenario | None = None,
    assignor: str = "",
    z3_query_seconds: float | None = None,
    cpsat_work: float | None = None,
    cpsat_seconds: float | None = None,
    contract: str | None = None,
    balance: str | None = None,
    stability: bool = True,
    answer: Assignment | None = None,
    answer_seconds: float | None = None,
    leader_input: Scenario | None = None,
    rack_order: bool = True,
) -> Grade:
    """Grade ``run``'s answer (or the given ``assignment``) on ``scenario``, the truth.

    ``contract``: the assignor's promise (``contracts.CONTRACTS``; default Kafka's): which balance
    breaking is a failure, and the notion stickiness is measured in. ``balance``: a balance mode
    that overrides the contract's check (``uniform``, ``global``, ``kafka``, ``per-topic``,
    ``pairwise``). ``view``: the scenario as the assignor's leader decoded it, for
    ``optimal_kept_view``. ``z3_query_seconds`` bounds each Z3 query; ``cpsat_work`` (deterministic
    units) and ``cpsat_seconds`` (wall-clock, a safety stop) each CP-SAT solve of the contract optimum.
    ``stability``: judge ``unstable`` (only meaningful when the assignor can see its previous
    assignment: ``grading`` decides). ``answer``: the answer ``run`` already gave for ``scenario``
    (a history's rebalance), used as round 1 instead of calling ``run`` again; ``answer_seconds``
    its assign time. ``run`` still answers the determinism, follow-up and stability rounds.
    ``leader_input``: the group as the leader was handed it when that differs from the truth (a
    history's eager members revoked what they held before joining, R37, but held it all the same):
    round 1 and its determinism re-run are asked on it, everything else is judged on ``scenario``.
    ``rack_order``: the assignor implements KIP-881 (false for Kafka's releases before 3.5): where the
    rack-aware path applies (decided on ``view``), the ``kafka`` contract's optimum orders balance,
    rack alignment, then kept (models/optimal-assignment.md T9), and a re-run that only improves rack
    alignment is not ``unstable``.
    """
    if (run is None) == (assignment is None):
        raise TypeError("grade needs exactly one of run= or assignment=")
    promise = contract_named(contract)
    mode = balance if balance is not None else promise.check(scenario)
    assign_seconds = None
    if answer is not None:
        if run is None:
            raise TypeError("answer= is the answer of run=: give run= too")
        assignment, assign_seconds = answer, answer_seconds
    elif run is not None:
        start = time.perf_counter()
        try:
            assignment = _call(run, leader_input if leader_input is not None else scenario)
        except Exception as exc:  # an assignor's throw is a graded outcome, never a crash of the grader
            return _failed(assignor, promise, mode, RunError.of(exc), time.perf_counter() - start)
        assign_seconds = time.perf_counter() - start
    assert assignment is not None

    cooperative = scenario.protocol == "cooperative"
    checked = ASSIGNMENT_INVARIANTS if mode is not None else [i for i in ASSIGNMENT_INVARIANTS if i != "imbalance"]
    # Cooperative safety is owed to live claims: what members listed when they joined. An eager member
    # of a cooperative generation (mid-upgrade, R36/R37) revoked all it held before joining, so handing
    # its partitions on at once is safe though the truth says it held them (the truth is for stickiness).
    claims = leader_input if leader_input is not None else scenario
    check = check_assignment(claims, assignment, balance=mode, cooperative=cooperative, only=checked,
                             z3_query_seconds=z3_query_seconds)
    violations = list(check.violations)

    # Balance is judged where the group comes to rest: after the follow-up rounds of a cooperative rebalance.
    settled, follow_ups, settle_error, settled_state = _settle(scenario, assignment, run)
    # When nothing was withheld the settled assignment is the one just checked: its verdict for `mode` is known.
    known = {mode: "imbalance" not in check.violated()} if mode and settled is assignment and not check.deferred else {}
    balanced, deferred = _balanced(scenario, settled, z3_query_seconds, known)
    if settle_error:
        violations.append(Violation("unstable", {"round": follow_ups + 1, "error": settle_error}))
    elif run is not None and settled.revoking and any(settled.revoking.values()):
        # Only an assignor that was replayed can fail to converge; a given round-1 assignment that
        # withholds partitions is a legitimate cooperative round whose follow-up nobody can run.
        violations.append(Violation("unstable", {"rounds": follow_ups, "still_revoking": _tps(settled.revoking)}))
    if mode and "imbalance" in check.deferred and balanced.get(mode) is False:
        violations.append(Violation("imbalance", {"mode": mode, "after_follow_ups": follow_ups, "loads": settled.loads()}))
    if settled is not assignment:
        # The follow-up round is an assignment too: it may drop, duplicate or unsafely hand over what round 1 kept.
        later = check_assignment(
            settled_state, settled, balance=mode, cooperative=cooperative, z3_query_seconds=z3_query_seconds,
            only=[i for i in ASSIGNMENT_INVARIANTS if i != "imbalance"],
        )
        violations.extend(Violation(v.invariant, {**v.witness, "round": follow_ups + 1}) for v in later.violations)

    if run is not None and not settle_error:
        asked = leader_input if leader_input is not None else scenario
        racks = kafka_rack_path(view if view is not None else asked) if rack_order and promise.name == "kafka" else None
        violations.extend(_run_invariants(asked, assignment, settled, run, settled_state, stability=stability, racks=racks))

    solve_start = time.perf_counter()
    from .flow import solve_flow  # OR-Tools is imported only by the oracle modules that solve

    valid = not violations
    kept = _kept(scenario, assignment)
    # Stickiness in the contract's own notion, over what the members really owned, on valid rows only:
    # a valid assignment is balanced as promised, so it never keeps more than that optimum (§4).
    optimum = (
        contract_optimum(scenario, promise, assignment=assignment, cpsat_work=cpsat_work, cpsat_seconds=cpsat_seconds,
                         rack_order=rack_order, rack_view=view)
        if valid else None
    )
    global_opt = solve_flow(scenario, balance="global")
    view_kept = None
    if view is not None and view != scenario:
        view_kept = solve_flow(view, balance="global").kept
    solve_seconds = time.perf_counter() - solve_start
    optimal_kept = optimum.kept if optimum is not None else None
    return Grade(
        assignor=assignor,
        valid=valid,
        violations=tuple(violations),
        balanced=balanced,
        kept=kept,
        optimal_kept=optimal_kept,
        optimal_kept_global=global_opt.kept,
        proven=bool(optimum is not None and optimum.proven),
        stickiness=_ratio(kept, optimum.bound if optimum is not None and not optimum.proven else optimal_kept),
        moved=_moved(scenario, assignment),
        assign_seconds=assign_seconds,
        solve_seconds=solve_seconds,
        follow_ups=follow_ups,
        deferred=tuple(d for d in check.deferred if mode and balanced.get(mode) is None),
        contract=promise.name,
        contract_check=mode,
        notion=None if optimum is None else optimum.notion,
        unnecessary=() if optimum is None else optimum.unnecessary,
        optimal_kept_view=view_kept if view_kept is not None else global_opt.kept,
        stability_judged=stability,
    )


def _ratio(kept: int, optimum: int | None) -> float | None:
    """kept / optimum; 1.0 when the optimum keeps nothing (nothing could be kept)."""
    if optimum is None:
        return None
    return 1.0 if optimum == 0 else kept / optimum


def _failed(assignor: str, promise: Contract, mode: str | None, error: RunError, seconds: float) -> Grade:
    return Grade(
        assignor=assignor, valid=False, violations=(), balanced={m: None for m in BALANCE_COLUMNS},
        kept=None, optimal_kept=None, optimal_kept_global=None, proven=False, stickiness=None, moved=None,
        assign_seconds=seconds, solve_seconds=None, error=str(error), run_error=error,
        contract=promise.name, contract_check=mode,
    )


def next_generation(scenario: Scenario, assignment: Assignment) -> Scenario:
    """The same group one rebalance later: every member owns what it was assigned, at generation max + 1.

    Members keep their versions, racks and subscriptions; metadata is unchanged (no event), so an
    assignor owes the same answer back (stability) or, in a cooperative round, hands out what was withheld.
    """
    generation = max([m.generation for m in scenario.members] + [0]) + 1
    members = tuple(
        replace(m, owned=tuple(assignment.assignment.get(m.id, ())), generation=generation) for m in scenario.members
    )
    return replace(scenario, members=members)


def _settle(scenario: Scenario, assignment: Assignment, run: Run | None) -> tuple[Assignment, int, str | None, Scenario]:
    """Replay cooperative follow-up rounds until nothing is withheld (at most MAX_FOLLOW_UPS).

    Returns the last answer, the number of follow-ups, the error that stopped them (or None), and
    the scenario the last answer was given for.
    """
    current, state, rounds = assignment, scenario, 0
    while run is not None and current.revoking and any(current.revoking.values()) and rounds < MAX_FOLLOW_UPS:
        following = next_generation(state, current)
        try:
            current = _call(run, following)
        except Exception as exc:
            return current, rounds, f"{type(exc).__name__}: {exc}", state
        state = following
        rounds += 1
    return current, rounds, None, state


def _call(run: Run, scenario: Scenario) -> Assignment:
    """``run(scenario)``, refusing an answer that is not an Assignment (a user callable's bug is graded, not crashed on)."""
    answer = run(scenario)
    if not isinstance(answer, Assignment):
        raise TypeError(f"the assignor returned {type(answer).__name__}, not an Assignment")
    return answer


def _balanced(
    scenario: Scenario, settled: Assignment, z3_query_seconds: float | None, known: Mapping[str, bool]
) -> tuple[dict[str, bool | None], tuple[str, ...]]:
    pending = bool(settled.revoking and any(settled.revoking.values()))
    out: dict[str, bool | None] = {}
    for mode in BALANCE_COLUMNS:
        if (mode == "uniform" and not subscriptions_equal(scenario)) or pending:
            out[mode] = None
            continue
        if mode in known:
            out[mode] = known[mode]
            continue
        # The settled assignment withholds nothing, so it is judged as an eager one.
        result = check_assignment(scenario, settled, balance=mode, cooperative=False, only=("imbalance",),
                                  z3_query_seconds=z3_query_seconds)
        out[mode] = not result.violations
    return out, ("imbalance",) if pending else ()


def _run_invariants(
    scenario: Scenario, answer: Assignment, settled: Assignment, run: Run, settled_state: Scenario, *,
    stability: bool = True, racks: Mapping[str, str | None] | None = None,
) -> list[Violation]:
    """``nondeterministic``: run the answer round again; ``unstable``: feed the settled answer back
    at the generation after the round that produced it (``settled_state``), unless ``stability`` is
    off (an assignor that cannot see its previous assignment owes no stability).

    ``racks``: on Kafka's rack-aware path (KIP-881), the members' racks as it sees them. There
    "previously owned partitions may be reassigned to improve rack locality", so a re-run with more
    rack-aligned partitions (D7) than the settled answer keeps that promise and is not ``unstable``;
    a re-run that moves partitions without an alignment gain is, and its witness carries both counts
    (``aligned_before``, ``aligned_after``)."""
    found: list[Violation] = []
    try:
        again = _call(run, scenario)
    except Exception as exc:
        return [Violation("nondeterministic", {"second_run_error": f"{type(exc).__name__}: {exc}"})]
    diff = _first_difference(answer, again)
    if diff is not None:
        found.append(Violation("nondeterministic", diff))
    if not stability:
        return found
    try:
        following = _call(run, next_generation(settled_state, settled))
    except Exception as exc:
        return found + [Violation("unstable", {"error": f"{type(exc).__name__}: {exc}"})]
    diff = _first_difference(settled, following)
    if diff is not None and racks is not None:
        # A cooperative re-run withholds what it moves: compare where its follow-ups settle.
        landed, _, _, _ = _settle(next_generation(settled_state, settled), following, run)
        before, after = (count_aligned(scenario, racks, _owner(x)) for x in (settled, landed))
        if after > before:
            return found
        diff = {**diff, "aligned_before": before, "aligned_after": after}
    if diff is not None:
        found.append(Violation("unstable", diff))
    return found


def _owner(x: Assignment) -> dict[TopicPartition, str]:
    return {tp: m for m, tps in x.assignment.items() for tp in tps}


def _first_difference(a: Assignment, b: Assignment) -> dict[str, Any] | None:
    """The answer partition (sorted) whose holder or withholding differs between two answers, or None."""

    def where(x: Assignment) -> dict[TopicPartition, tuple[str, ...]]:
        # Holders as a set (models/invariants.md §3): a client reads its partition list as a set, so
        # listing a partition twice and once are the same answer.
        out: dict[TopicPartition, set[str]] = {}
        for m, tps in x.assignment.items():
            for tp in tps:
                out.setdefault(tp, set()).add(m)
        for m, tps in (x.revoking or {}).items():
            for tp in tps:
                out.setdefault(tp, set()).add(f"revoking:{m}")
        return {tp: tuple(sorted(v)) for tp, v in out.items()}

    wa, wb = where(a), where(b)
    for tp in sorted(set(wa) | set(wb)):
        if wa.get(tp) != wb.get(tp):
            return {"partition": [tp.topic, tp.partition], "first": list(wa.get(tp, ())), "second": list(wb.get(tp, ()))}
    return None


def _kept(scenario: Scenario, assignment: Assignment) -> int:
    """Distinct partitions held by their retainable claimant (a partition listed twice counts once)."""
    keep = retainable_claims(scenario)
    return len({tp for m, tps in assignment.assignment.items() for tp in tps if keep.get(tp) == m})


def _moved(scenario: Scenario, assignment: Assignment) -> int:
    owners = current_owners(scenario)
    holders: dict[TopicPartition, set[str]] = {}
    for m, tps in assignment.assignment.items():
        for tp in tps:
            holders.setdefault(tp, set()).add(m)
    return sum(1 for tp, owner in owners.items() if owner not in holders.get(tp, ()))


def _tps(by_member: Mapping[str, Any]) -> dict[str, Any]:
    return assignment_to_dict(Assignment({}, {m: tuple(v) for m, v in by_member.items()}))["revoking"]
