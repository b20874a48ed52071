"""The consumer-group (KIP-848) optimum: balance, per-topic spread, rack locality, then partitions kept.

models/optimal-assignment.md §10 and models/invariants.md §5.2. A consumer group's assignor sees no
generations and no conflicting claims: each member's current target is its ``owned``, valid by
construction. The objective users ask of a server-side assignor, lexicographically:

- K1 balance: ``sum load(m)^2`` over the members, minimised (the ``global`` notion of §2: sizes
  within one whenever the subscriptions allow it, as close as they allow otherwise);
- K2 per-topic spread: ``sum count(m, t)^2`` over topics and their subscribers, minimised (each
  topic's partitions as evenly over its subscribers as K1 leaves room for);
- K3 rack locality: partitions on a member whose rack holds one of their replicas, maximised;
- K4 partitions kept: partitions that stay with the member whose current target holds them.

One min-cost flow solves the four at once, each tier weighted above the whole range of the tiers
below it (K5), over the network ``class -> (topic, member) -> member -> SINK``: a class is the
partitions of one topic with the same current holder and the same member racks among their replica
racks; the (topic, member) node carries K2 as a convex cost on unit arcs, the member node K1 the
same way. The answer is called proven only after ``flow.check_certificate`` accepts node potentials
from the arc arrays alone, and the objective recounted from the assignment matches the flow's cost.
When the weights would overflow 64-bit costs, CP-SAT optimises the tiers one after the other.

The oracle never imports the assignors: everything here is read from the scenario and the models.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InvalidScenario, SolverError
from ..model import Assignment, Scenario, TopicPartition
from .flow import check_certificate, potentials_of

__all__ = [
    "TIERS",
    "ConsumerObjective",
    "ConsumerOptimum",
    "consumer_objective",
    "solve_consumer",
    "assignable_partitions",
    "subscribers_of",
    "partition_classes",
]

TIERS = ("balance", "spread", "racks", "kept")
"""K1-K4 in the order users ask for them; ``solve_consumer(tiers=...)`` takes any ordered subset."""

_INT64_SAFE = 2**62


@dataclass(frozen=True)
class ConsumerObjective:
    """The four tiers of one consumer-group assignment (K1-K4); ``key`` sorts better first."""

    sum_squares: int
    spread: int
    rack_local: int
    kept: int

    def key(self, tiers: Sequence[str] = TIERS) -> tuple[int, ...]:
        value = {"balance": self.sum_squares, "spread": self.spread, "racks": -self.rack_local, "kept": -self.kept}
        return tuple(value[t] for t in tiers)

    def to_dict(self) -> dict[str, int]:
        return {"sum_squares": self.sum_squares, "spread": self.spread, "rack_local": self.rack_local, "kept": self.kept}


@dataclass(frozen=True)
class ConsumerOptimum:
    """The oracle's answer for one consumer group: the optimal target, its tiers and how sure we are.

    ``proven``: the flow's certificate passed (or CP-SAT proved every stage OPTIMAL); ``status`` is
    OPTIMAL only then, FEASIBLE for a time-limited CP-SAT incumbent. ``tiers``: the tiers optimised,
    in order (those left out weigh nothing)."""

    engine: str
    status: str
    proven: bool
    tiers: tuple[str, ...]
    assignment: Assignment | None
    objective: ConsumerObjective | None
    seconds: float
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "status": self.status,
            "proven": self.proven,
            "tiers": list(self.tiers),
            "objective": None if self.objective is None else self.objective.to_dict(),
            "seconds": round(self.seconds, 6),
            "detail": self.detail,
        }


# ------------------------------------------------------------------------------------------
# Reading the group (models/invariants.md §5.2, D1 for consumer groups)


def subscribers_of(scenario: Scenario) -> dict[str, tuple[str, ...]]:
    """Each assignable topic's subscribers, sorted: topics in the metadata with partitions and at least one subscriber."""
    meta = {t.name: t for t in scenario.topics}
    out: dict[str, list[str]] = {}
    for m in sorted(scenario.members, key=lambda m: m.id):
        for name in dict.fromkeys(m.topics):
            if name in meta and meta[name].partitions > 0:
                out.setdefault(name, []).append(m.id)
    return {t: tuple(ms) for t, ms in sorted(out.items())}


def assignable_partitions(scenario: Scenario) -> tuple[TopicPartition, ...]:
    """Every partition the coordinator's target must place: all partitions of every subscribed topic."""
    meta = {t.name: t for t in scenario.topics}
    return tuple(TopicPartition(t, p) for t in subscribers_of(scenario) for p in range(meta[t].partitions))


def _holders(scenario: Scenario) -> dict[TopicPartition, str]:
    """Who holds each partition in the current target (the coordinator's targets never overlap)."""
    return {tp: m.id for m in scenario.members for tp in m.owned}


def _replica_racks(scenario: Scenario, tp: TopicPartition) -> frozenset[str]:
    t = scenario.topic(tp.topic)
    if t is None or t.racks is None or tp.partition >= len(t.racks):
        return frozenset()
    return frozenset(t.racks[tp.partition])


def _racks_by_topic(scenario: Scenario) -> dict[str, list[frozenset[str]] | None]:
    """Each topic's replica racks per partition (None: the metadata gives none), read once."""
    return {t.name: None if t.racks is None else [frozenset(r) for r in t.racks] for t in scenario.topics}


def consumer_objective(scenario: Scenario, assignment: Assignment) -> ConsumerObjective:
    """K1-K4 counted from ``assignment`` alone (the recount every optimum is checked against)."""
    holders = _holders(scenario)
    racks = {m.id: m.rack or None for m in scenario.members}
    replicas = _racks_by_topic(scenario)
    sum_squares = spread = rack_local = kept = 0
    for member, tps in assignment.assignment.items():
        sum_squares += len(tps) ** 2
        per_topic: dict[str, int] = {}
        rack = racks.get(member)
        for tp in tps:
            per_topic[tp.topic] = per_topic.get(tp.topic, 0) + 1
            if rack is not None:
                rr = replicas.get(tp.topic)
                rack_local += rr is not None and tp.partition < len(rr) and rack in rr[tp.partition]
            kept += holders.get(tp) == member
        spread += sum(c * c for c in per_topic.values())
    return ConsumerObjective(sum_squares, spread, rack_local, kept)


# ------------------------------------------------------------------------------------------
# The network (K5): class -> (topic, member) -> member -> SINK


@dataclass(frozen=True, eq=False)
class _Network:
    """Parallel arc arrays plus what the class -> pair arcs stand for (to read the flow back)."""

    num_nodes: int
    tail: np.ndarray
    head: np.ndarray
    capacity: np.ndarray
    cost: np.ndarray
    supply: np.ndarray
    class_arcs: np.ndarray  # arc index of every class -> pair arc
    class_arc_class: np.ndarray
    class_arc_member: np.ndarray
    classes: tuple[tuple[TopicPartition, ...], ...]
    members: tuple[str, ...]
    weights: dict[str, int]


def partition_classes(scenario: Scenario, subs: Mapping[str, tuple[str, ...]]) -> list[tuple[str, str | None, frozenset[str], list[TopicPartition]]]:
    """Partitions grouped by (topic, holder among the subscribers, subscribers' racks holding a replica)."""
    holders: dict[str, dict[int, str]] = {}
    for m in scenario.members:
        for tp in m.owned:
            holders.setdefault(tp.topic, {})[tp.partition] = m.id
    racks = {m.id: m.rack or None for m in scenario.members}
    replicas = _racks_by_topic(scenario)
    meta = {t.name: t for t in scenario.topics}
    groups: dict[tuple[str, str | None, frozenset[str]], list[TopicPartition]] = {}
    none: frozenset[str] = frozenset()
    for topic, members in subs.items():
        # Per topic, not per partition: the subscribers, their racks and the topic's holders once.
        subscribed = frozenset(members)
        member_racks = frozenset(r for r in (racks[m] for m in members) if r is not None)
        held = {p: h for p, h in holders.get(topic, {}).items() if h in subscribed}
        rr = replicas.get(topic)
        n = meta[topic].partitions
        if not held and (rr is None or not member_racks):
            groups[(topic, None, none)] = [TopicPartition(topic, p) for p in range(n)]
            continue
        for p in range(n):
            local = rr[p] & member_racks if rr is not None and p < len(rr) else none
            groups.setdefault((topic, held.get(p), local), []).append(TopicPartition(topic, p))
    return [(t, h, r, tps) for (t, h, r), tps in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", sorted(kv[0][2])))]


def _weights(scenario: Scenario, subs: Mapping[str, tuple[str, ...]], tiers: Sequence[str]) -> tuple[dict[str, int], int]:
    """K5: each tier's weight exceeds the whole range of the tiers below it; and the largest total
    cost the network can reach, to know whether 64-bit costs hold it."""
    meta = {t.name: t for t in scenario.topics}
    num = sum(meta[t].partitions for t in subs)
    ranges = {
        "kept": num,
        "racks": num,
        "spread": sum(meta[t].partitions ** 2 for t in subs),
        "balance": num * num,
    }
    weights = {t: 0 for t in TIERS}
    scale = 1
    for tier in reversed(tuple(tiers)):
        weights[tier] = scale
        scale *= ranges[tier] + 1
    return weights, scale


def _build(scenario: Scenario, tiers: Sequence[str]) -> _Network:
    subs = subscribers_of(scenario)
    weights, _ = _weights(scenario, subs, tiers)
    members = tuple(sorted({m for ms in subs.values() for m in ms}))
    member_index = {m: i for i, m in enumerate(members)}
    racks = {m.id: m.rack or None for m in scenario.members}
    classes = partition_classes(scenario, subs)
    pairs = [(t, m) for t, ms in subs.items() for m in ms]
    pair_index = {p: i for i, p in enumerate(pairs)}
    # Node layout: SINK, then classes, pairs, members.
    SINK = 0
    def class_node(c: int) -> int: return 1 + c
    def pair_node(q: int) -> int: return 1 + len(classes) + q
    def member_node(i: int) -> int: return 1 + len(classes) + len(pairs) + i
    num_nodes = 1 + len(classes) + len(pairs) + len(members)
    tail: list[int] = []
    head: list[int] = []
    cap: list[int] = []
    cost: list[int] = []
    supply = np.zeros(num_nodes, dtype=np.int64)
    class_arcs, class_arc_class, class_arc_member = [], [], []
    for c, (topic, holder, replica_racks, tps) in enumerate(classes):
        supply[class_node(c)] = len(tps)
        for m in subs[topic]:
            # K3, K4: a partition placed on its holder is kept; on a member whose rack holds a replica it is local.
            gain = weights["kept"] * (m == holder) + weights["racks"] * (racks[m] is not None and racks[m] in replica_racks)
            class_arcs.append(len(tail))
            class_arc_class.append(c)
            class_arc_member.append(member_index[m])
            tail.append(class_node(c)); head.append(pair_node(pair_index[(topic, m)])); cap.append(len(tps)); cost.append(-gain)
    meta = {t.name: t for t in scenario.topics}
    reach = [0] * len(members)
    for (topic, m), q in pair_index.items():
        n = meta[topic].partitions
        reach[member_index[m]] += n
        # K2 spread: the k-th partition of a topic on one member costs (2k + 1), so the sum is count^2.
        if weights["spread"]:
            for k in range(n):
                tail.append(pair_node(q)); head.append(member_node(member_index[m])); cap.append(1); cost.append(weights["spread"] * (2 * k + 1))
        else:
            tail.append(pair_node(q)); head.append(member_node(member_index[m])); cap.append(n); cost.append(0)
    total = int(supply.sum())
    supply[SINK] = -total
    for i in range(len(members)):
        # K1 balance: the k-th partition on a member costs (2k + 1), so the sum is load^2.
        if weights["balance"]:
            for k in range(min(reach[i], total)):
                tail.append(member_node(i)); head.append(SINK); cap.append(1); cost.append(weights["balance"] * (2 * k + 1))
        else:
            tail.append(member_node(i)); head.append(SINK); cap.append(reach[i]); cost.append(0)
    as_array = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
    return _Network(num_nodes, as_array(tail), as_array(head), as_array(cap), as_array(cost), supply,
                    as_array(class_arcs), as_array(class_arc_class), as_array(class_arc_member),
                    tuple(tuple(tps) for *_, tps in classes), members, weights)


def _solve_network(net: _Network) -> np.ndarray:
    try:
        from ortools.graph.python import min_cost_flow
    except ImportError as exc:  # pragma: no cover - ortools is a hard dependency
        raise SolverError(f"OR-Tools is not importable: {exc}") from exc
    smcf = min_cost_flow.SimpleMinCostFlow()
    try:
        if not net.tail.size:
            return np.zeros(0, dtype=np.int64)
        arcs = smcf.add_arcs_with_capacity_and_unit_cost(net.tail, net.head, net.capacity, net.cost)
        smcf.set_nodes_supplies(np.arange(net.num_nodes, dtype=np.int64), net.supply)
        status = smcf.solve()
    except (RuntimeError, ValueError, TypeError) as exc:
        raise SolverError(f"min-cost flow failed: {exc}") from exc
    if status != smcf.OPTIMAL:
        raise SolverError(f"min-cost flow returned {getattr(status, 'name', status)} on a consumer group (every partition has a subscriber: a bug)")
    return np.asarray(smcf.flows(arcs), dtype=np.int64)


def _read(net: _Network, flow: np.ndarray, scenario: Scenario) -> Assignment:
    """Class counts back to partitions: each class's partitions in order, members in sorted order."""
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in scenario.members}
    taken = [0] * len(net.classes)
    for arc, c, i in zip(net.class_arcs.tolist(), net.class_arc_class.tolist(), net.class_arc_member.tolist()):
        n = int(flow[arc])
        if n:
            out[net.members[i]].extend(net.classes[c][taken[c]:taken[c] + n])
            taken[c] += n
    return Assignment({m: tuple(sorted(tps)) for m, tps in out.items()})


def _weighted(objective: ConsumerObjective, weights: Mapping[str, int]) -> int:
    """The flow's cost of an assignment with this objective (K5): what the certificate's flow must cost."""
    return (weights["balance"] * objective.sum_squares + weights["spread"] * objective.spread
            - weights["racks"] * objective.rack_local - weights["kept"] * objective.kept)


def solve_consumer(scenario: Scenario, *, tiers: Sequence[str] = TIERS, cpsat_seconds: float | None = None) -> ConsumerOptimum:
    """The optimum of ``tiers`` (an ordered subset of ``TIERS``) for a consumer-group scenario.

    By min-cost flow with a checked certificate when the K5 weights fit 64-bit costs, else by
    CP-SAT one tier after the other (``cpsat_seconds`` bounds each stage; a stage cut short makes
    the answer FEASIBLE, not proven)."""
    if not scenario.is_consumer_group:
        raise InvalidScenario("group_protocol", "the consumer-group optimum needs a consumer group (group_protocol \"consumer\")")
    tiers = tuple(tiers)
    unknown = [t for t in tiers if t not in TIERS]
    if unknown or len(set(tiers)) != len(tiers):
        raise InvalidScenario("tiers", f"expected distinct tiers among {', '.join(TIERS)}, got {', '.join(tiers)}")
    started = time.perf_counter()
    subs = subscribers_of(scenario)
    _, scale = _weights(scenario, subs, tiers)
    meta = {t.name: t for t in scenario.topics}
    num = sum(meta[t].partitions for t in subs)
    parts = _components(subs)
    if len(parts) > 1:
        return _solve_components(scenario, parts, tiers, started, cpsat_seconds)
    if _homogeneous(subs) and tiers[:2] == ("balance", "spread"):
        fast = _solve_homogeneous(scenario, subs, tiers, started)
        if fast is not None:
            return fast
    if scale * max(1, 2 * num) * max(1, num) >= _INT64_SAFE:
        from .consumer_staged import solve_staged

        return solve_staged(scenario, tiers, started, cpsat_seconds)
    net = _build(scenario, tiers)
    flow = _solve_network(net)
    potential = potentials_of(net.num_nodes, net.tail, net.head, net.capacity, net.cost, flow)
    check = check_certificate(net.tail, net.head, net.capacity, net.cost, flow, net.supply, potential)
    assignment = _read(net, flow, scenario)
    objective = consumer_objective(scenario, assignment)
    cost = int((flow * net.cost).sum()) if flow.size else 0
    failures = list(check.failures)
    if cost != _weighted(objective, net.weights):
        failures.append(f"the assignment read back costs {_weighted(objective, net.weights)}, the flow {cost}")
    proven = not failures
    return ConsumerOptimum("flow", "OPTIMAL" if proven else "FEASIBLE", proven, tiers, assignment, objective,
                           time.perf_counter() - started, "; ".join(failures))


# ------------------------------------------------------------------------------------------
# Independent parts: topics linked by a common subscriber


def _components(subs: Mapping[str, tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The assignable topics split into groups no member subscribes across (sorted, deterministic)."""
    parent = {t: t for t in subs}

    def find(t: str) -> str:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    first: dict[str, str] = {}
    for t, ms in subs.items():
        for m in ms:
            if m in first:
                a, b = find(first[m]), find(t)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                first[m] = t
    out: dict[str, list[str]] = {}
    for t in subs:
        out.setdefault(find(t), []).append(t)
    return [tuple(ts) for _, ts in sorted(out.items())]


def _solve_components(scenario: Scenario, parts: list[tuple[str, ...]], tiers: tuple[str, ...], started: float,
                      cpsat_seconds: float | None) -> ConsumerOptimum:
    """Each part solved on its own and the answers joined.

    Every tier is a sum over members (K1, K2) or partitions (K3, K4), and no member or partition
    belongs to two parts, so each tier of the whole is the sum of the parts' and an assignment is
    lexicographically optimal exactly when each part's restriction is (tier by tier: a sum is at its
    minimum only when every term is). Proven when every part is; the joined objective is recounted."""
    subs = subscribers_of(scenario)
    out: dict[str, tuple[TopicPartition, ...]] = {m.id: () for m in scenario.members}
    engines, details, proven, status = [], [], True, "OPTIMAL"
    for topics in parts:
        names = set(topics)
        ids = {m for t in topics for m in subs[t]}
        sub = replace(scenario, topics=tuple(t for t in scenario.topics if t.name in names),
                      members=tuple(m for m in scenario.members if m.id in ids))
        opt = solve_consumer(sub, tiers=tiers, cpsat_seconds=cpsat_seconds)
        if opt.assignment is None:
            return ConsumerOptimum(opt.engine, opt.status, False, tiers, None, None, time.perf_counter() - started,
                                   f"part {', '.join(topics)}: {opt.detail}")
        engines.append(opt.engine)
        proven &= opt.proven
        if not opt.proven:
            status = opt.status
            details.append(f"part {', '.join(topics)}: {opt.detail}")
        for m, tps in opt.assignment.assignment.items():
            out[m] = tps
    assignment = Assignment(out)
    engine = f"parts({len(parts)}: {', '.join(sorted(set(engines)))})"
    return ConsumerOptimum(engine, status, proven, tiers, assignment, consumer_objective(scenario, assignment),
                           time.perf_counter() - started, "; ".join(details))


# ------------------------------------------------------------------------------------------
# Homogeneous groups: K1 and K2 in closed form, K3-K4 by a small flow (models/optimal-assignment.md §10)


def _homogeneous(subs: Mapping[str, tuple[str, ...]]) -> bool:
    """Every member with an assignable topic subscribes to every assignable topic."""
    members = {m for ms in subs.values() for m in ms}
    return bool(subs) and all(len(ms) == len(members) for ms in subs.values())


def _solve_homogeneous(scenario: Scenario, subs: Mapping[str, tuple[str, ...]], tiers: tuple[str, ...],
                       started: float) -> ConsumerOptimum | None:
    """The optimum of a homogeneous group, or None when the certificate does not hold (the caller
    then solves the general network).

    With M subscribers, P partitions and n_t partitions of topic t: sum load^2 over integer loads
    summing to P is smallest exactly when the loads are within one (q = P // M or q + 1), and
    sum count(m, t)^2 exactly when each topic's counts are within one (f_t = n_t // M or f_t + 1);
    both at once are always possible (hand each topic's n_t % M extras round-robin, continuing where
    the previous topic stopped). So the K1-K2-optimal assignments are exactly those inside these
    bounds, and among them K3-K4 are a max-gain flow over
    ``class -> pair(t, holder)`` (kept), ``class -> hub(t, replica racks) -> pair(t, m)`` (rack
    local), ``pair(t, m) -> m`` (at least f_t, at most f_t + 1), ``m -> SINK`` (at least q, at most
    q + 1). The lower bounds become supplies (an arc u -> v carrying at least l: u supplies l less,
    v l more, the arc keeps the one unit above l), so no cost dwarfs the gains: arcs linear in
    classes + hubs x members + topics x members instead of the P units per member and per pair of
    the general network.

    Certificate: ``check_certificate`` accepts node potentials for the flow of this network with
    those supplies (min cost among all flows inside the bounds, whose K1 and K2 are the closed-form
    minima); the recount of the assignment gives those minima and the flow's gain.
    """
    members = tuple(sorted({m for ms in subs.values() for m in ms}))
    meta = {t.name: t for t in scenario.topics}
    num_members = len(members)
    total = sum(meta[t].partitions for t in subs)
    q = total // num_members
    lower = [t for t in tiers[2:]]
    weights = {t: 0 for t in TIERS}
    scale = 1
    for tier in reversed(lower):
        weights[tier] = scale
        scale *= total + 1
    if scale * max(1, total) >= _INT64_SAFE:
        return None
    member_index = {m: i for i, m in enumerate(members)}
    racks = {m.id: m.rack or None for m in scenario.members}
    classes = partition_classes(scenario, subs)
    topics = tuple(subs)
    topic_index = {t: i for i, t in enumerate(topics)}
    hubs = sorted({(t, rs) for t, _, rs, _ in classes}, key=lambda k: (k[0], sorted(k[1])))
    hub_index = {h: i for i, h in enumerate(hubs)}
    # Node layout: SINK, classes, hubs, pairs (topic-major), members.
    sink, class0 = 0, 1
    hub0 = class0 + len(classes)
    pair0 = hub0 + len(hubs)
    member0 = pair0 + len(topics) * num_members
    num_nodes = member0 + num_members
    tail: list[np.ndarray] = []
    head: list[np.ndarray] = []
    cap: list[np.ndarray] = []
    cost: list[np.ndarray] = []

    def arcs(t, h, c, k):
        tail.append(np.asarray(t, dtype=np.int64)); head.append(np.asarray(h, dtype=np.int64))
        cap.append(np.broadcast_to(np.asarray(c, dtype=np.int64), tail[-1].shape))
        cost.append(np.broadcast_to(np.asarray(k, dtype=np.int64), tail[-1].shape))

    supply = np.zeros(num_nodes, dtype=np.int64)
    direct_class, direct_member = [], []
    for c, (topic, holder, rs, tps) in enumerate(classes):
        supply[class0 + c] = len(tps)
        if holder is not None:
            # K4 (and K3 when the holder's rack holds a replica): the class's partitions kept by their holder.
            gain = weights["kept"] + weights["racks"] * (racks[holder] is not None and racks[holder] in rs)
            direct_class.append(c); direct_member.append(member_index[holder])
            arcs([class0 + c], [pair0 + topic_index[topic] * num_members + member_index[holder]], [len(tps)], [-gain])
    num_direct = len(direct_class)
    hub_of_class = np.asarray([hub0 + hub_index[(t, rs)] for t, _, rs, _ in classes], dtype=np.int64)
    arcs(class0 + np.arange(len(classes)), hub_of_class, [len(tps) for *_, tps in classes], 0)
    member_racks = [racks[m] for m in members]
    for h, (topic, rs) in enumerate(hubs):
        # K3: a partition moved to a member whose rack holds one of its replicas is local.
        local = np.asarray([r is not None and r in rs for r in member_racks], dtype=np.int64)
        arcs(np.full(num_members, hub0 + h), pair0 + topic_index[topic] * num_members + np.arange(num_members),
             meta[topic].partitions, -weights["racks"] * local)
    pair_nodes = pair0 + np.arange(len(topics) * num_members)
    pair_members = member0 + np.tile(np.arange(num_members), len(topics))
    floors = np.repeat(np.asarray([meta[t].partitions // num_members for t in topics], dtype=np.int64), num_members)
    # K2: each topic's counts within one: f_t units as supplies, one more on the arc.
    arcs(pair_nodes, pair_members, 1, 0)
    # K1: loads within one: q units per member as supplies, one more on the arc.
    arcs(member0 + np.arange(num_members), np.full(num_members, sink), 1, 0)
    supply[sink] = -total
    supply[pair_nodes] -= floors
    np.add.at(supply, pair_members, floors)
    supply[member0:member0 + num_members] -= q
    supply[sink] += q * num_members
    t_, h_, c_, k_ = (np.concatenate(x) for x in (tail, head, cap, cost))
    try:
        flow = _solve_network(_Network(num_nodes, t_, h_, c_, k_, supply, np.zeros(0, np.int64), np.zeros(0, np.int64),
                                       np.zeros(0, np.int64), (), members, weights))
    except SolverError:
        return None  # the bounds admit no flow: cannot happen (see above); the general network decides
    potential = potentials_of(num_nodes, t_, h_, c_, k_, flow)
    check = check_certificate(t_, h_, c_, k_, flow, supply, potential)
    failures = list(check.failures)
    # Read back: direct arcs first, then each hub's pool of the rest, handed out in arc order.
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in scenario.members}
    taken = [0] * len(classes)
    for a in range(num_direct):
        n = int(flow[a])
        c = direct_class[a]
        out[members[direct_member[a]]].extend(classes[c][3][taken[c]:taken[c] + n])
        taken[c] += n
    pools: list[list[TopicPartition]] = [[] for _ in hubs]
    for c, (topic, _, rs, tps) in enumerate(classes):
        pools[hub_index[(topic, rs)]].extend(tps[taken[c]:])
    hub_arc0 = num_direct + len(classes)
    hub_flow = flow[hub_arc0:hub_arc0 + len(hubs) * num_members].reshape(len(hubs), num_members) if hubs else np.zeros((0, 0))
    for h in range(len(hubs)):
        at = 0
        for i in np.flatnonzero(hub_flow[h]).tolist():
            n = int(hub_flow[h, i])
            out[members[i]].extend(pools[h][at:at + n])
            at += n
    assignment = Assignment({m: tuple(sorted(tps)) for m, tps in out.items()})
    objective = consumer_objective(scenario, assignment)
    r = total - q * num_members
    k1 = r * (q + 1) ** 2 + (num_members - r) * q * q
    k2 = 0
    for t in topics:
        f, rt = divmod(meta[t].partitions, num_members)
        k2 += rt * (f + 1) ** 2 + (num_members - rt) * f * f
    gain = -int((flow * k_).sum())
    if (objective.sum_squares, objective.spread) != (k1, k2):
        failures.append(f"recount: sum of squares {objective.sum_squares}, spread {objective.spread}; closed forms {k1}, {k2}")
    if gain != weights["racks"] * objective.rack_local + weights["kept"] * objective.kept:
        failures.append(f"recount: the assignment gains {weights['racks'] * objective.rack_local + weights['kept'] * objective.kept}, the flow {gain}")
    if failures:
        return None
    return ConsumerOptimum("flow-homogeneous", "OPTIMAL", True, tiers, assignment, objective,
                           time.perf_counter() - started, "")
