"""The group coordinator during an online migration between the classic and the consumer protocol
(docs/consumer-protocol.md, "Online migration").

After Kafka's ``GroupMetadataManager``: a classic group becomes a consumer group when a member's
first ``ConsumerGroupHeartbeat`` (epoch 0) reaches it and ``group.consumer.migration.policy`` allows
the upgrade (``validateOnlineUpgrade``, ``convertToConsumerGroup``, ``ConsumerGroup.fromClassicGroup``:
group and assignment epoch = the generation, every member STABLE at it with its last assignment as
assigned and target); classic members inside a consumer group send JoinGroup, SyncGroup, Heartbeat
and LeaveGroup, which the coordinator answers from their consumer-group records
(``classicGroupJoinToConsumerGroup``, ``classicGroupSyncToConsumerGroup``,
``classicGroupHeartbeatToConsumerGroup``, ``classicGroupLeaveToConsumerGroup``): their target comes
from the server-side assignor, their generation is their member epoch, they learn of a new target by
REBALANCE_IN_PROGRESS on their heartbeat; and the consumer group becomes a classic group again when
a consumer-protocol member is fenced or leaves and only classic members remain
(``validateOnlineDowngradeWithFencedMember``, ``convertToClassicGroup``, ``ClassicGroup.fromConsumerGroup``:
generation = group epoch, each member's assignment its target, a rebalance prepared at once).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from ...model import TopicPartition
from .classic_group import (
    CLASSIC_STABLE,
    ILLEGAL_GENERATION,
    REBALANCE_IN_PROGRESS,
    ClassicGroup,
    ClassicMember,
)
from .coordinator import UNKNOWN_MEMBER_ID, ConsumerCoordinator, HeartbeatRequest, HeartbeatResponse, Transition, _Refused
from .reconcile import STABLE, UNRELEASED_PARTITIONS, UNREVOKED_PARTITIONS, MemberRecord, new_member

__all__ = [
    "MIGRATION_POLICIES",
    "DEFAULT_MIGRATION_POLICY",
    "GROUP_ID_NOT_FOUND",
    "POLICY_REFUSAL",
    "ClassicAnswer",
    "Conversion",
    "MigrationCoordinator",
]

#: ``group.consumer.migration.policy``: name -> (upgrade enabled, downgrade enabled).
MIGRATION_POLICIES = {
    "bidirectional": (True, True),
    "upgrade": (True, False),
    "downgrade": (False, True),
    "disabled": (False, False),
}
DEFAULT_MIGRATION_POLICY = "bidirectional"
GROUP_ID_NOT_FOUND = "GROUP_ID_NOT_FOUND"
#: KAFKA-20640's refusal of a classic JoinGroup to a consumer group under the ``disabled`` policy
#: (``throwIfClassicMemberCannotJoinConsumerGroup`` in Kafka 4.4.0); the Java classic consumer raises
#: it from ``poll`` (not retriable).
POLICY_REFUSAL = "INCONSISTENT_GROUP_PROTOCOL"

CLASSIC, CONSUMER = "classic", "consumer"


@dataclass(frozen=True)
class ClassicAnswer:
    """A JoinGroup's or SyncGroup's answer to a classic member: an error, or its generation (the
    member epoch in a consumer group) and, for a SyncGroup or a completed barrier, its assignment.
    ``waiting``: the JoinGroup waits in a classic group's barrier."""

    member_id: str
    error: str | None = None
    generation: int = -1
    assignment: frozenset[TopicPartition] | None = None
    waiting: bool = False
    message: str = ""


@dataclass(frozen=True)
class Conversion:
    """The group changed type at ``tick``: ``to`` is the new type; ``epochs`` the epoch (generation)
    each member held just before, ``after`` just after; ``group_before``/``group_after`` the group
    epoch (generation) either side."""

    tick: int
    to: str
    epochs: tuple[tuple[str, int], ...]
    after: tuple[tuple[str, int], ...]
    group_before: int
    group_after: int


class MigrationCoordinator(ConsumerCoordinator):
    """A ``ConsumerCoordinator`` whose group may be, or become, a classic group (``classic`` is not
    None while it is one)."""

    def __init__(self, *args, policy: str = DEFAULT_MIGRATION_POLICY,
                 on_conversion: Callable[[Conversion], None] = lambda c: None, **kwargs):
        super().__init__(*args, **kwargs)
        self.policy = policy
        self.on_conversion = on_conversion
        self.delivered: list = []  # answers to JoinGroups that waited in a classic group's barrier
        self.classic: ClassicGroup | None = None
        self.join_timer: dict[str, int] = {}
        self._joining: tuple[str, ...] | None = None
        self.recreated_at = -1  # the last tick an empty group was deleted and another type created
        # the rebalance protocol (eager, cooperative) the leader of a classic group runs its assignor
        # with: the classic members' (``MigrationSimulation`` keeps it up to date)
        self.rebalance_protocol = "eager"

    @property
    def group_type(self) -> str:
        return CLASSIC if self.classic is not None else CONSUMER

    def start_classic(self, generation: int, rebalance_protocol: str, members: list[ClassicMember], now: int) -> None:
        """Start as a classic group (a scenario's classic members, stable at ``generation``, or nobody)."""
        self.classic = ClassicGroup(generation, rebalance_protocol, self.config, self.topics, self.notes, self.delivered)
        for m in members:
            self.classic.add(m, now)

    # ------------------------------------------------------------------------------------------
    # ConsumerGroupHeartbeat to a classic group: the upgrade

    def heartbeat(self, now: int, req: HeartbeatRequest) -> HeartbeatResponse:
        if self.classic is not None:
            if req.epoch != 0:
                return HeartbeatResponse(req.member_id, req.epoch, GROUP_ID_NOT_FOUND, "the group is not a consumer group")
            if self.classic.members:
                if not MIGRATION_POLICIES[self.policy][0]:
                    return HeartbeatResponse(req.member_id, req.epoch, GROUP_ID_NOT_FOUND,
                                             f"the group is a classic group and the migration policy {self.policy} "
                                             "does not allow an online upgrade")
                self._upgrade(now, req.member_id)
            else:
                self.notes.append("the empty classic group is deleted; a consumer group takes its place")
                self.classic, self.recreated_at = None, now
        return super().heartbeat(now, req)

    def _upgrade(self, now: int, by: str) -> None:
        """``convertToConsumerGroup``: JoinGroups waiting in the barrier are answered
        REBALANCE_IN_PROGRESS; every member STABLE at the generation with its last assignment."""
        group = self.classic
        assert group is not None
        group.cancel_joins()
        before = tuple((mid, group.generation) for mid in group.members)
        self.classic = None
        self.members, self.targets, self.partition_epochs = {}, {}, {}
        self.group_epoch = self.assignment_epoch = group.generation
        for m in sorted(group.members.values(), key=lambda m: m.order):
            record = MemberRecord(m.member_id, None, m.rack, m.topics, STABLE, group.generation, group.generation,
                                  assigned=m.assignment, order=self._next_order(), classic=m.protocols)
            self._commit(now, None, record, None)
            self.targets[m.member_id] = m.assignment
            self.session_deadline[m.member_id] = now + self.config.session_timeout
        self.subscription_metadata = self._metadata(self.members.values())
        self.notes.append(f"{by}'s ConsumerGroupHeartbeat upgrades the classic group (generation {group.generation}) "
                          f"to a consumer group at group epoch {self.group_epoch}")
        after = tuple((mid, r.epoch) for mid, r in self.members.items())
        self.on_conversion(Conversion(now, CONSUMER, before, after, group.generation, self.group_epoch))

    # ------------------------------------------------------------------------------------------
    # Classic members: JoinGroup, SyncGroup, Heartbeat, LeaveGroup

    def classic_join(self, now: int, member_id: str, rack: str | None, topics: tuple[str, ...],
                     protocols: tuple[str, ...], owned: frozenset[TopicPartition], owned_generation: int) -> ClassicAnswer:
        """A JoinGroup. To a classic group: the barrier. To a consumer group: the member's record is
        created or updated and reconciled at once with the owned partitions of its subscription, and
        the answer carries its member epoch as the generation (no barrier)."""
        if self.classic is None and not self.members:
            self.notes.append("the empty consumer group is replaced by a classic group")
            self.start_classic(0, self.rebalance_protocol, [], now)
            self.recreated_at = now
        if self.classic is None and self.policy == "disabled" and self.release.kafka_20640_fixed:
            return ClassicAnswer(member_id, POLICY_REFUSAL, message="the migration policy disabled refuses classic members "
                                                                    "in a consumer group (KAFKA-20640)")
        if self.classic is not None:
            done = self.classic.join(now, member_id, topics, protocols, rack, owned, owned_generation)
            if done is None:
                return ClassicAnswer(member_id, waiting=True)
            return ClassicAnswer(member_id, generation=done[0], assignment=done[1])
        self._joining = protocols
        try:
            resp = super().heartbeat(now, HeartbeatRequest(member_id, 0, None, rack, topics, owned))
        finally:
            self._joining = None
        self.rebalance_timer.pop(member_id, None)  # a classic member has join and sync timers only
        self.join_timer.pop(member_id, None)
        if resp.error is not None:
            return ClassicAnswer(member_id, resp.error, message=resp.message)
        return ClassicAnswer(member_id, generation=resp.epoch)

    def _member_for(self, req: HeartbeatRequest):
        if self._joining is None:
            return super()._member_for(req)
        member = self.members.get(req.member_id)
        if member is None:
            return replace(new_member(req.member_id, None, req.rack, req.topics, self._order), classic=self._joining), None, True
        if member.classic is None:
            raise _Refused(UNKNOWN_MEMBER_ID, f"member {req.member_id} does not use the classic protocol")
        return replace(member, classic=self._joining), None, False

    def classic_sync(self, now: int, member_id: str, generation: int) -> ClassicAnswer:
        """SyncGroup in a consumer group: the member's assigned partitions, unless its generation is
        not its member epoch (ILLEGAL_GENERATION) or a newer epoch (``_newer_epoch``) waits for it and
        it is not revoking (REBALANCE_IN_PROGRESS: rejoin)."""
        member = self._classic_member(member_id)
        if isinstance(member, ClassicAnswer):
            return member
        if generation != member.epoch:
            return ClassicAnswer(member_id, ILLEGAL_GENERATION, message=f"generation {generation} is not the member epoch {member.epoch}")
        if self._newer_epoch() > member.epoch and member.state != UNREVOKED_PARTITIONS:
            self.join_timer.setdefault(member_id, now + self.config.rebalance_timeout)
            return ClassicAnswer(member_id, REBALANCE_IN_PROGRESS, message=f"epoch {self._newer_epoch()} is ahead")
        self.session_deadline[member_id] = now + self.config.session_timeout
        return ClassicAnswer(member_id, generation=member.epoch, assignment=member.assigned)

    def classic_heartbeat(self, now: int, member_id: str, generation: int) -> str | None:
        """A classic Heartbeat: the error code, or None."""
        if self.classic is not None:
            return self.classic.heartbeat(now, member_id, generation)
        member = self._classic_member(member_id)
        if isinstance(member, ClassicAnswer):
            return member.error
        if generation != member.epoch:
            return ILLEGAL_GENERATION
        self.session_deadline[member_id] = now + self.config.session_timeout
        if member.epoch < self._newer_epoch() or member.state == UNREVOKED_PARTITIONS or \
                (member.state == UNRELEASED_PARTITIONS and not self._waiting_on_unreleased(member)):
            self.join_timer.setdefault(member_id, now + self.config.rebalance_timeout)
            return REBALANCE_IN_PROGRESS
        return None

    def classic_leave(self, now: int, member_id: str) -> str | None:
        """A classic member's own LeaveGroup: it is removed and the group epoch bumps, through the same
        fencing path as a consumer member's leave (since KAFKA-18150), so it downgrades the group when
        only classic members would remain."""
        if self.classic is not None:
            return None if self.classic.leave(now, member_id, "left the group (LeaveGroup)") else UNKNOWN_MEMBER_ID
        member = self._classic_member(member_id)
        if isinstance(member, ClassicAnswer):
            return member.error
        self._remove(now, member, bump_epoch=True, reason="left the group (LeaveGroup)")
        return None

    def _newer_epoch(self) -> int:
        """The epoch a classic member is told to rejoin for: the target assignment's since KAFKA-20272
        (a group epoch bump waits for its target), the group's before."""
        return self.assignment_epoch if self.release.kafka_20272_fixed else self.group_epoch

    def _classic_member(self, member_id: str) -> MemberRecord | ClassicAnswer:
        member = self.members.get(member_id)
        if member is None:
            return ClassicAnswer(member_id, UNKNOWN_MEMBER_ID, message=f"member {member_id} is not in the group")
        if member.classic is None:
            return ClassicAnswer(member_id, UNKNOWN_MEMBER_ID, message=f"member {member_id} does not use the classic protocol")
        return member

    def _waiting_on_unreleased(self, member: MemberRecord) -> bool:
        """``waitingOnUnreleasedPartition``: a partition of its target it lacks that a record still holds."""
        target = self.targets.get(member.member_id, frozenset())
        return any(self.partition_epoch(tp) != -1 for tp in target - member.assigned)

    # ------------------------------------------------------------------------------------------
    # Removal, timers and the downgrade

    def _remove(self, now: int, member: MemberRecord, *, bump_epoch: bool, reason: str) -> None:
        """``consumerGroupFenceMembers``: a member leaving or fenced when only classic members would
        remain converts the group to a classic group instead (``validateOnlineDowngradeWithFencedMembers``,
        the policy allowing it; the departing member's own protocol does not matter, as in Kafka 4.4.0)."""
        rest = [r for mid, r in self.members.items() if mid != member.member_id]
        if bump_epoch and rest and all(r.classic is not None for r in rest):
            if MIGRATION_POLICIES[self.policy][1]:
                self._downgrade(now, member, reason)
                return
            if member.classic is None:
                self.notes.append(f"only classic members remain; the migration policy {self.policy} keeps a consumer group")
        super()._remove(now, member, bump_epoch=bump_epoch, reason=reason)
        self.join_timer.pop(member.member_id, None)

    def _downgrade(self, now: int, leaving: MemberRecord, reason: str) -> None:
        """``convertToClassicGroup``: generation = group epoch; each remaining member's assignment is
        its target; a rebalance is prepared at once (every member must rejoin)."""
        others = tuple(r for mid, r in sorted(self.members.items()) if mid != leaving.member_id)
        self.on_transition(Transition(now, leaving, None, None, others))
        self.notes.append(f"{leaving.member_id} removed: {reason}")
        ordered = sorted((r for r in self.members.values() if r.member_id != leaving.member_id), key=lambda r: (r.order, r.member_id))
        before = tuple((r.member_id, r.epoch) for r in ordered)
        group_before = self.group_epoch
        members = [ClassicMember(r.member_id, r.topics, r.classic or (), r.rack, frozenset(), -1,
                                 self.targets.get(r.member_id, frozenset()), False, 0) for r in ordered]
        self.start_classic(self.group_epoch, self.rebalance_protocol, members, now)
        assert self.classic is not None
        self.classic.prepare(now, f"downgrade from a consumer group ({leaving.member_id} left only classic members)")
        for r in ordered:
            self.on_transition(Transition(now, r, None, None, ()))
        self.members, self.targets, self.partition_epochs = {}, {}, {}
        self.session_deadline, self.rebalance_timer, self.join_timer = dict(self.classic.session_deadline), {}, {}
        self.notes.append(f"the consumer group (group epoch {group_before}) is downgraded to a classic group at generation "
                          f"{self.classic.generation}")
        self.on_conversion(Conversion(now, CLASSIC, before, tuple((r.member_id, self.classic.generation) for r in ordered),
                                      group_before, self.classic.generation))

    def expire(self, now: int) -> list[str]:
        """The timeouts due: a classic group's own, or the consumer group's session, rebalance and
        (for classic members) join timeouts; a removal may downgrade the group mid-way."""
        if self.classic is not None:
            return self.classic.expire(now)
        removed = []
        for member_id in sorted(self.members):
            if self.classic is not None:
                removed += self.classic.expire(now)
                break
            record = self.members.get(member_id)
            if record is None:
                continue
            why = None
            if self.session_deadline.get(member_id, now + 1) <= now:
                why = "session timed out"
            elif member_id in self.rebalance_timer and self.rebalance_timer[member_id][0] <= now:
                timer = self.rebalance_timer.pop(member_id)
                if record.epoch == timer[1]:
                    why = f"did not revoke within the rebalance timeout (still at epoch {timer[1]})"
            elif self.join_timer.get(member_id, now + 1) <= now:
                why = "the classic member failed to join within the rebalance timeout"
            if why is not None:
                self._remove(now, record, bump_epoch=True, reason=why)
                removed.append(member_id)
        return removed

    def classic_state(self, member_id: str) -> MemberRecord | None:
        """A classic group's member as a record for the views: STABLE at the generation with its
        assignment, or ``PreparingRebalance`` while a rebalance is under way."""
        group = self.classic
        if group is None or member_id not in group.members:
            return None
        m = group.members[member_id]
        state = STABLE if group.state == CLASSIC_STABLE else group.state
        return MemberRecord(member_id, None, m.rack, m.topics, state, group.generation, group.generation,
                            assigned=m.assignment, classic=m.protocols)

