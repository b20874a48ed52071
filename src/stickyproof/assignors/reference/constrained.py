"""The constrained path, transcribed: ``AbstractStickyAssignor.ConstrainedAssignmentBuilder`` (3.0 on), step by step.

This is the slow, obviously-faithful twin of ``constrained.py``'s fast engine (docs/rules.md
R15-R25, R48). ``constrained_reference`` reads as Kafka's ``build()``::

    assign_owned_partitions             R16-R17  keep owned partitions up to the quotas, members in map order
    get_unassigned_partitions           R18      the two-pointer merge (and its §10 K1 desynchronisation)
    (sort the unfilled lists)           R19
    sort_partitions_by_rack_consumers   R18      rack mode: fewest co-located members first
    assign_rack_aware_round_robin       R20      rack mode only
    assign_round_robin                  R21      (assign_new_partition records R25's transferring)
    verify_unfilled_members             R22

It runs over Python lists exactly as Kafka does, so it handles every input Kafka handles: rack
mode, the releases before KAFKA-16277 / KAFKA-15170 (``Release.quota_order``,
``Release.kafka_15170``), and Kafka's failure modes: a claimed partition number past the topic's
count, or a partition kept by two members, makes ``getUnassignedPartitions`` re-report kept
partitions, and the round robin then over-fills a member or throws (§10 K1). The builder's
fields live in a ``ConstrainedAssignmentBuilder`` made for one call and dropped when it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

from ...errors import AssignorFailure
from ...javaorder import java_string_key
from ...model import TopicPartition
from ..sticky_types import REFERENCE, PriorOwners, QuotaOrder, StickyInput, StickyResult

if TYPE_CHECKING:
    from ..releases import Release

__all__ = [
    "constrained_reference",
    "ConstrainedAssignmentBuilder",
    "RackInfo",
    "quotas",
    "get_unassigned_partitions",
    "verify_unfilled_members",
    "NO_MORE_UNFILLED",
    "NOT_REACHED_EXPECTED",
]

NO_MORE_UNFILLED = "No more unfilled consumers to be assigned."
NOT_REACHED_EXPECTED = (
    "We haven't reached the expected number of members with more than the minQuota partitions, "
    "but no more partitions to be assigned"
)


def quotas(total_partitions: int, num_members: int) -> tuple[int, int, int]:
    """R15: ``minQuota``, ``maxQuota``, ``expectedNumMembersWithOverMinQuotaPartitions``; R14 on an empty group."""
    if num_members == 0:
        # Java computes the quotas in double (no throw) but the int modulo divides by zero.
        raise AssignorFailure("/ by zero", kafka_exception="ArithmeticException")
    return total_partitions // num_members, -(-total_partitions // num_members), total_partitions % num_members


def owned_sort_key(tp: TopicPartition) -> tuple[int, bytes]:
    """R16 step 2 (KAFKA-16277): ``comparing(TopicPartition::partition).thenComparing(TopicPartition::topic)``."""
    return (tp[1], java_string_key(tp[0]))


def _tp_sort_key(tp: TopicPartition) -> tuple[bytes, int]:
    """``comparing(TopicPartition::topic).thenComparing(TopicPartition::partition)``."""
    return (java_string_key(tp[0]), tp[1])


# ------------------------------------------------------------------------------------------
# Rack information (R48; AbstractStickyAssignor.RackInfo)


class RackInfo:
    """``RackInfo`` restricted to what the constrained builder asks: mismatch, rack order, next rack consumer."""

    def __init__(self, inp: StickyInput):
        self.on = inp.rack_aware
        self.consumer_racks = {m: r for m, r in inp.member_rack.items() if r} if inp.rack_aware else {}
        self._partition_racks = inp.partition_racks
        consumers_by_rack: dict[str, int] = {}
        for r in inp.member_rack.values():
            if r:
                consumers_by_rack[r] = consumers_by_rack.get(r, 0) + 1
        self._consumers_by_rack = consumers_by_rack

    def racks(self, tp: TopicPartition) -> frozenset[str]:
        per_partition = self._partition_racks.get(tp[0], ())
        return per_partition[tp[1]] if 0 <= tp[1] < len(per_partition) else frozenset()

    def mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        """``racksMismatch``: a member with a rack, and no replica of ``tp`` on it (a member without a rack never mismatches)."""
        rack = self.consumer_racks.get(consumer)
        return rack is not None and rack not in self.racks(tp)

    def num_consumers(self, tp: TopicPartition) -> int:
        """``numConsumersByPartition``: members whose rack holds a replica of ``tp`` (R18's sort key)."""
        return sum(self._consumers_by_rack.get(r, 0) for r in self.racks(tp))

    def next_rack_consumer(self, tp: TopicPartition, consumers: Sequence[str], first: int) -> int:
        """``nextRackConsumer``: from ``first``, wrapping, the first member on a rack holding ``tp``; -1 if none."""
        racks = self.racks(tp)
        if not racks:
            return -1
        n = len(consumers)
        for i in range(n):
            index = (first + i) % n
            rack = self.consumer_racks.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


# ------------------------------------------------------------------------------------------
# The builder's fields


@dataclass
class ConstrainedAssignmentBuilder:
    """The fields of Kafka's ``ConstrainedAssignmentBuilder`` for one build (R15).

    ``maybe_revoked_partitions`` (KAFKA-15170 on: tp -> the member it was taken from) and
    ``all_revoked_partitions`` (before it: a plain set) are the two ways releases remembered
    partitions taken away in phase 1; only one is used, as ``kafka_15170`` says.
    """

    members: list[str]
    current_assignment: Mapping[str, Sequence[TopicPartition]]
    partitions_with_multiple_previous_owners: frozenset[TopicPartition]
    partitions_per_topic: Mapping[str, int]
    rack_info: RackInfo
    quota_order: QuotaOrder
    kafka_15170: bool
    min_quota: int
    max_quota: int
    expected_num_members_with_over_min_quota_partitions: int
    current_num_members_with_over_min_quota_partitions: int = 0
    assignment: dict[str, list[TopicPartition]] = field(default_factory=dict)
    assigned_partitions: list[TopicPartition] = field(default_factory=list)
    maybe_revoked_partitions: dict[TopicPartition, str] = field(default_factory=dict)
    all_revoked_partitions: set[TopicPartition] = field(default_factory=set)
    unfilled_members_with_under_min_quota_partitions: list[str] = field(default_factory=list)
    unfilled_members_with_exactly_min_quota_partitions: list[str] = field(default_factory=list)
    partitions_transferring_ownership: dict[TopicPartition, str] = field(default_factory=dict)

    @property
    def over_min_quota_slots_left(self) -> bool:
        """``currentNumMembersWithOverMinQuotaPartitions < expectedNumMembersWithOverMinQuotaPartitions``."""
        return (
            self.current_num_members_with_over_min_quota_partitions
            < self.expected_num_members_with_over_min_quota_partitions
        )

    def count_member_over_min_quota(self) -> None:
        """One more member at ``maxQuota``; once the expected number is reached, members at ``minQuota`` are filled."""
        self.current_num_members_with_over_min_quota_partitions += 1
        if (
            self.current_num_members_with_over_min_quota_partitions
            == self.expected_num_members_with_over_min_quota_partitions
        ):
            self.unfilled_members_with_exactly_min_quota_partitions.clear()


def new_builder(inp: StickyInput, prior: PriorOwners, release: Release) -> ConstrainedAssignmentBuilder:
    """The constructor: quotas from the partition total and the member count (R15)."""
    members = list(inp.members)
    ppt = inp.partitions_per_topic
    min_quota, max_quota, expected = quotas(sum(ppt.values()), len(members))
    return ConstrainedAssignmentBuilder(
        members=members,
        current_assignment=prior.consumer_to_owned_partitions,
        partitions_with_multiple_previous_owners=prior.partitions_with_multiple_previous_owners,
        partitions_per_topic=ppt,
        rack_info=RackInfo(inp),
        quota_order=release.quota_order,
        kafka_15170=release.kafka_15170,
        min_quota=min_quota,
        max_quota=max_quota,
        expected_num_members_with_over_min_quota_partitions=expected,
        assignment={m: [] for m in members},
    )


# ------------------------------------------------------------------------------------------
# build() and its steps


def constrained_reference(
    inp: StickyInput, prior: PriorOwners, release: Release, *, declined: str | None = None
) -> StickyResult:
    """``ConstrainedAssignmentBuilder.build``, exactly as Kafka runs it (R15-R25).

    ``declined``: why the fast engine handed this input over (``engines.fast_or_reference``).
    """
    b = new_builder(inp, prior, release)
    assign_owned_partitions(b)
    unassigned = get_unassigned_partitions(b.partitions_per_topic, b.assigned_partitions)
    b.unfilled_members_with_under_min_quota_partitions.sort(key=java_string_key)  # R19
    b.unfilled_members_with_exactly_min_quota_partitions.sort(key=java_string_key)
    unassigned = sort_partitions_by_rack_consumers(b.rack_info, unassigned)
    unassigned = assign_rack_aware_round_robin(b, unassigned)
    assign_round_robin(b, unassigned)
    verify_unfilled_members(b)
    return StickyResult(
        {m: tuple(v) for m, v in b.assignment.items()},
        b.partitions_transferring_ownership,
        engine=REFERENCE,
        declined=declined,
    )


def _revoke(b: ConstrainedAssignmentBuilder, tp: TopicPartition, member: str) -> None:
    """A claim over the member's quota: maybe revoked (KAFKA-15170 remembers from whom)."""
    if b.kafka_15170:
        b.maybe_revoked_partitions[tp] = member
    else:
        b.all_revoked_partitions.add(tp)


def _keep(b: ConstrainedAssignmentBuilder, member: str, kept: Sequence[TopicPartition]) -> None:
    b.assignment[member].extend(kept)
    b.assigned_partitions.extend(kept)


def assign_owned_partitions(b: ConstrainedAssignmentBuilder) -> None:
    """R16-R17 ``assignOwnedPartitions``: members in map order keep owned partitions up to their quota.

    Rack-mismatched claims are dropped first (R48), the rest taken in ``quota_order``, multiply
    claimed ones stripped (R17). The first members owning ``maxQuota`` or more take the
    ``expectedNumMembersWithOverMinQuotaPartitions`` slots: first come, first served (R16 step 5).
    """
    rack = b.rack_info
    dup = b.partitions_with_multiple_previous_owners
    min_quota, max_quota = b.min_quota, b.max_quota
    for member in b.members:
        owned: list[TopicPartition] = []
        for tp in b.current_assignment.get(member, ()):
            if rack.mismatch(member, tp):
                if b.kafka_15170:
                    b.maybe_revoked_partitions[tp] = member
            else:
                owned.append(tp)
        if b.quota_order is QuotaOrder.PARTITION_THEN_TOPIC:
            owned.sort(key=owned_sort_key)
        for tp in dup:
            if tp in owned:
                owned.remove(tp)
        if len(owned) < min_quota:
            _keep(b, member, owned)
            b.unfilled_members_with_under_min_quota_partitions.append(member)
        elif len(owned) >= max_quota and b.over_min_quota_slots_left:
            b.count_member_over_min_quota()
            _keep(b, member, owned[:max_quota])
            for tp in owned[max_quota:]:
                _revoke(b, tp, member)
        else:
            _keep(b, member, owned[:min_quota])
            for tp in owned[min_quota:]:
                _revoke(b, tp, member)
            if b.over_min_quota_slots_left:
                b.unfilled_members_with_exactly_min_quota_partitions.append(member)


def get_unassigned_partitions(
    partitions_per_topic: Mapping[str, int], assigned: list[TopicPartition]
) -> list[TopicPartition]:
    """``getUnassignedPartitions``: a two-pointer merge of all partitions against the sorted kept ones.

    The merge assumes every kept partition exists and is kept once. When not (§10 K1: a claim on
    ``t-5`` of a 4-partition topic; or a partition kept by two members), the pointer stops
    advancing and every later partition is reported unassigned, kept or not.
    """
    sorted_topics = sorted(partitions_per_topic, key=java_string_key)
    everything = [TopicPartition(t, p) for t in sorted_topics for p in range(partitions_per_topic[t])]
    if not assigned:
        return everything
    ordered = sorted(assigned, key=_tp_sort_key)
    pointer = iter(ordered)
    next_assigned = next(pointer)
    add_directly = False
    out: list[TopicPartition] = []
    for tp in everything:
        if add_directly or not (next_assigned[0] == tp.topic and next_assigned[1] == tp.partition):
            out.append(tp)
        else:
            try:
                next_assigned = next(pointer)
            except StopIteration:
                add_directly = True
    return out


def sort_partitions_by_rack_consumers(rack: RackInfo, unassigned: list[TopicPartition]) -> list[TopicPartition]:
    """R18 ``sortPartitionsByRackConsumers``: in rack mode, stably, fewest co-located members first."""
    if rack.on:
        unassigned.sort(key=rack.num_consumers)
    return unassigned


def assign_new_partition(b: ConstrainedAssignmentBuilder, tp: TopicPartition, member: str) -> int:
    """``assignNewPartition``: grant ``tp``; R25: transferring if taken from another member, or contested."""
    b.assignment[member].append(tp)
    if b.kafka_15170:
        moved = tp in b.maybe_revoked_partitions and b.maybe_revoked_partitions[tp] != member
    else:
        moved = tp in b.all_revoked_partitions
    if moved or tp in b.partitions_with_multiple_previous_owners:
        b.partitions_transferring_ownership[tp] = member
    return len(b.assignment[member])


def assign_rack_aware_round_robin(b: ConstrainedAssignmentBuilder, unassigned: list[TopicPartition]) -> list[TopicPartition]:
    """R20 ``assignRackAwareRoundRobin`` (rack mode only): grant each partition to a co-located unfilled member.

    A cursor walks ``unfilledMembersWithUnderMinQuotaPartitions``; when no member there is on a
    replica's rack, the first co-located member at ``minQuota`` may take it. Returns the partitions
    left for the plain round robin. Before KAFKA-15170 a member reaching ``minQuota`` always
    joined the at-``minQuota`` list and reaching ``maxQuota`` there was not counted.
    """
    rack = b.rack_info
    if not rack.consumer_racks:
        return unassigned
    under_min = b.unfilled_members_with_under_min_quota_partitions
    at_min = b.unfilled_members_with_exactly_min_quota_partitions
    remaining: list[TopicPartition] = []
    next_index = 0
    for tp in unassigned:
        consumer = None
        index = rack.next_rack_consumer(tp, under_min, next_index)
        if index >= 0:
            consumer = under_min[index]
            count = len(b.assignment[consumer]) + 1
            if count >= b.min_quota:
                under_min.remove(consumer)
                if count < b.max_quota and (not b.kafka_15170 or b.over_min_quota_slots_left):
                    at_min.append(consumer)
            else:
                index += 1
            next_index = index % len(under_min) if under_min else 0
        elif at_min:
            first = rack.next_rack_consumer(tp, at_min, 0)
            if first >= 0:
                consumer = at_min[first]
                if len(b.assignment[consumer]) + 1 == b.max_quota:
                    del at_min[first]
                    if b.kafka_15170:
                        b.count_member_over_min_quota()
        if consumer is not None:
            assign_new_partition(b, tp, consumer)
        else:
            remaining.append(tp)
    return remaining


def assign_round_robin(b: ConstrainedAssignmentBuilder, unassigned: Sequence[TopicPartition]) -> None:
    """R21 ``assignRoundRobin``: members under ``minQuota`` in turn, then one more each for members at ``minQuota``.

    ``cursor`` emulates the ``LinkedList`` iterator over the under-``minQuota`` list, including its
    stale ``remove()`` after a poll from the at-``minQuota`` list (an ``IllegalStateException``).
    """
    under_min = b.unfilled_members_with_under_min_quota_partitions
    at_min = b.unfilled_members_with_exactly_min_quota_partitions
    cursor = 0
    for tp in unassigned:
        from_iterator = True
        if cursor < len(under_min):
            consumer = under_min[cursor]
        elif not under_min and not at_min:
            raise AssignorFailure(NO_MORE_UNFILLED, kafka_exception="IllegalStateException")
        elif not under_min:
            consumer = at_min.pop(0)
            from_iterator = False
        else:
            cursor = 0
            consumer = under_min[0]
        count = assign_new_partition(b, tp, consumer)
        if count == b.min_quota:
            if not from_iterator:  # the stale iterator's remove(): lastReturned already unlinked
                raise AssignorFailure("iterator remove() without next()", kafka_exception="IllegalStateException")
            del under_min[cursor]
            at_min.append(consumer)
        else:
            if count == b.max_quota:
                b.current_num_members_with_over_min_quota_partitions += 1
            if from_iterator:
                cursor += 1


def verify_unfilled_members(b: ConstrainedAssignmentBuilder) -> None:
    """R22 ``verifyUnfilledMembers``: members still under ``minQuota`` make the assignment fail."""
    under_min = b.unfilled_members_with_under_min_quota_partitions
    if not under_min:
        return
    if b.current_num_members_with_over_min_quota_partitions != b.expected_num_members_with_over_min_quota_partitions:
        raise AssignorFailure(NOT_REACHED_EXPECTED, kafka_exception="IllegalStateException")
    for member in under_min:
        if len(b.assignment[member]) != b.min_quota:
            raise AssignorFailure(
                f"Consumer: [{member}] doesn't reach minQuota partitions, and no more partitions to be assigned",
                kafka_exception="IllegalStateException",
            )
