"""``UniformHomogeneousAssignmentBuilder`` (Kafka 4.x, after KAFKA-18688's fix), ported.

Every member subscribes to the same topics. Each member keeps its current target up to its quota
(``minimumMemberQuota``, plus one for as many members as there are partitions left over), what
exceeds the quota is revoked, and the unassigned partitions are dealt to the members still under
quota in ``memberIds()`` order. Ties are Java's: which topic's partitions a member keeps follows
its target map's iteration order, which partitions follow its sets' order, and the unassigned
list starts with never-assigned partitions in the subscription set's order.

KAFKA-18688 (fixed in 4.0.1 and 4.1.0; 4.0.0 has the old code): before the fix a member took the extra partition whenever one was left, so only
members early in iteration order could keep an owned "+1" partition and an already balanced
group moved partitions. Now a member under ``minQuota + 1`` gives up its claim to the extra
partition while enough members remain to take the extras (``give_up_extra``).
"""

from __future__ import annotations

from ...errors import AssignorFailure
from .spec import ConsumerGroupSpec, TopicId, hashset_copy_capacity, uuid_set_order

__all__ = ["build_homogeneous"]

PARTITION_ASSIGNOR_EXCEPTION = "PartitionAssignorException"

Target = list[tuple[TopicId, list[int]]]


def build_homogeneous(spec: ConsumerGroupSpec, *, kafka_18688_fixed: bool = True) -> dict[str, Target]:
    """The new target of every member (``build``); ``kafka_18688_fixed=False`` is the code before the fix."""
    first = spec.members[0]
    subscribed = uuid_set_order(first.subscribed, capacity=hashset_copy_capacity(first.subscription_size))
    if not subscribed:
        return {}
    unassigned, total = _unassigned_partitions(spec, subscribed)
    num_members = len(spec.members)
    targets, unfilled = _maybe_revoke_partitions(
        spec, set(subscribed), total // num_members, total % num_members, unassigned, kafka_18688_fixed
    )
    _assign_remaining_partitions(targets, unfilled, unassigned)
    return targets


def _unassigned_partitions(spec: ConsumerGroupSpec, subscribed: tuple[TopicId, ...]) -> tuple[list[tuple[TopicId, int]], int]:
    """Partitions no target holds (``isPartitionAssigned`` false), topic by topic in the set's order."""
    assigned = spec.assigned_partitions()
    unassigned: list[tuple[TopicId, int]] = []
    total = 0
    for topic in subscribed:
        count = spec.num_partitions(topic)
        if count == -1:
            raise AssignorFailure(
                f"Members are subscribed to topic {topic} which doesn't exist in the topic metadata.",
                kafka_exception=PARTITION_ASSIGNOR_EXCEPTION,
            )
        unassigned.extend((topic, p) for p in range(count) if (topic, p) not in assigned)
        total += count
    return unassigned, total


def _maybe_revoke_partitions(
    spec: ConsumerGroupSpec,
    subscribed: set[TopicId],
    min_quota: int,
    remaining_extra: int,
    unassigned: list[tuple[TopicId, int]],
    kafka_18688_fixed: bool,
) -> tuple[dict[str, Target], list[tuple[str, int]]]:
    """Each member keeps its target up to its quota; the rest joins ``unassigned`` (in set order).

    A target's topics the group no longer subscribes to are dropped whole."""
    targets: dict[str, Target] = {}
    unfilled: list[tuple[str, int]] = []
    member_count = len(spec.members)
    for member_index, member in enumerate(spec.members):
        quota = min_quota
        has_extra = False
        if remaining_extra > 0:
            quota += 1
            has_extra = True
        kept: Target = []
        for topic, partitions in member.target:
            if topic not in subscribed:
                continue
            if len(partitions) <= quota:
                quota -= len(partitions)
                kept.append((topic, list(partitions)))
                continue
            keep = []
            for partition in partitions:
                if quota > 0:
                    quota -= 1
                    keep.append(partition)
                else:
                    unassigned.append((topic, partition))
            if keep:
                kept.append((topic, keep))
        if kafka_18688_fixed and give_up_extra(quota, has_extra, member_count - member_index, remaining_extra):
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((member.member_id, quota))
        if has_extra:
            remaining_extra -= 1
        targets[member.member_id] = kept
    return targets, unfilled


def give_up_extra(quota: int, has_extra: bool, members_left: int, remaining_extra: int) -> bool:
    """KAFKA-18688's fix: a member that did not fill its ``minQuota + 1`` from what it holds leaves
    the extra partition to later members while more members remain (itself included) than extras."""
    return quota > 0 and has_extra and members_left > remaining_extra


def _assign_remaining_partitions(
    targets: dict[str, Target], unfilled: list[tuple[str, int]], unassigned: list[tuple[TopicId, int]]
) -> None:
    """Deal ``unassigned`` in order to the members under quota, in ``memberIds()`` order."""
    index = 0
    for member_id, remaining in unfilled:
        target = targets[member_id]
        by_topic = {t: parts for t, parts in target}
        for _ in range(remaining):
            if index >= len(unassigned):
                break
            topic, partition = unassigned[index]
            index += 1
            if topic not in by_topic:
                by_topic[topic] = []
                target.append((topic, by_topic[topic]))
            by_topic[topic].append(partition)
    if index < len(unassigned):
        raise AssignorFailure("Partitions were left unassigned", kafka_exception=PARTITION_ASSIGNOR_EXCEPTION)
