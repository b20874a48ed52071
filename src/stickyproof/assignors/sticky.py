"""The sticky assignors: ``sticky`` (eager) and ``cooperative-sticky``, current and historical (KAFKA_SEMANTICS.md §1-§3).

Entry points (what the registry, the leader and the graders call)::

    assign_sticky(group, variant=...)              StickyAssignor
    assign_cooperative_sticky(group, variant=...)  CooperativeStickyAssignor (``revoking`` filled)
    member_data(sub, cooperative=..., ...)         memberData: claims and generation (R1-R4)
    sticky_user_data / cooperative_user_data       what a member in a given state sends (§5.3, §5.4)

Both run ``_sticky_core``: resolve prior owners (``ownership.py``), pick the path
(``all_subscriptions_equal``), run the constrained (``constrained.py``) or general
(``general.py``) path, and for the cooperative assignor withhold transferring partitions
(``cooperative.py``).

Variants reproduce older releases where their behaviour differs in ways stickyproof can grade
(§1.3): ``sticky@2.2`` (user data V0, every claim trusted: KAFKA-7026), ``sticky@2.6`` and
``cooperative-sticky@2.6`` (highest generation only, 2.6's constrained builder),
``cooperative-sticky@2.4`` (no generation at all), ``cooperative-sticky@3.5.1`` (the owner-map
overwrite, claim-order quotas). 2.2 and 2.4 had no constrained path: they always take the general
path. The general path itself is today's (``general_assign``) for every variant: the variants
model the ownership rules and the constrained builders, not the old general algorithms.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable, Mapping

from ..errors import AssignorFailure, DecodeError, UnknownAssignor
from ..javaorder import hashmap_order, java_string_key
from ..model import DEFAULT_GENERATION, Assignment, Member, Topic
from .base import GroupSubscription, Subscription
from .constrained import constrained_assign
from .cooperative import adjust_assignment
from .ownership import all_subscriptions_equal, resolve_prior_owners
from .racks import use_rack_aware_assignment
from .sticky_types import MemberData, PriorOwners, StickyInput, StickyResult

__all__ = [
    "STICKY_VARIANTS",
    "COOPERATIVE_VARIANTS",
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

STICKY_VARIANTS = ("2.2", "2.6")
COOPERATIVE_VARIANTS = ("2.4", "2.6", "3.5.1")

#: Releases before KAFKA-9987 (2.6) ran one algorithm, the general one, whatever the subscriptions.
_GENERAL_PATH_ONLY = ("2.2", "2.4")


def _check_variant(variant: str, known: tuple[str, ...], assignor: str) -> str:
    if variant != "current" and variant not in known:
        raise UnknownAssignor(
            f"unknown variant {variant!r} of {assignor} (known: current, {', '.join(known)})"
        )
    return variant


# ------------------------------------------------------------------------------------------
# memberData (R1-R4) and the user data a member sends


def _sticky_member_data(sub: Subscription, variant: str) -> MemberData:
    """R1: ``StickyAssignor.memberData``: claims and generation only from the user data.

    null or empty user data -> no claims, generation absent; V1 -> claims + generation; V0 ->
    claims, generation absent; undecodable -> no claims, generation -1. 2.2 read the V0 layout
    only (a V1 buffer's trailing generation ignored) and threw on anything else.
    """
    if not sub.user_data:
        return MemberData((), None)
    try:
        decoded = _wire().decode_sticky_user_data(sub.user_data)
    except DecodeError as exc:
        if variant == "2.2":
            raise AssignorFailure(
                f"member {sub.member_id!r}: sticky user data does not decode ({exc})", kafka_exception="SchemaException"
            ) from exc
        return MemberData((), DEFAULT_GENERATION)
    if variant == "2.2" or decoded.version == 0:
        return MemberData(decoded.previous_assignment, None)
    return MemberData(decoded.previous_assignment, decoded.generation)


def _cooperative_member_data(sub: Subscription, variant: str) -> MemberData:
    """R2: ``CooperativeStickyAssignor.memberData``: claims from ownedPartitions, generation from the wire or user data.

    The wire generation wins when present (v2+, value >= 0, R3); otherwise the user data's int32
    (null -> absent, under 4 bytes -> -1). Before 3.0 (variants 2.4, 2.6) there was no
    generation anywhere: every claim came without one.
    """
    if variant in ("2.4", "2.6"):
        return MemberData(tuple(sub.owned), None)
    if sub.generation is not None and sub.generation >= 0:
        return MemberData(tuple(sub.owned), sub.generation)
    if sub.user_data is None:
        return MemberData(tuple(sub.owned), None)
    try:
        generation = _wire().decode_cooperative_user_data(sub.user_data)
    except DecodeError:
        generation = DEFAULT_GENERATION
    return MemberData(tuple(sub.owned), generation)


def member_data(sub: Subscription, *, cooperative: bool, variant: str = "current", direct: bool = False) -> MemberData:
    """``memberData(subscription)`` of the eager (R1) or cooperative (R2) sticky assignor.

    ``direct=True`` skips the user data: claims are ``sub.owned`` and the generation
    ``sub.generation`` as given (scenario fields, no wire), except that variants whose assignor
    knew no generation (``sticky@2.2``, ``cooperative-sticky@2.4``/``2.6``) still see none.
    """
    _check_variant(variant, COOPERATIVE_VARIANTS if cooperative else STICKY_VARIANTS, _name(cooperative))
    if direct:
        blind = variant == "2.2" or (cooperative and variant in ("2.4", "2.6"))
        generation = None if blind or sub.generation is None or sub.generation < 0 else sub.generation
        return MemberData(tuple(sub.owned), generation)
    return _cooperative_member_data(sub, variant) if cooperative else _sticky_member_data(sub, variant)


def sticky_user_data(member: Member, variant: str = "current") -> bytes | None:
    """The user data a ``sticky`` member in this state sends (§5.3).

    V1: its last assignment (``owned``) and the generation it arrived in; V0 for 2.2. ``None``
    when it owns nothing and has generation -1: a member before its first assignment
    (``subscriptionUserData`` returns null while ``memberAssignment`` is unset).
    """
    _check_variant(variant, STICKY_VARIANTS, "sticky")
    if not member.owned and member.generation == DEFAULT_GENERATION:
        return None
    return _wire().encode_sticky_user_data(member.owned, member.generation, version=0 if variant == "2.2" else 1)


def cooperative_user_data(member: Member, variant: str = "current") -> bytes | None:
    """The user data a ``cooperative-sticky`` member sends (§5.4): its int32 generation; none before 3.0 (2.4, 2.6)."""
    _check_variant(variant, COOPERATIVE_VARIANTS, "cooperative-sticky")
    if variant in ("2.4", "2.6"):
        return None
    return _wire().encode_cooperative_user_data(member.generation)


def _wire():  # the codecs import lazily: only the wire paths need them
    from .. import wire

    return wire


def _name(cooperative: bool) -> str:
    return "cooperative-sticky" if cooperative else "sticky"


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


def build_sticky_input(group: GroupSubscription, *, cooperative: bool, variant: str = "current") -> StickyInput:
    """Decode every member once (``member_data``) and gather what the steps read (``StickyInput``)."""
    ppt = partitions_per_topic(group)
    partition_racks, rack_aware = _rack_inputs(group, ppt)
    return StickyInput(
        partitions_per_topic=ppt,
        members=members_in_map_order(s.member_id for s in group.members),
        subscriptions={s.member_id: tuple(s.topics) for s in group.members},
        member_data={
            s.member_id: member_data(s, cooperative=cooperative, variant=variant, direct=group.direct)
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
    )


# ------------------------------------------------------------------------------------------
# The core


def _general_assign(inp: StickyInput, prior: PriorOwners) -> StickyResult:
    """The general path (R26-R32), written apart in ``general.py``; absent until it lands."""
    try:
        from .general import general_assign
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.general":
            raise
        raise AssignorFailure("general path not available") from exc
    return general_assign(inp, prior)


def _takes_constrained_path(inp: StickyInput, variant: str) -> bool:
    """R12: equal subscriptions take the constrained path, from 2.6 on (2.2 and 2.4 had only the general one)."""
    return variant not in _GENERAL_PATH_ONLY and all_subscriptions_equal(inp)


def sticky_result(inp: StickyInput, variant: str = "current") -> StickyResult:
    """The sticky algorithm before any cooperative adjustment, with the builder's transferring record (R25).

    ``partitions_transferring_ownership`` is Kafka's ``assignor.partitionsTransferringOwnership``:
    a map on the constrained path, None on the general path.
    """
    prior = resolve_prior_owners(inp, variant=variant)
    if _takes_constrained_path(inp, variant):
        return constrained_assign(inp, prior, variant=variant)
    return _general_assign(inp, prior)


def _sticky_core(inp: StickyInput, variant: str, *, cooperative: bool) -> Assignment:
    """``AbstractStickyAssignor.assignPartitions`` (+ ``CooperativeStickyAssignor.adjustAssignment``) as named steps:
    resolve_prior_owners -> all_subscriptions_equal -> constrained_assign | general_assign (``sticky_result``)
    -> adjust_assignment."""
    result = sticky_result(inp, variant)
    if cooperative:
        return adjust_assignment(result, inp)
    return Assignment(dict(result.assignment))


def assign_sticky(group: GroupSubscription, *, variant: str = "current") -> Assignment:
    """``StickyAssignor`` (name ``sticky``, eager): claims from user data (R1), no revoking."""
    _check_variant(variant, STICKY_VARIANTS, "sticky")
    return _sticky_core(build_sticky_input(group, cooperative=False, variant=variant), variant, cooperative=False)


def assign_cooperative_sticky(group: GroupSubscription, *, variant: str = "current") -> Assignment:
    """``CooperativeStickyAssignor``: transferring partitions withheld this round, listed under ``revoking`` (R34).

    ``revoking[m]`` lists the partitions withheld from their new owner that ``m`` owned on the
    wire and no longer gets: ``m`` revokes them, and the follow-up rebalance hands them out (R40).
    """
    _check_variant(variant, COOPERATIVE_VARIANTS, "cooperative-sticky")
    return _sticky_core(build_sticky_input(group, cooperative=True, variant=variant), variant, cooperative=True)
