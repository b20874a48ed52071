"""Online migration between the classic and the consumer protocol, simulated (docs/consumer-protocol.md,
"Online migration").

A migration history is a ``stickyproof.simulation/1`` document one of whose ``join`` or ``restart``
events names a ``group_protocol``: the process then speaks that protocol (``group.protocol`` in
Kafka's client configuration). The whole history runs on the consumer simulator's tick with the
``MigrationCoordinator``: a history whose scenario is a classic group starts as a classic group and
becomes a consumer group when the first consumer-protocol member joins; it becomes classic again when
the last consumer-protocol member leaves. Classic processes keep their client-side behaviour: they
learn of a rebalance by REBALANCE_IN_PROGRESS on their heartbeat, an eager one revokes everything
before its JoinGroup, a cooperative one sends what it owns and rejoins after revoking, and an
ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID loses everything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from ...assignors.base import COOPERATIVE, EAGER
from ...errors import InvalidOption, InvalidScenario
from ...model import CONSUMER, Scenario, TopicPartition
from ..config import GroupConfig, MemberConfig, rebalance_protocol_of
from ..events import SIMULATION_FORMAT
from .classic_group import ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, ClassicMember
from .coordinator import UNKNOWN_MEMBER_ID, HeartbeatRequest, HeartbeatResponse
from .events import ConsumerEvent
from .migration_coordinator import (
    CLASSIC,
    DEFAULT_MIGRATION_POLICY,
    GROUP_ID_NOT_FOUND,
    MIGRATION_POLICIES,
    POLICY_REFUSAL,
    Conversion,
    MigrationCoordinator,
)
from .monitors import CONSUMER_MONITORS, CONVERGENCE_BOUND, ConsumerMonitors
from .reconcile import MemberRecord
from .releases import CoordinatorRelease
from .simulator import (
    DEFAULT_ASSIGNOR,
    DEFAULT_COORDINATOR,
    JOINING,
    MEMBER,
    STALLED,
    STOPPED,
    ConsumerSimulation,
    _fmt,
    _member_id,
    _Process,
)
from .trace import ConsumerResult, GroupState, MemberState

__all__ = [
    "MIGRATION_MONITORS",
    "MIGRATION_CONVERGENCE_BOUND",
    "MigrationMonitors",
    "MigrationSimulation",
    "simulate_migration",
    "is_migration_document",
    "check_migration_release",
]

#: Heartbeat rounds after the last disturbance by which a migrating group must be settled: the consumer
#: protocol's bound. A classic member in a consumer group reconciles like a consumer member (its
#: JoinGroup and SyncGroup come in the same turn as the heartbeat that told it to rejoin, and a
#: cooperative member's rejoin after revoking too). In a classic group every member hears of a
#: rebalance at its next heartbeat, so the barrier completes within a tick of the disturbance, and a
#: cooperative follow-up rebalance within the next. Measured, not proved (docs/consumer-protocol.md).
MIGRATION_CONVERGENCE_BOUND = CONVERGENCE_BOUND

MIGRATION_MONITORS: dict[str, str] = {
    **{k: v for k, v in CONSUMER_MONITORS.items() if k != "convergence"},
    "convergence": f"within {MIGRATION_CONVERGENCE_BOUND} heartbeats after the last disturbance every member is settled: "
                   "STABLE at the group epoch owning exactly its assignment (in a classic group: the generation's "
                   "assignment, no rebalance under way)",
    "epochs-across-conversion": "a conversion between a classic and a consumer group keeps every member's epoch "
                                "(generation) and the group's: neither goes down",
    "group-epoch-increases": "the group epoch (the generation, while the group is classic) never goes down, unless "
                             "the group was empty and Kafka deleted it",
}


@dataclass
class MigrationMonitors(ConsumerMonitors):
    """The consumer protocol's monitors plus the two of the switch."""

    last_group_epoch: int = -1

    def on_conversion(self, c: Conversion) -> None:
        after = dict(c.after)
        for member_id, epoch in c.epochs:
            if member_id in after and after[member_id] < epoch:
                self._report("epochs-across-conversion", c.tick, ("member", member_id, c.tick),
                             f"{member_id}'s epoch went from {epoch} down to {after[member_id]} when the group became {c.to}",
                             {"member": member_id, "from": epoch, "to": after[member_id], "group": c.to})
        if c.group_after < c.group_before:
            self._report("epochs-across-conversion", c.tick, ("group", c.tick),
                         f"the group's epoch went from {c.group_before} down to {c.group_after} when it became {c.to}",
                         {"from": c.group_before, "to": c.group_after, "group": c.to})

    def on_group_epoch(self, tick: int, epoch: int, empty: bool) -> None:
        if epoch < self.last_group_epoch and not empty:
            self._report("group-epoch-increases", tick, ("group", tick),
                         f"the group epoch went from {self.last_group_epoch} down to {epoch}",
                         {"from": self.last_group_epoch, "to": epoch})
        self.last_group_epoch = -1 if empty else epoch


@dataclass
class _MigratingProcess(_Process):
    """A process that speaks ``group_protocol``; a classic one also has its assignors, its rebalance
    protocol, and whether it waits in a JoinGroup barrier or must rejoin."""

    group_protocol: str = CONSUMER
    assignors: tuple[str, ...] = ()
    rebalance: str = EAGER
    waiting: bool = False
    rejoin: bool = False
    resets: int = 0


class MigrationSimulation(ConsumerSimulation):
    """A group whose members may speak either protocol, under a schedule of events."""

    def __init__(self, scenario: Scenario, events: Iterable[ConsumerEvent] = (), *, config: GroupConfig | None = None,
                 coordinator: str | CoordinatorRelease = DEFAULT_COORDINATOR, assignor: str = DEFAULT_ASSIGNOR,
                 name: str | None = None, policy: str = DEFAULT_MIGRATION_POLICY):
        self.policy = policy
        super().__init__(scenario, events, config=config, coordinator=coordinator, assignor=assignor, name=name)
        check_migration_release(self.release, "coordinator")

    def _accepts(self, scenario: Scenario) -> bool:
        return True

    def _make_monitors(self) -> MigrationMonitors:
        return MigrationMonitors(rules=MIGRATION_MONITORS, bound=MIGRATION_CONVERGENCE_BOUND)

    def _make_coordinator(self, assign) -> MigrationCoordinator:
        return MigrationCoordinator(self.release, self.config, assign, lambda: self.cluster, self.notes,
                                    self.monitors.on_transition, self.name, policy=self.policy,
                                    on_conversion=self.monitors.on_conversion)

    # ------------------------------------------------------------------------------------------
    def _start(self) -> None:
        if self.scenario.is_consumer_group:
            super()._start()
            self.processes = {n: _MigratingProcess(**vars(p)) for n, p in self.processes.items()}
            return
        co: MigrationCoordinator = self.coordinator  # type: ignore[assignment]
        members = self.scenario.members
        stable = bool(members) and all(m.generation >= 1 for m in members) and len({m.generation for m in members}) == 1
        classic = []
        for i, m in enumerate(members):
            p = _MigratingProcess(m.id, m.id, tuple(m.topics), None, m.rack, group_protocol=CLASSIC)
            if m.instance_id is not None:
                raise InvalidScenario(f"scenario.members[{i}].instance_id", "static classic members are not modelled in a "
                                      "migration history (docs/consumer-protocol.md, Online migration)")
            p.assignors = tuple(m.assignors)
            p.rebalance = self._rebalance_of(p, f"scenario.members[{i}]")
            if stable:
                p.epoch, p.owned, p.assignment, p.status = m.generation, frozenset(m.owned), frozenset(m.owned), MEMBER
                classic.append(ClassicMember(m.id, tuple(m.topics), p.assignors, m.rack, frozenset(m.owned), m.generation,
                                             frozenset(m.owned), False, 0))
            else:
                p.epoch = -1
            self.processes[m.id] = p
        co.rebalance_protocol = self.scenario.protocol
        co.start_classic(members[0].generation if stable else 0, self.scenario.protocol, classic, 0)

    def _rebalance_of(self, p: _MigratingProcess, path: str) -> str:
        cap = self.scenario.protocol if not self.scenario.is_consumer_group else COOPERATIVE
        return rebalance_protocol_of(MemberConfig(p.name, p.topics, p.assignors), cap, path)

    @property
    def _co(self) -> MigrationCoordinator:
        return self.coordinator  # type: ignore[return-value]

    # ------------------------------------------------------------------------------------------
    # Turns

    def _heartbeat(self, p: _Process) -> None:
        assert isinstance(p, _MigratingProcess)
        if p.group_protocol == CLASSIC:
            self._classic_turn(p)
        else:
            super()._heartbeat(p)
        self._deliver()

    def _receive(self, p: _Process, req: HeartbeatRequest, resp: HeartbeatResponse) -> None:
        if resp.error == GROUP_ID_NOT_FOUND:
            # fatal to the Java client (an unexpected heartbeat error): the consumer raises, the process ends
            self.notes.append(f"{p.name}: {resp.error}: {resp.message}; {p.name} stops (fatal to the client)")
            p.owned, p.assignment, p.status = frozenset(), frozenset(), STOPPED
            return
        super()._receive(p, req, resp)

    def _after_turns(self) -> None:
        self._deliver()

    def _classic_turn(self, p: _MigratingProcess) -> None:
        """One heartbeat interval of a classic client: rejoin when it must, else heartbeat and rejoin
        on REBALANCE_IN_PROGRESS; a JoinGroup answered at once is followed by its SyncGroup, and a
        cooperative member that revoked something rejoins at once (two rounds at most per turn)."""
        if p.waiting:
            return
        if p.status == MEMBER and not p.rejoin:
            lost = self.now < p.loss_until
            if lost and p.loss_direction in ("request", "both"):
                self.notes.append(f"{p.name}: heartbeat at generation {p.epoch} lost on its way")
                return
            error = self._co.classic_heartbeat(self.now, p.member_id, p.epoch)
            if lost:
                self.notes.append(f"{p.name}: heartbeat response ({error or 'NONE'}) lost")
                return
            if error is None:
                return
            self.notes.append(f"{p.name} (generation {p.epoch}): {error}")
            if not self._classic_error(p, error):
                return
        for _ in range(2):
            self._classic_join(p)
            if p.waiting or not (p.rejoin or p.status == JOINING) or p.status == STOPPED:
                return

    def _classic_error(self, p: _MigratingProcess, error: str) -> bool:
        """React to a classic error; True when the member rejoins now."""
        if error in (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID):
            # the generation is reset: ConsumerCoordinator.onJoinPrepare calls onPartitionsLost for all
            if p.owned:
                self.notes.append(f"{p.name} loses {_fmt(p.owned)} and rejoins")
            p.owned, p.assignment, p.epoch = frozenset(), frozenset(), -1
            if error == UNKNOWN_MEMBER_ID:
                p.resets += 1
                p.member_id = f"{_member_id(p.name, p.incarnation)}#{p.resets}"
            self.quiet_since = self.now
        p.status, p.rejoin = JOINING, True
        return True

    def _classic_join(self, p: _MigratingProcess) -> None:
        if p.rebalance == EAGER and p.owned:
            self.notes.append(f"{p.name} revokes {_fmt(p.owned)} before its JoinGroup (eager)")
            p.owned = frozenset()
        owned = p.owned if p.rebalance == COOPERATIVE else frozenset()
        ans = self._co.classic_join(self.now, p.member_id, p.rack, p.topics, p.assignors, owned, p.epoch if owned else -1)
        p.rejoin = False
        if ans.error is not None:
            self.notes.append(f"{p.name} JoinGroup: {ans.error}: {ans.message}")
            if ans.error == POLICY_REFUSAL:  # not retriable: raised from poll, the process ends
                self.notes.append(f"{p.name} stops: the JoinGroup error is fatal to the client")
                p.owned, p.assignment, p.status = frozenset(), frozenset(), STOPPED
                return
            self._classic_error(p, ans.error)
            return
        if ans.waiting:
            p.waiting = True
            self.notes.append(f"{p.name} sends JoinGroup and waits for the rebalance")
            return
        if ans.assignment is not None:  # a classic group answered at once
            self._assigned(p, ans.generation, ans.assignment)
            return
        sync = self._co.classic_sync(self.now, p.member_id, ans.generation)
        if sync.error is not None:
            self.notes.append(f"{p.name} SyncGroup (generation {ans.generation}): {sync.error}")
            self._classic_error(p, sync.error)
            p.epoch = ans.generation if sync.error == REBALANCE_IN_PROGRESS else p.epoch
            return
        self._assigned(p, sync.generation, sync.assignment or frozenset())

    def _assigned(self, p: _MigratingProcess, generation: int, assignment: frozenset[TopicPartition]) -> None:
        """A SyncGroup's assignment: revoke what it lacks, take what it adds; a cooperative member that
        revoked anything asks to rejoin (``ConsumerCoordinator.onJoinComplete``)."""
        if generation != p.epoch or assignment != p.assignment:
            self.notes.append(f"{p.name} <- generation {generation}, assignment {_fmt(assignment)}")
        revoked = p.owned - assignment
        p.epoch, p.status, p.waiting, p.assignment = generation, MEMBER, False, assignment
        self._take(p, assignment)
        if revoked and p.rebalance == COOPERATIVE:
            p.rejoin = True

    def _deliver(self) -> None:
        """Answers to JoinGroups that waited in a classic group's barrier (or were cancelled by the upgrade)."""
        delivered, self._co.delivered[:] = list(self._co.delivered), []
        for member_id, generation, assignment in delivered:
            p = next((q for q in self.processes.values() if isinstance(q, _MigratingProcess) and q.member_id == member_id
                      and q.waiting and q.running()), None)
            if p is None:
                continue
            if assignment is None:
                self.notes.append(f"{p.name}'s JoinGroup: {generation}")
                p.waiting, p.status, p.rejoin = False, JOINING, True
            else:
                self._assigned(p, int(generation), assignment)  # type: ignore[arg-type]

    # ------------------------------------------------------------------------------------------
    # Events

    def _apply(self, e: ConsumerEvent) -> None:
        k = e.event
        if k == "join":
            old = self.processes.get(e.member)
            if old is not None and old.status != STOPPED:
                raise InvalidScenario(f"{e.path}.member", f"{e.member} is already running at tick {e.at}")
            n = old.incarnation + 1 if old else 1
            p = _MigratingProcess(e.member, _member_id(e.member, n), tuple(e.topics or ()), e.instance_id, e.rack, incarnation=n)
            self._speak(p, e, old)
            self.processes[e.member] = p
            return
        p = self.processes.get(e.member) if e.member else None
        if isinstance(p, _MigratingProcess) and k == "slow-revocation" and p.group_protocol == CLASSIC:
            raise InvalidScenario(f"{e.path}.event", "slow-revocation is modelled for consumer-protocol members only")
        if isinstance(p, _MigratingProcess) and k in ("leave", "crash", "restart") and p.group_protocol == CLASSIC:
            p = self._process(e, running=k != "restart")  # type: ignore[assignment]
            assert isinstance(p, _MigratingProcess)
            if k != "crash" and p.status != STOPPED:
                self._co.classic_leave(self.now, p.member_id)  # a dynamic classic member leaves (LeaveGroup)
            p.waiting = p.rejoin = False
            if k != "restart":
                p.owned, p.assignment, p.status, p.epoch = frozenset(), frozenset(), STOPPED, -1
                p.stalled_until = p.loss_until = p.slow_until = -1
                return
            p.status = STOPPED
        super()._apply(e)
        if k == "restart" and isinstance(p, _MigratingProcess):
            self._speak(p, e, p)
            if p.group_protocol == CLASSIC:
                p.epoch = -1

    def _speak(self, p: _MigratingProcess, e: ConsumerEvent, before: _Process | None) -> None:
        """The protocol the (re)started process speaks, and a classic one's assignors and rebalance protocol."""
        was = before.group_protocol if isinstance(before, _MigratingProcess) else None
        p.group_protocol = e.group_protocol or was or (CONSUMER if self.scenario.is_consumer_group else CLASSIC)
        if p.group_protocol == CLASSIC:
            p.assignors = e.assignors or (before.assignors if isinstance(before, _MigratingProcess) else ()) or self._known_assignors()
            if not p.assignors:
                raise InvalidScenario(f"{e.path}.assignors", f"{p.name} speaks the classic protocol and lists no assignor")
            p.rebalance = self._rebalance_of(p, e.path)
            if p.instance_id is not None:
                raise InvalidScenario(f"{e.path}.instance_id", "static classic members are not modelled in a migration history")
            if self._co.group_type != CLASSIC:  # a classic group keeps the protocol it runs with
                self._co.rebalance_protocol = p.rebalance
        p.waiting = p.rejoin = False

    def _known_assignors(self) -> tuple[str, ...]:
        for m in self.scenario.members:
            if m.assignors:
                return tuple(m.assignors)
        return ()

    # ------------------------------------------------------------------------------------------
    # Views

    def _record_of(self, p: _Process) -> MemberRecord | None:
        if self._co.classic is not None:
            return self._co.classic_state(p.member_id)
        return super()._record_of(p)

    def _waiting(self) -> bool:
        if self._co.classic is not None:
            live = {p.member_id for p in self.processes.values() if p.status in (MEMBER, JOINING)}
            if any(mid not in live for mid in self._co.classic.members):
                return True
        return super()._waiting()

    def _unsettled(self) -> str | None:
        for name in sorted(self.processes):
            p = self.processes[name]
            if isinstance(p, _MigratingProcess) and p.running() and (p.waiting or p.rejoin):
                return f"{name} is rejoining"
        group = self._co.classic
        if group is None:
            return super()._unsettled()
        if group.state not in ("Stable", "Empty"):
            return f"the classic group is in {group.state}"
        for name in sorted(self.processes):
            p = self.processes[name]
            if p.status == STOPPED:
                continue
            m = group.members.get(p.member_id)
            if p.status == STALLED or m is None:
                return f"{name} is {'stalled' if m else 'not in the group'}"
            if p.epoch != group.generation or p.owned != m.assignment:
                return f"{name} owns {_fmt(p.owned)} at generation {p.epoch}, the group's is {group.generation}"
        return "a member's timeout is still to come" if self._waiting() else None

    def tick(self) -> None:
        super().tick()
        group = self._co.classic
        epoch = group.generation if group is not None else self._co.group_epoch
        empty = not (group.members if group is not None else self._co.members) or self._co.recreated_at == self.now
        monitors: MigrationMonitors = self.monitors  # type: ignore[assignment]
        before = len(monitors.pending)
        monitors.on_group_epoch(self.now, epoch, empty)
        if len(monitors.pending) > before and self.steps and self.steps[-1].tick == self.now:
            self.steps[-1] = replace(self.steps[-1], violations=self.steps[-1].violations + tuple(monitors.pending[before:]))
        monitors.pending.clear()

    def _group_state(self) -> GroupState:
        group = self._co.classic
        if group is None:
            return super()._group_state()
        return GroupState(group.generation, group.generation, tuple(sorted(group.members)), CLASSIC)

    def _member_states(self) -> tuple[MemberState, ...]:
        out = []
        for name in sorted(self.processes):
            p = self.processes[name]
            r = self._record_of(p)
            r = r if r is not None and r.member_id == p.member_id else None
            classic = isinstance(p, _MigratingProcess) and p.group_protocol == CLASSIC
            status = f"{p.status} (classic{', waiting' if getattr(p, 'waiting', False) else ''})" if classic else p.status
            out.append(MemberState(
                name, p.member_id, status, p.epoch, tuple(sorted(p.owned)),
                (r.state + (" (classic)" if r.classic is not None else "")) if r else None, r.epoch if r else None,
                tuple(sorted(r.assigned)) if r else (), tuple(sorted(r.pending_revocation)) if r else (),
                tuple(sorted(self._co.targets.get(p.member_id, ()))) if self._co.classic is None else (),
            ))
        return tuple(out)


    def result(self, ended: str) -> ConsumerResult:
        return replace(super().result(ended), migration_policy=self.policy)


def check_migration_release(release: CoordinatorRelease, flag: str) -> None:
    """Online migration came with Kafka 3.8's coordinator; 3.7's early-access one refused classic
    members in a consumer group and consumer heartbeats to a classic group."""
    if release.name == "3.7":
        raise InvalidOption(flag, "online migration between the protocols came in Kafka 3.8; coordinator 3.7 is not modelled "
                                  "for a migration history")


def is_migration_document(doc: Any) -> bool:
    """A simulation document one of whose events names a ``group_protocol``."""
    if not isinstance(doc, Mapping) or doc.get("format") != SIMULATION_FORMAT:
        return False
    events = doc.get("events")
    if isinstance(events, Mapping):
        events = events.get("events")
    return isinstance(events, list) and any(isinstance(e, Mapping) and "group_protocol" in e for e in events)


def check_policy(value: Any, path: str) -> str:
    if value not in MIGRATION_POLICIES:
        raise InvalidScenario(path, f"must be one of {', '.join(MIGRATION_POLICIES)} (group.consumer.migration.policy), "
                                    f"got {value!r}")
    return value


def simulate_migration(scenario: Scenario, events: Iterable[ConsumerEvent] = (), *, config: GroupConfig | None = None,
                       coordinator: str | CoordinatorRelease = DEFAULT_COORDINATOR, assignor: str = DEFAULT_ASSIGNOR,
                       name: str | None = None, policy: str = DEFAULT_MIGRATION_POLICY) -> ConsumerResult:
    """Run a migration history: ``scenario`` (a classic or a consumer group) under ``events``."""
    return MigrationSimulation(scenario, events, config=config, coordinator=coordinator, assignor=assignor, name=name,
                               policy=check_policy(policy, "migration_policy")).run()
