"""A scenario's history applied to real members on a real broker, and the monitors run on what they reported.

    with running_broker() as broker:
        result = run_live(scenario, schedule, broker=broker, name="kip341-stale-rejoin")
    result.timeline        every report of every member, on one clock (ms since the run started)
    result.settled         who owns what when the group last settled
    result.verdicts        the monitors' verdicts (the simulator's names and rules)

How a history becomes a live run (docs/live.md): the topics are created by an AdminClient call with the
scenario's partition counts; the scenario's members start and join (their ``owned`` partitions and
generations are the simulated group's past, which a real group cannot be handed: they start fresh);
the run waits for the group to settle, then applies the events in ``at`` order, one tick being
``tick_ms`` of wall time (``session.timeout.ms`` = ``max.poll.interval.ms`` = ``session_timeout`` ticks,
``heartbeat.interval.ms`` = one tick, as the simulator's ``GroupConfig`` counts them; ``metadata.max.age.ms``
= ``session_timeout`` ticks, so added partitions are seen within a run), and waits for
the group to settle again at the end. A ``stall`` stops the member's poll loop (its heartbeat thread
goes on, so a stall past ``session_timeout`` ticks is past ``max.poll.interval.ms`` and the client
leaves the group itself, as a stuck application's would).

Consumption is read off the reports: a member consumes a partition from the ``onPartitionsAssigned``
that gave it until the ``onPartitionsRevoked``/``onPartitionsLost`` that took it, its process ending,
or a stall starting; after a stall, from the ``resumed`` report (written after the first poll that
follows the stall, so a loss that poll found comes first). Events the live run cannot apply yet
(``upgrade``, ``rolling-restart``, ``failover``, ``listener-error``, a stall ``at_join_prepare``)
are refused naming the event. A migration history (``live.migration``; ``LiveSettings.migration``)
runs the consumer simulator's events: a ``join`` or ``restart`` naming a ``group_protocol`` starts a
process speaking it, and the admin also reports the group's type as it describes it (``live.described``).
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InvalidOption, InvalidScenario
from ..group.events import Event, Schedule
from ..model import Scenario, TopicPartition
from . import processes
from .broker import Broker, peak_rss_bytes
from .described import described
from .java_member import JavaMember, MemberFailed, Report, member_program
from .members import library_program
from .reports import (ENDS, LIVE_MONITORS, LiveEntry, LiveResult, consumption_intervals, monitor_verdicts, render_live,
                      report_partitions, timeline_entry)
from .settled import SettledGrade, grade_settle_points
from .epochs import member_states_seen
from .targets import WATCH_MS, grade_targets, join_epochs_seen, member_ids_seen, topic_ids_seen

__all__ = ["JAVA_ASSIGNORS", "CLIENTS", "CLIENT_ASSIGNORS", "LIVE_MONITORS", "member_clients", "LiveEntry", "LiveResult", "LiveSettings", "run_live", "check_live",
           "consumption_intervals", "render_live"]

JAVA_ASSIGNORS = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}
"""The classic assignor names a live Java member accepts, as ``partition.assignment.strategy`` classes."""

CLIENTS = ("java", "librdkafka", "kafka-python", "franz-go")
"""The member libraries a live run drives: Kafka's Java consumer, confluent-kafka (librdkafka), kafka-python, franz-go."""

CLIENT_ASSIGNORS = {
    "java": tuple(JAVA_ASSIGNORS),
    "librdkafka": ("range", "roundrobin", "cooperative-sticky"),
    "kafka-python": ("range", "roundrobin", "sticky", "cooperative-sticky"),
    "franz-go": ("range", "roundrobin", "sticky", "cooperative-sticky"),
}
"""The classic assignors each library has, by the protocol name the group matches across libraries
(a Java ``RangeAssignor`` and librdkafka's ``range`` both join as ``range``): librdkafka has no eager
``sticky``."""

CONSUMER_CLIENTS = ("java", "librdkafka")
"""The libraries whose members speak ``group.protocol=consumer`` (KIP-848); kafka-python does not."""

CONSUMER_ASSIGNORS = ("uniform", "range")
"""``group.remote.assignor`` values of a ``group.protocol=consumer`` member (the broker's assignors)."""

_UNSUPPORTED = {"upgrade", "rolling-restart", "failover", "listener-error"}
_LIVE_KINDS = {"join", "leave", "crash", "stall", "subscribe", "restart", "add-partitions", "delete-topic"}


def _protocol_of(e: Any, settings: LiveSettings) -> str:
    """The ``group.protocol`` a join or restart event's process speaks: the one it names (a migration
    history's ``group_protocol``), else the run's."""
    return getattr(e, "group_protocol", None) or settings.group_protocol


@dataclass(frozen=True)
class LiveSettings:
    """``group_protocol``: what every member speaks, or, in a ``migration`` run (a history whose joins
    and restarts name a ``group_protocol``: ``live.migration``), what the scenario's members start
    with; there ``assignor`` sets the classic members' assignors and ``remote_assignor`` the broker's
    assignor the consumer-protocol members name. ``migration_policy``: the started broker's
    ``group.consumer.migration.policy`` (None: Kafka's default)."""

    tick_ms: int = 500
    group_protocol: str = "classic"
    assignor: str | None = None
    settle_seconds: float = 90.0
    clients: tuple[str, ...] = ("java",)
    grade: bool = True
    migration: bool = False
    remote_assignor: str | None = None
    migration_policy: str | None = None


# ------------------------------------------------------------------------------------------
# Checking a history before anything starts


def member_clients(scenario: Scenario, schedule: Schedule, clients: Sequence[str]) -> dict[str, str]:
    """Each member's library: round-robin over ``clients`` in the order members first appear (the
    scenario's members, then the history's joins and restarts); a restart keeps its member's library."""
    out: dict[str, str] = {}
    names = [m.id for m in scenario.members] + [e.member for e in schedule.events if e.event in ("join", "restart") and e.member]
    for n in names:
        if n not in out:
            out[n] = clients[len(out) % len(clients)]
    return out


def _assignor_names(names: Sequence[str], where: str, settings: LiveSettings, client: str = "java") -> list[str]:
    """The member's assignors by protocol name, each one its library has (``CLIENT_ASSIGNORS``)."""
    if settings.assignor is not None:
        names, where = (settings.assignor,), "--assignor"
    has = CLIENT_ASSIGNORS[client]
    for name in names:
        if name not in has:
            hint = "; --assignor NAME sets every member's" if where != "--assignor" else ""
            raise InvalidScenario(where, f"{name!r} is not an assignor a live {client} member runs (live {client}: "
                                  f"{', '.join(has)}; a release such as sticky@2.2 is the simulator's{hint})")
    return list(names)


def check_live(scenario: Scenario, schedule: Schedule, settings: LiveSettings) -> None:
    """Refuse, before a broker starts, what a live run cannot do: ``InvalidScenario`` naming the field."""
    if not settings.clients:
        raise InvalidOption("--clients", "name at least one client library")
    for c in settings.clients:
        if c not in CLIENTS:
            raise InvalidOption("--clients", f"{c!r} has no live member (live members: {', '.join(CLIENTS)})")
    if settings.group_protocol not in ("classic", "consumer"):
        raise InvalidOption("--group-protocol", f"must be classic or consumer, got {settings.group_protocol!r}")
    if settings.tick_ms < 100:
        raise InvalidOption("--tick-ms", f"must be at least 100 (a heartbeat interval), got {settings.tick_ms}")
    clients = member_clients(scenario, schedule, settings.clients)
    if settings.group_protocol == "consumer" or settings.migration:
        for c in settings.clients:
            if c not in CONSUMER_CLIENTS:
                raise InvalidOption("--clients", f"a {c} member speaks only group.protocol=classic "
                                    f"(consumer: {', '.join(CONSUMER_CLIENTS)})")
        remote = settings.remote_assignor if settings.migration else settings.assignor
        if remote is not None and remote not in CONSUMER_ASSIGNORS:
            raise InvalidOption("assignor" if settings.migration else "--assignor", f"a group.protocol=consumer member names a broker assignor ({', '.join(CONSUMER_ASSIGNORS)}), "
                                f"got {remote!r}")
    if settings.group_protocol == "classic":
        for i, m in enumerate(scenario.members):
            _assignor_names(m.assignors or ("range",), f"members[{i}].assignors", settings, clients[m.id])
    for e in schedule.events:
        where = e.path or "events"
        if e.event in _UNSUPPORTED:
            raise InvalidScenario(f"{where}.event", f"{e.event!r} is not applied to live members yet (docs/live.md)")
        if e.event not in _LIVE_KINDS:
            raise InvalidScenario(f"{where}.event", f"{e.event!r} is not applied to live members (docs/live.md)")
        if e.event == "stall" and getattr(e, "at_join_prepare", False):
            raise InvalidScenario(f"{where}.at_join_prepare", "a stall inside onJoinPrepare is not applied to live members yet")
        if e.event in ("join", "restart") and _protocol_of(e, settings) == "classic" and e.assignors:
            _assignor_names(e.assignors, f"{where}.assignors", settings, clients.get(e.member or "", "java"))


# ------------------------------------------------------------------------------------------
# Running


@dataclass
class _Run:
    """The mutable state of one run (members by name, their retired processes, the admin)."""

    bootstrap: str
    group: str
    settings: LiveSettings
    scenario: Scenario
    programs: dict[str, list[str]]  # library -> the argv that starts one of its members
    client_of: dict[str, str]  # member -> its library
    directory: Path
    prefix: str
    session_ticks: int
    restart_ticks: int
    members: dict[str, JavaMember] = field(default_factory=dict)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    retired: list[JavaMember] = field(default_factory=list)
    stall_until: dict[str, float] = field(default_factory=dict)
    topics: dict[str, int] = field(default_factory=dict)
    admin: JavaMember | None = None
    spares: dict[str, list[JavaMember]] = field(default_factory=dict)  # library -> members started ahead of need
    settles: list[tuple[int, dict[str, tuple[str, ...]], dict[str, int]]] = field(default_factory=list)
    """(monotonic ns, each running member's topics, the topics' partition counts) at each point the group settled."""
    applied: list[tuple[int, Event]] = field(default_factory=list)  # (monotonic ns, event) as the run applied them
    disturbed: bool = False  # a crash, stall or leave since the last settle: wait out a session timeout
    cooperative: bool = True  # every member started so far ran only cooperative-sticky (classic)

    @property
    def tick(self) -> float:
        return self.settings.tick_ms / 1000.0

    def all_processes(self) -> list[JavaMember]:
        return [*self.retired, *self.members.values()]

    def spawn(self, client: str, name: str) -> JavaMember:
        return JavaMember.spawn(self.programs[client], name, stderr_dir=self.directory)

    def warm(self) -> None:
        """Keep one member of each library started ahead of need: a JVM start is seconds on two busy
        cores (a Python member's imports a second), and a join should happen when the history says,
        not a start later."""
        for client in self.settings.clients:
            spares = self.spares.setdefault(client, [])
            while len(spares) < 1:
                spares.append(self.spawn(client, f"spare-{client}-{len(self.retired) + len(self.members) + 1}"))

    def settled_here(self) -> None:
        self.settles.append((time.monotonic_ns(), {n: tuple(self.configs[n]["topics"]) for n in self.members},
                             dict(self.topics)))


def _start_member(run: _Run, name: str, config: Mapping[str, Any]) -> None:
    s = run.settings
    session_ms = run.session_ticks * s.tick_ms
    client = run.client_of[name]
    if run.spares.get(client):
        m = run.spares[client].pop(0)
        m.name = name
    else:
        m = run.spawn(client, name)
    command = {
        "op": "start", "name": name, "bootstrap": run.bootstrap, "group": run.group,
        "group_protocol": config.get("group_protocol") or s.group_protocol,
        "topics": [run.prefix + t for t in config["topics"]],
        "instance_id": config.get("instance_id"),
        "session_timeout_ms": session_ms, "max_poll_interval_ms": session_ms, "heartbeat_interval_ms": s.tick_ms,
        # the simulator's members see a partition change at once; a client's metadata refresh (5 min by
        # default) would leave added partitions unassigned for the whole run
        "metadata_max_age_ms": session_ms,
    }
    if command["group_protocol"] == "classic":
        # a client rebalances cooperatively only when every assignor it runs supports it (Java's
        # ConsumerCoordinator picks the highest protocol all of them share; the other libraries alike)
        run.cooperative = run.cooperative and bool(config["assignors"]) and set(config["assignors"]) == {"cooperative-sticky"}
        # the protocol names the group matches; the Java member takes its assignors' classes
        command["assignors"] = [JAVA_ASSIGNORS[n] for n in config["assignors"]] if client == "java" else config["assignors"]
    else:
        command["remote_assignor"] = s.remote_assignor if s.migration else s.assignor
    m.send(command)
    run.members[name] = m
    run.configs[name] = dict(config)
    run.warm()


def _default_assignors(run: _Run) -> list[str]:
    """A join naming no assignor runs what the simulator gives it: the assignors of the first running
    member by name, else of the scenario's first member naming any, else ``range``."""
    for name in sorted(run.members):
        if run.members[name].alive and run.configs[name].get("assignors"):  # a consumer-protocol member has none
            return list(run.configs[name]["assignors"])
    for i, m in enumerate(run.scenario.members):
        if m.assignors:
            return _assignor_names(m.assignors, f"members[{i}].assignors", run.settings, run.client_of[m.id])
    return _assignor_names(("range",), "assignors", run.settings)


def _admin(run: _Run, command: dict[str, Any], done: str) -> None:
    assert run.admin is not None
    run.admin.send(command)
    run.admin.wait_for(done, 60, op=command["op"])


def _quiet(run: _Run, ticks: float) -> bool:
    """Whether the group looks settled now: nobody stalled, every running member assigned, and no
    report for ``ticks`` ticks."""
    now = time.monotonic()
    return (bool(run.members) and not any(until > now for until in run.stall_until.values())
            and all(any(r.ev == "assigned" for r in m.reports()) for m in run.members.values())
            and (time.monotonic_ns() - _last_report_ns(run)) / 1e9 >= ticks * run.tick)


def _apply(run: _Run, e: Event) -> None:
    k = e.event
    if _quiet(run, 2) and (not run.settles or run.settles[-1][0] < _last_report_ns(run)):
        run.settled_here()  # the group came to rest since the last event: a settle point to grade
    run.applied.append((time.monotonic_ns(), e))  # CLOCK_MONOTONIC, as the members' System.nanoTime
    if k == "join":
        protocol = _protocol_of(e, run.settings)
        assignors = (_assignor_names(e.assignors, f"{e.path}.assignors", run.settings, run.client_of[e.member])
                     if e.assignors else _default_assignors(run)) \
            if protocol == "classic" else []
        if e.member in run.members and run.members[e.member].alive:
            raise InvalidScenario(f"{e.path}.member", f"{e.member} is already running")
        _start_member(run, e.member, {"topics": list(e.topics or ()), "assignors": assignors, "instance_id": e.instance_id,
                                      "group_protocol": protocol})
    elif k in ("leave", "crash", "stall", "subscribe", "restart"):
        m = run.members.get(e.member or "")
        if m is None or not m.alive:
            raise InvalidScenario(f"{e.path}.member", f"{e.member} is not running at tick {e.at}")
        run.disturbed = run.disturbed or k in ("leave", "crash", "stall", "restart")
        if k == "leave":
            m.leave()
            run.retired.append(run.members.pop(e.member))
        elif k == "crash":
            m.crash()
            run.retired.append(run.members.pop(e.member))
        elif k == "stall":
            m.send({"op": "stall", "ms": e.ticks * run.settings.tick_ms})
            run.stall_until[e.member] = time.monotonic() + e.ticks * run.tick
        elif k == "subscribe":
            run.configs[e.member]["topics"] = list(e.topics or ())
            m.send({"op": "subscribe", "topics": [run.prefix + t for t in e.topics or ()]})
        else:  # restart: close, then after the downtime a new process with the changed config
            m.leave()
            run.retired.append(run.members.pop(e.member))
            config = dict(run.configs[e.member])
            if "topics" in e.given:
                config["topics"] = list(e.topics or ())
            config["group_protocol"] = _protocol_of(e, run.settings) if "group_protocol" in e.given \
                else config.get("group_protocol") or run.settings.group_protocol
            if "assignors" in e.given and config["group_protocol"] == "classic":
                config["assignors"] = _assignor_names(e.assignors or ("range",), f"{e.path}.assignors", run.settings,
                                                      run.client_of[e.member])
            elif config["group_protocol"] == "classic" and not config.get("assignors"):
                # back to classic after starting as a consumer-protocol member: the group's assignors
                config["assignors"] = _default_assignors(run)
            if "instance_id" in e.given:
                config["instance_id"] = e.instance_id
            time.sleep(run.restart_ticks * run.tick)
            _start_member(run, e.member, config)
    elif k in ("add-partitions", "delete-topic"):
        # the members see it at their next metadata refresh (metadata.max.age.ms = a session timeout):
        # wait that out before calling the group settled
        run.disturbed = True
    if k == "add-partitions":
        if e.topic in run.topics:
            _admin(run, {"op": "add-partitions", "topic": run.prefix + e.topic, "count": e.count}, "partitions-added")
            run.topics[e.topic] += e.count
        else:
            _admin(run, {"op": "create-topics", "topics": {run.prefix + e.topic: e.count}}, "topics-created")
            run.topics[e.topic] = e.count
    elif k == "delete-topic":
        _admin(run, {"op": "delete-topic", "topic": run.prefix + e.topic}, "topic-deleted")
        run.topics.pop(e.topic, None)


def _classic_ran(run: _Run) -> bool:
    """Whether a classic member ran, so ``cooperative-convergence`` applies when all of them ran only
    cooperative-sticky (``run.cooperative``): every member of a classic run; in a migration run, when
    some member's last process spoke classic (the consumer-protocol phases form one group epoch per
    disturbance, within the same bound)."""
    if not run.settings.migration:
        return run.settings.group_protocol == "classic"
    return any((c.get("group_protocol") or run.settings.group_protocol) == "classic" for c in run.configs.values())


def _last_report_ns(run: _Run) -> int:
    return max((r.mono_ns for m in run.all_processes() for r in m.reports()), default=0)


def _fatal(r: Report) -> bool:
    """A static member refused its instance id (held by a crashed process's record, or taken): fatal
    to the Java consumer, which never joins again, so the group settles without it (the
    simulator stops such a process; seen comparing member epochs: ``history-0-6`` waited out its
    settle time for a restarted static member)."""
    return r.ev == "error" and str(r.get("message") or "").startswith(("UnreleasedInstanceIdException",
                                                                       "FencedInstanceIdException"))


def _wait_settled(run: _Run) -> bool:
    """Until no member is stalled, every running member has had an assignment, and no member reported
    anything, and no stall ended, for a quiet spell: three ticks, or, after a crash, stall or leave, a
    session timeout and two ticks (the coordinator acts on those only when a timeout fires)."""
    session = run.session_ticks * run.tick
    if run.settings.group_protocol == "consumer" or run.settings.migration:  # the broker's KIP-848 session timeout
        from .broker import CONSUMER_SESSION_MS

        session = max(session, CONSUMER_SESSION_MS / 1000)
    quiet = (session + 2 * run.tick) if run.disturbed else 3 * run.tick
    run.disturbed = False
    deadline = time.monotonic() + run.settings.settle_seconds
    while time.monotonic() < deadline:
        now = time.monotonic()
        stalled = any(until > now for until in run.stall_until.values())
        assigned = all(any(r.ev == "assigned" or _fatal(r) for r in m.reports()) for m in run.members.values())
        gone = [name for name, m in run.members.items() if not m.alive]
        if gone:
            raise MemberFailed(f"{gone[0]}: its process ended on its own")
        # counted from a stall's end too: a member that stalled past max.poll.interval.ms rejoins only
        # when it polls again, and the group is not settled before it did (seen comparing a stall of
        # 21 ticks with the simulator: the run ended with the member still holding its partitions)
        ended = max((until for until in run.stall_until.values() if until <= now), default=0.0)
        # and from the last event applied: an event no member reports at once (partitions added, a
        # crash) must not find the group "quiet" on the strength of the reports before it
        applied = max((at for at, _ in run.applied), default=0) / 1e9
        idle = min((time.monotonic_ns() - _last_report_ns(run)) / 1e9, now - ended, now - applied)
        if not stalled and assigned and idle >= quiet:
            return True
        time.sleep(0.1)
    return False


def run_live(scenario: Scenario, schedule: Schedule, *, broker: Broker, name: str = "",
             settings: LiveSettings = LiveSettings()) -> LiveResult:
    """Run the history on ``broker`` with members of ``settings.clients`` (``member_clients``); every
    process started here is stopped before this returns. On a broker the user named (not started here) the topics get a run prefix."""
    check_live(scenario, schedule, settings)
    bootstrap, attached = broker.bootstrap, not broker.started_here
    measured: dict[str, float] = {}
    if broker.start_seconds is not None:
        measured["broker_start_seconds"] = broker.start_seconds
    started = time.monotonic()
    run_id = os.urandom(4).hex()
    directory = processes.owned_tempdir("stickyproof-live-")
    config = schedule.config
    programs = {"java": member_program()}
    for client in settings.clients:
        if client != "java":
            programs[client] = library_program(client)
    run = _Run(bootstrap, f"stickyproof-{name or 'live'}-{run_id}", settings, scenario, programs,
               member_clients(scenario, schedule, settings.clients), directory,
               f"stickyproof-{run_id}-" if attached else "", config.session_timeout, config.restart_downtime)
    notes = []
    if settings.migration:
        notes.append(f"a migration history: members switch group.protocol; the consumer-protocol members name the broker's "
                     f"{settings.remote_assignor or 'default (uniform)'} assignor; group.consumer.migration.policy="
                     f"{settings.migration_policy or 'the broker default'}")
    elif settings.group_protocol == "consumer":
        notes.append(f"group.protocol=consumer: the broker's {settings.assignor or 'default (uniform)'} assignor assigns; "
                     "the scenario's client assignors are not used")
    if any(m.owned for m in scenario.members):
        notes.append("the scenario's owned partitions and generations are its simulated past: live members start fresh")
    t0 = time.monotonic_ns()
    did_settle = False
    try:
        run.admin = run.spawn("java", "admin")
        # the initial members' processes start while the admin creates the topics
        for i, m in enumerate(scenario.members):
            run.spares.setdefault(run.client_of[m.id], []).append(run.spawn(run.client_of[m.id], f"spare-{i}"))
        run.warm()
        _admin(run, {"op": "admin", "bootstrap": bootstrap}, "admin-ready")
        run.topics = dict(scenario.partition_counts)
        if run.topics:
            _admin(run, {"op": "create-topics", "topics": {run.prefix + t: n for t, n in run.topics.items()}}, "topics-created")
        if settings.group_protocol == "consumer" or settings.migration:  # the admin reports every target computed
            _admin(run, {"op": "watch-group", "group": run.group, "watch_ms": WATCH_MS}, "watching")
        if settings.migration:  # and the group's type, state and epochs as describe shows them
            _admin(run, {"op": "watch-type", "group": run.group, "watch_ms": WATCH_MS}, "watching-type")
        for m in scenario.members:
            assignors = _assignor_names(m.assignors or ("range",), f"members.{m.id}.assignors", settings, run.client_of[m.id]) \
                if settings.group_protocol == "classic" else []
            _start_member(run, m.id, {"topics": list(m.topics), "assignors": assignors, "instance_id": m.instance_id,
                                      "group_protocol": settings.group_protocol})
        if scenario.members and _wait_settled(run):
            run.settled_here()
        # each event at its tick's distance from the first, on the wall clock; one whose time passed
        # while an earlier event was applied (a close waits for its callbacks) runs at once
        first_at, base = (schedule.events[0].at if schedule.events else 0), time.monotonic()
        for e in schedule.events:
            due = base + (e.at - first_at) * run.tick
            if due > time.monotonic():
                time.sleep(due - time.monotonic())
            _apply(run, e)
        did_settle = _wait_settled(run)
        if did_settle:
            run.settled_here()
    finally:
        peaks = [peak_rss_bytes(m.proc.pid) or 0 for m in run.members.values() if m.alive]
        if peaks:
            measured["member_peak_rss_mb"] = round(max(peaks) / 2**20, 1)
        if broker.pid is not None and (peak := peak_rss_bytes(broker.pid)):
            measured["broker_peak_rss_mb"] = round(peak / 2**20, 1)
        for m in [*run.all_processes(), *(s for spares in run.spares.values() for s in spares)]:
            m.stop(grace=0.0)
        if run.admin is not None:
            run.admin.stop(grace=0.0)
        shutil.rmtree(directory, ignore_errors=True)
    reports = sorted((r for m in run.all_processes() for r in m.reports()), key=lambda r: r.mono_ns)
    admin_reports = run.admin.reports() if run.admin is not None else []
    history = [(at, LiveEntry((at - t0) // 1_000_000, "history", e.event, (), None, f"tick {e.at}: {e.describe()}"))
               for at, e in run.applied]
    reported = [(r.mono_ns, timeline_entry(r, t0, run.prefix)) for r in reports if r.ev != "garbage"]
    seen = described(admin_reports, t0, run.prefix)
    timeline = tuple(entry for _, entry in sorted(history + reported + [(d.mono_ns, d.entry()) for d in seen],
                                                  key=lambda pair: pair[0]))
    owned = _owned_at_end(run, reports)
    subscribed = {TopicPartition(t, p) for name_, cfg in run.configs.items() if name_ in run.members
                  for t in cfg["topics"] if t in run.topics for p in range(run.topics[t])}
    verdicts = monitor_verdicts(reports, t0, run.prefix, owned, subscribed, did_settle, applied=[at for at, _ in run.applied],
                                cooperative=run.cooperative and _classic_ran(run),
                                loop_bound=config.loop_bound, cooperative_bound=config.cooperative_bound)
    grades: tuple[SettledGrade, ...] = ()
    if settings.grade and settings.group_protocol == "classic" and not settings.migration:
        grades = grade_settle_points(run.settles, reports, lambda r: report_partitions(r, run.prefix), t0,
                                     {n: tuple(c["assignors"]) for n, c in run.configs.items()}, name)
    elif settings.grade:  # every target the coordinator computed, with its input (live.targets)
        grades = grade_targets(reports, admin_reports, lambda t: t[len(run.prefix):] if t.startswith(run.prefix) else t, t0,
                               (settings.remote_assignor if settings.migration else settings.assignor) or "uniform", name)
        if not grades:
            notes.append("the group's description showed no target assignment epoch: no target graded")
    return LiveResult(name, bootstrap, settings.clients, settings.group_protocol, settings.tick_ms, timeline,
                      tuple(sorted((m, tuple(sorted(tps))) for m, tps in owned.items())), did_settle, verdicts, tuple(notes),
                      round(time.monotonic() - started, 2), tuple(sorted(measured.items())),
                      tuple(sorted((m, c) for m, c in run.client_of.items() if m in run.configs)), grades,
                      member_ids_seen(admin_reports),
                      topic_ids_seen(admin_reports, lambda t: t[len(run.prefix):] if t.startswith(run.prefix) else t),
                      join_epochs_seen(admin_reports), seen,
                      settings.migration_policy if settings.migration else None,
                      member_states_seen(admin_reports, lambda t: t[len(run.prefix):] if t.startswith(run.prefix) else t, t0))


def _owned_at_end(run: _Run, reports: Sequence[Report]) -> dict[str, frozenset[TopicPartition]]:
    owned: dict[str, set[TopicPartition]] = {}
    for r in reports:
        if r.ev == "started":
            owned[r.name] = set()
        elif r.ev == "assigned":
            owned.setdefault(r.name, set()).update(report_partitions(r, run.prefix))
        elif r.ev in ("revoked", "lost"):
            owned.get(r.name, set()).difference_update(report_partitions(r, run.prefix))
        elif r.ev in ENDS:
            owned[r.name] = set()
    return {name: frozenset(owned.get(name, ())) for name in sorted(run.members)}


