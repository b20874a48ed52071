"""The general path, transcribed: ``AbstractStickyAssignor.GeneralAssignmentBuilder`` statement by statement.

This is the slow, obviously-faithful twin of ``general.py`` (docs/rules.md R26-R32). It keeps
Kafka's data structures (lists with ``remove(Object)``, a tree of members ordered by (size, id),
``PartitionMovements`` with Java ``HashSet`` order) and every quirk that follows from them:

* the sorted-merge in ``getUnassignedPartitions`` loses sync on a kept claim that is not a real
  partition (§10 K1), so later partitions are handed out twice;
* ``prevAssignment`` hands a partition back to a lower-generation member without a subscription
  check (§10 K3), and a lookup of a member that was set aside as fixed (R31) is a
  ``NullPointerException``, raised here as ``AssignorFailure``;
* the balance-score revert restores the pre-balance lists but leaves the movement records.

``general.py``'s fast engine must equal this on every input (a Hypothesis test checks it), and
hands over to it when it declines (``engines.fast_or_reference``): kept claims that are not a set
of real partitions, and states it proves unreachable from well-formed input. Nothing here is tuned
for speed.

``build`` reads as Kafka's ``GeneralAssignmentBuilder.build()``; each step is a method named after
Kafka's: ``prepopulate_current_assignments`` (R27), ``assign_owned_partitions`` (R28),
``get_unassigned_partitions``, ``balance`` (R29-R32: ``maybe_assign``, the fixed set-asides of R31,
``perform_reassignments``, the ``getget_balance_score`` revert).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

from ...errors import AssignorFailure
from ...javaorder import java_string_key
from ...model import DEFAULT_GENERATION, TopicPartition
from ..sticky_types import REFERENCE, GeneralRun, PriorOwners, StickyInput, StickyResult
from .java_collections import NO_SUCH_ELEMENT, NPE, JavaNull, PartitionMovements, TreeSet, deref

if TYPE_CHECKING:
    from ..releases import Release

__all__ = [
    "general_assign_reference",
    "general_assign_of_release",
    "reference_run",
    "GeneralAssignmentBuilder",
    "NPE",
    "NO_SUCH_ELEMENT",
]


def general_assign_reference(inp: StickyInput, prior: PriorOwners) -> StickyResult:
    return reference_run(inp, prior).result


def general_assign_of_release(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """The general path of a 3.x release that differs from today's in ``isBalanced`` alone
    (``release.kafka_15106``); rack mode is already off in ``inp`` for releases before KIP-881
    (``release.kip_881``, ``sticky.build_sticky_input``). A ``Release.general_builder``."""
    try:
        return GeneralAssignmentBuilder(inp, prior, kafka_15106=release.kafka_15106).build().result
    except JavaNull as exc:
        raise AssignorFailure(f"general path dereferenced null: {exc}", kafka_exception=NPE) from None


def reference_run(inp: StickyInput, prior: PriorOwners, *, declined: str | None = None) -> GeneralRun:
    """``GeneralAssignmentBuilder.build()``, transcribed; ``declined``: why the fast engine handed over (engines.py)."""
    try:
        return GeneralAssignmentBuilder(inp, prior).build(declined)
    except JavaNull as exc:
        raise AssignorFailure(f"general path dereferenced null: {exc}", kafka_exception=NPE) from None


class GeneralAssignmentBuilder:
    """Kafka's builder state for one call: mutable, as Kafka's is, and dropped when ``build`` returns."""

    def __init__(self, inp: StickyInput, prior: PriorOwners, *, kafka_15106: bool = True) -> None:
        self.inp = inp
        self.kafka_15106 = kafka_15106
        self.prior = prior
        self.partitions_per_topic = dict(inp.partitions_per_topic)
        self.total_partitions_count = sum(self.partitions_per_topic.values())
        self.subscriptions = {m: list(inp.subscriptions.get(m, ())) for m in inp.members}
        self.current_assignment: dict[str, list[TopicPartition]] = {
            m: [TopicPartition(*tp) for tp in prior.consumer_to_owned_partitions.get(m, ())] for m in inp.members
        }
        # R26: topic2AllPotentialConsumers (members in map order; a topic listed twice counts twice)
        self.topic2_all_potential_consumers: dict[str, list[str]] = {t: [] for t in self.partitions_per_topic}
        self.consumer2_all_potential_topics: dict[str, list[str]] = {}
        for m in inp.members:
            subscribed = [t for t in self.subscriptions[m] if t in self.partitions_per_topic]
            self.consumer2_all_potential_topics[m] = subscribed
            for t in subscribed:
                self.topic2_all_potential_consumers[t].append(m)
        self.current_partition_consumer: dict[TopicPartition, str] = {}
        for m, tps in self.current_assignment.items():
            for tp in tps:
                self.current_partition_consumer[tp] = m
        sorted_all_topics = sorted(self.topic2_all_potential_consumers, key=self._topic_key)
        self.sorted_all_partitions = [
            TopicPartition(t, p) for t in sorted_all_topics for p in range(self.partitions_per_topic[t])
        ]
        self.sorted_current_subscriptions = TreeSet(self._size_of)
        self.revocation_required = False
        self.partition_movements = PartitionMovements()
        # RackInfo: empty maps when rack-aware assignment is off (R48)
        self.consumer_racks: dict[str, str] = {}
        self.partition_racks: dict[TopicPartition, frozenset[str]] = {}
        if inp.rack_aware:
            self.consumer_racks = {m: r for m in inp.members if (r := inp.member_rack.get(m))}
            for t, n in self.partitions_per_topic.items():
                racks = inp.partition_racks.get(t, ())
                for p in range(n):
                    self.partition_racks[TopicPartition(t, p)] = frozenset(racks[p]) if p < len(racks) else frozenset()

    # -- helpers ---------------------------------------------------------------------------

    def _topic_key(self, topic: str) -> tuple[int, bytes]:
        """``TopicComparator``: fewer potential consumers first, then ``String.compareTo``."""
        return (len(self.topic2_all_potential_consumers[topic]), java_string_key(topic))

    def _partition_key(self, tp: TopicPartition) -> tuple[int, bytes, int]:
        """``Utils.PartitionComparator``."""
        return (len(self.topic2_all_potential_consumers[tp.topic]), java_string_key(tp.topic), tp.partition)

    def _size_of(self, member: str) -> int:
        return len(deref(self.current_assignment.get(member), f"currentAssignment.get({member!r})"))

    def _racks_mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(consumer)
        replicas = self.partition_racks.get(tp)
        return rack is not None and (replicas is None or rack not in replicas)

    # -- build -----------------------------------------------------------------------------

    def build(self, declined: str | None = None) -> GeneralRun:
        prev_assignment = self.prepopulate_current_assignments()
        assigned_partitions = self.assign_owned_partitions()
        unassigned_partitions = self.get_unassigned_partitions(assigned_partitions)
        for m in self.current_assignment:
            self.sorted_current_subscriptions.add(m)
        initializing, reverted = self.balance(prev_assignment, unassigned_partitions)
        result = StickyResult(
            assignment={m: tuple(self.current_assignment[m]) for m in self.inp.members},
            partitions_transferring_ownership=None,
            engine=REFERENCE,
            declined=declined,
        )
        return GeneralRun(
            result=result,
            movements=self.partition_movements.pairs_by_topic(),
            revocation_required=self.revocation_required,
            initializing=initializing,
            reverted=reverted,
        )

    def prepopulate_current_assignments(self) -> dict[TopicPartition, tuple[str, int]]:
        """R27 ``prepopulateCurrentAssignments``: raw claims of members below ``maxGeneration``."""
        max_generation = self.prior.max_generation
        prev: dict[TopicPartition, tuple[str, int]] = {}

        def update(partitions: Iterable[TopicPartition], consumer: str, generation: int) -> None:
            for tp in partitions:
                tp = TopicPartition(*tp)
                if tp not in prev or generation > prev[tp][1]:
                    prev[tp] = (consumer, generation)

        for m in self.inp.members:
            md = self.inp.member_data.get(m)
            if md is None:
                continue
            if md.generation is not None and md.generation < max_generation:
                update(md.partitions, m, md.generation)
            elif md.generation is None and max_generation > DEFAULT_GENERATION:
                update(md.partitions, m, DEFAULT_GENERATION)
        return prev

    def assign_owned_partitions(self) -> list[TopicPartition]:
        """R28 ``assignOwnedPartitions``."""
        assigned: list[TopicPartition] = []
        for consumer, partitions in self.current_assignment.items():
            subscription = self.subscriptions[consumer]
            kept = []
            for tp in partitions:
                if tp.topic not in self.topic2_all_potential_consumers:
                    self.current_partition_consumer.pop(tp, None)
                elif tp.topic not in subscription or self._racks_mismatch(consumer, tp):
                    self.revocation_required = True
                else:
                    kept.append(tp)
                    assigned.append(tp)
            partitions[:] = kept
        return assigned

    def get_unassigned_partitions(self, sorted_assigned: list[TopicPartition]) -> list[TopicPartition]:
        """``getUnassignedPartitions``: a sorted merge that assumes every kept claim is a real partition."""
        if not sorted_assigned:
            return self.sorted_all_partitions  # the same list object, as in Kafka
        sorted_assigned.sort(key=self._partition_key)
        unassigned = []
        should_add_directly = False
        it = iter(sorted_assigned)
        next_assigned = next(it)
        for tp in self.sorted_all_partitions:
            if should_add_directly or next_assigned != tp:
                unassigned.append(tp)
            else:
                nxt = next(it, None)
                if nxt is None:
                    should_add_directly = True
                else:
                    next_assigned = nxt
        return unassigned

    # -- balance ---------------------------------------------------------------------------

    def get_max_assignment_size(self, subscribed: list[str]) -> int:
        """``getMaxAssignmentSize`` (a list with repeats that happens to match the topic count means all)."""
        if len(subscribed) == len(self.partitions_per_topic):
            return self.total_partitions_count
        return sum(self.partitions_per_topic[t] for t in subscribed)

    def is_balanced(self) -> bool:
        """R30 ``isBalanced`` (3.5.2 / 3.6.0 on); before KAFKA-15106 (``kafka_15106=False``) a member one
        partition short of another's count already made the assignment unbalanced."""
        tree = self.sorted_current_subscriptions
        lo = self._size_of(tree.first())
        hi = self._size_of(tree.last())
        if lo >= hi - 1:
            return True
        all_partitions: dict[TopicPartition, str] = {}
        for consumer, tps in self.current_assignment.items():
            for tp in tps:
                all_partitions[tp] = consumer
        for consumer in tree:
            partitions = self.current_assignment[consumer]
            count = len(partitions)
            subscribed = self.consumer2_all_potential_topics[consumer]
            if count == self.get_max_assignment_size(subscribed):
                continue
            for topic in subscribed:
                for p in range(self.partitions_per_topic[topic]):
                    tp = TopicPartition(topic, p)
                    if tp not in self.current_assignment[consumer]:
                        other = all_partitions.get(tp)
                        other_count = self._size_of(other)
                        if (count + 1 < other_count) if self.kafka_15106 else (count < other_count):
                            return False
        return True

    def get_balance_score(self, assignment: Mapping[str, list[TopicPartition]]) -> int:
        """``getBalanceScore``: sum over member pairs of |size difference|."""
        sizes = [len(tps) for tps in assignment.values()]
        score = 0
        for i in range(len(sizes)):
            for j in range(i + 1, len(sizes)):
                score += abs(sizes[i] - sizes[j])
        return score

    def maybe_assign_partition(self, tp: TopicPartition, use_racks: bool) -> bool:
        for consumer in self.sorted_current_subscriptions:
            if tp.topic in self.consumer2_all_potential_topics[consumer] and (
                not use_racks or not self._racks_mismatch(consumer, tp)
            ):
                self.sorted_current_subscriptions.remove(consumer)
                self.current_assignment[consumer].append(tp)
                self.current_partition_consumer[tp] = consumer
                self.sorted_current_subscriptions.add(consumer)
                return True
        return False

    def maybe_assign(self, partitions: list[TopicPartition], use_racks: bool, remove_assigned: bool) -> None:
        remaining = []
        for tp in partitions:
            if not self.topic2_all_potential_consumers[tp.topic]:
                remaining.append(tp)
                continue
            if self.maybe_assign_partition(tp, use_racks) and remove_assigned:
                continue
            remaining.append(tp)
        if remove_assigned:
            partitions[:] = remaining

    def can_topic_participate_in_reassignment(self, topic: str) -> bool:
        return len(self.topic2_all_potential_consumers[topic]) >= 2

    def can_consumer_participate_in_reassignment(self, consumer: str) -> bool:
        partitions = self.current_assignment[consumer]
        if len(partitions) < self.get_max_assignment_size(self.consumer2_all_potential_topics[consumer]):
            return True
        return any(self.can_topic_participate_in_reassignment(tp.topic) for tp in partitions)

    def balance(self, prev: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]) -> tuple[bool, bool]:
        """R29-R32 ``balance``; returns (initializing, reverted)."""
        initializing = not self.current_assignment[self.sorted_current_subscriptions.last()]

        # R29: rack-matching fill first, then the rest without rack matching
        to_assign = unassigned
        if self.consumer_racks:
            to_assign = list(unassigned)
            self.maybe_assign(to_assign, True, True)
        self.maybe_assign(to_assign, False, False)

        # R31: topics with fewer than two potential consumers, and members that cannot change
        self.remove_fixed_partitions(unassigned)
        fixed_assignments = self.set_aside_fixed_assignments()

        pre_balance_assignment = {m: list(tps) for m, tps in self.current_assignment.items()}
        pre_balance_partition_consumers = dict(self.current_partition_consumer)

        # R32: new partitions first when nothing had to be revoked, then everything reassignable
        if not self.revocation_required:
            self.perform_reassignments(unassigned, prev)
        reassignment_performed = self.perform_reassignments(self.sorted_all_partitions, prev)

        reverted = False
        if (
            not initializing
            and reassignment_performed
            and self.get_balance_score(self.current_assignment) >= self.get_balance_score(pre_balance_assignment)
        ):
            self.current_assignment.clear()
            self.current_assignment.update({m: list(tps) for m, tps in pre_balance_assignment.items()})
            self.current_partition_consumer = pre_balance_partition_consumers
            reverted = True

        for consumer, tps in fixed_assignments.items():
            self.current_assignment[consumer] = tps
            self.sorted_current_subscriptions.add(consumer)
        return initializing, reverted

    def remove_fixed_partitions(self, unassigned: list[TopicPartition]) -> None:
        """R31: partitions of topics with fewer than two potential consumers leave both walk lists."""
        fixed_partitions = set()
        for topic in self.topic2_all_potential_consumers:
            if not self.can_topic_participate_in_reassignment(topic):
                fixed_partitions.update(TopicPartition(topic, p) for p in range(self.partitions_per_topic[topic]))
        self.sorted_all_partitions[:] = [tp for tp in self.sorted_all_partitions if tp not in fixed_partitions]
        if unassigned is not self.sorted_all_partitions:
            unassigned[:] = [tp for tp in unassigned if tp not in fixed_partitions]

    def set_aside_fixed_assignments(self) -> dict[str, list[TopicPartition]]:
        """R31: members that cannot take part leave the tree and the assignment until the balancing is over."""
        fixed_assignments: dict[str, list[TopicPartition]] = {}
        for consumer in self.consumer2_all_potential_topics:
            if not self.can_consumer_participate_in_reassignment(consumer):
                self.sorted_current_subscriptions.remove(consumer)
                fixed_assignments[consumer] = self.current_assignment.pop(consumer)
        return fixed_assignments

    def perform_reassignments(self, reassignable: list[TopicPartition], prev: dict[TopicPartition, tuple[str, int]]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in list(reassignable):
                if self.is_balanced():
                    break
                consumer = self.current_partition_consumer.get(tp)
                if tp in prev and self._size_of(consumer) > self._size_of(prev[tp][0]) + 1:
                    self.reassign_partition_to(tp, prev[tp][0])
                    performed = modified = True
                    continue
                consumer_rack = self.consumer_racks.get(consumer)
                found_rack_consumer = False
                if consumer_rack is not None:
                    partition_racks = self.partition_racks[tp]
                    if partition_racks and consumer_rack in partition_racks:
                        for other in self.topic2_all_potential_consumers[tp.topic]:
                            other_rack = self.consumer_racks.get(other)
                            if other_rack is None or other_rack not in partition_racks:
                                continue
                            if self._size_of(consumer) > self._size_of(other) + 1:
                                self.reassign_partition(tp)
                                performed = modified = found_rack_consumer = True
                                break
                if not found_rack_consumer:
                    for other in self.topic2_all_potential_consumers[tp.topic]:
                        if self._size_of(consumer) > self._size_of(other) + 1:
                            self.reassign_partition(tp)
                            performed = modified = True
                            break
            if not modified:
                return performed

    def reassign_partition(self, tp: TopicPartition) -> None:
        new_consumer = None
        for other in self.sorted_current_subscriptions:
            if tp.topic in self.consumer2_all_potential_topics[other]:
                new_consumer = other
                break
        self.reassign_partition_to(tp, deref(new_consumer, "newConsumer"))

    def reassign_partition_to(self, tp: TopicPartition, new_consumer: str) -> None:
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
