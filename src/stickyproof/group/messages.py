"""What members and the coordinator send each other (models/protocol.md §2-§3)."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import TopicPartition

__all__ = [
    "JoinMetadata",
    "Response",
    "NONE",
    "REBALANCE_IN_PROGRESS",
    "ILLEGAL_GENERATION",
    "UNKNOWN_MEMBER_ID",
    "NOT_COORDINATOR",
    "FENCED_INSTANCE_ID",
    "INCONSISTENT_GROUP_PROTOCOL",
    "FATAL_ERRORS",
]

NONE = "NONE"
REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"
ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
NOT_COORDINATOR = "NOT_COORDINATOR"
FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"
INCONSISTENT_GROUP_PROTOCOL = "INCONSISTENT_GROUP_PROTOCOL"
FATAL_ERRORS = (FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL)


@dataclass(frozen=True)
class JoinMetadata:
    """A member's JoinGroup protocols and subscription, as it stands when it sends the request (R37).

    ``owned``/``generation`` are the wire ``ownedPartitions``/``generationId`` (owned after
    ``onJoinPrepare``: empty for an eager member); ``memory``/``memory_generation`` are the last
    assignment received and its generation (the sticky user data, R1). ``assignors`` are registry
    names in preference order, ``kafka_names`` the protocol names they announce.
    """

    name: str
    topics: tuple[str, ...]
    assignors: tuple[str, ...]
    kafka_names: tuple[str, ...]
    protocol: str
    version: int
    rack: str | None
    instance_id: str | None
    owned: tuple[TopicPartition, ...]
    generation: int
    memory: tuple[TopicPartition, ...]
    memory_generation: int


@dataclass(frozen=True)
class Response:
    """A coordinator answer addressed to one process incarnation.

    ``kind``: ``join`` or ``sync``. ``sent``: the tick of the request it answers. A successful join
    carries the generation, the member's id, the leader, the protocol and (for the leader) every
    member's metadata in admission order; a successful sync carries the member's assignment.
    """

    kind: str
    error: str
    process: tuple[str, int]
    sent: int
    generation: int = -1
    member_id: str | None = None
    leader: str | None = None
    protocol: str | None = None
    members: tuple[tuple[str, JoinMetadata], ...] = ()
    assignment: tuple[TopicPartition, ...] = ()
    epoch: int = 1  # the coordinator epoch that answered (a non-persisted fail-over starts a new one)
