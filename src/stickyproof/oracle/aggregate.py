"""The aggregated model shared by the flow and the aggregated CP-SAT (models/optimal-assignment.md §4).

Partitions that no constraint tells apart collapse into classes: same subscriber set (D2), same
retainable claimant (D4) and, only when the rack tier O3 is on, the same replica rack set (D6).
A *hub* gathers the classes of one subscriber set (and rack set); a class is (hub, claimant).
Engines solve for counts (``kept[c]``, ``pool[h][i]``) and ``expand`` turns counts back into
partitions deterministically.

Partitions are dense ids over the assignable topics in sorted order (the same numbering as
``model.Index.of(scenario, only_subscribed=True)``), so classes are numpy arrays, not lists of
tuples: a million-partition group aggregates in one pass per topic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..model import Assignment, Scenario, TopicPartition
from .claims import NO_MEMBER, ClaimTable, claim_table, claimants
from .result import Objective

__all__ = ["Hub", "PartitionClass", "Aggregate", "aggregate", "Expansion", "expand", "to_assignment", "cooperative_round", "owner_array", "tiers"]


@dataclass(frozen=True, eq=False)
class Hub:
    """Partitions with subscriber set ``subscribers`` (dense member ids, sorted) and rack set ``racks``.

    ``local[i]`` says whether ``subscribers[i]`` is rack-local to these partitions (D6, O3).
    """

    subscribers: np.ndarray
    racks: frozenset[str] | None
    local: np.ndarray
    size: int


@dataclass(frozen=True, eq=False)
class PartitionClass:
    """``size`` partitions of hub ``hub`` whose retainable claimant is ``claimant`` (or NO_MEMBER)."""

    hub: int
    claimant: int
    partitions: np.ndarray
    claimant_local: bool

    @property
    def size(self) -> int:
        return int(self.partitions.size)


@dataclass(frozen=True, eq=False)
class Aggregate:
    """A scenario as hubs and classes.

    ``reach[m]``: partitions member m could take; ``num_partitions``: |P| (D1);
    ``retainable``: K (D4); ``rack_informed``: partitions with replica racks (the O3 range);
    ``racks``: whether the O3 tier is on.
    """

    scenario: Scenario
    table: ClaimTable
    members: tuple[str, ...]
    topics: tuple[str, ...]
    topic_offset: np.ndarray
    hubs: tuple[Hub, ...]
    classes: tuple[PartitionClass, ...]
    reach: np.ndarray
    num_partitions: int
    retainable: int
    rack_informed: int
    racks: bool
    member_rack: tuple[str | None, ...]

    @property
    def num_members(self) -> int:
        return len(self.members)

    def classes_of_hub(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.hubs]
        for c, cls in enumerate(self.classes):
            out[cls.hub].append(c)
        return out

    def topic_partition(self, pid: int) -> TopicPartition:
        t = int(np.searchsorted(self.topic_offset, pid, side="right")) - 1
        return TopicPartition(self.topics[t], pid - int(self.topic_offset[t]))

    def retainer_by_pid(self) -> np.ndarray:
        """Dense D4 retainer per partition id (NO_MEMBER when none)."""
        if not self.topics:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self.table.retainer[t] for t in self.topics])


def aggregate(scenario: Scenario, *, racks: bool = False) -> Aggregate:
    """Build hubs and classes (models/optimal-assignment.md §4), deterministically ordered."""
    table = claim_table(scenario)
    members = table.members
    by_id = {m.id: m for m in scenario.members}
    member_rack = tuple(by_id[m].rack for m in members)
    topics = tuple(table.topics)
    counts = np.array([table.topics[t] for t in topics], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if topics else np.zeros(0, dtype=np.int64)
    topic_meta = {t.name: t for t in scenario.topics}

    hub_index: dict[tuple, int] = {}
    hub_subs: list[np.ndarray] = []
    hub_racks: list[frozenset[str] | None] = []
    class_parts: dict[tuple[int, int], list[np.ndarray]] = {}
    rack_informed = 0
    for ti, t in enumerate(topics):
        subs = np.flatnonzero(table.subscribed[t]).astype(np.int64)
        n = int(counts[ti])
        pids = offsets[ti] + np.arange(n, dtype=np.int64)
        retainer = table.retainer[t]
        rack_lists = topic_meta[t].racks if racks else None
        if rack_lists is None:
            groups = [(None, np.arange(n, dtype=np.int64))]
        else:
            rack_informed += n
            by_set: dict[frozenset[str], list[int]] = {}
            for p, rl in enumerate(rack_lists):
                by_set.setdefault(frozenset(rl), []).append(p)
            groups = [(rs, np.asarray(by_set[rs], dtype=np.int64)) for rs in sorted(by_set, key=sorted)]
        for rs, local_parts in groups:
            key = (subs.tobytes(), None if rs is None else tuple(sorted(rs)))
            h = hub_index.get(key)
            if h is None:
                h = hub_index[key] = len(hub_subs)
                hub_subs.append(subs)
                hub_racks.append(rs)
            ret = retainer[local_parts]
            order = np.argsort(ret, kind="stable")
            ret_sorted = ret[order]
            bounds = np.flatnonzero(np.diff(ret_sorted)) + 1
            for chunk in np.split(order, bounds):
                if chunk.size == 0:
                    continue
                claimant = int(ret[chunk[0]])
                class_parts.setdefault((h, claimant), []).append(pids[local_parts[chunk]])

    def is_local(m: int, rs: frozenset[str] | None) -> bool:
        r = member_rack[m]
        return rs is not None and r is not None and r in rs

    hubs = []
    for h, subs in enumerate(hub_subs):
        rs = hub_racks[h]
        local = np.array([is_local(int(m), rs) for m in subs], dtype=bool) if racks else np.zeros(subs.size, dtype=bool)
        hubs.append(Hub(subs, rs, local, 0))
    classes = []
    hub_size = [0] * len(hubs)
    for (h, claimant) in sorted(class_parts, key=lambda k: (k[0], k[1])):
        parts = np.sort(np.concatenate(class_parts[(h, claimant)]))
        local = claimant != NO_MEMBER and racks and is_local(claimant, hub_racks[h])
        classes.append(PartitionClass(h, claimant, parts, bool(local)))
        hub_size[h] += int(parts.size)
    hubs = [Hub(hb.subscribers, hb.racks, hb.local, hub_size[h]) for h, hb in enumerate(hubs)]
    reach = np.zeros(len(members), dtype=np.int64)
    for hb in hubs:
        reach[hb.subscribers] += hb.size
    retainable = sum(c.size for c in classes if c.claimant != NO_MEMBER)
    return Aggregate(
        scenario=scenario,
        table=table,
        members=members,
        topics=topics,
        topic_offset=offsets,
        hubs=tuple(hubs),
        classes=tuple(classes),
        reach=reach,
        num_partitions=int(counts.sum()) if topics else 0,
        retainable=int(retainable),
        rack_informed=rack_informed,
        racks=racks,
        member_rack=member_rack,
    )


@dataclass(frozen=True, eq=False)
class Expansion:
    """An expanded assignment in dense form: ``owner[pid]`` = member id index, plus its tiers."""

    owner: np.ndarray
    loads: np.ndarray
    objective: Objective


def expand(agg: Aggregate, kept: Sequence[int], pool: Sequence[Mapping[int, int]]) -> Expansion:
    """Counts -> partitions (§4, deterministic).

    ``kept[c]``: partitions of class c staying with its claimant (0 for unclaimed classes);
    ``pool[h]``: member index -> partitions of hub h's pool it takes. Each member first takes its
    own unkept claims from the pool (so expansion never lowers ``kept``), then members in id order
    take the lowest remaining partitions.
    """
    owner = np.full(agg.num_partitions, NO_MEMBER, dtype=np.int64)
    leftovers: list[list[np.ndarray]] = [[] for _ in agg.hubs]
    own_left: list[dict[int, np.ndarray]] = [{} for _ in agg.hubs]
    for c, cls in enumerate(agg.classes):
        y = int(kept[c])
        if y < 0 or y > cls.size or (y and cls.claimant == NO_MEMBER):
            raise ValueError(f"kept count {y} invalid for class {c}")
        if y:
            owner[cls.partitions[:y]] = cls.claimant
        rest = cls.partitions[y:]
        if rest.size:
            leftovers[cls.hub].append(rest)
            if cls.claimant != NO_MEMBER:
                own_left[cls.hub][cls.claimant] = rest
    for h, hub in enumerate(agg.hubs):
        counts = pool[h]
        total = sum(int(v) for v in counts.values())
        left = np.sort(np.concatenate(leftovers[h])) if leftovers[h] else np.zeros(0, dtype=np.int64)
        if total != left.size:
            raise ValueError(f"hub {h}: pool counts {total} != pool size {left.size}")
        need = {int(m): int(v) for m, v in sorted(counts.items()) if int(v) > 0}
        for m in list(need):
            own = own_left[h].get(m)
            if own is not None and own.size:
                take = own[: need[m]]
                owner[take] = m
                need[m] -= take.size
        free = left[owner[left] == NO_MEMBER]
        start = 0
        for m in sorted(need):
            k = need[m]
            if k:
                owner[free[start : start + k]] = m
                start += k
    if agg.num_partitions and (owner == NO_MEMBER).any():
        raise ValueError("expansion left partitions unassigned")
    return Expansion(owner, *tiers(agg, owner))


def tiers(agg: Aggregate, owner: np.ndarray) -> tuple[np.ndarray, Objective]:
    """Loads and O1-O3 of a dense assignment (computed from the partitions, not from solver counts)."""
    loads = np.bincount(owner, minlength=agg.num_members).astype(np.int64) if owner.size else np.zeros(agg.num_members, dtype=np.int64)
    retainer = agg.retainer_by_pid()
    kept = int(np.count_nonzero((retainer >= 0) & (retainer == owner)))
    rack_local = None
    if agg.racks:
        rack_local = 0
        for cls in agg.classes:
            hub = agg.hubs[cls.hub]
            if hub.racks is None:
                continue
            holders = owner[cls.partitions]
            local_members = hub.subscribers[hub.local]
            rack_local += int(np.isin(holders, local_members).sum())
    sum_squares = int((loads * loads).sum())
    max_load = int(loads.max()) if loads.size else 0
    return loads, Objective(sum_squares, max_load, kept, rack_local)


def to_assignment(agg: Aggregate, owner: np.ndarray) -> Assignment:
    """Dense owners -> Assignment, partitions sorted, every member present."""
    per_member: list[list[TopicPartition]] = [[] for _ in agg.members]
    if owner.size:
        order = np.argsort(owner, kind="stable")
        sorted_owner = owner[order]
        bounds = np.searchsorted(sorted_owner, np.arange(agg.num_members + 1))
        topics = agg.topics
        offsets = agg.topic_offset
        for m in range(agg.num_members):
            pids = order[bounds[m] : bounds[m + 1]]
            if pids.size == 0:
                continue
            tix = np.searchsorted(offsets, pids, side="right") - 1
            parts = pids - offsets[tix]
            per_member[m] = [TopicPartition(topics[t], p) for t, p in zip(tix.tolist(), parts.tolist())]
    return Assignment({m: tuple(per_member[i]) for i, m in enumerate(agg.members)})


def cooperative_round(scenario: Scenario, target: Assignment) -> Assignment:
    """O4: the round-1 assignment = target minus transferring partitions (D5), listed under ``revoking``.

    A partition is transferring when some member other than its target owner lists it in
    ``owned``; each such member must revoke it first, so it is withheld this round.
    """
    holders = claimants(scenario)
    owner_of = {tp: m for m, tps in target.assignment.items() for tp in tps}
    revoking: dict[str, list[TopicPartition]] = {}
    withheld: set[TopicPartition] = set()
    for tp, who in holders.items():
        new = owner_of.get(tp)
        others = [m for m in who if m != new]
        if others:
            withheld.add(tp)
            for m in others:
                revoking.setdefault(m, []).append(tp)
    round1 = {m: tuple(tp for tp in tps if tp not in withheld) for m, tps in target.assignment.items()}
    return Assignment(round1, {m: tuple(sorted(v)) for m, v in sorted(revoking.items())})


def owner_array(agg: Aggregate, assignment: Assignment) -> np.ndarray | None:
    """An assignment as dense owners per partition id, or None unless it satisfies C1 and C2.

    Used to read a hint: an assignor's output that is not a valid assignment of exactly the
    assignable partitions (D1) cannot warm-start anything, so it is ignored rather than trusted.
    """
    index = {m: i for i, m in enumerate(agg.members)}
    topic_ix = {t: i for i, t in enumerate(agg.topics)}
    owner = np.full(agg.num_partitions, NO_MEMBER, dtype=np.int64)
    for member, tps in assignment.assignment.items():
        m = index.get(member)
        if m is None:
            if tps:
                return None
            continue
        for tp in tps:
            t = topic_ix.get(tp.topic)
            if t is None or not 0 <= tp.partition < agg.table.topics[tp.topic]:
                return None
            if not agg.table.subscribed[tp.topic][m]:
                return None
            pid = int(agg.topic_offset[t]) + tp.partition
            if owner[pid] != NO_MEMBER:
                return None
            owner[pid] = m
    if (owner == NO_MEMBER).any():
        return None
    return owner
