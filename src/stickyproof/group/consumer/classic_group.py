"""A group while it is still (or again) a classic group, as the migration simulator models it
(docs/consumer-protocol.md, "Online migration").

After Kafka's ``ClassicGroup`` and ``GroupMetadataManager.classicGroupJoinToClassicGroup``: a
generation, a JoinGroup barrier (a rebalance completes once every member has rejoined, or at the
rebalance timeout without the missing ones), a leader whose client-side assignor decides the
assignment, and SyncGroup. Two simplifications, both stated in the docs: the leader's SyncGroup is
answered in the same instant as the join completes (the leader runs its assignor through
``stickyproof.leader.lead`` on the members' JoinGroup subscriptions and every member waiting in the
barrier gets its assignment at once), and member ids are the simulator's (no MEMBER_ID_REQUIRED round
trip). The classic simulator (group/simulator.py) models the classic protocol in full detail; this
module is the part of it a migration needs, on the consumer simulator's tick.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...model import Member, Scenario, Topic, TopicPartition

__all__ = [
    "ClassicMember",
    "ClassicGroup",
    "CLASSIC_STABLE",
    "CLASSIC_EMPTY",
    "PREPARING_REBALANCE",
    "ILLEGAL_GENERATION",
    "REBALANCE_IN_PROGRESS",
]

CLASSIC_STABLE = "Stable"
CLASSIC_EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"
UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"


@dataclass(frozen=True)
class ClassicMember:
    """A classic group's member (``ClassicGroupMember``): its JoinGroup subscription (topics, rack,
    protocol names, the partitions it said it owns and their generation), the assignment of its last
    SyncGroup, and whether it has rejoined in the rebalance under way."""

    member_id: str
    topics: tuple[str, ...]
    protocols: tuple[str, ...]
    rack: str | None
    owned: frozenset[TopicPartition]
    owned_generation: int
    assignment: frozenset[TopicPartition]
    joined: bool
    order: int


class ClassicGroup:
    """The coordinator's classic group: ``generation``, ``state``, ``members`` (in join order),
    ``leader``; ``delivered`` collects the answers to JoinGroups waiting in the barrier."""

    def __init__(self, generation: int, rebalance_protocol: str, config, topics, notes: list[str], delivered: list):
        self.generation = generation
        self.rebalance_protocol = rebalance_protocol
        self.config = config
        self.topics = topics  # () -> Mapping[str, Topic], the metadata the leader sees
        self.notes = notes
        self.state = CLASSIC_STABLE
        self.members: dict[str, ClassicMember] = {}
        self.leader: str | None = None
        self.protocol_name: str | None = None
        self.rebalance_deadline = -1
        self.session_deadline: dict[str, int] = {}
        # (member id, generation, assignment) or (member id, error, None): answers for the barrier's waiters
        self.delivered = delivered
        self._order = 0

    def add(self, member: ClassicMember, now: int) -> None:
        """A member as the group stands (a stable start, or a downgrade from a consumer group)."""
        self.members[member.member_id] = replace(member, order=self._order)
        self._order += 1
        self.session_deadline[member.member_id] = now + self.config.session_timeout
        if self.leader is None:
            self.leader = member.member_id

    # ------------------------------------------------------------------------------------------
    def heartbeat(self, now: int, member_id: str, generation: int) -> str | None:
        """``classicGroupHeartbeatToClassicGroup``: the member, then its generation, then the state."""
        if member_id not in self.members:
            return UNKNOWN_MEMBER_ID
        if generation != self.generation:
            return ILLEGAL_GENERATION
        self.session_deadline[member_id] = now + self.config.session_timeout
        return REBALANCE_IN_PROGRESS if self.state == PREPARING_REBALANCE else None

    def join(self, now: int, member_id: str, topics: tuple[str, ...], protocols: tuple[str, ...], rack: str | None,
             owned: frozenset[TopicPartition], owned_generation: int) -> tuple[int, frozenset[TopicPartition]] | None:
        """A JoinGroup: the answer (generation, assignment) when the join completes at once, else None
        (the member waits in the barrier; its answer arrives in ``delivered``)."""
        existing = self.members.get(member_id)
        if existing is None:
            self.members[member_id] = ClassicMember(member_id, topics, protocols, rack, owned, owned_generation,
                                                    frozenset(), True, self._order)
            self._order += 1
            if self.leader is None:
                self.leader = member_id
            self._prepare(now, f"{member_id} joins")
        else:
            updated = replace(existing, topics=topics, protocols=protocols, rack=rack, owned=owned,
                              owned_generation=owned_generation, joined=True)
            self.members[member_id] = updated
            if self.state == CLASSIC_STABLE:
                same = (existing.topics, existing.protocols, existing.owned) == (topics, protocols, owned)
                if same and member_id != self.leader:
                    # a follower rejoining with unchanged metadata gets the current generation back
                    self.members[member_id] = replace(updated, joined=False)
                    return self.generation, existing.assignment
                self._prepare(now, f"{member_id} rejoins with new metadata")
        self.session_deadline[member_id] = now + self.config.session_timeout
        self._maybe_complete(now)
        for i, (mid, gen, assignment) in enumerate(self.delivered):
            if mid == member_id and assignment is not None:
                del self.delivered[i]
                return gen, assignment  # type: ignore[return-value]
        return None

    def leave(self, now: int, member_id: str, reason: str) -> bool:
        """``LeaveGroup`` or a session timeout: remove the member and rebalance the rest."""
        if member_id not in self.members:
            return False
        del self.members[member_id]
        self.session_deadline.pop(member_id, None)
        self.notes.append(f"{member_id} removed from the classic group: {reason}")
        if self.leader == member_id:
            self.leader = next(iter(self.members), None)
        if self.members:
            self._prepare(now, f"{member_id} left")
            self._maybe_complete(now)
        else:
            self._empty()
        return True

    def _empty(self) -> None:
        """The last member gone: a rebalance under way completes with nobody (``initNextGeneration``
        moves an empty group to Empty with the next generation)."""
        if self.state != CLASSIC_EMPTY:
            self.generation += 1
        self.state = CLASSIC_EMPTY
        self.leader = None
        self.notes.append(f"the classic group is empty (generation {self.generation})")

    def expire(self, now: int) -> list[str]:
        """Session timeouts of members not waiting in the barrier, then the rebalance timeout: members
        that did not rejoin in time are removed and the join completes without them."""
        removed = []
        for member_id in sorted(self.members):
            m = self.members.get(member_id)
            if m is None or (m.joined and self.state == PREPARING_REBALANCE):
                continue
            if self.session_deadline.get(member_id, now + 1) <= now:
                self.leave(now, member_id, "session timed out")
                removed.append(member_id)
        if self.state == PREPARING_REBALANCE and self.rebalance_deadline <= now:
            for member_id in [m for m, r in self.members.items() if not r.joined]:
                del self.members[member_id]
                self.session_deadline.pop(member_id, None)
                self.notes.append(f"{member_id} removed from the classic group: did not rejoin within the rebalance timeout")
                removed.append(member_id)
            if self.leader not in self.members:
                self.leader = next(iter(self.members), None)
            self._maybe_complete(now)
            if not self.members:
                self._empty()
        return removed

    # ------------------------------------------------------------------------------------------
    def _prepare(self, now: int, reason: str) -> None:
        if self.state == CLASSIC_EMPTY and not self.members:
            return
        if self.state == PREPARING_REBALANCE:
            return
        self.state = PREPARING_REBALANCE
        self.rebalance_deadline = now + self.config.rebalance_timeout
        self.notes.append(f"classic group prepares a rebalance: {reason}")

    def prepare(self, now: int, reason: str) -> None:
        """Start a rebalance (``prepareRebalance``): every member must rejoin."""
        for member_id, m in self.members.items():
            self.members[member_id] = replace(m, joined=False)
        self._prepare(now, reason)

    def _maybe_complete(self, now: int) -> None:
        """The barrier: once every member has rejoined, a new generation; the leader's assignor runs on
        the members' subscriptions and every waiter gets its assignment (SyncGroup, at once)."""
        if self.state != PREPARING_REBALANCE or not self.members or not all(m.joined for m in self.members.values()):
            return
        self.generation += 1
        if self.leader not in self.members:
            self.leader = next(iter(self.members))
        assignment, name = self._assign()
        self.protocol_name = name
        self.state = CLASSIC_STABLE
        self.notes.append(f"classic group: generation {self.generation}, leader {self.leader} runs {name}")
        for member_id, m in list(self.members.items()):
            mine = frozenset(assignment.get(member_id, ()))
            self.members[member_id] = replace(m, assignment=mine, joined=False)
            self.session_deadline[member_id] = now + self.config.session_timeout
            self.delivered.append((member_id, self.generation, mine))

    def _assign(self) -> tuple[dict[str, tuple[TopicPartition, ...]], str]:
        from ...leader import lead

        topics: dict[str, Topic] = dict(self.topics())
        ordered = sorted(self.members.values(), key=lambda m: (m.member_id != self.leader, m.order))
        members = tuple(Member(m.member_id, m.topics, owned=tuple(sorted(tp for tp in m.owned if tp.topic in topics)),
                               generation=m.owned_generation, rack=m.rack, assignors=m.protocols) for m in ordered)
        scenario = Scenario(tuple(topics[t] for t in sorted(topics)), members, protocol=self.rebalance_protocol)
        # the leader's assignor failing is the run's error (AssignorFailure), as the classic simulator's is
        result = lead(scenario, direct=True, encode_assignments=False, leader=self.leader)
        return {mid: tuple(tps) for mid, tps in result.assignment.assignment.items()}, result.selected

    def cancel_joins(self) -> None:
        """The upgrade completes every JoinGroup waiting in the barrier with REBALANCE_IN_PROGRESS."""
        for member_id, m in self.members.items():
            if m.joined and self.state == PREPARING_REBALANCE:
                self.delivered.append((member_id, REBALANCE_IN_PROGRESS, None))
