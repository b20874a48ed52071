"""The general algorithm before 2.5, transcribed: ``StickyAssignor.assign`` (2.2, 2.3) and ``AbstractStickyAssignor.assign`` (2.4).

Until 2.5 (KAFKA-9987's constrained path) every group took this one algorithm; it is the
ancestor of ``GeneralAssignmentBuilder`` (``reference/general.py``) but differs from it in almost
every step, so it is transcribed whole rather than configured. Three releases, one method body::

    2.2  StickyAssignor.assign          V0 user data: every claim trusted (KAFKA-7026)
    2.3  StickyAssignor.assign          KIP-341: claims resolved per partition by generation
                                        (``prevAssignment``), a partition handed back to its previous
                                        owner first; a topic without metadata no longer throws
    2.4  AbstractStickyAssignor.assign  KIP-429: ``revocationRequired``, and a first balancing pass
                                        over the newly assigned partitions only

``assign`` reads as Kafka's method: ``prepopulate_current_assignments`` -> the potential-consumer
maps -> ``sort_partitions`` -> drop claims that are not valid any more -> ``balance``
(``assign_partition`` for each unassigned partition, the fixed set-asides,
``perform_reassignments``, the ``get_balance_score`` revert). Kafka's quirks are kept, not
repaired: in 2.2 a partition claimed by two members is kept by both, the last in
``currentAssignment``'s ``HashMap`` order being its recorded owner; a subscription to a topic
without metadata is a ``NullPointerException`` there, and a group with claims but no partition at
all a ``NoSuchElementException``; the balancing walks lists with repeats where a subscription
names a topic twice.

Java iteration orders that reach the answer are computed, not assumed (``javaorder``): the
``HashMap`` order of ``partition2AllPotentialConsumers`` (the tail of ``sortPartitions``), of
``currentAssignment`` (the owner of a doubly claimed partition), and of the per-partition
generation map (each member's kept claims, 2.3 on). The record's ownership rule is not read:
Kafka's ``assign`` collects the claims itself, and so does this transcription, from the raw
member data, because it needs what the rule throws away (claims on partitions that do not exist
count towards ``isFreshAssignment`` and the generation map's capacity; 2.3's previous owners).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import AssignorFailure
from ...javaorder import hashmap_capacity, hashmap_order, java_string_hash, java_string_key, topic_partition_hash
from ...model import DEFAULT_GENERATION, TopicPartition
from ..sticky_types import REFERENCE, PriorOwners, StickyInput, StickyResult
from .java_collections import NO_SUCH_ELEMENT, NPE, JavaNull, PartitionMovements, TreeSet, deref

if TYPE_CHECKING:
    from ..releases import Release

__all__ = ["Era", "ERA_2_2", "ERA_2_3", "ERA_2_4", "general_assign_2_2", "general_assign_2_3", "general_assign_2_4"]


@dataclass(frozen=True)
class Era:
    """What the method body of one release does differently from the others.

    ``kip_341``: 2.3's rewrite of ``prepopulateCurrentAssignments`` (a ``TreeMap<generation,
    member>`` per partition, the runner-up kept as ``prevAssignment``) and what came with it in
    the same release: ``sortPartitions`` lists previously moved partitions first,
    ``performReassignments`` hands a partition back to its previous owner first, topics without
    metadata are skipped, and an empty map counts as "identical".
    ``revocation_pass``: 2.4's ``revocationRequired`` and its first ``performReassignments`` over
    the newly assigned partitions.
    """

    version: str
    kip_341: bool
    revocation_pass: bool


ERA_2_2 = Era("2.2", kip_341=False, revocation_pass=False)
ERA_2_3 = Era("2.3", kip_341=True, revocation_pass=False)
ERA_2_4 = Era("2.4", kip_341=True, revocation_pass=True)


def general_assign_2_2(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """``StickyAssignor.assign`` of 2.2 (to 2.2.2)."""
    return _run(inp, ERA_2_2)


def general_assign_2_3(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """``StickyAssignor.assign`` of 2.3 (to 2.3.1, KIP-341)."""
    return _run(inp, ERA_2_3)


def general_assign_2_4(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """``AbstractStickyAssignor.assign`` of 2.4 (to 2.4.1, KIP-429), ahead of the cooperative adjustment."""
    return _run(inp, ERA_2_4)


def _run(inp: StickyInput, era: Era) -> StickyResult:
    try:
        assignment = Assign(inp, era).assign()
    except JavaNull as exc:
        raise AssignorFailure(f"sticky {era.version} dereferenced null: {exc}", kafka_exception=NPE) from None
    return StickyResult(
        assignment={m: tuple(assignment[m]) for m in inp.members},
        partitions_transferring_ownership=None,
        engine=REFERENCE,
    )


def _tp_hash(tp: TopicPartition) -> int:
    return topic_partition_hash(tp.topic, tp.partition)


def _remove_first(items: list, value) -> None:
    """``List.remove(Object)``: the first occurrence, nothing when absent."""
    try:
        items.remove(value)
    except ValueError:
        pass


class Assign:
    """The locals of one ``assign`` call: mutable, as Kafka's are, and dropped when it returns."""

    def __init__(self, inp: StickyInput, era: Era) -> None:
        self.inp = inp
        self.era = era
        self.partitions_per_topic = dict(inp.partitions_per_topic)
        self.subscriptions = {m: list(inp.subscriptions.get(m, ())) for m in inp.members}
        self.current_assignment: dict[str, list[TopicPartition]] = {}
        self.current_assignment_order: list[str] = []  # insertion order of the HashMap's keys
        self.prev_assignment: dict[TopicPartition, tuple[str, int]] = {}
        self.partition_movements = PartitionMovements()

    # -- Java HashMap orders (N1) ------------------------------------------------------------

    def _put_current(self, consumer: str, partitions: list[TopicPartition]) -> None:
        if consumer not in self.current_assignment:
            self.current_assignment_order.append(consumer)
        self.current_assignment[consumer] = partitions

    def _current_assignment_entries(self) -> list[str]:
        """``currentAssignment.entrySet()`` order: buckets by ``String.hashCode``, then insertion order."""
        keys = [m for m in self.current_assignment_order if m in self.current_assignment]
        return hashmap_order(keys, java_string_hash, capacity=hashmap_capacity(len(self.current_assignment_order)))

    def _topics_in_map_order(self) -> list[str]:
        """``partitionsPerTopic`` (a ``HashMap``) filled from the ``HashSet`` of every subscribed topic."""
        subscribed = [t for m in self.inp.members for t in self.subscriptions[m]]
        all_subscribed = hashmap_order(subscribed, java_string_hash)
        return hashmap_order([t for t in all_subscribed if t in self.partitions_per_topic], java_string_hash)

    # -- assign ------------------------------------------------------------------------------

    def assign(self) -> dict[str, list[TopicPartition]]:
        self.prepopulate_current_assignments()
        is_fresh_assignment = not self.current_assignment

        # partition2AllPotentialConsumers / consumer2AllPotentialPartitions (lists: a topic named twice counts twice)
        topics = self._topics_in_map_order()
        all_partitions = [TopicPartition(t, p) for t in topics for p in range(self.partitions_per_topic[t])]
        self.partition2_all_potential_consumers: dict[TopicPartition, list[str]] = {
            tp: [] for tp in hashmap_order(all_partitions, _tp_hash)
        }
        self.consumer2_all_potential_partitions: dict[str, list[TopicPartition]] = {}
        for consumer in self.inp.members:
            potential: list[TopicPartition] = []
            for topic in self.subscriptions[consumer]:
                count = self.partitions_per_topic.get(topic)
                if count is None:
                    if self.era.kip_341:
                        continue  # 2.3: .filter(topic -> partitionsPerTopic.get(topic) != null)
                    raise JavaNull(f"partitionsPerTopic.get({topic!r}) unboxed")
                for p in range(count):
                    tp = TopicPartition(topic, p)
                    potential.append(tp)
                    self.partition2_all_potential_consumers[tp].append(consumer)
            self.consumer2_all_potential_partitions[consumer] = potential
            if consumer not in self.current_assignment:
                self._put_current(consumer, [])
        self.potential_set = {c: set(tps) for c, tps in self.consumer2_all_potential_partitions.items()}

        self.current_partition_consumer: dict[TopicPartition, str] = {}
        for consumer in self._current_assignment_entries():
            for tp in self.current_assignment[consumer]:
                self.current_partition_consumer[tp] = consumer

        sorted_partitions = self.sort_partitions(is_fresh_assignment)
        unassigned_partitions, revocation_required = self.drop_invalid_claims(sorted_partitions)

        self.sorted_current_subscriptions = TreeSet(self._size_of)
        for consumer in self.current_assignment:
            self.sorted_current_subscriptions.add(consumer)
        self.balance(sorted_partitions, unassigned_partitions, revocation_required)
        return self.current_assignment

    def prepopulate_current_assignments(self) -> None:
        """``prepopulateCurrentAssignments``: 2.2 takes each member's list as it is; 2.3 resolves per partition."""
        if not self.era.kip_341:
            for consumer in self.inp.members:
                data = self.inp.member_data[consumer]
                # Kafka skips a member without user data; one that sent an empty list is put, and so
                # makes the assignment not fresh. Claims only ever come from user data.
                if data.partitions or consumer in self.inp.user_data_sent:
                    self._put_current(consumer, [TopicPartition(*tp) for tp in data.partitions])
            return
        by_generation: dict[TopicPartition, dict[int, str]] = {}
        for consumer in self.inp.members:
            data = self.inp.member_data[consumer]
            generation = DEFAULT_GENERATION if data.generation is None else data.generation
            for tp in data.partitions:
                tp = TopicPartition(*tp)
                consumers = by_generation.get(tp)
                if consumers is None:
                    by_generation[tp] = {generation: consumer}
                elif data.generation is not None and data.generation in consumers:
                    continue  # "assigned to multiple consumers following sticky assignment generation": skipped
                else:
                    consumers[generation] = consumer
        for tp in hashmap_order(list(by_generation), _tp_hash):
            consumers = by_generation[tp]
            generations = sorted(consumers, reverse=True)
            consumer = consumers[generations[0]]
            if consumer not in self.current_assignment:
                self._put_current(consumer, [])
            self.current_assignment[consumer].append(tp)
            if len(generations) > 1:
                self.prev_assignment[tp] = (consumers[generations[1]], generations[1])

    def sort_partitions(self, is_fresh_assignment: bool) -> list[TopicPartition]:
        """``sortPartitions``: round robin over the current owners when subscriptions are identical, else by
        fewest potential consumers (``PartitionComparator``)."""
        p2c = self.partition2_all_potential_consumers
        sorted_partitions: list[TopicPartition] = []
        if not is_fresh_assignment and self.are_subscriptions_identical():
            assignments = {c: [tp for tp in tps if tp in p2c] for c, tps in self.current_assignment.items()}
            sorted_consumers = TreeSet(lambda c: len(assignments[c]))
            for consumer in assignments:
                sorted_consumers.add(consumer)
            # prevAssignment.keySet() in HashMap order (empty before 2.3)
            moved_before = hashmap_order(list(self.prev_assignment), _tp_hash)
            while list(sorted_consumers):
                consumer = sorted_consumers.last()
                sorted_consumers.remove(consumer)  # pollLast
                remaining = assignments[consumer]
                prev_partitions = [tp for tp in moved_before if tp in remaining]
                if prev_partitions:
                    tp = prev_partitions[0]
                    _remove_first(remaining, tp)
                    sorted_partitions.append(tp)
                    sorted_consumers.add(consumer)
                elif remaining:
                    sorted_partitions.append(remaining.pop(0))
                    sorted_consumers.add(consumer)
            listed = set(sorted_partitions)
            sorted_partitions.extend(tp for tp in p2c if tp not in listed)
        else:
            sorted_partitions = sorted(p2c, key=lambda tp: (len(p2c[tp]), java_string_key(tp.topic), tp.partition))
        return sorted_partitions

    def are_subscriptions_identical(self) -> bool:
        """``areSubscriptionsIdentical``: every partition has the same potential consumers, every consumer the
        same potential partitions (``hasIdenticalListElements``: consecutive ``containsAll`` both ways)."""
        return self.has_identical_list_elements(list(self.partition2_all_potential_consumers.values())) and (
            self.has_identical_list_elements(list(self.consumer2_all_potential_partitions.values()))
        )

    def has_identical_list_elements(self, lists: list[list]) -> bool:
        if not lists:
            if self.era.kip_341:
                return True
            raise AssignorFailure("hasIdenticalListElements of an empty collection", kafka_exception=NO_SUCH_ELEMENT)
        first = set(lists[0])
        return all(set(other) == first for other in lists[1:])

    def drop_invalid_claims(self, sorted_partitions: list[TopicPartition]) -> tuple[list[TopicPartition], bool]:
        """Claims on partitions that do not exist leave both maps; claims on topics the member no longer
        subscribes to leave its list only (the owner map keeps them, as Kafka's does); the rest are kept
        and leave ``unassignedPartitions`` (``List.remove``: one occurrence per kept claim)."""
        p2c = self.partition2_all_potential_consumers
        revocation_required = False
        kept_claims: dict[TopicPartition, int] = {}
        for consumer in self._current_assignment_entries():
            kept = []
            for tp in self.current_assignment[consumer]:
                if tp not in p2c:
                    self.current_partition_consumer.pop(tp, None)
                elif tp.topic not in self.subscriptions[consumer]:
                    revocation_required = True
                else:
                    kept.append(tp)
                    kept_claims[tp] = kept_claims.get(tp, 0) + 1
            self.current_assignment[consumer][:] = kept
        unassigned = []
        for tp in sorted_partitions:
            if kept_claims.get(tp, 0) > 0:
                kept_claims[tp] -= 1
            else:
                unassigned.append(tp)
        return unassigned, revocation_required

    # -- balance -----------------------------------------------------------------------------

    def _size_of(self, consumer: str | None) -> int:
        return len(deref(self.current_assignment.get(consumer), f"currentAssignment.get({consumer!r})"))

    def is_balanced(self) -> bool:
        """``isBalanced``: sizes within one, or no member could take a partition from a bigger one."""
        tree = self.sorted_current_subscriptions
        if self._size_of(tree.first()) >= self._size_of(tree.last()) - 1:
            return True
        all_partitions: dict[TopicPartition, str] = {}
        for consumer in self._current_assignment_entries():
            for tp in self.current_assignment[consumer]:
                all_partitions[tp] = consumer
        for consumer in tree:
            partitions = self.current_assignment[consumer]
            count = len(partitions)
            potential = self.consumer2_all_potential_partitions[consumer]
            if count == len(potential):
                continue
            held = set(partitions)
            for tp in potential:
                if tp not in held and count < self._size_of(all_partitions.get(tp)):
                    return False
        return True

    def get_balance_score(self, assignment: dict[str, list[TopicPartition]]) -> int:
        sizes = [len(tps) for tps in assignment.values()]
        return sum(abs(sizes[i] - sizes[j]) for i in range(len(sizes)) for j in range(i + 1, len(sizes)))

    def assign_partition(self, tp: TopicPartition) -> None:
        """``assignPartition``: to the least loaded member that may consume it."""
        for consumer in self.sorted_current_subscriptions:
            if tp in self.potential_set[consumer]:
                self.sorted_current_subscriptions.remove(consumer)
                self.current_assignment[consumer].append(tp)
                self.current_partition_consumer[tp] = consumer
                self.sorted_current_subscriptions.add(consumer)
                return

    def can_partition_participate(self, tp: TopicPartition) -> bool:
        return len(self.partition2_all_potential_consumers[tp]) >= 2

    def can_consumer_participate(self, consumer: str) -> bool:
        partitions = deref(self.current_assignment.get(consumer), f"currentAssignment.get({consumer!r})")
        if len(partitions) < len(self.consumer2_all_potential_partitions[consumer]):
            return True
        return any(self.can_partition_participate(tp) for tp in partitions)

    def balance(self, sorted_partitions: list[TopicPartition], unassigned: list[TopicPartition], revocation_required: bool) -> None:
        initializing = not self.current_assignment[self.sorted_current_subscriptions.last()]
        for tp in unassigned:
            if self.partition2_all_potential_consumers[tp]:
                self.assign_partition(tp)

        fixed_partitions = {tp for tp in self.partition2_all_potential_consumers if not self.can_partition_participate(tp)}
        sorted_partitions[:] = [tp for tp in sorted_partitions if tp not in fixed_partitions]
        if self.era.revocation_pass:
            unassigned[:] = [tp for tp in unassigned if tp not in fixed_partitions]

        fixed_assignments: dict[str, list[TopicPartition]] = {}
        for consumer in self.consumer2_all_potential_partitions:
            if not self.can_consumer_participate(consumer):
                self.sorted_current_subscriptions.remove(consumer)
                fixed_assignments[consumer] = self.current_assignment.pop(consumer)

        pre_balance_assignment = {c: list(tps) for c, tps in self.current_assignment.items()}
        pre_balance_partition_consumers = dict(self.current_partition_consumer)

        if self.era.revocation_pass and not revocation_required:
            self.perform_reassignments(unassigned)
        reassignment_performed = self.perform_reassignments(sorted_partitions)

        if (
            not initializing
            and reassignment_performed
            and self.get_balance_score(self.current_assignment) >= self.get_balance_score(pre_balance_assignment)
        ):
            for consumer, tps in pre_balance_assignment.items():
                self.current_assignment[consumer] = tps
            self.current_partition_consumer = pre_balance_partition_consumers

        for consumer, tps in fixed_assignments.items():
            self.current_assignment[consumer] = tps

    def perform_reassignments(self, reassignable: list[TopicPartition]) -> bool:
        """``performReassignments``: walk the list while unbalanced, moving a partition when its owner has two
        more than its previous owner (2.3 on) or than any potential consumer; repeat while anything moved."""
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
                for other in self.partition2_all_potential_consumers[tp]:
                    if self._size_of(consumer) > self._size_of(other) + 1:
                        self.reassign_partition(tp)
                        performed = modified = True
                        break
            if not modified:
                return performed

    def reassign_partition(self, tp: TopicPartition) -> None:
        new_consumer = None
        for other in self.sorted_current_subscriptions:
            if tp in self.potential_set[other]:
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
        _remove_first(deref(self.current_assignment.get(old_consumer), f"currentAssignment.get({old_consumer!r})"), tp)
        deref(self.current_assignment.get(new_consumer), f"currentAssignment.get({new_consumer!r})").append(tp)
        self.current_partition_consumer[tp] = new_consumer
        tree.add(new_consumer)
        tree.add(old_consumer)
