"""The coordinator's input to a server-side assignor, built from a consumer-group scenario.

Kafka's ``ConsumerGroupPartitionAssignor.assign(GroupSpec, SubscribedTopicDescriber)`` reads Java
collections whose iteration order decides ties, so this module computes those orders once, as the
coordinator builds the collections (docs/scenario-format.md, "Consumer groups"), and the ports read
plain tuples:

- ``member_ids``: ``GroupSpec.memberIds()``, the key set of the ``HashMap`` that
  ``TargetAssignmentBuilder.build`` fills from the group's members (scenario order).
- a member's subscription: ``TopicIds`` over ``new HashSet<String>(subscribedTopicList)``, so topic
  ids come in the name set's order, unknown names skipped, while ``size()`` counts every name.
- a member's target: ``Assignment.fromRecord``: ``Collectors.toMap`` (a ``HashMap`` filled in the
  order written) of topic id to ``new HashSet<Integer>(partitions)``.

Capacities follow Java 17's ``HashSet(Collection)`` (``max((int)(n / .75f) + 1, 16)``); later JDKs
size it differently (``HashMap.newHashMap``), which changes orders only from 24 elements on.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from ...javaorder import hashmap_capacity, hashmap_order, java_string_hash, spread
from ...model import Assignment, Scenario, TopicPartition
from ...model.topic_ids import java_uuid_hash, topic_id, topic_ids_of, uuid_order_key

__all__ = [
    "HOMOGENEOUS",
    "HETEROGENEOUS",
    "MemberSpec",
    "SpecIndex",
    "ConsumerGroupSpec",
    "group_spec",
    "subscription_type",
    "table_size_for",
    "hashset_copy_capacity",
    "integer_set_order",
    "uuid_set_order",
    "to_assignment",
]

HOMOGENEOUS = "HOMOGENEOUS"
HETEROGENEOUS = "HETEROGENEOUS"

TopicId = uuid.UUID


def table_size_for(c: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two at least ``c`` (at least 1)."""
    n = 1
    while n < c:
        n *= 2
    return n


def hashset_copy_capacity(size: int) -> int:
    """The table size of Java 17's ``new HashSet<>(collection of size)``; it never resizes while filling."""
    return table_size_for(max(int(size / 0.75) + 1, 16))


def integer_set_order(values: Sequence[int], *, capacity: int) -> tuple[int, ...]:
    """Iteration order of a ``HashSet<Integer>`` of that capacity filled with ``values`` in order."""
    return tuple(hashmap_order(values, lambda v: v, capacity=capacity))


def uuid_set_order(ids: Sequence[TopicId], *, capacity: int | None = None) -> tuple[TopicId, ...]:
    """Iteration order of a ``HashSet<Uuid>``/``HashMap<Uuid, _>`` filled with ``ids`` in order."""
    return tuple(hashmap_order(ids, java_uuid_hash, capacity=capacity))


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member as ``MemberSubscriptionAndAssignmentImpl`` presents it.

    ``subscribed``: topic ids in ``TopicIds`` iteration order; ``subscription_size``: its ``size()``
    (every distinct subscribed name, known or not). ``target``: (topic id, partitions) in the
    iteration order of the target's map and sets.
    """

    member_id: str
    subscribed: tuple[TopicId, ...]
    subscription_size: int
    target: tuple[tuple[TopicId, tuple[int, ...]], ...]
    rack: str | None
    instance_id: str | None


@dataclass(frozen=True)
class SpecIndex:
    """The spec with topic ids as list positions, built once with the spec.

    Java's ``GroupSpec`` hands its assignors ready maps (targets by ``Uuid``, the inverted target
    behind ``isPartitionAssigned``) and a ``Uuid`` hashes in a few instructions; a ``uuid.UUID``
    hashes through a Python ``__hash__``. So the ports' inner loops key by position instead, and what
    is a property of an id alone (its ``hashCode`` bucket spread, its ``compareTo`` key) is computed
    here once. Nothing in it depends on the assignor.

    ``topics``: every id the spec names, the metadata's first; ``counts``: ``numPartitions`` by
    position (-1 outside the metadata); ``subscribed``/``targets``: each member's (in ``members``
    order) by position, orders kept; ``assigned``: by position, the sorted partition numbers some
    target holds (``isPartitionAssigned``), those in ``[0, numPartitions)`` only: the builders ask
    about no other (they walk each topic's partitions)."""

    topics: tuple[TopicId, ...]
    position: dict[TopicId, int]
    counts: tuple[int, ...]
    spread_hash: tuple[int, ...]
    order_key: tuple[tuple[int, int], ...]
    subscribed: tuple[tuple[int, ...], ...]
    targets: tuple[tuple[tuple[int, tuple[int, ...]], ...], ...]
    assigned: tuple[np.ndarray, ...]


def _spec_index(members: Sequence[MemberSpec], partition_counts: dict[TopicId, int]) -> SpecIndex:
    position: dict[TopicId, int] = {t: i for i, t in enumerate(partition_counts)}
    # Each subscription tuple once, by identity: members with one subscription share it (group_spec).
    subscriptions: dict[int, tuple[TopicId, ...]] = {}
    for m in members:
        if id(m.subscribed) not in subscriptions:
            subscriptions[id(m.subscribed)] = m.subscribed
            for t in m.subscribed:
                position.setdefault(t, len(position))
        for t, _ in m.target:
            position.setdefault(t, len(position))
    positions = {key: tuple(position[t] for t in ids) for key, ids in subscriptions.items()}
    topics = tuple(position)
    held: list[list[int]] = [[] for _ in topics]
    targets = []
    for m in members:
        target = tuple((position[t], parts) for t, parts in m.target)
        for t, parts in target:
            held[t].extend(parts)
        targets.append(target)
    counts = tuple(partition_counts.get(t, -1) for t in topics)
    assigned = []
    for parts, count in zip(held, counts):
        a = np.unique(np.array(parts, dtype=np.int64))
        if len(a) and (a[0] < 0 or a[-1] >= count):  # sorted: only the ends can fall outside
            a = a[(a >= 0) & (a < count)]
        assigned.append(a)
    return SpecIndex(
        topics=topics,
        position=position,
        counts=counts,
        spread_hash=tuple(spread(java_uuid_hash(t)) for t in topics),
        order_key=tuple(uuid_order_key(t) for t in topics),
        subscribed=tuple(positions[id(m.subscribed)] for m in members),
        targets=tuple(targets),
        assigned=tuple(assigned),
    )


@dataclass(frozen=True)
class ConsumerGroupSpec:
    """``GroupSpec`` plus ``SubscribedTopicDescriber``: members in ``memberIds()`` order, the
    subscription type, partition counts and names by topic id (topics in the metadata only).
    ``index``: the same by topic position (``SpecIndex``), derived on construction."""

    members: tuple[MemberSpec, ...]
    subscription_type: str
    partition_counts: dict[TopicId, int]
    topic_names: dict[TopicId, str]
    index: SpecIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", _spec_index(self.members, self.partition_counts))

    @property
    def member_ids(self) -> tuple[str, ...]:
        return tuple(m.member_id for m in self.members)

    def num_partitions(self, topic: TopicId) -> int:
        """``SubscribedTopicDescriber.numPartitions``: -1 for a topic not in the metadata."""
        return self.partition_counts.get(topic, -1)

    def assigned_partitions(self) -> set[tuple[TopicId, int]]:
        """What ``GroupSpec.isPartitionAssigned`` answers true for: every partition of every target."""
        return {(t, p) for m in self.members for t, parts in m.target for p in parts}


def subscription_type(scenario: Scenario) -> str:
    """``ModernGroup.subscriptionType``: homogeneous iff every subscribed name counts every member."""
    counts: dict[str, int] = {}
    for topics, times in Counter(m.topics for m in scenario.members).items():
        for name in set(topics):
            counts[name] = counts.get(name, 0) + times
    return HOMOGENEOUS if all(c == len(scenario.members) for c in counts.values()) else HETEROGENEOUS


def _subscribed(topics: tuple[str, ...], known: dict[str, TopicId]) -> tuple[tuple[TopicId, ...], int]:
    """A member's subscribed topic ids in its ``HashSet``'s order (the names' set copied), and how many names."""
    names = hashmap_order(topics, java_string_hash, capacity=hashset_copy_capacity(len(topics)))
    return tuple(known[n] for n in names if n in known), len(names)


def _member_spec(member, known: dict[str, TopicId], linked_targets: bool,
                 subscriptions: dict[tuple[str, ...], tuple[tuple[TopicId, ...], int]]) -> MemberSpec:
    if member.topics not in subscriptions:  # one per distinct subscription: a homogeneous group's is one
        subscriptions[member.topics] = _subscribed(member.topics, known)
    subscribed, name_count = subscriptions[member.topics]
    by_topic: dict[str, list[int]] = {}
    for tp in member.owned:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    ids = [known.get(t) or topic_id(t) for t in by_topic]
    parts = {known.get(t) or topic_id(t): integer_set_order(p, capacity=hashset_copy_capacity(len(p))) for t, p in by_topic.items()}
    order = tuple(ids) if linked_targets else uuid_set_order(ids, capacity=hashmap_capacity(len(ids)))
    return MemberSpec(member.id, subscribed, name_count, tuple((t, parts[t]) for t in order), member.rack, member.instance_id)


def group_spec(scenario: Scenario, *, linked_targets: bool = False, subscription_type_override: str | None = None) -> ConsumerGroupSpec:
    """The assignor's input for ``scenario`` (a consumer group, docs/scenario-format.md).

    ``linked_targets``: each target's topics iterate in the order written, as a ``LinkedHashMap``
    would (Kafka's tests build some targets with ``mkOrderedAssignment``); ``subscription_type_override``:
    the type a Kafka test states where the coordinator would decide otherwise. The coordinator does
    neither, so only the Kafka-case replay (tests/kafka_cases_consumer) asks for them."""
    known = topic_ids_of(scenario.topics)
    by_id = {m.id: m for m in scenario.members}
    order = hashmap_order([m.id for m in scenario.members], java_string_hash)
    subscriptions: dict[tuple[str, ...], tuple[tuple[TopicId, ...], int]] = {}
    return ConsumerGroupSpec(
        members=tuple(_member_spec(by_id[i], known, linked_targets, subscriptions) for i in order),
        subscription_type=subscription_type_override or subscription_type(scenario),
        partition_counts={known[t.name]: t.partitions for t in scenario.topics},
        topic_names={known[t.name]: t.name for t in scenario.topics},
    )


def to_assignment(spec: ConsumerGroupSpec, targets: dict[str, Iterable[tuple[TopicId, Iterable[int]]]], member_order: Iterable[str]) -> Assignment:
    """Topic ids back to names, partitions sorted; members without a target get nothing.

    A target may still name a topic outside the metadata only if the assignor kept it, which Kafka's
    assignors never do; its name is then unknown and the id is written instead."""
    out: dict[str, tuple[TopicPartition, ...]] = {}
    for member_id in member_order:
        tps = [
            TopicPartition(spec.topic_names.get(t, str(t)), p)
            for t, parts in targets.get(member_id, ())
            for p in parts
        ]
        out[member_id] = tuple(sorted(tps))
    return Assignment(out)
