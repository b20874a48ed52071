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
from the arc arrays alone, the assignment read back places every assignable partition once on a
subscriber, and the objective recounted from it (``consumer_recount``, which reads the scenario
apart from ``consumer_classes``) matches the flow's cost. Classes, read-back and recount are array
work (numpy); ``TopicPartition`` values are made once, for the answer. Homogeneous groups take the
closed form of ``consumer_homogeneous``, groups whose topics split into parts no member spans are
solved part by part; when the weights would overflow 64-bit costs, CP-SAT optimises the tiers one
after the other (``consumer_staged``).

The oracle never imports the assignors: everything here is read from the scenario and the models.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InvalidScenario, SolverError
from ..model import Assignment, Scenario, TopicPartition
from .consumer_classes import Classes, assignment_of, build_classes, class_partitions, hand_out
from .consumer_recount import recount, recount_placed
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
    # Per distinct subscription, not per member: Kafka's shapes have a handful among thousands of members.
    by_subscription: dict[tuple[str, ...], list[str]] = {}
    for m in sorted(scenario.members, key=lambda m: m.id):
        by_subscription.setdefault(m.topics, []).append(m.id)
    runs: dict[str, list[list[str]]] = {}
    for topics, ids in by_subscription.items():
        for name in dict.fromkeys(topics):
            if name in meta and meta[name].partitions > 0:
                runs.setdefault(name, []).append(ids)
    shared: dict[int, tuple[str, ...]] = {}
    out: dict[str, tuple[str, ...]] = {}
    for name in sorted(runs):
        lists = runs[name]
        if len(lists) == 1:
            if id(lists[0]) not in shared:
                shared[id(lists[0])] = tuple(lists[0])
            out[name] = shared[id(lists[0])]
        else:
            out[name] = tuple(sorted(chain.from_iterable(lists)))
    return out


def assignable_partitions(scenario: Scenario) -> tuple[TopicPartition, ...]:
    """Every partition the coordinator's target must place: all partitions of every subscribed topic."""
    meta = {t.name: t for t in scenario.topics}
    return tuple(TopicPartition(t, p) for t in subscribers_of(scenario) for p in range(meta[t].partitions))


def consumer_objective(scenario: Scenario, assignment: Assignment) -> ConsumerObjective:
    """K1-K4 counted from ``assignment`` alone (the recount every optimum is checked against;
    ``consumer_recount`` reads the scenario apart from the classes the flow is built on)."""
    return ConsumerObjective(*recount(scenario, assignment))


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
    class_arcs: np.ndarray  # arc index of every class -> pair arc, class after class
    class_arc_class: np.ndarray
    class_arc_member: np.ndarray
    classes: Classes | None
    members: tuple[str, ...]
    weights: dict[str, int]


def partition_classes(scenario: Scenario, subs: Mapping[str, tuple[str, ...]]) -> list[tuple[str, str | None, frozenset[str], list[TopicPartition]]]:
    """Partitions grouped by (topic, holder among the subscribers, subscribers' racks holding a replica),
    as lists (``consumer_classes.build_classes`` keeps them as arrays)."""
    cl = build_classes(scenario, subs)
    return [(cl.topics[t], None if h < 0 else cl.members[h], cl.local_sets[r], tps)
            for t, h, r, tps in zip(cl.topic.tolist(), cl.holder.tolist(), cl.local.tolist(), class_partitions(cl))]


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


def _units(nodes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``counts[i]`` unit arcs out of ``nodes[i]``: their tails and their rank k = 0.. among that node's."""
    tails = np.repeat(nodes, counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    return tails, np.arange(tails.size, dtype=np.int64) - first


def _build(scenario: Scenario, tiers: Sequence[str]) -> _Network:
    subs = subscribers_of(scenario)
    weights, _ = _weights(scenario, subs, tiers)
    cl = build_classes(scenario, subs)
    members = cl.members
    num_classes, num_members = cl.size.size, len(members)
    member_index = {m: i for i, m in enumerate(members)}
    subscribers = [np.asarray([member_index[m] for m in ms], dtype=np.int64) for ms in subs.values()]
    pair_base = np.concatenate([[0], np.cumsum([s.size for s in subscribers])]).astype(np.int64)
    pair_member = np.concatenate(subscribers) if subscribers else np.zeros(0, np.int64)
    pair_count = np.repeat(np.diff(cl.offset), [s.size for s in subscribers])
    # Node layout: SINK, then classes, pairs (topic after topic, its subscribers in order), members.
    sink, class0 = 0, 1
    pair0 = class0 + num_classes
    member0 = pair0 + pair_member.size
    num_nodes = member0 + num_members
    supply = np.zeros(num_nodes, dtype=np.int64)
    supply[class0:pair0] = cl.size
    # Class -> pair arcs, class after class and each class's subscribers in order (the classes are sorted by topic).
    per_class = np.asarray([s.size for s in subscribers], dtype=np.int64)[cl.topic] if num_classes else np.zeros(0, np.int64)
    arc_class, rank = _units(np.arange(num_classes, dtype=np.int64), per_class)
    arc_topic = cl.topic[arc_class]
    arc_pair = pair_base[arc_topic] + rank
    arc_member = pair_member[arc_pair]
    # K3, K4: a partition placed on its holder is kept; on a member whose rack holds a replica it is local.
    gain = weights["kept"] * (arc_member == cl.holder[arc_class]) + weights["racks"] * cl.gains_local(arc_class, arc_member)
    tails = [class0 + arc_class]
    heads = [pair0 + arc_pair]
    caps = [cl.size[arc_class]]
    costs = [-gain.astype(np.int64)]
    pair_nodes = pair0 + np.arange(pair_member.size, dtype=np.int64)
    if weights["spread"]:
        # K2 spread: the k-th partition of a topic on one member costs (2k + 1), so the sum is count^2.
        t, k = _units(pair_nodes, pair_count)
        tails.append(t); heads.append(member0 + pair_member[t - pair0]); caps.append(np.ones_like(t)); costs.append(weights["spread"] * (2 * k + 1))
    else:
        tails.append(pair_nodes); heads.append(member0 + pair_member); caps.append(pair_count); costs.append(np.zeros_like(pair_nodes))
    total = int(cl.offset[-1])
    supply[sink] = -total
    reach = np.bincount(pair_member, weights=pair_count, minlength=num_members).astype(np.int64)
    member_nodes = member0 + np.arange(num_members, dtype=np.int64)
    if weights["balance"]:
        # K1 balance: the k-th partition on a member costs (2k + 1), so the sum is load^2.
        t, k = _units(member_nodes, np.minimum(reach, total))
        tails.append(t); heads.append(np.full_like(t, sink)); caps.append(np.ones_like(t)); costs.append(weights["balance"] * (2 * k + 1))
    else:
        tails.append(member_nodes); heads.append(np.full_like(member_nodes, sink)); caps.append(reach); costs.append(np.zeros_like(member_nodes))
    tail, head, cap, cost = (np.concatenate(x).astype(np.int64) for x in (tails, heads, caps, costs))
    return _Network(num_nodes, tail, head, cap, cost, supply, np.arange(arc_class.size, dtype=np.int64), arc_class, arc_member,
                    cl, members, weights)


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
    """Class counts back to partitions: each class's partitions in order, its arcs' members in order."""
    cl = net.classes
    owner = np.full(int(cl.offset[-1]), -1, dtype=np.int64)
    if not hand_out(cl.parts, net.class_arc_member, flow[net.class_arcs], owner) or (owner < 0).any():
        raise SolverError("the flow's class arcs do not carry every class's partitions (a bug: the certificate should have failed)")
    return assignment_of(scenario, cl, owner)


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
        return _solve_components(scenario, subs, parts, tiers, started, cpsat_seconds)
    if _homogeneous(subs) and tiers[:2] == ("balance", "spread"):
        from .consumer_homogeneous import solve_homogeneous

        fast = solve_homogeneous(scenario, subs, tiers, started)
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
    counted, failures = recount_placed(scenario, assignment, subs)
    objective = ConsumerObjective(*counted)
    cost = int((flow * net.cost).sum()) if flow.size else 0
    failures = list(check.failures) + failures
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

    # Topics with the same subscribers (often the very same tuple) are joined first; members are
    # then walked once per distinct subscriber list, not once per topic.
    distinct: dict[tuple[str, ...], str] = {}
    for t, ms in subs.items():
        if ms in distinct:
            a, b = find(distinct[ms]), find(t)
            if a != b:
                parent[max(a, b)] = min(a, b)
        else:
            distinct[ms] = t
    first: dict[str, str] = {}
    for ms, t in distinct.items():
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


def _solve_components(scenario: Scenario, subs: Mapping[str, tuple[str, ...]], parts: list[tuple[str, ...]],
                      tiers: tuple[str, ...], started: float, cpsat_seconds: float | None) -> ConsumerOptimum:
    """Each part solved on its own and the answers joined.

    Every tier is a sum over members (K1, K2) or partitions (K3, K4), and no member or partition
    belongs to two parts, so each tier of the whole is the sum of the parts' and an assignment is
    lexicographically optimal exactly when each part's restriction is (tier by tier: a sum is at its
    minimum only when every term is). Proven when every part is. The joined objective is the sum of
    the parts' recounts (each part's answer was recounted and checked to place its partitions once,
    on its subscribers, by ``consumer_recount`` on the part alone): a partition held by a member of
    another part is kept in neither count, and no member's load or rack spans two parts."""
    out: dict[str, tuple[TopicPartition, ...]] = {m.id: () for m in scenario.members}
    engines, details, proven, status = [], [], True, "OPTIMAL"
    total = [0, 0, 0, 0]
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
        o = opt.objective
        total = [a + b for a, b in zip(total, (o.sum_squares, o.spread, o.rack_local, o.kept))]
        proven &= opt.proven
        if not opt.proven:
            status = opt.status
            details.append(f"part {', '.join(topics)}: {opt.detail}")
        for m, tps in opt.assignment.assignment.items():
            out[m] = tps
    assignment = Assignment(out)
    engine = f"parts({len(parts)}: {', '.join(sorted(set(engines)))})"
    return ConsumerOptimum(engine, status, proven, tiers, assignment, ConsumerObjective(*total),
                           time.perf_counter() - started, "; ".join(details))


# ------------------------------------------------------------------------------------------
# Homogeneous groups: K1 and K2 in closed form (consumer_homogeneous)


def _homogeneous(subs: Mapping[str, tuple[str, ...]]) -> bool:
    """Every member with an assignable topic subscribes to every assignable topic: every topic has
    the same sorted subscribers."""
    return bool(subs) and len(set(subs.values())) == 1
