"""The leader's step: turn the JoinGroup metadata into a scenario and run ``stickyproof.leader`` (models/protocol.md §4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from ..assignors.base import COOPERATIVE, EAGER
from ..assignors.registry import AssignorInfo
from ..lookup import get_assignor
from ..errors import AssignorFailure, InvalidScenario, StickyproofError, UnknownAssignor
from ..model import Member, Scenario, Topic, TopicPartition
from .messages import JoinMetadata

__all__ = ["LeaderOutcome", "group_scenario", "run_leader", "leader_assignor"]


@dataclass(frozen=True)
class LeaderOutcome:
    """The leader's result: the assignment per member id, or the error raised to its caller.

    ``scenario`` is the leader's input as ``group_scenario`` built it (None when the leader failed
    before building it); ``revoking`` the owned partitions the round gave nobody (cooperative);
    ``assign_seconds`` the assignor call alone.
    """

    assignment: Mapping[str, tuple[TopicPartition, ...]] | None
    selected: str | None
    error: str | None = None
    notes: tuple[str, ...] = ()
    scenario: Scenario | None = None
    revoking: Mapping[str, tuple[TopicPartition, ...]] = field(default_factory=dict)
    assign_seconds: float = 0.0


def leader_assignor(
    leader: JoinMetadata, protocol: str | None, resolve: Callable[[str], AssignorInfo] = get_assignor
) -> AssignorInfo:
    """The leader's own assignor for the voted protocol name (a 2.2 leader runs its 2.2 ``sticky``);
    ``resolve`` is the simulation's (each name resolved once per run, with its call limit)."""
    for name in leader.assignors:
        info = resolve(name)
        if info.kafka_name == protocol or info.name == protocol:
            return info
    raise UnknownAssignor(f"the leader {leader.name} has no assignor named {protocol!r} (it offers {', '.join(leader.assignors)})")


def group_scenario(
    members: Sequence[tuple[str, JoinMetadata]],
    info: AssignorInfo,
    topics: Sequence[Topic],
    *,
    max_version: int = 3,
) -> Scenario:
    """The group as the leader decoded it, in admission order (the leader's HashMap insertion order, N1).

    Under an assignor whose claims travel in its user data (``sticky``: every member eager) a
    member's ``owned``/``generation`` are its user-data memory (R1); otherwise its wire ``ownedPartitions``/``generationId`` (R37; empty for eager members). The
    scenario is ``cooperative`` when some member is, so cooperative members' owned partitions reach
    the wire; each member announces its protocol names, so the leader's vote agrees with the broker's.
    """
    cooperative = any(m.protocol == COOPERATIVE for _, m in members) and COOPERATIVE in info.protocols
    out = []
    for member_id, m in members:
        if info.claims_from_user_data:
            owned, generation = m.memory, m.memory_generation
        else:
            owned = m.owned if m.protocol == COOPERATIVE else ()
            generation = m.generation
        out.append(
            Member(
                id=member_id,
                topics=m.topics,
                owned=tuple(owned),
                generation=generation if generation >= 0 else -1,
                version=min(m.version, max_version),
                rack=m.rack,
                instance_id=m.instance_id,
                assignors=m.kafka_names,
            )
        )
    return Scenario(tuple(topics), tuple(out), COOPERATIVE if cooperative else EAGER, "")


def run_leader(
    leader: JoinMetadata,
    members: Sequence[tuple[str, JoinMetadata]],
    protocol: str | None,
    topics: Sequence[Topic],
    *,
    validation: bool = True,
    max_version: int = 3,
    resolve: Callable[[str], AssignorInfo] = get_assignor,
    leader_id: str | None = None,
) -> LeaderOutcome:
    """``ConsumerCoordinator.onLeaderElected``: assign through ``stickyproof.leader.lead``.

    Kafka's throws (``AssignorFailure``, R39's ``IllegalStateException``) and inputs the leader path
    refuses (``InvalidScenario``) come back as the error the leader's caller sees.
    """
    from .. import leader as leader_module

    scenario: Scenario | None = None
    try:
        info = leader_assignor(leader, protocol, resolve)
        scenario = group_scenario(members, info, topics, max_version=max_version)
        validate = validation and leader.protocol == COOPERATIVE
        result = leader_module.lead(scenario, info, encode_assignments=False, validate=validate, leader=leader_id)
        assignment = dict(result.assignment.assignment)
        revoking = result.assignment.revoking
        notes, seconds = result.notes, result.assign_seconds
        if scenario.protocol == COOPERATIVE and not validate:
            notes = ("validateCooperativeAssignment not run",)  # the vote's notes belong to the leader's trace, not here
    except AssignorFailure as exc:
        return LeaderOutcome(None, protocol, f"{type(exc).__name__}: {exc}", scenario=scenario)
    except InvalidScenario as exc:
        return LeaderOutcome(None, protocol, f"{type(exc).__name__}: {exc}", scenario=scenario)
    except StickyproofError as exc:
        return LeaderOutcome(None, protocol, f"{type(exc).__name__}: {exc}", scenario=scenario)
    return LeaderOutcome(
        {k: tuple(v) for k, v in assignment.items()}, info.name, None, tuple(notes), scenario, dict(revoking), seconds
    )
