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

from array import array
from typing import Sequence

import numpy as np

from ...errors import AssignorFailure
from .spec import ConsumerGroupSpec, SpecIndex, TopicId, hashset_copy_capacity

try:
    import cython
except ImportError:  # no Cython at run time: the pure-Python port, its declarations inert
    from . import _cython_shim as cython

__all__ = ["build_homogeneous"]

PARTITION_ASSIGNOR_EXCEPTION = "PartitionAssignorException"

Target = list[tuple[TopicId, list[int]]]
# Partitions of one topic (by position) in the unassigned list's order, a run of Java's per-partition
# list: (topic, its partitions, how many). A list of its own (a slice of it is a new list), or None
# for every partition of a topic no target holds, 0 to the count, dealt without building the run.
Segment = tuple[int, "list[int] | None", int]


def build_homogeneous(spec: ConsumerGroupSpec, *, kafka_18688_fixed: bool = True) -> dict[str, Target]:
    """The new target of every member (``build``); ``kafka_18688_fixed=False`` is the code before the fix.

    Kafka walks partition by partition; the port moves runs of one topic's partitions at once
    (``Segment``s), which deals the very same partitions in the very same order."""
    index = spec.index
    first = spec.members[0]
    subscribed = _set_order(index.subscribed[0], index.spread_hash, hashset_copy_capacity(first.subscription_size))
    if not subscribed:
        return {}
    unassigned, total = _unassigned_partitions(index, subscribed)
    num_members = len(spec.members)
    targets, unfilled = _maybe_revoke_partitions(
        spec, subscribed, total // num_members, total % num_members, unassigned, kafka_18688_fixed
    )
    _assign_remaining_partitions(index.topics, unfilled, unassigned)
    return targets


@cython.locals(mask=cython.longlong, h=cython.longlong, i=cython.Py_ssize_t, n=cython.Py_ssize_t,
               b=cython.Py_ssize_t, size=cython.Py_ssize_t, buckets=cython.int[:], starts=cython.int[:], out=list,
               spread_hash=tuple)
def _set_order(positions: Sequence[int], spread_hash: tuple, capacity: int) -> list[int]:
    """The iteration order of a Java ``HashSet<Uuid>`` of that capacity filled with these distinct
    topic positions in order (their ids' spread hashes in ``SpecIndex.spread_hash``): bucket by
    bucket, insertion order within a bucket. A counting sort by bucket, which keeps that order."""
    mask = capacity - 1
    size = capacity
    n = len(positions)
    buckets = array("i", [0]) * n
    starts = array("i", [0]) * (size + 1)
    for i in range(n):
        h = spread_hash[positions[i]]
        b = h & mask
        buckets[i] = b
        starts[b + 1] += 1
    for b in range(size):
        starts[b + 1] += starts[b]
    out = [None] * n
    for i in range(n):
        b = buckets[i]
        out[starts[b]] = positions[i]
        starts[b] += 1
    return out


@cython.locals(topic=cython.Py_ssize_t, count=cython.Py_ssize_t, total=cython.Py_ssize_t, n_held=cython.Py_ssize_t,
               counts=tuple, assigned=tuple, unassigned=list, free=list)
def _unassigned_partitions(index: SpecIndex, subscribed: list[int]) -> tuple[list[Segment], int]:
    """Partitions no target holds (``isPartitionAssigned`` false), topic by topic in the set's order."""
    unassigned = []
    total = 0
    counts = index.counts
    assigned = index.assigned
    for topic in subscribed:
        count = counts[topic]
        if count == -1:
            raise AssignorFailure(
                f"Members are subscribed to topic {index.topics[topic]} which doesn't exist in the topic metadata.",
                kafka_exception=PARTITION_ASSIGNOR_EXCEPTION,
            )
        held = assigned[topic]  # sorted, distinct, each in [0, count)
        n_held = len(held)
        if n_held == 0:
            if count:
                unassigned.append((topic, None, count))
        elif n_held < count:  # else distinct and in range: every partition held
            mask = np.ones(count, dtype=bool)
            mask[held] = False
            free = np.flatnonzero(mask).tolist()
            unassigned.append((topic, free, len(free)))
        total += count
    return unassigned, total


@cython.locals(min_quota=cython.Py_ssize_t, remaining_extra=cython.Py_ssize_t, quota=cython.Py_ssize_t,
               size=cython.Py_ssize_t, member_index=cython.Py_ssize_t, member_count=cython.Py_ssize_t,
               topic=cython.Py_ssize_t, has_extra=cython.bint, kafka_18688_fixed=cython.bint, unchanged=cython.bint,
               in_group=bytearray, targets=dict, unfilled=list, kept=list, kept_topics=list, topics=tuple, keep=list,
               members=tuple, all_targets=tuple, target=tuple)
def _maybe_revoke_partitions(
    spec: ConsumerGroupSpec,
    subscribed: list[int],
    min_quota: int,
    remaining_extra: int,
    unassigned: list[Segment],
    kafka_18688_fixed: bool,
) -> tuple[dict[str, Target], list[tuple[int, Target, dict[int, list[int]]]]]:
    """Each member keeps its target up to its quota; the rest joins ``unassigned`` (in set order).

    A target's topics the group no longer subscribes to are dropped whole. ``unfilled``: the members
    under quota, with their quota left, their target and its lists by topic position.

    As Kafka copies a member's assignment only when it changes, a target kept whole by a member
    that fills its quota is answered as the spec's own (topic id, partitions) pairs, in a new list:
    the same partitions in the same order, without a list per topic (most members of a settled
    group are such)."""
    topics = spec.index.topics
    in_group = bytearray(len(topics))  # by topic position: subscribed by the group
    for topic in subscribed:
        in_group[topic] = 1
    targets = {}
    unfilled = []
    members = spec.members
    all_targets = spec.index.targets
    member_count = len(members)
    for member_index in range(member_count):
        quota = min_quota
        has_extra = False
        if remaining_extra > 0:
            quota += 1
            has_extra = True
        target = all_targets[member_index]
        unchanged = True
        size = 0
        for topic, partitions in target:
            if not in_group[topic]:
                unchanged = False
                break
            size += len(partitions)
        if unchanged and size <= quota:
            quota -= size
            if quota == 0:  # filled (give_up_extra needs quota left): nothing to extend later
                if has_extra:
                    remaining_extra -= 1
                targets[members[member_index].member_id] = list(members[member_index].target)
                continue
            quota += size  # under quota: the general path below, whose lists later calls extend
        kept = []
        kept_topics = []
        for topic, partitions in target:
            if not in_group[topic]:
                continue
            size = len(partitions)
            if size <= quota:
                quota -= size
                keep = list(partitions)
            else:
                # Kafka keeps partitions while quota lasts and revokes the rest, in the set's order.
                keep = list(partitions[:quota])
                revoked = list(partitions[quota:])
                unassigned.append((topic, revoked, len(revoked)))
                quota = 0
                if not keep:
                    continue
            kept.append((topics[topic], keep))
            kept_topics.append(topic)
        if kafka_18688_fixed and give_up_extra(quota, has_extra, member_count - member_index, remaining_extra):
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((quota, kept, dict(zip(kept_topics, [held for _, held in kept])) if kept else {}))
        if has_extra:
            remaining_extra -= 1
        targets[members[member_index].member_id] = kept
    return targets, unfilled


@cython.cfunc
@cython.inline
@cython.returns(cython.bint)
@cython.locals(quota=cython.Py_ssize_t, has_extra=cython.bint, members_left=cython.Py_ssize_t,
               remaining_extra=cython.Py_ssize_t)
def give_up_extra(quota: int, has_extra: bool, members_left: int, remaining_extra: int) -> bool:
    """KAFKA-18688's fix: a member that did not fill its ``minQuota + 1`` from what it holds leaves
    the extra partition to later members while more members remain (itself included) than extras."""
    return quota > 0 and has_extra and members_left > remaining_extra


@cython.locals(remaining=cython.Py_ssize_t, segment=cython.Py_ssize_t, offset=cython.Py_ssize_t,
               take=cython.Py_ssize_t, size=cython.Py_ssize_t, n_segments=cython.Py_ssize_t, topic=cython.Py_ssize_t,
               partitions=list, chunk=list, held=list, p=cython.Py_ssize_t, target=list, by_topic=dict)
def _assign_remaining_partitions(
    topics: tuple[TopicId, ...], unfilled: list[tuple[int, Target, dict[int, list[int]]]], unassigned: list[Segment]
) -> None:
    """Deal ``unassigned`` in order to the members under quota, in ``memberIds()`` order: each takes
    the next ``remaining`` partitions, run by run (no run is empty)."""
    segment, offset = 0, 0
    n_segments = len(unassigned)
    for remaining, target, by_topic in unfilled:
        while remaining > 0 and segment < n_segments:
            topic, partitions, size = unassigned[segment]
            take = min(remaining, size - offset)
            if partitions is not None:
                chunk = partitions[offset:offset + take]  # a new list
            elif cython.compiled:  # partitions offset.. of a topic no target holds, no range object walked
                chunk = [None] * take
                for p in range(take):
                    chunk[p] = offset + p
            else:
                chunk = list(range(offset, offset + take))
            held = by_topic.get(topic)
            if held is None:
                held = by_topic[topic] = chunk
                target.append((topics[topic], held))
            else:
                held.extend(chunk)
            remaining -= take
            offset += take
            if offset == size:
                segment, offset = segment + 1, 0
    if segment < n_segments:
        raise AssignorFailure("Partitions were left unassigned", kafka_exception=PARTITION_ASSIGNOR_EXCEPTION)
