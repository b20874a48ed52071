"""A KIP-848 consumer group, tick by tick: the coordinator and its members under a schedule of events
(docs/consumer-protocol.md).

One tick is one heartbeat interval. Each tick: the events scheduled for it, then the coordinator's
session and rebalance timeouts due, then every running member's ``ConsumerGroupHeartbeat`` in name
order (each answered before the next is sent), then the end-of-tick monitors. A member revokes and
takes partitions as soon as a response tells it to, and acknowledges in its next heartbeat, unless a
``slow-revocation`` holds its revocation. Everything is deterministic: same input, same trace.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable

from ...errors import InvalidOption, InvalidScenario
from ...model import Scenario, Topic, TopicPartition
from ..config import GroupConfig
from ..trace import MonitorVerdict
from .coordinator import (
    FENCED_INSTANCE_ID,
    FENCED_MEMBER_EPOCH,
    UNKNOWN_MEMBER_ID,
    UNRELEASED_INSTANCE_ID,
    ConsumerCoordinator,
    HeartbeatRequest,
    HeartbeatResponse,
)
from .events import ConsumerEvent
from .monitors import ConsumerMonitors
from .reconcile import LEAVE_EPOCH, STABLE, STATIC_LEAVE_EPOCH, MemberRecord
from .releases import CoordinatorRelease, coordinator_release
from .trace import ConsumerResult, ConsumerStep, GroupState, MemberState

__all__ = ["DEFAULT_ASSIGNOR", "DEFAULT_COORDINATOR", "ConsumerSimulation", "simulate_consumer_group", "consumer_assignor"]

#: The coordinator's default server-side assignor (the first of ``group.consumer.assignors``).
DEFAULT_ASSIGNOR = "uniform"
DEFAULT_COORDINATOR = "current"

JOINING, MEMBER, STALLED, STOPPED = "JOINING", "MEMBER", "STALLED", "STOPPED"


def consumer_assignor(name: str, flag: str = "--assignor"):
    """The server-side assignor ``name`` names (its ``consumer_group`` entry); ``InvalidOption`` naming
    ``flag`` for a name that is not one."""
    from ...assignors.registry import list_consumer_group_assignors
    from ...errors import StickyproofError
    from ...lookup import get_assignor

    known = ", ".join(info.name for info in list_consumer_group_assignors())
    try:
        info = get_assignor(name)
    except StickyproofError as exc:
        raise InvalidOption(flag, f"{exc} (server-side assignors: {known})") from exc
    if info.consumer_group is None:
        raise InvalidOption(flag, f"{name} is not a server-side (KIP-848) assignor (known: {known})")
    return info.consumer_group


@dataclass
class _Process:
    """A consumer process: what the client knows (its epoch, owned partitions, last assignment)."""

    name: str
    member_id: str
    topics: tuple[str, ...]
    instance_id: str | None = None
    rack: str | None = None
    epoch: int = 0
    owned: frozenset[TopicPartition] = frozenset()
    assignment: frozenset[TopicPartition] = frozenset()
    status: str = JOINING
    stalled_until: int = -1
    loss_until: int = -1
    loss_direction: str = "response"
    slow_until: int = -1
    incarnation: int = 1

    def running(self) -> bool:
        return self.status != STOPPED


class ConsumerSimulation:
    """A consumer group under a schedule of events, advanced tick by tick."""

    def __init__(self, scenario: Scenario, events: Iterable[ConsumerEvent] = (), *, config: GroupConfig | None = None,
                 coordinator: str | CoordinatorRelease = DEFAULT_COORDINATOR, assignor: str = DEFAULT_ASSIGNOR,
                 name: str | None = None):
        if not self._accepts(scenario):
            raise InvalidScenario("group_protocol", 'the consumer-group simulator needs "group_protocol": "consumer"')
        self.scenario = scenario
        self.name = name if name is not None else scenario.name
        self.config = config or GroupConfig()
        self.release = coordinator if isinstance(coordinator, CoordinatorRelease) else coordinator_release(coordinator)
        self.assignor = assignor
        self.cluster: dict[str, Topic] = {t.name: t for t in sorted(scenario.topics, key=lambda t: t.name)}
        self.notes: list[str] = []
        self.monitors = self._make_monitors()
        self.coordinator = self._make_coordinator(consumer_assignor(assignor))
        self.processes: dict[str, _Process] = {}
        self.events = sorted(events, key=lambda e: e.at)  # stable: file order within a tick
        self.rejoins: list[tuple[int, str]] = []  # (tick, process name): a restarted process comes back
        self.steps: list[ConsumerStep] = []
        self.now = 0
        self.quiet_since = 0
        self._start()

    def _accepts(self, scenario: Scenario) -> bool:
        return scenario.is_consumer_group

    def _make_monitors(self) -> ConsumerMonitors:
        return ConsumerMonitors()

    def _make_coordinator(self, assign) -> ConsumerCoordinator:
        return ConsumerCoordinator(self.release, self.config, assign, lambda: self.cluster, self.notes,
                                   self.monitors.on_transition, self.name)

    def _after_turns(self) -> None:
        """Called once every running member has had its turn in the tick (a hook for subclasses)."""

    def _start(self) -> None:
        members = self.scenario.members
        established = any(m.owned for m in members)
        records = []
        for m in members:
            p = _Process(m.id, m.id, tuple(m.topics), m.instance_id, m.rack)
            if established:
                p.epoch, p.owned, p.assignment, p.status = 1, frozenset(m.owned), frozenset(m.owned), MEMBER
                records.append(MemberRecord(m.id, m.instance_id, m.rack, tuple(m.topics), STABLE, 1, 0,
                                            assigned=frozenset(m.owned), target_epoch=1))
            self.processes[m.id] = p
        if established:
            self.coordinator.establish(records, 0)

    # ------------------------------------------------------------------------------------------
    # Running

    def run(self, observe: Callable[["ConsumerSimulation"], None] | None = None) -> ConsumerResult:
        """Run to settlement after the last event, or to ``config.max_ticks``; ``observe`` is called
        after every tick (the sweep reads its convergence and ownership measures there)."""
        ended = "max_ticks"
        while self.now < self.config.max_ticks:
            self.tick()
            if observe is not None:
                observe(self)
            if self._done():
                ended = "settled"
                break
            self.now += 1
        return self.result(ended)

    def _done(self) -> bool:
        later = any(e.at > self.now for e in self.events) or any(t > self.now for t, _ in self.rejoins)
        return not later and self._unsettled() is None and self.now > self.quiet_since

    def tick(self) -> None:
        """One heartbeat interval."""
        now = self.now
        self.notes.clear()
        happened = []
        for e in [e for e in self.events if e.at == now]:
            happened.append(e.describe())
            self._apply(e)
            self.quiet_since = now
        for when, name in [r for r in self.rejoins if r[0] == now]:
            self.processes[name].status = JOINING
            happened.append(f"{name} is back as {self.processes[name].member_id}")
            self.quiet_since = now
        for p in self.processes.values():
            if now in (p.stalled_until, p.loss_until, p.slow_until):
                self.quiet_since = now
            if p.status == STALLED and now >= p.stalled_until:
                p.status = MEMBER if p.epoch > 0 else JOINING
            if p.slow_until == now and p.running():
                self._take(p, p.assignment)
        if self.coordinator.expire(now):
            self.quiet_since = now
        for name in sorted(self.processes):
            p = self.processes[name]
            if p.status in (STOPPED, STALLED):
                continue
            self._heartbeat(p)
        self._after_turns()
        self.quiet_since = max(self.quiet_since, self.coordinator.bumped_at)
        unsettled = self._unsettled()
        if self._waiting():
            self.quiet_since = now
        owning = {p.name: p.owned for p in self.processes.values() if p.status in (MEMBER, JOINING) and p.owned}
        outside = frozenset(n for n in owning if self._record_of(self.processes[n]) is None)
        self.monitors.on_tick_end(now, owning, unsettled, self.quiet_since, outside)
        violations = tuple(self.monitors.pending)
        self.monitors.pending.clear()
        if happened or self.notes or violations or now == 0:
            self.steps.append(ConsumerStep(now, tuple(happened), tuple(self.notes), self._group_state(), self._member_states(),
                                           violations))

    def _heartbeat(self, p: _Process) -> None:
        now = self.now
        req = HeartbeatRequest(p.member_id, p.epoch, p.instance_id, p.rack, p.topics, p.owned)
        lost = now < p.loss_until
        if lost and p.loss_direction in ("request", "both"):
            self.notes.append(f"{p.name}: heartbeat at epoch {p.epoch} lost on its way")
            return
        before = self._record_of(p)
        resp = self.coordinator.heartbeat(now, req)
        self.monitors.on_heartbeat(now, req, before, resp)
        if lost:
            self.notes.append(f"{p.name}: response (epoch {resp.epoch}{', ' + resp.error if resp.error else ''}) lost")
            return
        self._receive(p, req, resp)

    def _receive(self, p: _Process, req: HeartbeatRequest, resp: HeartbeatResponse) -> None:
        if resp.error is not None:
            self.notes.append(f"{p.name} (epoch {req.epoch}): {resp.error}: {resp.message}")
            if resp.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
                if p.owned:
                    self.notes.append(f"{p.name} loses {_fmt(p.owned)} and rejoins with epoch 0")
                if req.epoch != 0 or resp.error == UNKNOWN_MEMBER_ID:
                    self.quiet_since = self.now
                p.epoch, p.owned, p.assignment, p.status = 0, frozenset(), frozenset(), JOINING
            elif resp.error in (FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID):
                # fatal to the Java client: the consumer raises and the application's process ends
                p.owned, p.assignment, p.status = frozenset(), frozenset(), STOPPED
                self.notes.append(f"{p.name} stops: {resp.error} is fatal to the client")
            return
        if resp.epoch != p.epoch or resp.assignment != p.assignment:
            self.notes.append(f"{p.name} <- epoch {resp.epoch}, assignment {_fmt(resp.assignment)}")
        p.epoch, p.status = resp.epoch, MEMBER
        p.assignment = resp.assignment if resp.assignment is not None else p.assignment
        if self.now < p.slow_until and p.owned - p.assignment:
            self.notes.append(f"{p.name} is still revoking {_fmt(p.owned - p.assignment)}")
            return
        self._take(p, p.assignment)

    def _take(self, p: _Process, assignment: frozenset[TopicPartition]) -> None:
        """Revoke what the assignment lacks and take what it adds (the member's reconciliation)."""
        revoked, added = p.owned - assignment, assignment - p.owned
        if revoked:
            self.notes.append(f"{p.name} revokes {_fmt(revoked)}")
        if added:
            self.notes.append(f"{p.name} takes {_fmt(added)}")
        p.owned = assignment

    def _record_of(self, p: _Process) -> MemberRecord | None:
        if p.instance_id is not None:
            return self.coordinator.static_member(p.instance_id)
        return self.coordinator.members.get(p.member_id)

    # ------------------------------------------------------------------------------------------
    # Events

    def _process(self, e: ConsumerEvent, *, running: bool = True) -> _Process:
        p = self.processes.get(e.member)
        if p is None:
            raise InvalidScenario(f"{e.path}.member", f"{e.member} is not a member of the group (it never joined)")
        if running and p.status == STOPPED:
            raise InvalidScenario(f"{e.path}.member", f"{e.member} is not running at tick {e.at}")
        return p

    def _apply(self, e: ConsumerEvent) -> None:
        k = e.event
        if k == "join":
            old = self.processes.get(e.member)
            if old is not None and old.status != STOPPED:
                raise InvalidScenario(f"{e.path}.member", f"{e.member} is already running at tick {e.at}")
            n = old.incarnation + 1 if old else 1
            self.processes[e.member] = _Process(e.member, _member_id(e.member, n), tuple(e.topics or ()),
                                                e.instance_id, e.rack, incarnation=n)
        elif k in ("leave", "crash", "restart"):
            # a crashed or stopped process may be restarted: it only comes back
            p = self._process(e, running=k != "restart")
            if k != "crash" and p.status != STOPPED:
                epoch = STATIC_LEAVE_EPOCH if p.instance_id is not None else LEAVE_EPOCH
                req = HeartbeatRequest(p.member_id, epoch, p.instance_id, p.rack, p.topics, frozenset())
                self.coordinator.heartbeat(self.now, req)
            p.owned, p.assignment, p.status, p.epoch = frozenset(), frozenset(), STOPPED, 0
            p.stalled_until = p.loss_until = p.slow_until = -1
            if k == "restart":
                p.incarnation += 1
                p.member_id = _member_id(p.name, p.incarnation)
                for f in ("topics", "rack", "instance_id"):
                    if f in e.given:
                        setattr(p, f, getattr(e, f) if f != "topics" else tuple(e.topics or ()))
                self.rejoins.append((self.now + self.config.restart_downtime, p.name))
        elif k == "stall":
            p = self._process(e)
            p.status, p.stalled_until = STALLED, self.now + e.ticks
        elif k == "subscribe":
            self._process(e).topics = tuple(e.topics or ())
        elif k == "heartbeat-loss":
            p = self._process(e)
            p.loss_until, p.loss_direction = self.now + e.ticks, e.direction
        elif k == "slow-revocation":
            self._process(e).slow_until = self.now + e.ticks
        elif k == "add-partitions":
            t = self.cluster.get(e.topic)
            if t is None:
                raise InvalidScenario(f"{e.path}.topic", f"no topic {e.topic!r} at tick {e.at}")
            racks = None if t.racks is None and e.racks is None else \
                (t.racks or tuple(() for _ in range(t.partitions))) + (e.racks or tuple(() for _ in range(e.count)))
            self.cluster[e.topic] = replace(t, partitions=t.partitions + e.count, racks=racks)
        elif k == "create-topic":
            if e.topic in self.cluster:
                raise InvalidScenario(f"{e.path}.topic", f"topic {e.topic!r} already exists at tick {e.at}")
            self.cluster[e.topic] = Topic(e.topic, e.count, e.racks)
        elif k == "delete-topic":
            if e.topic not in self.cluster:
                raise InvalidScenario(f"{e.path}.topic", f"no topic {e.topic!r} at tick {e.at}")
            del self.cluster[e.topic]

    # ------------------------------------------------------------------------------------------
    # Views

    def _waiting(self) -> bool:
        """A timeout is still to come: a record whose process is not heartbeating (crashed, stalled,
        restarting, or a static member gone with epoch -2) is removed or replaced only later."""
        live = {p.member_id for p in self.processes.values() if p.status in (MEMBER, JOINING)}
        return any(mid not in live for mid in self.coordinator.members) or \
            any(p.status == STALLED or self.now < p.loss_until or self.now < p.slow_until for p in self.processes.values())

    def unsettled(self) -> str | None:
        """Why the group is not settled at the end of the tick just run, or None (``_unsettled``)."""
        return self._unsettled()

    def _unsettled(self) -> str | None:
        """Why the group is not settled, or None: every running member STABLE at the group epoch and
        owning exactly its assignment, and no timeout to come."""
        c = self.coordinator
        for name in sorted(self.processes):
            p = self.processes[name]
            if p.status == STOPPED:
                continue
            if p.status == STALLED:
                return f"{name} is stalled"
            record = self._record_of(p)
            if record is None or record.member_id != p.member_id:
                return f"{name} is not in the group"
            if record.state != STABLE or record.epoch != c.group_epoch or c.assignment_epoch != c.group_epoch:
                return f"{name} is {record.state} at epoch {record.epoch} (group epoch {c.group_epoch})"
            if p.epoch != record.epoch or p.owned != record.assigned:
                return f"{name} owns {_fmt(p.owned)} at epoch {p.epoch}, the coordinator says {_fmt(record.assigned)} at {record.epoch}"
        if self._waiting():
            return "a member's timeout is still to come"
        return None

    def _group_state(self) -> GroupState:
        c = self.coordinator
        return GroupState(c.group_epoch, c.assignment_epoch, tuple(sorted(c.members)))

    def _member_states(self) -> tuple[MemberState, ...]:
        out = []
        for name in sorted(self.processes):
            p = self.processes[name]
            r = self.coordinator.members.get(p.member_id)
            out.append(MemberState(
                name, p.member_id, p.status, p.epoch, tuple(sorted(p.owned)),
                r.state if r else None, r.epoch if r else None, tuple(sorted(r.assigned)) if r else (),
                tuple(sorted(r.pending_revocation)) if r else (),
                tuple(sorted(self.coordinator.targets.get(p.member_id, ()))),
            ))
        return tuple(out)

    def result(self, ended: str) -> ConsumerResult:
        verdicts: tuple[MonitorVerdict, ...] = self.monitors.results()
        return ConsumerResult(self.name, tuple(self.steps), verdicts, self.now, ended == "settled", ended, self.config,
                              self.release.name, self.assignor)


def _member_id(name: str, incarnation: int) -> str:
    """A process's member id: its name, then ``name~2``... for later incarnations (KIP-1082: every
    consumer instance generates its own)."""
    return name if incarnation == 1 else f"{name}~{incarnation}"


def _fmt(tps) -> str:
    from ..trace import format_partitions

    return format_partitions(sorted(tps))


def simulate_consumer_group(scenario: Scenario, events: Iterable[ConsumerEvent] = (), *, config: GroupConfig | None = None,
                            coordinator: str | CoordinatorRelease = DEFAULT_COORDINATOR, assignor: str = DEFAULT_ASSIGNOR,
                            name: str | None = None) -> ConsumerResult:
    """Run ``scenario`` under ``events`` with a coordinator release and a server-side assignor."""
    return ConsumerSimulation(scenario, events, config=config, coordinator=coordinator, assignor=assignor, name=name).run()

