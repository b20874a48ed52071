"""2.6's constrained path, transcribed: ``AbstractStickyAssignor.constrainedAssign`` as released in 2.6 (to 2.8, KAFKA-9987).

The first constrained path was one method; its steps, as its comments name them::

    keep_owned_up_to_max_quota         every member keeps its first ``maxQuota`` claims, in claim order
    fill_unfilled_members              round robin over members under ``minQuota`` (sorted by id)
    steal_from_max_capacity_members    members still under ``minQuota`` take the first partition of members at ``maxQuota``
    assign_remaining_partitions        what is left goes one each to members at ``minQuota``

Unlike 3.0's builder (``reference/constrained.py``) any number of members may keep ``maxQuota``,
so the last step can run out of members and throw; there is no rack awareness and no duplicate
detection until 2.8.1. It is this release's only engine: ``StickyResult.engine`` is ``REFERENCE``.

2.8.1 (KAFKA-13081, ``constrained_assign_2_8``) takes the partitions ``allSubscriptionsEqual`` found
claimed twice (``HIGHEST_GENERATION_2_8``) out of every owned list before the first step, and counts
them as transferring when the fill or the last step hands them out, like revoked ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...errors import AssignorFailure
from ...javaorder import java_string_key
from ...model import TopicPartition
from ..sticky_types import REFERENCE, PriorOwners, StickyInput, StickyResult

if TYPE_CHECKING:
    from ..releases import Release

__all__ = ["constrained_assign_2_6", "constrained_assign_2_8"]


@dataclass
class Builder2_6:
    """The method's locals: mutable for one call."""

    members: list[str]
    unassigned: dict[TopicPartition, None]  # a TreeSet by (topic, partition); a dict keeps that order, removes in O(1)
    min_quota: int
    max_quota: int
    assignment: dict[str, list[TopicPartition]]
    all_revoked_partitions: set[TopicPartition] = field(default_factory=set)
    partitions_transferring_ownership: dict[TopicPartition, str] = field(default_factory=dict)
    unfilled_members: list[str] = field(default_factory=list)
    max_capacity_members: list[str] = field(default_factory=list)
    min_capacity_members: list[str] = field(default_factory=list)
    partitions_with_multiple_previous_owners: frozenset[TopicPartition] = frozenset()  # 2.8.1 on

    def transferring_if_handed_out(self, tp: TopicPartition) -> bool:
        """A partition handed to a member that did not keep it changes owner if it was revoked (or, from
        2.8.1, claimed twice)."""
        return tp in self.all_revoked_partitions or tp in self.partitions_with_multiple_previous_owners


def constrained_assign_2_6(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """``constrainedAssign`` (2.5-2.8.0): claim order, everyone keeps up to ``maxQuota``, steal when short."""
    b = _new_builder(inp)
    return _run(b, prior.consumer_to_owned_partitions)


def constrained_assign_2_8(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """``constrainedAssign`` (2.8.1-2.8.2): as 2.6's, without the partitions claimed twice (KAFKA-13081)."""
    b = _new_builder(inp)
    b.partitions_with_multiple_previous_owners = frozenset(prior.partitions_with_multiple_previous_owners)
    return _run(b, remove_doubly_claimed_partitions(b, prior))


def remove_doubly_claimed_partitions(b: Builder2_6, prior: PriorOwners) -> dict[str, tuple[TopicPartition, ...]]:
    """"Found partition ... still claimed as owned by consumer ...": each member's first claim on a partition
    claimed twice is dropped (``List.remove(Object)``, once per partition)."""
    owned_by = {}
    for member in b.members:
        owned = list(prior.consumer_to_owned_partitions.get(member, ()))
        for tp in b.partitions_with_multiple_previous_owners:
            if tp in owned:
                owned.remove(tp)
        owned_by[member] = tuple(owned)
    return owned_by


def _run(b: Builder2_6, owned_by) -> StickyResult:
    keep_owned_up_to_max_quota(b, owned_by)
    b.unfilled_members.sort(key=java_string_key)
    fill_unfilled_members(b)
    steal_from_max_capacity_members(b)
    assign_remaining_partitions(b)
    return StickyResult(
        {m: tuple(v) for m, v in b.assignment.items()}, b.partitions_transferring_ownership, engine=REFERENCE
    )


def _new_builder(inp: StickyInput) -> Builder2_6:
    members = list(inp.members)
    ppt = inp.partitions_per_topic
    unassigned = {TopicPartition(t, p): None for t in sorted(ppt, key=java_string_key) for p in range(ppt[t])}
    total, n = len(unassigned), len(members)
    # Java: (int) Math.floor(P / (double) N); an empty group gives NaN -> 0 and Infinity -> MAX_VALUE.
    return Builder2_6(
        members=members,
        unassigned=unassigned,
        min_quota=total // n if n else 0,
        max_quota=-(-total // n) if n else 2**31 - 1,
        assignment={m: [] for m in members},
    )


def keep_owned_up_to_max_quota(b: Builder2_6, owned_by) -> None:
    """"assign the first N partitions up to the max quota, and mark the remaining as being revoked"."""
    for member in b.members:
        owned = owned_by.get(member, ())
        for i, tp in enumerate(owned):
            tp = TopicPartition(tp[0], tp[1])
            if i < b.max_quota:
                b.assignment[member].append(tp)
                b.unassigned.pop(tp, None)
            else:
                b.all_revoked_partitions.add(tp)
        if len(owned) < b.min_quota:
            b.unfilled_members.append(member)
        else:
            # a member can be at both min and max capacity when minQuota == maxQuota
            if len(b.assignment[member]) == b.min_quota:
                b.min_capacity_members.append(member)
            if len(b.assignment[member]) == b.max_quota:
                b.max_capacity_members.append(member)


def fill_unfilled_members(b: Builder2_6) -> None:
    """Round robin over the unfilled members (sorted) while both they and the unassigned partitions last."""
    pool = iter(list(b.unassigned))
    unfilled = b.unfilled_members
    while unfilled and b.unassigned:
        still_unfilled = []
        exhausted = False
        for i, member in enumerate(unfilled):
            tp = next(pool, None)
            if tp is None:
                still_unfilled.extend(unfilled[i:])
                exhausted = True
                break
            b.assignment[member].append(tp)
            del b.unassigned[tp]
            if b.transferring_if_handed_out(tp):
                b.partitions_transferring_ownership[tp] = member
            if len(b.assignment[member]) == b.min_quota:
                b.min_capacity_members.append(member)
            else:
                still_unfilled.append(member)
        unfilled = still_unfilled
        if exhausted:
            break
    b.unfilled_members = unfilled


def steal_from_max_capacity_members(b: Builder2_6) -> None:
    """"If we ran out of unassigned partitions before filling all consumers, ... start stealing partitions
    from the over-full consumers at max capacity": each stolen partition is transferring."""
    for member in b.unfilled_members:
        remaining = b.min_quota - len(b.assignment[member])
        while remaining > 0:
            if not b.max_capacity_members:
                raise AssignorFailure(
                    "Some consumers are under capacity but all partitions have been assigned",
                    kafka_exception="IllegalStateException",
                )
            overloaded = b.max_capacity_members.pop(0)
            swapped = b.assignment[overloaded].pop(0)
            b.assignment[member].append(swapped)
            remaining -= 1
            b.partitions_transferring_ownership[swapped] = member
        b.min_capacity_members.append(member)


def assign_remaining_partitions(b: Builder2_6) -> None:
    """"distribute one partition each to all consumers at min capacity"; none left is an ``IllegalStateException``."""
    for tp in b.unassigned:
        if not b.min_capacity_members:
            raise AssignorFailure(
                "Some partitions are unassigned but all consumers are at maximum capacity",
                kafka_exception="IllegalStateException",
            )
        member = b.min_capacity_members.pop(0)
        b.assignment[member].append(tp)
        if b.transferring_if_handed_out(tp):
            b.partitions_transferring_ownership[tp] = member
