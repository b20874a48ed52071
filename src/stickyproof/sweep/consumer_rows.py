"""One sweep task of a server-side (KIP-848) assignor: a consumer-group history -> its rows.

``consumer_history_task(seed, index, assignor, params)`` draws consumer history ``index`` of
``seed`` (``scenarios.consumer_histories``), replays it with the assignor as the group coordinator
calls it, and grades every target computation through the grading's row hook
(``grading.consumer.consumer_group_row``, here on the step's own answer: the assignor is not asked
twice). One ``rebalance`` row per computation (``epoch`` = the group epoch, ``trigger`` = the
event's kind, ``protocol`` = ``consumer``), then one ``history`` row. Like ``rows.history_task`` it
never raises: a crash is a row whose ``error`` says ``stage: TypeName: message``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..model import dump_json
from .columns import HISTORY, INVARIANTS, REBALANCE, coerce, empty_row, is_failing
from .rows import HISTORIES, MAIN, TaskParams, error_text, failure_document, features_of, scenario_hash

__all__ = ["CONSUMER_INVARIANTS", "consumer_history_task", "consumer_scale", "consumer_step_scenario"]

#: The server-side contracts' own failures (models/invariants.md §5.2) -> their row columns; ``stickiness``
#: (K1: kept fewer than a within-one assignment keeps) is ``kept_below_promise``, the ratio's column being taken.
CONSUMER_INVARIANTS: dict[str, str] = {
    "not-fixed-point": "not_fixed_point",
    "order-dependent": "order_dependent",
    "not-contiguous": "not_contiguous",
    "stickiness": "kept_below_promise",
}

#: Classic-only features (generations, protocol versions) that mean nothing for a consumer group.
_CLASSIC_FEATURES = ("versions", "min_version", "stale_claimants", "unknown_generation_claimants", "double_claims")

_SCALAR = ("valid", "contract", "notion", "contract_balanced", "kept", "optimal_kept", "proven", "stickiness", "moved",
           "optimal_kept_global", "stability_judged", "solve_seconds")
_CONSUMER = ("consumer_contract", "consumer_subscription", "consumer_fixed_point_owed", "consumer_stable",
             "consumer_order_reordered", "consumer_order_renamed", "consumer_at_optimum", "consumer_first_worse_tier",
             "consumer_gap_sum_squares", "consumer_gap_spread", "consumer_gap_rack_local", "consumer_gap_kept")


def consumer_scale(index: int, scale: str) -> str:
    """The consumer preset of history ``index`` under the sweep's ``--scale``: ``main``/``mix`` pick by
    index (``consumer_scale_of``), ``small``/``medium`` are taken as they are; nothing larger is drawn."""
    from ..errors import InvalidScenario
    from ..scenarios.consumer_histories import CONSUMER_SCALES, consumer_scale_of

    if scale in (MAIN, "mix"):
        return consumer_scale_of(index)
    if scale in CONSUMER_SCALES:
        return scale
    raise InvalidScenario("scale", f"consumer-group histories are drawn at {', '.join(CONSUMER_SCALES)}, main or mix; "
                                   f"got {scale!r}")


def _bounded(items: list[Any]) -> str:
    text = json.dumps(items, sort_keys=True, default=str)
    return text if len(text) <= 2000 else text[:1997] + "..."


def _labels(info: Any, failures: tuple[str, ...]) -> tuple[str | None, str | None, str | None]:
    """(hazards, hazard_categories, unexpected): a historical release's failures are its incident,
    as ``grading.hazards`` labels a classic one; today's assignor's are unexpected."""
    from ..assignors.consumer.releases import SERVER_SIDE_RELEASES

    if not failures:
        return None, None, None
    release = next((r for r in SERVER_SIDE_RELEASES if r.name == info.name), None)
    if release is not None and release.version != "current":
        return ",".join(f"{f}:{release.name}" for f in failures), "historical", None
    return None, None, ",".join(failures)


def _grade_fields(row: dict[str, Any], step: Any, info: Any, params: TaskParams) -> None:
    """The grade of one step, through the row hook, as the row's columns."""
    from ..grading.consumer import consumer_row_fields, grade_consumer_group
    from ..grading.failure import verdict_of

    started = time.perf_counter()
    try:
        row.update(features_of(step.scenario))
        for name in _CLASSIC_FEATURES:
            row[name] = None
        row["protocol"] = "consumer"
        row["scenario_hash"] = scenario_hash(step.scenario)
    except Exception as exc:  # noqa: BLE001 - a feature crash is this row's error
        row["error"] = error_text("features", exc)
    try:
        grade = grade_consumer_group(step.scenario, info, limits=params.limits, answer=step.answer)
        fields = consumer_row_fields(grade)
        for name in _SCALAR:
            row[name] = coerce(name, fields.get(name))
        for mode, value in (fields.get("balanced") or {}).items():
            name = f"balanced_{mode.replace('-', '_')}"
            if name in row:
                row[name] = coerce(name, value)
        for name in _CONSUMER:
            row[name] = coerce(name, fields.get(name))
        violated = {v["invariant"] for v in fields.get("violations") or ()}
        for name in INVARIANTS:
            row[name] = name.replace("_", "-") in violated
        for kind, column in CONSUMER_INVARIANTS.items():
            row[column] = kind in violated
        if fields.get("violations"):
            row["violations"] = _bounded(fields["violations"])
        if fields.get("error"):
            row["error"] = str(fields["error"])
        row["owned"] = sum(len(m.owned) for m in step.scenario.members)
        if row.get("optimal_kept") is not None:
            row["optimal_moves"] = row["owned"] - row["optimal_kept"]
            # moves beyond the fewest a balanced target needs (K1 then K4); unmeasured where the
            # assignor owes no balance (heterogeneous uniform), as its stickiness is
            if row.get("stickiness") is not None and row.get("kept") is not None:
                row["unnecessary"] = max(0, row["optimal_kept"] - row["kept"])
        row["assign_seconds"] = step.assign_seconds
        verdict = verdict_of(grade)
        row["failures"] = ",".join(verdict.failures) or None
        row["signature"] = verdict.signature(verdict.first) if verdict.first else None
        row["hazards"], row["hazard_categories"], row["unexpected"] = _labels(info, verdict.failures)
    except Exception as exc:  # noqa: BLE001 - a crash of the grading is the row's error, never the assignor's
        row["valid"], verdict = None, None
        row["error"] = error_text("grade", exc)
    row["grade_seconds"] = time.perf_counter() - started
    if is_failing(row):
        row["scenario"] = dump_json(failure_document(row, step.scenario, verdict, params))


def consumer_history_task(seed: int, index: int, assignor: str, params: TaskParams) -> list[dict[str, Any]]:
    """Replay consumer history ``index`` of ``seed`` with the server-side ``assignor``; one row per
    target computation, then its history row."""
    from ..grading import consumer_group_run
    from ..lookup import get_assignor
    from ..scenarios.consumer_histories import draw_consumer_history, run_consumer_history

    started = time.perf_counter()
    history_row = empty_row(HISTORY, HISTORIES, seed, index, assignor)
    history_row["protocol"] = "consumer"
    try:
        info = get_assignor(assignor)
        scale = consumer_scale(index, params.scale)
        history_row["scale"] = scale
        history = draw_consumer_history(seed, index, scale=scale)
        steps = run_consumer_history(history, consumer_group_run(info, limits=params.limits))
    except Exception as exc:  # noqa: BLE001 - the draw or the replay crashed: the history's error
        history_row["error"] = error_text("run", exc)
        return [history_row]
    rows: list[dict[str, Any]] = []
    for step in steps:
        row = empty_row(REBALANCE, HISTORIES, seed, index, assignor, rebalance=step.number)
        row.update(scale=scale, event=step.event.text, trigger=step.event.kind, follow_up=False, epoch=step.epoch,
                   committed=step.answer is not None)
        _grade_fields(row, step, info, params)
        rows.append(row)
    known = [r for r in rows if r.get("optimal_moves") is not None and r.get("moved") is not None]
    history_row.update(
        name=history.name, episodes=",".join(history.episodes),
        start_members=history.start_members,
        start_partitions=sum(t.partitions for t in history.start.topics),
        rebalances=len(rows), follow_ups=0, committed_rebalances=sum(1 for r in rows if r["committed"]),
        failing_rows=sum(1 for r in rows if is_failing(r)),
        moved_total=sum(r["moved"] for r in rows if r.get("moved") is not None),
        moved_known=sum(r["moved"] for r in known), optimal_moves_known=sum(r["optimal_moves"] for r in known),
        known_rows=len(known), ended="settled",
    )
    _protocol_fields(history_row, history, assignor)
    history_row["history_seconds"] = time.perf_counter() - started
    return rows + [history_row] + _migration(seed, index, assignor)


def _migration(seed: int, index: int, assignor: str) -> list[dict[str, Any]]:
    """The migration row this task also writes (``sweep.migration_rows``), for the first few indexes
    and today's assignors; none otherwise."""
    from .migration_rows import migration_row, wants_migration

    return [migration_row(seed, index, assignor)] if wants_migration(index, assignor) else []


def _protocol_fields(row: dict[str, Any], history: Any, assignor: str) -> None:
    """The history lived through the consumer protocol (``consumer_protocol.run_protocol``): its
    convergence, unowned partition-heartbeats, moves and monitors on the history row. A failed
    monitor is the history's failure, labelled when Kafka's design explains it; a crash of the run is
    the row's ``error``."""
    from .consumer_protocol import run_protocol, run_row_fields

    try:
        run = run_protocol(history, assignor)
    except Exception as exc:  # noqa: BLE001 - the protocol run crashed: the history's error
        row["error"] = error_text("protocol", exc)
        return
    row.update(run_row_fields(run))


def consumer_step_scenario(seed: int, index: int, scale: str, assignor: str, rebalance: int) -> Any:
    """The group step ``rebalance`` of consumer history ``index`` handed ``assignor`` (the report's
    replay of a row the sweep kept no file for)."""
    from ..grading import consumer_group_run
    from ..lookup import get_assignor
    from ..scenarios.consumer_histories import draw_consumer_history, run_consumer_history

    history = draw_consumer_history(seed, index, scale=scale)
    steps = run_consumer_history(history, consumer_group_run(get_assignor(assignor)))
    return steps[rebalance - 1].scenario
