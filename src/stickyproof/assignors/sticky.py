"""The sticky assignors: ``sticky`` (eager) and ``cooperative-sticky``, current and historical (docs/rules.md §1-§3).

Entry points (what the registry, the leader and the graders call)::

    assign(group, release)                            any release of either assignor (``releases.py``)
    assign_sticky(group, release=STICKY)              StickyAssignor
    assign_cooperative_sticky(group, release=...)     CooperativeStickyAssignor (``revoking`` filled)
    member_data(sub, release, direct=...)             memberData: claims and generation (R1-R4, ``user_data.py``)
    sticky_user_data / cooperative_user_data          what a member in a given state sends (§5.3, §5.4)

Every one reads a ``releases.Release`` record: which user data, which ownership rule, whether
there is a constrained path and which builder runs it, whether the cooperative adjustment
follows. ``sticky_result`` is ``AbstractStickyAssignor.assignPartitions`` as named steps:
``takes_constrained_path`` (``ownership.py``, R12-R13) -> the release's ``OwnershipRule``
(R5-R11) -> its constrained builder (``constrained.py``) or the general path (``general.py``);
then, for the cooperative assignor, ``adjust_assignment`` withholds the transferring partitions
(``cooperative.py``).
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable, Mapping

from ..errors import UnknownAssignor
from ..javaorder import hashmap_order, java_string_key
from ..model import DEFAULT_GENERATION, Assignment, Member, Topic
from .base import GroupSubscription, Subscription
from .cooperative import adjust_assignment
from .general import general_assign
from .ownership import all_subscriptions_equal, takes_constrained_path
from .racks import use_rack_aware_assignment
from .releases import COOPERATIVE_STICKY, STICKY, Release, find_release, releases_of
from .sticky_types import MemberData, StickyInput, StickyResult
from .user_data import member_data

__all__ = [
    "STICKY_VARIANTS",
    "COOPERATIVE_VARIANTS",
    "assign",
    "assign_sticky",
    "assign_cooperative_sticky",
    "member_data",
    "sticky_user_data",
    "cooperative_user_data",
    "build_sticky_input",
    "sticky_result",
    "members_in_map_order",
    "partitions_per_topic",
    "all_subscriptions_equal",
]

STICKY_VARIANTS = tuple(r.version for r in releases_of(STICKY.kafka_name) if r is not STICKY)
"""The historical versions of ``sticky`` (from ``releases.RELEASES``)."""
COOPERATIVE_VARIANTS = tuple(r.version for r in releases_of(COOPERATIVE_STICKY.kafka_name) if r is not COOPERATIVE_STICKY)
"""The historical versions of ``cooperative-sticky`` (from ``releases.RELEASES``)."""


def _release_of(assignor: Release, release: Release | str) -> Release:
    """``release`` as a record of the same assignor as ``assignor``: a record, or a version to look up."""
    found = find_release(assignor.kafka_name, release) if isinstance(release, str) else release
    if found.kafka_name != assignor.kafka_name:
        raise UnknownAssignor(f"{found.name} is not a release of {assignor.kafka_name}")
    return found


# ------------------------------------------------------------------------------------------
# What a member sends (§5.3, §5.4)


def sticky_user_data(member: Member, release: Release | str = STICKY) -> bytes | None:
    """The user data a ``sticky`` member in this state sends (§5.3): V1, or V0 before KIP-341 (2.2).

    ``None`` when it owns nothing and has generation -1: a member before its first assignment.
    """
    return _release_of(STICKY, release).user_data.encode(member)


def cooperative_user_data(member: Member, release: Release | str = COOPERATIVE_STICKY) -> bytes | None:
    """The user data a ``cooperative-sticky`` member sends (§5.4): its int32 generation; none before 3.0 (2.4, 2.6)."""
    return _release_of(COOPERATIVE_STICKY, release).user_data.encode(member)


# ------------------------------------------------------------------------------------------
# From the leader's GroupSubscription to the algorithms' StickyInput


def members_in_map_order(member_ids: Iterable[str]) -> tuple[str, ...]:
    """N1 / 0.3: the leader's ``HashMap<memberId, Subscription>`` iteration order, members put in JoinGroup order."""
    return tuple(hashmap_order(list(member_ids)))


def partitions_per_topic(group: GroupSubscription) -> dict[str, int]:
    """0.4: topics somebody subscribes to that exist in metadata with at least one partition (N3)."""
    # Members usually share one topic list: deduplicate the lists before their topics.
    subscribed = set(chain.from_iterable({tuple(s.topics) for s in group.members}))
    counts = {}
    for name in sorted(subscribed, key=java_string_key):
        topic = group.metadata.get(name)
        if topic is not None and topic.partitions > 0:
            counts[name] = topic.partitions
    return counts


def _rack_inputs(
    group: GroupSubscription, topics: Mapping[str, int]
) -> tuple[dict[str, tuple[frozenset[str], ...]], bool]:
    """Replica racks per partition of the assigned topics and the R48 on/off decision.

    A topic without rack information has partitions whose replicas are on no known rack (the
    empty set), which differs from any non-empty union: that alone can turn rack mode on.
    """
    consumer_racks = [s.rack for s in group.members if s.rack]
    partition_racks: dict[str, tuple[frozenset[str], ...]] = {}
    if not consumer_racks:
        return partition_racks, False
    representatives: list[frozenset[str]] = []
    for name in topics:
        topic: Topic = group.metadata[name]
        if topic.racks is None:
            representatives.append(frozenset())
            continue
        per_partition = tuple(frozenset(r) for r in topic.racks)
        partition_racks[name] = per_partition
        representatives.extend(set(per_partition))
    return partition_racks, use_rack_aware_assignment(consumer_racks, representatives)


class _ReadAgain(Mapping[str, MemberData]):
    """``member_data_again``, decoded on first use: only the 2.5-2.8 general path ever reads it."""

    def __init__(self, subscriptions: Mapping[str, Subscription], read_again) -> None:
        self._subscriptions = subscriptions
        self._read_again = read_again
        self._cache: dict[str, MemberData] = {}

    def __getitem__(self, member: str) -> MemberData:
        if member not in self._cache:
            self._cache[member] = self._read_again(self._subscriptions[member])
        return self._cache[member]

    def __iter__(self):
        return iter(self._subscriptions)

    def __len__(self) -> int:
        return len(self._subscriptions)


def build_sticky_input(group: GroupSubscription, release: Release = STICKY) -> StickyInput:
    """Decode every member once (``member_data`` of ``release``) and gather what the steps read (``StickyInput``)."""
    read_again = release.user_data.read_again
    again = {} if group.direct or read_again is None else _ReadAgain({s.member_id: s for s in group.members}, read_again)
    ppt = partitions_per_topic(group)
    partition_racks, rack_aware = _rack_inputs(group, ppt)
    rack_aware = rack_aware and release.kip_881  # before 3.5 (KIP-881) racks were never read
    return StickyInput(
        partitions_per_topic=ppt,
        members=members_in_map_order(s.member_id for s in group.members),
        subscriptions={s.member_id: tuple(s.topics) for s in group.members},
        member_data={
            s.member_id: member_data(s, release, direct=group.direct)
            for s in group.members
        },
        wire_generation={
            s.member_id: s.generation if s.generation is not None and s.generation >= 0 else DEFAULT_GENERATION
            for s in group.members
        },
        wire_owned={s.member_id: tuple(s.owned) for s in group.members},
        member_rack={s.member_id: s.rack or None for s in group.members},
        partition_racks=partition_racks,
        rack_aware=rack_aware,
        member_data_again=again,
        user_data_sent=frozenset(
            s.member_id
            for s in group.members
            if ((bool(s.owned) or s.generation is not None) if group.direct else bool(s.user_data))
        ),
    )


# ------------------------------------------------------------------------------------------
# The core


def sticky_result(inp: StickyInput, release: Release = STICKY) -> StickyResult:
    """The sticky algorithm before any cooperative adjustment, with the builder's transferring record (R25).

    ``partitions_transferring_ownership`` is Kafka's ``assignor.partitionsTransferringOwnership``:
    a map on the constrained path, None on the general path. ``engine`` says which engine ran.
    """
    constrained = takes_constrained_path(inp, release)
    prior = release.ownership_rule.resolve(inp, constrained=constrained)
    if constrained:
        return release.constrained_builder(inp, prior, release)
    if release.general_builder is not None:
        return release.general_builder(inp, prior, release)
    return general_assign(inp, prior)


def assign(group: GroupSubscription, release: Release) -> Assignment:
    """``AbstractStickyAssignor.assignPartitions`` (+ ``CooperativeStickyAssignor.adjustAssignment``) of ``release``:
    build_sticky_input -> sticky_result -> adjust_assignment when the release is cooperative."""
    inp = build_sticky_input(group, release)
    result = sticky_result(inp, release)
    if release.cooperative:
        return adjust_assignment(result, inp)
    return Assignment(dict(result.assignment))


def assign_sticky(group: GroupSubscription, *, release: Release | str = STICKY) -> Assignment:
    """``StickyAssignor`` (name ``sticky``, eager): claims from user data (R1), no revoking."""
    return assign(group, _release_of(STICKY, release))


def assign_cooperative_sticky(group: GroupSubscription, *, release: Release | str = COOPERATIVE_STICKY) -> Assignment:
    """``CooperativeStickyAssignor``: transferring partitions withheld this round, listed under ``revoking`` (R34).

    ``revoking[m]`` lists the partitions withheld from their new owner that ``m`` owned on the
    wire and no longer gets: ``m`` revokes them, and the follow-up rebalance hands them out (R40).
    """
    return assign(group, _release_of(COOPERATIVE_STICKY, release))
