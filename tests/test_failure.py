"""One definition of a failure (``grading.failure``): the hunt, a sweep row and the triage agree on
what failed, and a failing sweep row becomes a regression file the one reader replays.

No Spark: rows are graded as a task grades them and committed as ``job.map_slots`` commits them
(``columns.with_failing``), then read back as the sweep reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stickyproof.lookup import get_assignor
from stickyproof.grading import Limits, grade_assignor
from stickyproof.grading.failure import FAILURE_KINDS, failing_row, verdict_of
from stickyproof.hunt import judge
from stickyproof.model import Member, Scenario, Topic, TopicPartition, scenario_from_dict
from stickyproof.sweep.columns import REBALANCE, arrow_schema, empty_row, is_failing, with_failing
from stickyproof.sweep.findings import collect_findings
from stickyproof.sweep.rows import TaskParams, grade_scenario_row
from stickyproof.sweep.store import SweepDir
from stickyproof.sweep.summary import load_frames
from stickyproof.sweep.triage import still_fails, triage

from .test_regressions import load_regression, replay_file

FAULTY = "tests.faulty_assignors:"
REGRESSIONS = Path(__file__).parent / "regressions"


def _group(members: int, topics: int, partitions: int) -> Scenario:
    """``members`` members subscribed to every topic, each owning a stripe of every topic at generation 1."""
    names = [f"t{i}" for i in range(topics)]
    return Scenario(
        tuple(Topic(t, partitions) for t in names),
        tuple(Member(f"c{m}", tuple(names), tuple(TopicPartition(t, p) for t in names for p in range(partitions)
                                                  if p % members == m), generation=1) for m in range(members)),
    )


def _row(scenario: Scenario, assignor: str, params: TaskParams, index: int = 7) -> dict:
    row = empty_row(REBALANCE, "adversarial", 3, index, assignor, rebalance=0)
    return with_failing(grade_scenario_row(row, scenario, get_assignor(assignor), params))


def _commit(out: SweepDir, rows: list[dict]) -> None:
    out.prepare()
    staged = out.staging_path("c1")
    staged.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema()), staged / "part-00000.parquet")
    out.commit_chunk("c1")
    out.sync_failures()


# ------------------------------------------------------------------------------------------
# One definition


def test_a_sweep_row_names_the_failures_and_signature_the_hunt_names():
    s = _group(3, 2, 4)
    row = _row(s, FAULTY + "raises_on_two_topics", TaskParams(source="adversarial"))
    verdict = judge(s, FAULTY + "raises_on_two_topics")
    assert verdict.failures == ("error",) and row["failures"] == "error"
    assert row["signature"] == verdict.signatures[0] and row["signature"].startswith("error:AssignorFailure:")
    assert row["failing"] is True and row["unexpected"] == "error"


def test_a_time_limit_is_its_own_kind_in_a_sweep_row_as_in_the_hunt():
    # The sweep once called it ``error``: a hang is not an exception Kafka's assignor throws.
    params = TaskParams(source="adversarial", limits=Limits(assignor_seconds=0.5))
    row = _row(_group(4, 1, 4), FAULTY + "slow_with_four_members", params)
    assert row["failures"] == "time-limit" and row["unexpected"] == "time-limit" and row["failing"] is True
    assert row["signature"].startswith("time-limit:AssignorTimeLimit:")


def test_failing_row_is_the_columns_definition_and_reads_numpy_booleans():
    row = empty_row(REBALANCE, "histories", 0, 0, "a", rebalance=1)
    for variant in (row, {**row, "valid": False}, {**row, "error": "grade: X: y"}, {**row, "valid": np.bool_(False)},
                    {**row, "error": "x", "skipped": "cooperative protocol unsupported (R36)"}, {**row, "valid": True}):
        assert is_failing(variant) == failing_row(variant)
    assert failing_row({**row, "valid": np.bool_(False)}) and not failing_row({**row, "valid": np.bool_(True)})
    assert with_failing(dict(row))["failing"] is False
    assert "failing" not in with_failing({"kind": "history"})


def test_triage_reproduces_a_cooperative_unsafe_failure_spelled_as_the_oracle_spells_it():
    # The triage once compared the column spelling (cooperative_unsafe) with the finding's
    # (cooperative-unsafe, from the row's ``unexpected`` and hazard labels): such a finding never
    # reproduced, so it was never shrunk. K2 hands a claimed partition over unrevoked (R13).
    path = REGRESSIONS / "cooperative-sticky-empty-subscription-member-handed-a-claimed-partition.json"
    scenario, expect = load_regression(path)
    assert "cooperative-unsafe" in expect["grade"]["violations"]
    assert still_fails("cooperative-sticky", "cooperative-unsafe", TaskParams())(scenario)
    assert still_fails("cooperative-sticky", "unsubscribed", TaskParams())(scenario)
    assert not still_fails("cooperative-sticky", "duplicate", TaskParams())(scenario)


def test_every_invariant_is_a_failure_kind_between_the_errors_and_stickiness():
    from stickyproof.oracle.invariants import INVARIANTS

    assert FAILURE_KINDS == ("error", "time-limit", *INVARIANTS, "stickiness")


# ------------------------------------------------------------------------------------------
# A failing sweep row -> its failure file -> triage -> a regression file the reader replays


@pytest.mark.parametrize(
    "fault,members,topics,kind",
    [("drops_a_partition_with_three_members", 5, 1, "unassigned"), ("raises_on_two_topics", 4, 3, "error")],
)
def test_a_failing_sweep_row_becomes_a_regression_file_that_replays(tmp_path, fault, members, topics, kind):
    assignor = FAULTY + fault
    params = TaskParams(source="adversarial")
    big = _group(members, topics, 6)
    row = _row(big, assignor, params)
    assert row["failing"] is True and kind in row["failures"].split(",")
    out = SweepDir(tmp_path / "run")
    _commit(out, [row])

    # The failure file carries the verdict (the regression format's expect block) and replays as is:
    # an adversarial row is graded on the group alone.
    (failure_file,) = out.failures.iterdir()
    doc = json.loads(failure_file.read_text())
    assert scenario_from_dict(doc) is not None and doc["name"] == failure_file.stem
    assert doc["expect"]["assignor"] == assignor and "seed 3 index 7" in doc["expect"]["mechanism"]
    if kind == "error":
        assert doc["expect"]["error"] == "KeyError" and "second topic" in doc["expect"]["mechanism"]
    else:
        assert doc["expect"]["grade"] == {"valid": False, "violations": [kind]}
    replay_file(failure_file)

    # The sweep reads the rows' own ``failing`` column, finds the failure and triages it.
    rebalances, histories = load_frames(out.root)
    assert rebalances["failing"].tolist() == [True]
    findings = collect_findings(rebalances[rebalances["failing"]].to_dict("records"), histories.to_dict("records"))
    assert [(f.section, f.rule, dict(f.failures)) for f in findings] == [("unexpected", f"{assignor}: {kind}", {kind: 1})]
    (case,) = triage(out, findings, params, budget_seconds=300, max_evaluations=80)
    assert case.path is not None and case.path.exists(), case
    assert case.shrunk_size < case.original_size

    # The shrunk case is a regression file in hunt --save's format, and it still fails the same way.
    scenario, expect = load_regression(case.path)
    assert scenario.name == case.path.stem and len(scenario.members) < members
    if kind == "error":
        assert expect["error"] == "KeyError"
    else:
        assert expect["grade"] == {"valid": False, "violations": [kind]}
    replay_file(case.path)
    assert verdict_of(grade_assignor(scenario, assignor)).first == kind
