"""A consumer-group history lived through KIP-848's protocol: the sweep's protocol measures of one history.

``consumer_assignor`` rows (``consumer_rows.py``) grade each target computation of a drawn consumer
history (``scenarios.consumer_histories``) without the protocol. Here the same history runs through
the consumer-protocol simulator (``group.consumer``: today's coordinator, the row's server-side
assignor, members reconciling by heartbeat), and the run gives what a user deciding to migrate asks
of a protocol: how many heartbeats the group takes to converge after each event, how many
partition-heartbeats no member owns, what the members really gave up, and whether every monitor
held (docs/sweep.md, "Protocols side by side").

The translation (``protocol_document``), event for event, in the simulator's vocabulary:

* the first members join one heartbeat apart (``join``, one tick each), as the history forms the group;
* ``join``, ``leave``, ``crash``, ``subscribe`` and ``topic-deleted`` are the simulator's events of the
  same name; ``partitions`` is ``add-partitions`` of the difference; ``topic-created`` is
  ``create-topic``; a static member's restart is ``restart`` (a leave with epoch -2, then, after
  ``restart_downtime``, a new process with a new member id and the same instance id);
* the processes are named by the history's member ids (so the assignor meets the ids the graded rows
  saw); a static member restarted keeps its process name, its member id becomes ``NAME~2``;
* after the start, each event comes once the one before has had the time the protocol needs to
  settle (``gap_after``: the convergence bound plus one quiet heartbeat, the session timeout too after
  a crash or a static member's leave with epoch -2, the downtime too after a restart), so each event
  is one target computation, as the graded rows assume, and its convergence is its own. The protocol
  differs from the rows' model where Kafka does: a static member that leaves keeps its target (its
  partitions unowned) until its session times out, where the rows drop it at once.

Measures (``ProtocolRun``), read after every tick (``ConsumerSimulation.run(observe=)``):
``converge``: per event tick T, ticks from T to the first tick at whose end the group is settled,
inclusive (1: settled within the event's own heartbeat); ``unsettled``: ticks that ended unsettled;
``unowned``: over every tick, the partitions of subscribed, existing topics that no running member owns;
``moved``: partitions a member still in the group (same process, same member id) gave up.
A failing monitor is labelled a known hazard when Kafka's design explains it (``HAZARDS``): the zombie
(a member cut off past its session keeps fetching; Kafka fences its offset commits, not modelled).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..group.config import GroupConfig
from ..group.trace import MonitorVerdict
from ..model import TopicPartition, scenario_to_dict

__all__ = ["COORDINATOR", "HAZARDS", "ProtocolRun", "gap_after", "protocol_document", "run_protocol", "convergence",
           "spans", "protocol_row_fields", "monitor_labels", "run_row_fields"]

#: The coordinator release the main job runs (today's; docs/consumer-protocol.md has the others).
COORDINATOR = "current"

#: Monitor failures Kafka's design explains: (monitor, what the first witness shows) -> label.
HAZARDS = {("no-double-ownership", "zombies"): "zombie"}


def gap_after(kind: str, config: GroupConfig, *, static: bool = False) -> int:
    """Ticks from an event of ``kind`` (the simulator's) to the next: the convergence bound and one
    quiet heartbeat, plus the session timeout after a crash or a static member's leave (the
    coordinator drops its record only then) and the downtime after a restart (the new process comes
    back only then)."""
    from ..group.consumer import CONVERGENCE_BOUND

    gap = CONVERGENCE_BOUND + 2
    if kind == "crash" or (kind == "leave" and static):
        gap += config.session_timeout
    elif kind == "restart":
        gap += config.restart_downtime
    return gap


def _events(history: Any, config: GroupConfig) -> list[dict[str, Any]]:
    """The history's events in the simulator's vocabulary, each with its tick (module docstring)."""
    names: dict[str, str] = {}  # the history's member id -> process name
    static: set[str] = set()  # process names of static members
    counts = {t.name: t.partitions for t in history.start.topics}
    out: list[dict[str, Any]] = []
    at = 0
    for i, e in enumerate(history.events):
        f = e.fields
        if i:
            last = out[-1]
            at += 1 if i < history.start_members else gap_after(last["event"], config, static=last.get("member") in static)
        if e.kind == "join":
            names[f["id"]] = f["id"]
            if f.get("instance_id") is not None:
                static.add(f["id"])
            doc = {"event": "join", "member": f["id"], "topics": list(f["topics"])}
            doc.update({k: f[k] for k in ("rack", "instance_id") if f.get(k) is not None})
        elif e.kind in ("leave", "crash"):
            doc = {"event": e.kind, "member": names.pop(f["id"])}
        elif e.kind == "static-restart":
            names[f["new_id"]] = names.pop(f["id"])
            doc = {"event": "restart", "member": names[f["new_id"]]}
        elif e.kind == "subscribe":
            doc = {"event": "subscribe", "member": names[f["id"]], "topics": list(f["topics"])}
        elif e.kind in ("partitions", "topic-created"):
            old = counts.get(f["topic"], 0)
            counts[f["topic"]] = f["partitions"]
            doc = {"event": "add-partitions" if e.kind == "partitions" else "create-topic", "topic": f["topic"],
                   "count": f["partitions"] - old}
            if f.get("racks") is not None:
                doc["racks"] = [list(r) for r in f["racks"][old:]]
        elif e.kind == "topic-deleted":
            counts.pop(f["topic"], None)
            doc = {"event": "delete-topic", "topic": f["topic"]}
        else:  # pragma: no cover - a kind the draw does not make
            raise ValueError(f"consumer history event {e.kind!r} has no protocol translation")
        out.append({"at": at, **doc})
    return out


def protocol_document(history: Any, assignor: str, coordinator: str = COORDINATOR) -> dict[str, Any]:
    """The ``stickyproof.simulation/1`` document of ``history`` in the consumer protocol: what
    ``stickyproof simulate`` replays (module docstring, the translation)."""
    from ..group.events import SIMULATION_FORMAT

    config = GroupConfig()
    events = _events(history, config)
    last = max((e["at"] for e in events), default=0)
    return {"format": SIMULATION_FORMAT, "name": history.name, "scenario": scenario_to_dict(history.start),
            "config": {"max_ticks": last + 100}, "events": events, "assignor": assignor, "coordinator": coordinator}


@dataclass(frozen=True)
class ProtocolRun:
    """One consumer history run through the protocol (module docstring, the measures)."""

    verdicts: tuple[MonitorVerdict, ...]
    event_ticks: tuple[int, ...]
    converge: tuple[int, ...]
    unsettled: tuple[tuple[int, int], ...]
    unowned: int
    moved: int
    ticks: int
    ended: str
    coordinator: str
    document: Mapping[str, Any] = field(compare=False, repr=False)
    seconds: float = field(default=0.0, compare=False)

    @property
    def failed(self) -> tuple[MonitorVerdict, ...]:
        return tuple(v for v in self.verdicts if not v.ok)


def spans(ticks: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Sorted ticks as maximal ``[first, end)`` spans."""
    out: list[list[int]] = []
    for t in sorted(set(ticks)):
        if out and out[-1][1] == t:
            out[-1][1] = t + 1
        else:
            out.append([t, t + 1])
    return tuple((a, b) for a, b in out)


def convergence(event_ticks: Sequence[int], unsettled: Sequence[tuple[int, int]], end: int, *,
                formed: int = 0) -> tuple[int, ...]:
    """Per event tick T: ticks from T to the first tick >= T that ended settled, inclusive (``unsettled``:
    maximal ``[first, end)`` spans of the ticks that ended unsettled); a group never settled by the
    last tick run, ``end``, counts to it. The start (tick 0) counts from ``formed`` on (the last of
    the joins that form the group)."""
    out = []
    for t in sorted(set(event_ticks)):
        s = max(t, formed) if t == 0 else t
        for a, b in unsettled:
            if a <= s < b:
                s = b
                break
        out.append(min(s, end) - t + 1)
    return tuple(out)


def protocol_row_fields(converge: Sequence[int], unsettled: Sequence[tuple[int, int]] | None,
                        unowned: int | None) -> dict[str, Any]:
    """The convergence columns both protocols' history rows carry (``converge``: ticks per event)."""
    import statistics

    text = ",".join(str(c) for c in converge)
    return {
        "converge_ticks_median": float(statistics.median(converge)) if converge else None,
        "converge_ticks_max": max(converge) if converge else None,
        "converge_events": (text if len(text) <= 2000 else text[:1997] + "...") or None,
        "unsettled_ticks": None if unsettled is None else sum(b - a for a, b in unsettled),
        "unowned_ticks": unowned,
    }


class _Observer:
    """What ``run_protocol`` reads at the end of every tick."""

    def __init__(self) -> None:
        self.unsettled: list[int] = []
        self.last = 0
        self.unowned = 0
        self.moved = 0
        self._held: dict[str, tuple[str, frozenset[TopicPartition]]] = {}
        self._subscribed: tuple[Any, frozenset[TopicPartition]] = ((), frozenset())

    def _subscribed_partitions(self, topics: set[str], cluster: Mapping[str, Any]) -> frozenset[TopicPartition]:
        key = tuple(sorted((t, cluster[t].partitions) for t in topics if t in cluster))
        if key != self._subscribed[0]:
            self._subscribed = (key, frozenset(TopicPartition(t, p) for t, n in key for p in range(n)))
        return self._subscribed[1]

    def __call__(self, sim: Any) -> None:
        self.last = sim.now
        running = {n: p for n, p in sim.processes.items() if p.running()}
        if sim.unsettled() is not None:
            self.unsettled.append(sim.now)
        owned = frozenset().union(*(p.owned for p in running.values()))
        subscribed = self._subscribed_partitions({t for p in running.values() for t in p.topics}, sim.cluster)
        self.unowned += len(subscribed - owned)
        held = {}
        for name, p in running.items():
            before = self._held.get(name)
            if before is not None and before[0] == p.member_id:
                self.moved += len(before[1] - p.owned)
            held[name] = (p.member_id, p.owned)
        self._held = held


def run_protocol(history: Any, assignor: str, coordinator: str = COORDINATOR) -> ProtocolRun:
    """Run ``history`` (a ``ConsumerHistory``) through the consumer protocol with the server-side
    ``assignor`` on ``coordinator``'s release; the run's verdicts and measures."""
    from ..group.consumer import ConsumerSimulation, consumer_document_from_dict

    started = time.perf_counter()
    document = protocol_document(history, assignor, coordinator)
    doc = consumer_document_from_dict(document)
    sim = ConsumerSimulation(doc.scenario, doc.schedule.events, config=doc.schedule.config, coordinator=coordinator,
                             assignor=assignor, name=doc.name)
    observer = _Observer()
    result = sim.run(observe=observer)
    # the joins that form the group are one event, the start, at tick 0
    event_ticks = tuple(sorted({0} | {e.at for e in doc.schedule.events[history.start_members:]}))
    return ProtocolRun(
        verdicts=result.verdicts, event_ticks=event_ticks,
        converge=convergence(event_ticks, spans(observer.unsettled), observer.last,
                             formed=doc.schedule.events[history.start_members - 1].at if history.start_members else 0),
        unsettled=spans(observer.unsettled), unowned=observer.unowned, moved=observer.moved, ticks=observer.last + 1,
        ended=result.ended, coordinator=result.coordinator, document=document, seconds=time.perf_counter() - started,
    )


def monitor_labels(verdicts: Sequence[MonitorVerdict]) -> tuple[tuple[str, str], ...]:
    """The failed monitors as (monitor, label): a label of ``HAZARDS`` when the first witness shows
    what Kafka's design explains, else '' (unexpected)."""
    out = []
    for v in verdicts:
        if v.ok:
            continue
        witness = dict(v.first.witness) if v.first is not None else {}
        label = next((lab for (m, key), lab in HAZARDS.items() if m == v.monitor and witness.get(key)), "")
        out.append((v.monitor, label))
    return tuple(out)


def run_row_fields(run: ProtocolRun) -> dict[str, Any]:
    """A protocol run (a consumer history's or a migration's) as its history row's columns: the
    measures, the coordinator and how it ended, the failed monitors with their labels, and, when a
    monitor failed, its violations (bounded) and the document that replays the run."""
    import json

    from ..model import dump_json

    labels = monitor_labels(run.verdicts)
    out: dict[str, Any] = dict(protocol_row_fields(run.converge, run.unsettled, run.unowned))
    out.update(
        coordinator=run.coordinator, protocol_moved=run.moved, ended=run.ended, ticks=run.ticks, run_seconds=run.seconds,
        monitors_failed=",".join(m for m, _ in labels) or None,
        monitor_hazards=",".join(f"{m}:{label}" for m, label in labels if label) or None,
        monitor_unexpected=",".join(m for m, label in labels if not label) or None,
    )
    if labels:
        text = json.dumps([v.to_dict() for v in run.failed], sort_keys=True, default=str)
        out["monitor_failures"] = text if len(text) <= 2000 else text[:1997] + "..."
        out["replay"] = dump_json(dict(run.document))
    return out
