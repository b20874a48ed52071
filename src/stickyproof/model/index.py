"""``Index``: members and partitions interned into dense integers in sorted order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .values import Scenario, TopicPartition

# --------------------------------------------------------------------------------------------
# Dense interning


@dataclass(frozen=True)
class Index:
    """Dense ids in *sorted* order: the one place where names become integers and back.

    Members: ``members`` sorted -> 0..M-1, then ``outsiders`` (ids an assignment names that are not
    in the group) sorted -> M..M+O-1. Topics: the keys of ``topic_count`` sorted -> 0..T-1
    (``topics``). Partitions: sorted (topic, partition) over the counts -> 0..P-1; a topic counted
    0 (listed with no partitions, or only named by a subscription or an assignment) has a topic id
    but no partitions. Numbering never depends on the order a document listed things in, so the
    array code over it is deterministic (deterministic interning: sorted ids, never hash order).

    ``partition_id`` bounds-checks untrusted claims: a claim on a missing topic, or on a partition
    number outside ``[0, count)``, has no id (returns ``None``) rather than indexing someone
    else's slot. ``member_ids``/``topic_ids`` are the lookups themselves, for hot loops.
    """

    members: tuple[str, ...]
    topic_count: Mapping[str, int]
    outsiders: tuple[str, ...] = ()
    topics: tuple[str, ...] = field(init=False)
    topic_offset: Mapping[str, int] = field(init=False, repr=False)
    num_partitions: int = field(init=False)
    member_ids: Mapping[str, int] = field(init=False, repr=False)
    topic_ids: Mapping[str, int] = field(init=False, repr=False)
    _starts: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _nonempty: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        members = tuple(sorted(self.members))
        outsiders = tuple(sorted(set(self.outsiders) - set(members)))
        topics = tuple(sorted(self.topic_count))
        counts = {t: max(0, self.topic_count[t]) for t in topics}
        offset, start = {}, 0
        for t in topics:
            offset[t] = start
            start += counts[t]
        nonempty = tuple(t for t in topics if counts[t])
        for name, value in (
            ("members", members),
            ("outsiders", outsiders),
            ("topics", topics),
            ("topic_count", counts),
            ("topic_offset", offset),
            ("num_partitions", start),
            ("member_ids", {m: i for i, m in enumerate(members + outsiders)}),
            ("topic_ids", {t: i for i, t in enumerate(topics)}),
            ("_starts", tuple(offset[t] for t in nonempty)),
            ("_nonempty", nonempty),
        ):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, scenario: Scenario, *, only_subscribed: bool = False) -> "Index":
        """The group's members and the partitions of its existing, non-empty topics (only those
        somebody subscribes to, with ``only_subscribed``: D1 of models/optimal-assignment.md)."""
        subscribed = {t for m in scenario.members for t in m.topics}
        counts = {
            t.name: t.partitions for t in scenario.topics if t.partitions > 0 and (not only_subscribed or t.name in subscribed)
        }
        return cls(tuple(m.id for m in scenario.members), counts)

    @property
    def num_members(self) -> int:
        return len(self.members)

    def member_id(self, member: str) -> int:
        """The dense id of a member or outsider (KeyError if neither)."""
        return self.member_ids[member]

    def member(self, i: int) -> str:
        """The member (or outsider) with dense id ``i``."""
        m = len(self.members)
        return self.members[i] if i < m else self.outsiders[i - m]

    def topic_id(self, topic: str) -> int:
        return self.topic_ids[topic]

    def partition_id(self, topic: str, partition: int) -> int | None:
        base = self.topic_offset.get(topic)
        if base is None or not 0 <= partition < self.topic_count[topic]:
            return None
        return base + partition

    def topic_partition(self, pid: int) -> TopicPartition:
        import bisect

        if not 0 <= pid < self.num_partitions:
            raise IndexError(f"partition id {pid} outside 0..{self.num_partitions - 1}")
        topic = self._nonempty[bisect.bisect_right(self._starts, pid) - 1]
        return TopicPartition(topic, pid - self.topic_offset[topic])

    def topic_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t in self._nonempty for p in range(self.topic_count[t])]
