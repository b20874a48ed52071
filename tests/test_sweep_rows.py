"""The sweep without Spark: columns, plan, store, summary, findings, report, compare, triage, glue."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stickyproof.errors import SweepError
from stickyproof.model import Member, Scenario, Topic, TopicPartition, scenario_from_dict
from stickyproof.sweep.columns import (
    HISTORY,
    INVARIANTS,
    REBALANCE,
    arrow_schema,
    empty_row,
    invariant_column,
    is_failing,
)
from stickyproof.sweep.compare import compare_runs
from stickyproof.sweep.findings import collect_findings, error_kind, parse_hazards
from stickyproof.sweep.job import _spark_message, map_slots
from stickyproof.sweep.plan import Task, plan_chunks
from stickyproof.sweep.rows import TaskParams, adversarial_task, grade_scenario_row, scenario_hash
from stickyproof.sweep.store import SweepDir, read_table
from stickyproof.sweep.summary import cause_of, summarize
from stickyproof.sweep.triage import shrink

REQUIRED = [
    "kind", "source", "seed", "index", "rebalance", "assignor", "event", "trigger", "follow_up", "valid", *INVARIANTS,
    "contract", "contract_balanced", "kept", "optimal_kept", "stickiness", "unnecessary", "unnecessary_list", "moved",
    "optimal_moves", "assign_seconds", "error", "hazards", "unexpected", "members", "subscribed_partitions",
    "rebalances", "follow_ups", "unowned", "moved_total", "optimal_moves_known", "monitor_no_double_consumption",
    "replay",
]
SCENARIO = {"format": "stickyproof.scenario/1", "topics": {"t": 3}, "members": [{"id": "c0", "topics": ["t"]}]}


def scenario(members: int = 3, partitions: int = 4) -> Scenario:
    ms = tuple(Member(f"c{i}", ("t",), tuple(TopicPartition("t", p) for p in range(partitions) if p % members == i),
                      generation=1) for i in range(members))
    return Scenario((Topic("t", partitions),), ms)


def rows_of(seed: int, n: int, assignor: str, *, stickiness: float = 1.0, bad: frozenset[int] = frozenset(),
            hazard: str | None = None, follow_up_every: int = 0) -> list[dict]:
    """``n`` histories of two rebalances and their history rows; in ``bad`` ones rebalance 2 fails imbalance
    (explained by ``hazard`` when given)."""
    rows = []
    for i in range(n):
        failing = i in bad
        for number in (1, 2):
            r = empty_row(REBALANCE, "histories", seed, i, assignor, rebalance=number)
            r.update({name: False for name in INVARIANTS})
            fail = failing and number == 2
            r.update(scale="small", event=f"c{i} joins (t)", follow_up=bool(follow_up_every and number == 2
                                                                               and i % follow_up_every == 0),
                     valid=not fail, imbalance=fail, contract="kafka", contract_balanced=not fail,
                     stickiness=None if fail else stickiness, unnecessary=0 if fail else 2, moved=3, owned=6,
                     optimal_moves=1, assign_seconds=0.001 * (1 + i), members=2, subscribed_partitions=4 + i,
                     subscription="uniform", protocol="eager", scenario_hash=f"h{i}-{number}")
            if fail:
                r["scenario"] = json.dumps(SCENARIO)
                r["hazards"] = f"imbalance:{hazard}" if hazard else None
                r["unexpected"] = None if hazard else "imbalance"
            rows.append(r)
        h = empty_row(HISTORY, "histories", seed, i, assignor)
        h.update(scale="small", rebalances=2, follow_ups=0, moved_total=6, moved_known=6, optimal_moves_known=2,
                 known_rows=2, unowned=0, failing_rows=int(failing), monitor_no_double_consumption=True,
                 replay=json.dumps({"format": "stickyproof.simulation/1"}) if failing else None)
        rows.append(h)
    return rows


def write_chunk(out: SweepDir, name: str, rows: list[dict]) -> Path:
    out.prepare()
    staged = out.staging_path(name)
    staged.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema()), staged / "part-00000.parquet")
    return out.commit_chunk(name)


# ------------------------------------------------------------------------------------------
# columns, plan, job helpers


def test_schema_has_every_required_column():
    names = arrow_schema().names
    assert [n for n in REQUIRED if n not in names] == []


def test_invariant_ids_map_to_snake_case_columns():
    assert invariant_column("cooperative-unsafe") == "cooperative_unsafe"
    assert invariant_column("CooperativeUnsafe") == "cooperative_unsafe"
    assert {invariant_column(i) for i in INVARIANTS} == set(INVARIANTS)


def test_a_crash_without_a_verdict_is_failing_and_a_skipped_pair_is_not():
    row = empty_row(REBALANCE, "histories", 0, 0, "a", rebalance=1)
    assert not is_failing(row)
    assert is_failing({**row, "error": "grade: ValueError: x"})
    assert is_failing({**row, "valid": False})
    assert not is_failing({**row, "error": "x", "skipped": "cooperative protocol unsupported (R36)"})


def test_plan_skips_present_and_skipped_tasks_and_puts_expensive_ones_first():
    chunks = plan_chunks(0, 4, ["a", "b"], {0: {"a"}}, scale_of={0: "small", 1: "large", 2: "small", 3: "small"},
                         parallelism=2, skip={(3, "b")})
    tasks = [t for c in chunks for t in c.tasks]
    assert sorted((t.index, t.assignor) for t in tasks) == [(0, "b"), (1, "a"), (1, "b"), (2, "a"), (2, "b"), (3, "a")]
    assert chunks[0].tasks[0].index == 1 and chunks[0].slots[0][0].cost == 150.0
    again = plan_chunks(0, 4, ["a", "b"], {0: {"a"}}, scale_of={0: "small", 1: "large", 2: "small", 3: "small"},
                        parallelism=2, skip={(3, "b")})
    assert [c.name for c in again] == [c.name for c in chunks]


def test_spark_message_keeps_the_python_exception_line():
    text = ("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n  File x\n"
            "ModuleNotFoundError: No module named 'foo'\n\tat org.apache")
    assert _spark_message(RuntimeError(text)) == "ModuleNotFoundError: No module named 'foo'"


def test_map_slots_turns_crashes_and_misfit_rows_into_error_rows_of_that_task_only():
    def task_fn(seed, index, assignor, params):
        if index == 2:
            raise RuntimeError("boom")
        row = empty_row(HISTORY, "histories", seed, index, assignor)
        row["rebalances"] = "many" if index == 4 else 1  # index 4: a value that does not fit the schema
        return [row]

    slots = ((Task(0, "a"), Task(2, "a")), (Task(4, "a"), Task(5, "a")))
    fn = map_slots(9, slots, TaskParams(), task_fn)
    out = pa.Table.from_batches(list(fn([pa.RecordBatch.from_pydict({"id": [0, 1]})]))).to_pylist()
    assert [r["index"] for r in out] == [0, 2, 4, 5]
    errors = {r["index"]: r["error"] for r in out if r["error"]}
    assert sorted(errors) == [2, 4]
    assert errors[2].startswith("task: RuntimeError: boom") and errors[4].startswith("row: ")


# ------------------------------------------------------------------------------------------
# store


def test_staged_chunk_is_invisible_until_committed(tmp_path):
    out = SweepDir(tmp_path / "run")
    out.prepare()
    staged = out.staging_path("c1")
    staged.mkdir()
    pq.write_table(pa.Table.from_pylist(rows_of(0, 3, "a"), schema=arrow_schema()), staged / "part-0.parquet")
    assert read_table(out.grades).num_rows == 0 and out.keys_present(0) == {}
    out.commit_chunk("c1")
    assert out.keys_present(0) == {0: {"a"}, 1: {"a"}, 2: {"a"}}
    out.prepare()  # a new run drops leftovers in _staging, never committed chunks
    assert read_table(out.grades).num_rows == 9 and list(out.staging.iterdir()) == []


def test_manifest_refuses_other_parameters(tmp_path):
    out = SweepDir(tmp_path / "run")
    out.prepare()
    out.open_manifest({"source": "histories", "scale": "main"})
    out.open_manifest({"source": "histories", "scale": "main"})
    with pytest.raises(SweepError, match="scale"):
        out.open_manifest({"source": "histories", "scale": "small"})


def test_lock_refuses_a_second_writer(tmp_path):
    out = SweepDir(tmp_path / "run")
    with out.lock():
        with pytest.raises(SweepError, match="another sweep"):
            with out.lock():
                pass


def test_failures_and_history_replays_written_for_failing_rows(tmp_path):
    out = SweepDir(tmp_path / "run")
    chunk = write_chunk(out, "c1", rows_of(4, 5, "a", bad=frozenset({1, 3})))
    assert out.write_chunk_failures(chunk) == (15, 2)
    assert sorted(p.name for p in out.failures.iterdir()) == ["4-1-2-a.json", "4-3-2-a.json"]
    assert sorted(p.name for p in out.histories.iterdir()) == ["4-1-a.json", "4-3-a.json"]
    assert scenario_from_dict(json.loads((out.failures / "4-1-2-a.json").read_text())).members[0].id == "c0"
    (out.failures / "4-1-2-a.json").unlink()
    assert out.sync_failures() == 2 and (out.failures / "4-1-2-a.json").exists()


# ------------------------------------------------------------------------------------------
# summary, findings, report, compare


def test_summary_line_per_assignor_and_by_class(tmp_path):
    out = SweepDir(tmp_path / "run")
    write_chunk(out, "c1", rows_of(0, 10, "a", stickiness=0.5, bad=frozenset({2}), follow_up_every=5)
                + rows_of(0, 10, "b"))
    summary = summarize(out.root)
    lines = {(line.assignor, line.klass): line for line in summary.lines}
    assert summary.rows == 40 and summary.histories == 20
    a = lines[("a", "all")]
    assert (a.rows, a.histories, a.failing, a.unexpected, a.violations["imbalance"]) == (20, 10, 1, 1, 1)
    assert (a.valid_pct, a.balanced_pct, a.stickiness_p50) == (95.0, 95.0, 0.5)
    assert a.unnecessary_per_rebalance == 2.0 and a.moves_over_optimum == 3.0
    assert a.follow_ups_per_rebalance == round(2 / 18, 4)
    assert lines[("b", "all")].failing == 0
    by = summarize(out.root, by="cause")
    assert {(line.assignor, line.klass) for line in by.lines} >= {("a", "joins"), ("a", "follow-up")}
    with pytest.raises(SweepError, match="--by"):
        summarize(out.root, by="colour")


def test_cause_of_drops_names_and_counts():
    assert cause_of("c3 joins (t0, t1)") == "joins"
    assert cause_of("rolling restart of c1, c2, 14 ticks apart (protocol=None)") == "rolling restart ticks"
    assert cause_of("anything", True) == "follow-up"


def test_findings_split_known_hazards_kafka_bugs_and_unexpected():
    failing = [
        {"seed": 0, "index": 1, "rebalance": 2, "assignor": "sticky", "source": "histories", "hazards": "imbalance:K1",
         "unexpected": None, "valid": False, "members": 3, "subscribed_partitions": 9},
        {"seed": 0, "index": 2, "rebalance": 4, "assignor": "sticky", "source": "histories", "hazards":
         "unsubscribed:K3", "unexpected": None, "valid": False, "members": 2, "subscribed_partitions": 4},
        {"seed": 0, "index": 3, "rebalance": 1, "assignor": "x", "source": "histories", "hazards": None,
         "unexpected": "duplicate", "valid": False, "members": 2, "subscribed_partitions": 4},
        {"seed": 0, "index": 4, "rebalance": 1, "assignor": "x", "source": "histories", "hazards": None,
         "unexpected": None, "valid": None, "error": "grade: SolverError: timeout", "members": 2,
         "subscribed_partitions": 4},
    ]
    histories = [{"seed": 0, "index": 2, "assignor": "sticky", "monitor_no_rebalance_loop": False},
                 {"seed": 0, "index": 9, "assignor": "x", "monitor_no_double_consumption": False}]
    found = {(f.section, f.rule): f for f in collect_findings(failing, histories)}
    assert set(found) == {("hazard", "K1"), ("kafka-bug", "K3"), ("unexpected", "x: duplicate"),
                          ("unexpected", "x: error:grade:SolverError"), ("unexpected", "x: monitor no-double-consumption")}
    k3 = found[("kafka-bug", "K3")]
    assert (k3.rows, k3.histories, k3.example.failure_file()) == (1, 1, "0-2-4-sticky.json")
    assert k3.failures == {"unsubscribed": 1, "monitor:no-rebalance-loop": 1}
    assert parse_hazards("a:K1,b:K2") == [("a", "K1"), ("b", "K2")] and error_kind("row: X: y") == "error:row:X"


def test_compare_finds_regressions_and_improvements_by_content(tmp_path):
    a, b = SweepDir(tmp_path / "a"), SweepDir(tmp_path / "b")
    write_chunk(a, "c1", rows_of(0, 6, "x", stickiness=0.9, bad=frozenset({4})))
    rows_b = rows_of(0, 6, "x", stickiness=0.9, bad=frozenset({1}))
    by_key = {(r["index"], r["rebalance"]): r for r in rows_b if r["kind"] == REBALANCE}
    by_key[(2, 1)]["stickiness"] = 0.5
    by_key[(3, 1)]["contract_balanced"] = False
    for r in rows_b:
        r["seed"] = 99  # paired by content, not by key
    write_chunk(b, "c1", rows_b)
    comparison = compare_runs(a.root, b.root)
    assert comparison.shared == 12
    assert sorted((c.aspect, c.key_a[1]) for c in comparison.regressions) == [
        ("balance", 1), ("balance", 3), ("stickiness", 2), ("validity", 1)]
    assert sorted((c.aspect, c.key_a[1]) for c in comparison.improvements) == [("balance", 4), ("validity", 4)]
    assert compare_runs(a.root, a.root).regressions == ()
    with pytest.raises(SweepError, match="not a sweep directory"):
        compare_runs(tmp_path, tmp_path)


def test_compare_command_exits_1_on_regressions(tmp_path, capsys):
    from stickyproof.cli import main

    a, b = SweepDir(tmp_path / "a"), SweepDir(tmp_path / "b")
    write_chunk(a, "c1", rows_of(0, 4, "x"))
    write_chunk(b, "c1", rows_of(0, 4, "x", bad=frozenset({2})))
    assert main(["compare", str(a.root), str(b.root), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["shared"] == 8 and sorted(r["aspect"] for r in doc["regressions"]) == ["balance", "validity"]
    assert main(["compare", str(b.root), str(a.root)]) == 0
    assert "0 regressions, 2 improvements" in capsys.readouterr().out
    assert main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2


# ------------------------------------------------------------------------------------------
# rows and triage


def test_shrink_reaches_a_minimal_failing_scenario():
    big = Scenario(
        (Topic("t", 8), Topic("u", 3)),
        tuple(Member(f"c{i}", ("t", "u"), tuple(TopicPartition("t", p) for p in range(8) if p % 4 == i), generation=2)
              for i in range(4)),
    )

    def fails(s: Scenario) -> bool:
        return any(TopicPartition("t", 5) in m.owned for m in s.members)

    small, evaluations, clocked = shrink(big, fails, max_evaluations=1000)
    assert fails(small) and not clocked and evaluations < 1000
    assert len(small.members) == 1 and small.members[0].owned == (TopicPartition("t", 5),)
    assert shrink(big, fails, max_evaluations=3)[1] <= 3


def test_eager_only_assignor_on_a_cooperative_group_is_skipped_not_failed():
    from stickyproof.lookup import get_assignor

    s = Scenario(scenario().topics, scenario().members, protocol="cooperative")
    row = grade_scenario_row(empty_row(REBALANCE, "adversarial", 1, 2, "range", rebalance=0), s, get_assignor("range"),
                             TaskParams())
    assert row["skipped"] == "cooperative protocol unsupported (R36)"
    assert not is_failing(row) and row["valid"] is None and row["scenario_hash"] == scenario_hash(s)


def test_an_unknown_assignor_and_a_bad_space_are_error_rows():
    (row,) = adversarial_task(1, 2, "no-such-assignor", TaskParams(source="adversarial"))
    assert is_failing(row) and row["error"].startswith("registry: UnknownAssignor")
    (row,) = adversarial_task(1, 2, "range", TaskParams(source="adversarial", space=("members=nonsense",)))
    assert row["error"].startswith("sample: InvalidSpace")


def test_sweep_command_rejects_bad_arguments_before_starting_spark(tmp_path, capsys):
    from stickyproof.cli import main

    with pytest.raises(SystemExit):  # argparse refuses a non-positive count itself
        main(["sweep", "--count", "0", "--out", str(tmp_path / "o")])
    capsys.readouterr()
    assert main(["sweep", "--count", "3", "--assignors", "range,nope", "--out", str(tmp_path / "o")]) == 2
    assert "UnknownAssignor" in capsys.readouterr().err
    assert main(["sweep", "--source", "adversarial", "--count", "3", "--space", "members=0",
                 "--out", str(tmp_path / "o")]) == 2
    assert "InvalidSpace" in capsys.readouterr().err
    assert main(["sweep", "--count", "3", "--space", "members=2", "--out", str(tmp_path / "o")]) == 2
    assert "--space shapes the adversarial sampler" in capsys.readouterr().err


def test_summary_lines_show_long_assignor_names_whole_within_120_columns(tmp_path):
    from stickyproof.sweep.console import summary_lines
    from stickyproof.sweep.summary import Summary, SummaryLine

    def line(name: str) -> SummaryLine:
        return SummaryLine(name, "all", 10, 1, 100.0, 100.0, 1.0, 0.5, 0.0, 0.0, 1.0, 0.1, 1.0, 0, 0, 0, 0)

    names = ["range", "kafka-python:cooperative-sticky", "kafka-python:cooperative-sticky+java-and-more"]
    printed = summary_lines(Summary(tmp_path, 30, 1, None, tuple(line(n) for n in names)))
    assert all(len(p) <= 120 for p in printed)
    assert printed[3].startswith("kafka-python:cooperative-sticky ")  # after the two header lines and range
    assert printed[4].startswith("kafka-python:cooperative-sticky…")
