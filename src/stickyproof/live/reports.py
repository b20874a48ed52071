"""What a live run reports: the timeline, the result, the monitors run on the members' reports, and
its rendering (``live.run`` drives the members; this module reads what they said).

    consumption_intervals(reports)     who consumed each partition when
    monitor_verdicts(...)              the simulator's monitors, on real spans of wall time
    render_live(result)                the terminal rendering
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..group.monitors import MONITORS, _ordinal
from ..group.trace import MonitorVerdict, MonitorViolation, format_partitions
from ..model import TopicPartition
from .described import GroupSeen, group_types
from .epochs import MemberStep
from .java_member import Report
from .settled import SettledGrade

__all__ = ["DISTURBING_REPORTS", "ENDS", "LIVE_MONITORS", "LIVE_RULES", "LiveEntry", "LiveResult",
           "consumption_intervals", "convergence_violations", "disturbances", "formed_generations", "in_flight", "monitor_verdicts",
           "render_live", "report_partitions", "timeline_entry"]

LIVE_MONITORS = ("no-double-consumption", "generations-increase", "stable-ownership", "cooperative-convergence",
                 "no-rebalance-loop")
"""The simulator's monitors a live run checks (models/protocol.md §7), all five."""

def in_flight(cooperative: bool) -> int:
    """Generations a live run allows beyond the simulator's bounds after a disturbance: those of the
    one rebalance that may have been under way when it came (two when the group is cooperative: the
    rebalance's follow-up round too). The simulator counts only generations of rebalances that
    *started* after the disturbance; a real member reports a generation only once it formed, so a
    rebalance already running when a member left (the coordinator completes it, then starts the
    next) is indistinguishable from one the disturbance started. A join needs no allowance: the
    joining member's own first generation says which rebalance it joined (``disturbances``)."""
    return 2 if cooperative else 1


LIVE_RULES = {**{m: MONITORS[m] for m in LIVE_MONITORS},
              "no-double-consumption": "no partition is consumed by two members at once (spans read off their callbacks)",
              "stable-ownership": "once the group is settled, every partition of a subscribed topic is owned by exactly one member",
              "cooperative-convergence": "an all-cooperative classic group forms at most two generations after the last "
                                         "disturbance, besides a rebalance already under way",
              "no-rebalance-loop": "at most loop_bound generations (group epochs, for group.protocol=consumer) form after "
                                   "the last disturbance, besides a rebalance already under way"}
"""The rules as a live run checks them: spans of wall time where the simulator has ticks, and
disturbances at the instants they reached the group (``disturbances``)."""

DISTURBING_REPORTS = ("started", "subscribed", "resumed")
"""Reports that mark a disturbance as the coordinator sees it: a member process's first poll (a join
lands when its client is up, seconds after the history's tick on a loaded machine, so two joins of
one tick may land in separate rebalances), a subscription change, and a stalled member polling again
(its rejoin)."""


@dataclass(frozen=True)
class LiveEntry:
    """One line of the timeline: milliseconds since the run started, who, what."""

    at_ms: int
    member: str
    what: str
    partitions: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"at_ms": self.at_ms, "member": self.member, "what": self.what}
        if self.partitions:
            out["partitions"] = [[t, p] for t, p in self.partitions]
        if self.generation is not None:
            out["generation"] = self.generation
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class LiveResult:
    name: str
    bootstrap: str
    clients: tuple[str, ...]
    group_protocol: str
    tick_ms: int
    timeline: tuple[LiveEntry, ...]
    settled: tuple[tuple[str, tuple[TopicPartition, ...]], ...]
    did_settle: bool
    verdicts: tuple[MonitorVerdict, ...]
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    measured: tuple[tuple[str, float], ...] = ()  # broker start seconds, peak RSS of the broker and members (MB)
    member_clients: tuple[tuple[str, str], ...] = ()  # member -> the library it ran
    grades: tuple["SettledGrade", ...] = ()
    # group.protocol=consumer: each member's member ids (one per process), in the order the admin saw them
    member_ids: tuple[tuple[str, tuple[str, ...]], ...] = ()
    topic_ids: tuple[tuple[str, str], ...] = ()  # each topic the run created -> the id the broker drew
    join_epochs: tuple[tuple[str, int], ...] = ()  # each member's first group epoch the admin saw
    # a migration run: the group as the admin described it at each change (live.described), and the policy
    described: tuple["GroupSeen", ...] = ()
    migration_policy: str | None = None
    member_states: tuple["MemberStep", ...] = ()  # every (member epoch, assigned) change the admin saw (live.epochs)

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "stickyproof.live/1",
            "name": self.name,
            "bootstrap": self.bootstrap,
            "clients": list(self.clients),
            "group_protocol": self.group_protocol,
            "tick_ms": self.tick_ms,
            "ok": self.ok,
            "settled": self.did_settle,
            "assignment": {m: [[t, p] for t, p in tps] for m, tps in self.settled},
            "monitors": [v.to_dict() for v in self.verdicts],
            "timeline": [e.to_dict() for e in self.timeline],
            "notes": list(self.notes),
            "seconds": self.seconds,
            "measured": dict(self.measured),
            "member_clients": dict(self.member_clients),
            "grades": [g.to_dict() for g in self.grades],
            **({"member_ids": {m: list(ids) for m, ids in self.member_ids}} if self.member_ids else {}),
            **({"topic_ids": dict(self.topic_ids)} if self.topic_ids else {}),
            **({"join_epochs": dict(self.join_epochs)} if self.join_epochs else {}),
            **({"described": [d.to_dict() for d in self.described]} if self.described else {}),
            **({"migration_policy": self.migration_policy} if self.migration_policy else {}),
            **({"member_states": [m.to_dict() for m in self.member_states]} if self.member_states else {}),
        }


# ------------------------------------------------------------------------------------------
# Reading the reports


def report_partitions(r: Report, prefix: str) -> tuple[TopicPartition, ...]:
    """The partitions a report names, the run's topic prefix (an attached broker's) taken off."""
    return tuple(sorted(TopicPartition(t[len(prefix):] if prefix and t.startswith(prefix) else t, p) for t, p in r.partitions()))


def timeline_entry(r: Report, t0: int, prefix: str) -> LiveEntry:
    """One report as a timeline line, at milliseconds since ``t0`` (the run's start on the shared clock)."""
    generation = r.get("generation")
    detail = r.get("message") or ""
    if r.ev == "stalled":
        detail = f"{r.get('ms')} ms"
    if r.ev in ("started", "subscribed"):
        detail = ", ".join(t[len(prefix):] if prefix else t for t in r.get("topics") or ())
    return LiveEntry((r.mono_ns - t0) // 1_000_000, r.name, r.ev, report_partitions(r, prefix), generation, detail)


ENDS = ("crashing", "closed")
"""The reports after which a member consumes nothing (its process ends)."""


def consumption_intervals(reports: Sequence[Report], prefix: str = "") -> dict[TopicPartition, list[tuple[int, int, str]]]:
    """Per partition, the (start ns, end ns, member) spans in which a member consumed it, read off its
    reports (module docstring). A span still open at the end of the run ends at the last report."""
    end_of_run = max((r.mono_ns for r in reports), default=0)
    spans: dict[TopicPartition, list[tuple[int, int, str]]] = {}
    # one process at a time: a name's reports from its start to its end (a restart starts a new one)
    owned: dict[str, set[TopicPartition]] = {}
    since: dict[tuple[str, TopicPartition], int] = {}
    stalled: dict[str, bool] = {}

    def close(name: str, tp: TopicPartition, at: int) -> None:
        start = since.pop((name, tp), None)
        if start is not None:
            spans.setdefault(tp, []).append((start, at, name))

    for r in reports:
        n = r.name
        if r.ev == "started":
            owned[n], stalled[n] = set(), False
        elif r.ev == "assigned":
            for tp in report_partitions(r, prefix):
                owned.setdefault(n, set()).add(tp)
                if not stalled.get(n):
                    since.setdefault((n, tp), r.mono_ns)
        elif r.ev in ("revoked", "lost"):
            for tp in report_partitions(r, prefix):
                owned.get(n, set()).discard(tp)
                close(n, tp, r.mono_ns)
        elif r.ev == "stalled":
            stalled[n] = True
            for tp in list(owned.get(n, ())):
                close(n, tp, r.mono_ns)
        elif r.ev == "resumed":
            stalled[n] = False
            for tp in owned.get(n, ()):
                since.setdefault((n, tp), r.mono_ns)
        elif r.ev in ENDS:
            for tp in list(owned.get(n, ())):
                close(n, tp, r.mono_ns)
            owned[n] = set()
    for (n, tp), start in list(since.items()):
        spans.setdefault(tp, []).append((start, end_of_run, n))
    return spans


def disturbances(reports: Sequence[Report], applied: Sequence[int]) -> list[tuple[int, int]]:
    """The disturbances a generation count restarts from, in time order, as (monotonic ns, the first
    generation that counts): each history event as the run applied it (every later generation), and
    each report of ``DISTURBING_REPORTS``; for a member's first poll or a stalled member polling
    again, only generations from the first one that member was then assigned in (the rebalance it
    joined: one that formed after its first poll without it was under way before)."""
    marks = [(at, -1) for at in applied]
    for i, r in enumerate(reports):
        if r.ev in DISTURBING_REPORTS:
            first = -1
            if r.ev in ("started", "resumed"):
                first = next((int(x.get("generation")) for x in reports[i + 1:] if x.name == r.name and x.ev == "assigned"
                              and isinstance(x.get("generation"), int) and x.get("generation") >= 0), -1)
            marks.append((r.mono_ns, first))
    return sorted(set(marks))


def formed_generations(reports: Sequence[Report]) -> list[tuple[int, int]]:
    """(instant, generation) of each generation's first ``assigned`` report, in time order: when the
    group is first seen in it. A member's epoch stands for the generation under group.protocol=consumer."""
    first: dict[int, int] = {}
    for r in reports:
        if r.ev == "assigned" and r.get("generation", -1) is not None and int(r.get("generation", -1)) >= 0:
            g = int(r.get("generation"))
            first[g] = min(first.get(g, r.mono_ns), r.mono_ns)
    return sorted((at, g) for g, at in first.items())


def convergence_violations(reports: Sequence[Report], t0: int, applied: Sequence[int], *, cooperative: bool,
                           loop_bound: int, cooperative_bound: int) -> dict[str, list[MonitorViolation]]:
    """``cooperative-convergence`` and ``no-rebalance-loop`` on real reports: each generation formed
    counts for the last disturbance before it that it may follow (``disturbances``), and a count
    past the simulator's bound plus ``in_flight`` is a violation at that generation."""
    found: dict[str, list[MonitorViolation]] = {"cooperative-convergence": [], "no-rebalance-loop": []}
    marks = disturbances(reports, applied)
    counts: dict[int, int] = {}
    allowance = in_flight(cooperative)
    for at, g in formed_generations(reports):
        last = max((i for i, (d, first) in enumerate(marks) if d < at and g >= first), default=-1)
        counts[last] = count = counts.get(last, 0) + 1
        since = f"the last disturbance at {(marks[last][0] - t0) // 1_000_000} ms" if last >= 0 else "the run started"
        if cooperative and count > cooperative_bound + allowance:
            found["cooperative-convergence"].append(MonitorViolation(
                "cooperative-convergence", (at - t0) // 1_000_000,
                f"generation {g} is the {_ordinal(count)} since {since} (bound {cooperative_bound}, and {allowance} "
                "of a rebalance under way)", (("generation", g), ("since_disturbance", count))))
        if count > loop_bound + allowance:
            found["no-rebalance-loop"].append(MonitorViolation(
                "no-rebalance-loop", (at - t0) // 1_000_000,
                f"generation {g} is the {_ordinal(count)} without a disturbance since {since} "
                f"(bound {loop_bound}, and {allowance} of a rebalance under way): a rebalance loop",
                (("generation", g), ("since_disturbance", count))))
    return found


def monitor_verdicts(reports: Sequence[Report], t0: int, prefix: str, owned: Mapping[str, frozenset[TopicPartition]],
                     subscribed: set[TopicPartition], did_settle: bool, *, applied: Sequence[int] = (),
                     cooperative: bool = False, loop_bound: int = 5, cooperative_bound: int = 2) -> tuple[MonitorVerdict, ...]:
    """The five monitors on what the members reported. ``applied``: the instants the run applied the
    history's events; ``cooperative``: every member ran only ``cooperative-sticky`` under
    group.protocol=classic (``cooperative-convergence`` holds trivially otherwise); the bounds are the
    history's (``GroupConfig.loop_bound``, ``cooperative_bound``)."""
    found: dict[str, list[MonitorViolation]] = {m: [] for m in LIVE_MONITORS}
    found.update(convergence_violations(reports, t0, applied, cooperative=cooperative, loop_bound=loop_bound,
                                        cooperative_bound=cooperative_bound))

    # no-double-consumption: two members' spans of one partition overlap (a handoff at one instant is none)
    for tp, spans in sorted(consumption_intervals(reports, prefix).items()):
        spans.sort()
        for i, (s1, e1, m1) in enumerate(spans):
            for s2, e2, m2 in spans[i + 1:]:
                if s2 >= e1:
                    break
                if m1 != m2:
                    at = (s2 - t0) // 1_000_000
                    found["no-double-consumption"].append(MonitorViolation(
                        "no-double-consumption", at, f"{tp} consumed by {m1} and {m2} for {(min(e1, e2) - s2) / 1e6:.0f} ms",
                        (("members", [m1, m2]), ("partition", str(tp)))))

    # generations-increase: each member id is assigned in generations that never go back
    last: dict[tuple[str, str], int] = {}
    for r in reports:
        if r.ev == "assigned" and r.get("generation", -1) >= 0:
            key, g = (r.name, str(r.get("member_id"))), int(r.get("generation"))
            if key in last and g < last[key]:
                found["generations-increase"].append(MonitorViolation(
                    "generations-increase", (r.mono_ns - t0) // 1_000_000,
                    f"{r.name} was assigned partitions in generation {g} after generation {last[key]}",
                    (("generation", g), ("member", r.name), ("previous", last[key]))))
            last[key] = max(g, last.get(key, g))

    # stable-ownership: the settled group owns every subscribed partition, each once
    holders: dict[TopicPartition, list[str]] = {}
    for member, tps in owned.items():
        for tp in tps:
            holders.setdefault(tp, []).append(member)
    orphans = sorted(subscribed - set(holders))
    twice = sorted(tp for tp, ms in holders.items() if len(ms) > 1)
    end = (max((r.mono_ns for r in reports), default=t0) - t0) // 1_000_000
    if not did_settle:
        found["stable-ownership"].append(MonitorViolation("stable-ownership", end, "the group did not settle within the time given", ()))
    elif orphans or twice:
        what = []
        if orphans:
            what.append(f"nobody owns {', '.join(map(str, orphans[:8]))}")
        if twice:
            what.append(f"two members own {', '.join(map(str, twice[:8]))}")
        found["stable-ownership"].append(MonitorViolation(
            "stable-ownership", end, f"the group is settled but {'; '.join(what)}",
            (("owned-twice", [str(tp) for tp in twice]), ("unowned", [str(tp) for tp in orphans]))))
    return tuple(MonitorVerdict(m, LIVE_RULES[m], not found[m], found[m][0] if found[m] else None, len(found[m]))
                 for m in LIVE_MONITORS)




def render_live(result: LiveResult) -> str:
    """The timeline, the settled assignment and the verdicts, as ``simulate`` prints its trace."""
    lines = [f"live run: {result.name or '(unnamed)'} on {result.bootstrap}, clients {', '.join(result.clients)}, "
             f"group.protocol={result.group_protocol}, one tick = {result.tick_ms} ms", ""]
    width = max((len(e.member) for e in result.timeline), default=6)
    lines.append(f"{'ms':>8}  {'member':<{width}}  {'report':<15} {'gen':>4}  partitions / detail")
    for e in result.timeline:
        gen = "" if e.generation is None else str(e.generation)
        body = format_partitions(e.partitions) if e.partitions else ("-" if e.what in ("assigned", "revoked", "lost") else "")
        if e.detail:
            body = f"{body}  {e.detail}".strip()
        lines.append(f"{e.at_ms:>8}  {e.member:<{width}}  {e.what:<15} {gen:>4}  {body}")
    if result.described:
        lines += ["", "the group's type as the admin described it: "
                  + " -> ".join(f"{t} ({at} ms)" for at, t in group_types(result.described))
                  + (f"; group.consumer.migration.policy={result.migration_policy}" if result.migration_policy else "")]
    lines += ["", "settled assignment:" if result.did_settle else "assignment at the end (the group did not settle):"]
    clients = dict(result.member_clients)
    for member, tps in result.settled:
        lines.append(f"  {member}{f' ({clients[member]})' if member in clients and len(result.clients) > 1 else ''}: "
                     f"{format_partitions(tps)}")
    if result.grades:
        lines += ["", "every target the coordinator computed that the run saw, graded with its input (docs/live.md):"
                  if any(g.epoch is not None for g in result.grades) else "settled assignments graded (as sweep rows are; docs/live.md):"]
        lines += [f"  {g.line()}" for g in result.grades]
    lines += ["", "monitors:"]
    for v in result.verdicts:
        lines.append(f"  {'ok  ' if v.ok else 'FAIL'} {v.monitor}: {v.rule}")
        if v.first is not None:
            lines.append(f"       first at {v.first.tick} ms: {v.first.message}")
    for note in result.notes:
        lines.append(f"note: {note}")
    m = dict(result.measured)
    extra = []
    if "broker_start_seconds" in m:
        extra.append(f"broker started in {m['broker_start_seconds']:.1f} s")
    if "broker_peak_rss_mb" in m:
        extra.append(f"broker peak RSS {m['broker_peak_rss_mb']:.0f} MB")
    if "member_peak_rss_mb" in m:
        extra.append(f"largest member peak RSS {m['member_peak_rss_mb']:.0f} MB")
    lines.append(f"(run {result.seconds:.1f} s{'; ' + ', '.join(extra) if extra else ''})")
    return "\n".join(lines) + "\n"
