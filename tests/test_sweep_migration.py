"""A classic -> consumer migration as a history of the main job (sweep/migration_rows.py): drawn from
(seed, index) alone, run through the migration simulator, graded as a history row with the protocol
columns, its failures labelled, and a line of its own in the protocols side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa

from stickyproof.group.config import GroupConfig
from stickyproof.group.consumer import consumer_document_from_dict
from stickyproof.group.consumer.migration import MIGRATION_CONVERGENCE_BOUND, simulate_migration
from stickyproof.scenarios.migration_histories import draw_migration_history
from stickyproof.sweep.columns import DESCRIPTIONS, HISTORY_COLUMNS, empty_row
from stickyproof.sweep.console import protocols_lines
from stickyproof.sweep.consumer_rows import consumer_history_task
from stickyproof.sweep.findings import collect_findings
from stickyproof.sweep.migration_rows import MIGRATION_HISTORIES, migration_document, migration_row, run_migration
from stickyproof.sweep.protocols import protocol_lines
from stickyproof.sweep.report import _protocols
from stickyproof.sweep.rows import TaskParams
from stickyproof.sweep.store import SweepDir, history_file_name
from stickyproof.sweep.summary import HISTORY_FRAME, REBALANCE_FRAME, summarize_frame

TIMING = ("run_seconds", "history_seconds")


def _frame(*rows):
    return pd.DataFrame([{k: r.get(k) for k in HISTORY_FRAME} for r in rows])


# ------------------------------------------------------------------------------------------
# The draw


def test_a_migration_is_drawn_from_seed_and_index_alone():
    assert draw_migration_history(4, 1) == draw_migration_history(4, 1)
    assert draw_migration_history(4, 1) != draw_migration_history(4, 2)
    assert draw_migration_history(4, 1) != draw_migration_history(5, 1)


def test_every_member_is_upgraded_once_and_a_downgrade_restarts_every_process_classic():
    for index in range(30):
        h = draw_migration_history(0, index)
        members = [m["id"] for m in h.scenario["members"]]
        upgrades = [s.fields["member"] for s in h.steps if s.kind == "restart" and s.fields["group_protocol"] == "consumer"]
        assert sorted(upgrades) == members
        joined = [s.fields["member"] for s in h.steps if s.kind == "join"]
        assert all(s.fields["group_protocol"] == "consumer" for s in h.steps if s.kind == "join")
        downgrades = [s.fields["member"] for s in h.steps if s.kind == "restart" and s.fields["group_protocol"] == "classic"]
        assert sorted(downgrades) == (sorted(members + joined) if h.downgraded else [])
        # nothing changes while the group is classic: every change comes after an upgrade, before any downgrade
        for i, step in enumerate(h.steps):
            if step.kind != "restart":
                before = {s.fields["group_protocol"] for s in h.steps[:i] if s.kind == "restart"}
                assert before == {"consumer"}, (index, i)


# ------------------------------------------------------------------------------------------
# The row


def test_the_migration_row_is_a_history_column_with_a_description():
    assert dict(HISTORY_COLUMNS)["migration"] == "bool" and DESCRIPTIONS["migration"]


def test_a_migration_row_carries_the_protocol_columns():
    row = migration_row(0, 0, "uniform")
    assert row["kind"] == "history" and row["migration"] is True and row["error"] is None
    assert row["protocol"] == "cooperative,consumer" and row["episodes"] == "upgrade,downgrade"
    assert row["coordinator"] == "current" and row["ended"] == "settled"
    # two members upgraded then downgraded: each restart settles within the downtime and three heartbeats
    assert row["converge_events"] == "3,4,4,3" and row["converge_ticks_max"] == 4 and row["converge_ticks_median"] == 3.5
    assert (row["unsettled_ticks"], row["unowned_ticks"], row["protocol_moved"], row["ticks"]) == (6, 12, 12, 23)
    assert row["monitors_failed"] is None and row["monitor_failures"] is None and row["replay"] is None


def test_the_migration_row_is_deterministic():
    a, b = migration_row(3, 1, "consumer-range"), migration_row(3, 1, "consumer-range")
    assert {k: v for k, v in a.items() if k not in TIMING} == {k: v for k, v in b.items() if k not in TIMING}


def test_drawn_migrations_settle_each_step_within_the_bound_and_hold_every_monitor_today():
    downtime = GroupConfig().restart_downtime
    for seed in range(12):
        for assignor in ("uniform", "consumer-range"):
            run = run_migration(draw_migration_history(seed, seed % MIGRATION_HISTORIES), assignor)
            assert run.failed == () and run.ended == "settled", (seed, assignor)
            assert max(run.converge) <= downtime + MIGRATION_CONVERGENCE_BOUND, (seed, assignor, run.converge)


def test_the_main_job_runs_migrations_on_the_first_indexes_of_todays_server_side_assignors():
    rows = consumer_history_task(7, 1, "uniform", TaskParams(scale="main"))
    (mine,) = [r for r in rows if r.get("migration")]
    assert [r["kind"] for r in rows].count("history") == 2 and mine == {**migration_row(7, 1, "uniform"),
                                                                        **{k: mine[k] for k in TIMING}}
    assert not any(r.get("migration") for r in consumer_history_task(7, MIGRATION_HISTORIES, "uniform",
                                                                     TaskParams(scale="main")))
    assert not any(r.get("migration") for r in consumer_history_task(7, 1, "uniform@4.0.0", TaskParams(scale="main")))


def test_a_broken_coordinator_release_is_a_failing_row_with_its_label_and_a_replay():
    # before KAFKA-19449 a member waits in UNRELEASED_PARTITIONS for partitions it revokes itself
    row = migration_row(1, 0, "consumer-range", "before-kafka-19449")
    assert row["coordinator"] == "before-kafka-19449"
    assert row["monitors_failed"] == row["monitor_unexpected"] == "unreleased-only-when-held"
    assert row["monitor_hazards"] is None
    assert {v["monitor"] for v in json.loads(row["monitor_failures"])} == {"unreleased-only-when-held"}
    doc = consumer_document_from_dict(json.loads(row["replay"]), migration=True)
    again = simulate_migration(doc.scenario, doc.schedule.events, config=doc.schedule.config, coordinator=doc.coordinator,
                               assignor=doc.assignor, policy=doc.migration_policy)
    assert again.failed == ("unreleased-only-when-held",)
    findings = {(f.section, f.rule): f for f in collect_findings([], [row])}
    (finding,) = findings.values()
    assert (finding.section, finding.rule) == ("unexpected", "consumer-range: migration monitor unreleased-only-when-held")
    assert finding.history.migration and finding.history.history_file() == "1-0-consumer-range-migration.json"
    # today's coordinator runs the same migration clean
    assert migration_row(1, 0, "consumer-range")["monitors_failed"] is None


def test_the_replay_document_is_what_simulate_runs():
    h = draw_migration_history(2, 0)
    doc = migration_document(h, "uniform")
    assert doc["migration_policy"] == "bidirectional" and doc["coordinator"] == "current"
    ats = [e["at"] for e in doc["events"]]
    assert ats == sorted(ats) and len(set(ats)) == len(ats) and ats[0] == 2


def test_a_migrations_replay_file_does_not_overwrite_its_tasks_consumer_history(tmp_path):
    out = SweepDir(tmp_path)
    out.histories.mkdir(parents=True)
    rows = []
    for migration in (None, True):
        row = empty_row("history", "histories", 0, 1, "uniform")
        row.update(migration=migration, replay=json.dumps({"migration": migration}))
        rows.append(row)
    out._write_witnesses(pa.Table.from_pylist(rows))
    assert json.loads((out.histories / history_file_name(0, 1, "uniform")).read_text()) == {"migration": None}
    assert json.loads((out.histories / history_file_name(0, 1, "uniform", True)).read_text()) == {"migration": True}


# ------------------------------------------------------------------------------------------
# The summary and the report


def test_the_protocols_side_by_side_has_a_migration_line():
    consumer = {name: None for name in HISTORY_FRAME}
    consumer.update(source="histories", seed=0, index=0, assignor="uniform", protocol="consumer", converge_ticks_median=2.0,
                    unsettled_ticks=5, unowned_ticks=10)
    clean = migration_row(0, 0, "uniform")
    broken = migration_row(1, 0, "consumer-range", "before-kafka-19449")
    histories = _frame(consumer, clean, broken)
    lines = protocol_lines(histories)
    assert [(x.protocol, x.assignor) for x in lines] == [("consumer", None), ("consumer", "uniform"), ("migration", None),
                                                         ("migration", "consumer-range"), ("migration", "uniform")]
    pooled = lines[2]
    assert pooled.histories == 2 and (pooled.monitor_failures, pooled.monitor_hazards) == (1, 0)
    assert pooled.converge_ticks == (clean["converge_ticks_median"] + broken["converge_ticks_median"]) / 2
    assert pooled.moves_over_optimum is None and lines[0].histories == 1
    summary = summarize_frame(Path("out"), pd.DataFrame([], columns=REBALANCE_FRAME + ["cause"]), histories)
    text = protocols_lines(summary)
    assert all(len(t) <= 120 for t in text) and text[0].endswith("and migrations")
    assert any(t.startswith("migration classic -> consumer") and t.rstrip().endswith("1") for t in text)
    assert "<b>migration classic -&gt; consumer</b>" in _protocols(summary)


def test_an_assignors_summary_line_counts_its_own_histories_not_the_migrations():
    consumer = {name: None for name in HISTORY_FRAME}
    consumer.update(source="histories", seed=0, index=1, assignor="consumer-range", protocol="consumer")
    histories = _frame(consumer, migration_row(1, 0, "consumer-range", "before-kafka-19449"))
    summary = summarize_frame(Path("out"), pd.DataFrame([], columns=REBALANCE_FRAME + ["cause"]), histories)
    (line,) = summary.lines
    assert line.histories == 1 and line.monitor_failures == 0 and summary.histories == 2
    assert [x.monitor_failures for x in summary.protocols if x.protocol == "migration"] == [1, 1]
