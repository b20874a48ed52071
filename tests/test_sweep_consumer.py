"""Consumer-group (KIP-848) histories in the sweep, without Spark: drawn from the seed, replayed as the
coordinator's target computations, graded through the row hook; KAFKA-18688 in the rows.

Each step's input must be what the coordinator could hand the assignor (docs/scenario-format.md,
"Consumer groups"): the previous targets, no partition in two of them, none past its topic's count.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from stickyproof.grading import consumer_group_run, grade_assignor
from stickyproof.lookup import get_assignor
from stickyproof.model import scenario_from_dict, scenario_to_dict
from stickyproof.scenarios.consumer_histories import draw_consumer_history, run_consumer_history
from stickyproof.sweep.columns import HISTORY, REBALANCE, arrow_schema, with_failing
from stickyproof.sweep.rows import MAIN, TaskParams, run_task
from stickyproof.sweep.run import DEFAULT_LIMITS, is_historical, resolve_assignors

PARAMS = TaskParams(scale=MAIN, limits=DEFAULT_LIMITS)

#: History 2 of seed 0: a static member's restart reorders the members, then a join; 4.0.0 moves a
#: balanced group's "+1" partition there (found by the sweep; the index is pinned by the seed).
KAFKA_18688_HISTORY = 2


def test_a_consumer_history_is_a_pure_function_of_seed_and_index():
    assert draw_consumer_history(0, 3) == draw_consumer_history(0, 3)
    assert draw_consumer_history(0, 3) != draw_consumer_history(0, 4)
    assert draw_consumer_history(1, 3) != draw_consumer_history(0, 3)
    assert [draw_consumer_history(0, i).scale for i in (0, 6, 7, 15)] == ["small", "small", "medium", "medium"]


@pytest.mark.parametrize("assignor", ["uniform", "consumer-range", "uniform@4.0.0"])
def test_every_step_hands_over_the_previous_targets_as_the_coordinator_would(assignor):
    for index in range(8):
        history = draw_consumer_history(0, index)
        steps = run_consumer_history(history, consumer_group_run(get_assignor(assignor)))
        assert len(steps) == history.computations and [s.epoch for s in steps] == list(range(1, len(steps) + 1))
        previous: dict[str, tuple] = {}
        ids_before: set[str] = set()
        for step in steps:
            s = step.scenario
            # a document the coordinator could hand over: the consumer-group validation accepts it
            assert scenario_from_dict(json.loads(json.dumps(scenario_to_dict(s)))) == s
            for m in s.members:
                if m.id in ids_before:
                    assert m.owned == previous.get(m.id, ())
                elif m.owned:  # a new id holding a target: a static member's restart kept it
                    assert m.instance_id is not None
            previous = {m: tuple(tps) for m, tps in step.answer.assignment.items()}
            ids_before = {m.id for m in s.members}


def test_a_static_restart_keeps_the_target_under_the_new_member_id():
    for index in range(40):
        history = draw_consumer_history(0, index)
        restarts = [e for e in history.events if e.kind == "static-restart"]
        if not restarts:
            continue
        steps = run_consumer_history(history, consumer_group_run(get_assignor("uniform")))
        event = restarts[0]
        before = [s for s in steps if event.fields["id"] in {m.id for m in s.scenario.members}]
        after = [s for s in steps if event.fields["new_id"] in {m.id for m in s.scenario.members}]
        if not before or not after:
            continue
        held = tuple(before[-1].answer.assignment.get(event.fields["id"], ()))
        assert after[0].scenario.member(event.fields["new_id"]).owned == held
        assert not event.bumps_epoch
        return
    pytest.fail("no history of seed 0 below 40 restarts a static member between two computations")


def _rows(index: int, assignor: str) -> list[dict]:
    rows = [with_failing(r) for r in run_task(0, index, assignor, PARAMS)]
    pa.RecordBatch.from_pylist(rows, schema=arrow_schema())  # the Parquet schema takes them
    assert not set().union(*(r.keys() for r in rows)) - set(arrow_schema().names)
    return rows


def test_consumer_history_rows_carry_provenance_and_the_consumer_columns():
    *rebalances, history, migration = _rows(5, "uniform")  # a migration's row comes last (sweep/migration_rows.py)
    assert migration["kind"] == HISTORY and migration["migration"] is True
    assert history["kind"] == HISTORY and history["protocol"] == "consumer" and history["scale"] == "small"
    assert history["rebalances"] == len(rebalances) and history["failing_rows"] == 0
    assert all(r["kind"] == REBALANCE and r["protocol"] == "consumer" and r["trigger"] and r["event"] for r in rebalances)
    assert [r["epoch"] for r in rebalances] == list(range(1, len(rebalances) + 1))
    assert all(r["consumer_contract"] in ("uniform-homogeneous", "uniform-heterogeneous") for r in rebalances)
    assert all(r["valid"] is True and r["proven"] is True and r["versions"] is None for r in rebalances)
    assert history["moved_total"] == sum(r["moved"] for r in rebalances)
    for r in rebalances:  # measured exactly where stickiness is
        assert (r["unnecessary"] is None) == (r["stickiness"] is None)
        if r["unnecessary"] is not None:
            assert r["unnecessary"] == r["optimal_kept"] - r["kept"] >= 0


def test_kafka_18688_moves_count_as_unnecessary_on_its_release():
    old = [r for r in _rows(KAFKA_18688_HISTORY, "uniform@4.0.0") if r["kind"] == REBALANCE and r["not_fixed_point"]]
    assert old and all(r["unnecessary"] > 0 for r in old if r["stickiness"] is not None)
    assert any(r["stickiness"] is not None for r in old)


def test_kafka_18688_is_reproduced_by_its_release_record_and_not_by_todays_uniform():
    old = [r for r in _rows(KAFKA_18688_HISTORY, "uniform@4.0.0") if r["kind"] == REBALANCE]
    moved = [r for r in old if r["not_fixed_point"]]
    assert moved and all(r["failing"] and r["hazard_categories"] == "historical" and r["unexpected"] is None
                         and "not-fixed-point:uniform@4.0.0" in r["hazards"] for r in moved)
    # the very group 4.0.0 moved, handed to today's uniform: returned unchanged, as the contract owes
    doc = json.loads(moved[0]["scenario"])
    doc.pop("expect")
    group = scenario_from_dict(doc)
    assert "not-fixed-point" in grade_assignor(group, "uniform@4.0.0").violated()
    today = grade_assignor(group, "uniform")
    assert today.valid and today.consumer["fixed_point_owed"] and today.kept == today.optimal_kept
    # and today's uniform lives the same history without a failing row
    for assignor in ("uniform", "consumer-range"):
        assert not [r for r in _rows(KAFKA_18688_HISTORY, assignor) if r.get("failing")]


def test_the_main_job_sweeps_the_server_side_assignors_beside_the_classic_ones():
    names = resolve_assignors(None)
    assert {"uniform", "consumer-range", "uniform@4.0.0", "range", "sticky"} <= set(names)
    assert is_historical("uniform@4.0.0") and not is_historical("uniform") and not is_historical("consumer-range")
    assert "uniform" not in resolve_assignors(None, server_side=False)
