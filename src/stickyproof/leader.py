"""What a Kafka group leader does with a rebalance, step by step (docs/rules.md §0, R1-R3, R36-R39).

``lead(scenario, assignor)`` reads as ``ConsumerCoordinator``'s leader path:

    select_protocol            §0.2  the broker's vote over the members' assignor lists
    rebalance_protocol         R36   the scenario's protocol, which the assignor must support
    subscription_bytes         §0.1, R37  each member's JoinGroup metadata at its own version
    build_group                §0.3, R3   decode those bytes; the assignor sees only what decoding yields
    (assign)                         the assignor, timed
    validate_cooperative_assignment  R39  COOPERATIVE and not cooperative-sticky: no partition moves
                                          straight from its owner to another member
    assignment_bytes           §0.5  each member's result as a v3 ConsumerProtocolAssignment

Not done, because Kafka does not do it: KIP-792 proposed a leader-side ``validateSubscription``
rejecting partitions claimed by two members; it was added and removed again before KAFKA-13715 was
merged (commits 77b7356b -> ad775f89), and ``ConsumerCoordinator.onLeaderElected`` runs no such check.

``decoded_view(scenario, assignor)`` is the same pipeline stopped after decoding, with each member's
``owned``/``generation`` replaced by what the assignor attributes to it (R1 sticky user data, R2
cooperative, the wire fields otherwise): the group the oracle should optimise over.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from .assignors.base import COOPERATIVE, GroupSubscription, Subscription
from .assignors.registry import AssignorInfo
from .lookup import get_assignor
from .assignors.sticky_types import MemberData
from .errors import AssignorFailure, InvalidScenario
from .javaorder import hashmap_order
from .model import Assignment, Member, Scenario, TopicPartition
from .wire import WireAssignment, WireSubscription, decode_subscription, encode_assignment, encode_subscription

__all__ = [
    "LeaderResult",
    "lead",
    "decoded_view",
    "select_protocol",
    "rebalance_protocol",
    "subscription_bytes",
    "build_group",
    "member_data",
    "validate_cooperative_assignment",
    "assignment_bytes",
    "ASSIGNMENT_VERSION",
]

ASSIGNMENT_VERSION = 3
"""``ConsumerProtocol.serializeAssignment`` writes the highest version it knows."""


@dataclass(frozen=True)
class LeaderResult:
    """One rebalance as the leader ran it.

    ``group``: what the assignor was handed. ``selected``: the vote winner, or the assignor forced
    by the caller. ``subscriptions``: each member's encoded JoinGroup metadata (empty in direct
    mode, which bypasses the wire). ``assignments``: each member's encoded SyncGroup assignment.
    ``assign_seconds``: wall time of the assignor call alone. ``notes``: what the leader decided
    along the way, in order.
    """

    assignment: Assignment
    group: GroupSubscription
    selected: str
    protocol: str
    subscriptions: Mapping[str, bytes]
    assignments: Mapping[str, bytes]
    assign_seconds: float
    notes: tuple[str, ...]


def lead(
    scenario: Scenario,
    assignor: str | AssignorInfo | None = None,
    *,
    direct: bool = False,
    encode_assignments: bool = True,
    validate: bool = True,
    leader: str | None = None,
) -> LeaderResult:
    """Run one rebalance of ``scenario`` as Kafka's leader would, with ``assignor`` (or the vote winner).

    ``encode_assignments=False`` leaves ``assignments`` empty: the group simulator hands members their
    partitions directly, and at a million partitions the encoding costs as much as the assignor.
    ``validate=False`` skips ``validateCooperativeAssignment`` (R39) as a leader does when it is not
    itself cooperative (an eager leader of a mixed group), or the simulator's switch for it is off.
    ``leader``: the member running this (default: the scenario's first member, ``build_group``).

    Raises ``InvalidScenario`` for a group Kafka would not get this far with (no common assignor and
    none forced; a cooperative rebalance with an eager-only assignor; a consumer group, which has no
    leader), ``AssignorFailure`` for the
    assignor's own throws and for R39's ``IllegalStateException``.
    """
    if scenario.is_consumer_group:
        # A consumer group (KIP-848) has no leader: its members never send JoinGroup, so a classic
        # rebalance of it would grade something Kafka never runs.
        raise InvalidScenario(
            "group_protocol",
            "a consumer group (KIP-848) has no leader to run a classic rebalance; "
            "'stickyproof assign' runs its server-side assignors (uniform, consumer-range)",
        )
    notes: list[str] = []
    info, selected = _choose_assignor(scenario, assignor, notes)
    protocol = rebalance_protocol(scenario, info)
    subscriptions = {} if direct else {m.id: subscription_bytes(m, info, protocol) for m in scenario.members}
    group = build_group(scenario, info, protocol, direct=direct, subscriptions=subscriptions, leader=leader)

    started = time.perf_counter()
    assignment = info.fn(group)
    assign_seconds = time.perf_counter() - started

    if protocol == COOPERATIVE:
        owned = {s.member_id: s.owned for s in group.members}
        if not validate:
            notes.append("validateCooperativeAssignment not run")
        elif info.is_cooperative_sticky:
            notes.append("validate_cooperative_assignment skipped: ConsumerCoordinator exempts cooperative-sticky (R39)")
        else:
            reassigned = validate_cooperative_assignment(owned, assignment)
            if reassigned:
                raise AssignorFailure(
                    "Assignor supporting the COOPERATIVE protocol violates its requirements: "
                    f"{info.name} gave {', '.join(map(str, reassigned[:10]))}"
                    f"{' ...' if len(reassigned) > 10 else ''} to a new member while another member still owns it (R39)",
                    kafka_exception="java.lang.IllegalStateException",
                )
            notes.append("validate_cooperative_assignment passed")
        if not any(assignment.revoking.values()):
            assignment = Assignment(assignment.assignment, _revoking(owned, assignment))
    assignments = assignment_bytes(assignment, [m.id for m in scenario.members]) if encode_assignments else {}
    return LeaderResult(assignment, group, selected, protocol, subscriptions, assignments, assign_seconds, tuple(notes))


def decoded_view(scenario: Scenario, assignor: str | AssignorInfo) -> Scenario:
    """``scenario`` with each member's ``owned``/``generation`` as ``assignor``'s leader attributes them.

    Sticky: claims and generation from its user data (R1). Cooperative sticky: R2 (wire owned, wire
    generation or the user-data generation). Others: the wire ``ownedPartitions``/``generationId``.
    An absent generation is written -1 (R4). Everything else is the scenario's.
    """
    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    protocol = rebalance_protocol(scenario, info)
    subscriptions = {m.id: subscription_bytes(m, info, protocol) for m in scenario.members}
    group = build_group(scenario, info, protocol, direct=False, subscriptions=subscriptions)
    members = []
    for m, s in zip(scenario.members, group.members):
        data = member_data(s, info)
        generation = -1 if data.generation is None else data.generation
        members.append(replace(m, owned=tuple(data.partitions), generation=generation))
    return replace(scenario, members=tuple(members))


# ------------------------------------------------------------------------------------------
# §0.2 protocol vote, R36 rebalance protocol


def select_protocol(members: Sequence[Member]) -> tuple[str | None, dict[str, int]]:
    """The broker's ``ClassicGroup.selectProtocol`` over the members' ``assignors`` lists (§0.2).

    Candidates are the names every member offers; each member votes for its first candidate; the
    most votes win, ties going to the first maximum met iterating the votes ``HashMap`` (Java
    ``Stream.max`` keeps the earlier of equal elements). Returns ``(None, {})`` when some member
    lists no assignors (no vote possible), and raises ``InvalidScenario`` when there is no common
    name (the broker rejects such a join with INCONSISTENT_GROUP_PROTOCOL).
    """
    if not members or any(not m.assignors for m in members):
        return None, {}
    offered = [list(dict.fromkeys(m.assignors)) for m in members]
    candidates = set(offered[0]).intersection(*offered[1:])
    if not candidates:
        raise InvalidScenario(
            "members",
            "no assignor is offered by every member (the broker rejects the join: INCONSISTENT_GROUP_PROTOCOL)",
        )
    votes: dict[str, int] = {}
    for names in offered:
        choice = next(n for n in names if n in candidates)
        votes[choice] = votes.get(choice, 0) + 1
    winner, best = None, -1
    for name in hashmap_order(votes):
        if votes[name] > best:
            winner, best = name, votes[name]
    return winner, votes


def _choose_assignor(
    scenario: Scenario, assignor: str | AssignorInfo | None, notes: list[str]
) -> tuple[AssignorInfo, str]:
    try:
        winner, votes = select_protocol(scenario.members)
    except InvalidScenario:
        if assignor is None:
            raise
        winner, votes = None, {}
        notes.append("no assignor is offered by every member; running the forced assignor")
    if votes:
        tally = ", ".join(f"{n}={c}" for n, c in sorted(votes.items()))
        notes.append(f"group protocol vote: {winner} ({tally})")
    if assignor is None:
        if winner is None:
            raise InvalidScenario(
                "members", "no assignor given and not every member lists its assignors (members[].assignors)"
            )
        return get_assignor(winner), winner
    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    if winner is not None and winner not in (info.name, info.kafka_name):
        notes.append(f"the vote chose {winner}; running {info.name} as forced")
    return info, info.name


def rebalance_protocol(scenario: Scenario, info: AssignorInfo) -> str:
    """The scenario's protocol, checked against what the assignor supports (R36)."""
    if scenario.protocol not in info.protocols:
        raise InvalidScenario(
            "protocol",
            f"{scenario.protocol} rebalancing needs an assignor supporting it, and {info.name} supports only "
            f"{', '.join(info.protocols)} (R36: the consumer would refuse this configuration)",
        )
    return scenario.protocol


# ------------------------------------------------------------------------------------------
# §0.1 what each member sends, §0.3 what the leader decodes


def subscription_bytes(member: Member, info: AssignorInfo, protocol: str) -> bytes:
    """The JoinGroup metadata ``member`` sends for ``info`` (``ConsumerCoordinator.metadata``).

    ownedPartitions: what it holds after ``onJoinPrepare`` — everything under COOPERATIVE, nothing
    under EAGER (R37); generationId: its generation; user data: the assignor's
    (``subscriptionUserData``, ``AssignorInfo.user_data``). Encoded at the member's own version,
    which drops what it lacks.
    A scenario generation of -1 means "unknown" (docs/scenario-format.md), not a reset member that
    declared its partitions lost, so its owned partitions are still sent.
    """
    owned = member.owned if protocol == COOPERATIVE else ()
    sub = WireSubscription(
        version=member.version,
        topics=tuple(member.topics),
        user_data=info.user_data(member),
        owned=tuple(owned),
        generation=member.generation,
        rack=member.rack,
    )
    return encode_subscription(sub, member.version)


def build_group(
    scenario: Scenario,
    info: AssignorInfo,
    protocol: str,
    *,
    direct: bool = False,
    subscriptions: Mapping[str, bytes] | None = None,
    leader: str | None = None,
) -> GroupSubscription:
    """The ``GroupSubscription`` the leader hands the assignor; ``leader`` is the member running it
    (a scenario names no leader: its first member by default, as the member that formed the group).

    Wire mode: each member's bytes decoded (``ConsumerProtocol.deserializeSubscription``), then R3
    (negative generation -> absent; ``""`` rack -> absent); the instance id comes from the JoinGroup
    response, not the metadata; each ``Subscription.raw`` keeps the bytes as received, for an assignor
    that decodes them itself (raw wire mode, models/assignor-protocol.md §3). Direct mode: the
    scenario's own fields, no wire.
    """
    metadata = {t.name: t for t in scenario.topics}
    members: list[Subscription] = []
    for m in scenario.members:
        if direct:
            members.append(
                Subscription(
                    member_id=m.id,
                    topics=tuple(m.topics),
                    user_data=info.user_data(m),
                    owned=tuple(m.owned),
                    generation=m.generation if m.generation >= 0 else None,
                    rack=m.rack,
                    instance_id=m.instance_id,
                    version=m.version,
                )
            )
            continue
        data = subscriptions[m.id] if subscriptions is not None else subscription_bytes(m, info, protocol)
        wire = decode_subscription(data)
        members.append(
            Subscription(
                member_id=m.id,
                topics=wire.topics,
                user_data=wire.user_data,
                owned=wire.owned,
                generation=wire.generation if wire.generation >= 0 else None,
                rack=wire.rack or None,
                instance_id=m.instance_id,
                version=wire.version,
                raw=data,
            )
        )
    if leader is None and scenario.members:
        leader = scenario.members[0].id
    return GroupSubscription(metadata, tuple(members), protocol, direct, leader)


def member_data(subscription: Subscription, info: AssignorInfo, *, direct: bool = False) -> MemberData:
    """The claims and generation ``info`` attributes to a decoded member (``memberData``, R1, R2).

    The registry supplies the rule with the assignor (``AssignorInfo.member_data``): the sticky
    assignors read their user data as their release does; every other assignor sees the wire
    ``ownedPartitions`` and ``generationId`` as they are.
    """
    return info.member_data(subscription, direct=direct)


# ------------------------------------------------------------------------------------------
# R39 and §0.5


def validate_cooperative_assignment(
    owned: Mapping[str, Sequence[TopicPartition]], assignment: Assignment
) -> list[TopicPartition]:
    """``ConsumerCoordinator.validateCooperativeAssignment`` (R39): partitions that some member gains
    while some member loses them; sorted. Empty = the check passes.

    Per member of the assignment: added = assigned - owned, revoked = owned - assigned. The loophole
    is Kafka's: a partition claimed by two members and assigned to one of them is not "added".
    """
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member_id, assigned in assignment.assignment.items():
        mine = set(owned.get(member_id, ()))
        given = set(assigned)
        added |= given - mine
        revoked |= mine - given
    return sorted(added & revoked)


def _revoking(owned: Mapping[str, Sequence[TopicPartition]], assignment: Assignment) -> dict[str, tuple[TopicPartition, ...]]:
    """Owned partitions the round takes away and gives to nobody (docs/scenario-format.md ``revoking``)."""
    given = {tp for tps in assignment.assignment.values() for tp in tps}
    out: dict[str, tuple[TopicPartition, ...]] = {}
    for member_id, tps in owned.items():
        mine = set(assignment.assignment.get(member_id, ()))
        lost = tuple(tp for tp in tps if tp not in mine and tp not in given)
        if lost:
            out[member_id] = lost
    return out


def assignment_bytes(assignment: Assignment, member_ids: Sequence[str]) -> dict[str, bytes]:
    """Each member's SyncGroup assignment: v3 ``ConsumerProtocolAssignment``, no user data (§0.5)."""
    return {
        m: encode_assignment(WireAssignment(ASSIGNMENT_VERSION, tuple(assignment.assignment.get(m, ())), None))
        for m in member_ids
    }
