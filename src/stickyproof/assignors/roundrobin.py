"""RoundRobinAssignor (docs/rules.md R41, R42).

Kafka walks every partition of the subscribed topics (topics by name, partitions by number) with
one circular cursor over the R41-ordered members, skipping members not subscribed to the
partition's topic; the cursor is never reset between topics. No rack awareness.

Within one topic the skipping is regular: once the first subscriber at or after the cursor is
found, the topic's partitions go to its subscribers cyclically. And consecutive topics with the
same subscribers behave as one long topic (the cursor continues the cycle). So the assignor works
on *segments* (runs of consecutive topics with equal subscriber lists): each subscriber's share of
a segment is one stepped slice ``partitions[s::n]``, never a per-partition loop.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import partial
from itertools import chain, repeat
from typing import Sequence

from .._perf import gc_paused
from ..errors import AssignorFailure
from ..javaorder import java_string_key
from ..model import Assignment, TopicPartition
from .base import GroupSubscription
from .range import member_info_order, partitions_per_topic_in_hashmap_order, topic_subscribers

__all__ = ["ROUNDROBIN_ASSIGNOR_NAME", "assign_roundrobin"]

ROUNDROBIN_ASSIGNOR_NAME = "roundrobin"

_make_tp = partial(tuple.__new__, TopicPartition)  # C-level constructor: ~30% faster than _make


def assign_roundrobin(group: GroupSubscription) -> Assignment:
    """``RoundRobinAssignor.assign`` (R42) over members in R41 order; lists in (topic, partition) order.

    An empty group raises like Kafka's ``CircularIterator`` (R14).
    """
    members = group.members
    if not members:
        raise AssignorFailure(
            "CircularIterator can only be used on non-empty lists (round robin over an empty group)",
            kafka_exception="java.lang.IllegalArgumentException",
        )
    order = member_info_order(members)
    position = [0] * len(members)
    for pos, i in enumerate(order):
        position[i] = pos
    counts = partitions_per_topic_in_hashmap_order(group)
    # allPartitionsSorted: a TreeSet of topic names, String.compareTo order.
    topics = sorted(counts, key=java_string_key)
    subscribers = topic_subscribers(group, topics, order)
    lists: list[list[TopicPartition]] = [[] for _ in members]
    with gc_paused():
        cursor = 0
        for segment_topics, subs in _segments(topics, subscribers):
            partitions = list(
                chain.from_iterable(map(_make_tp, zip(repeat(t, counts[t]), range(counts[t]))) for t in segment_topics)
            )
            cursor = _deal(partitions, [position[i] for i in subs], subs, cursor, len(members), lists)
        return Assignment({s.member_id: tuple(lists[i]) for i, s in enumerate(members)})


def _segments(
    topics: Sequence[str], subscribers: dict[str, tuple[int, ...]]
) -> list[tuple[list[str], tuple[int, ...]]]:
    """Runs of consecutive topics (in sorted order) with the same subscriber list."""
    segments: list[tuple[list[str], tuple[int, ...]]] = []
    for t in topics:
        subs = subscribers[t]
        if segments and segments[-1][1] == subs:
            segments[-1][0].append(t)
        else:
            segments.append(([t], subs))
    return segments


def _deal(
    partitions: list[TopicPartition],
    sub_positions: list[int],
    subs: tuple[int, ...],
    cursor: int,
    num_members: int,
    lists: list[list[TopicPartition]],
) -> int:
    """Deal one segment from the circular cursor; return the cursor after its last partition.

    ``sub_positions`` are the subscribers' places in R41 order (ascending, as ``subs`` is in that
    order). The first partition goes to the first subscriber at or after the cursor (wrapping): the
    ``while (!subscribed) assigner.next()`` loop of ``RoundRobinAssignor.assign``.
    """
    n = len(subs)
    first = bisect_left(sub_positions, cursor)
    if first == n:
        first = 0
    for s in range(min(n, len(partitions))):
        lists[subs[(first + s) % n]].extend(partitions[s::n])
    last = (first + len(partitions) - 1) % n
    return (sub_positions[last] + 1) % num_members
