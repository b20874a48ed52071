"""The sweep's summary on small hand-made frames: each figure, and the verdict's words.

Every frame here is built row by row, so each number a test expects can be worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stickyproof.sweep.columns import INVARIANTS, MONITORS, monitor_column
from stickyproof.sweep.console import summary_lines, verdict_text
from stickyproof.sweep.summary import HISTORY_FRAME, REBALANCE_FRAME, summarize_frame, verdict_line, verdict_lines


def rebalance(index: int, number: int, assignor: str = "a", **values) -> dict:
    """A valid rebalance of history ``index`` that kept 3 of the optimum's 4 (stickiness 0.75), moved 2."""
    row = {name: None for name in REBALANCE_FRAME}
    row.update({name: False for name in INVARIANTS})
    row.update(source="histories", seed=0, index=index, rebalance=number, assignor=assignor, scale="small",
               event="c1 joins (t)", follow_up=False, valid=True, contract="kafka", contract_balanced=True,
               kept=3, optimal_kept=4, proven=True, stickiness=0.75, unnecessary=1, moved=2, owned=4,
               optimal_moves=1, assign_seconds=0.001, failing=False, cause="joins")
    row.update(values)
    return row


def history(index: int, assignor: str = "a", **values) -> dict:
    row = {name: None for name in HISTORY_FRAME}
    row.update(source="histories", seed=0, index=index, assignor=assignor, scale="small", rebalances=2)
    row.update({monitor_column(m): True for m in MONITORS})
    row.update(values)
    return row


def summary_of(rows: list[dict], histories: list[dict]):
    return summarize_frame(Path("out"), pd.DataFrame(rows), pd.DataFrame(histories))


def only(rows: list[dict], histories: list[dict] | None = None):
    histories = histories if histories is not None else [history(i) for i in sorted({r["index"] for r in rows})]
    (line,) = summary_of(rows, histories).lines
    return line


def failed(index: int, number: int, failures: str, category: str | None, **values) -> dict:
    invariants = {f.replace("-", "_"): True for f in failures.split(",") if f.replace("-", "_") in INVARIANTS}
    fields = dict(valid=False, failing=True, failures=failures, stickiness=None, hazard_categories=category,
                  unexpected=None if category else failures, **invariants)
    return rebalance(index, number, **{**fields, **values})


def test_a_rebalance_whose_optimum_keeps_nothing_is_left_out_of_stickiness():
    line = only([rebalance(0, 1, kept=0, optimal_kept=0, stickiness=1.0, unnecessary=0),
                 rebalance(0, 2), rebalance(1, 1, stickiness=0.5, kept=2)])
    assert line.rows == 3 and line.nothing_to_keep == 1
    assert (line.stickiness_p50, line.stickiness_mean, line.at_optimum_pct) == (0.625, 0.625, 0.0)


def test_stickiness_median_mean_and_share_at_the_optimum():
    line = only([rebalance(0, 1, stickiness=1.0), rebalance(0, 2, stickiness=1.0), rebalance(1, 1, stickiness=0.4),
                 rebalance(1, 2, stickiness=0.2)])
    assert (line.stickiness_p50, line.stickiness_mean, line.at_optimum_pct) == (0.7, 0.65, 50.0)


def test_stickiness_counts_valid_rows_only():
    line = only([rebalance(0, 1, stickiness=1.0), failed(0, 2, "duplicate", "hazard", stickiness=0.1)])
    assert (line.stickiness_p50, line.stickiness_mean, line.rows, line.failing) == (1.0, 1.0, 2, 1)


def test_a_valid_row_without_stickiness_is_counted_unmeasured_never_dropped():
    line = only([rebalance(0, 1), rebalance(0, 2, stickiness=None, optimal_kept=None, proven=False, unnecessary=None)])
    assert line.unmeasured == 1 and line.stickiness_p50 == 0.75
    assert "1 rebalances unmeasured" in verdict_line(line)


def test_proven_share_is_over_the_rows_stickiness_is_measured_on():
    line = only([rebalance(0, 1, proven=True), rebalance(0, 2, proven=False), rebalance(1, 1, proven=False),
                 rebalance(1, 2, proven=True, optimal_kept=0, kept=0, stickiness=1.0)])
    assert line.proven_pct == round(100 / 3, 2)


def test_unnecessary_moves_and_moves_over_optimum_are_the_median_over_histories():
    # one large history (1,000 unnecessary moves per rebalance) among three small ones: its weight is one history's
    rows = [rebalance(i, n, unnecessary=u, moved=m, optimal_moves=1)
            for i, u, m in ((0, 1, 2), (1, 3, 4), (2, 2, 3)) for n in (1, 2)]
    rows += [rebalance(3, n, unnecessary=1000, moved=5000, optimal_moves=5) for n in (1, 2)]
    line = only(rows)
    assert line.unnecessary_per_rebalance == 2.5  # histories' means 1, 2, 3, 1000
    assert line.moves_over_optimum == 3.5  # histories' ratios 2, 3, 4, 1000


def test_errors_count_assignor_errors_and_time_limits_not_broken_promises():
    line = only([failed(0, 1, "error", "historical", error="AssignorFailure: NullPointerException"),
                 failed(0, 2, "time-limit", None, error="AssignorTimeLimit: past 1 s"),
                 failed(1, 1, "duplicate", "hazard"), rebalance(1, 2)])
    assert (line.failing, line.errors, line.crashes) == (3, 2, 0)


def test_a_crash_of_the_grading_is_failing_not_an_assignor_error():
    line = only([rebalance(0, 1), rebalance(0, 2, valid=None, failing=True, stickiness=None,
                                               error="grade: SolverError: boom")])
    assert (line.rows, line.failing, line.errors, line.crashes, line.unexpected) == (1, 1, 0, 1, 1)
    assert line.failures_by_kind == (("crash", "unexpected", 1),)
    assert verdict_line(line).startswith("a: 1 of 2 rebalances (1 histories) failed: 1 grading crashes")


def test_verdict_with_no_failure_says_every_promise_kept():
    rows = [rebalance(i, n) for i in range(3) for n in (1, 2)]
    text = verdict_line(only(rows))
    assert text.startswith("a: kept every promise on 6 of 6 rebalances (3 histories); ")
    assert text.endswith("; where partitions could stay, it kept a median 75.0% of the most that could (mean 75.0%)")


def test_verdict_groups_failures_by_kind_and_by_what_explains_them():
    rows = [rebalance(0, 1), failed(0, 2, "revoking-unclaimed", "hazard"), failed(1, 1, "revoking-unclaimed", "hazard"),
            failed(1, 2, "cooperative-unsafe,unstable", "kafka-bug"), failed(2, 1, "unstable", None), rebalance(2, 2)]
    line = only(rows)
    assert line.failures_by_kind == (("revoking-unclaimed", "hazard", 2),
                                     ("cooperative-unsafe+unstable", "kafka-bug", 1), ("unstable", "unexpected", 1))
    assert verdict_line(line).startswith(
        "a: 4 of 6 rebalances (3 histories) broke a promise: 2 revoking-unclaimed (known Kafka hazard), "
        "1 cooperative-unsafe+unstable (Kafka bug on reachable states), 1 unstable (unexpected); ")


def test_verdict_names_assignor_errors_and_failed_monitors():
    rows = [failed(0, 1, "error", "historical", error="AssignorFailure: x"), rebalance(0, 2), rebalance(1, 1)]
    histories = [history(0, monitor_no_rebalance_loop=False), history(1)]
    text = verdict_line(only(rows, histories))
    assert text.startswith("a: 1 of 3 rebalances (2 histories) failed: 1 assignor errors (historical incident); "
                           "1 of 2 histories failed a group-protocol check (no-rebalance-loop); ")


def test_one_verdict_per_assignor_before_the_table_even_with_classes():
    rows = [rebalance(0, 1), rebalance(0, 1, assignor="b"), rebalance(1, 1, assignor="b", scale="large")]
    summary = summarize_frame(Path("out"), pd.DataFrame(rows), pd.DataFrame([history(0), history(0, "b"), history(1, "b")]),
                              by="scale")
    assert [v.split(":")[0] for v in verdict_lines(summary)] == ["a", "b"]
    assert len(summary.lines) == 5  # a, a/small, b, b/large, b/small
    assert summary.to_dict()["lines"][0]["verdict"] == verdict_lines(summary)[0]


def test_console_table_and_verdicts_stay_within_120_columns():
    rows = [rebalance(0, 1, assignor="kafka-python:cooperative-sticky"), rebalance(0, 1, assignor="x" * 40)]
    summary = summary_of(rows, [history(0, "kafka-python:cooperative-sticky"), history(0, "x" * 40)])
    table = summary_lines(summary)
    assert all(len(line) <= 120 for line in table + verdict_text(summary))
    assert table[1].split()[:6] == ["assignor", "rows", "valid%", "med", "mean", "@opt%"]
    assert table[2].startswith("kafka-python:cooperative-sticky ") and table[3].endswith("0") and "…" in table[3]


@pytest.mark.parametrize("column", ["unnecessary", "optimal_moves"])
def test_a_history_without_the_figure_is_left_out_of_the_median(column):
    rows = [rebalance(0, 1), rebalance(1, 1, **{column: None})]
    line = only(rows)
    assert (line.unnecessary_per_rebalance, line.moves_over_optimum) == (1.0, 2.0)
