"""Values passed between the steps of the sticky core (AbstractStickyAssignor, split by step).

The steps, each its own module:
    ownership.py    resolve_prior_owners      R5-R10  (+ historical variants, §1.3)
    sticky.py       all_subscriptions_equal   R12-R13, the entry points, memberData (R1-R4)
    constrained.py  constrained_assign        R15-R25 (+ rack phase R20)
    general.py      general_assign            R26-R32 (+ rack passes R28/R29/R32)
    cooperative.py  adjust_assignment         R34-R35
Nothing here is mutated after construction and nothing survives a call (against Kafka's
instance field ``maxGeneration``, R11).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..model import TopicPartition

__all__ = ["MemberData", "StickyInput", "PriorOwners", "StickyResult"]


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
    """

    assignment: Mapping[str, tuple[TopicPartition, ...]]
    partitions_transferring_ownership: Mapping[TopicPartition, str] | None
