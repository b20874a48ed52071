"""The values of the interchange format (docs/scenario-format.md): topics, members, scenarios,
assignments, as frozen values; the constants the readers check against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, NamedTuple

SCENARIO_FORMAT = "stickyproof.scenario/1"
ASSIGNMENT_FORMAT = "stickyproof.assignment/1"
PROTOCOLS = ("eager", "cooperative")
CLASSIC = "classic"
CONSUMER = "consumer"
GROUP_PROTOCOLS = (CLASSIC, CONSUMER)
DEFAULT_GENERATION = -1
MAX_VERSION = 3
INT32_MAX = 2**31 - 1


class TopicPartition(NamedTuple):
    """A partition of a topic; sorts by (topic, partition)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class Topic:
    """A topic in the leader's metadata: name, partition count, and optional replica racks per partition."""

    name: str
    partitions: int
    racks: tuple[tuple[str, ...], ...] | None = None
    id: str | None = None
    """Consumer groups only: the topic's Kafka ``Uuid`` as Kafka prints it (22 base64url characters),
    when a scenario states it; None derives it from the name (``model.topic_ids``)."""

    def partition_list(self) -> list[TopicPartition]:
        return [TopicPartition(self.name, p) for p in range(self.partitions)]


@dataclass(frozen=True)
class Member:
    """One group member as it stands when it (re)joins.

    ``topics`` keeps the document's order (Kafka's path selection compares raw lists, R12);
    ``owned`` keeps claim order as written, because claim order matters to Kafka (R16 before 3.7.1).
    """

    id: str
    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = DEFAULT_GENERATION
    version: int = MAX_VERSION
    rack: str | None = None
    instance_id: str | None = None
    assignors: tuple[str, ...] = ()

    def owned_by_topic(self) -> dict[str, list[int]]:
        return tp_map_to_dict(self.owned)


@dataclass(frozen=True)
class Scenario:
    """A consumer group at one rebalance: the metadata the leader sees and the members in JoinGroup order.

    ``group_protocol`` is ``"classic"`` (JoinGroup/SyncGroup, a leader member runs the assignor) or
    ``"consumer"`` (KIP-848: the coordinator runs a server-side assignor). In a consumer group each
    member's ``owned`` is its current *target* assignment, ``generation``/``version``/``assignors``
    keep their defaults, ``protocol`` is unused, and ``members`` is the order in which the
    coordinator puts them into the assignor's member map (docs/scenario-format.md).
    """

    topics: tuple[Topic, ...]
    members: tuple[Member, ...]
    protocol: str = "eager"
    name: str = ""
    group_protocol: str = CLASSIC

    @property
    def is_consumer_group(self) -> bool:
        return self.group_protocol == CONSUMER

    def topic(self, name: str) -> Topic | None:
        for t in self.topics:
            if t.name == name:
                return t
        return None

    @property
    def partition_counts(self) -> dict[str, int]:
        return {t.name: t.partitions for t in self.topics}

    def member(self, member_id: str) -> Member:
        for m in self.members:
            if m.id == member_id:
                return m
        raise KeyError(member_id)

    def partition_count(self) -> int:
        """Partitions in the leader's metadata, counted without building them (a topic may have 2^31 - 1)."""
        return sum(t.partitions for t in self.topics)

    def subscribed_partition_count(self) -> int:
        """``len(self.subscribed_partitions())``, by arithmetic: what ``validate`` reports and the limits check."""
        subscribed = {t for m in self.members for t in m.topics}
        return sum(t.partitions for t in self.topics if t.name in subscribed)

    def subscribed_partitions(self) -> list[TopicPartition]:
        """Every existing partition of a topic somebody subscribes to, sorted (docs/rules.md 0.4)."""
        subscribed = {t for m in self.members for t in m.topics}
        return [
            TopicPartition(t.name, p)
            for t in sorted(self.topics, key=lambda t: t.name)
            if t.name in subscribed
            for p in range(t.partitions)
        ]


@dataclass(frozen=True)
class Assignment:
    """An assignor's answer: partitions per member, and (cooperative rounds) partitions withheld for revocation."""

    assignment: Mapping[str, tuple[TopicPartition, ...]]
    revoking: Mapping[str, tuple[TopicPartition, ...]] = field(default_factory=dict)

    def owner_of(self) -> dict[TopicPartition, list[str]]:
        owners: dict[TopicPartition, list[str]] = {}
        for member_id, tps in self.assignment.items():
            for tp in tps:
                owners.setdefault(tp, []).append(member_id)
        return owners

    def loads(self) -> dict[str, int]:
        return {m: len(tps) for m, tps in self.assignment.items()}


def tp_map_to_dict(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Group partitions by topic, topics and partitions sorted: the canonical JSON shape."""
    out: dict[str, list[int]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp.partition)
    return {t: sorted(out[t]) for t in sorted(out)}
