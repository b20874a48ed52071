"""The KIP-848 group coordinator: ``ConsumerGroupHeartbeat`` handling, the group epoch, the target
assignment per group epoch, member records, partition epochs, session and rebalance timeouts
(docs/consumer-protocol.md, "The coordinator").

After Kafka's ``GroupMetadataManager.consumerGroupHeartbeat``: validate the member and its epoch,
update its subscription (a new member, a subscription change or a metadata change bumps the group
epoch), compute a new target when the group epoch is ahead of the assignment epoch, reconcile the
member (``reconcile.reconcile``) and answer with its epoch and assigned partitions. Every state
change goes through ``_commit`` so the monitors see each record transition with the group as it
stood before it. One deliberate simplification: members always send their owned partitions (a full
request), so every successful response carries the assignment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping

from ...errors import StickyproofError
from ...model import CONSUMER, Assignment, Member, Scenario, Topic, TopicPartition
from ..config import GroupConfig
from .reconcile import (
    LEAVE_EPOCH,
    REVOKING,
    STATIC_LEAVE_EPOCH,
    UNREVOKED_PARTITIONS,
    Fenced,
    MemberRecord,
    epoch_error,
    is_reconciled,
    new_member,
    reconcile,
    remove_partition_epochs,
    update_partition_epochs,
)
from .releases import CoordinatorRelease

__all__ = [
    "HeartbeatRequest",
    "HeartbeatResponse",
    "Transition",
    "ConsumerCoordinator",
    "FENCED_MEMBER_EPOCH",
    "UNKNOWN_MEMBER_ID",
    "UNRELEASED_INSTANCE_ID",
    "FENCED_INSTANCE_ID",
    "UNKNOWN_SERVER_ERROR",
]

FENCED_MEMBER_EPOCH = "FENCED_MEMBER_EPOCH"
UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
UNRELEASED_INSTANCE_ID = "UNRELEASED_INSTANCE_ID"
FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"
UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"


@dataclass(frozen=True)
class HeartbeatRequest:
    """What a member sends: its member id (client-generated, KIP-1082), epoch (0 joins, -1 leaves,
    -2 a static member's leave), instance id, rack, subscribed topics and owned partitions."""

    member_id: str
    epoch: int
    instance_id: str | None
    rack: str | None
    topics: tuple[str, ...]
    owned: frozenset[TopicPartition]


@dataclass(frozen=True)
class HeartbeatResponse:
    """The coordinator's answer: the member's epoch and assignment, or an error code and why."""

    member_id: str
    epoch: int
    error: str | None = None
    message: str = ""
    assignment: frozenset[TopicPartition] | None = None


@dataclass(frozen=True)
class Transition:
    """One member record written: ``old`` (None: created) to ``new`` (None: removed), the owned
    partitions of the heartbeat that caused it (None: no heartbeat, e.g. a timeout), every other
    member's record as the group stood just before, and the member's target when reconciliation
    wrote the record."""

    tick: int
    old: MemberRecord | None
    new: MemberRecord | None
    owned: frozenset[TopicPartition] | None
    others: tuple[MemberRecord, ...]
    target: frozenset[TopicPartition] | None = None


class _Refused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class ConsumerCoordinator:
    """One consumer group's coordinator. ``assign`` is the server-side assignor's entry
    (``AssignorInfo.consumer_group``); ``topics`` is read at every heartbeat (the metadata image)."""

    def __init__(self, release: CoordinatorRelease, config: GroupConfig, assign: Callable[[Scenario], Assignment],
                 topics: Callable[[], Mapping[str, Topic]], notes: list[str],
                 on_transition: Callable[[Transition], None], name: str = ""):
        self.release = release
        self.config = config
        self.assign = assign
        self.topics = topics
        self.notes = notes
        self.on_transition = on_transition
        self.name = name
        # KAFKA-20268: a new group starts at epoch 1 with an empty target of epoch 1 (so a member that
        # joins before the first target is computed has an epoch to reconcile towards); before, at 0
        self.group_epoch = self.assignment_epoch = 1 if release.kafka_20268_fixed else 0
        self.members: dict[str, MemberRecord] = {}
        self.targets: dict[str, frozenset[TopicPartition]] = {}
        self.partition_epochs: dict[TopicPartition, int] = {}
        self.subscription_metadata: tuple[tuple[str, int], ...] = ()
        self.session_deadline: dict[str, int] = {}
        self.rebalance_timer: dict[str, tuple[int, int]] = {}
        self.bumped_at = -1  # the last tick the group epoch moved
        self._order = 0

    # ------------------------------------------------------------------------------------------
    # Setup and views

    def establish(self, records: list[MemberRecord], now: int) -> None:
        """Start from a settled group (a scenario's members with their targets): group and assignment
        epoch 1, every member STABLE at epoch 1 owning its target."""
        self.group_epoch = self.assignment_epoch = 1
        for record in records:
            record = replace(record, order=self._next_order())
            self._commit(now, None, record, None)
            self.targets[record.member_id] = record.assigned
            self.session_deadline[record.member_id] = now + self.config.session_timeout
        self.subscription_metadata = self._metadata(self.members.values())

    def partition_epoch(self, tp: TopicPartition) -> int:
        """-1 when no member record holds ``tp`` (``currentPartitionEpoch``)."""
        return self.partition_epochs.get(tp, -1)

    def static_member(self, instance_id: str) -> MemberRecord | None:
        for record in self.members.values():
            if record.instance_id == instance_id:
                return record
        return None

    # ------------------------------------------------------------------------------------------
    # Heartbeats

    def heartbeat(self, now: int, req: HeartbeatRequest) -> HeartbeatResponse:
        """Handle one ``ConsumerGroupHeartbeat``; nothing changes when it is refused."""
        try:
            if req.epoch == LEAVE_EPOCH:
                return self._leave(now, req)
            if req.epoch == STATIC_LEAVE_EPOCH:
                return self._static_leave(now, req)
            return self._heartbeat(now, req)
        except _Refused as exc:
            return HeartbeatResponse(req.member_id, req.epoch, exc.code, exc.message)

    def _member_for(self, req: HeartbeatRequest) -> tuple[MemberRecord, MemberRecord | None, bool]:
        """(the member, the static member it replaces or None, whether it is new to the group)."""
        if req.instance_id is None:
            member = self.members.get(req.member_id)
            if member is None:
                if req.epoch == 0:
                    return new_member(req.member_id, None, req.rack, req.topics, self._order), None, True
                raise _Refused(UNKNOWN_MEMBER_ID, f"member {req.member_id} is not in the group")
            self._check_epoch(member, req)
            return member, None, False
        existing = self.static_member(req.instance_id)
        if req.epoch == 0:
            if existing is None:
                return new_member(req.member_id, req.instance_id, req.rack, req.topics, self._order), None, True
            if existing.epoch != STATIC_LEAVE_EPOCH:
                raise _Refused(UNRELEASED_INSTANCE_ID, f"instance {req.instance_id} is still held by {existing.member_id}")
            # the new member takes the old one's place, assignment and target, at epoch 0 (and, for
            # the early-access machine, no target epoch yet, so it reconciles at once as in 3.7)
            return replace(existing, member_id=req.member_id, epoch=0, previous_epoch=0, target_epoch=0), existing, False
        if existing is None:
            raise _Refused(UNKNOWN_MEMBER_ID, f"instance {req.instance_id} is not in the group")
        if existing.member_id != req.member_id:
            raise _Refused(FENCED_INSTANCE_ID, f"instance {req.instance_id} now belongs to {existing.member_id}")
        self._check_epoch(existing, req)
        return existing, None, False

    def _check_epoch(self, member: MemberRecord, req: HeartbeatRequest) -> None:
        why = epoch_error(member, req.epoch, req.owned, self.release)
        if why is not None:
            raise _Refused(FENCED_MEMBER_EPOCH, why)

    def _heartbeat(self, now: int, req: HeartbeatRequest) -> HeartbeatResponse:
        member, replaced, created = self._member_for(req)
        updated = replace(member, topics=req.topics, rack=req.rack)
        bump = created or updated.topics != member.topics
        group = dict(self.members)
        if replaced is not None:
            group.pop(replaced.member_id)
        group[updated.member_id] = updated
        metadata = self._metadata(group.values())
        bump = bump or metadata != self.subscription_metadata
        group_epoch = self.group_epoch + 1 if bump else self.group_epoch
        targets = dict(self.targets)
        if replaced is not None:
            targets[updated.member_id] = targets.pop(replaced.member_id, frozenset())
        assignment_epoch = self.assignment_epoch
        if group_epoch > assignment_epoch:
            targets = self._compute_targets(group, targets, group_epoch)  # may refuse: nothing committed
            assignment_epoch = group_epoch
        target = targets.get(updated.member_id, frozenset())
        # commit what the heartbeat changed before reconciling, as Kafka's records are replayed in order
        if replaced is not None:
            self._remove(now, replaced, bump_epoch=False, reason="replaced by its new member id")
            self._commit(now, None, updated, req.owned)
        elif created:
            self._order += 1
            self._commit(now, None, updated, req.owned)
        elif updated != member:
            self._commit(now, member, updated, req.owned)
        if group_epoch != self.group_epoch:
            self.notes.append(f"group epoch {self.group_epoch} -> {group_epoch}")
            self.group_epoch, self.bumped_at = group_epoch, now
        if assignment_epoch != self.assignment_epoch:
            self.notes.append(f"target assignment computed for epoch {assignment_epoch}")
        self.subscription_metadata = metadata
        self.targets, self.assignment_epoch = targets, assignment_epoch
        record = updated
        if not is_reconciled(updated, assignment_epoch, self.release):
            try:
                record = reconcile(updated, assignment_epoch, target, self.partition_epoch, req.owned, self.release)
            except Fenced as exc:
                raise _Refused(FENCED_MEMBER_EPOCH, str(exc)) from exc
            if record != updated:
                self._commit(now, updated, record, req.owned, target)
                if record.state in (UNREVOKED_PARTITIONS, REVOKING):
                    self.rebalance_timer[record.member_id] = (now + self.config.rebalance_timeout, record.epoch)
                else:
                    self.rebalance_timer.pop(record.member_id, None)
        self.session_deadline[record.member_id] = now + self.config.session_timeout
        return HeartbeatResponse(record.member_id, record.epoch, assignment=record.assigned)

    def _leave(self, now: int, req: HeartbeatRequest) -> HeartbeatResponse:
        member = self.members.get(req.member_id)
        if req.instance_id is not None:
            member = self.static_member(req.instance_id)
            if member is not None and member.member_id != req.member_id:
                raise _Refused(FENCED_INSTANCE_ID, f"instance {req.instance_id} now belongs to {member.member_id}")
        if member is None:
            raise _Refused(UNKNOWN_MEMBER_ID, f"member {req.member_id} is not in the group")
        self._remove(now, member, bump_epoch=True, reason="left the group (epoch -1)")
        return HeartbeatResponse(req.member_id, LEAVE_EPOCH)

    def _static_leave(self, now: int, req: HeartbeatRequest) -> HeartbeatResponse:
        """A static member's leave keeps its assignment (epoch -2) until its session times out or a new
        member with its instance id replaces it; the group epoch does not move."""
        member = self.static_member(req.instance_id) if req.instance_id else None
        if member is None:
            raise _Refused(UNKNOWN_MEMBER_ID, f"instance {req.instance_id} is not in the group")
        if member.member_id != req.member_id:
            raise _Refused(FENCED_INSTANCE_ID, f"instance {req.instance_id} now belongs to {member.member_id}")
        self._commit(now, member, replace(member, epoch=STATIC_LEAVE_EPOCH, pending_revocation=frozenset()), None)
        self.notes.append(f"{member.member_id} left as static member {member.instance_id} (epoch -2, assignment kept)")
        return HeartbeatResponse(req.member_id, STATIC_LEAVE_EPOCH)

    def bump_group_epoch(self, now: int, reason: str) -> None:
        """Move the group epoch by one without a membership change, as a subscription-metadata change
        does; the new target is computed at the next heartbeat, as for any bump. The history replay
        (``history.py``) uses it for a ``new-target`` that no join or leave caused."""
        self.group_epoch += 1
        self.bumped_at = now
        self.notes.append(f"group epoch -> {self.group_epoch} ({reason})")

    # ------------------------------------------------------------------------------------------
    # Timers

    def expire(self, now: int) -> list[str]:
        """Fire the session and rebalance timeouts due at ``now``; the member ids removed."""
        removed = []
        for member_id in sorted(self.members):
            deadline = self.session_deadline.get(member_id)
            if deadline is not None and deadline <= now:
                self._remove(now, self.members[member_id], bump_epoch=True, reason="session timed out")
                removed.append(member_id)
                continue
            timer = self.rebalance_timer.get(member_id)
            if timer is not None and timer[0] <= now:
                self.rebalance_timer.pop(member_id)
                if self.members[member_id].epoch == timer[1]:
                    self._remove(now, self.members[member_id], bump_epoch=True,
                                 reason=f"did not revoke within the rebalance timeout (still at epoch {timer[1]})")
                    removed.append(member_id)
        return removed

    # ------------------------------------------------------------------------------------------
    # Records

    def _next_order(self) -> int:
        self._order += 1
        return self._order - 1

    def _commit(self, now: int, old: MemberRecord | None, new: MemberRecord, owned, target=None) -> None:
        others = tuple(r for mid, r in sorted(self.members.items()) if mid != new.member_id)
        self.on_transition(Transition(now, old, new, owned, others, target))
        self.partition_epochs = update_partition_epochs(self.partition_epochs, old, new, self.release)
        self.members[new.member_id] = new

    def _remove(self, now: int, member: MemberRecord, *, bump_epoch: bool, reason: str) -> None:
        """Drop ``member`` with its target and timers (``removeMember``); a fence bumps the group epoch."""
        others = tuple(r for mid, r in sorted(self.members.items()) if mid != member.member_id)
        self.on_transition(Transition(now, member, None, None, others))
        self.partition_epochs = remove_partition_epochs(self.partition_epochs, member)
        del self.members[member.member_id]
        self.targets.pop(member.member_id, None)
        self.session_deadline.pop(member.member_id, None)
        self.rebalance_timer.pop(member.member_id, None)
        self.notes.append(f"{member.member_id} removed: {reason}")
        if bump_epoch:
            self.subscription_metadata = self._metadata(self.members.values())
            self.group_epoch += 1
            self.bumped_at = now
            self.notes.append(f"group epoch -> {self.group_epoch}")

    def _metadata(self, members) -> tuple[tuple[str, int], ...]:
        """The subscribed topics that exist, with their partition counts (subscription metadata)."""
        topics = self.topics()
        subscribed = {t for m in members for t in m.topics}
        return tuple((t, topics[t].partitions) for t in sorted(subscribed) if t in topics)

    def _compute_targets(self, group: Mapping[str, MemberRecord], targets, epoch: int) -> dict[str, frozenset[TopicPartition]]:
        """The assignor's answer for every member (``TargetAssignmentBuilder``): members in the order
        they entered the group, each with its previous target, restricted to partitions that still
        exist (this scenario format names topics, not ids; a deleted topic has no name to give)."""
        topics = self.topics()
        ordered = sorted(group.values(), key=lambda r: (r.order, r.member_id))
        members = tuple(
            Member(r.member_id, r.topics,
                   owned=tuple(sorted(tp for tp in targets.get(r.member_id, ()) if tp.topic in topics
                                      and tp.partition < topics[tp.topic].partitions)),
                   rack=r.rack, instance_id=r.instance_id)
            for r in ordered
        )
        scenario = Scenario(tuple(topics[t] for t in sorted(topics)), members, name=self.name, group_protocol=CONSUMER)
        try:
            answer = self.assign(scenario)
        except StickyproofError as exc:
            raise _Refused(UNKNOWN_SERVER_ERROR, f"the assignor failed for epoch {epoch}: {exc}") from exc
        return {r.member_id: frozenset(answer.assignment.get(r.member_id, ())) for r in ordered}
