"""The aggregated model shared by the flow and the aggregated CP-SAT (models/optimal-assignment.md §4).

Partitions that no constraint tells apart collapse into classes: same subscriber set (D2), same
retainable claimant (D4) and, only when the rack tier O3 is on, the same replica rack set (D6).
A *hub* gathers the classes of one subscriber set (and rack set); a class is (hub, claimant).
Engines solve for counts (``kept[c]``, ``pool[h][i]``) and ``expand`` turns counts back into
partitions deterministically.

Partitions are the dense ids of ``model.Index.of(scenario, only_subscribed=True)`` (the claim
table's index: sorted assignable topics, sorted partitions), so classes are numpy arrays, not
lists of tuples: a million-partition group aggregates in one pass per topic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Mapping, Sequence

import numpy as np

from .._perf import gc_paused
from ..model import Assignment, Scenario, TopicPartition
from .claims import NO_MEMBER, ClaimTable, claim_table, claimants
from .racks import aligned
from .result import Objective

_make_tp = partial(tuple.__new__, TopicPartition)  # C-level constructor, as in assignors/range.py

__all__ = ["Hub", "Aggregate", "aggregate", "aggregate_with", "Expansion", "expand", "to_assignment", "cooperative_round", "owner_array", "tiers"]


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
class Aggregate:
    """A scenario as hubs and classes, classes stored as parallel arrays.

    Class ``c`` holds the partitions ``class_order[class_start[c]:class_end[c]]`` (ascending),
    of hub ``class_hub[c]``, retainable by ``class_claimant[c]`` (NO_MEMBER for none);
    ``class_local[c]``: the claimant is rack-local (O3). Classes are sorted by (hub, claimant).
    ``hub_of_pid``: each partition's hub. ``reach[m]``: partitions member m could take;
    ``num_partitions``: |P| (D1); ``retainable``: K (D4); ``rack_informed``: partitions with
    replica racks (the O3 range); ``racks``: whether the O3 tier is on.
    """

    scenario: Scenario
    table: ClaimTable
    members: tuple[str, ...]
    topics: tuple[str, ...]
    topic_offset: np.ndarray
    hubs: tuple[Hub, ...]
    hub_of_pid: np.ndarray
    class_hub: np.ndarray
    class_claimant: np.ndarray
    class_start: np.ndarray
    class_end: np.ndarray
    class_local: np.ndarray
    class_order: np.ndarray
    reach: np.ndarray
    num_partitions: int
    retainable: int
    rack_informed: int
    racks: bool
    member_rack: tuple[str | None, ...]
    #: the rack tier is Kafka's (D7 alignment, ranked above kept: KIP-881's order) rather than O3 after kept
    rack_first: bool = False

    @property
    def num_members(self) -> int:
        return len(self.members)

    @property
    def num_classes(self) -> int:
        return int(self.class_hub.size)

    @property
    def class_size(self) -> np.ndarray:
        return self.class_end - self.class_start

    def class_partitions(self, c: int) -> np.ndarray:
        return self.class_order[int(self.class_start[c]) : int(self.class_end[c])]

    def classes_of_hub(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.hubs]
        for c, h in enumerate(self.class_hub.tolist()):
            out[h].append(c)
        return out

    def topic_partition(self, pid: int) -> TopicPartition:
        return self.table.index.topic_partition(pid)

    def retainer_by_pid(self) -> np.ndarray:
        """Dense D4 retainer per partition id (NO_MEMBER when none)."""
        return self.table.retainer_pid


def aggregate(
    scenario: Scenario, *, racks: bool = False, alignment: Mapping[str, str | None] | None = None
) -> Aggregate:
    """Build hubs and classes (models/optimal-assignment.md §4), deterministically ordered.

    Hubs are numbered in order of first appearance over sorted (topic, partition); classes are
    sorted by (hub, claimant), claimant-less first; each class's partitions ascend.
    ``alignment``: the members' racks as Kafka's rack-aware path sees them (``racks.kafka_rack_path``);
    given, the rack tier counts Kafka's alignment (D7: a rackless member matches everything) instead
    of D6's locality, over every partition.
    """
    racks = racks or alignment is not None
    table = claim_table(scenario)
    members = table.members
    M = len(members)
    by_id = {m.id: m for m in scenario.members}
    member_rack = tuple(by_id[m].rack for m in members)
    topics = table.index.topics
    counts = np.fromiter((table.topics[t] for t in topics), dtype=np.int64, count=len(topics))
    offsets = np.fromiter((table.offset[t] for t in topics), dtype=np.int64, count=len(topics))
    P = int(counts.sum()) if topics else 0
    topic_meta = {t.name: t for t in scenario.topics}

    hub_index: dict[tuple, int] = {}
    hub_subs: list[np.ndarray] = []
    hub_racks: list[frozenset[str] | None] = []
    hub_of_pid = np.empty(P, dtype=np.int64)
    rack_informed = 0

    def hub_for(subs: np.ndarray, rs: frozenset[str] | None) -> int:
        key = (subs.tobytes(), None if rs is None else tuple(sorted(rs)))
        h = hub_index.get(key)
        if h is None:
            h = hub_index[key] = len(hub_subs)
            hub_subs.append(subs)
            hub_racks.append(rs)
        return h

    for ti, t in enumerate(topics):
        subs = np.flatnonzero(table.subscribed_matrix[ti]).astype(np.int64)
        start, n = int(offsets[ti]), int(counts[ti])
        rack_lists = topic_meta[t].racks if racks else None
        if rack_lists is None:
            hub_of_pid[start : start + n] = hub_for(subs, None)
        else:
            rack_informed += n
            hub_of_pid[start : start + n] = [hub_for(subs, frozenset(rl)) for rl in rack_lists]

    def is_local(m: int, rs: frozenset[str] | None) -> bool:
        if alignment is not None:
            return aligned(alignment.get(members[m]), rs)
        r = member_rack[m]
        return rs is not None and r is not None and r in rs

    # classes: one stable sort of all partitions by (hub, claimant); pids stay ascending inside
    key = hub_of_pid * (M + 1) + (table.retainer_pid + 1)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    cuts = np.flatnonzero(np.diff(sorted_key)) + 1
    class_start = np.concatenate([[0], cuts]).astype(np.int64) if P else np.zeros(0, dtype=np.int64)
    class_end = np.concatenate([cuts, [P]]).astype(np.int64) if P else np.zeros(0, dtype=np.int64)
    class_key = sorted_key[class_start]
    class_hub = class_key // (M + 1)
    class_claimant = class_key % (M + 1) - 1
    class_local = np.zeros(class_hub.size, dtype=bool)
    hubs = []
    for h, subs in enumerate(hub_subs):
        rs = hub_racks[h]
        local = np.array([is_local(int(m), rs) for m in subs], dtype=bool) if racks else np.zeros(subs.size, dtype=bool)
        hubs.append(Hub(subs, rs, local, 0))
    if racks:
        for c in np.flatnonzero(class_claimant >= 0).tolist():
            class_local[c] = is_local(int(class_claimant[c]), hub_racks[int(class_hub[c])])
    hub_size = np.bincount(hub_of_pid, minlength=len(hubs)) if P else np.zeros(len(hubs), dtype=np.int64)
    hubs = [Hub(hb.subscribers, hb.racks, hb.local, int(hub_size[h])) for h, hb in enumerate(hubs)]
    reach = np.zeros(M, dtype=np.int64)
    for hb in hubs:
        reach[hb.subscribers] += hb.size
    retainable = int(np.count_nonzero(table.retainer_pid >= 0))
    if alignment is not None:
        rack_informed = P  # D7 can hold for any partition (a rackless member matches it)
    return Aggregate(
        scenario=scenario,
        table=table,
        members=members,
        topics=topics,
        topic_offset=offsets,
        hubs=tuple(hubs),
        hub_of_pid=hub_of_pid,
        class_hub=class_hub,
        class_claimant=class_claimant,
        class_start=class_start,
        class_end=class_end,
        class_local=class_local,
        class_order=order,
        reach=reach,
        num_partitions=P,
        retainable=retainable,
        rack_informed=rack_informed,
        racks=racks,
        member_rack=member_rack,
        rack_first=alignment is not None,
    )


def aggregate_with(scenario: Scenario, racks: bool | str = False) -> Aggregate:
    """The aggregate an engine solves for its rack option: ``False`` none, ``True`` O3 (D6) after
    kept, ``"kafka"`` Kafka's rack-aware order (D7 alignment before kept) where its path applies
    (R48), and no rack tier where it does not."""
    if racks == "kafka":
        from .racks import kafka_rack_path

        alignment = kafka_rack_path(scenario)
        return aggregate(scenario, alignment=alignment) if alignment is not None else aggregate(scenario)
    return aggregate(scenario, racks=bool(racks))


@dataclass(frozen=True, eq=False)
class Expansion:
    """An expanded assignment in dense form: ``owner[pid]`` = member id index, plus its tiers."""

    owner: np.ndarray
    loads: np.ndarray
    objective: Objective


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + n)`` for each (s, n), vectorised."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(np.asarray(starts, dtype=np.int64), lengths) + np.arange(total, dtype=np.int64) - offs


def expand(agg: Aggregate, kept: Sequence[int] | np.ndarray, pool_hub: np.ndarray, pool_member: np.ndarray, pool_count: np.ndarray) -> Expansion:
    """Counts -> partitions (§4, deterministic).

    ``kept[c]``: partitions of class c staying with its claimant (0 for unclaimed classes);
    pool entries ``(pool_hub[i], pool_member[i], pool_count[i])``: member takes that many from
    the hub's pool. Each member first takes its own unkept claims from the pool (so expansion
    never lowers ``kept``), then, hub by hub, members in id order take the lowest remaining
    partitions.
    """
    M = agg.num_members
    kept = np.asarray(kept, dtype=np.int64)
    size = agg.class_size
    if kept.shape != size.shape or (kept < 0).any() or (kept > size).any() or (kept[agg.class_claimant < 0] != 0).any():
        raise ValueError("kept counts do not fit the classes")
    pool_hub = np.asarray(pool_hub, dtype=np.int64)
    pool_member = np.asarray(pool_member, dtype=np.int64)
    pool_count = np.asarray(pool_count, dtype=np.int64)
    owner = np.full(agg.num_partitions, NO_MEMBER, dtype=np.int64)
    # kept: the first kept[c] partitions of each class go to its claimant
    pos = _ranges(agg.class_start, kept)
    owner[agg.class_order[pos]] = np.repeat(agg.class_claimant, kept)
    # pool, first pass: a member takes back its own unkept claims
    class_key = agg.class_hub * (M + 1) + agg.class_claimant + 1
    want_key = pool_hub * (M + 1) + pool_member + 1
    c = np.searchsorted(class_key, want_key)
    c_ok = c < class_key.size
    match = np.zeros(pool_hub.size, dtype=bool)
    match[c_ok] = class_key[c[c_ok]] == want_key[c_ok]
    cm = c[match]
    own = np.minimum(pool_count[match], size[cm] - kept[cm])
    pos = _ranges(agg.class_start[cm] + kept[cm], own)
    owner[agg.class_order[pos]] = np.repeat(agg.class_claimant[cm], own)
    need = pool_count.copy()
    need[match] -= own
    # pool, second pass: per hub, members in id order take the lowest free partitions
    free = np.flatnonzero(owner == NO_MEMBER)
    free = free[np.argsort(agg.hub_of_pid[free], kind="stable")]
    order = np.lexsort((pool_member, pool_hub))
    takers = np.repeat(pool_member[order], need[order])
    if takers.size != free.size or not np.array_equal(np.repeat(pool_hub[order], need[order]), agg.hub_of_pid[free]):
        raise ValueError("pool counts do not match the hubs' pools")
    owner[free] = takers
    return Expansion(owner, *tiers(agg, owner))


def tiers(agg: Aggregate, owner: np.ndarray) -> tuple[np.ndarray, Objective]:
    """Loads and O1-O3 of a dense assignment (computed from the partitions, not from solver counts)."""
    M = agg.num_members
    loads = np.bincount(owner, minlength=M).astype(np.int64) if owner.size else np.zeros(M, dtype=np.int64)
    retainer = agg.retainer_by_pid()
    kept = int(np.count_nonzero((retainer >= 0) & (retainer == owner)))
    rack_local = None
    if agg.racks:
        local_keys = np.concatenate(
            [h * M + hub.subscribers[hub.local] for h, hub in enumerate(agg.hubs)] or [np.zeros(0, dtype=np.int64)]
        )
        rack_local = int(np.isin(agg.hub_of_pid * M + owner, local_keys).sum()) if owner.size else 0
    sum_squares = int((loads * loads).sum())
    max_load = int(loads.max()) if loads.size else 0
    return loads, Objective(sum_squares, max_load, kept, rack_local)


def to_assignment(agg: Aggregate, owner: np.ndarray) -> Assignment:
    """Dense owners -> Assignment, partitions sorted, every member present."""
    per_member: list[tuple[TopicPartition, ...]] = [() for _ in agg.members]
    if owner.size:
        order = np.argsort(owner, kind="stable")  # stable: each member's partitions stay sorted
        bounds = np.searchsorted(owner[order], np.arange(agg.num_members + 1))
        topic_of = np.searchsorted(agg.topic_offset, order, side="right") - 1
        part_of = order - agg.topic_offset[topic_of]
        topics = agg.topics
        with gc_paused():  # a million small tuples would trigger repeated full collections of the scenario
            tps = list(map(_make_tp, zip(map(topics.__getitem__, topic_of.tolist()), part_of.tolist())))
            b = bounds.tolist()
            per_member = [tuple(tps[b[m] : b[m + 1]]) for m in range(agg.num_members)]
    return Assignment({m: per_member[i] for i, m in enumerate(agg.members)})


def cooperative_round(scenario: Scenario, target: Assignment) -> Assignment:
    """O4: the round-1 assignment = target minus transferring partitions (D5), listed under ``revoking``.

    A partition is transferring when its target owner does not list it in ``owned`` and some other
    member does: each such member must revoke it first, so it is withheld this round. A partition
    its target owner already lists stays with it (a stale rival revokes its belief, nobody is
    handed anything: the cooperative-safety invariant, and Kafka's R34).
    """
    holders = claimants(scenario)
    owner_of = {tp: m for m, tps in target.assignment.items() for tp in tps}
    revoking: dict[str, list[TopicPartition]] = {}
    withheld: set[TopicPartition] = set()
    for tp, who in holders.items():
        new = owner_of.get(tp)
        others = [m for m in who if m != new]
        if others and new not in who:
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
    ix = agg.table.index
    owner = np.full(agg.num_partitions, NO_MEMBER, dtype=np.int64)
    for member, tps in assignment.assignment.items():
        m = ix.member_ids.get(member)
        if m is None:
            if tps:
                return None
            continue
        for tp in tps:
            pid = ix.partition_id(tp.topic, tp.partition)
            if pid is None:
                return None
            if not agg.table.subscribed_matrix[ix.topic_ids[tp.topic], m]:
                return None
            if owner[pid] != NO_MEMBER:
                return None
            owner[pid] = m
    if (owner == NO_MEMBER).any():
        return None
    return owner
