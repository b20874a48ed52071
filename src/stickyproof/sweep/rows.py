"""One sweep task: (seed, index, assignor) -> its rows. No Spark here (tests and benchmarks call it).

``source=histories`` (the default): draw history ``index`` of ``seed`` at the sweep's scale
(``scenarios.histories``), run it through the group protocol with every member configured with the
assignor (``group.stepper.run_history``), and grade every rebalance it recorded: the assignor is
asked on the leader's input and judged on what the members really held (``grading.grade_assignor``
with ``answer=`` the leader's own answer, never run again for round 1, and ``leader_input=``). Then one
``history`` row with the history measures.

``source=adversarial``: sample group ``index`` of ``seed`` with the seeded sampler over the sweep's
space (``scenarios.sampler``) and grade it as ``stickyproof grade`` does.

``direct``: the assignor is handed the group's own fields instead of what the wire carries (as
``grade --direct``): for a history row it is asked again, on the leader's input, without the wire.

A task never raises: a crash becomes rows whose ``error`` says ``stage: TypeName: message``. A
grade's verdict on the assignor (it threw, broke an invariant) is ``valid`` false; a crash of the
grading itself leaves ``valid`` null with the error, so it is never counted as the assignor's.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Sequence

from ..grading import Limits
from ..grading.failure import Verdict, verdict_of
from ..model import Assignment, Scenario, dump_json, jsonable, scenario_to_dict
from .columns import (
    BALANCE_MODES,
    FEATURE_COLUMNS,
    HISTORY,
    INVARIANTS,
    MONITORS,
    REBALANCE,
    coerce,
    empty_row,
    invariant_column,
    is_failing,
    monitor_column,
)

__all__ = [
    "SOURCES",
    "MAIN",
    "SWEEP_SCALES",
    "preset_of",
    "HISTORIES",
    "ADVERSARIAL",
    "TaskParams",
    "TaskFn",
    "run_task",
    "history_task",
    "adversarial_task",
    "grade_scenario_row",
    "error_text",
    "scenario_hash",
    "features_of",
    "truth_of",
    "failure_document",
    "history_document",
    "classic_protocol_fields",
]

MAIN = "main"

HISTORIES = "histories"
ADVERSARIAL = "adversarial"
SOURCES = (HISTORIES, ADVERSARIAL)

SWEEP_SCALES = (MAIN, "mix", "small", "medium", "large", "production")


def preset_of(index: int, scale: str) -> str:
    """The preset history ``index`` is drawn at. ``main`` (the main job's): history 0 large (>= 500
    members, >= 50,000 partitions), every 10th medium, the rest small; any other name is
    ``scenarios.histories.scale_of``'s (``mix``, or one preset for every history)."""
    from ..scenarios.histories import scale_of

    if scale == MAIN:
        return "large" if index == 0 else "medium" if index % 10 == 9 else "small"
    return scale_of(index, scale)


# Texts kept on a row are bounded: a witness list, the unnecessary moves.
_TEXT_LIMIT = 2000


@dataclass(frozen=True)
class TaskParams:
    """What every task of one sweep shares: the source, its scale (histories) or space (adversarial,
    ``KNOB=VALUE`` overrides), ``direct``, and the grading limits (a row uses ``assignor_seconds``,
    ``z3_query_seconds``, ``cpsat_work`` and ``cpsat_seconds``; a history's run ``assignor_seconds``)."""

    source: str = HISTORIES
    scale: str = "mix"
    space: tuple[str, ...] = ()
    direct: bool = False
    limits: Limits = Limits()


TaskFn = Callable[[int, int, str, TaskParams], list[dict[str, Any]]]


def run_task(seed: int, index: int, assignor: str, params: TaskParams) -> list[dict[str, Any]]:
    """The rows of one task of ``params.source``."""
    if params.source == ADVERSARIAL:
        return adversarial_task(seed, index, assignor, params)
    return history_task(seed, index, assignor, params)


# ------------------------------------------------------------------------------------------
# Helpers


def error_text(stage: str, exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    where = ""
    tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        last = tb[-1]
        where = f" (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
    return f"{stage}: {type(exc).__name__}: {message[:500]}{where}"


def scenario_hash(scenario: Scenario) -> str:
    """Content hash of the canonical scenario document."""
    text = json.dumps(scenario_to_dict(scenario), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def features_of(scenario: Scenario) -> dict[str, Any]:
    """The feature columns of a leader's input (``scenarios.features.scenario_features``)."""
    from ..scenarios.features import scenario_features

    given = scenario_features(scenario)
    return {name: coerce(name, given.get(name)) for name, _ in FEATURE_COLUMNS}


def truth_of(scenario: Scenario, prior: dict[str, Sequence[Any]]) -> Scenario:
    """The leader's input with each member's ``owned`` replaced by what it really held (``RebalanceRecord.prior``)."""
    members = tuple(replace(m, owned=tuple(prior.get(m.id, ()))) for m in scenario.members)
    return replace(scenario, members=members)


def _bounded(items: list[Any]) -> str:
    text = json.dumps(items, sort_keys=True, default=str)
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 3] + "..."


def grade_columns(grade: Any, truth: Scenario) -> dict[str, Any]:
    """The grade's columns of a rebalance row (models/invariants.md §4)."""
    from ..oracle.claims import current_owners

    row: dict[str, Any] = {}
    violated = {invariant_column(v.invariant) for v in grade.violations}
    unknown = violated - set(INVARIANTS)
    if unknown:
        raise ValueError(f"grade reported invariants with no column: {', '.join(sorted(unknown))}")
    for name in INVARIANTS:
        row[name] = name in violated
    if grade.violations:
        row["violations"] = _bounded([{"invariant": v.invariant, "witness": jsonable(v.witness)} for v in grade.violations])
    row["valid"] = coerce("valid", grade.valid)
    row["contract"] = grade.contract
    row["notion"] = grade.notion
    row["contract_balanced"] = coerce("contract_balanced", grade.contract_balanced)
    for mode in BALANCE_MODES:
        name = f"balanced_{mode.replace('-', '_')}"
        row[name] = coerce(name, grade.balanced.get(mode))
    for name in ("kept", "optimal_kept", "proven", "stickiness", "moved", "optimal_kept_global", "optimal_kept_view",
                 "stability_judged", "solve_seconds"):
        row[name] = coerce(name, getattr(grade, name))
    row["grade_follow_ups"] = grade.follow_ups
    if grade.optimal_kept is not None:
        row["unnecessary"] = len(grade.unnecessary)
        if grade.unnecessary:
            row["unnecessary_list"] = _bounded([[tp.topic, tp.partition] for tp in grade.unnecessary])
    owned = len(current_owners(truth))
    row["owned"] = owned
    if grade.optimal_kept is not None:
        row["optimal_moves"] = owned - grade.optimal_kept
    if grade.error:
        row["error"] = str(grade.error)
    labels = tuple(getattr(grade, "labels", ()) or ())
    if labels:
        # ``failure:rule`` pairs (``nonexistent:K1,unstable:K1``): which failure each label explains.
        row["hazards"] = ",".join(dict.fromkeys(f"{label.failure}:{label.rule}" for label in labels))
        row["hazard_categories"] = ",".join(dict.fromkeys(label.category for label in labels))
    verdict = verdict_of(grade)
    row["failures"] = ",".join(verdict.failures) or None
    row["signature"] = verdict.signature(verdict.first) if verdict.first else None
    explained = {label.failure for label in labels}
    unexpected = [f for f in verdict.failures if f not in explained]
    row["unexpected"] = ",".join(unexpected) or None
    return row


# ------------------------------------------------------------------------------------------
# Grading one leader input


def grade_scenario_row(
    row: dict[str, Any],
    scenario: Scenario,
    info: Any,
    params: TaskParams,
    *,
    truth: Scenario | None = None,
    answer: Assignment | None = None,
    answer_seconds: float | None = None,
) -> dict[str, Any]:
    """Fill ``row`` with the grade of ``info`` on ``scenario`` (the leader's input; judged on ``truth``).

    A pair Kafka never runs (an eager-only assignor on a cooperative group, R36) is ``skipped``.
    """
    from ..grading import grade_assignor, unsupported_reason

    judged = truth if truth is not None else scenario
    try:
        row.update(features_of(scenario))
        row["scenario_hash"] = scenario_hash(scenario)
    except Exception as exc:  # noqa: BLE001 - a feature crash is this row's error
        row["error"] = error_text("features", exc)
    reason = unsupported_reason(scenario, info)
    if reason is not None:
        row["skipped"] = f"{scenario.protocol} protocol unsupported (R36)"
        return row
    started = time.perf_counter()
    verdict = None
    try:
        if params.direct or answer is None:
            grade = grade_assignor(judged, info, direct=params.direct, leader_input=None if truth is None else scenario,
                                   limits=params.limits)
        else:
            grade = grade_assignor(judged, info, answer=answer, answer_seconds=answer_seconds,
                                   leader_input=None if truth is None else scenario, limits=params.limits)
        row.update(grade_columns(grade, judged))
        row["assign_seconds"] = coerce("assign_seconds", grade.assign_seconds)
        verdict = verdict_of(grade)
    except Exception as exc:  # noqa: BLE001 - a crash of the grading is the row's error, never the assignor's
        row["valid"] = None
        row["error"] = error_text("grade", exc)
    row["grade_seconds"] = time.perf_counter() - started
    if is_failing(row):
        on_truth = truth is not None and truth != scenario
        row["scenario"] = dump_json(failure_document(row, scenario, verdict, params, judged_on_truth=on_truth))
    return row


def failure_document(row: dict[str, Any], scenario: Scenario, verdict: Verdict | None, params: TaskParams, *,
                     judged_on_truth: bool = False) -> dict[str, Any]:
    """What ``DIR/failures/<seed>-<index>-<rebalance>-<assignor>.json`` holds: the leader input and,
    when the assignor has a verdict, its ``expect`` block as a regression file carries it
    (``grading.regression``): the failure kinds (the grade's ``valid`` and violations) or the
    assignor's error (its type; its message in the mechanism). A crash of the grading has no verdict
    on the assignor: the bare leader input."""
    from ..grading.regression import regression_document
    from .store import failure_file_name

    if verdict is None or not verdict.failed:
        return scenario_to_dict(scenario)
    where = f"{row.get('source')} seed {row.get('seed')} index {row.get('index')} rebalance {row.get('rebalance')}"
    found_by = f"Failed in a sweep ({where})"
    if judged_on_truth:
        found_by += (", judged on what the members really held (R37), which this file's claims may not show: "
                     "it replays only where the failure shows on the claims alone (the triage checks that)")
    name = failure_file_name(row["seed"], row["index"], row.get("rebalance"), str(row["assignor"]))[: -len(".json")]
    return regression_document(scenario, verdict, name=name, assignor=str(row["assignor"]), found_by=found_by,
                               direct=params.direct)


# ------------------------------------------------------------------------------------------
# source=histories


def _record_row(seed: int, index: int, assignor: str, scale: str, record: Any) -> dict[str, Any]:
    row = empty_row(REBALANCE, HISTORIES, seed, index, assignor, rebalance=record.number)
    row.update(
        scale=scale, event=record.event, event_tick=record.event_tick, trigger=record.trigger,
        follow_up=bool(record.follow_up), generation=record.generation, epoch=record.epoch, tick=record.tick,
        leader=record.leader, committed=bool(record.committed),
    )
    return row


def rebalance_row(seed: int, index: int, scale: str, info: Any, record: Any, params: TaskParams) -> dict[str, Any]:
    """One history rebalance graded: asked on the leader's input, judged on what members really held."""
    row = _record_row(seed, index, info.name, scale, record)
    if record.scenario is None:
        row["error"] = f"leader: {record.error or 'no assignor could be selected'}"
        return row
    truth = truth_of(record.scenario, record.prior)
    answer = None
    if record.assignment is not None and record.error is None:
        answer = Assignment(dict(record.assignment), dict(record.revoking or {}))
    # An answer the assignor never gave (it threw in the run) is asked for again, to record its error.
    row = grade_scenario_row(row, record.scenario, info, params, truth=truth, answer=answer,
                             answer_seconds=record.assign_seconds)
    if answer is not None and not params.direct:
        row["assign_seconds"] = coerce("assign_seconds", record.assign_seconds)
    return row


def history_row(seed: int, index: int, history: Any, run: Any, rows: Sequence[dict[str, Any]],
                seconds: float) -> dict[str, Any]:
    """The history measures of one run (models/protocol.md §9.2) over its graded rows."""
    row = empty_row(HISTORY, HISTORIES, seed, index, run.assignor)
    known = [r for r in rows if r.get("optimal_moves") is not None and r.get("moved") is not None]
    failed = [v for v in run.monitors if not v.ok]
    row.update(
        scale=history.scale, name=history.name, episodes=",".join(history.episodes),
        start_members=run.members, start_partitions=run.partitions,
        rebalances=len(run.rebalances), follow_ups=run.follow_ups,
        committed_rebalances=sum(1 for r in run.rebalances if r.committed),
        failing_rows=sum(1 for r in rows if is_failing(r)),
        moved_total=sum(r["moved"] for r in rows if r.get("moved") is not None),
        moved_known=sum(r["moved"] for r in known), optimal_moves_known=sum(r["optimal_moves"] for r in known),
        known_rows=len(known), unowned=run.unowned, ended=run.ended, ticks=run.ticks,
        run_seconds=run.seconds, history_seconds=seconds,
        protocol=_protocols(rows),
    )
    row.update(classic_protocol_fields(run))
    verdicts = {v.monitor: v for v in run.monitors}
    for monitor in MONITORS:
        verdict = verdicts.get(monitor)
        row[monitor_column(monitor)] = None if verdict is None else bool(verdict.ok)
    if failed:
        row["monitor_failures"] = _bounded([v.to_dict() for v in failed])
    if failed or row["failing_rows"]:
        row["replay"] = dump_json(dict(run.document))
    return row


def classic_protocol_fields(run: Any) -> dict[str, Any]:
    """The convergence columns of a classic run (``sweep.consumer_protocol.protocol_row_fields``): per
    event tick of the run's document, ticks to the first settled tick; unsettled ticks; unowned
    partition-ticks. The group's first members join at tick 0, the start."""
    from .consumer_protocol import convergence, protocol_row_fields

    ticks = [e["at"] for e in run.document.get("events", ())]
    converge = convergence([0, *ticks], run.unsettled, max(0, run.ticks - 1))
    return protocol_row_fields(converge, run.unsettled, run.unowned_ticks)


def history_document(seed: int, index: int, scale: str, assignor: str) -> dict[str, Any]:
    """The ``stickyproof simulate`` document of history ``index`` of ``seed`` at preset ``scale`` as
    ``history_task`` ran it with ``assignor`` (``run_history``'s document: the clients of the
    assignor's release, its protocols), drawn without running it. The sweep keeps the document of a
    history with a failure only; the report needs one for any rebalance it lists."""
    from ..group.config import client_era
    from ..group.events import EVENTS_FORMAT, events_from_doc, simulation_to_dict
    from ..lookup import get_assignor
    from ..scenarios.histories import draw_history

    info = get_assignor(assignor)
    history = draw_history(seed, index, scale=scale).for_protocols(info.protocols)
    schedule = events_from_doc({"format": EVENTS_FORMAT, "config": dict(history.config), "events": list(history.events)})
    return simulation_to_dict(scenario_to_dict(history.scenario), schedule.events, name=history.name,
                              config=schedule.config, without=client_era(info.variant), assignor=info.name)


def _protocols(rows: Iterable[dict[str, Any]]) -> str | None:
    seen = sorted({r["protocol"] for r in rows if r.get("protocol")})
    return ",".join(seen) or None


def history_task(seed: int, index: int, assignor: str, params: TaskParams) -> list[dict[str, Any]]:
    """Run history ``index`` of ``seed`` with ``assignor``; one row per rebalance, then its history row."""
    from ..lookup import get_assignor
    from ..group.stepper import run_history
    from ..scenarios.histories import draw_history

    started = time.perf_counter()

    def failed(stage: str, exc: BaseException) -> list[dict[str, Any]]:
        row = empty_row(HISTORY, HISTORIES, seed, index, assignor)
        row["error"] = error_text(stage, exc)
        try:
            row["scale"] = preset_of(index, params.scale)
        except Exception:  # noqa: BLE001 - a bad scale is already the error
            pass
        return [row]

    try:
        info = get_assignor(assignor)
    except Exception as exc:  # noqa: BLE001
        return failed("registry", exc)
    if info.consumer_group is not None:  # a server-side (KIP-848) assignor lives consumer-group histories
        from .consumer_rows import consumer_history_task

        return consumer_history_task(seed, index, assignor, params)
    try:
        history = draw_history(seed, index, scale=preset_of(index, params.scale))
    except Exception as exc:  # noqa: BLE001
        return failed("draw", exc)
    try:
        run = run_history(history, info, assignor_seconds=params.limits.assignor_seconds)
    except Exception as exc:  # noqa: BLE001 - the protocol itself crashed: the history's error
        return failed("run", exc)
    rows = [rebalance_row(seed, index, history.scale, info, record, params) for record in run.rebalances]
    rows.append(history_row(seed, index, history, run, rows, time.perf_counter() - started))
    return rows


# ------------------------------------------------------------------------------------------
# source=adversarial


def sample_scenario(seed: int, index: int, space: Sequence[str]) -> Scenario:
    """The (seed, index) group of the seeded sampler over ``space`` (``KNOB=VALUE`` overrides)."""
    from ..scenarios.sampler import Space, sample

    return sample(seed, index, Space.from_overrides(list(space)) if space else None)


def adversarial_task(seed: int, index: int, assignor: str, params: TaskParams) -> list[dict[str, Any]]:
    """Sample group ``index`` of ``seed`` and grade ``assignor`` on it: one row (``rebalance`` 0)."""
    from ..lookup import get_assignor

    row = empty_row(REBALANCE, ADVERSARIAL, seed, index, assignor, rebalance=0)
    try:
        scenario = sample_scenario(seed, index, params.space)
    except Exception as exc:  # noqa: BLE001 - a sampler crash is recorded, not raised
        row["error"] = error_text("sample", exc)
        return [row]
    try:
        info = get_assignor(assignor)
    except Exception as exc:  # noqa: BLE001 - an unloadable assignor is this row's error
        row.update(features_of(scenario))
        row["error"] = error_text("registry", exc)
        row["scenario"] = dump_json(scenario_to_dict(scenario))
        return [row]
    return [grade_scenario_row(row, scenario, info, params)]
