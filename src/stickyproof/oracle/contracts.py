"""Each assignor's balance promise (its contract), and the most an assignment can keep while keeping it.

A grade fails an assignor only for a promise that assignor makes (models/invariants.md §5): range
promises balance per topic, round robin balance when every member subscribes to the same topics,
Kafka's sticky family uniform loads on equal subscriptions and Kafka's ``verifyValidityAndBalance``
(R33) otherwise. The contract also names the *notion* stickiness is measured in: the most
partitions any assignment balanced that way leaves with their owners (``contract_optimum``), so
that a valid assignment never scores above 1, and the partitions that optimum keeps and the graded
assignment moved are the *unnecessary moves*.

The oracle knows contracts by name only; which assignor makes which promise is the registry's
business (``AssignorInfo.contract``), passed in by ``grading``.

Engines, all exact (models/optimal-assignment.md T6-T8):

    none        every retainable claim kept (D4): validity is the only constraint
    per-topic   each topic on its own: quotas floor/ceil over its subscribers, the extra partitions to
                the subscribers that claim the most (T6, a greedy exchange argument)
    uniform     CP-SAT over hub x member counts with C3 (T2), proven OPTIMAL
    pairwise    CP-SAT with Kafka's ``isBalanced`` (R30): no partition held by a member with at least
                two more partitions than another subscriber of its topic (T7), proven OPTIMAL
    own-loads   CP-SAT with every member's load fixed to the graded assignment's: the most it could
                have kept at exactly its own balance (used with ``pairwise`` when the graded
                assignment is R33-valid but not R30-balanced, so the ratio still cannot pass 1)
    global      the certified min-cost flow (O1 then O2)

Every engine but ``global`` has a second tier: among the optima, the one that agrees most with the
graded assignment's kept partitions, so the unnecessary moves are as few as the optimum allows.

Where Kafka's rack-aware path applies (KIP-881, R48: ``racks.kafka_rack_path``) the ``kafka``
contract's order is balance, then rack alignment (D7), then partitions kept: its CP-SAT engines first
maximise alignment, then keep as many partitions as that alignment allows (a lexicographic solve; the
notion is reported as ``uniform+racks`` / ``pairwise+racks``). The alignment asked for is the
optimum's, or the graded assignment's own when that is lower (T9), so a valid assignment still never
scores above 1, and a move that was needed to reach the alignment is never an unnecessary one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..errors import InvalidScenario
from ..model import Assignment, Scenario, TopicPartition
from .aggregate import Aggregate, aggregate
from .claims import NO_MEMBER, retainable_claims, subscribers_by_topic
from .optimal import solve_model
from .racks import aligned, kafka_rack_path

__all__ = [
    "Contract",
    "CONTRACTS",
    "DEFAULT_CONTRACT",
    "contract_named",
    "ContractOptimum",
    "contract_optimum",
    "raw_subscriptions_equal",
]


def raw_subscriptions_equal(scenario: Scenario) -> bool:
    """Every member lists the same set of topic names (docs/rules.md R12's test, as sets: the
    condition under which Kafka's sticky assignors take the constrained path and promise R23)."""
    return len({frozenset(m.topics) for m in scenario.members}) <= 1


@dataclass(frozen=True)
class Contract:
    """A balance promise: ``check`` is the balance mode whose violation breaks it, ``notion`` the
    balance stickiness is measured in, each as a function of the group (equal subscriptions or not)."""

    name: str
    description: str
    equal_check: str | None
    unequal_check: str | None
    equal_notion: str
    unequal_notion: str

    def check(self, scenario: Scenario) -> str | None:
        return self.equal_check if raw_subscriptions_equal(scenario) else self.unequal_check

    def notion(self, scenario: Scenario) -> str:
        return self.equal_notion if raw_subscriptions_equal(scenario) else self.unequal_notion


CONTRACTS: dict[str, Contract] = {
    c.name: c
    for c in (
        Contract("kafka", "Kafka's sticky family: uniform loads on equal subscriptions (R23), else no member two "
                 "partitions above another holding the same topic (R33)", "uniform", "kafka", "uniform", "pairwise"),
        Contract("per-topic", "RangeAssignor: each topic's partitions split floor/ceil over its subscribers (R43)",
                 "per-topic", "per-topic", "per-topic", "per-topic"),
        Contract("uniform-if-equal", "RoundRobinAssignor: uniform loads when every member subscribes to the same "
                 "topics (R42); no balance promise otherwise", "uniform", None, "uniform", "none"),
        Contract("global", "the optimal semi-matching (C4): no improving chain of moves", "global", "global",
                 "global", "global"),
        Contract("none", "no balance promise: validity only", None, None, "none", "none"),
    )
}
DEFAULT_CONTRACT = "kafka"
"""A user assignor is held to Kafka's promise unless it declares another."""


def contract_named(name: str | None) -> Contract:
    if name is None:
        return CONTRACTS[DEFAULT_CONTRACT]
    try:
        return CONTRACTS[name]
    except KeyError:
        raise InvalidScenario("contract", f"unknown contract {name!r} (known: {', '.join(CONTRACTS)})") from None


@dataclass(frozen=True)
class ContractOptimum:
    """The most partitions an assignment balanced in ``notion`` keeps with their retainable claimants
    (D4, over the scenario given: the truth), and what the graded assignment needlessly moved.

    ``proven``: the engine's answer is a proof (CP-SAT ``OPTIMAL``, an exact combinatorial engine, or
    the flow's checked certificate); otherwise ``kept`` is the best found and ``bound`` an upper bound.
    ``unnecessary``: partitions the optimum (the one agreeing most with the graded assignment) keeps
    with their owner and the graded assignment did not, sorted; empty without a graded assignment.
    """

    notion: str
    engine: str
    kept: int | None
    bound: int | None
    proven: bool
    status: str
    unnecessary: tuple[TopicPartition, ...]
    seconds: float
    #: on the rack-aware path: the optimum's rack-aligned partitions (D7), else None
    aligned: int | None = None


# ------------------------------------------------------------------------------------------
# The graded assignment, per class


def _kept_by_class(agg: Aggregate, assignment: Assignment | None) -> np.ndarray:
    """a[c]: partitions of claimed class c that ``assignment`` leaves with the class's claimant."""
    out = np.zeros(agg.num_classes, dtype=np.int64)
    if assignment is None:
        return out
    index = {m: i for i, m in enumerate(agg.members)}
    holder: dict[TopicPartition, set[int]] = {}
    for member, tps in assignment.assignment.items():
        i = index.get(member)
        if i is None:
            continue
        for tp in tps:
            holder.setdefault(tp, set()).add(i)
    for c in range(agg.num_classes):
        k = int(agg.class_claimant[c])
        if k == NO_MEMBER:
            continue
        out[c] = sum(1 for pid in agg.class_partitions(c).tolist() if k in holder.get(agg.topic_partition(pid), ()))
    return out


def _unnecessary(agg: Aggregate, assignment: Assignment | None, optimum: np.ndarray) -> tuple[TopicPartition, ...]:
    """For each claimed class, the first ``optimum[c] - a[c]`` of its partitions the graded assignment
    did not leave with the claimant (the optimum can keep exactly those: a class's partitions are
    interchangeable, §4)."""
    if assignment is None:
        return ()
    kept = {
        (m, tp) for m, tps in assignment.assignment.items() for tp in tps
    }
    out: list[TopicPartition] = []
    for c in range(agg.num_classes):
        k = int(agg.class_claimant[c])
        if k == NO_MEMBER or optimum[c] <= 0:
            continue
        member = agg.members[k]
        moved = [agg.topic_partition(pid) for pid in agg.class_partitions(c).tolist()]
        moved = [tp for tp in moved if (member, tp) not in kept]
        held = int(agg.class_size[c]) - len(moved)
        out += moved[: max(0, int(optimum[c]) - held)]
    return tuple(sorted(out))


# ------------------------------------------------------------------------------------------
# Engines


def _none(agg: Aggregate) -> np.ndarray:
    return np.where(agg.class_claimant != NO_MEMBER, agg.class_size, 0).astype(np.int64)


def _per_topic(scenario: Scenario, assignment: Assignment | None) -> tuple[int, tuple[TopicPartition, ...]]:
    """T6: topics are independent under per-topic balance. For a topic of ``n`` partitions and
    subscribers ``S``, with ``q, r = divmod(n, |S|)``, a subscriber with quota ``Q`` keeps at most
    ``min(claims, Q)``; giving the ``r`` extra slots to subscribers claiming more than ``q`` (those
    whose graded assignment kept more than ``q`` first, to agree with it) is optimal by exchange."""
    keep = retainable_claims(scenario)
    held = set() if assignment is None else {(m, tp) for m, tps in assignment.assignment.items() for tp in tps}
    claims: dict[tuple[str, str], list[TopicPartition]] = {}
    for tp, m in keep.items():
        claims.setdefault((tp.topic, m), []).append(tp)
    total, unnecessary = 0, []
    for topic, subscribers in subscribers_by_topic(scenario).items():
        n = next(t.partitions for t in scenario.topics if t.name == topic)
        q, r = divmod(n, len(subscribers))
        c = {m: len(claims.get((topic, m), ())) for m in subscribers}
        a = {m: sum(1 for tp in claims.get((topic, m), ()) if (m, tp) in held) for m in subscribers}
        ranked = sorted(subscribers, key=lambda m: (-(c[m] > q), -(a[m] > q and c[m] > q), m))
        quota = {m: q + (1 if i < r else 0) for i, m in enumerate(ranked)}
        for m in subscribers:
            k = min(c[m], quota[m])
            total += k
            moved = sorted(tp for tp in claims.get((topic, m), ()) if (m, tp) not in held)
            unnecessary += moved[: max(0, k - a[m])] if assignment is not None else []
    return total, tuple(sorted(unnecessary))


def _cpsat(
    agg: Aggregate, notion: str, agree: np.ndarray, loads: Mapping[str, int] | None,
    cpsat_work: float | None, cpsat_seconds: float | None, graded_aligned: int | None = None,
) -> tuple[str, np.ndarray | None, int | None, int | None]:
    """Counts per hub and member (C6), the notion's balance constraints, and the objective
    ``(K + 1) * kept + agreement``; with the rack tier (``agg`` built with an alignment), first the
    most rack-aligned partitions (D7), then that objective at the alignment T9 asks for.
    Returns (status name, kept per class, bound on kept, aligned partitions or None)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    M = agg.num_members
    classes_of_hub = agg.classes_of_hub()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    kept: dict[int, cp_model.IntVar] = {}
    agreed: list[cp_model.IntVar] = []
    by_member: list[list[cp_model.IntVar]] = [[] for _ in range(M)]
    local: list[cp_model.IntVar] = []
    for h, hub in enumerate(agg.hubs):
        subs = hub.subscribers.tolist()
        for i, m in enumerate(subs):
            x[h, m] = model.new_int_var(0, hub.size, f"x[{h},{m}]")
            by_member[m].append(x[h, m])
            if agg.racks and bool(hub.local[i]):
                local.append(x[h, m])
        # C6: each hub's partitions go to its subscribers, exactly once.
        model.add(sum(x[h, m] for m in subs) == hub.size)
        for c in classes_of_hub[h]:
            k = int(agg.class_claimant[c])
            if k == NO_MEMBER:
                continue
            # O2: a class's claimant keeps at most what it holds of the hub, and at most the class.
            kept[c] = model.new_int_var(0, int(agg.class_size[c]), f"kept[{c}]")
            model.add(kept[c] <= x[h, k])
            if agree[c] > 0:
                g = model.new_int_var(0, int(agree[c]), f"agree[{c}]")
                model.add(g <= kept[c])
                agreed.append(g)
    load = [model.new_int_var(0, agg.num_partitions, f"load[{m}]") for m in range(M)]
    for m in range(M):
        model.add(load[m] == sum(by_member[m]))
    if notion == "uniform":
        # C3: floor(P/N) <= load(m) <= ceil(P/N).
        low, high = divmod(agg.num_partitions, M)[0], -(-agg.num_partitions // M)
        for m in range(M):
            model.add_linear_constraint(load[m], low, high)
    elif notion == "pairwise":
        # R30 (isBalanced): a holder of hub h's partitions has at most one more than every subscriber of h.
        for h, hub in enumerate(agg.hubs):
            subs = hub.subscribers.tolist()
            if len(subs) < 2:
                continue
            floor_h = model.new_int_var(0, agg.num_partitions, f"min_load[{h}]")
            for b in subs:
                model.add(floor_h <= load[b])
            for m in subs:
                holds = model.new_bool_var(f"holds[{h},{m}]")
                model.add(x[h, m] <= hub.size * holds)
                model.add(load[m] <= floor_h + 1).only_enforce_if(holds)
    elif notion == "own-loads":
        assert loads is not None
        for m, member in enumerate(agg.members):
            model.add(load[m] == int(loads.get(member, 0)))
    else:  # pragma: no cover - the callers pass only the notions above
        raise InvalidScenario("notion", f"no CP-SAT model for notion {notion!r}")

    def solver_for() -> cp_model.CpSolver:
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1  # deterministic: the same unnecessary moves on every run
        if cpsat_work is not None:  # the budget: deterministic, so a loaded machine gets the same answer
            solver.parameters.max_deterministic_time = float(cpsat_work)
        if cpsat_seconds is not None:  # a wall-clock safety stop only
            solver.parameters.max_time_in_seconds = float(cpsat_seconds)
        return solver

    target: int | None = None
    exact_target = True
    if agg.racks:
        # O3 first (Kafka's order on the rack-aware path): the most rack-aligned partitions.
        model.maximize(sum(local))
        solver = solver_for()
        first = solve_model(solver, model, f"the {notion} contract optimum's rack alignment")
        if first not in ("OPTIMAL", "FEASIBLE"):
            return first, None, None, None
        best = int(round(solver.objective_value))
        # T9: the graded assignment's own alignment when lower, so the ratio cannot pass 1.
        target = best if graded_aligned is None else min(best, graded_aligned)
        # A target below the best found is exact (T9 picks it); the best found is exact only if proven.
        exact_target = first == "OPTIMAL" or (graded_aligned is not None and graded_aligned <= best)
        model.add(sum(local) >= target)
        model.clear_objective()
    weight = agg.retainable + 1
    model.maximize(weight * sum(kept.values()) + sum(agreed))
    solver = solver_for()
    name = solve_model(solver, model, f"the {notion} contract optimum")
    if name not in ("OPTIMAL", "FEASIBLE"):
        return name, None, None, None
    if name == "OPTIMAL" and not exact_target:
        name = "FEASIBLE"  # kept is optimal for an alignment that was not proven the best
    values = np.zeros(agg.num_classes, dtype=np.int64)
    for c, v in kept.items():
        values[c] = solver.value(v)
    bound = int(solver.best_objective_bound) // weight
    aligned_now = int(sum(solver.value(v) for v in local)) if agg.racks else None
    return name, values, bound, aligned_now


def _graded_aligned(agg: Aggregate, racks: Mapping[str, str | None], assignment: Assignment | None) -> int | None:
    """D7 over the graded assignment's placements (its members only, each partition once)."""
    if assignment is None:
        return None
    meta = {t.name: t for t in agg.scenario.topics}
    members = set(agg.members)
    placed = {(tp, m) for m, tps in assignment.assignment.items() if m in members for tp in tps}
    total = 0
    for tp, m in placed:
        t = meta.get(tp.topic)
        rl = None if t is None or t.racks is None or not 0 <= tp.partition < len(t.racks) else frozenset(t.racks[tp.partition])
        total += aligned(racks.get(m), rl)
    return total


# ------------------------------------------------------------------------------------------
# The entry point


def contract_optimum(
    scenario: Scenario,
    contract: str | Contract | None = None,
    *,
    assignment: Assignment | None = None,
    cpsat_work: float | None = None,
    cpsat_seconds: float | None = None,
    rack_order: bool = True,
    rack_view: Scenario | None = None,
) -> ContractOptimum:
    """The most partitions any assignment balanced as ``contract`` promises keeps, over ``scenario``.

    ``assignment``: the graded assignment (round 1), for the unnecessary moves and the agreement tier;
    under the ``pairwise`` notion, when it is not itself R30-balanced, the optimum at its own loads
    is taken too (the larger counts), so a valid assignment never keeps more than the optimum.
    ``cpsat_work``: CP-SAT's budget in deterministic time units (the same answer whatever the load);
    ``cpsat_seconds``: a wall-clock safety stop. An unproven answer reports its bound.
    ``rack_order``: the assignor implements KIP-881 (Kafka's releases from 3.5; default true): where
    the rack-aware path applies, the ``kafka`` contract orders balance, rack alignment, then kept.
    ``rack_view``: the group as the leader decoded it, which decides whether that path applies
    (default ``scenario``).
    """
    started = time.perf_counter()
    c = contract if isinstance(contract, Contract) else contract_named(contract)
    notion = c.notion(scenario)
    if notion == "per-topic":
        kept, unnecessary = _per_topic(scenario, assignment)
        return ContractOptimum(notion, "greedy", kept, kept, True, "OPTIMAL", unnecessary, time.perf_counter() - started)
    if notion == "global":
        from .flow import solve_flow

        result = solve_flow(scenario, balance="global")
        agg = aggregate(scenario)
        target = result.target if result.target is not None else result.assignment
        per_class = _kept_by_class(agg, target)
        return ContractOptimum(
            notion, result.engine, result.kept, result.bound, result.proven, result.status,
            _unnecessary(agg, assignment, per_class), time.perf_counter() - started,
        )
    racks = kafka_rack_path(rack_view if rack_view is not None else scenario) if c.name == "kafka" and rack_order else None
    agg = aggregate(scenario, alignment=racks)
    agree = _kept_by_class(agg, assignment)
    if notion == "none" or agg.num_partitions == 0 or agg.num_members == 0:
        per_class = _none(agg)
        kept = int(per_class.sum())
        return ContractOptimum(
            notion, "exact", kept, kept, True, "OPTIMAL", _unnecessary(agg, assignment, per_class),
            time.perf_counter() - started,
        )
    graded_aligned = None if racks is None else _graded_aligned(agg, racks, assignment)
    status, per_class, bound, rack_aligned = _cpsat(agg, notion, agree, None, cpsat_work, cpsat_seconds, graded_aligned)
    engine = f"cpsat-{notion}"
    if notion == "pairwise" and assignment is not None and per_class is not None and int(per_class.sum()) < int(agree.sum()):
        # The graded assignment keeps more than any R30-balanced one: it is less balanced than R30 (but
        # may still keep R33). Measure it at its own loads, the balance it chose.
        loads = {m: len(tps) for m, tps in assignment.assignment.items()}
        own_status, own, own_bound, own_aligned = _cpsat(agg, "own-loads", agree, loads, cpsat_work, cpsat_seconds, graded_aligned)
        if own is not None and int(own.sum()) > int(per_class.sum()):
            status, per_class, bound, engine, rack_aligned = own_status, own, own_bound, "cpsat-own-loads", own_aligned
    if racks is not None:
        notion, engine = f"{notion}+racks", f"{engine}+racks"
    if per_class is None:
        return ContractOptimum(notion, engine, None, bound, False, status, (), time.perf_counter() - started)
    kept = int(per_class.sum())
    return ContractOptimum(
        notion, engine, kept, bound, status == "OPTIMAL", status, _unnecessary(agg, assignment, per_class),
        time.perf_counter() - started, rack_aligned,
    )
