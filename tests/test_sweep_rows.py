"""The sweep's parts that need no Spark: rows, chunk planning, the store, summary, triage, report, compare."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stickyproof.errors import SweepError
from stickyproof.model import Member, Scenario, Topic, TopicPartition, scenario_from_dict, scenario_to_dict
from stickyproof.sweep.compare import compare_runs
from stickyproof.sweep.job import Chunk, _spark_message, chunk_size, plan_chunks
from stickyproof.sweep.report import write_report
from stickyproof.sweep.rows import (
    COLUMNS,
    INVARIANTS,
    arrow_schema,
    empty_row,
    error_row,
    grade_to_row,
    invariant_column,
    is_failing,
    scenario_hash,
)
from stickyproof.sweep.store import SweepDir, read_table
from stickyproof.sweep.summary import summarize
from stickyproof.sweep.triage import Signature, error_kind, shrink, signatures_of

REQUIRED = [
    "seed", "index", "assignor", "valid", *INVARIANTS, "balanced_kafka", "balanced_global", "kept", "optimal_kept",
    "optimal_kept_global", "proven", "stickiness", "moved", "assign_seconds", "solve_seconds", "error",
    "members", "topics", "partitions", "subscription", "versions", "stale_claimants", "protocol",
]


def scenario(members: int = 3, partitions: int = 4, owned: bool = True) -> Scenario:
    ms = []
    for i in range(members):
        mine = tuple(TopicPartition("t", p) for p in range(partitions) if owned and p % members == i)
        ms.append(Member(f"c{i}", ("t",), mine, generation=1))
    return Scenario((Topic("t", partitions), Topic("u", 2)), tuple(ms))


@dataclass
class FakeGrade:
    valid: bool = True
    violations: list = field(default_factory=list)
    balanced: dict = field(default_factory=lambda: {"uniform": True, "global": True, "kafka": True})
    kept: int = 3
    optimal_kept: int = 4
    optimal_kept_global: int = 4
    proven: bool = True
    stickiness: float = 0.75
    moved: int = 1
    assign_seconds: float = 0.001
    solve_seconds: float = 0.002
    error: Any = None


# ------------------------------------------------------------------------------------------
# rows


def test_schema_has_every_required_column():
    names = arrow_schema().names
    assert [n for n in REQUIRED if n not in names] == []
    assert len(names) == len(set(names)) == len(COLUMNS)


def test_invariant_ids_map_to_snake_case_columns():
    assert invariant_column("cooperative-unsafe") == "cooperative_unsafe"
    assert invariant_column("revoking-unclaimed") == "revoking_unclaimed"
    assert invariant_column("RevokingUnclaimed") == "revoking_unclaimed"
    assert invariant_column("imbalance") == "imbalance"


def test_grade_to_row_flattens_a_passing_grade():
    s = scenario()
    row = grade_to_row(7, 3, "sticky", s, FakeGrade())
    assert (row["seed"], row["index"], row["assignor"], row["valid"]) == (7, 3, "sticky", True)
    assert all(row[name] is False for name in INVARIANTS)
    assert (row["balanced_kafka"], row["balanced_global"], row["stickiness"], row["kept"]) == (True, True, 0.75, 3)
    assert (row["members"], row["topics"], row["protocol"]) == (3, 2, "eager")
    assert row["scenario"] is None  # only failing rows carry their scenario
    assert row["scenario_hash"] == scenario_hash(s)
    pa.RecordBatch.from_pylist([row], schema=arrow_schema())  # the row fits the schema


def test_grade_to_row_marks_violated_invariants_and_keeps_the_scenario():
    s = scenario()
    g = FakeGrade(valid=False, violations=[("cooperative-unsafe", {"partition": "t-1"}), ("imbalance", {"member": "c0"})])
    row = grade_to_row(1, 2, "range", s, g)
    assert row["cooperative_unsafe"] and row["imbalance"] and not row["duplicate"]
    assert is_failing(row)
    assert scenario_from_dict(json.loads(row["scenario"])) == s
    assert json.loads(row["violations"])[0] == {"invariant": "cooperative-unsafe", "witness": {"partition": "t-1"}}


def test_grade_to_row_rejects_an_invariant_without_a_column():
    with pytest.raises(ValueError, match="no column: made_up"):
        grade_to_row(1, 2, "range", scenario(), FakeGrade(valid=False, violations=[("made-up", {})]))


def test_error_row_is_failing_with_unknown_checks():
    row = error_row(1, 2, "sticky", "grade: AssignorFailure: boom", scenario())
    assert is_failing(row) and row["valid"] is False
    assert all(row[name] is None for name in INVARIANTS)
    assert row["members"] == 3 and row["scenario"] is not None


def test_scenario_hash_is_content_not_identity():
    assert scenario_hash(scenario()) == scenario_hash(scenario_from_dict(scenario_to_dict(scenario())))
    assert scenario_hash(scenario()) != scenario_hash(scenario(partitions=5))


# ------------------------------------------------------------------------------------------
# chunks


def test_plan_chunks_skips_keys_present():
    present = {0: {"a", "b"}, 1: {"a"}, 5: {"a", "b"}}
    chunks = plan_chunks(3, 8, ["a", "b"], present, 4)
    assert [(c.start, c.end) for c in chunks] == [(0, 4), (4, 8)]
    assert chunks[0].todo == ((1, ("b",)), (2, ("a", "b")), (3, ("a", "b")))
    assert [i for i, _ in chunks[1].todo] == [4, 6, 7]
    assert plan_chunks(3, 2, ["a", "b"], {0: {"a", "b"}, 1: {"b", "a"}}, 4) == []


def test_chunk_names_are_deterministic_and_differ_by_keys():
    a = Chunk(1, 0, 4, ((0, ("x",)),))
    assert a.name == Chunk(1, 0, 4, ((0, ("x",)),)).name
    assert a.name != Chunk(1, 0, 4, ((0, ("y",)),)).name
    assert a.name.startswith("s1-000000000-000000004-")


def test_chunk_size_bounds():
    assert chunk_size(2000, 2) == 250
    assert chunk_size(20, 2) == 8
    assert chunk_size(100_000, 64) == 1024


def test_spark_message_keeps_the_python_exception_line():
    text = "An exception was thrown from the Python worker:\nTraceback (most recent call last):\n  File x\nModuleNotFoundError: No module named 'foo'\n\tat org.apache"
    assert _spark_message(RuntimeError(text)) == "ModuleNotFoundError: No module named 'foo'"


# ------------------------------------------------------------------------------------------
# store, summary, report, compare (on Parquet written directly, as a Spark chunk would be)


def write_chunk(out: SweepDir, name: str, rows: list[dict]) -> Path:
    out.prepare()
    staged = out.staging_path(name)
    staged.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema()), staged / "part-00000.parquet")
    return out.commit_chunk(name)


def graded_rows(seed: int, n: int, assignor: str, *, stickiness: float = 1.0, bad: set[int] = frozenset()) -> list[dict]:
    rows = []
    for i in range(n):
        s = scenario(members=2 + i % 3, partitions=3 + i)
        g = FakeGrade(stickiness=stickiness, valid=i not in bad, violations=[("imbalance", {})] if i in bad else [])
        rows.append(grade_to_row(seed, i, assignor, s, g))
    return rows


def test_staged_chunk_is_invisible_until_committed(tmp_path):
    out = SweepDir(tmp_path / "run")
    out.prepare()
    staged = out.staging_path("c1")
    staged.mkdir()
    pq.write_table(pa.Table.from_pylist(graded_rows(0, 3, "a"), schema=arrow_schema()), staged / "part-0.parquet")
    assert read_table(out.grades).num_rows == 0 and out.keys_present(0) == {}
    out.commit_chunk("c1")
    assert out.keys_present(0) == {0: {"a"}, 1: {"a"}, 2: {"a"}}
    out.prepare()  # a new run drops leftovers in _staging, never committed chunks
    assert read_table(out.grades).num_rows == 3 and list(out.staging.iterdir()) == []


def test_manifest_refuses_other_sampler_parameters(tmp_path):
    out = SweepDir(tmp_path / "run")
    out.prepare()
    out.open_manifest({"space": ["members=2"], "time_limit": 5.0})
    out.open_manifest({"space": ["members=2"], "time_limit": 5.0})
    with pytest.raises(SweepError, match="space"):
        out.open_manifest({"space": [], "time_limit": 5.0})


def test_lock_refuses_a_second_writer(tmp_path):
    out = SweepDir(tmp_path / "run")
    with out.lock():
        with pytest.raises(SweepError, match="another sweep"):
            with out.lock():
                pass


def test_failures_written_for_failing_rows(tmp_path):
    out = SweepDir(tmp_path / "run")
    chunk = write_chunk(out, "c1", graded_rows(4, 5, "a", bad={1, 3}))
    assert out.write_chunk_failures(chunk) == (5, 2)
    names = sorted(p.name for p in out.failures.iterdir())
    assert names == ["4-1-a.json", "4-3-a.json"]
    assert scenario_from_dict(json.loads((out.failures / "4-1-a.json").read_text())) == scenario(members=3, partitions=4)
    (out.failures / "4-1-a.json").unlink()
    assert out.sync_failures() == 2 and (out.failures / "4-1-a.json").exists()


def test_summary_counts_per_assignor_and_class(tmp_path):
    out = SweepDir(tmp_path / "run")
    write_chunk(out, "c1", graded_rows(0, 10, "a", stickiness=0.5, bad={2}) + graded_rows(0, 10, "b"))
    summary = summarize(out.root)
    lines = {(line.assignor, line.scenario_class): line for line in summary.lines}
    assert summary.rows == 20
    a = lines[("a", "all")]
    assert (a.groups, a.failing, a.violations["imbalance"], a.stickiness_mean) == (10, 1, 1, 0.5)
    assert lines[("b", "all")].failing == 0 and lines[("a", "uniform")].groups == 10


def test_report_is_one_self_contained_file(tmp_path):
    out = SweepDir(tmp_path / "run")
    write_chunk(out, "c1", graded_rows(0, 12, "a", bad={2}) + graded_rows(0, 12, "b", stickiness=0.8))
    from stickyproof.sweep.summary import load_frame, summarize_frame

    frame = load_frame(out.root)
    path = write_report(out, summarize_frame(out.root, frame), frame, [], {"space": []})
    text = path.read_text()
    assert path == out.root / "report.html"
    assert text.count("data:image/png;base64,") == 4
    assert "Violations by invariant" in text and "Triage" in text
    assert "src='http" not in text and "<script" not in text  # nothing loaded from elsewhere


def test_compare_finds_regressions_and_improvements(tmp_path):
    a, b = SweepDir(tmp_path / "a"), SweepDir(tmp_path / "b")
    write_chunk(a, "c1", graded_rows(0, 6, "x", stickiness=0.9, bad={4}))
    rows_b = graded_rows(0, 6, "x", stickiness=0.9, bad={1})
    rows_b[2]["stickiness"] = 0.5
    rows_b[3]["balanced_kafka"] = False
    # B paired by content, not by key: shift B's seed so only the scenario hash can match them.
    for r in rows_b:
        r["seed"] = 99
    write_chunk(b, "c1", rows_b)
    comparison = compare_runs(a.root, b.root)
    assert comparison.shared == 6
    assert sorted((c.aspect, c.key_a[1]) for c in comparison.regressions) == [("balance", 3), ("stickiness", 2), ("validity", 1)]
    assert [(c.aspect, c.key_a[1]) for c in comparison.improvements] == [("validity", 4)]
    assert comparison.counts()["x"]["validity"] == {"regressions": 1, "improvements": 1}
    assert compare_runs(a.root, a.root).regressions == ()


def test_compare_refuses_a_directory_that_is_not_a_sweep(tmp_path):
    with pytest.raises(SweepError, match="not a sweep directory"):
        compare_runs(tmp_path, tmp_path)


# ------------------------------------------------------------------------------------------
# triage


def test_signatures_name_each_violated_invariant_or_the_error_kind():
    row = {"assignor": "a", "subscription": "uniform", "protocol": "eager", "error": None, "imbalance": True, "unstable": True}
    assert signatures_of(row) == [Signature("a", "imbalance", "uniform/eager"), Signature("a", "unstable", "uniform/eager")]
    assert error_kind("grade: AssignorFailure: IllegalStateException: x") == "error:grade:AssignorFailure"
    assert signatures_of({"assignor": "a", "error": "sample: ValueError: bad"})[0].failure == "error:sample:ValueError"


def test_shrink_reaches_a_minimal_failing_scenario():
    # "Fails" while some member owns partition t-5: the minimum is one member, topic t alone,
    # six partitions, that single claim.
    big = Scenario(
        (Topic("t", 8), Topic("u", 3)),
        tuple(
            Member(f"c{i}", ("t", "u"), tuple(TopicPartition("t", p) for p in range(8) if p % 4 == i), generation=2)
            for i in range(4)
        ),
    )

    def fails(s: Scenario) -> bool:
        return any(TopicPartition("t", 5) in m.owned for m in s.members)

    small, evaluations, clocked = shrink(big, fails, max_evaluations=1000)
    assert fails(small) and not clocked and evaluations < 1000
    assert len(small.members) == 1 and small.members[0].owned == (TopicPartition("t", 5),)
    assert [t.name for t in small.topics] == ["t"] and small.topics[0].partitions == 6
    hunted = small
    assert shrink(big, fails, max_evaluations=1000)[0] == hunted


def test_shrink_stops_at_the_evaluation_budget():
    s = scenario(members=4, partitions=8)
    small, evaluations, _ = shrink(s, lambda c: True, max_evaluations=3)
    assert evaluations <= 3 and len(small.members) >= 1


def test_eager_only_assignor_on_a_cooperative_group_is_skipped_not_failed():
    from stickyproof.sweep.rows import grade_row

    s = Scenario(scenario().topics, scenario().members, protocol="cooperative")
    row = grade_row(s, 1, 2, "range")
    assert row["skipped"] == "cooperative protocol unsupported (R36)"
    assert not is_failing(row) and row["valid"] is None and row["scenario_hash"] == scenario_hash(s)


def test_an_unknown_assignor_is_an_error_row():
    from stickyproof.sweep.rows import grade_row

    row = grade_row(scenario(), 1, 2, "no-such-assignor")
    assert is_failing(row) and row["error"].startswith("registry: UnknownAssignor: unknown assignor 'no-such-assignor'")


def test_summary_leaves_skipped_rows_out(tmp_path):
    from stickyproof.sweep.rows import skipped_row

    out = SweepDir(tmp_path / "run")
    skipped = [skipped_row(0, i, "a", "cooperative protocol unsupported (R36)", scenario()) for i in range(10, 13)]
    write_chunk(out, "c1", graded_rows(0, 4, "a") + skipped)
    assert summarize(out.root).lines[0].groups == 4


def test_compare_command_exits_1_on_regressions_and_prints_json(tmp_path, capsys):
    from stickyproof.cli import main

    a, b = SweepDir(tmp_path / "a"), SweepDir(tmp_path / "b")
    write_chunk(a, "c1", graded_rows(0, 4, "x"))
    worse = graded_rows(0, 4, "x", bad={2})
    write_chunk(b, "c1", worse)
    assert main(["compare", str(a.root), str(b.root), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["shared"] == 4 and [r["aspect"] for r in doc["regressions"]] == ["validity"]
    assert main(["compare", str(b.root), str(a.root)]) == 0
    out = capsys.readouterr().out
    assert "0 regressions, 1 improvements" in out


def test_compare_command_bad_directory_is_exit_2(tmp_path, capsys):
    from stickyproof.cli import main

    assert main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("SweepError: ")


def test_sweep_command_rejects_bad_arguments_before_starting_spark(tmp_path, capsys):
    from stickyproof.cli import main

    assert main(["sweep", "--groups", "0", "--out", str(tmp_path / "o")]) == 2
    assert "groups must be a positive integer" in capsys.readouterr().err
    assert main(["sweep", "--groups", "3", "--assignors", "range,nope", "--out", str(tmp_path / "o")]) == 2
    assert "UnknownAssignor" in capsys.readouterr().err
    assert main(["sweep", "--groups", "3", "--space", "members=0", "--out", str(tmp_path / "o")]) == 2
    assert "InvalidSpace" in capsys.readouterr().err


def test_map_groups_turns_crashes_and_misfit_rows_into_error_rows_of_that_group_only():
    from stickyproof.sweep.job import _map_groups
    from stickyproof.sweep.rows import RowParams

    def rows_fn(seed, index, assignors, params):
        if index == 2:
            raise RuntimeError("boom")
        rows = [empty_row(seed, index, a) for a in assignors]
        for r in rows:
            r["valid"] = "yes" if index == 4 else True  # index 4: a value that does not fit the schema
        return rows

    todo = {i: ("a", "b") for i in range(6) if i != 1}
    fn = _map_groups(9, todo, RowParams(), rows_fn)
    batch = pa.RecordBatch.from_pydict({"seed": [9] * 6, "index": list(range(6))})
    out = pa.Table.from_batches(list(fn([batch]))).to_pylist()
    assert [(r["index"], r["assignor"]) for r in out] == [(i, a) for i in (0, 2, 3, 4, 5) for a in ("a", "b")]
    errors = {r["index"]: r["error"] for r in out if r["error"]}
    assert sorted(errors) == [2, 4]
    assert errors[2].startswith("row: RuntimeError: boom") and errors[4].startswith("row: ")
    assert all(r["valid"] is True for r in out if r["index"] in (0, 3, 5))


def test_grade_group_samples_once_and_grades_each_assignor_through_the_leader(monkeypatch):
    """The glue against the grade interface: run() goes through leader.lead, view is decoded_view."""
    from stickyproof.leader import decoded_view, lead
    from stickyproof.scenarios.sampler import sample
    from stickyproof.grading import Limits
    from stickyproof.sweep.rows import RowParams, grade_group

    calls = []

    def fake_grade(scenario, *, run, view, assignor, time_limit, **promise):
        assignment = run(scenario)
        assert assignment == lead(scenario, assignor).assignment
        assert view == decoded_view(scenario, assignor)
        calls.append((assignor, time_limit))
        from stickyproof.oracle.grade import Grade
        from stickyproof.oracle.invariants import Violation

        return Grade(assignor=assignor, valid=False, violations=(Violation("unstable", {"member": "c0"}),), balanced={},
                     kept=3, optimal_kept=None, optimal_kept_global=4, proven=False, stickiness=None, moved=1,
                     assign_seconds=0.001, solve_seconds=0.002)

    import stickyproof.grading

    monkeypatch.setattr(stickyproof.grading, "grade", fake_grade)
    index = next(i for i in range(50) if sample(3, i).protocol == "eager")
    rows = grade_group(3, index, ["range", "sticky"], RowParams(limits=Limits(z3_query_seconds=2.5)))
    assert calls == [("range", 2.5), ("sticky", 2.5)]
    assert [r["assignor"] for r in rows] == ["range", "sticky"]
    assert all(r["unstable"] and r["valid"] is False and r["error"] is None for r in rows)
    assert rows[0]["scenario_hash"] == scenario_hash(sample(3, index))
    assert rows[0]["members"] == len(sample(3, index).members)


def test_grade_group_records_a_sampler_crash_for_every_assignor():
    from stickyproof.sweep.rows import RowParams, grade_group

    rows = grade_group(1, 2, ["range", "sticky"], RowParams(space=("members=nonsense",)))
    assert [r["assignor"] for r in rows] == ["range", "sticky"]
    assert all(r["error"].startswith("sample: InvalidSpace") for r in rows)
