"""The sticky assignors' general path (heterogeneous subscriptions), Kafka-exact (KAFKA_SEMANTICS.md R26-R32).

``general_assign`` reads as Kafka's ``GeneralAssignmentBuilder.build()`` split into its steps:

    _intern                     R26  walk order of partitions, member order, potential consumers
    _prev_assignment            R27  raw claims of members below the max generation
    _assign_owned_partitions    R28  keep still-subscribed (and rack-matching) claims
    _initial_fill               R29  least-loaded subscriber per unassigned partition, rack pass first
    _set_aside_fixed            R31  topics with < 2 potential consumers, members that cannot change
    _balance                    R30, R32  the reassignment loop, ping-pong avoidance, score revert

Every iteration order that decides Kafka's answer is reproduced: the walk order (topic by number of
potential consumers, then name), the tree of members by (count, ``String.compareTo``), the
``HashSet<TopicPartition>`` order of ``PartitionMovements``, the first pass over newly assigned
partitions when nothing had to be revoked, and the list order of each member's answer (kept claims
in claim order, then grants and moves in the order they happened, R24).

Kafka hazards are reproduced, not repaired (§10): ``prevAssignment`` hands a partition back to a
lower-generation member without checking its subscription (K3); when that member was set aside as
fixed the lookup of its size fails, raised as ``AssignorFailure(kafka_exception=
"java.lang.NullPointerException")``. Kept claims on partition numbers past a topic's count (K1) or
claimed twice break the sorted merge Kafka uses; such inputs run ``general_reference`` (the literal
transcription) instead of the integer fast path.

Speed: integer ids, one heap per class of members with equal subscriptions, an incremental
``isBalanced`` (``general_state.BalanceTracker``), copy-on-write snapshots for the revert.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Mapping, Sequence

from ..errors import AssignorFailure
from ..javaorder import java_string_key
from ..model import DEFAULT_GENERATION, TopicPartition
from .general_reference import NPE, NO_SUCH_ELEMENT, reference_run
from .general_state import BalanceTracker, MemberHeaps, Movements, NeedsReference, balance_score
from .range import gc_paused
from .sticky_types import PriorOwners, StickyInput, StickyResult

__all__ = ["general_assign", "general_run", "GeneralRun"]


@dataclass(frozen=True)
class GeneralRun:
    """``general_assign``'s answer plus what Kafka's builder knows afterwards.

    ``movements``: per topic, the net (from, to) member pairs of this run's balancing moves, Kafka's
    ``PartitionMovements`` (``isSticky()`` is false when a topic has both (a, b) and (b, a), R33).
    Kafka does not clear them on a revert, and neither does this.
    ``reverted``: the balance-score check undid the balancing (R32).
    ``engine``: ``"fast"``, or ``"reference"`` when the input needed the transcription.
    """

    result: StickyResult
    movements: Mapping[str, frozenset[tuple[str, str]]]
    revocation_required: bool
    initializing: bool
    reverted: bool
    engine: str

    @property
    def is_sticky(self) -> bool:
        """Kafka's ``isSticky()``: no topic's partitions moved both ways between one pair of members."""
        return not any((b, a) in pairs for pairs in self.movements.values() for a, b in pairs)


def general_assign(inp: StickyInput, prior: PriorOwners) -> StickyResult:
    """``GeneralAssignmentBuilder.build()`` (R26-R32); ``partitions_transferring_ownership`` is None (R34)."""
    return general_run(inp, prior).result


def general_run(inp: StickyInput, prior: PriorOwners) -> GeneralRun:
    try:
        return _run_fast(inp, prior)
    except NeedsReference:
        ref = reference_run(inp, prior)
        return GeneralRun(ref.result, ref.movements, ref.revocation_required, ref.initializing, ref.reverted,
                          "reference")


# ------------------------------------------------------------------------------------------
# The steps


@dataclass
class _Group:
    """Dense ids for one call (R26). Partition ids are positions in Kafka's walk order."""

    members: tuple[str, ...]
    rank: list[int]
    member_of_rank: list[int]
    topic_names: list[str]
    topic_base: list[int]
    topic_count: list[int]
    topic_of: list[int]
    base_by_name: dict[str, int]
    count_by_name: dict[str, int]
    potential_count: list[int]
    subscribed: list[list[int]]
    max_assignment: list[int]
    num_partitions: int
    consumer_rack: list[str | None]
    partition_racks: list[frozenset[str]] | None

    def pid(self, tp: Sequence) -> int | None:
        """A claim's partition id; None for a topic outside ``partitions_per_topic``; K1 claims need the transcription."""
        base = self.base_by_name.get(tp[0])
        if base is None:
            return None
        p = tp[1]
        if not 0 <= p < self.count_by_name[tp[0]]:
            raise NeedsReference(f"claim on {tp[0]}-{p}, past the partition count")
        return base + p


def _intern(inp: StickyInput) -> _Group:
    """R26: ``topic2AllPotentialConsumers`` (a topic listed twice counts twice, as in Kafka's lists),
    topics by (potential consumers, ``String.compareTo``), partitions by number within a topic."""
    ppt = inp.partitions_per_topic
    members = tuple(inp.members)
    m = len(members)
    by_rank = sorted(range(m), key=lambda i: java_string_key(members[i]))
    rank = [0] * m
    for r, i in enumerate(by_rank):
        rank[i] = r
    potential_lists = [[t for t in inp.subscriptions.get(mem, ()) if t in ppt] for mem in members]
    npot: dict[str, int] = dict.fromkeys(ppt, 0)
    for lst in potential_lists:
        for t in lst:
            npot[t] += 1
    names = sorted(ppt, key=lambda t: (npot[t], java_string_key(t)))
    tid = {t: k for k, t in enumerate(names)}
    base, count, topic_of = [], [], []
    start = 0
    for k, t in enumerate(names):
        n = ppt[t]
        base.append(start)
        count.append(n)
        topic_of.extend([k] * n)
        start += n
    total = start
    max_assignment = [
        total if len(lst) == len(ppt) else sum(ppt[t] for t in lst) for lst in potential_lists
    ]
    subscribed = [sorted({tid[t] for t in lst}) for lst in potential_lists]
    rack_aware = inp.rack_aware
    consumer_rack = [(inp.member_rack.get(mem) or None) if rack_aware else None for mem in members]
    partition_racks = None
    if rack_aware:
        partition_racks = []
        for t in names:
            racks = inp.partition_racks.get(t, ())
            partition_racks.extend(frozenset(racks[p]) if p < len(racks) else frozenset() for p in range(ppt[t]))
    return _Group(
        members=members,
        rank=rank,
        member_of_rank=by_rank,
        topic_names=names,
        topic_base=base,
        topic_count=count,
        topic_of=topic_of,
        base_by_name={t: base[k] for k, t in enumerate(names)},
        count_by_name=dict(ppt),
        potential_count=[npot[t] for t in names],
        subscribed=subscribed,
        max_assignment=max_assignment,
        num_partitions=total,
        consumer_rack=consumer_rack,
        partition_racks=partition_racks,
    )


def _prev_assignment(inp: StickyInput, prior: PriorOwners, g: _Group) -> dict[int, int]:
    """R27 ``prepopulateCurrentAssignments``: partition -> member, from the raw claims (as decoded, not
    filtered by subscription) of every member whose generation is below ``maxGeneration``; absent
    counts as -1; the highest generation wins, the first seen on ties. Claims that are not real
    partitions can never be looked up, so they are skipped."""
    max_generation = prior.max_generation
    prev: dict[int, tuple[int, int]] = {}
    base_by_name, count_by_name = g.base_by_name, g.count_by_name
    for i, mem in enumerate(g.members):
        md = inp.member_data.get(mem)
        if md is None or not md.partitions:
            continue
        gen = DEFAULT_GENERATION if md.generation is None else md.generation
        if not gen < max_generation:
            continue
        for tp in md.partitions:
            base = base_by_name.get(tp[0])
            if base is None or not 0 <= tp[1] < count_by_name[tp[0]]:
                continue
            pid = base + tp[1]
            seen = prev.get(pid)
            if seen is None or gen > seen[1]:
                prev[pid] = (i, gen)
    return {pid: who for pid, (who, _gen) in prev.items()}


@dataclass
class _Assignment:
    lists: list[list[int]]
    owner: list[int]
    counts: list[int]
    revocation_required: bool


def _assign_owned_partitions(inp: StickyInput, prior: PriorOwners, g: _Group) -> _Assignment:
    """R28 ``assignOwnedPartitions``: keep each kept claim (R5-R10 already ran) whose topic the member
    still subscribes to and, in rack mode, whose replicas include the member's rack; dropping one for
    either reason sets ``revocationRequired``."""
    m = len(g.members)
    owner = [-1] * g.num_partitions
    claimed = bytearray(g.num_partitions)
    lists: list[list[int]] = []
    revocation_required = False
    racks = g.partition_racks
    owned = prior.consumer_to_owned_partitions
    for i, mem in enumerate(g.members):
        kept: list[int] = []
        lists.append(kept)
        claims = owned.get(mem, ())
        if not claims:
            continue
        subscription = set(inp.subscriptions.get(mem, ()))
        rack = g.consumer_rack[i]
        for tp in claims:
            pid = g.pid(tp)
            if pid is None:
                continue
            if claimed[pid]:
                raise NeedsReference(f"{tp[0]}-{tp[1]} kept by two members")
            claimed[pid] = 1
            if tp[0] not in subscription or (rack is not None and rack not in racks[pid]):
                revocation_required = True
                continue
            kept.append(pid)
            owner[pid] = i
    return _Assignment(lists, owner, [len(lst) for lst in lists], revocation_required)


def _member_classes(g: _Group) -> tuple[list[int], int, list[list[int]], list[str | None]]:
    """Members with the same subscribed topics (and rack) form a class; per topic, the classes subscribing."""
    class_of: dict[tuple, int] = {}
    member_class = []
    class_rack: list[str | None] = []
    topic_classes: list[list[int]] = [[] for _ in g.topic_names]
    for i, subs in enumerate(g.subscribed):
        key = (tuple(subs), g.consumer_rack[i])
        c = class_of.get(key)
        if c is None:
            c = class_of[key] = len(class_of)
            class_rack.append(g.consumer_rack[i])
            for t in subs:
                topic_classes[t].append(c)
        member_class.append(c)
    return member_class, len(class_of), topic_classes, class_rack


def _initial_fill(g: _Group, a: _Assignment, heaps: MemberHeaps, topic_classes: list[list[int]],
                  class_rack: list[str | None], unassigned: list[int]) -> None:
    """R29 ``maybeAssign``: each unassigned partition, in walk order, goes to the first member of the tree
    that subscribes to its topic; in rack mode a first pass only accepts members whose rack holds a
    replica (members without a rack always match), a second pass places the rest."""
    lists, owner, topic_of = a.lists, a.owner, g.topic_of
    racks = g.partition_racks
    remaining = unassigned
    if racks is not None and any(r is not None for r in g.consumer_rack):
        remaining = []
        for pid in unassigned:
            classes = topic_classes[topic_of[pid]]
            if not classes:
                remaining.append(pid)
                continue
            replicas = racks[pid]
            best = heaps.least(c for c in classes if class_rack[c] is None or class_rack[c] in replicas)
            if best < 0:
                remaining.append(pid)
                continue
            i = heaps.grant_top(best)
            lists[i].append(pid)
            owner[pid] = i
    top, grant = heaps.top, heaps.grant_top
    for pid in remaining:
        classes = topic_classes[topic_of[pid]]
        if len(classes) == 1:
            best = top(classes[0])
        elif classes:
            best = heaps.least(classes)
        else:
            continue
        i = grant(best)
        lists[i].append(pid)
        owner[pid] = i
    counts = a.counts
    for i, lst in enumerate(lists):
        counts[i] = len(lst)


def _set_aside_fixed(g: _Group, a: _Assignment, heaps: MemberHeaps) -> list[int]:
    """R31: a member is fixed when it holds as many partitions as it could and none of a topic with two or
    more potential consumers; it leaves the tree. Returns the members that stay."""
    reassignable_topic = [n >= 2 for n in g.potential_count]
    topic_of = g.topic_of
    active = []
    for i in range(len(g.members)):
        if a.counts[i] < g.max_assignment[i] or any(reassignable_topic[topic_of[pid]] for pid in a.lists[i]):
            active.append(i)
            continue
        heaps.fixed[i] = 1
        if any(reassignable_topic[t] for t in g.subscribed[i]):
            # unreachable from well-formed input: Kafka would dereference this member's missing list
            raise NeedsReference("a fixed member subscribes to a reassignable topic")
    return active


def _walk(g: _Group, pids: Sequence[int] | None) -> list[int] | chain:
    """Reassignable partitions in walk order (``sortedAllPartitions`` or ``unassignedPartitions`` minus fixed topics)."""
    reassignable = [n >= 2 for n in g.potential_count]
    if pids is None:
        return chain.from_iterable(
            range(g.topic_base[t], g.topic_base[t] + g.topic_count[t]) for t in range(len(g.topic_names)) if reassignable[t]
        )
    topic_of = g.topic_of
    return [pid for pid in pids if reassignable[topic_of[pid]]]


class _Balancer:
    """R30/R32 ``balance()`` after the fill: the reassignment loop with copy-on-write snapshots for the revert."""

    def __init__(self, g: _Group, a: _Assignment, heaps: MemberHeaps, topic_classes: list[list[int]],
                 active: list[int], prev: dict[int, int]) -> None:
        self.g, self.a, self.heaps, self.topic_classes, self.prev = g, a, heaps, topic_classes, prev
        self.active = active
        self.movements = Movements(g.topic_of, g.topic_names, g.topic_base)
        self.tracker = BalanceTracker(active, a.counts, g.max_assignment, g.subscribed, a.lists, g.topic_of,
                                      len(g.topic_names))
        self.snapshot: dict[int, list[int]] = {}

    def perform_reassignments(self, reassignable) -> bool:
        """``performReassignments``: walk until balanced; repeat while a walk moved something."""
        performed = False
        g, a, heaps, prev, tracker = self.g, self.a, self.heaps, self.prev, self.tracker
        owner, counts, topic_of, topic_classes, fixed = a.owner, a.counts, g.topic_of, self.topic_classes, heaps.fixed
        m = heaps.m
        reassignable = list(reassignable) if not isinstance(reassignable, list) else reassignable
        while True:
            modified = False
            for pid in reassignable:
                if tracker.is_balanced():
                    break
                c = owner[pid]
                p = prev.get(pid)
                if p is not None:
                    if fixed[p]:
                        raise AssignorFailure(
                            f"prevAssignment names {g.members[p]!r} for {g.topic_names[topic_of[pid]]}-"
                            f"{pid - g.topic_base[topic_of[pid]]}, but that member was set aside as fixed (R31, K3)",
                            kafka_exception=NPE,
                        )
                    if counts[c] > counts[p] + 1:
                        self._reassign(pid, p)
                        performed = modified = True
                        continue
                best = heaps.least(topic_classes[topic_of[pid]])
                if best >= 0 and counts[c] > best // m + 1:
                    self._reassign(pid, heaps.member(best))
                    performed = modified = True
            if not modified:
                return performed

    def _reassign(self, pid: int, new: int) -> None:
        """``reassignPartition`` + ``processPartitionMovement``."""
        a = self.a
        actual = self.movements.actual_partition_to_be_moved(pid, a.owner[pid], new)
        old = a.owner[actual]
        if old == new or self.heaps.fixed[old] or old < 0:
            raise NeedsReference("a move between inconsistent owners")
        self.movements.move(actual, old, new)
        snap = self.snapshot
        if old not in snap:
            snap[old] = a.lists[old][:]
        if new not in snap:
            snap[new] = a.lists[new][:]
        a.lists[old].remove(actual)
        a.lists[new].append(actual)
        a.owner[actual] = new
        self.tracker.moved(actual, old, new)
        self.heaps.changed(old, -1)
        self.heaps.changed(new, +1)

    def revert_if_not_better(self) -> bool:
        """Keep the balancing only if the balance score strictly improved (R32)."""
        counts = self.a.counts
        before = [len(self.snapshot[i]) if i in self.snapshot else counts[i] for i in self.active]
        if balance_score(counts[i] for i in self.active) < balance_score(before):
            return False
        for i, lst in self.snapshot.items():
            self.a.lists[i] = lst
        return True


def _balance(g: _Group, a: _Assignment, heaps: MemberHeaps, topic_classes: list[list[int]], active: list[int],
             prev: dict[int, int], unassigned: list[int], initializing: bool) -> tuple[bool, Movements]:
    """R32 ``balance()`` after the fill and the set-asides: new partitions first when nothing had to be
    revoked (those moves are never reverted on their own), then every reassignable partition; revert
    to the post-fill state unless built from scratch or the score strictly improved."""
    b = _Balancer(g, a, heaps, topic_classes, active, prev)
    if not active:
        if any(n >= 2 and c > 0 for n, c in zip(g.potential_count, g.topic_count)):
            raise NeedsReference("no member left in the tree")  # Kafka: TreeSet.first() on an empty set
        return False, b.movements
    if not a.revocation_required:
        b.perform_reassignments(_walk(g, unassigned))
    performed = b.perform_reassignments(_walk(g, None))
    reverted = False
    if not initializing and performed:
        reverted = b.revert_if_not_better()
    return reverted, b.movements


def _run_fast(inp: StickyInput, prior: PriorOwners) -> GeneralRun:
    if not inp.members:
        raise AssignorFailure("general path with no members", kafka_exception=NO_SUCH_ELEMENT)
    with gc_paused():
        g = _intern(inp)
        prev = _prev_assignment(inp, prior, g)
        a = _assign_owned_partitions(inp, prior, g)
        owner = a.owner
        unassigned = [pid for pid in range(g.num_partitions) if owner[pid] < 0]
        initializing = not any(a.counts)
        member_class, num_classes, topic_classes, class_rack = _member_classes(g)
        heaps = MemberHeaps(len(g.members), g.rank, g.member_of_rank, member_class, num_classes, a.counts)
        _initial_fill(g, a, heaps, topic_classes, class_rack, unassigned)
        active = _set_aside_fixed(g, a, heaps)
        reverted, movements = _balance(g, a, heaps, topic_classes, active, prev, unassigned, initializing)
        result = StickyResult(assignment=_to_partitions(g, a.lists), partitions_transferring_ownership=None)
    return GeneralRun(
        result=result,
        movements=movements.pairs_by_topic(g.members),
        revocation_required=a.revocation_required,
        initializing=initializing,
        reverted=reverted,
        engine="fast",
    )


def _to_partitions(g: _Group, lists: list[list[int]]) -> dict[str, tuple[TopicPartition, ...]]:
    """Back from ids to ``TopicPartition`` in one place, each member's list in Kafka's order (R24)."""
    tps: list[TopicPartition] = []
    make = TopicPartition._make
    for t, name in enumerate(g.topic_names):
        tps.extend(map(make, zip([name] * g.topic_count[t], range(g.topic_count[t]))))
    return {mem: tuple(map(tps.__getitem__, lists[i])) for i, mem in enumerate(g.members)}
