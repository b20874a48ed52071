"""2.6's general path, transcribed: ``AbstractStickyAssignor.generalAssign`` as released in 2.5 to 2.8.

Before 3.0 the general path was a family of private methods of the assignor rather than a builder
class; 2.5.1, 2.6.3, 2.7.2 and 2.8.2 hold the same code (2.7 only moved the ``PartitionMovements``
reset into ``generalAssign``). Its steps, named after Kafka's methods::

    prepopulate_current_assignments   every member's raw claims, per partition a TreeMap by generation
    drop_invalid_claims               claims on partitions the metadata lacks go; unsubscribed ones are revoked
    balance                           assignPartition, the fixed set-asides, performReassignments, the revert

Where it differs from today's general path (``reference/general.py``):

* it reads every member's claims itself, not the release's ``PriorOwners``, by calling ``memberData``
  a second time: ``StickyAssignor`` parses the user data's ``ByteBuffer`` in place, so the members
  ``allSubscriptionsEqual`` read before it met a differing subscription come back with nothing
  (``UserData.read_again``, ``ownership.members_read_by_all_subscriptions_equal``);
* ``prepopulateCurrentAssignments`` keys a ``HashMap<TopicPartition, TreeMap<Integer, String>>`` by
  *every* claimed partition, real or not, and each member's list comes out in that map's iteration
  order (so its capacity, and with it the order, counts claims on topics that no longer exist);
* a claim on a partition the metadata lacks is dropped (today's sorted merge keeps it, K1);
* ``isBalanced`` asks whether a member could take a partition from one that holds *more*
  (``count < other``), today's from one that holds at least two more (R30);
* no rack awareness (KIP-881 is 3.5).

Kafka's data structures are kept where their order is part of the answer: member lists in claim
order, a ``TreeSet`` of members by (size, id), ``PartitionMovements`` with ``HashSet`` order.
Lookups that are ``List.contains`` in Kafka are set lookups here (same answers, not quadratic).
A null dereference is Kafka's ``NullPointerException``, raised as ``AssignorFailure``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from ...errors import AssignorFailure
from ...javaorder import hashmap_order, java_string_key, topic_partition_hash
from ...model import DEFAULT_GENERATION, TopicPartition
from ..ownership import members_read_by_all_subscriptions_equal
from ..sticky_types import REFERENCE, PriorOwners, StickyInput, StickyResult
from .java_collections import NPE, JavaNull, PartitionMovements, TreeSet, deref

if TYPE_CHECKING:
    from ..releases import Release

__all__ = ["general_assign_2_6", "prepopulate_current_assignments"]


def general_assign_2_6(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """``generalAssign`` (2.5-2.8). ``prior`` is not read: this path re-reads every claim (see the module docstring)."""
    try:
        return _Builder(inp).build()
    except JavaNull as exc:
        raise AssignorFailure(f"general path dereferenced null: {exc}", kafka_exception=NPE) from None


def prepopulate_current_assignments(
    inp: StickyInput,
) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, tuple[str, int]]]:
    """``prepopulateCurrentAssignments``: (currentAssignment, prevAssignment) from every member's raw claims.

    Per claimed partition a ``TreeMap<generation, member>``: a claim with a *present* generation
    already in the map is skipped (first claimant wins), one without a generation is put under -1
    and replaces the previous -1 claimant (last claimant wins). The highest generation owns the
    partition now, the next highest is its ``prevAssignment``. Each member's list is filled in the
    ``HashMap<TopicPartition, ...>`` iteration order of all claimed partitions.

    This is the second ``memberData`` call for the members ``allSubscriptionsEqual`` read before it
    found a differing subscription: where the first call consumed the user data (the eager
    assignor's ``ByteBuffer``, read in place), they come with no claims and no generation.
    """
    read_before = set(members_read_by_all_subscriptions_equal(inp))
    by_partition: dict[TopicPartition, dict[int, str]] = {}
    for member in inp.members:
        data = inp.member_data[member]
        if member in read_before:
            data = inp.member_data_again.get(member, data)
        generation = DEFAULT_GENERATION if data.generation is None else data.generation
        for tp in data.partitions:
            tp = TopicPartition(tp[0], tp[1])
            consumers = by_partition.get(tp)
            if consumers is None:
                by_partition[tp] = {generation: member}
            elif data.generation is not None and data.generation in consumers:
                continue  # "assigned to multiple consumers following sticky assignment generation": skipped
            else:
                consumers[generation] = member
    current: dict[str, list[TopicPartition]] = {}
    prev: dict[TopicPartition, tuple[str, int]] = {}
    for tp in hashmap_order(by_partition, lambda tp: topic_partition_hash(tp.topic, tp.partition)):
        consumers = by_partition[tp]
        generations = sorted(consumers, reverse=True)
        current.setdefault(consumers[generations[0]], []).append(tp)
        if len(generations) > 1:
            prev[tp] = (consumers[generations[1]], generations[1])
    return current, prev


class _Builder:
    """``generalAssign``'s locals for one call: mutable, as Kafka's are, and dropped when ``build`` returns."""

    def __init__(self, inp: StickyInput) -> None:
        self.inp = inp
        ppt = inp.partitions_per_topic
        self.partitions_per_topic = ppt
        self.current_assignment, self.prev_assignment = prepopulate_current_assignments(inp)
        # partition2AllPotentialConsumers, kept per topic (all partitions of a topic share the list):
        # members in map order, once per listing of the topic in a subscription.
        self.topic2_potential_consumers: dict[str, list[str]] = {t: [] for t in ppt}
        # consumer2AllPotentialPartitions: its size (a topic listed twice counts twice) and its topics.
        self.max_assignment_size: dict[str, int] = {}
        self.potential_topics: dict[str, tuple[str, ...]] = {}
        for member in inp.members:
            topics = tuple(t for t in inp.subscriptions.get(member, ()) if t in ppt)
            self.potential_topics[member] = topics
            self.max_assignment_size[member] = sum(ppt[t] for t in topics)
            for t in topics:
                self.topic2_potential_consumers[t].append(member)
            self.current_assignment.setdefault(member, [])
        self.current_partition_consumer: dict[TopicPartition, str] = {
            tp: m for m, tps in self.current_assignment.items() for tp in tps
        }
        self.sorted_partitions = sorted(
            (TopicPartition(t, p) for t in ppt for p in range(ppt[t])), key=self._partition_key
        )
        self.sorted_current_subscriptions = TreeSet(self._size_of)
        self.partition_movements = PartitionMovements()

    # -- helpers ---------------------------------------------------------------------------

    def _partition_key(self, tp: TopicPartition) -> tuple[int, bytes, int]:
        """``PartitionComparator``: fewer potential consumers first, then topic, then partition."""
        return (len(self.topic2_potential_consumers[tp.topic]), java_string_key(tp.topic), tp.partition)

    def _size_of(self, member: str | None) -> int:
        return len(deref(self.current_assignment.get(member), f"currentAssignment.get({member!r})"))

    def _is_real(self, tp: TopicPartition) -> bool:
        """``partition2AllPotentialConsumers.containsKey(tp)``: a partition of a topic in the metadata."""
        count = self.partitions_per_topic.get(tp.topic)
        return count is not None and 0 <= tp.partition < count

    def _is_potential(self, member: str, tp: TopicPartition) -> bool:
        """``consumer2AllPotentialPartitions.get(member).contains(tp)``."""
        return tp.topic in deref(self.potential_topics.get(member), f"consumer2AllPotentialPartitions.get({member!r})")

    # -- generalAssign ---------------------------------------------------------------------

    def build(self) -> StickyResult:
        unassigned, revocation_required = self.drop_invalid_claims()
        for member in self.current_assignment:
            self.sorted_current_subscriptions.add(member)
        self.balance(unassigned, revocation_required)
        return StickyResult(
            {m: tuple(self.current_assignment[m]) for m in self.inp.members}, None, engine=REFERENCE
        )

    def drop_invalid_claims(self) -> tuple[list[TopicPartition], bool]:
        """The loop over ``currentAssignment`` in ``generalAssign``: what stays assigned, what needs assigning.

        A claim on a partition the metadata lacks is dropped; one on a topic the member no longer
        subscribes to is dropped and sets ``revocationRequired``; the rest stay and leave the
        unassigned list (a copy of the sorted partitions).
        """
        revocation_required = False
        kept: set[TopicPartition] = set()
        for member, partitions in self.current_assignment.items():
            subscription = self.inp.subscriptions.get(member, ())
            still = []
            for tp in partitions:
                if not self._is_real(tp):
                    self.current_partition_consumer.pop(tp, None)
                elif tp.topic not in subscription:
                    revocation_required = True
                else:
                    still.append(tp)
                    kept.add(tp)
            partitions[:] = still
        unassigned = [tp for tp in self.sorted_partitions if tp not in kept]
        return unassigned, revocation_required

    # -- balance ---------------------------------------------------------------------------

    def balance(self, unassigned: list[TopicPartition], revocation_required: bool) -> None:
        """``balance``: assign the unassigned, set the fixed aside, reassign, revert unless the score improved."""
        initializing = not self.current_assignment[self.sorted_current_subscriptions.last()]

        for tp in unassigned:
            if self.topic2_potential_consumers[tp.topic]:
                self.assign_partition(tp)

        # partitions with fewer than two potential consumers cannot move
        fixed_topics = {t for t, consumers in self.topic2_potential_consumers.items() if len(consumers) < 2}
        self.sorted_partitions = [tp for tp in self.sorted_partitions if tp.topic not in fixed_topics]
        unassigned = [tp for tp in unassigned if tp.topic not in fixed_topics]

        fixed_assignments: dict[str, list[TopicPartition]] = {}
        for member in self.inp.members:
            if not self.can_participate_in_reassignment(member):
                self.sorted_current_subscriptions.remove(member)
                fixed_assignments[member] = self.current_assignment.pop(member)

        pre_balance_assignment = {m: list(tps) for m, tps in self.current_assignment.items()}
        pre_balance_partition_consumers = dict(self.current_partition_consumer)

        if not revocation_required:
            self.perform_reassignments(unassigned)
        reassignment_performed = self.perform_reassignments(self.sorted_partitions)

        if (
            not initializing
            and reassignment_performed
            and get_balance_score(self.current_assignment) >= get_balance_score(pre_balance_assignment)
        ):
            self.current_assignment = pre_balance_assignment
            self.current_partition_consumer = pre_balance_partition_consumers

        for member, partitions in fixed_assignments.items():
            self.current_assignment[member] = partitions
            self.sorted_current_subscriptions.add(member)

    def assign_partition(self, tp: TopicPartition) -> None:
        """``assignPartition``: to the least loaded member (by size, then id) that may take it."""
        for member in self.sorted_current_subscriptions:
            if self._is_potential(member, tp):
                self.sorted_current_subscriptions.remove(member)
                self.current_assignment[member].append(tp)
                self.current_partition_consumer[tp] = member
                self.sorted_current_subscriptions.add(member)
                return

    def can_participate_in_reassignment(self, member: str) -> bool:
        """``canParticipateInReassignment(consumer, ...)``: short of its potential partitions, or holding a movable one."""
        partitions = self.current_assignment[member]
        if len(partitions) < self.max_assignment_size[member]:
            return True
        return any(len(self.topic2_potential_consumers.get(tp.topic, ())) >= 2 for tp in partitions)

    def is_balanced(self) -> bool:
        """``isBalanced`` (2.x): sizes within one, or no member could take a potential partition from a bigger one."""
        tree = self.sorted_current_subscriptions
        smallest = self._size_of(tree.first())
        largest = self._size_of(tree.last())
        if smallest >= largest - 1:
            return True
        all_partitions = {tp: m for m, tps in self.current_assignment.items() for tp in tps}
        for member in tree:
            partitions = self.current_assignment[member]
            count = len(partitions)
            if count == self.max_assignment_size[member]:
                continue
            held = set(partitions)
            for topic in self.potential_topics[member]:
                for p in range(self.partitions_per_topic[topic]):
                    tp = TopicPartition(topic, p)
                    if tp not in held and count < self._size_of(all_partitions.get(tp)):
                        return False
        return True

    def perform_reassignments(self, reassignable: list[TopicPartition]) -> bool:
        """``performReassignments``: walk the list until balanced; back to the previous owner first, else to the
        least loaded potential member when some potential member holds at least two fewer."""
        performed = False
        while True:
            modified = False
            for tp in reassignable:
                if self.is_balanced():
                    break
                consumer = self.current_partition_consumer.get(tp)
                prev = self.prev_assignment.get(tp)
                if prev is not None and self._size_of(consumer) > self._size_of(prev[0]) + 1:
                    self.reassign_partition_to(tp, prev[0])
                    performed = modified = True
                    continue
                for other in self.topic2_potential_consumers[tp.topic]:
                    if self._size_of(consumer) > self._size_of(other) + 1:
                        self.reassign_partition(tp)
                        performed = modified = True
                        break
            if not modified:
                return performed

    def reassign_partition(self, tp: TopicPartition) -> None:
        """``reassignPartition(partition, ..., consumer2AllPotentialPartitions)``: the first potential member in the tree."""
        new_consumer = next((m for m in self.sorted_current_subscriptions if self._is_potential(m, tp)), None)
        self.reassign_partition_to(tp, deref(new_consumer, "newConsumer"))

    def reassign_partition_to(self, tp: TopicPartition, new_consumer: str) -> None:
        """``reassignPartition(partition, ..., newConsumer)``: undo an earlier move the other way when there is one."""
        consumer = self.current_partition_consumer.get(tp)
        to_move = self.partition_movements.actual_partition_to_be_moved(tp, consumer, new_consumer)
        self.process_partition_movement(to_move, new_consumer)

    def process_partition_movement(self, tp: TopicPartition, new_consumer: str) -> None:
        old_consumer = self.current_partition_consumer.get(tp)
        tree = self.sorted_current_subscriptions
        tree.remove(old_consumer)
        tree.remove(new_consumer)
        self.partition_movements.move_partition(tp, old_consumer, new_consumer)
        old_list = deref(self.current_assignment.get(old_consumer), f"currentAssignment.get({old_consumer!r})")
        if tp in old_list:
            old_list.remove(tp)
        deref(self.current_assignment.get(new_consumer), f"currentAssignment.get({new_consumer!r})").append(tp)
        self.current_partition_consumer[tp] = new_consumer
        tree.add(new_consumer)
        tree.add(old_consumer)


def get_balance_score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    """``getBalanceScore``: sum over member pairs of |size difference| (0 when perfectly balanced)."""
    sizes = sorted(len(tps) for tps in assignment.values())
    # sum over i<j of (s_j - s_i) on sorted sizes, in one pass
    score, running = 0, 0
    for i, s in enumerate(sizes):
        score += i * s - running
        running += s
    return score
