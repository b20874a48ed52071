"""RangeAssignor (docs/rules.md R41, R43; KIP-881 rack-aware range R44-R47).

``assign_range`` reads as Kafka's ``RangeAssignor.assignPartitions``:

    member_info_order        R41  static members by instance id first, then member ids
    partitions_per_topic_in_hashmap_order  0.4  subscribed, existing, non-empty topics, in Java HashMap order
    topic_subscribers             each topic's subscribers in R41 order
    _assign_ranges_fast      R43  per topic, the first P mod n subscribers get one extra partition
    _assign_with_racks       R44-R47  rack matching first, then plain ranges, lists sorted

The plain path never looks at a partition twice: topics with the same subscribers and the same
partition count share one object matrix of ``TopicPartition`` values, and each member's share is
one slice of it (a range is a column band of the matrix), so a million partitions cost a million
tuples and a few thousand slices. The rack path follows Kafka's two phases partition by partition.

Helpers shared with ``roundrobin`` (``member_info_order``, ``partitions_per_topic_in_hashmap_order``,
``topic_subscribers``, ``topic_partition_block``) live here because range is the assignor Kafka
built them for (``AbstractPartitionAssignor``).
"""

from __future__ import annotations

from functools import partial
from itertools import chain, repeat
from typing import Callable, Mapping, Sequence

import numpy as np

from .._perf import gc_paused

from ..javaorder import hashmap_capacity, hashmap_order, java_string_hash, java_string_key, spread
from ..model import Assignment, Topic, TopicPartition
from .base import GroupSubscription, Subscription
from .racks import use_rack_aware_assignment

__all__ = [
    "RANGE_ASSIGNOR_NAME",
    "assign_range",
    "member_info_order",
    "partitions_per_topic_in_hashmap_order",
    "topic_subscribers",
    "topic_partition_block",
]

RANGE_ASSIGNOR_NAME = "range"

_make_tp = partial(tuple.__new__, TopicPartition)  # C-level constructor: ~30% faster than _make


def topic_partition_block(topics: Sequence[str], num_partitions: int) -> np.ndarray:
    """A ``len(topics) x num_partitions`` object matrix of ``TopicPartition`` (row = topic, column = partition)."""
    flat = chain.from_iterable(map(_make_tp, zip(repeat(t, num_partitions), range(num_partitions))) for t in topics)
    return np.fromiter(flat, dtype=object, count=len(topics) * num_partitions).reshape(len(topics), num_partitions)


# ------------------------------------------------------------------------------------------
# AbstractPartitionAssignor: member order and partitionsPerTopic


def _member_key(s: Subscription) -> tuple[int, bytes]:
    if s.instance_id is not None:
        return (0, java_string_key(s.instance_id))
    return (1, java_string_key(s.member_id))


def member_info_order(members: Sequence[Subscription]) -> list[int]:
    """Indexes of ``members`` sorted as ``AbstractPartitionAssignor.MemberInfo.compareTo`` (R41).

    Members with a ``group.instance.id`` come first, by instance id; then the others by member id,
    both in Java ``String.compareTo`` order. Kafka sorts a list filled from the leader's
    ``HashMap<memberId, Subscription>`` with a stable sort, so two members sharing an instance id
    (the broker fences that, but a scenario can state it) keep Java ``HashMap`` order.
    """
    keys = [_member_key(s) for s in members]
    base: list[int] = list(range(len(members)))
    instance_ids = [s.instance_id for s in members if s.instance_id is not None]
    if len(set(instance_ids)) != len(instance_ids):
        base = hashmap_order(base, lambda i: java_string_hash(members[i].member_id))
    return sorted(base, key=keys.__getitem__)


def _subscription_groups(members: Sequence[Subscription]) -> list[tuple[frozenset[str], list[int]]]:
    """Members grouped by subscribed topic set (Kafka's ``topics().contains`` is set semantics).

    Grouped by object identity, then by tuple value, then by set, so that a big group whose
    members share one subscription costs one set construction, not one per member.
    """
    by_identity: dict[int, list[int]] = {}
    for i, s in enumerate(members):
        by_identity.setdefault(id(s.topics), []).append(i)
    by_value: dict[tuple[str, ...], list[int]] = {}
    for indexes in by_identity.values():
        by_value.setdefault(tuple(members[indexes[0]].topics), []).extend(indexes)
    by_set: dict[frozenset[str], list[int]] = {}
    for topics, indexes in by_value.items():
        by_set.setdefault(frozenset(topics), []).extend(indexes)
    return [(topic_set, sorted(indexes)) for topic_set, indexes in by_set.items()]


def partitions_per_topic_in_hashmap_order(group: GroupSubscription) -> dict[str, int]:
    """``AbstractPartitionAssignor.assign``'s ``partitionsPerTopic``, in its Java ``HashMap`` iteration order (0.4).

    Keys: topics in the union of all subscriptions that exist in the leader's metadata with at least
    one partition. The map is filled by iterating the ``HashSet`` of subscribed topics, itself filled
    member by member (leader ``HashMap`` order) and topic by topic; Range's output lists follow this
    order (R43), so it is reproduced: set buckets first (insertion order inside a bucket), then map
    buckets (set order inside a bucket).
    """
    groups = _subscription_groups(group.members)
    subscribed: set[str] = set().union(*(topics for topics, _ in groups)) if groups else set()
    existing = [t for t in subscribed if (meta := group.metadata.get(t)) is not None and meta.partitions > 0]
    if not existing:
        return {}
    set_capacity = hashmap_capacity(len(subscribed))
    set_bucket = {t: spread(java_string_hash(t)) & (set_capacity - 1) for t in existing}
    per_bucket: dict[int, int] = {}
    for b in set_bucket.values():
        per_bucket[b] = per_bucket.get(b, 0) + 1
    colliding = [t for t in existing if per_bucket[set_bucket[t]] > 1]
    first_insertion = _first_insertion(group, groups, colliding) if colliding else {}
    set_order = sorted(existing, key=lambda t: (set_bucket[t], first_insertion.get(t, ())))
    ordered = hashmap_order(set_order, capacity=hashmap_capacity(len(existing)))
    return {t: group.metadata[t].partitions for t in ordered}


def _first_insertion(
    group: GroupSubscription, groups: Sequence[tuple[frozenset[str], list[int]]], topics: Sequence[str]
) -> dict[str, tuple[int, int, int]]:
    """When ``allSubscribedTopics.addAll`` first meets each of ``topics``: (member's place, topic's place).

    Members are met in the leader's ``HashMap`` order (bucket of the member id, then JoinGroup order),
    each member's topics in its subscription's order. Only topics sharing a set bucket need this.
    """
    capacity = hashmap_capacity(len(group.members))
    wanted = set(topics)
    out: dict[str, tuple[int, int, int]] = {}
    for topic_set, indexes in groups:
        if wanted.isdisjoint(topic_set):
            continue
        first = min(indexes, key=lambda i: (spread(java_string_hash(group.members[i].member_id)) & (capacity - 1), i))
        bucket = spread(java_string_hash(group.members[first].member_id)) & (capacity - 1)
        for place, t in enumerate(group.members[first].topics):
            key = (bucket, first, place)
            if t in wanted and (t not in out or key < out[t]):
                out[t] = key
    return out


def topic_subscribers(
    group: GroupSubscription, topics: Sequence[str], order: Sequence[int]
) -> dict[str, tuple[int, ...]]:
    """For each topic, the indexes of its subscribers in ``order`` (R41 order); shared tuples for equal sets."""
    rank = [0] * len(group.members)
    for position, i in enumerate(order):
        rank[i] = position
    groups = _subscription_groups(group.members)
    wanted = set(topics)
    groups_of_topic: dict[str, list[int]] = {t: [] for t in topics}
    for g, (topic_set, _) in enumerate(groups):
        for t in topic_set:
            if t in wanted:
                groups_of_topic[t].append(g)
    cache: dict[tuple[int, ...], tuple[int, ...]] = {}
    out: dict[str, tuple[int, ...]] = {}
    for t in topics:
        key = tuple(groups_of_topic[t])
        subs = cache.get(key)
        if subs is None:
            subs = tuple(sorted(chain.from_iterable(groups[g][1] for g in key), key=rank.__getitem__))
            cache[key] = subs
        out[t] = subs
    return out


# ------------------------------------------------------------------------------------------
# RangeAssignor


def assign_range(group: GroupSubscription) -> Assignment:
    """``RangeAssignor.assignPartitions``: per-topic ranges over R41-ordered subscribers (R43).

    Rack-aware (R44-R47) when any topic needs it: its subscribers have racks that meet its replica
    racks and not every partition is on every rack; then the member lists come out sorted by
    (topic, partition), otherwise in topic iteration order (``partitions_per_topic_in_hashmap_order``).
    An empty group gets an empty assignment (R14).
    """
    members = group.members
    if not members:
        return Assignment({})
    order = member_info_order(members)
    counts = partitions_per_topic_in_hashmap_order(group)
    topics = list(counts)
    subscribers = topic_subscribers(group, topics, order)
    rack_of = [s.rack or None for s in members]
    racks_of_subscribers: dict[int, list[str]] = {}
    needs_rack = {}
    for t in topics:
        meta = group.metadata[t]
        if meta.racks is None:
            needs_rack[t] = False
            continue
        subs = subscribers[t]
        consumer_racks = racks_of_subscribers.get(id(subs))
        if consumer_racks is None:
            consumer_racks = racks_of_subscribers[id(subs)] = sorted({rack_of[c] for c in subs if rack_of[c]})
        needs_rack[t] = _needs_rack_aware(meta, consumer_racks)
    with gc_paused():
        if any(needs_rack.values()):
            lists = _assign_with_racks(group, topics, counts, subscribers, rack_of, needs_rack)
        else:
            lists = _assign_ranges_fast(len(members), topics, counts, subscribers)
        return Assignment({s.member_id: tuple(lists[i]) for i, s in enumerate(members)})


def _needs_rack_aware(topic: Topic, consumer_racks: Sequence[str]) -> bool:
    """``TopicAssignmentState.needsRackAwareAssignment``: R44 for one topic, given its subscribers' racks."""
    if not consumer_racks or topic.racks is None:
        return False
    return use_rack_aware_assignment(consumer_racks, topic.racks)


def _range_bounds(num_partitions: int, num_subscribers: int) -> list[tuple[int, int]]:
    """R43: subscriber k of n gets [k*q + min(k, r), ...) with q = P div n, r = P mod n; only non-empty ranges."""
    q, r = divmod(num_partitions, num_subscribers)
    return [(k * q + min(k, r), (k + 1) * q + min(k + 1, r)) for k in range(min(num_subscribers, num_partitions))]


def _assign_ranges_fast(
    num_members: int, topics: Sequence[str], counts: Mapping[str, int], subscribers: Mapping[str, tuple[int, ...]]
) -> list[list[TopicPartition]]:
    """Plain range assignment, lists in topic iteration order (R43).

    Topics with the same subscribers and partition count form a block: one matrix, and each
    subscriber's share of a run of consecutive topics (in iteration order) of that block is one
    column band of it. Consecutive runs keep every member's list in topic iteration order.
    """
    block_of: dict[tuple[int, int], int] = {}
    block_topics: list[list[str]] = []
    row_of: dict[str, int] = {}
    topic_block: list[int] = []
    for t in topics:
        key = (id(subscribers[t]), counts[t])
        b = block_of.get(key)
        if b is None:
            b = block_of[key] = len(block_topics)
            block_topics.append([])
        row_of[t] = len(block_topics[b])
        block_topics[b].append(t)
        topic_block.append(b)
    matrices = [topic_partition_block(ts, counts[ts[0]]) for ts in block_topics]
    lists: list[list[TopicPartition]] = [[] for _ in range(num_members)]
    start = 0
    while start < len(topics):
        b = topic_block[start]
        end = start
        while end < len(topics) and topic_block[end] == b:
            end += 1
        first_row, last_row = row_of[topics[start]], row_of[topics[end - 1]] + 1
        subs = subscribers[topics[start]]
        matrix = matrices[b]
        for k, (lo, hi) in enumerate(_range_bounds(matrix.shape[1], len(subs))):
            lists[subs[k]].extend(matrix[first_row:last_row, lo:hi].ravel().tolist())
        start = end
    return lists


# ------------------------------------------------------------------------------------------
# Rack-aware range (KIP-881)


class _TopicAssignmentState:
    """``RangeAssignor.TopicAssignmentState``: one topic's quota bookkeeping during one call (R45, R46).

    Mutable on purpose and private to one ``assign_range`` call: Kafka's two phases update the same
    counters, and the order of updates is the algorithm.
    """

    def __init__(self, topic: Topic, subscribers: tuple[int, ...], rack_of: Sequence[str | None], needs_rack: bool):
        self.topic = topic.name
        self.num_partitions = topic.partitions
        self.consumers = subscribers
        self.rack_of = rack_of
        self.needs_rack_aware_assignment = needs_rack
        has_consumer_rack = any(rack_of[c] for c in subscribers)
        # Kafka builds partitionRacks only when some subscriber has a rack; its size keys phase 1's grouping.
        if has_consumer_rack:
            racks = topic.racks or tuple(() for _ in range(topic.partitions))
            self.partition_racks: tuple[frozenset[str], ...] = tuple(frozenset(r) for r in racks)
        else:
            self.partition_racks = ()
        self.assigned = bytearray(topic.partitions)
        self.num_assigned = {c: 0 for c in subscribers}
        n = len(subscribers)
        self.num_partitions_per_consumer = topic.partitions // n if n else 0
        self.remaining_consumers_with_extra_partition = topic.partitions % n if n else 0
        self.lowest_unassigned = 0
        self.num_unassigned = topic.partitions
        self._rack_lists: dict[str, list[int]] = {}
        self._rack_cursor: dict[str, int] = {}

    def racks_match(self, consumer: int, partition: int) -> bool:
        rack = self.rack_of[consumer]
        return rack is None or (bool(self.partition_racks) and rack in self.partition_racks[partition])

    def max_assignable(self, consumer: int) -> int:
        extra = 1 if self.remaining_consumers_with_extra_partition > 0 else 0
        return max(0, self.num_partitions_per_consumer + extra - self.num_assigned[consumer])

    def on_assigned(self, consumer: int, partitions: Sequence[int]) -> None:
        self.num_assigned[consumer] += len(partitions)
        if self.num_assigned[consumer] > self.num_partitions_per_consumer:
            self.remaining_consumers_with_extra_partition -= 1
        for p in partitions:
            self.assigned[p] = 1
        self.num_unassigned -= len(partitions)

    def lowest_unassigned_partitions(self, limit: int) -> list[int]:
        """The first ``limit`` unassigned partitions in partition order (the ``LinkedHashSet`` stream)."""
        out: list[int] = []
        p = self.lowest_unassigned
        while p < self.num_partitions and self.assigned[p]:
            p += 1
        self.lowest_unassigned = p
        while p < self.num_partitions and len(out) < limit:
            if not self.assigned[p]:
                out.append(p)
            p += 1
        return out

    def lowest_unassigned_on_rack(self, rack: str, limit: int) -> list[int]:
        """The first ``limit`` unassigned partitions with a replica on ``rack``.

        Per rack, a cursor into the partitions on that rack: everything before it is assigned,
        because each grant takes the lowest matching partitions and assignments are never undone.
        """
        candidates = self._rack_lists.get(rack)
        if candidates is None:
            candidates = self._rack_lists[rack] = [p for p, racks in enumerate(self.partition_racks) if rack in racks]
            self._rack_cursor[rack] = 0
        out: list[int] = []
        i = self._rack_cursor[rack]
        while i < len(candidates) and len(out) < limit:
            if not self.assigned[candidates[i]]:
                out.append(candidates[i])
            i += 1
        self._rack_cursor[rack] = i
        return out


def _assign_with_racks(
    group: GroupSubscription,
    topics: Sequence[str],
    counts: Mapping[str, int],
    subscribers: Mapping[str, tuple[int, ...]],
    rack_of: Sequence[str | None],
    needs_rack: Mapping[str, bool],
) -> list[list[TopicPartition]]:
    """Rack matching (R45, R46), then plain ranges for what is left (R47); lists sorted by (topic, partition)."""
    states = [_TopicAssignmentState(group.metadata[t], subscribers[t], rack_of, needs_rack[t]) for t in topics]
    granted: list[list[tuple[str, int]]] = [[] for _ in group.members]

    def assign(consumer: int, partitions: list[int], state: _TopicAssignmentState) -> None:
        granted[consumer].extend(zip(repeat(state.topic), partitions))
        state.on_assigned(consumer, partitions)

    # Phase 1 (R45): topics grouped by subscriber list, then by the size of their partition-rack map.
    by_consumers: dict[tuple[int, ...], dict[int, list[_TopicAssignmentState]]] = {}
    for state in states:
        by_consumers.setdefault(state.consumers, {}).setdefault(len(state.partition_racks), []).append(state)
    for consumers, by_size in by_consumers.items():
        for num_partitions, co_partitioned in by_size.items():
            if len(co_partitioned) > 1:
                _assign_co_partitioned_with_rack_matching(consumers, num_partitions, co_partitioned, assign)
            elif co_partitioned[0].needs_rack_aware_assignment:
                _assign_ranges(co_partitioned[0], assign, rack_matching=True)
    # Phase 2 (R47): plain ranges over the remaining partitions, in topic iteration order.
    for state in states:
        _assign_ranges(state, assign, rack_matching=False)
    # RangeAssignor sorts every list with TopicPartitionComparator (topic, then partition) in rack mode.
    return [
        [_make_tp(tp) for tp in sorted(tps, key=lambda tp: (java_string_key(tp[0]), tp[1]))] for tps in granted
    ]


def _assign_ranges(
    state: _TopicAssignmentState,
    assign: Callable[[int, list[int], _TopicAssignmentState], None],
    *,
    rack_matching: bool,
) -> None:
    """``RangeAssignor.assignRanges``: each subscriber in order takes up to its room (R46) of the lowest
    unassigned partitions, only rack-matching ones when ``rack_matching`` (R45 single topic, R47)."""
    for consumer in state.consumers:
        if state.num_unassigned == 0:
            break
        limit = state.max_assignable(consumer)
        if limit == 0:
            continue
        rack = state.rack_of[consumer]
        if rack_matching and rack is not None:
            partitions = state.lowest_unassigned_on_rack(rack, limit)
        else:
            partitions = state.lowest_unassigned_partitions(limit)
        if partitions:
            assign(consumer, partitions, state)


def _assign_co_partitioned_with_rack_matching(
    consumers: tuple[int, ...],
    num_partitions: int,
    states: Sequence[_TopicAssignmentState],
    assign: Callable[[int, list[int], _TopicAssignmentState], None],
) -> None:
    """``RangeAssignor.assignCoPartitionedWithRackMatching`` (R45): partition i of every topic of the
    group goes to the first remaining subscriber whose rack holds partition i of each topic and that
    still has room in each; a subscriber leaves once it has no room in any of them."""
    remaining = list(consumers)
    for p in range(num_partitions):
        match = next(
            (c for c in remaining if all(s.racks_match(c, p) and s.max_assignable(c) > 0 for s in states)),
            None,
        )
        if match is None:
            continue
        for s in states:
            assign(match, [p], s)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break
