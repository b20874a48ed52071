"""Java collections as far as Kafka's general builder depends on them (iteration order, null, exceptions).

The transcription in ``reference/general.py`` keeps Kafka's data structures, so their behaviour
is part of the answer (N1): a ``HashSet<TopicPartition>``'s iteration order picks the partition
``getTheActualPartitionToBeMoved`` moves back, a ``TreeSet`` of member ids ordered by live list
sizes decides who gets the next partition, and a null dereference is Kafka's
``NullPointerException`` (§10 K3).
"""

from __future__ import annotations

import bisect
from typing import Callable

from ...errors import AssignorFailure
from ...javaorder import hashmap_capacity, java_string_key, spread, topic_partition_hash
from ...model import TopicPartition

__all__ = ["JavaNull", "deref", "JavaHashSet", "PartitionMovements", "TreeSet", "NPE", "NO_SUCH_ELEMENT"]

NPE = "java.lang.NullPointerException"
NO_SUCH_ELEMENT = "java.util.NoSuchElementException"


class JavaNull(Exception):
    """A Java null dereference inside the transcription; turned into ``AssignorFailure`` at the boundary."""


def deref(value, what: str):
    if value is None:
        raise JavaNull(what)
    return value


class JavaHashSet:
    """``HashSet<TopicPartition>`` as far as iteration order goes (N1).

    Iteration visits buckets in index order and, within a bucket, elements in insertion order
    (a removed and re-added element goes to the tail). The table only grows: its capacity is that
    of the largest size this set ever had.
    """

    def __init__(self) -> None:
        self._seq: dict[TopicPartition, int] = {}
        self._next = 0
        self._capacity = hashmap_capacity(0)

    def add(self, tp: TopicPartition) -> None:
        if tp in self._seq:
            return
        self._seq[tp] = self._next
        self._next += 1
        self._capacity = max(self._capacity, hashmap_capacity(len(self._seq)))

    def remove(self, tp: TopicPartition) -> None:
        self._seq.pop(tp, None)

    def __len__(self) -> int:
        return len(self._seq)

    def first(self) -> TopicPartition:
        mask = self._capacity - 1
        return min(self._seq, key=lambda tp: (spread(topic_partition_hash(*tp)) & mask, self._seq[tp]))


class PartitionMovements:
    """``AbstractStickyAssignor.PartitionMovements``: net moves of this run, per topic and member pair."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashSet]] = {}
        self.movements: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.movements.pop(tp)
        for_topic = self.by_topic[tp.topic]
        for_topic[pair].remove(tp)
        if not len(for_topic[pair]):
            del for_topic[pair]
        if not for_topic:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.movements[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, JavaHashSet()).add(tp)

    def move_partition(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.movements:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_be_moved(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """``getTheActualPartitionToBeMoved``: prefer undoing an earlier move the other way (no ping-pong)."""
        if tp.topic not in self.by_topic:
            return tp
        if tp in self.movements:
            old = self.movements[tp][0]
        reverse = (new, old)
        for_topic = self.by_topic[tp.topic]
        if reverse not in for_topic:
            return tp
        return for_topic[reverse].first()

    def pairs_by_topic(self) -> dict[str, frozenset[tuple[str, str]]]:
        return {t: frozenset(pairs) for t, pairs in self.by_topic.items()}


class TreeSet:
    """``TreeSet<String>`` with ``SubscriptionComparator``: members by (current list size, id).

    The comparator reads sizes from the live assignment map, exactly like Kafka's; a member missing
    from that map makes any comparison a null dereference.
    """

    def __init__(self, size_of: Callable[[str], int]) -> None:
        self._size_of = size_of
        self._keys: list[tuple[int, bytes, str]] = []

    def _key(self, member: str) -> tuple[int, bytes, str]:
        return (self._size_of(member), java_string_key(member), member)

    def add(self, member: str) -> None:
        key = self._key(member)
        i = bisect.bisect_left(self._keys, key)
        if i == len(self._keys) or self._keys[i] != key:
            self._keys.insert(i, key)

    def remove(self, member: str) -> None:
        if not self._keys:
            return
        key = self._key(member)
        i = bisect.bisect_left(self._keys, key)
        if i < len(self._keys) and self._keys[i] == key:
            del self._keys[i]

    def first(self) -> str:
        if not self._keys:
            raise AssignorFailure("sortedCurrentSubscriptions is empty", kafka_exception=NO_SUCH_ELEMENT)
        return self._keys[0][2]

    def last(self) -> str:
        if not self._keys:
            raise AssignorFailure("sortedCurrentSubscriptions is empty", kafka_exception=NO_SUCH_ELEMENT)
        return self._keys[-1][2]

    def __iter__(self):
        return iter([k[2] for k in self._keys])
