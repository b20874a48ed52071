"""What a member sends in its assignor user data, and what the leader's assignor makes of it (docs/rules.md R1-R4, §5.3-§5.4).

Each release's user data is one of four layouts, a ``UserData`` record that knows both sides:

    STICKY_V1               previous assignment + generation (KIP-341, 2.3 on)     StickyAssignor
    STICKY_V0               previous assignment only (2.2 and before)             StickyAssignor
    COOPERATIVE_GENERATION  the int32 generation (3.0 on)                          CooperativeStickyAssignor
    COOPERATIVE_GENERATION_3_0  the same, read from the user data only (3.0-3.3)   CooperativeStickyAssignor
    COOPERATIVE_GENERATION_2_8  the same int32, read from the user data only (2.8.1-2.8.2)
    NO_USER_DATA            nothing: ownedPartitions, no generation (2.4-2.8.0)   CooperativeStickyAssignor

``encode(member)`` is Kafka's ``subscriptionUserData`` for a member in that state; ``read(sub)``
is ``memberData(subscription)``: the claims and generation the assignor attributes to a decoded
member. ``member_data(sub, release, direct=...)`` is the entry point the registry hands the leader.
The assignors outside the sticky family send no user data and see the wire fields as they are
(``no_user_data``, ``wire_member_data``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Optional

from ..errors import AssignorFailure, DecodeError
from ..model import DEFAULT_GENERATION, Member
from .base import Subscription
from .sticky_types import MemberData

if TYPE_CHECKING:
    from .releases import Release

__all__ = [
    "UserData",
    "STICKY_V0",
    "STICKY_V1",
    "COOPERATIVE_GENERATION_3_0",
    "COOPERATIVE_GENERATION",
    "COOPERATIVE_GENERATION_2_8",
    "NO_USER_DATA",
    "member_data",
    "no_user_data",
    "wire_member_data",
]


@dataclass(frozen=True)
class UserData:
    """One user-data layout: what it carries, how a member writes it, how the assignor reads a subscription.

    ``carries_assignment``: the previous assignment travels in the user data (R1: the eager
    ``sticky`` assignor's only memory, since under EAGER ``ownedPartitions`` is empty).
    ``carries_generation``: the assignor knows a generation at all (R1 V1, R2); without it every
    claim comes without one, even in ``--direct`` mode.
    ``read_again``: ``memberData`` called a second time on the same subscription, for the releases
    whose general path does so (2.5-2.8, ``reference/general_2_6.py``): Kafka's readers parse
    ``subscription.userData()`` in place, so the second call sees only what the first left of the
    buffer. None: the second call sees what the first did.
    """

    name: str
    carries_assignment: bool
    carries_generation: bool
    encode: Callable[[Member], bytes | None]
    read: Callable[[Subscription], MemberData]
    read_again: Optional[Callable[[Subscription], MemberData]] = None


def _wire():  # the codecs import lazily: only the wire paths need them
    from .. import wire

    return wire


def _encode_sticky(member: Member, version: int) -> bytes | None:
    """§5.3: the last assignment (``owned``) and the generation it arrived in; ``None`` when the member
    owns nothing and has generation -1: before its first assignment ``subscriptionUserData`` returns null."""
    if not member.owned and member.generation == DEFAULT_GENERATION:
        return None
    return _wire().encode_sticky_user_data(member.owned, member.generation, version=version)


def _encode_sticky_v1(member: Member) -> bytes | None:
    return _encode_sticky(member, 1)


def _encode_sticky_v0(member: Member) -> bytes | None:
    return _encode_sticky(member, 0)


def _read_sticky(sub: Subscription) -> MemberData:
    """R1: ``StickyAssignor.memberData``: claims and generation only from the user data.

    null or empty user data -> no claims, generation absent; V1 -> claims + generation; V0 ->
    claims, generation absent; undecodable -> no claims, generation -1.
    """
    if not sub.user_data:
        return MemberData((), None)
    try:
        decoded = _wire().decode_sticky_user_data(sub.user_data)
    except DecodeError:
        return MemberData((), DEFAULT_GENERATION)
    if decoded.version == 0:
        return MemberData(decoded.previous_assignment, None)
    return MemberData(decoded.previous_assignment, decoded.generation)


def _sticky_buffer_left(data: bytes) -> bytes:
    """What ``deserializeTopicPartitionAssignment`` leaves of the buffer: the V1 read advances it (the V0
    fallback reads a duplicate), so after a V1 layout, or a V0 one (V1 fails at the missing generation),
    what follows the layout; after bytes neither decodes, what follows the point the V1 read failed at."""
    wire = _wire()
    try:
        return data[wire.decode(wire.STICKY_USER_DATA, data, version=1).end :]
    except DecodeError as v1_error:
        try:
            return data[wire.decode(wire.STICKY_USER_DATA, data, version=0).end :]
        except DecodeError:
            return data[v1_error.offset or 0 :]


def _read_sticky_again(sub: Subscription) -> MemberData:
    """``StickyAssignor.memberData`` a second time: it reads on from where the first read stopped, which
    after a well-formed user data is the end (no claims, generation absent)."""
    if not sub.user_data:
        return MemberData((), None)
    return _read_sticky(replace(sub, user_data=_sticky_buffer_left(sub.user_data)))


def _read_sticky_v0(sub: Subscription) -> MemberData:
    """R1 as 2.2 read it: the V0 layout only (a V1 buffer's trailing generation ignored); anything else throws."""
    if not sub.user_data:
        return MemberData((), None)
    try:
        decoded = _wire().decode_sticky_user_data(sub.user_data)
    except DecodeError as exc:
        raise AssignorFailure(
            f"member {sub.member_id!r}: sticky user data does not decode ({exc})", kafka_exception="SchemaException"
        ) from exc
    return MemberData(decoded.previous_assignment, None)


def _encode_cooperative(member: Member) -> bytes:
    """§5.4: the int32 generation of the last assignment received (-1 before it); always written."""
    return _wire().encode_cooperative_user_data(member.generation)


def _read_cooperative(sub: Subscription) -> MemberData:
    """R2: ``CooperativeStickyAssignor.memberData``: claims from ownedPartitions, generation from the wire or user data.

    The wire generation wins when present (v2+, value >= 0, R3); otherwise the user data's int32
    (null -> absent, under 4 bytes -> -1).
    """
    if sub.generation is not None and sub.generation >= 0:
        return MemberData(tuple(sub.owned), sub.generation)
    if sub.user_data is None:
        return MemberData(tuple(sub.owned), None)
    try:
        generation = _wire().decode_cooperative_user_data(sub.user_data)
    except DecodeError:
        generation = DEFAULT_GENERATION
    return MemberData(tuple(sub.owned), generation)


def _read_cooperative_2_8(sub: Subscription) -> MemberData:
    """R2 as 2.8.1-2.8.2 read it (KAFKA-13081's backport): the generation from the user data only, the
    subscription having no generation field yet (null -> absent, under 4 bytes -> -1)."""
    if sub.user_data is None:
        return MemberData(tuple(sub.owned), None)
    try:
        generation = _wire().decode_cooperative_user_data(sub.user_data)
    except DecodeError:
        generation = DEFAULT_GENERATION
    return MemberData(tuple(sub.owned), generation)


def _read_cooperative_2_8_again(sub: Subscription) -> MemberData:
    """2.8's ``memberData`` a second time: the first read consumed the int32, so a 4-byte user data now
    reads as -1 (the struct read fails on the empty rest and the assignor falls back to -1)."""
    if sub.user_data is None:
        return _read_cooperative_2_8(sub)
    left = sub.user_data[4:] if len(sub.user_data) >= 4 else sub.user_data
    return _read_cooperative_2_8(replace(sub, user_data=left))


def _read_cooperative_3_0(sub: Subscription) -> MemberData:
    """R2 from 3.0 to 3.3: the generation from the user data's int32 alone; the subscription had no
    ``generationId`` field yet (KIP-792, 3.4), so a v2+ field is not read (null -> absent, under 4
    bytes -> -1)."""
    if sub.user_data is None:
        return MemberData(tuple(sub.owned), None)
    try:
        generation = _wire().decode_cooperative_user_data(sub.user_data)
    except DecodeError:
        generation = DEFAULT_GENERATION
    return MemberData(tuple(sub.owned), generation)


def _read_owned_without_generation(sub: Subscription) -> MemberData:
    """R2 before 3.0: the cooperative assignor knew no generation anywhere; every claim comes without one."""
    return MemberData(tuple(sub.owned), None)


def no_user_data(member: Member) -> None:
    """``ConsumerPartitionAssignor.subscriptionUserData``'s default: null."""
    return None


STICKY_V1 = UserData(
    "sticky V1: previous assignment + generation (KIP-341)", True, True, _encode_sticky_v1, _read_sticky, _read_sticky_again
)
COOPERATIVE_GENERATION_3_0 = UserData(
    "cooperative: int32 generation, from the user data only (before KIP-792)", False, True, _encode_cooperative,
    _read_cooperative_3_0,
)
STICKY_V0 = UserData("sticky V0: previous assignment, no generation", True, False, _encode_sticky_v0, _read_sticky_v0)
COOPERATIVE_GENERATION = UserData("cooperative: int32 generation", False, True, _encode_cooperative, _read_cooperative)
COOPERATIVE_GENERATION_2_8 = UserData(
    "cooperative 2.8: int32 generation, read from the user data only",
    False,
    True,
    _encode_cooperative,
    _read_cooperative_2_8,
    _read_cooperative_2_8_again,
)
NO_USER_DATA = UserData("none: ownedPartitions, no generation", False, False, no_user_data, _read_owned_without_generation)


def member_data(sub: Subscription, release: Release, *, direct: bool = False) -> MemberData:
    """``memberData(subscription)`` of a sticky-family ``release`` (R1-R4).

    ``direct=True`` skips the user data: claims are ``sub.owned`` and the generation
    ``sub.generation`` as given (scenario fields, no wire), except that releases whose user data
    carries no generation (``sticky@2.2``, ``cooperative-sticky@2.4``/``2.6``) still see none.
    """
    layout = release.user_data
    if direct:
        known = layout.carries_generation and sub.generation is not None and sub.generation >= 0
        return MemberData(tuple(sub.owned), sub.generation if known else None)
    return layout.read(sub)


def wire_member_data(sub: Subscription, *, direct: bool = False) -> MemberData:
    """The claims and generation of an assignor outside the sticky family: the wire ``ownedPartitions`` and
    ``generationId`` as they are (direct or not: there is no user data to skip)."""
    return MemberData(tuple(sub.owned), sub.generation)
