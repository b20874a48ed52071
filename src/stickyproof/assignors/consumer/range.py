"""The group coordinator's ``RangeAssignor`` (``org.apache.kafka.coordinator.group.assignor``, Kafka 4.x), ported.

Per topic, its subscribers sorted (static members first by instance id, then the others by member
id, both in ``String.compareTo`` order) take contiguous ranges: ``numPartitions / subscribers``
each, the first ``numPartitions % subscribers`` of them one more. The current target plays no part,
so the result is sticky exactly while membership and instance ids stay the same, and not when a
member is replaced (a new member id sorts elsewhere). The homogeneous path counts every member as
a subscriber of every topic; the heterogeneous path counts each topic's own subscribers.
"""

from __future__ import annotations

from typing import Sequence

from ...errors import AssignorFailure
from ...javaorder import java_string_key
from .spec import HOMOGENEOUS, ConsumerGroupSpec, MemberSpec, TopicId

try:
    import cython
except ImportError:  # no Cython at run time: the pure-Python port, its declarations inert
    from . import _cython_shim as cython

__all__ = ["assign_consumer_range", "sort_member_ids"]

if not cython.compiled:
    def _untrack(_pair: tuple) -> None:
        """Compiled: ``PyObject_GC_UnTrack`` (ports.pxd). A (topic id, range) pair can hold no
        cycle, so the collector need never visit it: CPython itself untracks such a tuple at the
        first collection it survives. Uncompiled, the collector does that, as ever."""

    def _track(_pairs: list) -> None:
        """Compiled: ``PyObject_GC_Track`` (ports.pxd), for a member's list untracked while it was
        filled (``_retrack``)."""


@cython.locals(targets=dict, pairs=list)
def _retrack(targets: dict) -> dict:
    """Every member's list tracked again, once the answer is whole: while the port fills them the
    lists hold only untracked pairs, and the collections their pairs' allocations set off need not
    trace them over and over."""
    if cython.compiled:
        for pairs in targets.values():
            _track(pairs)
    return targets


def _sorted_order(members: Sequence[MemberSpec]) -> list[int]:
    """``RangeAssignor.sortMemberIds`` as positions into ``members``: static members first by
    instance id, then the others by member id, both ``String.compareTo``. Python's ``str`` order is
    that order for ASCII ids, which spares encoding every id; any other id makes every key UTF-16."""
    ids = []
    static = False
    for m in members:
        instance_id = m.instance_id
        if instance_id is None:
            ids.append(m.member_id)
        else:
            ids.append(instance_id)
            static = True
    if not "".join(ids).isascii():  # one pass over every id's characters
        ids = [java_string_key(i) for i in ids]
    if not static:
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
    sorted members hands out, computed member by member in plain integer loops (compiled by
    setup.py, where a call of 100 members costs tens of microseconds)."""
    if not spec.members:
        return {}
    order = _sorted_order(spec.members)
    if spec.subscription_type == HOMOGENEOUS:
        return _homogeneous(spec, order)
    return _heterogeneous(spec, order)


@cython.locals(topic=cython.Py_ssize_t, count=cython.Py_ssize_t)
def _check_topics(counts: tuple, topics: Sequence[int]) -> None:
    for topic in topics:
        count = counts[topic]
        if count == -1:
            raise AssignorFailure("Member is subscribed to a non-existent topic", kafka_exception="PartitionAssignorException")


@cython.locals(n=cython.Py_ssize_t, r=cython.Py_ssize_t, k=cython.Py_ssize_t, n_classes=cython.Py_ssize_t,
               quota=cython.Py_ssize_t, extra=cython.Py_ssize_t, j=cython.Py_ssize_t, n_topics=cython.Py_ssize_t,
               start=cython.Py_ssize_t, end=cython.Py_ssize_t, counts=tuple, class_quota=list, class_extra=list,
               of_topic=list, ranges=list, given=list, targets=dict, ids=tuple, pairs=list, pair=tuple)
@cython.boundscheck(False)
@cython.wraparound(False)
def _homogeneous(spec: ConsumerGroupSpec, order: list[int]) -> dict[str, list[tuple[TopicId, range]]]:
    """Every member subscribes to the first sorted member's topics: every rank is the member's rank,
    so topics sharing (quota, extra) (a class) give each member the same range, one object."""
    first = order[0]
    counts = spec.index.counts
    topics = spec.index.subscribed[first]
    _check_topics(counts, topics)
    ids = spec.members[first].subscribed
    n = len(order)
    n_topics = len(ids)
    classes: dict[tuple[int, int], int] = {}
    of_topic = [classes.setdefault(divmod(counts[t], n), len(classes)) for t in topics]
    class_quota = [c[0] for c in classes]
    class_extra = [c[1] for c in classes]
    n_classes = len(classes)
    members = spec.members
    targets = {}
    if n_classes == 1:  # every topic of one size (Kafka's JMH shapes): the member's one range for each
        return _homogeneous_one_class(members, order, ids, class_quota[0], class_extra[0])
    for r in range(n):
        ranges = []
        given = []
        for k in range(n_classes):
            quota = class_quota[k]
            extra = class_extra[k]
            start = r * quota + min(r, extra)
            end = start + quota + (1 if r < extra else 0)
            ranges.append(range(start, end))
            given.append(end > start)
        member_id = members[order[r]].member_id
        pairs = []
        if cython.compiled:
            _untrack(pairs)
        for j in range(n_topics):
            k = of_topic[j]
            if given[k]:
                pair = (ids[j], ranges[k])
                if cython.compiled:
                    _untrack(pair)
                pairs.append(pair)
        targets[member_id] = pairs
    return _retrack(targets)


@cython.locals(n=cython.Py_ssize_t, r=cython.Py_ssize_t, j=cython.Py_ssize_t, n_topics=cython.Py_ssize_t,
               quota=cython.Py_ssize_t, extra=cython.Py_ssize_t, start=cython.Py_ssize_t, end=cython.Py_ssize_t,
               members=tuple, order=list, ids=tuple, targets=dict, pairs=list, pair=tuple)
@cython.boundscheck(False)
@cython.wraparound(False)
def _homogeneous_one_class(members: tuple, order: list, ids: tuple, quota: int, extra: int) -> dict[str, list[tuple[TopicId, range]]]:
    """``_homogeneous`` where every topic has the same (quota, extra): the member at rank ``r`` gets
    one range for every topic, computed once, its list sized once and filled in place (no list of
    the classes' ranges per member)."""
    n = len(order)
    n_topics = len(ids)
    targets = {}
    for r in range(n):
        start = r * quota + min(r, extra)
        end = start + quota + (1 if r < extra else 0)
        if end > start:
            shared = range(start, end)
            pairs = [None] * n_topics
            if cython.compiled:
                _untrack(pairs)
            for j in range(n_topics):
                pair = (ids[j], shared)
                if cython.compiled:
                    _untrack(pair)
                pairs[j] = pair
        else:
            pairs = []
            if cython.compiled:
                _untrack(pairs)
        targets[members[order[r]].member_id] = pairs
    return _retrack(targets)


@cython.locals(n_topics=cython.Py_ssize_t, topic=cython.Py_ssize_t, rank=cython.Py_ssize_t, i=cython.Py_ssize_t,
               count=cython.Py_ssize_t, m=cython.Py_ssize_t, members=tuple,
               size=cython.Py_ssize_t, quota=cython.Py_ssize_t, extra=cython.Py_ssize_t, start=cython.Py_ssize_t,
               end=cython.Py_ssize_t, stride=cython.longlong, counts=tuple, subscribers=list, taken=list, pairs=list,
               targets=dict, subscribed=tuple, every_subscribed=tuple, ids=tuple, pair=tuple, made=dict)
def _heterogeneous(spec: ConsumerGroupSpec, order: list[int]) -> dict[str, list[tuple[TopicId, range]]]:
    """Each topic's own subscribers, in sorted member order: a member's rank on a topic is the
    number of its subscribers sorted before it (``taken``). Equal ranges are one object (``made``,
    by start and end): topics of equal size and subscribers hand each member the same one, and a
    ``range`` costs more to build than to look up."""
    counts = spec.index.counts
    n_topics = len(counts)
    every_subscribed = spec.index.subscribed
    subscribers = [0] * n_topics
    for subscribed in every_subscribed:
        _check_topics(counts, subscribed)
        for topic in subscribed:
            subscribers[topic] += 1
    stride = max(counts, default=0) + 1
    taken = [0] * n_topics
    made = {}
    targets = {}
    members = spec.members
    for m in order:
        member = members[m]
        subscribed = every_subscribed[m]
        ids = member.subscribed
        pairs = []
        if cython.compiled:
            _untrack(pairs)
        for i in range(len(subscribed)):
            topic = subscribed[i]
            rank = taken[topic]
            taken[topic] = rank + 1
            size = subscribers[topic]
            count = counts[topic]
            quota = count // size
            extra = count % size
            start = rank * quota + min(rank, extra)
            end = start + quota + (1 if rank < extra else 0)
            if end > start:
                key = start * stride + end
                shared = made.get(key)
                if shared is None:
                    shared = made[key] = range(start, end)
                pair = (ids[i], shared)
                if cython.compiled:
                    _untrack(pair)
                pairs.append(pair)
        targets[member.member_id] = pairs
    return _retrack(targets)
