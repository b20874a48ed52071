"""The group coordinator's ``RangeAssignor`` (``org.apache.kafka.coordinator.group.assignor``, Kafka 4.x), ported.

Per topic, its subscribers sorted (static members first by instance id, then the others by member
id, both in ``String.compareTo`` order) take contiguous ranges: ``numPartitions / subscribers``
each, the first ``numPartitions % subscribers`` of them one more. The current target plays no part,
so the result is sticky exactly while membership and instance ids stay the same, and not when a
member is replaced (a new member id sorts elsewhere). The homogeneous path counts every member as
a subscriber of every topic; the heterogeneous path counts each topic's own subscribers.
"""

from __future__ import annotations

from itertools import chain, compress, repeat
from typing import Sequence

import numpy as np

from ...errors import AssignorFailure
from ...javaorder import java_string_key
from .spec import HOMOGENEOUS, ConsumerGroupSpec, MemberSpec, TopicId

__all__ = ["assign_consumer_range", "sort_member_ids"]


def _sorted_order(members: Sequence[MemberSpec]) -> list[int]:
    """``RangeAssignor.sortMemberIds`` as positions into ``members``: static members first by
    instance id, then the others by member id, both ``String.compareTo``. Python's ``str`` order is
    that order for ASCII ids, which spares encoding every id; any other id makes every key UTF-16."""
    ids = [m.instance_id if m.instance_id is not None else m.member_id for m in members]
    if not all(map(str.isascii, ids)):
        ids = [java_string_key(i) for i in ids]
    if not any(m.instance_id is not None for m in members):
        return sorted(range(len(ids)), key=ids.__getitem__)
    keys = [(m.instance_id is None, i) for m, i in zip(members, ids)]
    return sorted(range(len(keys)), key=keys.__getitem__)


def sort_member_ids(members: tuple[MemberSpec, ...]) -> list[MemberSpec]:
    """``RangeAssignor.sortMemberIds``: members with an instance id first, by it; then by member id."""
    return [members[i] for i in _sorted_order(members)]


def assign_consumer_range(spec: ConsumerGroupSpec) -> dict[str, list[tuple[TopicId, range]]]:
    """``RangeAssignor.assign``: every member's new target, each topic's share a ``range`` (Kafka's
    ``RangeSet``).

    The member at rank ``r`` of a topic's ``n`` sorted subscribers gets ``[r * q + min(r, e), +q (+1
    while r < e))`` of its ``c`` partitions (``q, e = divmod(c, n)``): what Kafka's walk over the
    sorted members hands out, computed for all members and topics at once."""
    if not spec.members:
        return {}
    index = spec.index
    order = _sorted_order(spec.members)
    counts = np.array(index.counts, dtype=np.int64)
    if spec.subscription_type == HOMOGENEOUS:
        return _homogeneous(spec, order, counts)
    return _heterogeneous(spec, order, counts)


def _check_topics(counts: np.ndarray, topics: np.ndarray) -> None:
    if (counts[topics] == -1).any():
        raise AssignorFailure("Member is subscribed to a non-existent topic", kafka_exception="PartitionAssignorException")


def _pairs(ids: Sequence[TopicId], starts: list[int], ends: list[int]) -> list[tuple[TopicId, range]]:
    """One member's (topic, range) pairs, empty ranges left out; one ``range`` object shared by the
    topics that give the member the same partitions (ranges are immutable)."""
    size = len(ids)
    if size and starts.count(starts[0]) == size and ends.count(ends[0]) == size:
        return list(zip(ids, repeat(range(starts[0], ends[0]), size))) if ends[0] > starts[0] else []
    pairs = zip(ids, map(range, starts, ends))
    return list(compress(pairs, map(int.__lt__, starts, ends)))


def _homogeneous(spec: ConsumerGroupSpec, order: list[int], counts: np.ndarray) -> dict[str, list[tuple[TopicId, range]]]:
    """Every member subscribes to the first sorted member's topics: every rank is the member's rank,
    so topics sharing (quota, extra) give each member the same range."""
    first = order[0]
    topics = np.array(spec.index.subscribed[first], dtype=np.int64)
    _check_topics(counts, topics)
    ids = spec.members[first].subscribed
    quota, extra = np.divmod(counts[topics], len(order))
    classes: dict[tuple[int, int], int] = {}
    of_topic = [classes.setdefault(c, len(classes)) for c in zip(quota.tolist(), extra.tolist())]
    cq = np.array([c[0] for c in classes], dtype=np.int64)
    ce = np.array([c[1] for c in classes], dtype=np.int64)
    rank = np.arange(len(order), dtype=np.int64)[:, None]
    starts = rank * cq + np.minimum(rank, ce)
    ends = starts + cq + (rank < ce)
    starts_l, ends_l = starts.tolist(), ends.tolist()
    members = spec.members
    if len(classes) == 1:
        n_topics = len(ids)
        return {members[m].member_id: list(zip(ids, repeat(range(starts_l[r][0], ends_l[r][0]), n_topics)))
                if ends_l[r][0] > starts_l[r][0] else [] for r, m in enumerate(order)}
    targets = {}
    for r, m in enumerate(order):
        ranges = list(map(range, starts_l[r], ends_l[r]))
        given = list(map(int.__lt__, starts_l[r], ends_l[r]))
        pairs = zip(ids, map(ranges.__getitem__, of_topic))
        targets[members[m].member_id] = list(compress(pairs, map(given.__getitem__, of_topic)))
    return targets


def _heterogeneous(spec: ConsumerGroupSpec, order: list[int], counts: np.ndarray) -> dict[str, list[tuple[TopicId, range]]]:
    """Each topic's own subscribers, in sorted member order, over all (member, topic) pairs at once."""
    subscriptions = [spec.index.subscribed[m] for m in order]
    sizes = [len(s) for s in subscriptions]
    topic = np.fromiter(chain.from_iterable(subscriptions), dtype=np.int64, count=sum(sizes))
    _check_topics(counts, topic)
    # A pair's rank among the topic's subscribers: pairs come in sorted member order, so a stable
    # sort by topic lists each topic's subscribers in that order.
    subscribers = np.bincount(topic, minlength=len(counts))
    first_pair = np.cumsum(subscribers) - subscribers
    by_topic = np.argsort(topic, kind="stable")
    rank = np.empty_like(topic)
    rank[by_topic] = np.arange(len(topic), dtype=np.int64) - first_pair[topic[by_topic]]
    quota, extra = np.divmod(counts[topic], subscribers[topic])
    starts = rank * quota + np.minimum(rank, extra)
    ends = starts + quota + (rank < extra)
    starts_l, ends_l = starts.tolist(), ends.tolist()
    targets: dict[str, list[tuple[TopicId, range]]] = {}
    at = 0
    for m, size in zip(order, sizes):
        member = spec.members[m]
        targets[member.member_id] = _pairs(member.subscribed, starts_l[at:at + size], ends_l[at:at + size])
        at += size
    return targets
