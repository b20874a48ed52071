"""The group coordinator: the broker side of the classic group protocol (models/protocol.md §2).

Follows ``GroupCoordinator.scala`` (``handleJoinGroup``, ``doSyncGroup``, ``handleHeartbeat``,
``prepareRebalance``, ``onCompleteJoin``, ``onExpireHeartbeat``, ``onExpirePendingSync``) on the
points the model keeps, and the seed's fail-over cases. Requests are handled when sent; answers that
must wait are queued for ``Simulation`` to deliver.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Callable

from ..errors import InvalidScenario
from ..leader import select_protocol
from ..model import Member, TopicPartition
from .config import GroupConfig
from .messages import (
    FENCED_INSTANCE_ID,
    ILLEGAL_GENERATION,
    INCONSISTENT_GROUP_PROTOCOL,
    NONE,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    JoinMetadata,
    Response,
)

__all__ = ["Coordinator", "GroupMember", "EMPTY", "PREPARING", "COMPLETING", "STABLE"]

_KAFKA_NAMES = attrgetter("metadata.kafka_names")

EMPTY = "Empty"
PREPARING = "PreparingRebalance"
COMPLETING = "CompletingRebalance"
STABLE = "Stable"


@dataclass
class GroupMember:
    """The coordinator's record of one member (``MemberMetadata``)."""

    member_id: str
    process: tuple[str, int]
    instance_id: str | None
    metadata: JoinMetadata
    last_heard: int
    awaiting_join: bool = False
    join_sent: int = -1
    awaiting_sync: bool = False
    sync_sent: int = -1
    synced: bool = False


@dataclass(frozen=True)
class _Persisted:
    """What the group's log holds after the last leader SyncGroup (``storeGroup``)."""

    generation: int
    members: tuple[GroupMember, ...]
    leader: str | None
    protocol: str | None
    assignments: tuple[tuple[str, tuple[TopicPartition, ...]], ...]


@dataclass
class Coordinator:
    config: GroupConfig
    persisted_mode: bool = True
    state: str = EMPTY
    generation: int = 0
    epoch: int = 1
    members: dict[str, GroupMember] = field(default_factory=dict)
    leader: str | None = None
    protocol: str | None = None
    assignments: dict[str, tuple[TopicPartition, ...]] = field(default_factory=dict)
    static: dict[str, str] = field(default_factory=dict)
    rebalance_started: int = -1
    initial_delay_until: int | None = None
    sync_deadline: int | None = None
    persisted: _Persisted | None = None
    outbox: list[Response] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # what the simulator and the monitors read after each tick
    formed: list[tuple[int, int, tuple[str, ...], int]] = field(default_factory=list)  # (tick, generation, ids, rebalance)
    rebalance_seq: int = 0  # rebalances started so far; each formed generation names the one it completes
    committed: list[tuple[int, int, int]] = field(default_factory=list)  # (tick, epoch, generation)
    removals: list[tuple[int, str, str]] = field(default_factory=list)  # (tick, member id, reason)
    _ids_used: dict[str, int] = field(default_factory=dict)
    on_change: Callable[[int, str, str], None] | None = None  # membership changes are disturbances (protocol.md §7)
    on_rebalance: Callable[[int, int, str], None] | None = None  # (tick, rebalance seq, reason): provenance of rebalance records
    _offered: Counter = field(default_factory=Counter)  # assignor lists offered, for the consistency check
    _offered_for: dict | None = None  # the members dict ``_offered`` counts
    _waiting: dict[str, deque] = field(default_factory=dict)  # flag -> members last seen with it down (``_someone``)

    # --------------------------------------------------------------------------------------
    # Ids and bookkeeping

    def new_member_id(self, name: str) -> str:
        """``name`` the first time, then ``name#2``, ``name#3``, ... (ids are never reused)."""
        n = self._ids_used.get(name, 0) + 1
        self._ids_used[name] = n
        return name if n == 1 else f"{name}#{n}"

    def reserve_id(self, member_id: str, name: str) -> None:
        """Record an id given out outside ``join`` (a stable start)."""
        self._ids_used[name] = max(self._ids_used.get(name, 0), 1)

    def _note(self, text: str) -> None:
        self.notes.append(f"coordinator: {text}")

    def _answer(self, member: GroupMember, **kwargs) -> Response:
        return Response(process=member.process, epoch=self.epoch, **kwargs)

    def _response(self, kind: str, error: str, process: tuple[str, int], sent: int, **kwargs) -> Response:
        return Response(kind, error, process, sent, epoch=self.epoch, **kwargs)

    # --------------------------------------------------------------------------------------
    # Rebalance steps

    def _prepare_rebalance(self, t: int, reason: str) -> None:
        """``prepareRebalance``: members waiting for a SyncGroup answer get REBALANCE_IN_PROGRESS."""
        self.initial_delay_until = t + self.config.initial_rebalance_delay if self.state == EMPTY else None
        self.rebalance_seq += 1
        for m in self.members.values():
            if m.awaiting_sync:
                self.outbox.append(self._answer(m, kind="sync", error=REBALANCE_IN_PROGRESS, sent=m.sync_sent))
                m.awaiting_sync = False
        self.state = PREPARING
        self.rebalance_started = t
        self.sync_deadline = None
        self._note(f"rebalance starts ({reason})")
        if self.on_rebalance is not None:
            self.on_rebalance(t, self.rebalance_seq, reason)

    def _maybe_prepare_rebalance(self, t: int, reason: str) -> None:
        if self.state in (STABLE, COMPLETING, EMPTY):
            self._prepare_rebalance(t, reason)

    def _remove(self, t: int, member_id: str, reason: str) -> None:
        m = self.members.pop(member_id)
        self._offer(m.metadata.kafka_names, -1)
        if m.instance_id is not None and self.static.get(m.instance_id) == member_id:
            del self.static[m.instance_id]
        self.assignments.pop(member_id, None)
        self.removals.append((t, member_id, reason))
        self._note(f"removes {member_id} ({reason})")
        if self.on_change is not None:
            self.on_change(t, member_id, reason)
        if m.awaiting_join:
            self.outbox.append(self._answer(m, kind="join", error=UNKNOWN_MEMBER_ID, sent=m.join_sent))
        if m.awaiting_sync:
            self.outbox.append(self._answer(m, kind="sync", error=UNKNOWN_MEMBER_ID, sent=m.sync_sent))

    def _after_removal(self, t: int, reason: str) -> None:
        if not self.members:
            if self.state != EMPTY:
                self.state = EMPTY
                self.leader = None
                self._note("group is empty")
            return
        if self.state == PREPARING:
            self._try_complete_join(t)
        else:
            self._maybe_prepare_rebalance(t, reason)

    def _try_complete_join(self, t: int) -> None:
        """Complete once every member has rejoined, except during the initial delay of a group that was
        empty (``InitialDelayedJoin``: group.initial.rebalance.delay.ms lets the first members arrive together)."""
        if self.state != PREPARING or not self.members:
            return
        if self.initial_delay_until is not None and t < self.initial_delay_until:
            return
        if self._someone("awaiting_join"):
            return
        self._complete_join(t)

    def _complete_join(self, t: int) -> None:
        """``onCompleteJoin``: drop members that did not rejoin, bump the generation, vote, answer."""
        for member_id in [i for i, m in self.members.items() if not m.awaiting_join]:
            self._remove(t, member_id, "did not rejoin within the rebalance timeout")
        self.generation += 1
        if not self.members:
            self.state = EMPTY
            self.leader = None
            self._note(f"generation {self.generation}: no members left, group is empty")
            return
        voters = [Member(id=i, topics=m.metadata.topics, assignors=m.metadata.kafka_names) for i, m in self.members.items()]
        try:
            winner, _ = select_protocol(voters)
        except InvalidScenario:  # pragma: no cover - JoinGroup rejects inconsistent protocols first
            winner = None
        self.protocol = winner
        if self.leader not in self.members:
            self.leader = next(iter(self.members))
        self.state = COMPLETING
        self.assignments = {}
        self.sync_deadline = t + self.config.rebalance_timeout
        ids = tuple(self.members)
        everyone = tuple((i, m.metadata) for i, m in self.members.items())
        for i, m in self.members.items():
            m.awaiting_join = False
            m.synced = False
            m.last_heard = t
            self.outbox.append(
                self._answer(
                    m, kind="join", error=NONE, sent=m.join_sent, generation=self.generation, member_id=i,
                    leader=self.leader, protocol=winner, members=everyone if i == self.leader else (),
                )
            )
        self.formed.append((t, self.generation, ids, self.rebalance_seq))
        self._note(f"generation {self.generation} formed: {', '.join(ids)} (leader {self.leader}, protocol {winner})")

    # --------------------------------------------------------------------------------------
    # Requests

    def validate_member(self, member_id: str | None, instance_id: str | None) -> str | None:
        """``validateCurrentMember``: FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID, or None."""
        if instance_id is not None:
            current = self.static.get(instance_id)
            if current is not None and current != member_id:
                return FENCED_INSTANCE_ID
            if current is None and member_id not in self.members:
                return UNKNOWN_MEMBER_ID
        if member_id is None or member_id not in self.members:
            return UNKNOWN_MEMBER_ID
        return None

    def _offered_lists(self) -> Counter:
        """How many members offer each assignor list: kept up to date as members come, go and rejoin,
        counted afresh when ``members`` was replaced (a fail-over, a stable start)."""
        if self._offered_for is not self.members:
            self._offered = Counter(map(_KAFKA_NAMES, self.members.values()))
            self._offered_for = self.members
        return self._offered

    def _offer(self, names: tuple[str, ...], delta: int) -> None:
        if self._offered_for is self.members:
            self._offered[names] += delta

    def _protocols_consistent(self, metadata: JoinMetadata, exclude: str | None) -> bool:
        """``supportsProtocols``: some protocol this member offers is offered by every other member."""
        excluded = self.members[exclude].metadata.kafka_names if exclude in self.members else None
        others = [names for names, count in self._offered_lists().items() if count - (names == excluded) > 0]
        if not others:
            return True
        common = set(metadata.kafka_names)
        for names in others:
            common &= set(names)
        return bool(common)

    def join(
        self, t: int, process: tuple[str, int], member_id: str | None, instance_id: str | None, metadata: JoinMetadata
    ) -> Response | None:
        """``handleJoinGroup``: an immediate answer, or None when the answer waits for the join to complete."""
        name = process[0]
        if member_id is not None:
            error = self.validate_member(member_id, instance_id)
            if error is not None:
                self._note(f"JoinGroup from {member_id}: {error}")
                return self._response("join", error, process, t)
        if not self._protocols_consistent(metadata, member_id or (self.static.get(instance_id) if instance_id else None)):
            self._note(f"JoinGroup from {name}: {INCONSISTENT_GROUP_PROTOCOL} (offers {', '.join(metadata.kafka_names)})")
            return self._response("join", INCONSISTENT_GROUP_PROTOCOL, process, t)

        if member_id is None and instance_id is not None and instance_id in self.static:
            return self._static_rejoin(t, process, instance_id, metadata)

        if member_id is None:
            member_id = self.new_member_id(name)
            member = GroupMember(member_id, process, instance_id, metadata, t, awaiting_join=True, join_sent=t)
            self.members[member_id] = member
            self._offer(metadata.kafka_names, 1)
            if instance_id is not None:
                self.static[instance_id] = member_id
            if self.leader is None:
                self.leader = member_id
            self._note(f"{member_id} joins as a new member")
            if self.on_change is not None:
                self.on_change(t, member_id, "admitted")
            self._maybe_prepare_rebalance(t, f"{member_id} joined")
        else:
            member = self.members[member_id]
            self._offer(member.metadata.kafka_names, -1)
            member.metadata = metadata
            self._offer(metadata.kafka_names, 1)
            member.process = process
            member.awaiting_join = True
            member.join_sent = t
            member.last_heard = t
            if member.awaiting_sync:
                member.awaiting_sync = False
            self._maybe_prepare_rebalance(t, f"{member_id} rejoined")
        self._try_complete_join(t)
        return None

    def _static_rejoin(self, t: int, process: tuple[str, int], instance_id: str, metadata: JoinMetadata) -> Response | None:
        """KIP-345: a known ``group.instance.id`` with an empty member id replaces the old member id."""
        old_id = self.static[instance_id]
        old = self.members.pop(old_id)
        self._offer(old.metadata.kafka_names, -1)
        new_id = self.new_member_id(process[0])
        member = GroupMember(new_id, process, instance_id, metadata, t, join_sent=t)
        self.members[new_id] = member
        self._offer(metadata.kafka_names, 1)
        self.static[instance_id] = new_id
        if old_id in self.assignments:
            self.assignments[new_id] = self.assignments.pop(old_id)
        was_leader = self.leader == old_id
        if was_leader:
            self.leader = new_id
        self._note(f"static member {instance_id}: {new_id} replaces {old_id}")
        if self.on_change is not None:
            self.on_change(t, new_id, "replaced a static member")
        if old.awaiting_join:
            self.outbox.append(self._answer(old, kind="join", error=FENCED_INSTANCE_ID, sent=old.join_sent))
        if old.awaiting_sync:
            self.outbox.append(self._answer(old, kind="sync", error=FENCED_INSTANCE_ID, sent=old.sync_sent))
        unchanged = metadata.topics == old.metadata.topics and metadata.kafka_names == old.metadata.kafka_names
        if self.state == STABLE and unchanged and not was_leader:
            member.synced = True
            if self.persisted_mode:
                # updateStaticMemberAndRebalance stores the group, so a fail-over keeps the new member id
                self._persist()
            return self._response("join", NONE, process, t, generation=self.generation, member_id=new_id, leader=self.leader,
                protocol=self.protocol,
            )
        member.awaiting_join = True
        self._maybe_prepare_rebalance(t, f"static member {new_id} rejoined")
        self._try_complete_join(t)
        return None

    def sync(
        self, t: int, process: tuple[str, int], member_id: str | None, instance_id: str | None, generation: int,
        assignments: dict[str, tuple[TopicPartition, ...]] | None,
    ) -> Response | None:
        """``doSyncGroup``: an immediate answer, or None while a follower waits for the leader."""
        error = self.validate_member(member_id, instance_id)
        if error is None and generation != self.generation:
            error = ILLEGAL_GENERATION
        if error is None and self.state == EMPTY:
            error = UNKNOWN_MEMBER_ID
        if error is None and self.state == PREPARING:
            error = REBALANCE_IN_PROGRESS
        if error is not None:
            self._note(f"SyncGroup from {member_id} (generation {generation}): {error}")
            return self._response("sync", error, process, t)
        member = self.members[member_id]
        member.last_heard = t
        member.process = process
        if self.state == STABLE:
            member.synced = True
            self._clear_sync_deadline()
            return self._response("sync", NONE, process, t, generation=self.generation, assignment=self.assignments.get(member_id, ()))
        # CompletingRebalance
        member.synced = True
        if member_id == self.leader and assignments is not None:
            self.assignments = {i: tuple(assignments.get(i, ())) for i in self.members}
            self.state = STABLE
            self.committed.append((t, self.epoch, self.generation))
            if self.persisted_mode:
                self._persist()
            self._note(f"generation {self.generation} assignment stored; group stable")
            for i, m in self.members.items():
                if m.awaiting_sync:
                    self.outbox.append(
                        self._answer(m, kind="sync", error=NONE, sent=m.sync_sent, generation=self.generation,
                                     assignment=self.assignments.get(i, ()))
                    )
                    m.awaiting_sync = False
            self._clear_sync_deadline()
            return self._response("sync", NONE, process, t, generation=self.generation, assignment=self.assignments.get(member_id, ()))
        member.awaiting_sync = True
        member.sync_sent = t
        return None

    def _persist(self) -> None:
        """``storeGroup``: what a new coordinator will load (fail-over)."""
        self.persisted = _Persisted(
            self.generation,
            tuple(replace(m, awaiting_join=False, awaiting_sync=False) for m in self.members.values()),
            self.leader,
            self.protocol,
            tuple(self.assignments.items()),
        )

    def _clear_sync_deadline(self) -> None:
        if self.sync_deadline is not None and not self._someone("synced"):
            self.sync_deadline = None

    def _someone(self, flag: str) -> bool:
        """Whether some member's ``flag`` (``awaiting_join``, ``synced``) is still False.

        Asked at every JoinGroup and SyncGroup, so a rebalance of n members would scan the group n times;
        instead the members last seen with the flag down are queued, and the group is scanned again only
        once all of those have raised it.
        """
        queue = self._waiting.setdefault(flag, deque())
        while queue:
            m = self.members.get(queue[0])
            if m is not None and not getattr(m, flag):
                return True
            queue.popleft()
        queue.extend(i for i, m in self.members.items() if not getattr(m, flag))
        return bool(queue)

    def heartbeat(self, t: int, member_id: str | None, instance_id: str | None, generation: int) -> str:
        """``handleHeartbeat``."""
        error = self.validate_member(member_id, instance_id)
        if error is None and generation != self.generation:
            error = ILLEGAL_GENERATION
        if error is not None:
            self._note(f"heartbeat from {member_id} (generation {generation}): {error}")
            return error
        self.members[member_id].last_heard = t
        if self.state == EMPTY:
            return UNKNOWN_MEMBER_ID
        if self.state == PREPARING:
            return REBALANCE_IN_PROGRESS
        return NONE

    def leave(self, t: int, member_id: str | None, instance_id: str | None) -> None:
        """``handleLeaveGroup`` (a dynamic member closing)."""
        if self.validate_member(member_id, instance_id) is not None:
            return
        self._remove(t, member_id, "LeaveGroup")
        self._after_removal(t, f"{member_id} left")

    # --------------------------------------------------------------------------------------
    # Time and fail-over

    def tick(self, t: int) -> None:
        """Session expiry, the rebalance timeout, and the pending-sync timeout."""
        for member_id, m in list(self.members.items()):
            if member_id not in self.members or m.awaiting_join or m.awaiting_sync:
                continue
            if t - m.last_heard >= self.config.session_timeout:
                self._remove(t, member_id, "session timeout")
                self._after_removal(t, f"{member_id}'s session expired")
        if self.state == PREPARING and t - self.rebalance_started >= self.config.rebalance_timeout:
            self._complete_join(t)
        elif self.state == PREPARING:
            self._try_complete_join(t)
        if self.state in (COMPLETING, STABLE) and self.sync_deadline is not None and t >= self.sync_deadline:
            late = [i for i, m in self.members.items() if not m.synced]
            self.sync_deadline = None
            for member_id in late:
                self._remove(t, member_id, "no SyncGroup within the rebalance timeout")
            if late:
                self._after_removal(t, "members missed the sync")

    def failover(self, t: int, persisted: bool) -> None:
        """The coordinator moves; pending requests are answered NOT_COORDINATOR (the seed's fail-over cases)."""
        for m in self.members.values():
            if m.awaiting_join:
                self.outbox.append(self._answer(m, kind="join", error=NOT_COORDINATOR, sent=m.join_sent))
            if m.awaiting_sync:
                self.outbox.append(self._answer(m, kind="sync", error=NOT_COORDINATOR, sent=m.sync_sent))
        self.sync_deadline = None
        self.rebalance_started = -1
        if persisted and self.persisted is not None:
            p = self.persisted
            self.members = {m.member_id: replace(m, last_heard=t, awaiting_join=False, awaiting_sync=False, synced=True) for m in p.members}
            self.static = {m.instance_id: m.member_id for m in p.members if m.instance_id is not None}
            self.generation, self.leader, self.protocol = p.generation, p.leader, p.protocol
            self.assignments = dict(p.assignments)
            self.state = STABLE
            self._note(f"fail-over: the new coordinator loads generation {p.generation} ({len(p.members)} members)")
            return
        self.members, self.static, self.assignments = {}, {}, {}
        self.generation, self.leader, self.protocol, self.state = 0, None, None, EMPTY
        self.persisted = None
        self.epoch += 1
        self._note("fail-over: the new coordinator has no state for the group" if not persisted
                   else "fail-over: nothing was persisted yet; the new coordinator has no group")
