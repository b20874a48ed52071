"""A consumer process: the client side of the group protocol (models/protocol.md §3).

``AbstractCoordinator.joinGroupIfNeeded`` and its response handlers, ``ConsumerCoordinator``'s
``onJoinPrepare`` / ``onJoinComplete`` / ``onLeaderElected``, and the rebalance listener, as one
object per process incarnation that the simulator gives one turn per tick.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING

from ..assignors.base import COOPERATIVE
from ..model import TopicPartition
from .assignment import run_leader
from .config import MemberConfig
from .messages import (
    FATAL_ERRORS,
    ILLEGAL_GENERATION,
    NONE,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    JoinMetadata,
    Response,
)

if TYPE_CHECKING:  # pragma: no cover
    from .simulator import Simulation

__all__ = ["MemberProcess", "UNJOINED", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE", "STOPPED"]

UNJOINED = "UNJOINED"
PREPARING_REBALANCE = "PREPARING_REBALANCE"
COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
STABLE = "STABLE"
STOPPED = "STOPPED"


_TOPIC = itemgetter(0)


def _tps(tps) -> str:
    return ", ".join(map(str, sorted(tps))) or "nothing"


@dataclass
class MemberProcess:
    """One incarnation of a consumer process (a restart makes a new one under the same name)."""

    config: MemberConfig
    protocol: str  # its rebalance protocol (R36), eager or cooperative
    incarnation: int = 1
    state: str = UNJOINED
    member_id: str | None = None
    generation: int = -1
    owned: set[TopicPartition] = field(default_factory=set)
    memory: tuple[TopicPartition, ...] = ()
    memory_generation: int = -1
    memory_epoch: int = 0
    rejoin_needed: bool = True
    needs_join_prepare: bool = True
    is_leader: bool = False
    leader_members: tuple = ()
    group_protocol: str | None = None
    sync_sent: bool = False
    joined_topics: tuple[str, ...] | None = None
    metadata_snapshot: dict[str, int] | None = None
    inbox: list[Response] = field(default_factory=list)
    stalled_until: int = -1
    returning: bool = False
    returned_at: int = -1
    stall_at_join_prepare: int = 0
    rediscover_until: int = -1
    listener_faults: dict[str, int] = field(default_factory=dict)
    stop_reason: str = ""
    rejoin_cause: str = ""  # "revocation" while the rejoin R38 asks for is pending: its rebalance is a follow-up
    _owned_sorted: tuple | None = field(default=None, repr=False)  # (owned set, its sorted tuple): metadata() reuses it

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def process(self) -> tuple[str, int]:
        return (self.config.name, self.incarnation)

    @property
    def running(self) -> bool:
        return self.state != STOPPED

    def stalled(self, t: int) -> bool:
        return self.stalled_until > t

    def fetching(self, t: int) -> bool:
        """Whether the member fetches its owned partitions at ``t``: it runs, is not returning from a
        pause, and is ``STABLE`` or cooperative (a cooperative member keeps fetching during a rebalance)."""
        if not self.running or self.stalled(t) or self.returning:
            return False
        return self.state == STABLE or self.protocol == COOPERATIVE

    def consuming(self, t: int) -> frozenset[TopicPartition]:
        """What the member is fetching (``fetching``): its owned partitions, or nothing."""
        return frozenset(self.owned) if self.fetching(t) else frozenset()

    # --------------------------------------------------------------------------------------
    # The listener (KIP-429 error handling)

    def _callback(self, sim: "Simulation", t: int, which: str, partitions: set[TopicPartition]) -> set[TopicPartition]:
        """Invoke ``onPartitions<which>``; returns the partitions whose callback threw (empty if none)."""
        if not partitions:
            return set()
        left = self.listener_faults.get(which, 0)
        if left <= 0:
            return set()
        self.listener_faults[which] = left - 1
        if sim.tracing:
            sim.note(f"{self.name}: onPartitions{which.capitalize()}({_tps(partitions)}) threw; the error reaches poll() (KIP-429)")
        return set(partitions)

    def _lose_all(self, sim: "Simulation", t: int, why: str) -> None:
        if self.owned:
            if sim.tracing:
                sim.note(f"{self.name}: partitions lost ({why}): {_tps(self.owned)}")
            self._callback(sim, t, "lost", set(self.owned))
        self.owned = set()

    # --------------------------------------------------------------------------------------
    # Resets (AbstractCoordinator.resetStateAndGeneration)

    def _reset(self, sim: "Simulation", error: str, *, keep_member_id: bool, during_join_round: bool) -> None:
        self.generation = -1
        if not keep_member_id:
            self.member_id = None
        self.state = UNJOINED
        self.rejoin_needed = True
        self.is_leader = False
        self.sync_sent = False
        # KAFKA-12983: before 3.0 a reset during a join round did not re-arm onJoinPrepare, so the
        # retry reported partitions the member no longer owned.
        if not during_join_round or sim.has("join-prepare-after-reset"):
            self.needs_join_prepare = True

    def _fatal(self, sim: "Simulation", t: int, error: str) -> None:
        sim.note(f"{self.name}: fatal {error}; the error reaches the caller and the consumer stops")
        self._lose_all(sim, t, error)
        self.state = STOPPED
        self.stop_reason = error

    # --------------------------------------------------------------------------------------
    # Answers

    def _seen_answer(self, response: Response) -> None:
        if self.returning and response.sent >= self.returned_at:
            self.returning = False

    def deliver(self, sim: "Simulation", t: int, response: Response) -> None:
        self._seen_answer(response)
        if response.kind == "join":
            self._on_join_answer(sim, t, response)
        else:
            self._on_sync_answer(sim, t, response)

    def _on_join_answer(self, sim: "Simulation", t: int, r: Response) -> None:
        if self.state != PREPARING_REBALANCE:
            return  # an answer to a request this incarnation gave up on
        if r.error == NONE:
            self.generation = r.generation
            self.member_id = r.member_id
            self.group_protocol = r.protocol
            self.is_leader = r.leader == r.member_id
            self.leader_members = r.members
            self.state = COMPLETING_REBALANCE
            self.sync_sent = False
            return
        sim.note(f"{self.name}: JoinGroup failed: {r.error}")
        if r.error in FATAL_ERRORS:
            self._fatal(sim, t, r.error)
        elif r.error == UNKNOWN_MEMBER_ID:
            self._reset(sim, r.error, keep_member_id=False, during_join_round=True)
        elif r.error == NOT_COORDINATOR:
            self.state = UNJOINED
            self.rediscover_until = t + sim.config.rediscovery
        else:  # pragma: no cover - the coordinator sends no other join error
            self.state = UNJOINED

    def _on_sync_answer(self, sim: "Simulation", t: int, r: Response) -> None:
        if self.state != COMPLETING_REBALANCE:
            return
        if r.error == NONE:
            self._on_join_complete(sim, t, r)
            return
        sim.note(f"{self.name}: SyncGroup failed: {r.error}")
        self.sync_sent = False
        if r.error in FATAL_ERRORS:
            self._fatal(sim, t, r.error)
        elif r.error == REBALANCE_IN_PROGRESS:
            self.state = UNJOINED
            self.rejoin_needed = True
        elif r.error == ILLEGAL_GENERATION:
            self._reset(sim, r.error, keep_member_id=True, during_join_round=True)
        elif r.error == UNKNOWN_MEMBER_ID:
            self._reset(sim, r.error, keep_member_id=False, during_join_round=True)
        elif r.error == NOT_COORDINATOR:
            self.state = UNJOINED
            self.rediscover_until = t + sim.config.rediscovery

    def _on_join_complete(self, sim: "Simulation", t: int, r: Response) -> None:
        """``ConsumerCoordinator.onJoinComplete``: refuse, or revoke (cooperative), adopt, announce."""
        assigned = set(r.assignment)
        foreign = sorted(set(map(_TOPIC, assigned)) - set(self.config.topics))
        if foreign:
            sim.note(f"{self.name}: assignment names {', '.join(foreign)}, which it does not subscribe to; it rejoins (§0.5)")
            self.state = UNJOINED
            self.rejoin_needed = True
            # joinGroupIfNeeded re-arms onJoinPrepare once onJoinComplete returns, refused or not, so a
            # cooperative member revokes the topics it dropped before it rejoins (R37).
            self.needs_join_prepare = True
            return
        before = self.owned  # not changed until the new assignment is adopted below
        failed: set[TopicPartition] = set()
        self.rejoin_needed = False
        if self.protocol == COOPERATIVE:
            revoked = before - assigned
            if revoked:
                if sim.tracing:
                    sim.note(f"{self.name}: revokes {_tps(revoked)} and will rejoin (R38)")
                self._callback(sim, t, "revoked", revoked)
                self.rejoin_needed = True
                self.rejoin_cause = "revocation"
        # sorted(assigned), from the answer's order when it lists nothing twice (an assignor's
        # lists are often sorted already, and timsort is then linear)
        self.memory = tuple(sorted(r.assignment) if len(r.assignment) == len(assigned) else sorted(assigned))
        self.memory_generation = r.generation
        self.memory_epoch = r.epoch
        added = assigned - before
        failed |= self._callback(sim, t, "assigned", added)
        # an unchanged assignment keeps the very set, so what watches ``owned`` sees it did not change
        if failed or assigned != before:
            self.owned = assigned - failed
        if not failed:
            self._owned_sorted = (self.owned, self.memory)
        self.state = STABLE
        self.needs_join_prepare = True
        self.sync_sent = False
        if self.is_leader:
            self.metadata_snapshot = sim.metadata_for(self.subscribed_by_group())
        if sim.tracing:
            sim.note(f"{self.name}: generation {self.generation}: owns {_tps(self.owned)}")

    def subscribed_by_group(self) -> set[str]:
        topics = set(self.config.topics)
        for _, m in self.leader_members:
            topics.update(m.topics)
        return topics

    # --------------------------------------------------------------------------------------
    # The turn

    def turn(self, sim: "Simulation", t: int) -> None:
        if not self.running or self.stalled(t):
            return
        if self.stalled_until == t:
            self.stalled_until = -1
            self.returning = True
            self.returned_at = t
            sim.disturb(t, f"{self.name} resumes after its pause")
        for response in sim.take_responses(self, t):
            self.deliver(sim, t, response)
            if not self.running:
                return
        if self.rediscover_until > t:
            return
        if self.state == STABLE:
            self._heartbeat(sim, t)
            if not self.running:
                return
            if self.state == STABLE and not self.rejoin_needed:
                reason = self.rejoin_reason(sim)
                if reason:
                    sim.note(f"{self.name}: {reason}; rejoin")
                    self.rejoin_needed = True
            if self.state == STABLE and self.rejoin_needed:
                self.state = UNJOINED
        # joinGroupIfNeeded loops within one poll: a SyncGroup error leads straight to the next JoinGroup
        # (and its join prepare), so no fetch happens in between; a leader's assignment failure is thrown
        # to the caller instead, and the next poll rejoins.
        for _ in range(4):
            if not self.running or self.stalled(t) or self.rediscover_until > t:
                return
            if self.state == UNJOINED:
                self._join(sim, t)
            elif self.state == COMPLETING_REBALANCE and not self.sync_sent:
                if not self._sync(sim, t):
                    return
            else:
                return
            if self.state in (PREPARING_REBALANCE, STABLE):
                return

    def rejoin_reason(self, sim: "Simulation") -> str:
        """``ConsumerCoordinator.rejoinNeededOrPending``: the subscription changed since the join, or (the
        leader only) the metadata of the group's topics differs from the snapshot it assigned from."""
        if self.joined_topics is not None and tuple(self.config.topics) != tuple(self.joined_topics):
            return "subscription changed since it joined"
        if self.is_leader and self.metadata_snapshot is not None:
            if sim.metadata_for(set(self.metadata_snapshot)) != self.metadata_snapshot:
                return "(leader) topic metadata changed"
        return ""

    def _heartbeat(self, sim: "Simulation", t: int) -> None:
        error = sim.coordinator.heartbeat(t, self.member_id, self.config.instance_id, self.generation)
        if self.returning:
            self.returning = False
        if error == NONE:
            return
        sim.note(f"{self.name}: heartbeat -> {error}")
        if error == REBALANCE_IN_PROGRESS:
            self.rejoin_needed = True
        elif error in FATAL_ERRORS:
            self._fatal(sim, t, error)
        elif error == ILLEGAL_GENERATION:
            self._reset(sim, error, keep_member_id=True, during_join_round=False)
        elif error == UNKNOWN_MEMBER_ID:
            self._reset(sim, error, keep_member_id=False, during_join_round=False)

    def on_join_prepare(self, sim: "Simulation", t: int) -> None:
        """``ConsumerCoordinator.onJoinPrepare`` (R37)."""
        if self.generation < 0 or self.member_id is None:
            self._lose_all(sim, t, "generation reset: no longer part of the group")
        elif self.protocol == COOPERATIVE:
            subscribed = set(self.config.topics)
            if set(map(_TOPIC, self.owned)) <= subscribed:
                return
            dropped = {tp for tp in self.owned if tp.topic not in subscribed}
            if dropped:
                if sim.tracing:
                    sim.note(f"{self.name}: revokes {_tps(dropped)} (topics no longer subscribed)")
                self._callback(sim, t, "revoked", dropped)
                self.owned -= dropped
        elif self.owned:
            if sim.tracing:
                sim.note(f"{self.name}: revokes everything before joining (eager): {_tps(self.owned)}")
            self._callback(sim, t, "revoked", set(self.owned))
            self.owned = set()

    def _sorted_owned(self) -> tuple[TopicPartition, ...]:
        """``tuple(sorted(owned))``, reusing the sorted assignment while ``owned`` is still that set, whole."""
        cached = self._owned_sorted
        if cached is not None and cached[0] is self.owned and len(self.owned) == len(cached[1]):
            return cached[1]
        return tuple(sorted(self.owned))

    def metadata(self, sim: "Simulation") -> JoinMetadata:
        """What this member puts in its JoinGroup (R37, §0.1)."""
        assignors = sim.assignor_names(self.config.assignors)
        return JoinMetadata(
            name=self.name,
            topics=self.config.topics,
            assignors=assignors,
            kafka_names=tuple(sim.assignor_info(a).kafka_name for a in assignors),
            protocol=self.protocol,
            version=self.config.version,
            rack=self.config.rack,
            instance_id=self.config.instance_id,
            owned=self._sorted_owned() if self.protocol == COOPERATIVE else (),
            generation=self.generation,
            memory=self.memory,
            memory_generation=self.memory_generation,
        )

    def _join(self, sim: "Simulation", t: int) -> None:
        """``joinGroupIfNeeded``: join prepare when armed, JoinGroup; an immediate error is retried at once
        (Kafka's loop does not back off after UNKNOWN_MEMBER_ID), so no fetch happens in between."""
        for _ in range(3):
            if self.needs_join_prepare:
                self.needs_join_prepare = False
                self.on_join_prepare(sim, t)
                if self.stall_at_join_prepare:
                    ticks, self.stall_at_join_prepare = self.stall_at_join_prepare, 0
                    self.stalled_until = t + ticks
                    sim.note(f"{self.name} pauses for {ticks} ticks inside its join prepare, before sending JoinGroup")
                    return
            self.state = PREPARING_REBALANCE
            self.rejoin_needed = False
            self.joined_topics = self.config.topics
            sim.joining = self
            answer = sim.coordinator.join(t, self.process, self.member_id, self.config.instance_id, self.metadata(sim))
            sim.joining = None
            self.rejoin_cause = ""
            if answer is None:
                return
            self.deliver(sim, t, answer)
            if self.state != UNJOINED or self.rediscover_until > t or not self.running:
                return

    def _sync(self, sim: "Simulation", t: int) -> bool:
        """SyncGroup (the leader assigns first); False when the leader's assignment failed."""
        assignments = None
        if self.is_leader:
            outcome = run_leader(
                self.metadata(sim),
                self.leader_members,
                self.group_protocol,
                sim.topics(),
                validation=sim.has("cooperative-validation"),
                max_version=3 if sim.has("generation-in-subscription") else 1,
                resolve=sim.assignor_info,
                leader_id=self.member_id,
            )
            sim.leader_ran(t, self, outcome)
            if outcome.error is not None:
                sim.leader_failure(t, self, outcome.error)
                self.state = UNJOINED
                self.rejoin_needed = True
                return False
            assignments = dict(outcome.assignment)
            if sim.tracing:
                sim.note(f"{self.name} (leader) assigns with {outcome.selected}: " + "; ".join(
                    f"{m} <- {_tps(tps)}" for m, tps in sorted(assignments.items())
                ))
        self.sync_sent = True
        committed = len(sim.coordinator.committed)
        answer = sim.coordinator.sync(t, self.process, self.member_id, self.config.instance_id, self.generation, assignments)
        if self.is_leader:
            sim.leader_synced(len(sim.coordinator.committed) > committed)
        if answer is not None:
            self.deliver(sim, t, answer)
        return True

    # --------------------------------------------------------------------------------------
    # Closing

    def close(self, sim: "Simulation", t: int, *, leave: bool, reason: str) -> None:
        """``onLeavePrepare`` (lost after a reset, else revoke everything) and LeaveGroup unless static."""
        if not self.running:
            return
        if self.generation < 0 or self.member_id is None:
            self._lose_all(sim, t, "closing after a reset")
        elif self.owned:
            self._callback(sim, t, "revoked", set(self.owned))
        self.owned = set()
        if leave and self.config.instance_id is None and self.member_id is not None:
            sim.coordinator.leave(t, self.member_id, self.config.instance_id)
        self.state = STOPPED
        self.stop_reason = reason

    def crash(self) -> None:
        """The process dies: it sends nothing, and a dead process consumes and owns nothing."""
        self.state = STOPPED
        self.stop_reason = "crashed"
        self.owned = set()
