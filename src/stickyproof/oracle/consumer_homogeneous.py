"""Homogeneous consumer groups: K1 and K2 in closed form, K3-K4 by a small flow over classes
(models/optimal-assignment.md §10; ``consumer.solve_consumer`` calls it).

With M subscribers, P partitions and n_t partitions of topic t: sum load^2 over integer loads
summing to P is smallest exactly when the loads are within one (q = P // M or q + 1), and
sum count(m, t)^2 exactly when each topic's counts are within one (f_t = n_t // M or f_t + 1);
both at once are always possible (hand each topic's n_t % M extras round-robin, continuing where
the previous topic stopped). So the K1-K2-optimal assignments are exactly those inside these
bounds, and among them K3-K4 are a max-gain flow over
``class -> pair(t, holder)`` (kept), ``class -> hub(t, local racks) -> pair(t, m)`` (rack
local), ``pair(t, m) -> m`` (at least f_t, at most f_t + 1), ``m -> SINK`` (at least q, at most
q + 1). The lower bounds become supplies (an arc u -> v carrying at least l: u supplies l less,
v l more, the arc keeps the one unit above l), so no cost dwarfs the gains: arcs linear in
classes + hubs x members + topics x members instead of the P units per member and per pair of
the general network. A pair fed by a single hub arc (its topic has one local rack set and its
member holds none of it) is contracted into that arc, its f_t units a supply of the hub. Every
step is array work over classes, hubs and members; partitions are handed out once, from the flow,
as flat indexes.

Certificate, in three parts, all checked before the answer is called proven:
1. ``flow.check_certificate`` accepts node potentials (Bellman-Ford on the residual arcs) for the
   flow of this network with those supplies: no flow inside the bounds gains more K3-K4 (the
   contracted pairs' forced units are the same on every such flow: a constant gain, added back);
2. the read-back hands out exactly each class's and each hub's partitions (``hand_out``);
3. ``consumer_recount`` (which reads the scenario apart from the classes) counts the assignment
   at the closed-form K1 and K2, at the flow's gain for K3-K4, with every assignable partition
   placed once, on a subscriber.
"""

from __future__ import annotations

import time
from typing import Mapping

import numpy as np

from ..errors import SolverError
from ..model import Scenario
from . import consumer
from .consumer import TIERS, ConsumerObjective, ConsumerOptimum, _Network, _solve_network
from .consumer_classes import assignment_of, build_classes, hand_out, positions
from .consumer_recount import recount_placed
from .flow import check_certificate, potentials_of

__all__ = ["solve_homogeneous"]


def solve_homogeneous(scenario: Scenario, subs: Mapping[str, tuple[str, ...]], tiers: tuple[str, ...],
                      started: float) -> ConsumerOptimum | None:
    """The optimum of a homogeneous group, or None when the certificate does not hold (the caller
    then solves the general network)."""
    cl = build_classes(scenario, subs)
    members = cl.members
    num_members, num_topics, num_classes = len(members), len(cl.topics), cl.size.size
    counts = np.diff(cl.offset)
    total = int(cl.offset[-1])
    q = total // num_members
    weights = {t: 0 for t in TIERS}
    scale = 1
    for tier in reversed(tiers[2:]):
        weights[tier] = scale
        scale *= total + 1
    if scale * max(1, total) >= consumer._INT64_SAFE:  # read at call time: tests lower it
        return None
    # Hubs: (topic, local racks), sorted as the classes are (local codes order as the sets).
    width = len(cl.local_sets)
    hubs, hub_of_class = np.unique(cl.topic * width + cl.local, return_inverse=True)
    hub_of_class = hub_of_class.reshape(-1)
    hub_topic, hub_local = hubs // width, hubs % width
    num_hubs = hubs.size
    # Node layout: SINK, classes, hubs, pairs (topic-major), members.
    sink, class0 = 0, 1
    hub0 = class0 + num_classes
    pair0 = hub0 + num_hubs
    member0 = pair0 + num_topics * num_members
    num_nodes = member0 + num_members
    member_ids = np.arange(num_members, dtype=np.int64)
    held = np.flatnonzero(cl.holder >= 0)
    # K4 (and K3 when the holder's rack holds a replica): a class's partitions kept by their holder.
    direct_gain = weights["kept"] + weights["racks"] * cl.gains_local(held, cl.holder[held])
    # K3: a partition moved to a member whose rack holds one of its replicas is local.
    hub_gain = weights["racks"] * cl.rack_local(hub_local)
    num_pairs = num_topics * num_members
    pair_nodes = pair0 + np.arange(num_pairs, dtype=np.int64)
    pair_members = member0 + np.tile(member_ids, num_topics)
    floors = np.repeat(counts // num_members, num_members)
    extra = np.repeat(counts % num_members > 0, num_members)
    direct_pair = cl.topic[held] * num_members + cl.holder[held]
    hub_pair = (hub_topic[:, None] * num_members + member_ids).reshape(-1)
    hub_tail = np.repeat(hub0 + np.arange(num_hubs), num_members)
    # A pair fed by one hub arc and nothing else is contracted: the hub's arc goes straight to the
    # member carrying the pair's one unit above f_t (or nothing, when M divides n_t), and the hub
    # supplies the f_t units less. The same flows, each costing f_t * gain less on that arc (added
    # back to the gain below), without the pair node and its arc: half the network when few are held.
    alone = (np.bincount(hub_pair, minlength=num_pairs) + np.bincount(direct_pair, minlength=num_pairs)) == 1
    hub_alone = alone[hub_pair]
    lower = np.where(hub_alone, floors[hub_pair], 0)
    arcs = [
        (class0 + held, pair0 + direct_pair, cl.size[held], -direct_gain),
        (class0 + np.arange(num_classes), hub0 + hub_of_class, cl.size, 0),
        (hub_tail, np.where(hub_alone, pair_members[hub_pair], pair0 + hub_pair),
         np.where(hub_alone, extra[hub_pair], np.repeat(counts[hub_topic], num_members)), -hub_gain.reshape(-1)),
        # K2: each topic's counts within one: f_t units as supplies, one more on the arc (none when M
        # divides n_t: counts within one of each other summing to f_t * M are all f_t).
        (pair_nodes[extra & ~alone], pair_members[extra & ~alone], 1, 0),
    ]
    # K1: loads within one: q units per member as supplies, one more on the arc (none when M divides P).
    if total % num_members:
        arcs.append((member0 + member_ids, np.full(num_members, sink), 1, 0))
    tail, head, cap, cost = (np.concatenate([np.broadcast_to(np.asarray(a[k], dtype=np.int64), np.shape(a[0])) for a in arcs])
                             for k in range(4))
    supply = np.zeros(num_nodes, dtype=np.int64)
    supply[class0:hub0] = cl.size
    supply[sink] = -total + q * num_members
    supply[pair_nodes[~alone]] -= floors[~alone]
    np.add.at(supply, hub_tail, -lower)
    np.add.at(supply, pair_members, floors)
    supply[member0:member0 + num_members] -= q
    empty = np.zeros(0, np.int64)
    try:
        flow = _solve_network(_Network(num_nodes, tail, head, cap, cost, supply, empty, empty, empty, None, members, weights))
    except SolverError:
        return None  # the bounds admit no flow: cannot happen (see above); the general network decides
    potential = potentials_of(num_nodes, tail, head, cap, cost, flow)
    failures = list(check_certificate(tail, head, cap, cost, flow, supply, potential).failures)
    # Read back: each held class's first partitions to its holder (the direct arcs), then each hub's
    # pool of the rest (class after class) handed out in member order along the hub's arcs.
    owner = np.full(total, -1, dtype=np.int64)
    taken = np.zeros(num_classes, dtype=np.int64)
    taken[held] = flow[:held.size]
    cls, at = positions(cl)
    direct = at < taken[cls]
    owner[cl.parts[direct]] = cl.holder[cls[direct]]
    rest = ~direct
    pooled = cl.parts[rest][np.argsort(hub_of_class[cls[rest]], kind="stable")]
    hub_arc0 = held.size + num_classes
    hub_flow = flow[hub_arc0:hub_arc0 + num_hubs * num_members] + lower
    if not hand_out(pooled, np.tile(member_ids, num_hubs), hub_flow, owner) or (owner < 0).any():
        return None
    assignment = assignment_of(scenario, cl, owner)
    counted, placement = recount_placed(scenario, assignment, subs)
    objective = ConsumerObjective(*counted)
    failures += placement
    r = total - q * num_members
    k1 = r * (q + 1) ** 2 + (num_members - r) * q * q
    k2 = 0
    for n in counts.tolist():
        f, rt = divmod(n, num_members)
        k2 += rt * (f + 1) ** 2 + (num_members - rt) * f * f
    gain = -int((flow * cost).sum()) + int((lower * hub_gain.reshape(-1)).sum())
    if (objective.sum_squares, objective.spread) != (k1, k2):
        failures.append(f"recount: sum of squares {objective.sum_squares}, spread {objective.spread}; closed forms {k1}, {k2}")
    if gain != weights["racks"] * objective.rack_local + weights["kept"] * objective.kept:
        failures.append(f"recount: the assignment gains {weights['racks'] * objective.rack_local + weights['kept'] * objective.kept}, the flow {gain}")
    if failures:
        return None
    return ConsumerOptimum("flow-homogeneous", "OPTIMAL", True, tiers, assignment, objective,
                           time.perf_counter() - started, "")
