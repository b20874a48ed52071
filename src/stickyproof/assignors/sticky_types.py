"""Values passed between the steps of the sticky core (AbstractStickyAssignor, split by step).

The steps, each its own module:
    user_data.py    member_data               R1-R4, what a member sends (§5.3, §5.4)
    ownership.py    resolve_prior_owners      R5-R10 (+ the historical rules, §1.3), path selection R12-R13
    constrained.py  constrained_assign        R15-R25, fast engine (reference/constrained.py: the transcription)
    general.py      general_assign            R26-R32, fast engine (reference/general.py: the transcription)
    cooperative.py  adjust_assignment         R34-R35
    sticky.py       the entry points, reading a ``releases.Release`` record
Nothing here is mutated after construction and nothing survives a call (against Kafka's
instance field ``maxGeneration``, R11).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping

from ..model import TopicPartition

__all__ = ["MemberData", "StickyInput", "PriorOwners", "StickyResult", "GeneralRun", "QuotaOrder", "FAST", "REFERENCE"]

FAST = "fast"
"""``StickyResult.engine``: the integer engine of constrained.py / general.py."""
REFERENCE = "reference"
"""``StickyResult.engine``: a transcription under reference/ (after a decline, or the builder's only engine)."""


class QuotaOrder(Enum):
    """R16 step 2: the order in which a member's owned partitions count towards its quota on the constrained path.

    Which claims a member keeps when it owns more than its quota depends on it; KAFKA-16277
    (3.7.1 / 3.8.0) changed it from claim order to (partition, topic).
    """

    CLAIM = "claim order"
    PARTITION_THEN_TOPIC = "partition number, then topic name"


@dataclass(frozen=True)
class MemberData:
    """``AbstractStickyAssignor.MemberData``: the claims and generation the assignor attributes to a member.

    ``generation`` is None when absent; absent and -1 compare alike (R4).
    """

    partitions: tuple[TopicPartition, ...]
    generation: int | None


@dataclass(frozen=True)
class StickyInput:
    """Everything the sticky algorithms read, already decoded.

    ``partitions_per_topic``: topics in the union of subscriptions that exist in metadata with at
    least one partition (0.4, N3), to their partition count.
    ``members``: member ids in Java ``HashMap`` iteration order (0.3, N1).
    ``subscriptions``: each member's raw topic list as decoded (R12 compares raw lists).
    ``wire_generation``: the subscription's generationId, -1 when absent (R8 reads the rival's
    generation from here, not from member data: the R10 asymmetry).
    ``wire_owned``: the subscription's ownedPartitions (R34 transferring on the general path).
    ``partition_racks``: topic -> per partition, the racks holding a replica (empty when unknown).
    ``rack_aware``: the R48 decision for the whole group.
    ``member_data_again``: what a second ``memberData`` call returns, for members whose user data
    a first call consumed (``UserData.read_again``; read only by the 2.5-2.8 general path); a
    member missing from it reads as ``member_data``.
    ``user_data_sent``: the members whose subscription carried user data (bytes remaining); in
    direct mode, those a sticky member in that state would send it for (§5.3: owned partitions or
    a generation). Only 2.2's ``prepopulateCurrentAssignments`` tells an empty previous assignment
    from none (``reference/general_2_2.py``).
    """

    partitions_per_topic: Mapping[str, int]
    members: tuple[str, ...]
    subscriptions: Mapping[str, tuple[str, ...]]
    member_data: Mapping[str, MemberData]
    wire_generation: Mapping[str, int]
    wire_owned: Mapping[str, tuple[TopicPartition, ...]]
    member_rack: Mapping[str, str | None]
    partition_racks: Mapping[str, tuple[frozenset[str], ...]]
    rack_aware: bool
    member_data_again: Mapping[str, MemberData] = field(default_factory=dict, compare=False)
    user_data_sent: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PriorOwners:
    """What prior-ownership resolution decided (Kafka fills these as out-parameters of allSubscriptionsEqual).

    ``consumer_to_owned_partitions``: per member (every member present), the claims it keeps, in
    claim order. ``partitions_with_multiple_previous_owners``: the DUP set of R8.
    ``max_generation``: max of the members' generations (absent counts -1), for R27.
    """

    consumer_to_owned_partitions: Mapping[str, tuple[TopicPartition, ...]]
    partitions_with_multiple_previous_owners: frozenset[TopicPartition]
    max_generation: int


@dataclass(frozen=True)
class StickyResult:
    """A sticky path's answer, before any cooperative adjustment.

    ``assignment``: every member, partitions in Kafka's list order (R24).
    ``partitions_transferring_ownership``: tp -> new owner, as the constrained builder records it
    (R25); None on the general path, where the cooperative adjustment computes it from the wire
    owned partitions (R34).
    ``engine``: which engine computed it, ``FAST`` or ``REFERENCE`` (engines.py); ``declined``: why
    the fast engine handed the input over, None when it did not. Neither takes part in equality:
    two engines that agree give equal results.
    """

    assignment: Mapping[str, tuple[TopicPartition, ...]]
    partitions_transferring_ownership: Mapping[TopicPartition, str] | None
    engine: str = field(compare=False)
    declined: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class GeneralRun:
    """The general path's answer plus what Kafka's builder knows afterwards (both engines return one).

    ``movements``: per topic, the net (from, to) member pairs of this run's balancing moves, Kafka's
    ``PartitionMovements`` (``isSticky()`` is false when a topic has both (a, b) and (b, a), R33).
    Kafka does not clear them on a revert, and neither does either engine.
    ``reverted``: the balance-score check undid the balancing (R32).
    """

    result: StickyResult
    movements: Mapping[str, frozenset[tuple[str, str]]]
    revocation_required: bool
    initializing: bool
    reverted: bool

    @property
    def engine(self) -> str:
        return self.result.engine

    @property
    def declined(self) -> str | None:
        return self.result.declined

    @property
    def is_sticky(self) -> bool:
        """Kafka's ``isSticky()``: no topic's partitions moved both ways between one pair of members."""
        return not any((b, a) in pairs for pairs in self.movements.values() for a, b in pairs)
