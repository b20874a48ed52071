"""Consumer histories lived through KIP-848's protocol in the sweep, beside the classic ones (issue 23, item 3).

The history row of a server-side assignor carries the protocol run's measures (convergence per
event, unsettled ticks, unowned partition-ticks, moves, monitors); a classic history row carries the
same convergence and ownership measures from the classic simulator; the summary sets both protocols
side by side.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stickyproof.group.consumer import CONVERGENCE_BOUND, consumer_document_from_dict, simulate_consumer_group
from stickyproof.group.config import GroupConfig
from stickyproof.scenarios.consumer_histories import draw_consumer_history
from stickyproof.sweep import consumer_protocol
from stickyproof.sweep.columns import DESCRIPTIONS, HISTORY_COLUMNS, MONITORS, monitor_column
from stickyproof.sweep.console import protocols_lines
from stickyproof.sweep.consumer_protocol import convergence, monitor_labels, protocol_document, run_protocol, spans
from stickyproof.sweep.consumer_rows import consumer_history_task
from stickyproof.sweep.protocols import protocol_lines
from stickyproof.sweep.rows import TaskParams, history_task
from stickyproof.sweep.summary import HISTORY_FRAME, REBALANCE_FRAME, summarize_frame, verdict_line

REGRESSIONS = Path(__file__).parent / "regressions" / "consumer-simulations"
NEW = ("converge_ticks_median", "converge_ticks_max", "converge_events", "unsettled_ticks", "unowned_ticks",
       "coordinator", "protocol_moved", "monitors_failed", "monitor_hazards", "monitor_unexpected")
TIMING = ("run_seconds", "history_seconds", "assign_seconds", "grade_seconds", "solve_seconds")


def _history_row(rows):
    (row,) = [r for r in rows if r["kind"] == "history" and not r.get("migration")]  # a migration's is its own
    return row


# ------------------------------------------------------------------------------------------
# The rows


def test_every_new_column_is_a_history_column_with_a_description():
    names = dict(HISTORY_COLUMNS)
    for name in NEW:
        assert name in names and DESCRIPTIONS.get(name), name


def test_a_consumer_history_row_carries_the_protocol_runs_measures():
    row = _history_row(consumer_history_task(7, 5, "uniform", TaskParams(scale="main")))
    assert row["error"] is None and row["protocol"] == "consumer" and row["coordinator"] == "current"
    assert row["ended"] == "settled" and row["monitors_failed"] is None and row["replay"] is None
    converge = [int(c) for c in row["converge_events"].split(",")]
    # the start (two joins), then a static member's leave: it keeps its target until its session times out
    assert converge == [4, GroupConfig().session_timeout]
    assert row["converge_ticks_max"] == max(converge) and row["converge_ticks_median"] == 5.0
    assert row["unsettled_ticks"] == 7 and row["unowned_ticks"] == 12 and row["protocol_moved"] == 2
    assert all(row[monitor_column(m)] is None for m in MONITORS), "classic monitors mean nothing here"


def test_each_event_settles_within_the_convergence_bound_or_the_timeout_it_waits_for():
    slack = GroupConfig().session_timeout + GroupConfig().restart_downtime
    for index in range(12):
        run = run_protocol(draw_consumer_history(3, index), "uniform")
        assert run.ended == "settled" and not run.failed, index
        assert all(c <= CONVERGENCE_BOUND + 1 + slack for c in run.converge[1:]), (index, run.converge)


def test_the_protocol_run_is_deterministic_by_seed_and_index():
    a = consumer_history_task(11, 3, "consumer-range", TaskParams(scale="main"))
    b = consumer_history_task(11, 3, "consumer-range", TaskParams(scale="main"))
    strip = [{k: v for k, v in r.items() if k not in TIMING} for r in a]
    assert strip == [{k: v for k, v in r.items() if k not in TIMING} for r in b]
    assert run_protocol(draw_consumer_history(11, 3), "uniform") == run_protocol(draw_consumer_history(11, 3), "uniform")
    other = _history_row(consumer_history_task(12, 3, "consumer-range", TaskParams(scale="main")))
    assert (other["converge_events"], other["unowned_ticks"]) != (_history_row(a)["converge_events"],
                                                                  _history_row(a)["unowned_ticks"])


def test_a_created_topic_is_created_in_the_protocol_run_and_its_partitions_owned():
    history = next(h for h in (draw_consumer_history(3, i) for i in range(40)) if "topic-created" in h.episodes)
    doc = protocol_document(history, "uniform")
    created = [e for e in doc["events"] if e["event"] == "create-topic"]
    assert created and all(e["topic"] not in doc["scenario"]["topics"] for e in created)
    parsed = consumer_document_from_dict(json.loads(json.dumps(doc)))
    result = simulate_consumer_group(parsed.scenario, parsed.schedule.events, config=parsed.schedule.config)
    owned = {tp.topic for m in result.steps[-1].members for tp in m.owned}
    assert result.ok and {e["topic"] for e in created} & owned


def test_a_failing_monitor_is_the_history_rows_failure_with_its_label_and_a_replay(monkeypatch):
    # KAFKA-16147 on 3.7's coordinator: drawn history 99 of seed 7 hands a partition to two members
    real = consumer_protocol.run_protocol
    monkeypatch.setattr(consumer_protocol, "run_protocol", lambda h, a: real(h, a, "3.7"))
    row = _history_row(consumer_history_task(7, 99, "uniform", TaskParams(scale="main")))
    assert row["coordinator"] == "3.7"
    assert row["monitors_failed"] == "no-double-ownership,assign-only-released"
    assert row["monitor_unexpected"] == row["monitors_failed"] and row["monitor_hazards"] is None
    assert {v["monitor"] for v in json.loads(row["monitor_failures"])} == {"no-double-ownership", "assign-only-released"}
    replay = consumer_document_from_dict(json.loads(row["replay"]))
    again = simulate_consumer_group(replay.scenario, replay.schedule.events, config=replay.schedule.config,
                                    coordinator=replay.coordinator, assignor=replay.assignor)
    assert set(again.failed) == {"no-double-ownership", "assign-only-released"}
    summary = summarize_frame(Path("out"), pd.DataFrame([], columns=REBALANCE_FRAME + ["cause"]),
                              pd.DataFrame([{k: row.get(k) for k in HISTORY_FRAME}]))
    (line,) = summary.lines
    assert line.monitor_failures == 1 and "failed a group-protocol check (assign-only-released, no-double-ownership)" in verdict_line(line)
    (pooled, mine) = summary.protocols
    assert pooled.monitor_failures == mine.monitor_failures == 1 and pooled.monitor_hazards == 0


def test_a_zombie_past_its_session_is_labelled_a_known_hazard():
    doc = consumer_document_from_dict(json.loads((REGRESSIONS / "member-cut-off-past-its-session-keeps-fetching.json").read_text()))
    result = simulate_consumer_group(doc.scenario, doc.schedule.events, config=doc.schedule.config)
    assert ("no-double-ownership", "zombie") in monitor_labels(result.verdicts)
    assert all(label == "" for m, label in monitor_labels(result.verdicts) if m != "no-double-ownership")


def test_convergence_counts_from_each_event_to_the_first_settled_tick():
    unsettled = spans([1, 2, 3, 7, 8, 20])
    assert unsettled == ((1, 4), (7, 9), (20, 21))
    # tick 0 settled at once; tick 2 waits to tick 4; 5 is settled; 8 to 9; 20 never settles (the run ends at 20)
    assert convergence([0, 2, 5, 8, 20], unsettled, 20) == (1, 3, 1, 2, 1)
    assert convergence([0], unsettled, 20, formed=2) == (5,)


# ------------------------------------------------------------------------------------------
# The classic side


def test_a_classic_history_row_carries_convergence_and_unowned_partition_ticks():
    rows = history_task(7, 1, "range", TaskParams(scale="main"))
    row = _history_row(rows)
    converge = [int(c) for c in row["converge_events"].split(",")]
    assert row["converge_ticks_max"] == max(converge) and row["unsettled_ticks"] >= max(converge) - 1
    # an eager group revokes everything at each rebalance: every rebalance leaves partitions unowned
    assert row["unowned_ticks"] > 0 and row["coordinator"] is None and row["protocol_moved"] is None


# ------------------------------------------------------------------------------------------
# Side by side


def _history(index, assignor, protocol, **values):
    row = {name: None for name in HISTORY_FRAME}
    row.update(source="histories", seed=0, index=index, assignor=assignor, scale="small", rebalances=2, protocol=protocol)
    if protocol != "consumer":
        row.update({monitor_column(m): True for m in MONITORS})
    row.update(values)
    return row


def test_the_summary_sets_the_protocols_side_by_side():
    histories = pd.DataFrame([
        _history(0, "sticky", "eager", converge_ticks_median=4.0, unsettled_ticks=20, unowned_ticks=300,
                 moved_known=4, optimal_moves_known=2),
        _history(1, "sticky", "eager", converge_ticks_median=6.0, unsettled_ticks=40, unowned_ticks=500,
                 moved_known=3, optimal_moves_known=3, **{monitor_column(MONITORS[0]): False}),
        _history(0, "uniform", "consumer", converge_ticks_median=2.0, unsettled_ticks=10, unowned_ticks=30,
                 moved_known=5, optimal_moves_known=5, monitors_failed="no-double-ownership",
                 monitor_hazards="no-double-ownership:zombie"),
    ])
    lines = protocol_lines(histories)
    assert [(x.protocol, x.assignor) for x in lines] == [("classic", None), ("classic", "sticky"),
                                                         ("consumer", None), ("consumer", "uniform")]
    classic, consumer = lines[0], lines[2]
    assert (classic.histories, classic.converge_ticks, classic.unsettled_ticks, classic.unowned_ticks) == (2, 5.0, 30.0, 400.0)
    assert classic.moves_over_optimum == 1.5 and (classic.monitor_failures, classic.monitor_hazards) == (1, 0)
    assert (consumer.converge_ticks, consumer.moves_over_optimum, consumer.monitor_failures, consumer.monitor_hazards) == \
        (2.0, 1.0, 1, 1)
    summary = summarize_frame(Path("out"), pd.DataFrame([], columns=REBALANCE_FRAME + ["cause"]), histories)
    text = protocols_lines(summary)
    assert text[0].startswith("protocols side by side") and all(len(t) <= 120 for t in text)
    assert any(t.startswith("consumer protocol (KIP-848)") and t.rstrip().endswith("1 (1 hazard)") for t in text)
    assert any(t.startswith("classic protocol") for t in text)


@pytest.mark.parametrize("protocol", ["eager", "consumer"])
def test_one_protocol_alone_gets_its_block_and_nothing_makes_none(protocol):
    assert protocol_lines(pd.DataFrame([], columns=HISTORY_FRAME)) == ()
    (pooled, _) = protocol_lines(pd.DataFrame([_history(0, "x", protocol, unowned_ticks=3)]))
    assert pooled.protocol == ("consumer" if protocol == "consumer" else "classic") and pooled.unowned_ticks == 3.0


def test_consumer_monitor_failures_are_findings_a_hazard_or_unexpected():
    from stickyproof.sweep.findings import collect_findings

    zombie = _history(0, "uniform@4.0.0", "consumer", monitors_failed="no-double-ownership",
                      monitor_hazards="no-double-ownership:zombie")
    broken = _history(1, "uniform", "consumer", monitors_failed="convergence", monitor_unexpected="convergence")
    findings = {(f.section, f.rule): f for f in collect_findings([], [zombie, broken, _history(2, "uniform", "consumer")])}
    assert set(findings) == {("hazard", "no-double-ownership:zombie"), ("unexpected", "uniform: monitor convergence")}
    assert findings[("hazard", "no-double-ownership:zombie")].histories == 1, "a release's name explains no coordinator failure"
    assert findings[("unexpected", "uniform: monitor convergence")].failures == {"monitor:convergence": 1}
