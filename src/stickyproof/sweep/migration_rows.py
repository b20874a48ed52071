"""A classic -> consumer migration as a history of the main job: one drawn migration, one history row.

The main job runs, beside each of today's server-side assignors' consumer histories, the first
``MIGRATION_HISTORIES`` drawn migrations (``scenarios.migration_histories``): a classic group
upgraded online by restarting its members one by one with ``group.protocol=consumer``, a change or
two while it is a consumer group, sometimes downgraded back. Each runs through the migration
simulator (``group.consumer.migration``, today's coordinator, the row's assignor as the
server-side assignor, ``group.consumer.migration.policy=bidirectional``) and is measured as the
consumer histories are (``sweep.consumer_protocol``: ticks to settle per event, unsettled ticks,
unowned partition-ticks, partitions a member gave up, monitors with their labels).

The row is a ``history`` row of the consumer history's task (seed, index, assignor), told apart by
``migration`` true (its replay file ``DIR/histories/<seed>-<index>-<assignor>-migration.json``);
``protocol`` names the classic group's rebalance protocol and ``consumer``. Timing: each step comes
once the one before has had the time to settle (``consumer_protocol.gap_after``), so each step's
convergence is its own; the first at tick 2, after the stable classic group's first heartbeats.
"""

from __future__ import annotations

import time
from typing import Any

from .columns import HISTORY, empty_row
from .consumer_protocol import COORDINATOR, ProtocolRun, convergence, gap_after, run_row_fields, spans

__all__ = ["MIGRATION_HISTORIES", "MIGRATION_POLICY", "migration_document", "run_migration", "migration_row",
           "wants_migration"]

#: How many drawn migrations each of today's server-side assignors runs in the main job (indexes 0-7; tens
#: of milliseconds each, docs/sweep.md).
MIGRATION_HISTORIES = 8

#: The policy the drawn migrations run under: Kafka's default, which allows both directions.
MIGRATION_POLICY = "bidirectional"

_SIMULATOR_KIND = {"restart": "restart", "join": "join", "subscribe": "subscribe", "partitions": "add-partitions"}


def migration_document(history: Any, assignor: str, coordinator: str = COORDINATOR) -> dict[str, Any]:
    """The ``stickyproof.simulation/1`` migration history ``stickyproof simulate`` replays: the
    drawn steps in the simulator's vocabulary, spaced by ``gap_after``."""
    from ..group.config import GroupConfig
    from ..group.events import SIMULATION_FORMAT

    config = GroupConfig()
    events: list[dict[str, Any]] = []
    at = 2
    for step in history.steps:
        kind = _SIMULATOR_KIND[step.kind]
        if events:
            at += gap_after(events[-1]["event"], config)
        f = dict(step.fields)
        if step.kind == "partitions":
            events.append({"at": at, "event": kind, "topic": f["topic"], "count": f["count"]})
        else:
            events.append({"at": at, "event": kind, **f})
    last = max((e["at"] for e in events), default=0)
    return {"format": SIMULATION_FORMAT, "name": history.name, "scenario": dict(history.scenario),
            "config": {"max_ticks": last + 100}, "events": events, "assignor": assignor, "coordinator": coordinator,
            "migration_policy": MIGRATION_POLICY}


def run_migration(history: Any, assignor: str, coordinator: Any = COORDINATOR) -> ProtocolRun:
    """Run ``history`` (a ``MigrationHistory``) on ``coordinator`` (a release name, or a
    ``CoordinatorRelease``) with the server-side ``assignor``; the run's verdicts and measures, read
    at the end of every tick as ``consumer_protocol.run_protocol`` reads them."""
    from ..group.consumer import consumer_document_from_dict
    from ..group.consumer.migration import MigrationSimulation, check_policy
    from .consumer_protocol import _Observer

    started = time.perf_counter()
    name = coordinator if isinstance(coordinator, str) else coordinator.name
    document = migration_document(history, assignor, name)
    doc = consumer_document_from_dict(document, migration=True)
    sim = MigrationSimulation(doc.scenario, doc.schedule.events, config=doc.schedule.config, coordinator=coordinator,
                              assignor=assignor, name=doc.name, policy=check_policy(MIGRATION_POLICY, "migration_policy"))
    observer = _Observer()
    result = sim.run(observe=observer)
    event_ticks = tuple(sorted({e.at for e in doc.schedule.events}))
    unsettled = spans(observer.unsettled)
    return ProtocolRun(
        verdicts=result.verdicts, event_ticks=event_ticks,
        converge=_convergence(doc.schedule.events, unsettled, observer.last, doc.schedule.config.restart_downtime),
        unsettled=unsettled, unowned=observer.unowned, moved=observer.moved, ticks=observer.last + 1, ended=result.ended,
        coordinator=result.coordinator, document=document, seconds=time.perf_counter() - started,
    )


def _convergence(events: Any, unsettled: Any, end: int, downtime: int) -> tuple[int, ...]:
    """Per event tick, ``consumer_protocol.convergence``'s ticks to settle, where a restart's count
    from its tick to the first settled tick once the new process is back (``restart_downtime``
    later): a classic member's LeaveGroup can leave the group settled for the tick it is gone."""
    out = []
    for at in sorted({e.at for e in events}):
        back = at + (downtime if any(e.at == at and e.event == "restart" for e in events) else 0)
        out.append(convergence((back,), unsettled, end)[0] + back - at)
    return tuple(out)


def wants_migration(index: int, assignor: str) -> bool:
    """Whether the task (index, assignor) also runs migration ``index``: the first
    ``MIGRATION_HISTORIES`` indexes, today's server-side assignors only (a historical assignor
    release reproduces its own incident; the migration judges the coordinator)."""
    from ..assignors.consumer.releases import SERVER_SIDE_RELEASES
    from ..lookup import get_assignor

    if index >= MIGRATION_HISTORIES:
        return False
    info = get_assignor(assignor)
    release = next((r for r in SERVER_SIDE_RELEASES if r.name == info.name), None)
    return info.consumer_group is not None and (release is None or release.version == "current")


def migration_row(seed: int, index: int, assignor: str, coordinator: Any = COORDINATOR) -> dict[str, Any]:
    """The history row of migration ``index`` of ``seed`` with ``assignor``. Never raises: a crash
    of the draw or the run is the row's ``error``. A failed monitor is the row's failure, labelled
    when Kafka's design explains it (``consumer_protocol.HAZARDS``), else unexpected."""
    from ..scenarios.migration_histories import draw_migration_history
    from .rows import HISTORIES, error_text

    started = time.perf_counter()
    row = empty_row(HISTORY, HISTORIES, seed, index, assignor)
    row["migration"] = True
    try:
        history = draw_migration_history(seed, index)
        scenario = history.scenario
        row.update(name=history.name, scale="small", protocol=f"{scenario['protocol']},consumer",
                   episodes=",".join(["upgrade"] + [s.kind for s in history.steps if s.kind != "restart"]
                                     + (["downgrade"] if history.downgraded else [])),
                   start_members=len(scenario["members"]), start_partitions=sum(scenario["topics"].values()))
        run = run_migration(history, assignor, coordinator)
    except Exception as exc:  # noqa: BLE001 - the draw or the run crashed: the migration's error
        row["error"] = error_text("migration", exc)
        row["history_seconds"] = time.perf_counter() - started
        return row
    row.update(run_row_fields(run))
    row["history_seconds"] = time.perf_counter() - started
    return row
