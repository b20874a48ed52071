"""The simulator checked against Kafka's real group coordinator (issue 24 item 4; docs/live.md).

    sim = simulate_as_live(scenario, schedule, settings)      the simulator, started as a live run starts
    live = run_live(scenario, schedule, broker=..., settings=settings)
    result = compare(sim, live_trace(live, schedule))
    render_compare(result)

A live run cannot be handed a group's past and does not know ticks, so the simulator is run the way
the live run runs the history: every scenario member starts fresh (no owned partitions, no
generation) and joins at tick 0, the group settles, and the history's events follow at once, each at
its distance in ticks from the first. Both runs are then cut into the same steps: the group forming
(until the first event), then one step per tick that has events (until the next such tick). Per step
the two sides must reach the same rebalances: the same sequence of generations, each the assignment
every member got in it (members by their scenario name: a real member id is random), and the same
assignment when the step ends. The final settled assignment must be the same.

A step is timing-dependent, and its rebalance sequence excluded with the reason printed, when the
simulator itself had not settled when the next event came (the rebalances of two events overlap, and
how a real coordinator groups them into generations depends on when each request lands in its join
window), or when the real members that joined in it were first assigned in several generations (each
real join is a JVM starting; the simulator's join at one tick). A forming step of that kind is
compared again with the simulator given the same join windows (``replay_forming``). After a
timing-dependent step, once both groups are settled, the simulator resumes from the group the real
members had (``simulate_as_live(..., resumes=...)``, the simulator's stable start), so that one timing
effect does not hide every step after it; a step that follows one where that was not possible is
marked as following a timing-dependent step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from ..errors import InvalidOption, InvalidScenario
from ..group.events import Event, Schedule
from ..group.simulator import Simulation
from ..group.trace import format_partitions
from ..model import DEFAULT_GENERATION, MAX_VERSION, Member, Scenario, TopicPartition

__all__ = ["Generation", "SideTrace", "StepComparison", "CompareResult", "simulate_as_live", "live_trace", "compare",
           "render_compare"]

Assignment = tuple[tuple[str, tuple[TopicPartition, ...]], ...]
"""Member name to partitions, sorted: one generation's assignment, or who owns what at an instant."""


@dataclass(frozen=True)
class Generation:
    """One generation as the members saw it: its number, and what each member that got an assignment in
    it was assigned (the whole assignment: a cooperative member's callback names only what it adds)."""

    number: int
    assignment: Assignment


@dataclass(frozen=True)
class SideTrace:
    """One run cut into steps: per step, its generations in order and who owned what when it ended."""

    steps: tuple[tuple[Generation, ...], ...]
    ends: tuple[Assignment, ...]
    settled_at_end: tuple[bool, ...] = ()  # simulator only: settled when the step ended
    resumable: tuple[bool, ...] = ()  # simulator only: a stable start can hold its group when the step ended
    generation_at_end: tuple[int | None, ...] = ()  # live only: the generation every running member was last assigned in


@dataclass(frozen=True)
class StepComparison:
    index: int
    label: str
    verdict: str  # agree, disagree, timing
    reason: str
    sim: tuple[Generation, ...]
    live: tuple[Generation, ...]
    sim_end: Assignment
    live_end: Assignment


@dataclass(frozen=True)
class CompareResult:
    name: str
    steps: tuple[StepComparison, ...]
    final: str  # agree, timing (a timing-dependent step chose the state it settled from), disagree
    sim_final: Assignment
    live_final: Assignment
    notes: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        return self.final != "disagree" and all(s.verdict != "disagree" for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        def gens(gs: Sequence[Generation]) -> list[dict[str, Any]]:
            return [{"generation": g.number, "assignment": _doc(g.assignment)} for g in gs]

        return {
            "format": "stickyproof.live-compare/1",
            "name": self.name,
            "agrees": self.agrees,
            "notes": list(self.notes),
            "final": {"verdict": self.final, "simulator": _doc(self.sim_final), "live": _doc(self.live_final)},
            "steps": [{"step": s.index, "label": s.label, "verdict": s.verdict, "reason": s.reason,
                       "simulator": gens(s.sim), "live": gens(s.live),
                       "end": {"simulator": _doc(s.sim_end), "live": _doc(s.live_end)}} for s in self.steps],
        }


def _doc(a: Assignment) -> dict[str, list[list[Any]]]:
    return {m: [[t, p] for t, p in tps] for m, tps in a}


def _freeze(owned: Mapping[str, Any]) -> Assignment:
    return tuple(sorted((m, tuple(sorted(tps))) for m, tps in owned.items()))


def _step_ticks(schedule: Schedule) -> list[int]:
    return sorted({e.at for e in schedule.events})


# ------------------------------------------------------------------------------------------
# The simulator, run as a live run runs


def check_comparable(scenario: Scenario, schedule: Schedule, settings) -> None:
    """Refuse, before a broker starts, what the comparison cannot hold side by side."""
    if settings.group_protocol == "consumer" and any(c != "java" for c in settings.clients):
        raise InvalidOption("--compare", "compares a group.protocol=consumer group of Java members only (--clients java)")
    for i, m in enumerate(scenario.members):
        if not m.topics:
            raise InvalidScenario(f"members[{i}].topics", f"{m.id} subscribes to nothing: a live Java member's empty "
                                  "subscription is unsubscribe (it never joins), the simulator's joins with none; not comparable")
    for e in schedule.events:
        if settings.group_protocol == "consumer" and e.event == "stall":
            raise InvalidScenario(f"{e.path or 'events'}.event", "a live stall stops polling (the Java client's heartbeat "
                                  "thread goes on and leaves the group after max.poll.interval.ms), the KIP-848 "
                                  "simulator's freezes the process: not comparable")
        if e.event in ("join", "subscribe", "restart") and "topics" in e.given and not e.topics:
            raise InvalidScenario(f"{e.path or 'events'}.topics", "an empty subscription is not comparable (a live Java "
                                  "member's is unsubscribe)")


def joins_as_members(scenario: Scenario, schedule: Schedule) -> tuple[Scenario, Schedule]:
    """A history whose group is empty and whose first tick is only joins (the main job's histories
    begin so) as the same history with those members in the scenario: a live run starts a scenario's
    members together and lets them form the group before the first event, so the forming is one step
    both sides compare, and the simulator can resume from what the real members formed."""
    if scenario.members or not schedule.events:
        return scenario, schedule
    first = schedule.events[0].at
    head = [e for e in schedule.events if e.at == first]
    if any(e.event != "join" for e in head):
        return scenario, schedule
    members = tuple(Member(e.member, tuple(e.topics or ()), version=MAX_VERSION, instance_id=e.instance_id,
                           assignors=tuple(e.assignors or ())) for e in head)
    return replace(scenario, members=members), replace(schedule, events=tuple(e for e in schedule.events if e.at != first))


def compare_run(scenario: Scenario, schedule: Schedule, live, settings) -> CompareResult:
    """The simulator run as ``live`` was, and the two compared step by step. After a timing-dependent
    step, once the real group is settled (every running member last assigned in one generation) and
    the simulated one can be resumed, the simulator goes on from the group the real members had, so
    that one timing effect does not hide every step after it (each resumption is a note)."""
    real = live_trace(live, schedule)
    resumes: dict[int, tuple[Assignment, int]] = {}
    base_notes = list(live_differences(scenario, schedule))
    while True:
        sim, _ = simulate_as_live(scenario, schedule, settings.assignor, resumes)
        notes = base_notes + [f"after step {k}, the simulator resumed from the group the real members had (generation {g})"
                              for k, (_, g) in sorted(resumes.items())]
        result = compare(live.name, sim, real, schedule, notes, resumed=frozenset(resumes))
        k = next((s.index for s in result.steps if s.verdict == "timing" and s.index not in resumes
                  and s.index < len(result.steps) - 1 and sim.resumable[s.index] and real.generation_at_end[s.index] is not None
                  and (s.sim_end != s.live_end or not _same(s.sim, s.live))), None)
        if k is None:
            return _forming_replayed(result, scenario, schedule, settings.assignor, real)
        resumes[k] = (real.ends[k], real.generation_at_end[k])


def _forming_replayed(result: CompareResult, scenario: Scenario, schedule: Schedule, assignor: str | None,
                      real: SideTrace) -> CompareResult:
    """A forming step the real members' JVM starts spread over several join windows, compared again
    with the simulator given those windows (``replay_forming``): that it then reaches the same
    generations is a check, not an exclusion."""
    step = result.steps[0] if result.steps else None
    if step is None or step.verdict != "timing" or "join windows" not in step.reason or not real.steps[0]:
        return result
    windows = join_windows(real.steps[0])
    if set(m for _, w in windows for m in w) != {m.id for m in scenario.members}:
        return result
    gens, end = replay_forming(scenario, schedule, assignor, windows)
    said = " then ".join("{" + ", ".join(w) + "}" for _, w in windows)
    if _same(gens, step.live) and end == step.live_end:
        judged = replace(step, verdict="agree", sim=gens, sim_end=end,
                         reason=f"the real members joined in {len(windows)} windows ({said}); the simulator given the same "
                                "windows reaches the same generations")
    elif _same_shape(gens, step.live, ()):
        judged = replace(step, verdict="timing", sim=gens, sim_end=end,
                         reason=f"the real members joined in {len(windows)} windows ({said}); the simulator given the same "
                                "windows makes the same generations with the same members and sizes but other partitions: "
                                "a tie-break in the order of the member ids, which a real coordinator draws at random")
    elif (missing := _missed(gens, step.live)) is not None:
        judged = replace(step, verdict="timing", sim=gens, sim_end=end,
                         reason=f"the real members joined in {len(windows)} windows ({said}); " + _MISSED.format(member=missing))
    elif end == step.live_end:
        judged = replace(step, verdict="timing", sim=gens, sim_end=end,
                         reason=f"the real members joined in {len(windows)} windows ({said}), read off their callbacks; the "
                                "simulator given them forms the same group by other generations: a member whose SyncGroup "
                                "met the next rebalance reports nothing of the generation it joined, so the windows are "
                                "known only in part")
    else:
        judged = replace(step, verdict="disagree", sim=gens, sim_end=end,
                         reason=f"the real members joined in {len(windows)} windows ({said}); the simulator given the same "
                                "windows forms another group")
    steps = (judged,) + result.steps[1:]
    final = result.final
    if len(steps) == 1:  # the forming step is the whole run: its end is the settled assignment
        final = "agree" if _owning(end) == _owning(result.live_final) else "disagree"

        return replace(result, steps=steps, final=final, sim_final=end)
    return replace(result, steps=steps)


def fresh_scenario(scenario: Scenario) -> Scenario:
    """The scenario as a live run starts it: no member owns anything or has a generation; a member
    naming no assignor runs ``range`` (the Java client's default, and the live member's); every member
    is the live client, which speaks subscription version 3, names no rack and pins no protocol."""
    return replace(scenario, members=tuple(replace(m, owned=(), generation=DEFAULT_GENERATION, assignors=m.assignors or ("range",),
                                                   version=MAX_VERSION, rack=None)
                                           for m in scenario.members))


_CLIENT_FIELDS = frozenset({"version", "protocol", "rack"})


def as_live_event(e: Event) -> Event:
    """An event as the live run applies it: a joining or restarting member is the live Java client of
    today (subscription version 3, no rack, the rebalance protocol its assignors give), whatever older
    client the history names; the live run applies the event the same way (docs/live.md)."""
    if e.event not in ("join", "restart"):
        return e
    return replace(e, version=None, protocol=None, rack=None, given=e.given - _CLIENT_FIELDS)


def live_differences(scenario: Scenario, schedule: Schedule) -> tuple[str, ...]:
    """What of the history the live run cannot reproduce and the comparison therefore drops, said once each."""
    out = []
    if any(m.owned or m.generation != DEFAULT_GENERATION for m in scenario.members):
        out.append("the scenario's owned partitions and generations (its simulated past): both sides start fresh")
    if any(m.version != MAX_VERSION or m.rack for m in scenario.members) or any(
            e.event in ("join", "restart") and e.given & _CLIENT_FIELDS for e in schedule.events):
        out.append("older client versions, racks and protocol pins the history names: both sides run today's Java client")
    return tuple(out)


def simulate_as_live(scenario: Scenario, schedule: Schedule, assignor: str | None = None,
                     resumes: Mapping[int, tuple[Assignment, int]] | None = None) -> tuple[SideTrace, int]:
    """The simulator's side and the tick the history's first event was placed at (the module docstring).

    ``resumes``: at the end of step ``k``, drop the simulated group and go on from the group the real
    members had then (who owned what, in which generation) as the simulator's stable start
    (models/protocol.md §6): each running member with the configuration the simulator gave it by then,
    the cluster as it was, the remaining events at their ticks. ``resumable`` tells where that is possible."""
    resumes = resumes or {}
    sim = Simulation(fresh_scenario(scenario), (), config=schedule.config, assignor=assignor, name=scenario.name)
    seen: dict[str, tuple[int, int]] = {}
    steps: list[list[Generation]] = [[]]
    ends: list[Assignment] = []
    settled: list[bool] = []
    resumable: list[bool] = []
    pending: dict[int, dict[str, tuple[TopicPartition, ...]]] = {}
    offset = 0  # a tick of the history is sim.now + offset (a resumed simulation counts from 0 again)

    def tick() -> None:
        sim.step()
        for name, p in sorted(sim.processes.items()):
            key = (p.incarnation, p.memory_generation)
            if p.running and p.memory_generation >= 0 and seen.get(name) != key:
                seen[name] = key
                pending.setdefault(p.memory_generation, {})[name] = tuple(sorted(p.memory))

    def flush(into: list[Generation]) -> None:
        for g in sorted(pending):
            into.append(Generation(g, _freeze(pending[g])))
        pending.clear()

    def owned() -> Assignment:
        return _freeze({n: p.owned for n, p in sim.processes.items() if p.running})

    while sim.end_reason() is None:
        tick()
    base = sim.now
    ticks = _step_ticks(schedule)
    first = ticks[0] if ticks else 0
    shifted = [replace(as_live_event(e), at=base + e.at - first) for e in schedule.events]
    for e in shifted:
        sim.schedule(e)
    for start in [base + t - first for t in ticks]:
        while sim.now + offset < start:
            tick()
        flush(steps[-1])
        ends.append(owned())
        settled.append(sim.settled())
        resumable.append(settled[-1] and _only_events_queued(sim))
        k = len(ends) - 1
        if k in resumes and resumable[-1]:
            sim, local = _resumed(sim, scenario, schedule, assignor, *resumes[k])
            seen = {n: (p.incarnation, p.memory_generation) for n, p in sim.processes.items()}
            offset = start - local
            for e in shifted:
                if e.at >= start:
                    sim.schedule(replace(e, at=e.at - offset))
        steps.append([])
    while sim.end_reason() is None:
        tick()
    flush(steps[-1])
    ends.append(owned())
    settled.append(sim.settled())
    resumable.append(False)
    return SideTrace(tuple(map(tuple, steps)), tuple(ends), tuple(settled), tuple(resumable)), base


def replay_forming(scenario: Scenario, schedule: Schedule, assignor: str | None,
                   windows: Sequence[tuple[int, Sequence[str]]]) -> tuple[tuple[Generation, ...], Assignment]:
    """The forming step as the real coordinator saw it: ``windows`` is, per join window, the index of
    the real generation its members were first assigned in and their names (``join_windows``). The
    first window's members start together; each later window joins as soon as the simulated group has
    made as many generations as the real one had before it, so that it lands in the same rebalance.
    Its generations and its end."""
    fresh = fresh_scenario(scenario)
    by_id = {m.id: m for m in fresh.members}
    first = set(windows[0][1]) if windows else set()
    sim = Simulation(replace(fresh, members=tuple(m for m in fresh.members if m.id in first)), (), config=schedule.config,
                     assignor=assignor, name=scenario.name)
    gens: dict[int, dict[str, tuple[TopicPartition, ...]]] = {}
    seen: dict[str, tuple[int, int]] = {}

    def step() -> None:
        sim.step()
        for name, p in sorted(sim.processes.items()):
            key = (p.incarnation, p.memory_generation)
            if p.running and p.memory_generation >= 0 and seen.get(name) != key:
                seen[name] = key
                gens.setdefault(p.memory_generation, {})[name] = tuple(sorted(p.memory))

    for index, names in windows[1:]:
        while len(gens) < index and sim.end_reason() is None:
            step()
        for name in names:
            m = by_id[name]
            sim.schedule(Event(sim.now, "join", m.id, m.topics, m.assignors, instance_id=m.instance_id,
                               given=frozenset({"topics", "assignors", "instance_id"})))
    while sim.end_reason() is None:
        step()
    owned = _freeze({n: p.owned for n, p in sim.processes.items() if p.running})
    return tuple(Generation(g, _freeze(gens[g])) for g in sorted(gens)), owned


def join_windows(generations: Sequence[Generation]) -> list[tuple[int, list[str]]]:
    """The members by the real generation they were first assigned in: (its index, their names)."""
    out: list[tuple[int, list[str]]] = []
    placed: set[str] = set()
    for i, g in enumerate(generations):
        new = [m for m, _ in g.assignment if m not in placed]
        if new:
            out.append((i, new))
            placed.update(new)
    return out


def _only_events_queued(sim: Simulation) -> bool:
    """No member stalled, none between a restart's close and its new process: a group a stable start can hold."""
    t = sim.now - 1
    return all(kind == "event" for _, _, kind, _ in sim._queue) and not any(
        p.running and p.stalled(t) for p in sim.processes.values())


def _resumed(sim: Simulation, scenario: Scenario, schedule: Schedule, assignor: str | None, owned: Assignment,
             generation: int) -> tuple[Simulation, int]:
    """A new simulation whose group is ``owned`` in ``generation``, its members configured as ``sim``'s
    running ones; returns it settled, and its tick."""
    held = dict(owned)
    members = tuple(Member(n, p.config.topics, tuple(held.get(n, ())), generation, p.config.version, p.config.rack,
                           p.config.instance_id, p.config.assignors)
                    for n, p in sorted(sim.processes.items()) if p.running)
    start = replace(scenario, topics=tuple(sim.cluster.values()), members=members)
    resumed = Simulation(start, (), config=schedule.config, assignor=assignor, name=scenario.name)
    while resumed.end_reason() is None:
        resumed.step()
    return resumed, resumed.now


# ------------------------------------------------------------------------------------------
# The live run, cut into the same steps


def live_trace(result, schedule: Schedule) -> SideTrace:
    """The live run's side, read off its timeline (``LiveResult``): its history entries are the
    schedule's events in order, so each step starts at the first entry of its tick."""
    events = iter(schedule.events)
    previous_tick: int | None = None
    owned: dict[str, set[TopicPartition]] = {}
    steps: list[list[Generation]] = [[]]
    ends: list[Assignment] = []
    current: dict[int, dict[str, tuple[TopicPartition, ...]]] = {}
    last_generation: dict[str, int] = {}
    generations: list[int | None] = []

    def flush() -> None:
        for g in sorted(current):
            steps[-1].append(Generation(g, _freeze(current[g])))
        current.clear()

    def one_generation() -> int | None:
        seen = {last_generation.get(n) for n in owned}
        return seen.pop() if len(seen) == 1 and None not in seen else None

    for entry in result.timeline:
        n, what = entry.member, entry.what
        if n == "history":
            event = next(events, None)
            if event is not None and event.at != previous_tick:
                previous_tick = event.at
                flush()
                ends.append(_freeze(owned))
                generations.append(one_generation())
                steps.append([])
        elif what == "started":
            owned[n] = set()
            last_generation.pop(n, None)
        elif what == "assigned":
            owned.setdefault(n, set()).update(entry.partitions)
            if entry.generation is not None and entry.generation >= 0:
                current.setdefault(entry.generation, {})[n] = tuple(sorted(owned[n]))
                last_generation[n] = entry.generation
        elif what in ("revoked", "lost"):
            owned.get(n, set()).difference_update(entry.partitions)
        elif what in ("closed", "crashing"):
            owned.pop(n, None)
            last_generation.pop(n, None)
    flush()
    ends.append(_freeze(dict(result.settled)))
    generations.append(one_generation())
    return SideTrace(tuple(map(tuple, steps)), tuple(ends), generation_at_end=tuple(generations))


# ------------------------------------------------------------------------------------------
# Comparing


def _held(g: Generation) -> Assignment:
    """A generation's assignment without the members given nothing in it: a real member reports a
    generation only from its callback, which a stalled member, or one whose SyncGroup met the next
    rebalance, never runs, and a member given nothing changes nothing."""
    return tuple((m, tps) for m, tps in g.assignment if tps)


def _owning(a: Assignment) -> Assignment:
    """Who owns what, members owning nothing left out: a member whose process has not joined yet (a
    JVM still starting) and one in the group with nothing are the same to the partitions."""
    return tuple((m, tps) for m, tps in a if tps)


def _same(a: Sequence[Generation], b: Sequence[Generation]) -> bool:
    """Generation numbers aside (the real group's may run ahead after a timing-dependent step), the same
    assignments in the same order."""
    return [_held(g) for g in a] == [_held(g) for g in b]


def _shape(g: Generation, before: Mapping[TopicPartition, str]) -> tuple:
    """What a tie-break leaves alone: who is in the generation, how many partitions each holds, sorted,
    and how many partitions changed owner since ``before``."""
    held = _held(g)
    moved = sum(1 for m, tps in held for tp in tps if before.get(tp) not in (None, m))
    return tuple(m for m, _ in held), tuple(sorted(len(tps) for _, tps in held)), moved


def _same_shape(a: Sequence[Generation], b: Sequence[Generation], before: Assignment) -> bool:
    """The same generations up to a tie-break between members: the same members, the same sizes, as many moves."""
    owners = {tp: m for m, tps in before for tp in tps}
    return len(a) == len(b) and all(_shape(x, owners) == _shape(y, owners) for x, y in zip(a, b))


def _missed(a: Sequence[Generation], b: Sequence[Generation]) -> str | None:
    """The first real member that got no assignment in a generation where the simulated one held
    partitions, as long as the two agreed up to there: its SyncGroup met the next rebalance (or it
    was not polling), so it joined the next generation owning what it owned before, and the
    assignor's input differs from then on."""
    for x, y in zip(a, b):
        sim_members, real_members = {m for m, _ in _held(x)}, {m for m, _ in _held(y)}
        if real_members < sim_members:
            return sorted(sim_members - real_members)[0]
        if _held(x) != _held(y):
            return None
    return None


_MISSED = ("{member} got no assignment in a real generation where the simulator's got one: its SyncGroup met the "
           "next rebalance (a join landing after the generation formed), so the next generation started from "
           "other claims; when a request lands is timing")


def compare(name: str, sim: SideTrace, live: SideTrace, schedule: Schedule, notes: Sequence[str] = (),
            resumed: frozenset[int] = frozenset()) -> CompareResult:
    ticks = _step_ticks(schedule)
    labels = ["forming: the scenario's members join"]
    joins = [True]
    for t in ticks:
        at = [e for e in schedule.events if e.at == t]
        labels.append(f"tick {t}: " + "; ".join(e.describe() for e in at))
        joins.append(any(e.event in ("join", "restart") for e in at))
    out: list[StepComparison] = []
    after_timing = False
    n = min(len(sim.steps), len(live.steps))
    for i in range(n):
        s, l = sim.steps[i], live.steps[i]
        s_end, l_end = sim.ends[i], live.ends[i]
        same_end = _owning(s_end) == _owning(l_end)
        unsettled = not sim.settled_at_end[i] and i < n - 1
        skew = joins[i] and bool(l) and bool(s) and (len(l) > len(s) or len(l[0].assignment) < len(s[0].assignment))
        if _same(s, l) and same_end:
            verdict, reason = "agree", ""
        elif unsettled:
            verdict = "timing"
            reason = (f"the simulator had not settled when the next event came ({labels[i + 1].split(':')[0]}): the rebalances "
                      "of both overlap, and how a real coordinator groups them into generations depends on when each "
                      "request lands in its join window")
        elif i > 0 and not sim.settled_at_end[i - 1] and i - 1 not in resumed:
            verdict = "timing"
            reason = ("the simulator had not settled when this step began: its rebalances overlap the previous step's "
                      "(a change of partitions is seen by a real leader at its next metadata refresh, a join when the "
                      "JVM is up), so how they fall into generations depends on timing")
        elif skew:
            verdict = "timing"
            reason = ("the real members' joins fell into different join windows (each is a JVM starting; the simulator's "
                      "join at one tick), so the real group formed in more generations" +
                      ("" if same_end else ", and the assignment it reached depends on them"))
        elif after_timing:
            verdict = "timing"
            reason = "follows a timing-dependent step: the group started it from a state timing chose"
        elif (missing := _missed(s, l)) is not None:
            verdict, reason = "timing", _MISSED.format(member=missing)
        elif _same_shape(s, l, live.ends[i - 1] if i - 1 in resumed else sim.ends[i - 1] if i else ()) and (
                i == 0 or _owning(sim.ends[i - 1]) == _owning(live.ends[i - 1]) or i - 1 in resumed):
            # (after a resume the simulator started this step from the real group's state, live.ends[i - 1])
            verdict = "timing"
            reason = ("tie-break: the same generations with the same members, sizes and number of moves, but other "
                      "partitions: Kafka's assignors break ties in the order of the member ids, which a real coordinator "
                      "draws at random (the simulator's are the member names)")
        else:
            verdict = "disagree"
            reason = "different generations" if not _same(s, l) else "same generations, different owners when the step ended"
        after_timing = (verdict == "timing" or after_timing) and not same_end and i not in resumed
        out.append(StepComparison(i, labels[i] if i < len(labels) else f"step {i}", verdict, reason, s, l, s_end, l_end))
    sim_final, live_final = sim.ends[-1], live.ends[-1]
    final = "agree" if _owning(sim_final) == _owning(live_final) else "timing" if after_timing else "disagree"
    return CompareResult(name, tuple(out), final, sim_final, live_final, tuple(notes))


def render_compare(result: CompareResult) -> str:
    lines = [f"simulator against the real coordinator: {result.name or '(unnamed)'}", ""]
    for s in result.steps:
        lines.append(f"step {s.index} [{s.verdict}] {s.label}")
        if s.reason:
            lines.append(f"    {s.reason}")
        width = max(len(s.sim), len(s.live))
        for k in range(width):
            sg = s.sim[k] if k < len(s.sim) else None
            lg = s.live[k] if k < len(s.live) else None
            lines.append(f"    simulator {_gen(sg)}")
            lines.append(f"    live      {_gen(lg)}")
        if s.sim_end != s.live_end:
            lines.append(f"    at its end: simulator {_assign(s.sim_end)}; live {_assign(s.live_end)}")
    lines.append("")
    final = {"agree": "agree", "timing": "timing-dependent (it settled from a state timing chose)", "disagree": "DISAGREE"}
    lines.append(f"settled assignment: {final[result.final]}")
    lines.append(f"    simulator {_assign(result.sim_final)}")
    if result.final != "agree":
        lines.append(f"    live      {_assign(result.live_final)}")
    for note in result.notes:
        lines.append(f"note: {note}" if note.startswith("after step") else f"note: compared without {note}")
    counts = {v: sum(1 for s in result.steps if s.verdict == v) for v in ("agree", "timing", "disagree")}
    lines.append(f"{'AGREE' if result.agrees else 'DISAGREE'}: {counts['agree']} steps agree, {counts['timing']} timing-dependent "
                 f"(excluded, reason given), {counts['disagree']} disagree")
    return "\n".join(lines) + "\n"


def _gen(g: Generation | None) -> str:
    if g is None:
        return "(no generation)"
    return f"gen {g.number:>2}: {_assign(g.assignment)}"


def _assign(a: Assignment) -> str:
    return "; ".join(f"{m} {format_partitions(tps)}" for m, tps in a) or "(nobody)"
