"""``UniformHeterogeneousAssignmentBuilder`` as Kafka 3.9.x ships it, before KAFKA-17710's rewrite, ported.

The builder of the last 3.x releases (preview KIP-848): keep each member's target on topics it still
subscribes to; give every unassigned partition (topics with most partitions per subscriber first)
to its least-loaded subscriber with room; then move partitions of topics with two or more
subscribers from a member to the least-loaded subscriber while one holds two more than another,
recording each move so a later move prefers undoing an earlier one. The record check is inverted
(``movePartition`` throws when a partition moved before moves again from the member it moved to),
so a group needing a partition to move twice gets ``PartitionAssignorException`` ("Mismatch in
partition movement record ..."): reproduced, not fixed.

Ties are Kafka's: ``HashSet<TopicIdPartition>`` iteration (``Objects.hash(topicId, partition)``)
orders equal partitions and picks the partition a move undoes, and a ``TreeSet`` orders members by
live target size, then id.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable

from ...errors import AssignorFailure
from ...javaorder import hashmap_capacity, java_string_key, spread
from ...model.topic_ids import java_uuid_hash
from .spec import ConsumerGroupSpec, TopicId

__all__ = ["build_heterogeneous_3_9"]

PAE = "PartitionAssignorException"
NO_SUCH_ELEMENT = "NoSuchElementException"
TIP = tuple[TopicId, int]


def topic_id_partition_hash(tp: TIP) -> int:
    """``TopicIdPartition.hashCode()`` = ``Objects.hash(topicId, partitionId)``, in int32."""
    h = (31 * (31 + java_uuid_hash(tp[0])) + tp[1]) & 0xFFFFFFFF
    return h - (1 << 32) if h >> 31 else h


class _HashSet:
    """A Java ``HashSet`` as far as iteration order goes: buckets in index order, within a bucket
    the order of (last) insertion; the table only grows (its capacity follows the largest size)."""

    def __init__(self, hash_fn: Callable[[Hashable], int]) -> None:
        self._hash = hash_fn
        self._seq: dict = {}
        self._next = 0
        self._capacity = hashmap_capacity(0)

    def add(self, x) -> None:
        if x not in self._seq:
            self._seq[x] = self._next
            self._next += 1
            self._capacity = max(self._capacity, hashmap_capacity(len(self._seq)))

    def discard(self, x) -> None:
        self._seq.pop(x, None)

    def __contains__(self, x) -> bool:
        return x in self._seq

    def __len__(self) -> int:
        return len(self._seq)

    def __iter__(self):
        mask = self._capacity - 1
        return iter(sorted(self._seq, key=lambda x: (spread(self._hash(x)) & mask, self._seq[x])))


def build_heterogeneous_3_9(spec: ConsumerGroupSpec) -> dict[str, list[tuple[TopicId, list[int]]]]:
    """The new target of every member, as Kafka 3.9.x's heterogeneous builder computes it."""
    b = _Builder(spec)
    if not b.subscribed_topic_ids:
        return {}
    b.assign_sticky_partitions()
    b.unassigned_partitions_assignment()
    b.balance()
    return {m: [(t, sorted(ps)) for t, ps in target.items() if ps] for m, target in b.target.items()}


class _Builder:
    """One ``build`` call's state (the Java builder's fields); nothing outlives the call."""

    def __init__(self, spec: ConsumerGroupSpec) -> None:
        self.spec = spec
        self.member_ids = [m.member_id for m in spec.members]
        self.subscriptions = {m.member_id: m.subscribed for m in spec.members}
        self.subscribed_sets = {m.member_id: set(m.subscribed) for m in spec.members}
        topics = _HashSet(java_uuid_hash)
        self.members_per_topic: dict[TopicId, list[str]] = {}
        for m in spec.members:
            for t in m.subscribed:
                topics.add(t)
                self.members_per_topic.setdefault(t, []).append(m.member_id)
        self.subscribed_topic_ids = list(topics)
        self.target: dict[str, dict[TopicId, set[int]]] = {m: {} for m in self.member_ids}
        self.unassigned = self._topic_id_partitions()
        self.size = dict.fromkeys(self.member_ids, 0)
        self.max_size = {m.member_id: sum(spec.num_partitions(t) for t in m.subscribed) for m in spec.members}
        self.sorted_members = {m for m in self.member_ids if self.size[m] < self.max_size[m]}  # the TreeSet's members
        self.owner: dict[TIP, str] = {}
        self.moves_by_partition: dict[TIP, tuple[str, str]] = {}
        self.moves_by_topic: dict[TopicId, dict[tuple[str, str], _HashSet]] = {}

    # -- helpers ---------------------------------------------------------------------------

    def _topic_id_partitions(self) -> _HashSet:
        out = _HashSet(topic_id_partition_hash)
        for t in self.subscribed_topic_ids:
            for p in range(self.spec.num_partitions(t)):
                out.add((t, p))
        return out

    def _tree_order(self, members: Iterable[str]) -> list[str]:
        """A ``TreeSet`` by (current target size, member id)."""
        return sorted(members, key=lambda m: (self.size[m], java_string_key(m)))

    def _sort_partitions(self, partitions: Iterable[TIP]) -> list[TIP]:
        def key(tp: TIP):
            subs = len(self.members_per_topic[tp[0]])
            return (-(self.spec.num_partitions(tp[0]) / subs), subs, tp[1])

        return sorted(partitions, key=key)  # stable: equal keys keep the HashSet's order

    def _at_max(self, m: str) -> bool:
        return self.size[m] >= self.max_size[m]

    def add_partition(self, tp: TIP, m: str) -> None:
        self.target[m].setdefault(tp[0], set()).add(tp[1])
        self.owner[tp] = m
        self.sorted_members.discard(m)
        self.size[m] += 1
        if not self._at_max(m):
            self.sorted_members.add(m)
        self.unassigned.discard(tp)

    def remove_partition(self, tp: TIP, m: str) -> None:
        parts = self.target[m].get(tp[0])
        if parts is not None:
            parts.discard(tp[1])
            if not parts:
                del self.target[m][tp[0]]
        if self.owner.get(tp) == m:
            del self.owner[tp]
        self.sorted_members.discard(m)
        if self.size[m] > 0:
            self.size[m] -= 1
        if not self._at_max(m):
            self.sorted_members.add(m)

    # -- the steps -------------------------------------------------------------------------

    def assign_sticky_partitions(self) -> None:
        for m in self.spec.members:
            for t, parts in m.target:
                if t in self.subscribed_sets[m.member_id]:
                    for p in parts:
                        self.add_partition((t, p), m.member_id)

    def unassigned_partitions_assignment(self) -> None:
        for tp in self._sort_partitions(self.unassigned):
            for m in self._tree_order(x for x in self.members_per_topic[tp[0]] if self.size[x] < self.max_size[x]):
                if not self._at_max(m):
                    self.add_partition(tp, m)
                    break

    def balance(self) -> None:
        if len(self.unassigned):
            raise AssignorFailure("Some partitions were left unassigned", kafka_exception=PAE)
        fresh = self._topic_id_partitions()
        for tp in fresh:
            self.unassigned.add(tp)
        for t in self.subscribed_topic_ids:
            if len(self.members_per_topic[t]) < 2:
                for p in range(self.spec.num_partitions(t)):
                    self.unassigned.discard((t, p))
        for m in self.member_ids:
            if not self._can_member_participate(m):
                self.sorted_members.discard(m)
        if len(self.unassigned):
            self.perform_reassignments()

    def _can_member_participate(self, m: str) -> bool:
        if self.size[m] < self.max_size[m]:
            return True
        return any(len(self.members_per_topic.get(t, ())) >= 2 for t in self.target[m])

    def is_balanced(self) -> bool:
        order = self._tree_order(self.sorted_members)
        if not order:
            raise AssignorFailure("TreeSet.first() of an empty set", kafka_exception=NO_SUCH_ELEMENT)
        if self.size[order[0]] >= self.size[order[-1]] - 1:
            return True
        for m in order:
            count = self.size[m]
            if count == self.max_size[m]:
                continue
            for t in self.subscriptions[m]:
                assigned = self.target[m].get(t)
                for i in range(self.spec.num_partitions(t)):
                    if assigned is not None and i in assigned:
                        continue
                    other = self.owner.get((t, i))
                    if count + 1 >= (self.size[other] if other is not None else 0):
                        continue
                    return False
        return True

    def perform_reassignments(self) -> None:
        modified = True
        while modified:
            modified = False
            occurred = False
            for tp in self._sort_partitions(self.unassigned):
                if occurred and self.is_balanced():
                    return
                occurred = False
                current = self.owner.get(tp)
                if current is None:
                    raise AssignorFailure(f"Expected topicIdPartition '{tp}' to be assigned to a member", kafka_exception=PAE)
                for other in self.members_per_topic[tp[0]]:
                    if self.size[current] <= self.size[other] + 1:
                        continue
                    self.reassign_partition(tp)
                    modified = occurred = True
                    break

    def reassign_partition(self, tp: TIP) -> None:
        new_owner = next((m for m in self._tree_order(self.sorted_members) if tp[0] in self.subscribed_sets[m]), None)
        if new_owner is None:
            raise AssignorFailure(f"No suitable new owner was found for the partition{tp}", kafka_exception=PAE)
        moved = self._actual_partition_to_be_moved(tp, self.owner[tp], new_owner)
        old = self.owner.get(moved)
        self._move_partition(moved, old, new_owner)
        self.remove_partition(moved, old)
        self.add_partition(moved, new_owner)

    # -- PartitionMovements ----------------------------------------------------------------

    def _remove_record(self, tp: TIP) -> tuple[str, str]:
        pair = self.moves_by_partition.pop(tp)
        for_topic = self.moves_by_topic[tp[0]]
        for_topic[pair].discard(tp)
        if not len(for_topic[pair]):
            del for_topic[pair]
        if not for_topic:
            del self.moves_by_topic[tp[0]]
        return pair

    def _add_record(self, tp: TIP, pair: tuple[str, str]) -> None:
        self.moves_by_partition[tp] = pair
        self.moves_by_topic.setdefault(tp[0], {}).setdefault(pair, _HashSet(topic_id_partition_hash)).add(tp)

    def _move_partition(self, tp: TIP, old: str, new: str) -> None:
        if tp in self.moves_by_partition:
            src, dst = self._remove_record(tp)
            if dst == old:  # Kafka 3.9's check, inverted against the classic assignor's: see the module docstring
                raise AssignorFailure(
                    "Mismatch in partition movement record with respect to partition ownership during a rebalance",
                    kafka_exception=PAE,
                )
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def _actual_partition_to_be_moved(self, tp: TIP, old: str, new: str) -> TIP:
        if tp[0] not in self.moves_by_topic:
            return tp
        if tp in self.moves_by_partition:
            src, dst = self.moves_by_partition[tp]
            if old != dst:
                raise AssignorFailure(f"Old owner does not match expected value for partition: {tp}", kafka_exception=PAE)
            old = src
        for_topic = self.moves_by_topic[tp[0]]
        reverse = (new, old)
        if reverse not in for_topic:
            return tp
        return next(iter(for_topic[reverse]))
