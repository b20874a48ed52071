"""The discrete-event simulation: events, turns, timers, trace, monitors (models/protocol.md §1, §6, §7).

``simulate(scenario, events, ...)`` runs a whole schedule and returns a ``SimulationResult``;
``Simulation`` is the same machine driven step by step (the Hypothesis state machines add events
while it runs). Everything is deterministic: members take turns in name order, events in
(tick, file) order, and the leader's assignment goes through ``stickyproof.leader``.
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from ..assignors.base import COOPERATIVE
from ..assignors.info import AssignorInfo
from ..errors import InvalidScenario
from ..grading import bounded
from ..leader import select_protocol
from ..model import Member, Scenario, Topic, TopicPartition, scenario_to_dict
from .config import GroupConfig, MemberConfig, check_features, rebalance_protocol_of, without_user_data_generation
from .coordinator import STABLE as GROUP_STABLE
from .coordinator import Coordinator, GroupMember
from .events import Event, Schedule, simulation_to_dict
from .member import STABLE, STOPPED, MemberProcess
from .messages import Response
from .monitors import Monitors, TickState, partitions_of
from .rebalances import Recorder
from .trace import GroupView, MemberView, SimulationResult, Step

__all__ = ["Simulation", "SimulationResult", "simulate"]


class Simulation:
    """A group under a schedule of events, advanced tick by tick."""

    def __init__(
        self,
        scenario: Scenario,
        events: Iterable[Event] = (),
        *,
        config: GroupConfig | None = None,
        without: Iterable[str] = (),
        assignor: "str | AssignorInfo | None" = None,
        name: str | None = None,
        record_rebalances: bool = False,
        assignor_seconds: float | None = None,
    ):
        self.scenario = scenario
        self.name = name if name is not None else scenario.name
        self.config = config or GroupConfig()
        self.without = check_features(without)
        self.assignor_seconds = assignor_seconds
        self._assignors: dict[str, AssignorInfo] = {}
        if isinstance(assignor, AssignorInfo):  # carried through as given: never looked up again by name
            self._assignors[assignor.name] = bounded(assignor, assignor_seconds)
            assignor = assignor.name
        self.assignor_override = assignor
        self.cluster: dict[str, Topic] = {t.name: t for t in sorted(scenario.topics, key=lambda t: t.name)}
        self._notes: list[str] = []
        self.coordinator = Coordinator(self.config, on_change=self._on_membership, notes=self._notes,
                                       on_rebalance=self._on_rebalance)
        self.processes: dict[str, MemberProcess] = {}
        self.now = 0
        self.steps: list[Step] = []
        self.monitors = Monitors(self.config.loop_bound, self.config.cooperative_bound)
        self._queue: list[tuple[int, int, str, Any]] = []
        self._seq = 0
        self._events: list[Event] = []
        self._inbox: dict[tuple[str, int], list[tuple[int, Response]]] = {}
        self._applied: list[str] = []
        self._rebalance_mark = 0
        self._since = 0
        self._formed_seen = 0
        self._committed_seen = 0
        self._last_views: tuple | None = None
        self._ended: str | None = None
        self.unowned_ticks = 0  # partition-ticks unowned (``measure``)
        self.unsettled_ranges: list[list[int]] = []  # [first, end) spans of ticks that ended unsettled
        self.recorder = Recorder(record_rebalances)
        self.tracing = True  # notes listing partitions are built only when a trace will show them
        self.joining: MemberProcess | None = None  # the process whose JoinGroup the coordinator is handling
        if assignor is not None:
            self.assignor_info(assignor)  # fail early, naming the assignor
        self._start()
        for e in events:
            self.schedule(e)

    # --------------------------------------------------------------------------------------
    # What members ask of the simulation

    def has(self, feature: str) -> bool:
        """True unless ``--without feature``."""
        return feature not in self.without

    def note(self, text: str) -> None:
        self._notes.append(text)

    def disturb(self, t: int, reason: str, *, membership: bool = False) -> None:
        """A disturbance restarts the count of generations (cooperative-convergence, no-rebalance-loop):
        only generations completing a rebalance that started after it count. Every disturbance but a
        membership change is a history event, the cause rebalance records name."""
        self._rebalance_mark = self.coordinator.rebalance_seq
        self._since = 0
        if not membership:
            self.recorder.event(t, reason)

    def _on_membership(self, t: int, member_id: str, what: str) -> None:
        self.disturb(t, f"{member_id}: {what}", membership=True)

    def _on_rebalance(self, t: int, seq: int, reason: str) -> None:
        joining = self.joining
        self.recorder.rebalance_started(seq, reason, joining is not None and joining.rejoin_cause == "revocation")

    def leader_ran(self, t: int, member: MemberProcess, outcome) -> None:
        """The leader's step (``LeaderOutcome``): a ``RebalanceRecord`` when the run keeps them."""
        self.recorder.leader_ran(t, self.coordinator, member, outcome)

    def leader_synced(self, committed: bool) -> None:
        """The leader's SyncGroup after its step: whether the coordinator stored its assignment."""
        self.recorder.leader_synced(committed)

    def topics(self) -> tuple[Topic, ...]:
        return tuple(self.cluster.values())

    def metadata_for(self, topics: Iterable[str]) -> dict[str, int]:
        return {t: self.cluster[t].partitions if t in self.cluster else 0 for t in sorted(topics)}

    def next_scheduled_tick(self) -> int | None:
        """The tick of the earliest event or delayed start still queued, or None."""
        return self._queue[0][0] if self._queue else None

    def has_responses_for(self, member: MemberProcess) -> bool:
        """Whether responses are waiting in ``member``'s inbox (delivered or not yet due)."""
        return bool(self._inbox.get(member.process))

    def end_tick(self) -> None:
        """Forget the tick's notes and applied events once its step is recorded."""
        self._notes.clear()
        self._applied.clear()

    def assignor_info(self, name: str) -> AssignorInfo:
        """The assignor ``name`` names in this run: resolved once (``lookup.get_assignor``), each call
        bounded by ``assignor_seconds``, and that same one for every member and every rebalance after."""
        info = self._assignors.get(name)
        if info is None:
            from ..lookup import get_assignor

            info = self._assignors[name] = bounded(get_assignor(name), self.assignor_seconds)
        return info

    def assignor_names(self, names: Sequence[str]) -> tuple[str, ...]:
        return tuple(names) if self.has("generation-in-user-data") else without_user_data_generation(names)

    def leader_failure(self, t: int, member: MemberProcess, error: str) -> None:
        self.note(f"{member.name} (leader): assignment failed, raised to the caller: {error}; it rejoins")

    def take_responses(self, member: MemberProcess, t: int) -> list[Response]:
        box = self._inbox.get(member.process)
        if not box:
            return []
        due = [r for when, r in box if when <= t]
        self._inbox[member.process] = [(when, r) for when, r in box if when > t]
        return due

    # --------------------------------------------------------------------------------------
    # Building processes

    def _member_config(self, name: str, topics, assignors, version, rack, instance_id, protocol, path: str) -> MemberConfig:
        if self.assignor_override is not None:
            assignors = (self.assignor_override,)
        config = MemberConfig(name, tuple(topics), tuple(assignors or ()), version, rack, instance_id, protocol)
        rebalance_protocol_of(config, self.scenario.protocol, path, resolve=self.assignor_info)  # validate early, naming the path
        return config

    def _new_process(self, config: MemberConfig, incarnation: int = 1) -> MemberProcess:
        return MemberProcess(config, rebalance_protocol_of(config, self.scenario.protocol, resolve=self.assignor_info),
                             incarnation=incarnation)

    def _start(self) -> None:
        """The start state (models/protocol.md §6): a stable group where the scenario is one, else cold."""
        configs = []
        for i, m in enumerate(self.scenario.members):
            assignors = m.assignors if self.assignor_override is None else (self.assignor_override,)
            if not assignors:
                raise InvalidScenario(
                    f"members[{i}].assignors",
                    f"{m.id} lists no assignor: give members[].assignors or an assignor to simulate with",
                )
            configs.append(self._member_config(m.id, m.topics, assignors, m.version, m.rack, m.instance_id, None, f"members[{i}]"))
        stable = [m for m in self.scenario.members if m.generation >= 1]
        fresh = [m for m in self.scenario.members if m.generation < 1 and not m.owned]
        reason = self._stable_start_problem(stable, fresh)
        by_name = {c.name: c for c in configs}
        if reason is None and stable:
            self._stable_start(stable, by_name)
            joiners = fresh
        else:
            if reason is not None and stable:
                self._applied.append(f"cold start: {reason}")
            joiners = list(self.scenario.members)
        for m in joiners:
            p = self._new_process(by_name[m.id])
            self.processes[m.id] = p
            self._applied.append(f"{m.id} starts and joins")

    def _stable_start_problem(self, stable: list[Member], fresh: list[Member]) -> str | None:
        if len(stable) + len(fresh) != len(self.scenario.members):
            return "some members claim partitions without a generation"
        if len({m.generation for m in stable}) > 1:
            return "the members' generations differ (stale claims)"
        seen: dict[TopicPartition, str] = {}
        for m in stable:
            for tp in m.owned:
                if tp in seen:
                    return f"{tp} is claimed by {seen[tp]} and {m.id}"
                seen[tp] = m.id
                if tp.topic not in m.topics or tp.topic not in self.cluster or tp.partition >= self.cluster[tp.topic].partitions:
                    return f"{m.id} claims {tp}, which it cannot own"
        if stable:
            try:
                select_protocol([Member(m.id, m.topics, assignors=self._kafka_names(m)) for m in stable])
            except InvalidScenario:
                return "the stable members offer no common assignor"
        return None

    def _kafka_names(self, m: Member) -> tuple[str, ...]:
        assignors = m.assignors if self.assignor_override is None else (self.assignor_override,)
        return tuple(self.assignor_info(a).kafka_name for a in self.assignor_names(assignors))

    def _stable_start(self, stable: list[Member], configs: Mapping[str, MemberConfig]) -> None:
        generation = stable[0].generation
        co = self.coordinator
        members = {}
        for m in stable:
            p = self._new_process(configs[m.id])
            p.state, p.member_id, p.generation = STABLE, m.id, generation
            p.owned = set(m.owned)
            p.memory, p.memory_generation, p.memory_epoch = tuple(sorted(m.owned)), generation, co.epoch
            p.rejoin_needed = False
            self.processes[m.id] = p
            co.reserve_id(m.id, m.id)
            members[m.id] = GroupMember(m.id, p.process, m.instance_id, p.metadata(self), 0, synced=True)
            if m.instance_id is not None:
                co.static[m.instance_id] = m.id
        co.members = members
        co.generation = generation
        co.leader = stable[0].id
        co.protocol, _ = select_protocol([Member(i, g.metadata.topics, assignors=g.metadata.kafka_names) for i, g in members.items()])
        co.assignments = {m.id: tuple(sorted(m.owned)) for m in stable}
        co.state = GROUP_STABLE
        co.persisted = None
        if co.persisted_mode:
            from .coordinator import _Persisted

            co.persisted = _Persisted(generation, tuple(members.values()), co.leader, co.protocol, tuple(co.assignments.items()))
        leader = self.processes[co.leader]
        leader.is_leader = True
        leader.leader_members = tuple((i, g.metadata) for i, g in members.items())
        leader.metadata_snapshot = self.metadata_for(leader.subscribed_by_group())
        self._applied.append(f"stable start: generation {generation}, {', '.join(members)} (leader {co.leader})")
        subscribed = partitions_of({t for m in stable for t in m.topics}, {n: t.partitions for n, t in self.cluster.items()})
        if subscribed - {tp for m in stable for tp in m.owned}:
            leader.rejoin_needed = True
            self._applied.append(f"{co.leader} (leader): the scenario leaves subscribed partitions unowned; it rebalances")

    # --------------------------------------------------------------------------------------
    # Scheduling

    def schedule(self, event: Event) -> None:
        """Add an event (at or after the current tick)."""
        if event.at < self.now:
            raise InvalidScenario(event.path or "event.at", f"tick {event.at} is in the past (the simulation is at tick {self.now})")
        self._events.append(event)
        self._push(event.at, "event", event)

    def _push(self, tick: int, kind: str, payload: Any) -> None:
        heapq.heappush(self._queue, (tick, self._seq, kind, payload))
        self._seq += 1

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    def _process(self, name: str, event: Event) -> MemberProcess:
        p = self.processes.get(name)
        if p is None or not p.running:
            raise InvalidScenario(event.path or "event.member", f"{event.event}: no running member named {name!r} at tick {event.at}")
        return p

    def _apply(self, t: int, kind: str, payload: Any) -> None:
        if kind == "start":
            config, incarnation = payload
            self.processes[config.name] = self._new_process(config, incarnation)
            self._applied.append(f"{config.name} starts{' (incarnation ' + str(incarnation) + ')' if incarnation > 1 else ''} and joins")
            self.disturb(t, f"{config.name} starts")
            return
        e: Event = payload
        self.disturb(t, e.describe())
        self._applied.append(e.describe())
        k = e.event
        if k == "join":
            current = self.processes.get(e.member)
            if current is not None and current.running:
                raise InvalidScenario(e.path or "event.member", f"join: {e.member!r} is already running at tick {e.at}")
            config = self._member_config(e.member, e.topics, e.assignors or self._default_assignors(), e.version if e.version is not None else 3,
                                         e.rack, e.instance_id, e.protocol, e.path)
            incarnation = current.incarnation + 1 if current is not None else 1
            self.processes[e.member] = self._new_process(config, incarnation)
        elif k == "leave":
            self._process(e.member, e).close(self, t, leave=True, reason="left")
        elif k == "crash":
            self._process(e.member, e).crash()
        elif k == "stall":
            p = self._process(e.member, e)
            if e.at_join_prepare:
                p.stall_at_join_prepare = e.ticks
            else:
                p.stalled_until = max(p.stalled_until, t + e.ticks)
        elif k == "subscribe":
            p = self._process(e.member, e)
            p.config = replace(p.config, topics=e.topics)
            p.rejoin_needed = True
        elif k == "add-partitions":
            old = self.cluster.get(e.topic)
            # The new partitions' replica racks as the event names them (brokers with racks place
            # replicas on racks: issue 20); an event naming none adds partitions with no known rack.
            added = e.racks if e.racks is not None else tuple(() for _ in range(e.count))
            if old is None:
                self.cluster[e.topic] = Topic(e.topic, e.count, e.racks)
            else:
                before = old.racks
                if before is None and e.racks is not None:
                    before = tuple(() for _ in range(old.partitions))
                racks = None if before is None else before + added
                self.cluster[e.topic] = Topic(e.topic, old.partitions + e.count, racks)
            self.cluster = dict(sorted(self.cluster.items()))
        elif k == "delete-topic":
            if e.topic not in self.cluster:
                raise InvalidScenario(e.path or "event.topic", f"delete-topic: no topic {e.topic!r} at tick {e.at}")
            del self.cluster[e.topic]
        elif k in ("restart", "upgrade"):
            self._restart(t, self._process(e.member, e), e)
        elif k == "rolling-restart":
            names = e.members or tuple(sorted(n for n, p in self.processes.items() if p.running))
            for i, name in enumerate(names):
                single = replace(e, at=t + i * e.gap, event="restart", member=name, members=None)
                if i == 0:
                    self._restart(t, self._process(name, single), single)
                else:
                    self._push(t + i * e.gap, "event", single)
        elif k == "failover":
            self.coordinator.failover(t, e.persisted)
        elif k == "listener-error":
            p = self._process(e.member, e)
            p.listener_faults[e.callback] = p.listener_faults.get(e.callback, 0) + e.times

    def _default_assignors(self) -> tuple[str, ...]:
        if self.assignor_override is not None:
            return (self.assignor_override,)
        for p in sorted(self.processes.values(), key=lambda p: p.name):
            if p.running:
                return p.config.assignors
        for m in self.scenario.members:
            if m.assignors:
                return m.assignors
        return ()

    def _restart(self, t: int, p: MemberProcess, e: Event) -> None:
        changes = {f: getattr(e, f) for f in ("topics", "assignors", "version", "rack", "instance_id", "protocol") if f in e.given}
        config = replace(p.config, **changes)
        if self.assignor_override is not None and "assignors" not in changes:
            config = replace(config, assignors=(self.assignor_override,))
        rebalance_protocol_of(config, self.scenario.protocol, e.path, resolve=self.assignor_info)
        p.close(self, t, leave=True, reason="restarting")
        self._push(t + self.config.restart_downtime, "start", (config, p.incarnation + 1))

    # --------------------------------------------------------------------------------------
    # The tick

    def _route(self, t: int) -> None:
        for r in self.coordinator.outbox:
            self._inbox.setdefault(r.process, []).append((t + 1, r))
        self.coordinator.outbox.clear()

    def step(self) -> Step | None:
        """Run one tick; returns the recorded step, or None when nothing changed."""
        t = self.now
        while self._queue and self._queue[0][0] <= t:
            _, _, kind, payload = heapq.heappop(self._queue)
            self._apply(t, kind, payload)
        for name in sorted(self.processes):
            p = self.processes[name]
            p.turn(self, t)
            self._route(t)
        self.coordinator.tick(t)
        self._route(t)
        return self._record(t)

    def settled(self) -> bool:
        """After the last tick run: coordinator Stable, every running member STABLE with nothing pending,
        the coordinator's members exactly the running members."""
        co = self.coordinator
        t = self.now - 1
        running = [p for p in self.processes.values() if p.running]
        if not running and not co.members:
            return True  # everyone left: an empty group is at rest
        if co.state != GROUP_STABLE:
            return False
        ids = set()
        for p in running:
            if p.stalled(t) or p.state != STABLE or p.rejoin_needed or p.returning or p.rejoin_reason(self):
                return False
            if self._inbox.get(p.process):
                return False
            if p.member_id not in co.members or not co.members[p.member_id].synced:
                return False
            ids.add(p.member_id)
        return ids == set(co.members)

    def _views(self, t: int) -> tuple[GroupView, tuple[MemberView, ...]]:
        co = self.coordinator
        group = GroupView(co.state, co.generation, co.epoch, co.leader, co.protocol, tuple(co.members))
        members = []
        for name in sorted(self.processes):
            p = self.processes[name]
            state = STOPPED if not p.running else ("STALLED" if p.stalled(t) else p.state)
            members.append(
                MemberView(name, p.member_id, state, p.generation, p.protocol, tuple(sorted(p.owned)),
                           tuple(sorted(p.consuming(t))), p.returning)
            )
        return group, tuple(members)

    def new_generations(self) -> tuple[tuple, tuple]:
        """The generations formed and committed since the last tick, as the monitors read them."""
        co = self.coordinator
        new_formed = co.formed[self._formed_seen:]
        self._formed_seen = len(co.formed)
        new_committed = tuple(co.committed[self._committed_seen:])
        self._committed_seen = len(co.committed)
        formed = []
        for tick, generation, ids, rebalance in new_formed:
            all_coop = all(self._protocol_of(i) == COOPERATIVE for i in ids)
            subscriptions = {frozenset(co.members[i].metadata.topics) for i in ids if i in co.members}
            if rebalance > self._rebalance_mark:
                self._since += 1
                formed.append((tick, generation, all_coop, self._since, len(subscriptions) <= 1))
        return tuple(formed), new_committed

    @staticmethod
    def member_generations(running: Mapping[str, MemberProcess]) -> dict[str, tuple[int, int]]:
        return {f"{n}#{p.incarnation}": (p.memory_epoch, p.memory_generation) for n, p in running.items()}

    def _record(self, t: int) -> Step | None:
        co = self.coordinator
        formed, new_committed = self.new_generations()
        running = {n: p for n, p in self.processes.items() if p.running}
        counts = {n: tp.partitions for n, tp in self.cluster.items()}
        subscribed = partitions_of({topic for p in running.values() for topic in p.config.topics}, counts)
        self.now = t + 1  # the tick is over: settled() looks at it
        settled = self.settled()
        state = TickState(
            tick=t,
            consuming={n: p.consuming(t) for n, p in running.items()},
            owned={n: frozenset(p.owned) for n, p in running.items()},
            member_generations=self.member_generations(running),
            epoch=co.epoch,
            committed=new_committed,
            formed=formed,
            settled=settled,
            subscribed_partitions=subscribed,
        )
        violations = tuple(self.monitors.check(state))
        self.measure(t, settled, len(subscribed.difference(*state.owned.values())))
        group, members = self._views(t)
        views = (group, members)
        notes = tuple(self._notes)
        events = tuple(self._applied)
        self._notes.clear()
        self._applied.clear()
        if not events and not notes and not violations and views == self._last_views:
            return None
        self._last_views = views
        step = Step(t, events, notes, group, members, violations)
        self.steps.append(step)
        return step

    def measure(self, t: int, settled: bool, unowned: int, ticks: int = 1) -> None:
        """The sweep's protocol measures of ``ticks`` ticks from ``t``: partitions of subscribed, existing
        topics no running member owns, and whether the ticks ended unsettled (kept as spans)."""
        self.unowned_ticks += unowned * ticks
        if not settled:
            spans = self.unsettled_ranges
            if spans and spans[-1][1] == t:
                spans[-1][1] = t + ticks
            else:
                spans.append([t, t + ticks])

    def _protocol_of(self, member_id: str) -> str:
        m = self.coordinator.members.get(member_id)
        return m.metadata.protocol if m is not None else ""

    # --------------------------------------------------------------------------------------
    # Running

    def run_for(self, ticks: int) -> None:
        for _ in range(ticks):
            if self.now >= self.config.max_ticks or self.monitors.loop_detected:
                return
            self.step()

    def end_reason(self) -> str | None:
        """Why the run stops now (``rebalance loop``, ``max_ticks``, ``settled``), or None to go on."""
        if self.monitors.loop_detected:
            return "rebalance loop"
        if self.now >= self.config.max_ticks:
            return "max_ticks"
        if not self._queue and self.now > 0 and self.settled():
            return "settled"
        return None

    def run(self) -> SimulationResult:
        """Run until the group has settled after the last scheduled event, a loop is found, or ``max_ticks``."""
        while (ended := self.end_reason()) is None:
            self.step()
        self._ended = ended
        return self.result()

    def result(self) -> SimulationResult:
        doc = simulation_to_dict(
            scenario_to_dict(self.scenario), self.events, name=self.name, config=self.config,
            without=self.without, assignor=self.assignor_override,
        )
        return SimulationResult(
            name=self.name,
            steps=tuple(self.steps),
            verdicts=self.monitors.results(),
            ticks=self.now,
            settled=self.settled(),
            ended=self._ended or "running",
            config=self.config,
            without=self.without,
            assignor=self.assignor_override,
            document=doc,
            rebalances=tuple(self.recorder.records),
        )


def simulate(
    scenario: Scenario,
    events: Schedule | Iterable[Event] = (),
    *,
    config: GroupConfig | None = None,
    without: Iterable[str] = (),
    assignor: str | None = None,
    name: str | None = None,
) -> SimulationResult:
    """Run ``events`` against the group of ``scenario`` and check the monitors after every tick."""
    if isinstance(events, Schedule):
        config = config or events.config
        events = events.events
    sim = Simulation(scenario, events, config=config, without=without, assignor=assignor, name=name)
    return sim.run()
