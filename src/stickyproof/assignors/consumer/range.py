"""The group coordinator's ``RangeAssignor`` (``org.apache.kafka.coordinator.group.assignor``, Kafka 4.x), ported.

Per topic, its subscribers sorted (static members first by instance id, then the others by member
id, both in ``String.compareTo`` order) take contiguous ranges: ``numPartitions / subscribers``
each, the first ``numPartitions % subscribers`` of them one more. The current target plays no part,
so the result is sticky exactly while membership and instance ids stay the same, and not when a
member is replaced (a new member id sorts elsewhere). The homogeneous path counts every member as
a subscriber of every topic; the heterogeneous path counts each topic's own subscribers.
"""

from __future__ import annotations

from ...errors import AssignorFailure
from ...javaorder import java_string_key
from .spec import HOMOGENEOUS, ConsumerGroupSpec, MemberSpec, TopicId

__all__ = ["assign_consumer_range", "sort_member_ids"]


def sort_member_ids(members: tuple[MemberSpec, ...]) -> list[MemberSpec]:
    """``RangeAssignor.sortMemberIds``: members with an instance id first, by it; then by member id."""
    return sorted(
        members,
        key=lambda m: (0, java_string_key(m.instance_id), b"") if m.instance_id is not None else (1, b"", java_string_key(m.member_id)),
    )


def assign_consumer_range(spec: ConsumerGroupSpec) -> dict[str, list[tuple[TopicId, list[int]]]]:
    """``RangeAssignor.assign``: every member's new target."""
    if not spec.members:
        return {}
    members = sort_member_ids(spec.members)
    if spec.subscription_type == HOMOGENEOUS:
        subscribers = {t: len(spec.members) for t in members[0].subscribed}
    else:
        subscribers = {}
        for m in members:
            for t in m.subscribed:
                subscribers[t] = subscribers.get(t, 0) + 1
    for topic in subscribers:
        if spec.num_partitions(topic) == -1:
            raise AssignorFailure("Member is subscribed to a non-existent topic", kafka_exception="PartitionAssignorException")
    # Topics as positions in flat lists: one hash of each topic id per member instead of five.
    position = {t: i for i, t in enumerate(subscribers)}
    counts = [spec.num_partitions(t) for t in subscribers]
    quotas = [c // n for c, n in zip(counts, subscribers.values())]
    extra = [c % n for c, n in zip(counts, subscribers.values())]
    next_range = [0] * len(counts)
    homogeneous = [(t, position[t]) for t in members[0].subscribed] if spec.subscription_type == HOMOGENEOUS else None
    targets: dict[str, list[tuple[TopicId, list[int]]]] = {}
    for m in members:
        topics = homogeneous if homogeneous is not None else [(t, position[t]) for t in m.subscribed]
        target = []
        for topic, i in topics:
            quota = quotas[i]
            if extra[i] > 0:
                quota += 1
                extra[i] -= 1
            start = next_range[i]
            end = next_range[i] = min(start + quota, counts[i])
            if start < end:
                target.append((topic, list(range(start, end))))
        targets[m.member_id] = target
    return targets
