"""The lexicographic optimum by min-cost flow, proven by a checked certificate.

models/optimal-assignment.md §5: the aggregated model (§4) as a network
``SOURCE -> hub_node(h) -> member_node(m) -> SINK`` (keep arcs F2 to each class's claimant,
pool arcs F3 to every subscriber) with a convex balance cost on the member -> sink arcs (F4), weighted so that balance (O1) strictly
dominates stickiness (O2), which dominates rack locality (O3) (T4). OR-Tools'
``SimpleMinCostFlow`` solves it; the result is called proven only after ``check_certificate``,
which trusts nothing but the arc arrays, accepts node potentials under which no residual arc has
a negative reduced cost (FC1-FC4).

Three parts, in the OR-Tools sample order: ``build_flow`` (data, nodes, arcs),
``solve_flow`` (solve, certify, read back, returns a ``SolveResult``) and ``read_assignment``.
OR-Tools is imported only inside the functions that call it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from ..model import Assignment, Scenario
from .aggregate import Aggregate, Expansion, aggregate, aggregate_with, cooperative_round, expand, owner_array, to_assignment
from .claims import NO_MEMBER
from .result import SolveResult, check_balance_mode

__all__ = [
    "FlowLayout",
    "FlowModel",
    "FlowSolution",
    "CertificateCheck",
    "build_flow",
    "solve_flow_model",
    "residual_potentials",
    "potentials_of",
    "check_certificate",
    "read_assignment",
    "solve_flow",
    "certified_solution",
    "uniform_quota",
    "greedy_max_load",
]

_INT64_SAFE = 2**62


@dataclass(frozen=True)
class FlowLayout:
    """Named node ids: never literal node numbers in the engine.

    The flow's class nodes are the hubs: classes that differ only by claimant share one node,
    and each claimed class becomes a keep arc from it (§5), which keeps the node count to
    members + hubs however many claimants there are.
    """

    num_members: int
    num_hubs: int

    SOURCE = 0
    SINK = 1

    def member_node(self, m: int | np.ndarray) -> int | np.ndarray:
        return 2 + m

    def hub_node(self, h: int | np.ndarray) -> int | np.ndarray:
        return 2 + self.num_members + h

    @property
    def num_nodes(self) -> int:
        return 2 + self.num_members + self.num_hubs


@dataclass(frozen=True, eq=False)
class FlowModel:
    """The network as parallel arrays (OR-Tools sample style), plus where each arc family lives.

    Arc families (§5): F1 SOURCE->hub, F2 hub->claimant (keep, one per claimed class), F3
    hub->member (pool), F4 unit member->SINK arcs, F5 the overflow arcs. ``f2``, ``f3``, ``f5``
    are slices of the arc arrays; ``f2_class``, ``f3_hub``, ``f3_member`` say whom an arc
    belongs to.
    """

    agg: Aggregate
    layout: FlowLayout
    tail: np.ndarray
    head: np.ndarray
    capacity: np.ndarray
    cost: np.ndarray
    supply: np.ndarray
    f2: slice
    f2_class: np.ndarray
    f3: slice
    f3_hub: np.ndarray
    f3_member: np.ndarray
    f5: slice
    w_balance: int
    w_kept: int
    w_rack: int
    upper: int

    @property
    def overflow_mask(self) -> np.ndarray:
        mask = np.zeros(self.tail.size, dtype=bool)
        mask[self.f5] = True
        return mask


@dataclass(frozen=True, eq=False)
class FlowSolution:
    """Per-arc flow, the potentials found for it, and the certificate verdict."""

    flow: np.ndarray
    potential: np.ndarray | None
    check: "CertificateCheck"
    cost: int


@dataclass(frozen=True)
class CertificateCheck:
    ok: bool
    failures: tuple[str, ...] = ()


# ----------------------------------------------------------------------------------------------
# Data: bounds used to size F5


def _ranges_from_one(lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``1..n`` for each n in ``lengths``."""
    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total, dtype=np.int64) - starts + 1


def uniform_quota(num_partitions: int, num_members: int) -> tuple[int, int]:
    """C3: (floor(P/N), ceil(P/N)) over all members (docs/rules.md R15's minQuota/maxQuota)."""
    if num_members == 0:
        return (0, 0)
    return (num_partitions // num_members, -(-num_partitions // num_members))


def greedy_max_load(agg: Aggregate) -> int:
    """Max load of a feasible assignment: water-fill hubs, fewest subscribers first.

    Only an upper bound U on the O1-optimal max load is needed (T1: O1 optima minimise the max
    load), to size F5; the certificate does not depend on its quality (FC3 checks tightness).
    """
    loads = np.zeros(agg.num_members, dtype=np.int64)
    order = sorted(range(len(agg.hubs)), key=lambda h: (agg.hubs[h].subscribers.size, h))
    for h in order:
        hub = agg.hubs[h]
        subs = hub.subscribers
        n = hub.size
        cur = loads[subs]
        idx = np.argsort(cur, kind="stable")
        s = cur[idx]
        prefix = np.concatenate([[0], np.cumsum(s)])
        k = np.arange(1, s.size + 1)
        raise_cost = k * s - prefix[1:]  # cost to lift the k lowest to the k-th lowest level
        kstar = int(np.searchsorted(raise_cost, n, side="right"))
        rem = n - int(raise_cost[kstar - 1])
        base = int(s[kstar - 1]) + rem // kstar
        extra = rem % kstar
        new = s.copy()
        new[:kstar] = base
        new[:extra] += 1
        loads[subs[idx]] = new
    return int(loads.max()) if loads.size else 0


def _hint_max_load(agg: Aggregate, hint: Assignment | None) -> int | None:
    """Max load of ``hint`` if it is a valid assignment (C1, C2), else None (then it is ignored)."""
    if hint is None:
        return None
    owner = owner_array(agg, hint)
    if owner is None:
        return None
    return int(np.bincount(owner, minlength=agg.num_members).max()) if owner.size else 0


# ----------------------------------------------------------------------------------------------
# Model


def build_flow(agg: Aggregate, *, upper: int | None = None) -> FlowModel:
    """The network of §5 (F1-F5) for ``agg``; ``upper`` = U, a feasible max load (default: greedy)."""
    M, H = agg.num_members, len(agg.hubs)
    layout = FlowLayout(M, H)
    U = greedy_max_load(agg) if upper is None else upper
    # T4 weights: each tier strictly dominates everything below it.
    if agg.racks and agg.rack_first:
        # Kafka's rack-aware order (KIP-881): alignment (D7) over kept.
        w_kept = 1
        w_rack = agg.retainable + 1
    elif agg.racks:
        w_rack = 1
        w_kept = agg.rack_informed + 1
    else:
        w_rack = 0
        w_kept = 1
    w_balance = (w_kept * agg.retainable + w_rack * agg.rack_informed) // 2 + 1

    tails, heads, caps, costs = [], [], [], []

    def add(t, h, cap, cost) -> slice:
        first = sum(a.size for a in tails)
        tails.append(np.asarray(t, dtype=np.int64))
        heads.append(np.asarray(h, dtype=np.int64))
        caps.append(np.asarray(cap, dtype=np.int64))
        costs.append(np.broadcast_to(np.asarray(cost, dtype=np.int64), tails[-1].shape))
        return slice(first, first + tails[-1].size)

    hix = np.arange(H, dtype=np.int64)
    hub_size = np.array([hb.size for hb in agg.hubs], dtype=np.int64)
    # F1: the source feeds every hub with its partitions.
    add(np.full(H, layout.SOURCE), layout.hub_node(hix), hub_size, 0)
    # F2: a claimed class may stay with its retainable claimant (O2, and O3 if the claimant is local).
    claimed = np.flatnonzero(agg.class_claimant != NO_MEMBER).astype(np.int64)
    f2 = add(
        layout.hub_node(agg.class_hub[claimed]),
        layout.member_node(agg.class_claimant[claimed]),
        agg.class_size[claimed],
        -(w_kept + w_rack * agg.class_local[claimed].astype(np.int64)),
    )
    # F3: or go from the hub's pool to any subscriber (C2), rack-local ones earning O3.
    def cat(parts):
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)

    f3_hub = cat([np.full(hb.subscribers.size, h) for h, hb in enumerate(agg.hubs)])
    f3_member = cat([hb.subscribers for hb in agg.hubs])
    f3_cap = cat([np.full(hb.subscribers.size, hb.size) for hb in agg.hubs])
    f3_local = cat([hb.local for hb in agg.hubs])
    f3 = add(layout.hub_node(f3_hub), layout.member_node(f3_member), f3_cap, -w_rack * f3_local)
    # F4: convex balance cost, unit arcs j = 1..U_m at (2j - 1) w_B (O1: the marginal cost of load^2).
    u_m = np.minimum(agg.reach, U)
    members_rep = np.repeat(np.arange(M, dtype=np.int64), u_m)
    j = _ranges_from_one(u_m)
    add(layout.member_node(members_rep), np.full(members_rep.size, layout.SINK), np.ones(members_rep.size), (2 * j - 1) * w_balance)
    # F5: every further unit at (2 U_m + 1) w_B, a relaxation made exact by FC3.
    over = np.flatnonzero(agg.reach > u_m).astype(np.int64)
    f5 = add(layout.member_node(over), np.full(over.size, layout.SINK), agg.reach[over] - u_m[over], (2 * u_m[over] + 1) * w_balance)

    supply = np.zeros(layout.num_nodes, dtype=np.int64)
    supply[layout.SOURCE] = agg.num_partitions
    supply[layout.SINK] = -agg.num_partitions
    cost = np.concatenate(costs)
    max_cost = int(np.abs(cost).max()) if cost.size else 0
    if max_cost * (layout.num_nodes + 1) >= _INT64_SAFE:
        raise SolverError(
            f"flow costs out of int64 range: max unit cost {max_cost} x {layout.num_nodes} nodes "
            "(the rack tier multiplies the weights; solve without it at this size)"
        )
    return FlowModel(
        agg=agg,
        layout=layout,
        tail=np.concatenate(tails),
        head=np.concatenate(heads),
        capacity=np.concatenate(caps),
        cost=cost,
        supply=supply,
        f2=f2,
        f2_class=claimed,
        f3=f3,
        f3_hub=f3_hub,
        f3_member=f3_member,
        f5=f5,
        w_balance=w_balance,
        w_kept=w_kept,
        w_rack=w_rack,
        upper=U,
    )


# ----------------------------------------------------------------------------------------------
# Solve


def solve_flow_model(model: FlowModel) -> np.ndarray:
    """Run SimpleMinCostFlow; return the flow per arc. OR-Tools failures become SolverError."""
    try:
        from ortools.graph.python import min_cost_flow
    except ImportError as exc:  # pragma: no cover - ortools is a hard dependency
        raise SolverError(f"OR-Tools is not importable: {exc}") from exc
    smcf = min_cost_flow.SimpleMinCostFlow()
    try:
        if model.tail.size:
            arcs = smcf.add_arcs_with_capacity_and_unit_cost(model.tail, model.head, model.capacity, model.cost)
        else:
            arcs = np.zeros(0, dtype=np.int64)
        nodes = np.arange(model.layout.num_nodes, dtype=np.int64)
        smcf.set_nodes_supplies(nodes, model.supply)
        status = smcf.solve()
    except (RuntimeError, ValueError, TypeError) as exc:
        raise SolverError(f"min-cost flow failed: {exc}") from exc
    if status != smcf.OPTIMAL:
        name = getattr(status, "name", str(status))
        raise SolverError(f"min-cost flow returned {name} (the network always admits a flow: this is a bug or a cost overflow)")
    if not model.tail.size:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(smcf.flows(arcs), dtype=np.int64)


def residual_potentials(model: FlowModel, flow: np.ndarray) -> np.ndarray | None:
    """Node potentials for ``flow``: shortest distances in the residual graph from a virtual root.

    Bellman-Ford, vectorised over arcs, parallel residual arcs collapsed to their cheapest
    (F5's unit arcs become two per member). Returns None if distances still fall after
    ``num_nodes`` rounds (a negative cycle: the flow is not optimal).
    """
    return potentials_of(model.layout.num_nodes, model.tail, model.head, model.capacity, model.cost, flow)


def potentials_of(n: int, tail: np.ndarray, head: np.ndarray, capacity: np.ndarray, cost: np.ndarray,
                  flow: np.ndarray) -> np.ndarray | None:
    """``residual_potentials`` over bare arc arrays of a network of ``n`` nodes (the consumer-group
    network, ``oracle.consumer``, has a layout of its own)."""
    fwd = flow < capacity
    back = flow > 0
    rt = np.concatenate([tail[fwd], head[back]])
    rh = np.concatenate([head[fwd], tail[back]])
    rc = np.concatenate([cost[fwd], -cost[back]])
    dist = np.zeros(n, dtype=np.int64)  # the virtual root reaches every node at cost 0
    if rt.size == 0:
        return dist
    key = rh * n + rt
    order = np.lexsort((rc, key))
    key, rt, rh, rc = key[order], rt[order], rh[order], rc[order]
    first = np.concatenate([[True], key[1:] != key[:-1]])
    rt, rh, rc = rt[first], rh[first], rc[first]  # sorted by head, one arc per (tail, head)
    heads, starts = np.unique(rh, return_index=True)
    for _ in range(n + 1):
        best = np.minimum.reduceat(dist[rt] + rc, starts)
        improved = best < dist[heads]
        if not improved.any():
            return dist
        dist[heads[improved]] = best[improved]
    return None


def check_certificate(
    tail: np.ndarray,
    head: np.ndarray,
    capacity: np.ndarray,
    cost: np.ndarray,
    flow: np.ndarray,
    supply: np.ndarray,
    potential: np.ndarray | None,
    *,
    overflow: np.ndarray | None = None,
) -> CertificateCheck:
    """FC1-FC4 of models/optimal-assignment.md §5, from the arrays alone.

    Independent of how the flow and the potentials were found: it proves that no feasible flow
    is cheaper (sum of reduced cost times flow difference is non-negative).
    """
    failures: list[str] = []
    tail, head = np.asarray(tail, dtype=np.int64), np.asarray(head, dtype=np.int64)
    capacity, cost, flow = (np.asarray(a, dtype=np.int64) for a in (capacity, cost, flow))
    supply = np.asarray(supply, dtype=np.int64)
    n = supply.size
    if not (tail.size == head.size == capacity.size == cost.size == flow.size):
        return CertificateCheck(False, ("arc arrays differ in length",))
    # FC1 capacity
    bad = np.flatnonzero((flow < 0) | (flow > capacity))
    if bad.size:
        failures.append(f"FC1: {bad.size} arcs outside [0, capacity], first arc {int(bad[0])}")
    # FC2 conservation
    net = np.zeros(n, dtype=np.int64)
    np.add.at(net, tail, flow)
    np.subtract.at(net, head, flow)
    bad = np.flatnonzero(net != supply)
    if bad.size:
        failures.append(f"FC2: conservation fails at {bad.size} nodes, first node {int(bad[0])}")
    # FC3 the F5 relaxation is tight
    if overflow is not None:
        bad = np.flatnonzero(np.asarray(overflow, dtype=bool) & (flow > 1))
        if bad.size:
            failures.append(f"FC3: {bad.size} overflow arcs carry more than one unit, first arc {int(bad[0])}")
    # FC4 complementary slackness under the potentials
    if potential is None:
        failures.append("FC4: no potentials (negative residual cycle)")
    else:
        pi = np.asarray(potential, dtype=np.int64)
        if pi.size != n:
            failures.append("FC4: potential vector has the wrong length")
        else:
            reduced = cost + pi[tail] - pi[head]
            bad = np.flatnonzero(((flow < capacity) & (reduced < 0)) | ((flow > 0) & (reduced > 0)))
            if bad.size:
                failures.append(f"FC4: {bad.size} arcs violate complementary slackness, first arc {int(bad[0])}")
    return CertificateCheck(not failures, tuple(failures))


def read_expansion(model: FlowModel, flow: np.ndarray) -> Expansion:
    """Counts on F2 (kept per class) and F3 (pool per hub and member) -> partitions (§4 expansion)."""
    agg = model.agg
    kept = np.zeros(agg.num_classes, dtype=np.int64)
    kept[model.f2_class] = flow[model.f2]
    f3_flow = flow[model.f3]
    used = f3_flow > 0
    return expand(agg, kept, model.f3_hub[used], model.f3_member[used], f3_flow[used])


def read_assignment(model: FlowModel, flow: np.ndarray) -> Assignment:
    """The flow's assignment (the optimal target, before any cooperative withholding)."""
    return to_assignment(model.agg, read_expansion(model, flow).owner)


def _solve_certified(agg: Aggregate, upper: int | None) -> tuple[FlowModel, FlowSolution, Expansion]:
    """Solve and certify; if FC3 fails (U was too small) retry with a larger U."""
    while True:
        model = build_flow(agg, upper=upper)
        flow = solve_flow_model(model)
        potential = residual_potentials(model, flow)
        check = check_certificate(
            model.tail, model.head, model.capacity, model.cost, flow, model.supply, potential, overflow=model.overflow_mask
        )
        if not check.ok and any(f.startswith("FC3") for f in check.failures) and model.upper < int(agg.reach.max(initial=0)):
            upper = max(1, model.upper * 2)
            continue
        cost = int((flow * model.cost).sum()) if flow.size else 0
        expansion = read_expansion(model, flow)
        return model, FlowSolution(flow, potential, check, cost), expansion


def solve_flow(
    scenario: Scenario, *, balance: str = "global", hint: Assignment | None = None, racks: bool | str = False
) -> SolveResult:
    """The lexicographic optimum (O1 balance, O2 kept, optional O3 racks) by certified min-cost flow.

    ``balance``: ``global`` solves O1 directly; ``uniform`` solves ``global`` and reports INFEASIBLE
    when the optimal loads leave [floor(P/N), ceil(P/N)] (T2); ``kafka`` (R33's optimum, T10) is not
    a convex cost and is refused (``InvalidScenario``): CP-SAT solves it. ``hint``: a valid assignment's max load bounds U
    (fewer F5 arcs); an invalid hint is ignored. ``racks``: ``True`` adds O3 after kept, ``"kafka"``
    ranks Kafka's rack alignment (D7) above kept where its rack-aware path applies (T4's weights swapped).
    """
    check_balance_mode(balance)
    if balance == "kafka":
        from ..errors import InvalidScenario

        raise InvalidScenario("engine", "the min-cost flow solves global and uniform balance; kafka (R33) is solved by "
                              "CP-SAT (--engine cpsat)")
    start = time.perf_counter()
    agg = aggregate_with(scenario, racks)
    upper = _hint_max_load(agg, hint)
    if upper is not None:
        upper = min(upper, greedy_max_load(agg))
    model, sol, expansion = _solve_certified(agg, upper)
    objective = expansion.objective
    expected = model.w_balance * objective.sum_squares - model.w_kept * objective.kept - model.w_rack * (objective.rack_local or 0)
    if sol.check.ok and expected != sol.cost:
        raise SolverError(f"flow cost {sol.cost} does not match its expanded assignment's objective {expected}")
    proven = sol.check.ok
    score = objective.kept * model.w_kept + model.w_rack * (objective.rack_local or 0) if agg.racks else objective.kept
    detail = "" if proven else "certificate rejected: " + "; ".join(sol.check.failures)
    status = "OPTIMAL" if proven else "FEASIBLE"
    target: Assignment | None = to_assignment(agg, expansion.owner)
    assignment = target
    if balance == "uniform":
        lo, hi = uniform_quota(agg.num_partitions, agg.num_members)
        loads = expansion.loads
        if loads.size and (loads.min() < lo or loads.max() > hi):
            return SolveResult(
                engine="flow",
                status="INFEASIBLE" if proven else "UNKNOWN",
                proven=proven,
                balance=balance,
                assignment=None,
                target=None,
                objective=None,
                kept=None,
                score=None,
                bound=None,
                gap=None,
                seconds=time.perf_counter() - start,
                detail=(detail or f"T2: the O1-optimal loads span {int(loads.min())}..{int(loads.max())}, outside C3 [{lo}, {hi}]"),
            )
    if scenario.protocol == "cooperative" and target is not None:
        assignment = cooperative_round(scenario, target)
    return SolveResult(
        engine="flow",
        status=status,
        proven=proven,
        balance=balance,
        assignment=assignment,
        target=target,
        objective=objective,
        kept=objective.kept,
        score=score,
        bound=score if proven else None,
        gap=0 if proven else None,
        seconds=time.perf_counter() - start,
        detail=detail,
    )


def optimal_loads(scenario: Scenario, balance: str = "global") -> dict[str, int]:
    """One O1-optimal per-member load vector (member id -> load), proven by the certificate.

    Per-member loads are not unique among optima (T3 bounds how far they can move); the sorted
    vector is (T1). Raises SolverError when ``uniform`` is infeasible or the certificate fails.
    Only the tests call it, so it is not in ``__all__``.
    """
    check_balance_mode(balance)
    agg = aggregate(scenario)
    model, sol, expansion = _solve_certified(agg, None)
    if not sol.check.ok:
        raise SolverError("flow certificate rejected: " + "; ".join(sol.check.failures))
    if balance == "uniform":
        lo, hi = uniform_quota(agg.num_partitions, agg.num_members)
        if expansion.loads.size and (expansion.loads.min() < lo or expansion.loads.max() > hi):
            raise SolverError(f"uniform balance is infeasible: optimal loads leave [{lo}, {hi}] (T2)")
    return {m: int(expansion.loads[i]) for i, m in enumerate(agg.members)}


def certified_solution(agg: Aggregate, *, upper: int | None = None) -> tuple[FlowModel, FlowSolution, Expansion]:
    """For the CP-SAT engine: the certified flow of ``agg`` and its expansion."""
    return _solve_certified(agg, upper)
