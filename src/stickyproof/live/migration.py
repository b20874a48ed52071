"""A migration history on a real broker, and the migration simulator beside it (docs/live.md, "Migration").

A migration history is the migration simulator's own document (``group.consumer.migration``: a
``stickyproof.simulation/1`` document one of whose ``join`` or ``restart`` events names a
``group_protocol``), read by the simulator's parser, so the live run and the simulator take the same
events: a restart with ``group_protocol: consumer`` is the upgrade of one process, with ``classic``
its downgrade, a join's ``group_protocol`` what the new process speaks; the scenario's members start
with the scenario's protocol. The document's ``migration_policy`` is the broker's
``group.consumer.migration.policy`` (``--migration-policy`` overrides it) and its ``assignor`` the
broker assignor its consumer-protocol members name.

    migration_history(ref)                 (scenario, schedule, policy, assignor, name), or None
    compare_migration(scenario, schedule, live, settings)   the simulator's points beside the broker's

The comparison starts the simulator fresh, as the live members start (``compare.fresh_scenario``),
and sets side by side, just before each event and at the end: the group's type (the simulator's
``group_type``; the admin's last description), who owns what (the simulator's members' ``owned``;
the members' callbacks), and the group epoch (the simulator's; the admin's while the group is a
consumer group, else the highest generation the members were assigned in: a classic group's
description has no generation). Types must agree at every point, and whether the group ends settled
(the live side: quiet, and ``stable-ownership`` held). Owners must agree, except that where both
sides have as many members owning as many partitions and own the same partitions once each, a
different choice of who gets which is called ``shape``: a fresh live group's members join in one
rebalance, the simulator's one tick apart, and a sticky assignor keeps what the first rebalance
dealt; and the broker's member ids are random where the simulator's are the members' names, and the
uniform assignor breaks ties (who gets which, and who gets one more) by member id. Where owners
differ otherwise and the real group had not settled when the event came (the admin last described it
mid-rebalance, not ``Stable``; or a process the history started had no assignment yet: a process
start is a second or two, a history's gap three), the point is ``unsettled``, with nothing to
compare. Epochs are shown as steps from the first point and marked where the steps differ, but are
not part of the verdict: a live group's first generation counts the rebalances its members'
start-up spread caused, and later ones whether two processes' joins fell in one rebalance or two,
which the simulator's ticks do not reproduce. Each point after the first also shows how many
partitions changed owner since the point before on each side (``moved``), the stickiness a
``shape`` verdict does not judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InvalidScenario
from ..group.trace import format_partitions
from ..model import Scenario, TopicPartition, parse_json
from .described import group_types

__all__ = ["MigrationPoint", "MigrationComparison", "migration_history", "owned_before", "pending_members", "moved",
           "compare_migration",
           "render_migration_comparison"]


def migration_history(ref: str):
    """``(scenario, schedule, migration_policy, assignor, name)`` of the migration history in file
    ``ref``; None when ``ref`` is not a file holding one (the classic runner reads it then)."""
    from ..group.consumer.events import consumer_document_from_dict
    from ..group.consumer.migration import check_policy, is_migration_document

    path = Path(ref)
    if ref == "-" or not path.is_file():
        return None
    try:
        doc = parse_json(path.read_bytes(), ref)
    except OSError as exc:
        raise InvalidScenario("", f"{ref}: cannot read ({exc.strerror or exc})") from exc
    if not is_migration_document(doc):
        return None
    sim = consumer_document_from_dict(doc, migration=True)
    policy = check_policy(sim.migration_policy, "migration_policy") if sim.migration_policy is not None else None
    return sim.scenario, sim.schedule, policy, sim.assignor, sim.name or sim.scenario.name or path.stem


Owners = tuple[tuple[str, tuple[TopicPartition, ...]], ...]


@dataclass(frozen=True)
class MigrationPoint:
    """One point of the history on both sides: ``where`` (``before tick N: event``, or ``the end``)."""

    where: str
    sim_type: str
    live_type: str
    sim_owners: Owners
    live_owners: Owners
    sim_epoch: int
    live_epoch: int | None
    epochs_agree: bool = True  # shown, not part of the verdict (module docstring)
    live_state: str = ""  # the admin's last described state before the point (``Stable``, ``Reconciling``, ...)
    pending: tuple[str, ...] = ()  # members the history (re)started whose new process had no assignment yet
    moved: tuple[int, int] | None = None  # partitions that changed owner since the point before (simulator, broker)

    @property
    def same_shape(self) -> bool:
        """As many members own as many partitions on both sides (which member has one more is the
        assignor's tie-break by member id), the same partitions are owned, each once on both."""
        def shape(o: Owners) -> tuple[int, ...]:
            return tuple(sorted(len(t) for _, t in o))

        def once(o: Owners) -> bool:
            tps = [tp for _, t in o for tp in t]
            return len(tps) == len(set(tps))

        return shape(self.sim_owners) == shape(self.live_owners) and once(self.sim_owners) and once(self.live_owners) \
            and {tp for _, t in self.sim_owners for tp in t} == {tp for _, t in self.live_owners for tp in t}

    @property
    def verdict(self) -> str:
        """``same``, ``shape`` (same shape, another choice of who gets which: module docstring),
        ``unsettled`` (owners differ while the real group had not settled when the event came: the
        admin described it mid-rebalance, or a process the history started had no assignment yet;
        nothing to compare) or ``DIFF``."""
        if self.sim_type != self.live_type:  # a converting process that had not joined yet is timing too
            return "unsettled" if self.pending else "DIFF"
        if self.sim_owners == self.live_owners:
            return "same"
        if self.same_shape:
            return "shape"
        return "unsettled" if self.pending or (self.live_state and self.live_state.lower() != "stable") else "DIFF"

    @property
    def agrees(self) -> bool:
        return self.verdict != "DIFF"

    def to_dict(self) -> dict[str, Any]:
        def owners(o: Owners) -> dict[str, list[list[Any]]]:
            return {m: [[t, p] for t, p in tps] for m, tps in o}

        return {"where": self.where, "verdict": self.verdict, "agrees": self.agrees, "sim": {"type": self.sim_type, "owners": owners(self.sim_owners),
                                                                      "group_epoch": self.sim_epoch},
                "live": {"type": self.live_type, "owners": owners(self.live_owners), "group_epoch": self.live_epoch},
                **({"moved": {"sim": self.moved[0], "live": self.moved[1]}} if self.moved is not None else {})}


@dataclass(frozen=True)
class MigrationComparison:
    name: str
    points: tuple[MigrationPoint, ...]
    sim_types: tuple[str, ...]
    live_types: tuple[str, ...]
    sim_settled: bool
    live_settled: bool
    notes: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        return (self.sim_types == self.live_types and self.sim_settled == self.live_settled
                and all(p.agrees for p in self.points))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "agrees": self.agrees, "types": {"sim": list(self.sim_types), "live": list(self.live_types)},
                "settled": {"sim": self.sim_settled, "live": self.live_settled},
                "points": [p.to_dict() for p in self.points], "notes": list(self.notes)}


def owned_before(timeline: Sequence[Any], at_ms: int) -> Owners:
    """Who owned what just before ``at_ms``, replaying the members' callbacks on the run's timeline
    (``assigned`` adds, ``revoked``/``lost`` take away, a process's start or end clears); members
    owning nothing are left out, as they are on the simulator's side."""
    owned: dict[str, set[TopicPartition]] = {}
    for e in timeline:
        if e.at_ms >= at_ms:
            break
        if e.what == "assigned":
            owned.setdefault(e.member, set()).update(e.partitions)
        elif e.what in ("revoked", "lost"):
            owned.get(e.member, set()).difference_update(e.partitions)
        elif e.what in ("started", "closed", "crashing"):
            owned[e.member] = set()
    return tuple((m, tuple(sorted(tps))) for m, tps in sorted(owned.items()) if tps)


def pending_members(timeline: Sequence[Any], started: Sequence[tuple[str, int]], at_ms: int) -> tuple[str, ...]:
    """The members ``started`` (member, ms the history's join or restart was applied) names whose new
    process reported no assignment between then and ``at_ms``: not in the real group yet."""
    out = set()
    for member, since in started:
        if not any(e.member == member and e.what == "assigned" and since <= e.at_ms < at_ms for e in timeline):
            out.add(member)
    return tuple(sorted(out))


def moved(before: Owners, now: Owners) -> int:
    """Partitions owned at both points whose owner changed: what a sticky assignor keeps low, and a
    count both sides can be held to however their members' names map (module docstring)."""
    was = {tp: m for m, tps in before for tp in tps}
    return sum(1 for m, tps in now for tp in tps if tp in was and was[tp] != m)


def _sim_owners(step: Any) -> Owners:
    return tuple((m.name, tuple(sorted(m.owned))) for m in sorted(step.members, key=lambda m: m.name) if m.owned)


def _live_type(live: Any, at_ms: int) -> tuple[str, int | None, str]:
    """The group's type just before ``at_ms``, its epoch (the admin's group epoch for a consumer
    group, else the highest generation a member was assigned in: a classic description has none),
    and its described state."""
    seen = [d for d in live.described if d.at_ms < at_ms and d.group_type != "none"]
    if not seen:
        return "none", None, ""
    last = seen[-1]
    if last.group_epoch >= 0:
        return last.group_type, last.group_epoch, last.state
    generations = [e.generation for e in live.timeline if e.at_ms < at_ms and e.what == "assigned" and e.generation is not None]
    return last.group_type, (max(generations) if generations else None), last.state


def _collapse(types: Sequence[str]) -> tuple[str, ...]:
    out: list[str] = []
    for t in types:
        if t != "none" and (not out or out[-1] != t):
            out.append(t)
    return tuple(out)


def compare_migration(scenario: Scenario, schedule: Any, live: Any, settings: Any) -> MigrationComparison:
    """The migration simulator on the same history, started fresh, beside the live run (module docstring)."""
    from ..group.consumer.migration import DEFAULT_MIGRATION_POLICY, simulate_migration
    from ..group.consumer.simulator import DEFAULT_ASSIGNOR
    from .compare import fresh_scenario

    policy = settings.migration_policy or DEFAULT_MIGRATION_POLICY
    sim = simulate_migration(fresh_scenario(scenario), schedule.events, config=schedule.config,
                             assignor=settings.remote_assignor or DEFAULT_ASSIGNOR, name=live.name, policy=policy)
    applied = [e for e in live.timeline if e.member == "history"]
    points: list[MigrationPoint] = []
    first: tuple[int, int | None] | None = None

    def point(where: str, step: Any, live_type: str, live_owners: Owners, live_epoch: int | None, state: str,
              pending: tuple[str, ...] = ()) -> None:
        nonlocal first
        if first is None:
            first = (step.group.group_epoch, live_epoch)
        steps_agree = live_epoch is None or first[1] is None or \
            step.group.group_epoch - first[0] == live_epoch - first[1]
        sim_owners = _sim_owners(step)
        moves = (moved(points[-1].sim_owners, sim_owners), moved(points[-1].live_owners, live_owners)) if points else None
        points.append(MigrationPoint(where, step.group.group_type, live_type, sim_owners, live_owners,
                                     step.group.group_epoch, live_epoch, steps_agree, state, pending, moves))

    for i, e in enumerate(schedule.events):
        before = [s for s in sim.steps if s.tick < e.at]
        if not before or i >= len(applied):
            continue
        live_type, live_epoch, state = _live_type(live, applied[i].at_ms)
        started = [(ev.member, entry.at_ms) for ev, entry in zip(schedule.events[:i], applied)
                   if ev.event in ("join", "restart")]
        point(f"before tick {e.at}: {e.describe()}", before[-1], live_type, owned_before(live.timeline, applied[i].at_ms),
              live_epoch, state, pending_members(live.timeline, started, applied[i].at_ms))
    end_ms = (live.timeline[-1].at_ms + 1) if live.timeline else 0
    live_type, live_epoch, state = _live_type(live, end_ms)
    point("the end", sim.steps[-1], live_type, tuple((m, tps) for m, tps in live.settled if tps), live_epoch, state)
    notes = ["both sides start fresh: the scenario's owned partitions and generations are its simulated past"] \
        if any(m.owned for m in scenario.members) else []
    held = all(v.ok for v in live.verdicts if v.monitor == "stable-ownership")
    return MigrationComparison(live.name, tuple(points), _collapse([s.group.group_type for s in sim.steps]),
                               tuple(t for _, t in group_types(live.described)), sim.settled, live.did_settle and held,
                               tuple(notes))


def render_migration_comparison(c: MigrationComparison) -> str:
    lines = [f"the migration simulator beside the broker ({'they agree' if c.agrees else 'they DISAGREE'}):",
             f"  group type: simulator {' -> '.join(c.sim_types)}; broker {' -> '.join(c.live_types) or '(never described)'}",
             f"  settled at the end (live: quiet, and stable-ownership held): simulator {'yes' if c.sim_settled else 'no'}; broker {'yes' if c.live_settled else 'no'}"]
    for p in c.points:
        epoch = ("" if p.live_epoch is None else f", group epoch {p.live_epoch}") + (f", {p.live_state}" if p.live_state else "")
        wait = f" ({', '.join(p.pending)} not in the real group yet)" if p.pending and p.verdict == "unsettled" else ""
        moves = "" if p.moved is None else f"; moved since the point before: simulator {p.moved[0]}, broker {p.moved[1]}"
        lines.append(f"  {p.verdict:<6} {p.where}{wait}{'' if p.epochs_agree else ' (epoch steps apart)'}{moves}")
        lines.append(f"         simulator: {p.sim_type}, group epoch {p.sim_epoch}; "
                     + ("; ".join(f"{m} {format_partitions(t)}" for m, t in p.sim_owners) or "nobody owns anything"))
        lines.append(f"         broker:    {p.live_type}{epoch}; "
                     + ("; ".join(f"{m} {format_partitions(t)}" for m, t in p.live_owners) or "nobody owns anything"))
    lines += [f"  note: {n}" for n in c.notes]
    return "\n".join(lines) + "\n"
