"""Histories run through the group protocol: the stepper, and the run the sweep builds rows from (models/protocol.md §9).

``run_history(history, assignor, engine="stepper")`` runs a drawn history (``scenarios.histories``)
with every member configured with ``assignor`` and returns a ``HistoryRun``: one ``RebalanceRecord``
per leader step (follow-ups included), the monitors' verdicts, and the history measures.

``Stepper`` is the tick simulator's machine (the same ``Coordinator`` and ``MemberProcess`` code, so
the same member and coordinator rules) run differently:

* a tick in which nothing can happen but heartbeats (every running member ``STABLE`` with nothing
  to deliver, send or notice, the coordinator ``Stable``, no timer due) is not run: time jumps to the
  next tick where something can (an event, a stalled member resuming, a session or sync deadline),
  and the skipped heartbeats are applied at once;
* the monitors see, on the ticks that do run, only what can fail them (partitions fetched by two
  members, partitions of a settled group nobody owns), computed with set operations and only when a
  member's fetching changed; on skipped ticks they are charged for the violations that persist;
* no trace is kept.

So the stepper visits the same states in the same order; ``tests/test_histories.py`` holds both
engines to the same rebalance records and verdicts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from itertools import chain
from operator import add, itemgetter
from typing import Any, Iterable, Mapping

from .._perf import gc_paused
from ..assignors.registry import AssignorInfo
from ..lookup import get_assignor
from ..model import TopicPartition, scenario_to_dict
from .config import check_features, client_era
from .coordinator import EMPTY
from .events import EVENTS_FORMAT, events_from_doc, simulation_to_dict
from .coordinator import STABLE as GROUP_STABLE
from .member import STABLE, MemberProcess
from .monitors import TickState, partitions_of
from .rebalances import RebalanceRecord
from .simulator import Simulation
from .trace import MonitorVerdict

__all__ = ["ENGINES", "HistoryRun", "Stepper", "run_history"]

ENGINES = ("stepper", "simulator")
_TOPIC, _PARTITION = itemgetter(0), itemgetter(1)


@dataclass(frozen=True)
class HistoryRun:
    """One history run with one assignor.

    ``rebalances``: every leader step, in order (each record's ``seed``/``index`` name the history).
    ``monitors``: the simulator's verdicts (double consumption, generations, stable ownership,
    cooperative convergence, rebalance loop). ``follow_ups``: rebalances started by a cooperative
    member rejoining after a revocation (R38). ``unowned``: for cooperative rebalances, the sum over
    rebalances of the existing subscribed partitions the leader assigned to nobody (a partition
    withheld for revocation for one rebalance counts one). ``ended``: ``settled``, ``rebalance
    loop`` or ``max_ticks``. ``members``/``partitions``: the history's size at the start.
    """

    seed: int
    index: int
    scale: str
    name: str
    assignor: str
    engine: str
    without: frozenset[str]
    rebalances: tuple[RebalanceRecord, ...]
    monitors: tuple[MonitorVerdict, ...]
    ticks: int
    ended: str
    follow_ups: int
    unowned: int
    members: int
    partitions: int
    document: Mapping[str, Any] = field(compare=False, repr=False)
    seconds: float = field(default=0.0, compare=False)
    ticks_run: int = field(default=0, compare=False)  # ticks the engine ran (the stepper skips heartbeat-only ones)
    #: partition-ticks no running member owned (partitions of subscribed, existing topics), every tick counted
    unowned_ticks: int = 0
    #: [first, end) spans of the ticks that ended with the group unsettled (``Simulation.settled``)
    unsettled: tuple[tuple[int, int], ...] = ()

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.monitors)

    def verdict(self, monitor: str) -> MonitorVerdict:
        for v in self.monitors:
            if v.monitor == monitor:
                return v
        raise KeyError(monitor)


def run_history(history, assignor: str | AssignorInfo, *, engine: str = "stepper",
                without: Iterable[str] | None = None, assignor_seconds: float | None = None) -> HistoryRun:
    """Run ``history`` (a ``scenarios.histories.History``) with every member configured with ``assignor``.

    ``without`` defaults to the client faults of the assignor's release (``config.client_era``): a
    historical variant runs with the clients it shipped with (``cooperative-sticky@2.4`` with pre-3.0
    clients that keep stale owned partitions after a reset, KAFKA-12983); pass ``()`` for today's client.
    An ``AssignorInfo`` is carried through as given (every member and rebalance runs that one), each
    call bounded by ``assignor_seconds`` (``Limits.assignor_seconds``; ``grading.bounded``).
    An assignor without eager support runs the history as its clients can (``History.for_protocols``:
    no eager pins, no v0 clients; R36); the run's ``document`` is that history.
    """
    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    switched = client_era(info.variant) if without is None else check_features(without)
    history = history.for_protocols(info.protocols)  # an assignor without eager support has no eager clients (R36)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    machine = Stepper if engine == "stepper" else Simulation
    schedule = events_from_doc({"format": EVENTS_FORMAT, "config": dict(history.config), "events": list(history.events)})
    started = time.perf_counter()
    sim = machine(history.scenario, schedule.events, config=schedule.config, without=switched, assignor=info,
                  name=history.name, record_rebalances=True, assignor_seconds=assignor_seconds)
    with gc_paused():  # a run allocates millions of acyclic tuples at scale; collecting them mid-run cost a third of it
        result = sim.run()
    seconds = time.perf_counter() - started
    records = tuple(replace(r, seed=history.seed, index=history.index) for r in result.rebalances)
    return HistoryRun(
        seed=history.seed,
        index=history.index,
        scale=history.scale,
        name=history.name,
        assignor=info.name,
        engine=engine,
        without=switched,
        rebalances=records,
        monitors=result.verdicts,
        ticks=result.ticks,
        ended=result.ended,
        follow_ups=sum(r.follow_up for r in records),
        unowned=_unowned_partition_rebalances(records),
        members=history.members,
        partitions=history.partitions,
        document=simulation_to_dict(scenario_to_dict(history.scenario), schedule.events, name=history.name,
                                    config=schedule.config, without=switched, assignor=info.name),
        seconds=seconds,
        ticks_run=getattr(sim, "active_ticks", result.ticks),
        unowned_ticks=sim.unowned_ticks,
        unsettled=tuple((a, b) for a, b in sim.unsettled_ranges),
    )


def _unowned_partition_rebalances(records: Iterable[RebalanceRecord]) -> int:
    """Over the cooperative records: existing partitions some member subscribes to that the leader gave nobody."""
    return sum(_unassigned(r) for r in records if r.cooperative and r.assignment is not None)


def _unassigned(record: RebalanceRecord) -> int:
    """Existing partitions some member subscribes to that ``record``'s leader gave nobody.

    Each assigned partition becomes an integer, ``base[topic] + min(partition, count)``, the topics'
    ranges laid end to end with one extra slot each that every partition past a topic's count (or of a
    topic nobody subscribes to) falls into; so the distinct valid assigned partitions are a set of
    ints built by mapped C calls, minus those slots.
    """
    subscribed = {t for m in record.scenario.members for t in m.topics}
    counts = {t.name: t.partitions for t in record.scenario.topics if t.name in subscribed and t.partitions > 0}
    given = list(chain.from_iterable(record.assignment.values()))
    topics = list(map(_TOPIC, given))
    limit = {t: counts.get(t, 0) for t in set(topics) | set(counts)}
    base, end = {}, 0
    for t in sorted(limit):
        base[t], end = end, end + limit[t] + 1
    keys = set(map(add, map(base.__getitem__, topics), map(min, map(_PARTITION, given), map(limit.__getitem__, topics))))
    valid = len(keys) - len(keys.intersection(base[t] + n for t, n in limit.items()))
    return sum(counts.values()) - valid


class _TopicPartitions:
    """Each topic's partitions as a frozenset, built once per (topic, count): a set built from these
    keeps their hashes, and a topic that grows costs only itself."""

    def __init__(self) -> None:
        self._sets: dict[tuple[str, int], frozenset[TopicPartition]] = {}

    def of(self, topic: str, count: int) -> frozenset[TopicPartition]:
        key = (topic, count)
        found = self._sets.get(key)
        if found is None:
            found = self._sets[key] = partitions_of((topic,), {topic: count})
        return found

    def union(self, counts: Mapping[str, int]) -> frozenset[TopicPartition]:
        return frozenset().union(*(self.of(t, n) for t, n in counts.items() if n > 0))


class _Union:
    """The union of some named sets, kept as they change (only the sets that changed are read), and
    whether they are pairwise disjoint. A set counts as changed when it is another object or its size
    changed (members replace their ``owned`` set, or shrink it in place)."""

    def __init__(self) -> None:
        self.parts: dict[str, tuple[set, frozenset]] = {}  # name -> (the set watched, a copy of what it held)
        self.union: set[TopicPartition] = set()
        self.total = 0
        self.disjoint = True

    def update(self, current: Mapping[str, set]) -> bool:
        """Follow ``current`` (name -> set); False when nothing changed."""
        parts = self.parts
        changed = [n for n, s in current.items() if n not in parts or parts[n][0] is not s or len(parts[n][1]) != len(s)]
        changed += [n for n in parts if n not in current]
        if not changed:
            return False
        if self.disjoint:
            for n in changed:
                old = parts.pop(n, None)
                if old is not None:
                    self.union -= old[1]
                    self.total -= len(old[1])
                new = current.get(n)
                if new is not None:
                    copy = frozenset(new)
                    parts[n] = (new, copy)
                    self.union |= copy
                    self.total += len(copy)
            if len(self.union) == self.total:
                return True
        self.parts = {n: (s, frozenset(s)) for n, s in current.items()}
        self.union = set().union(*(copy for _, copy in self.parts.values()))
        self.total = sum(len(copy) for _, copy in self.parts.values())
        self.disjoint = len(self.union) == self.total
        return True


class Stepper(Simulation):
    """The simulator's machine stepped from one tick where something can happen to the next (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.tracing = False
        self.active_ticks = 0
        self._fetched = _Union()
        self._contested: dict[str, frozenset[TopicPartition]] = {}
        self._owned = _Union()
        self._subscribed_key: tuple | None = None
        self._subscribed: frozenset[TopicPartition] = frozenset()
        self._topic_partitions = _TopicPartitions()
        self._orphans: frozenset[TopicPartition] | None = None
        self._last: TickState | None = None
        self._last_unowned = 0

    # -- what the monitors see ----------------------------------------------------------

    def _fetched_twice(self, t: int, running: Mapping[str, MemberProcess]) -> dict[str, frozenset[TopicPartition]]:
        """Each fetching member's partitions that another member also fetches (what no-double-consumption reports)."""
        fetchers = {n: p.owned for n, p in running.items() if p.owned and p.fetching(t)}
        if not self._fetched.update(fetchers):
            return self._contested
        if self._fetched.disjoint:
            self._contested = {}
            return self._contested
        seen: set[TopicPartition] = set()
        twice: set[TopicPartition] = set()
        for n in sorted(fetchers):
            twice |= seen.intersection(fetchers[n])
            seen |= fetchers[n]
        self._contested = {n: frozenset(o & twice) for n, o in fetchers.items() if not twice.isdisjoint(o)}
        return self._contested

    def _unowned(self, running: Mapping[str, MemberProcess]) -> frozenset[TopicPartition]:
        """Partitions of subscribed, existing topics that no running member owns (what stable-ownership reports)."""
        topics = sorted({topic for p in running.values() for topic in p.config.topics})
        key = (tuple(topics), tuple(self.cluster[t].partitions if t in self.cluster else -1 for t in topics))
        changed = self._owned.update({n: p.owned for n, p in running.items() if p.owned})
        if key != self._subscribed_key:
            counts = {t: self.cluster[t].partitions for t in topics if t in self.cluster}
            self._subscribed_key, self._subscribed = key, self._topic_partitions.union(counts)
            changed = True
        if changed or self._orphans is None:
            self._orphans = frozenset(self._subscribed.difference(self._owned.union))
        return self._orphans

    def _record(self, t: int) -> None:
        """The end of a tick that ran: the monitors on what can fail them; no trace."""
        self.active_ticks += 1
        co = self.coordinator
        formed, committed = self.new_generations()
        running = {n: p for n, p in self.processes.items() if p.running}
        self.now = t + 1
        settled = self.settled()
        unowned = self._unowned(running)
        state = TickState(
            tick=t,
            consuming=self._fetched_twice(t, running),
            owned={},
            member_generations=self.member_generations(running),
            epoch=co.epoch,
            committed=committed,
            formed=formed,
            settled=settled,
            subscribed_partitions=unowned if settled else frozenset(),
        )
        self.monitors.check(state)
        self.measure(t, settled, len(unowned))
        self._last, self._last_unowned = state, len(unowned)
        self.end_tick()
        return None

    # -- skipping ticks in which only heartbeats happen ------------------------------------

    def _quiet_until(self) -> int | None:
        """None if tick ``now`` may change something besides heartbeats; else the first tick that may."""
        t, co = self.now, self.coordinator
        queued = self.next_scheduled_tick()
        if queued is not None and queued <= t:
            return None
        if co.state not in (GROUP_STABLE, EMPTY):
            return None
        if co.sync_deadline is not None and co.sync_deadline <= t:
            return None
        nxt = self.config.max_ticks
        if queued is not None:
            nxt = min(nxt, queued)
        if co.sync_deadline is not None:
            nxt = min(nxt, co.sync_deadline)
        heartbeating = set()
        for p in self.processes.values():
            if not p.running:
                continue
            if p.stalled_until > t:
                nxt = min(nxt, p.stalled_until)
                continue
            if p.stalled_until == t or p.state != STABLE or p.rejoin_needed or p.returning or p.rediscover_until > t:
                return None
            if self.has_responses_for(p) or co.state != GROUP_STABLE or co.generation != p.generation:
                return None
            if co.validate_member(p.member_id, p.config.instance_id) is not None or p.rejoin_reason(self):
                return None
            heartbeating.add(p.member_id)
        for member_id, m in co.members.items():
            if member_id in heartbeating or m.awaiting_join or m.awaiting_sync:
                continue
            expiry = m.last_heard + self.config.session_timeout
            if expiry <= t:
                return None
            nxt = min(nxt, expiry)
        return nxt

    def _skip_to(self, until: int) -> None:
        """Ticks ``now`` .. ``until - 1`` hold only heartbeats: apply them, charge the persisting violations."""
        t, co = self.now, self.coordinator
        for p in self.processes.values():
            if p.running and p.stalled_until <= t:
                co.members[p.member_id].last_heard = until - 1
        if self._last is not None:
            self.monitors.check(replace(self._last, tick=t, committed=(), formed=()))
            self.monitors.charge_persisting(until - t - 1)
            self.measure(t, self._last.settled, self._last_unowned, until - t)
        self.now = until

    def run(self):
        """``Simulation.run``, with heartbeat-only ticks skipped."""
        while (ended := self.end_reason()) is None:
            if self.now > 0:
                until = self._quiet_until()
                if until is not None and until > self.now:
                    self._skip_to(min(until, self.config.max_ticks))
                    continue
            self.step()
        self._ended = ended
        return self.result()
