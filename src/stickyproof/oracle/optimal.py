"""The lexicographic optimum by CP-SAT: aggregated counts, or per-partition Booleans.

models/optimal-assignment.md §4 and §6. Minimising ``sum load^2`` in CP-SAT is slow to prove, so
by default (``balance_source="flow"``) the O1 optimum comes from the certified min-cost flow
and enters as the exact linear constraint C4 + C7 (T3 windows), the flow's assignment is the
hint, and CP-SAT proves O2 (and O3) under it. ``balance_source="cpsat"`` minimises O1 in
CP-SAT first (independent of the flow, for cross-checks on small groups).

Three parts, as in the OR-Tools samples: ``build_aggregated`` / ``build_per_partition`` return
the model and its variables, ``solve_cpsat`` returns a ``SolveResult``, ``read_assignment``
returns an ``Assignment``. The result is OPTIMAL only when CP-SAT proved it (and the flow's
certificate passed, when the flow supplied O1); a time-limited incumbent is FEASIBLE with its
bound and gap.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidScenario, SolverError
from ..model import Assignment, Scenario
from .aggregate import Aggregate, aggregate_with, cooperative_round, expand, owner_array, tiers, to_assignment
from .claims import NO_MEMBER
from .flow import certified_solution, uniform_quota
from .result import Objective, SolveResult, check_balance_mode
from .windows import load_windows

__all__ = ["BalanceSpec", "CpVars", "build_aggregated", "build_per_partition", "read_assignment", "solve_cpsat", "solve_interruptibly", "solve_model", "MODELS"]

MODELS = ("aggregated", "per-partition")


@dataclass(frozen=True, eq=False)
class BalanceSpec:
    """How O1 enters the model.

    ``uniform``: C3 with ``quota = (lo, hi)``. ``fixed``: C7 windows ``lo[m]..hi[m]`` and the
    linear C4 ``sum (2 lo + 1) load <= rhs``. ``minimise``: stage 1 of ``balance_source="cpsat"``
    (``sq[m] = load^2``, minimise the sum). ``bounded``: stage 2, ``sum sq <= s_star``.
    """

    kind: str
    quota: tuple[int, int] | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    rhs: int | None = None
    s_star: int | None = None
    level_sums: dict[int, int] | None = None


@dataclass(frozen=True, eq=False)
class CpVars:
    """The variables of one CP-SAT model (``kind`` = aggregated or per-partition)."""

    kind: str
    load: list[Any]
    sq: list[Any] | None
    kept: dict[int, Any]  # aggregated: class -> y[c]
    pool: dict[tuple[int, int], Any]  # aggregated: (hub, member) -> z[h, m]
    owns: dict[tuple[int, int], Any]  # per-partition: (member, pid) -> owns[m, p]
    weights: tuple[int, int]  # (w_kept, w_rack)


def _sum(xs: list[Any]) -> Any:
    from ortools.sat.python import cp_model

    return cp_model.LinearExpr.sum(xs)


def _wsum(xs: list[Any], coefs: list[int]) -> Any:
    from ortools.sat.python import cp_model

    return cp_model.LinearExpr.weighted_sum(xs, coefs)


def _weights(agg: Aggregate) -> tuple[int, int]:
    """O2 over O3 (T4): w_kept > the whole O3 range; in Kafka's rack-aware order, alignment over kept."""
    if agg.racks and agg.rack_first:
        return (1, agg.retainable + 1)
    return (agg.rack_informed + 1, 1) if agg.racks else (1, 0)


def _load_domain(agg: Aggregate, m: int, spec: BalanceSpec) -> tuple[int, int]:
    lo, hi = 0, int(agg.reach[m])
    if spec.kind == "uniform" and spec.quota is not None:
        lo, hi = max(lo, spec.quota[0]), min(hi, spec.quota[1])
    if spec.kind == "fixed" and spec.lo is not None and spec.hi is not None:
        lo, hi = max(lo, int(spec.lo[m])), min(hi, int(spec.hi[m]))
    return lo, hi


def _add_balance(model: Any, agg: Aggregate, load: list[Any], spec: BalanceSpec) -> list[Any] | None:
    """O1 as constraints (or as the stage-1 objective), per ``spec``."""
    M = agg.num_members
    if spec.kind == "uniform":
        lo, hi = spec.quota
        for m in range(M):
            # C3 uniform balance: floor(P/N) <= load(m) <= ceil(P/N)
            model.add(load[m] >= lo)
            model.add(load[m] <= hi)
        return None
    if spec.kind == "fixed":
        # C7 windows are in the load domains; C4 is linear inside them: l^2 = a^2 + (2a+1)(l-a)
        if M:
            model.add(_wsum(load, [int(2 * spec.lo[m] + 1) for m in range(M)]) <= spec.rhs)
        # C8 level sums (T3): members whose window is [L, L+1] keep their total load; this makes
        # the LP relaxation a network flow (integral), so the bound meets the optimum at once
        for level, total in spec.level_sums.items():
            group = [load[m] for m in np.flatnonzero((spec.lo == level) & (spec.hi == level + 1)).tolist()]
            model.add(_sum(group) == total)
        return None
    sq = []
    for m in range(M):
        lo, hi = _load_domain(agg, m, spec)
        s = model.new_int_var(lo * lo, hi * hi, f"sq[{agg.members[m]}]")
        model.add_multiplication_equality(s, [load[m], load[m]])
        sq.append(s)
    if spec.kind == "bounded":
        # C4 global balance: sum load^2 <= S*
        model.add(_sum(sq) <= spec.s_star)
    return sq


def build_aggregated(agg: Aggregate, spec: BalanceSpec) -> tuple[Any, CpVars]:
    """Counts per (class, member): y[c] kept by the claimant, z[h, m] from hub h's pool (C6)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    w_kept, w_rack = _weights(agg)
    M = agg.num_members
    domains = [_load_domain(agg, m, spec) for m in range(M)]
    load = [model.new_int_var(lo, max(lo, hi), f"load[{agg.members[m]}]") for m, (lo, hi) in enumerate(domains)]
    kept: dict[int, Any] = {}
    pool: dict[tuple[int, int], Any] = {}
    terms: list[list[Any]] = [[] for _ in range(M)]
    obj_vars: list[Any] = []
    obj_coefs: list[int] = []
    classes_of_hub = agg.classes_of_hub()
    sizes = agg.class_size.tolist()
    claimants = agg.class_claimant.tolist()
    locals_ = agg.class_local.tolist()
    for h, hub in enumerate(agg.hubs):
        claimed = []
        for c in classes_of_hub[h]:
            k = claimants[c]
            if k == NO_MEMBER:
                continue
            y = model.new_int_var(0, min(sizes[c], domains[k][1]), f"y[{c}]")
            kept[c] = y
            claimed.append(y)
            terms[k].append(y)
            obj_vars.append(y)
            obj_coefs.append(w_kept + w_rack * int(locals_[c]))
        zs = []
        for i, m in enumerate(hub.subscribers.tolist()):
            z = model.new_int_var(0, min(hub.size, domains[m][1]), f"z[{h},{agg.members[m]}]")
            pool[h, m] = z
            zs.append(z)
            terms[m].append(z)
            if w_rack and hub.local[i]:
                obj_vars.append(z)
                obj_coefs.append(w_rack)
        # C6 (C1 + C2 aggregated): every partition of the hub is kept by its claimant or pooled to a subscriber
        model.add(_sum(zs + claimed) == hub.size)
    for m in range(M):
        model.add(load[m] == _sum(terms[m]))
    sq = _add_balance(model, agg, load, spec)
    if spec.kind == "minimise":
        model.minimize(_sum(sq))
    else:
        # O2 (then O3): maximise partitions kept by their retainable claimant (and rack-local ones)
        model.maximize(_wsum(obj_vars, obj_coefs))
    return model, CpVars("aggregated", load, sq, kept, pool, {}, (w_kept, w_rack))


def build_per_partition(agg: Aggregate, spec: BalanceSpec) -> tuple[Any, CpVars]:
    """Booleans owns[m, p] for every partition p and subscriber m (small groups; any objective)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    w_kept, w_rack = _weights(agg)
    M = agg.num_members
    domains = [_load_domain(agg, m, spec) for m in range(M)]
    load = [model.new_int_var(lo, max(lo, hi), f"load[{agg.members[m]}]") for m, (lo, hi) in enumerate(domains)]
    owns: dict[tuple[int, int], Any] = {}
    terms: list[list[Any]] = [[] for _ in range(M)]
    obj_vars: list[Any] = []
    obj_coefs: list[int] = []
    for c in range(agg.num_classes):
        hub = agg.hubs[int(agg.class_hub[c])]
        claimant = int(agg.class_claimant[c])
        subs = hub.subscribers.tolist()
        local = hub.local.tolist()
        for p in agg.class_partitions(c).tolist():
            row = []
            for m, is_local in zip(subs, local):
                x = model.new_bool_var(f"owns[{agg.members[m]},{p}]")
                owns[m, p] = x
                row.append(x)
                terms[m].append(x)
                w = (w_kept if m == claimant else 0) + (w_rack if is_local else 0)
                if w:
                    obj_vars.append(x)
                    obj_coefs.append(w)
            # C1 + C2: each partition goes to exactly one subscriber of its topic
            model.add_exactly_one(row)
    for m in range(M):
        model.add(load[m] == _sum(terms[m]))
    sq = _add_balance(model, agg, load, spec)
    if spec.kind == "minimise":
        model.minimize(_sum(sq))
    else:
        # O2 (then O3)
        model.maximize(_wsum(obj_vars, obj_coefs))
    return model, CpVars("per-partition", load, sq, {}, {}, owns, (w_kept, w_rack))


def _add_hint(model: Any, agg: Aggregate, v: CpVars, owner: np.ndarray) -> None:
    """Warm start from a valid assignment (dense owners)."""
    loads = np.bincount(owner, minlength=agg.num_members) if owner.size else np.zeros(agg.num_members, dtype=np.int64)
    for m in range(agg.num_members):
        model.add_hint(v.load[m], int(loads[m]))
    if v.sq is not None:
        for m in range(agg.num_members):
            model.add_hint(v.sq[m], int(loads[m]) ** 2)
    if v.kind == "per-partition":
        for (m, p), x in v.owns.items():
            model.add_hint(x, int(owner[p] == m))
        return
    # kept[c] = partitions of class c held by its claimant; the rest count in the pools
    class_of_pos = np.repeat(np.arange(agg.num_classes), agg.class_size)
    holders = owner[agg.class_order]
    is_kept = holders == agg.class_claimant[class_of_pos]
    kept_counts = np.bincount(class_of_pos[is_kept], minlength=agg.num_classes)
    for c, y in v.kept.items():
        model.add_hint(y, int(kept_counts[c]))
    M = agg.num_members
    pool_key = agg.class_hub[class_of_pos[~is_kept]] * M + holders[~is_kept]
    keys, counts = np.unique(pool_key, return_counts=True)
    pool_counts = dict(zip(keys.tolist(), counts.tolist()))
    for (h, m), z in v.pool.items():
        model.add_hint(z, pool_counts.get(h * M + m, 0))


def _run(model: Any, time_limit: float | None, workers: int, seed: int, *, presolve: bool = True) -> tuple[Any, str]:
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, float(time_limit))
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    if workers > 1:
        solver.parameters.interleave_search = True  # deterministic multi-worker search
    # The bound comes from the LP, which with C8 is a network flow LP and so meets the optimum:
    # load it whole and let the root solve run to the end, instead of CP-SAT's default of adding
    # rows lazily with a small root iteration budget (measured: unproven after 60 s at
    # 1,000 x 100,000 with the defaults, proven in about 30 s with these).
    solver.parameters.add_lp_constraints_lazily = False
    solver.parameters.root_lp_iterations = 10_000_000
    # Presolve spends seconds (13 s at 263k Booleans) and finds nothing to remove in these
    # models; stage 1 of balance_source="cpsat" (the quadratic objective) keeps it.
    solver.parameters.cp_model_presolve = presolve
    return solver, solve_model(solver, model)


def solve_interruptibly(solver: Any, model: Any) -> Any:
    """``solver.solve(model)`` that Ctrl-C stops at once: the search ends and ``KeyboardInterrupt``
    reaches the caller. Every CP-SAT solve of the oracle goes through here (``solve_model``).

    CP-SAT takes SIGINT for itself by default: it stops its search, returns the incumbent as if
    its time had run out (a FEASIBLE answer the caller would report as the grade) and, when it
    returns, leaves SIGINT at the system default, so a later Ctrl-C kills the process without a
    word. So ``catch_sigint_signal`` is off on this solver and the signal reaches Python; since
    Python handles it only between bytecodes, never inside the C search, the main thread waits
    for the search in a helper thread, a wait Ctrl-C interrupts: it then stops the search
    (``stop_search``), waits for it to end and re-raises. The solver and the process are
    otherwise untouched. In any other thread (where no signal arrives) it solves in place."""
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model)
    outcome: dict[str, Any] = {}

    def search() -> None:
        try:
            outcome["status"] = solver.solve(model)
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    searching = threading.Thread(target=search, name="stickyproof-cp-sat", daemon=True)
    searching.start()
    try:
        searching.join()
    except BaseException:
        while searching.is_alive():  # asked again until it ends: the search may not have begun
            solver.stop_search()
            try:
                searching.join(0.01)
            except KeyboardInterrupt:  # a second Ctrl-C: the first is on its way already
                pass
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["status"]


def solve_model(solver: Any, model: Any, what: str = "the model") -> str:
    """``solver.solve(model)`` with OR-Tools' failures translated (``SolverError``); the status name.
    Ctrl-C stops it (``solve_interruptibly``)."""
    try:
        status = solve_interruptibly(solver, model)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise SolverError(f"CP-SAT failed on {what}: {exc}") from exc
    name = solver.status_name(status)
    if name == "MODEL_INVALID":
        raise SolverError(f"CP-SAT rejected {what}: {model.validate() or 'MODEL_INVALID'}")
    return name


def read_owner(agg: Aggregate, v: CpVars, solver: Any) -> np.ndarray:
    """Solver values -> dense owners per partition id (deterministic expansion, §4)."""
    if v.kind == "per-partition":
        owner = np.full(agg.num_partitions, NO_MEMBER, dtype=np.int64)
        for (m, p), x in v.owns.items():
            if solver.boolean_value(x):
                owner[p] = m
        return owner
    kept = np.zeros(agg.num_classes, dtype=np.int64)
    for c, y in v.kept.items():
        kept[c] = solver.value(y)
    keys = list(v.pool)
    counts = np.array([solver.value(v.pool[k]) for k in keys], dtype=np.int64)
    hubs = np.array([k[0] for k in keys], dtype=np.int64)
    members = np.array([k[1] for k in keys], dtype=np.int64)
    used = counts > 0
    return expand(agg, kept, hubs[used], members[used], counts[used]).owner


def read_assignment(agg: Aggregate, v: CpVars, solver: Any) -> Assignment:
    """The solved target assignment."""
    return to_assignment(agg, read_owner(agg, v, solver))


def _score(agg: Aggregate, objective: Objective) -> int:
    w_kept, w_rack = _weights(agg)
    return objective.kept * w_kept + w_rack * (objective.rack_local or 0)


def solve_cpsat(
    scenario: Scenario,
    *,
    balance: str = "global",
    time_limit: float | None = None,
    hint: Assignment | None = None,
    workers: int = 1,
    seed: int = 0,
    model: str = "aggregated",
    racks: bool | str = False,
    balance_source: str = "flow",
) -> SolveResult:
    """The lexicographic optimum (O1, O2, optional O3) by CP-SAT.

    ``model``: ``aggregated`` (counts per class and member) or ``per-partition`` (owns[m, p]).
    ``balance_source``: ``flow`` takes O1 from the certified flow (C4 + C7, exact by T3) and its
    assignment as the hint; ``cpsat`` minimises O1 in CP-SAT first (stage 1), then fixes it.
    ``hint``: an assignor's output to warm-start with (ignored unless a valid assignment).
    ``workers``: CP-SAT threads; 1 (the default) is deterministic and, with the LP doing the
    proving, as fast as 2 on this workload; more run the deterministic interleaved search.
    ``kafka`` is R33's own optimum (T10: C5 as a constraint, kept first, then O1), by ``r33.solve_r33``;
    ``uniform`` adds C3 and CP-SAT proves infeasibility itself.
    """
    check_balance_mode(balance)
    if balance == "kafka":
        from .r33 import solve_r33

        return solve_r33(scenario, time_limit=time_limit, racks=racks)
    if model not in MODELS:
        raise InvalidScenario("model", f"unknown CP-SAT model {model!r} (expected one of {', '.join(MODELS)})")
    if balance_source not in ("flow", "cpsat"):
        raise InvalidScenario("balance_source", f"unknown balance source {balance_source!r} (expected flow or cpsat)")
    if workers < 1:
        raise InvalidScenario("workers", f"workers={workers} must be at least 1")
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    agg = aggregate_with(scenario, racks)
    build = build_aggregated if model == "aggregated" else build_per_partition
    hint_owner = owner_array(agg, hint) if hint is not None else None
    flow_proven = True
    details: list[str] = []

    def remaining() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.perf_counter())

    def result(status: str, proven: bool, owner: np.ndarray | None, bound: int | None) -> SolveResult:
        target = assignment = None
        objective = None
        score = gap = None
        if owner is not None:
            objective = tiers(agg, owner)[1]
            score = _score(agg, objective)
            gap = None if bound is None else bound - score
            target = to_assignment(agg, owner)
            assignment = cooperative_round(scenario, target) if scenario.protocol == "cooperative" else target
        return SolveResult(
            engine=f"cpsat-{model}",
            status=status,
            proven=proven,
            balance=balance,
            assignment=assignment,
            target=target,
            objective=objective,
            kept=None if objective is None else objective.kept,
            score=score,
            bound=bound,
            gap=gap,
            seconds=time.perf_counter() - start,
            time_limit=time_limit,
            workers=workers,
            seed=seed,
            detail="; ".join(details),
        )

    # O1 as constraints
    if balance == "uniform":
        spec = BalanceSpec("uniform", quota=uniform_quota(agg.num_partitions, agg.num_members))
        if hint_owner is None and balance_source == "flow" and agg.num_partitions:
            _, sol, expansion = certified_solution(agg)
            lo, hi = spec.quota
            if sol.check.ok and expansion.loads.min() >= lo and expansion.loads.max() <= hi:
                hint_owner = expansion.owner
    elif balance_source == "flow":
        _, sol, expansion = certified_solution(agg)
        flow_proven = sol.check.ok
        if not flow_proven:
            details.append("flow certificate rejected: " + "; ".join(sol.check.failures))
        lo, hi = load_windows(agg, expansion.owner, expansion.loads)
        s_star = expansion.objective.sum_squares
        rhs = s_star + int(sum(int(a) * int(a) + int(a) for a in lo.tolist()))
        moving = hi > lo
        level_sums = {int(L): int(expansion.loads[moving & (lo == L)].sum()) for L in np.unique(lo[moving]).tolist()}
        spec = BalanceSpec("fixed", lo=lo, hi=hi, rhs=rhs, s_star=s_star, level_sums=level_sums)
        if hint_owner is None:
            hint_owner = expansion.owner
    else:
        try:
            stage1, v1 = build(agg, BalanceSpec("minimise"))
            if hint_owner is not None:
                _add_hint(stage1, agg, v1, hint_owner)
        except (ValueError, TypeError, OverflowError, RuntimeError) as exc:
            raise SolverError(f"could not build the CP-SAT model: {exc}") from exc
        solver1, status1 = _run(stage1, remaining(), workers, seed, presolve=True)
        if status1 == "INFEASIBLE":  # cannot happen: every assignable partition has a subscriber
            raise SolverError("CP-SAT found C1-C2 infeasible: this is a bug")
        if status1 not in ("OPTIMAL", "FEASIBLE"):
            details.append("stage 1 (O1) found no solution within the time limit")
            return result("UNKNOWN", False, None, None)
        s_star = int(round(solver1.objective_value))
        flow_proven = status1 == "OPTIMAL"
        if not flow_proven:
            details.append(f"stage 1 (O1) not proven: sum load^2 {s_star}, bound {int(solver1.best_objective_bound)}")
        spec = BalanceSpec("bounded", s_star=s_star)
        if hint_owner is None:
            hint_owner = read_owner(agg, v1, solver1)

    try:
        cp, v = build(agg, spec)
        if hint_owner is not None:
            _add_hint(cp, agg, v, hint_owner)
    except (ValueError, TypeError, OverflowError, RuntimeError) as exc:
        raise SolverError(f"could not build the CP-SAT model: {exc}") from exc
    solver, status = _run(cp, remaining(), workers, seed, presolve=False)
    if status == "INFEASIBLE":
        if balance == "uniform":
            details.append("C3 infeasible (proven by CP-SAT)")
            return result("INFEASIBLE", True, None, None)
        raise SolverError("CP-SAT found the O1-optimal balance infeasible: the flow's balance optimum is wrong")
    if status not in ("OPTIMAL", "FEASIBLE"):
        details.append("no solution within the time limit")
        return result("UNKNOWN", False, None, None)
    owner = read_owner(agg, v, solver)
    bound = int(round(solver.best_objective_bound))
    proven = status == "OPTIMAL" and flow_proven
    return result("OPTIMAL" if proven else "FEASIBLE", proven, owner, bound)
