"""The optimum under Kafka's own balance notion (R33, C5), by a two-stage CP-SAT solve.

models/optimal-assignment.md T10: R33 (``verifyValidityAndBalance``) is a constraint, not a
measure of balance: no two members whose loads differ by 2 or more may both hold partitions of one
topic. The ``kafka`` optimum is the most partitions kept (O2) by an assignment satisfying C1, C2
and C5, and among those the most balanced (O1, least ``sum load^2``). C5 admits assignments the
``global`` optimum does not (a member holding no partition of a topic is never compared on it),
so it may keep more.

C5 is per topic, so the model counts per (topic, member), not per hub: ``x[t, m]`` partitions of
``t`` go to subscriber ``m``, ``holds[t, m]`` says ``x[t, m] > 0``, and for each topic the holders'
loads lie in a window ``[low_t, low_t + 1]`` (all holders pairwise within one: exactly C5).
Three parts: ``build_r33`` (model and variables), ``solve_r33`` (both stages, a ``SolveResult``),
``read_r33`` (counts back to partitions, deterministically).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidScenario
from ..model import Assignment, Scenario, TopicPartition
from .aggregate import cooperative_round
from .claims import assignable_topics, retainable_claims, subscribers_by_topic
from .optimal import solve_model
from .result import Objective, SolveResult

__all__ = ["R33Model", "build_r33", "solve_r33", "read_r33"]


@dataclass(frozen=True, eq=False)
class R33Model:
    """The CP-SAT model and its variables, keyed by (topic, member id)."""

    model: Any
    x: dict[tuple[str, str], Any]
    kept: dict[tuple[str, str], Any]
    load: dict[str, Any]
    sq: dict[str, Any]
    claims: dict[tuple[str, str], list[TopicPartition]]


def build_r33(scenario: Scenario) -> R33Model:
    """C1, C2 and C5 over per-topic counts; ``kept`` and ``sq`` ready for the two stages."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    counts = assignable_topics(scenario)
    subscribers = subscribers_by_topic(scenario)
    members = sorted(m.id for m in scenario.members)
    P = sum(counts.values())
    claims: dict[tuple[str, str], list[TopicPartition]] = {}
    for tp, m in sorted(retainable_claims(scenario).items()):
        claims.setdefault((tp.topic, m), []).append(tp)
    x: dict[tuple[str, str], Any] = {}
    holds: dict[tuple[str, str], Any] = {}
    kept: dict[tuple[str, str], Any] = {}
    by_member: dict[str, list[Any]] = {m: [] for m in members}
    for t, n in sorted(counts.items()):
        for m in subscribers[t]:
            x[t, m] = model.new_int_var(0, n, f"x[{t},{m}]")
            holds[t, m] = model.new_bool_var(f"holds[{t},{m}]")
            by_member[m].append(x[t, m])
            # holds[t, m] <=> x[t, m] > 0
            model.add(x[t, m] >= 1).only_enforce_if(holds[t, m])
            model.add(x[t, m] == 0).only_enforce_if(~holds[t, m])
            if (t, m) in claims:
                # O2: a claimant keeps at most what it gets of the topic and at most what it claims.
                kept[t, m] = model.new_int_var(0, len(claims[t, m]), f"kept[{t},{m}]")
                model.add(kept[t, m] <= x[t, m])
        # C1, C2: every partition of t to exactly one of its subscribers.
        model.add(sum(x[t, m] for m in subscribers[t]) == n)
    load = {m: model.new_int_var(0, P, f"load[{m}]") for m in members}
    for m in members:
        model.add(load[m] == sum(by_member[m]))
    for t in sorted(counts):
        # C5 (R33): the members holding partitions of t have loads within one of each other.
        low = model.new_int_var(0, P, f"low[{t}]")
        for m in subscribers[t]:
            model.add(load[m] >= low).only_enforce_if(holds[t, m])
            model.add(load[m] <= low + 1).only_enforce_if(holds[t, m])
    sq = {}
    for m in members:
        sq[m] = model.new_int_var(0, P * P, f"sq[{m}]")
        model.add_multiplication_equality(sq[m], [load[m], load[m]])
    return R33Model(model, x, kept, load, sq, claims)


def read_r33(scenario: Scenario, built: R33Model, solver: Any) -> Assignment:
    """Counts -> partitions: each claimant first keeps its lowest claimed partitions (``kept``), then
    each member, in id order, takes the lowest remaining partitions of the topic up to ``x``."""
    counts = assignable_topics(scenario)
    owner: dict[TopicPartition, str] = {}
    for (t, m), v in built.kept.items():
        for tp in built.claims[t, m][: solver.value(v)]:
            owner[tp] = m
    for t, n in sorted(counts.items()):
        free = [TopicPartition(t, p) for p in range(n) if TopicPartition(t, p) not in owner]
        for m in sorted(mm for (tt, mm) in built.x if tt == t):
            take = solver.value(built.x[t, m]) - sum(1 for tp, o in owner.items() if o == m and tp.topic == t)
            for tp in free[:take]:
                owner[tp] = m
            free = free[take:]
    by_member: dict[str, list[TopicPartition]] = {m.id: [] for m in scenario.members}
    for tp, m in sorted(owner.items()):
        by_member[m].append(tp)
    return Assignment({m: tuple(v) for m, v in sorted(by_member.items())})


def _objective(scenario: Scenario, target: Assignment) -> Objective:
    keep = retainable_claims(scenario)
    loads = [len(target.assignment.get(m.id, ())) for m in scenario.members]
    kept = sum(1 for m, tps in target.assignment.items() for tp in tps if keep.get(tp) == m)
    return Objective(sum(v * v for v in loads), max(loads, default=0), kept, None)


def solve_r33(
    scenario: Scenario, *, time_limit: float | None = None, racks: bool | str = False
) -> SolveResult:
    """The ``kafka`` (R33) optimum: stage 1 maximises kept under C1, C2, C5; stage 2 fixes it and
    minimises ``sum load^2``. Proven only when both stages are OPTIMAL (one deterministic worker;
    ``time_limit``, wall-clock, splits evenly over the stages as a safety stop)."""
    from ortools.sat.python import cp_model

    if racks:
        raise InvalidScenario("racks", "the kafka (R33) optimum has no rack tier; use --balance global or uniform with it")
    start = time.perf_counter()
    built = build_r33(scenario)
    model = built.model

    def solver_for() -> Any:
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        if time_limit is not None:
            solver.parameters.max_time_in_seconds = max(0.0, float(time_limit) / 2)
        return solver

    def result(status: str, proven: bool, target: Assignment | None, bound: int | None, detail: str = "") -> SolveResult:
        objective = None if target is None else _objective(scenario, target)
        assignment = target
        if target is not None and scenario.protocol == "cooperative":
            assignment = cooperative_round(scenario, target)
        score = None if objective is None else objective.kept
        return SolveResult(
            engine="cpsat-r33", status=status, proven=proven, balance="kafka", assignment=assignment, target=target,
            objective=objective, kept=score, score=score, bound=bound,
            gap=None if bound is None or score is None else bound - score,
            seconds=time.perf_counter() - start, time_limit=time_limit, workers=1, seed=0, detail=detail,
        )

    # Stage 1 (O2 under C5): the most partitions kept.
    kept_total = sum(built.kept.values())
    model.maximize(kept_total)
    solver = solver_for()
    first = solve_model(solver, model, "the kafka (R33) optimum, stage 1")
    if first not in ("OPTIMAL", "FEASIBLE"):
        return result("UNKNOWN", False, None, None, "stage 1 (kept under C5) found no solution within the time limit")
    best = int(round(solver.objective_value))
    bound = int(round(solver.best_objective_bound))
    # Stage 2 (O1 among them): the least sum of squared loads at that many kept.
    model.add(kept_total >= best)
    model.clear_objective()
    model.minimize(sum(built.sq.values()))
    solver2 = solver_for()
    second = solve_model(solver2, model, "the kafka (R33) optimum, stage 2")
    if second not in ("OPTIMAL", "FEASIBLE"):
        return result("UNKNOWN", False, None, bound, "stage 2 (balance at that kept) found no solution within the time limit")
    target = read_r33(scenario, built, solver2)
    proven = first == "OPTIMAL" and second == "OPTIMAL"
    detail = "" if proven else f"stage 1 {first}, stage 2 {second}"
    return result("OPTIMAL" if proven else "FEASIBLE", proven, target, best if first == "OPTIMAL" else bound, detail)
