"""report.html: the verdict first, stickiness as an ECDF, the worst rebalances with replays, legends off
the data, and a layout measured in a real headless Chromium at 1,000 and 1,400 px.

The Chromium test is skipped only on a machine with no Chromium and no ``CI`` variable: in CI a
missing browser fails it (.ci/run installs Debian's ``chromium``), so the layout is never unchecked.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stickyproof.sweep.columns import HISTORY, INVARIANTS, REBALANCE, arrow_schema, empty_row
from stickyproof.sweep.findings import collect_findings
from stickyproof.sweep.report import _cumulative, _moves_possible, _stickiness, _worst_rows, write_report
from stickyproof.sweep.rows import history_document
from stickyproof.sweep.store import SweepDir, failure_file_name, history_file_name
from stickyproof.sweep.summary import load_frames, summarize_frame

ROOT = Path(__file__).resolve().parents[1]


def history_rows(seed: int, index: int, assignor: str, *, unnecessary: tuple[int, ...] = (0, 0),
                 optimal_kept: tuple[int, ...] = (4, 4), fail: int | None = None, kind: str = "imbalance") -> list[dict]:
    """One small history of ``len(unnecessary)`` rebalances and its history row; rebalance ``fail`` breaks ``kind``."""
    rows = []
    for number, (unnec, best) in enumerate(zip(unnecessary, optimal_kept), start=1):
        r = empty_row(REBALANCE, "histories", seed, index, assignor, rebalance=number)
        r.update({name: False for name in INVARIANTS})
        failed = number == fail
        kept = best - unnec
        r.update(scale="small", event=f"c{number} joins (t)", follow_up=False, valid=not failed, contract="kafka",
                 contract_balanced=not failed, kept=None if failed else kept,
                 optimal_kept=None if failed else best,
                 stickiness=None if failed else (1.0 if best == 0 else kept / best),
                 unnecessary=None if failed else unnec, moved=2 + unnec, owned=6,
                 optimal_moves=None if failed else 6 - best, assign_seconds=0.001 * number, members=3,
                 subscribed_partitions=6, subscription="uniform", protocol="eager", scenario_hash=f"h{index}-{number}",
                 failing=failed, failures=kind if failed else None, unexpected=kind if failed else None)
        r[kind] = failed if kind in INVARIANTS else False
        if failed:
            r["scenario"] = json.dumps({"format": "stickyproof.scenario/1", "topics": {"t": 3},
                                        "members": [{"id": "c0", "topics": ["t"]}]})
        rows.append(r)
    h = empty_row(HISTORY, "histories", seed, index, assignor)
    h.update(scale="small", rebalances=len(unnecessary), follow_ups=0, failing_rows=int(fail is not None),
             monitor_no_double_consumption=True)
    return rows + [h]


def write_rows(out: SweepDir, rows: list[dict]) -> None:
    out.prepare()
    chunk = out.grades / "chunk=c1"
    chunk.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema()), chunk / "part-0.parquet")
    out.sync_failures()


def report_of(out: SweepDir, rows: list[dict]) -> tuple[Path, object, object]:
    write_rows(out, rows)
    rebalances, histories = load_frames(out.root)
    summary = summarize_frame(out.root, rebalances, histories)
    failing = rebalances[rebalances["failing"] == True]  # noqa: E712
    findings = collect_findings(failing.to_dict("records"), histories.to_dict("records"))
    return write_report(out, summary, rebalances, histories, findings, [], {"source": "histories"}), rebalances, summary


def sample_rows() -> list[dict]:
    return (history_rows(0, 0, "range", unnecessary=(0, 3), optimal_kept=(0, 4))
            + history_rows(0, 1, "range", unnecessary=(1, 0), fail=2)
            + history_rows(0, 0, "sticky", unnecessary=(0, 0), optimal_kept=(0, 4))
            + history_rows(0, 1, "sticky", unnecessary=(0, 2)))


def test_report_opens_with_the_verdict_then_the_table_the_ecdf_and_the_worst_rebalances(tmp_path):
    path, _, _ = report_of(SweepDir(tmp_path / "run"), sample_rows())
    text = path.read_text()
    order = ["id=verdict", "range: 1 of 4 rebalances (2 histories) broke a promise: 1 imbalance",
             "sticky: kept every promise on 4 of 4 rebalances (2 histories)", "<table class=summary",
             "Stickiness per assignor (ECDF)", "id=worst", "Cumulative moves", "Assign time against group size",
             "id=triage"]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert text.count("data:image/png;base64,") == 3
    assert "src='http" not in text and "<script" not in text  # nothing loaded from elsewhere


def test_stickiness_is_measured_only_where_the_optimum_keeps_something(tmp_path):
    out = SweepDir(tmp_path / "run")
    write_rows(out, sample_rows())
    rebalances, _ = load_frames(out.root)
    kept = _moves_possible(rebalances)
    assert (kept["optimal_kept"] > 0).all() and kept["valid"].all()
    # range: (0, 0) keeps nothing, (0, 1) failed; sticky: (0, 0) keeps nothing
    assert sorted(zip(kept["assignor"], kept["index"], kept["rebalance"])) == [
        ("range", 0, 2), ("range", 1, 1), ("sticky", 0, 2), ("sticky", 1, 1), ("sticky", 1, 2)]


def _figure(draw, rebalances):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    draw(ax, rebalances[rebalances["skipped"].isna()], sorted(rebalances["assignor"].unique()))
    fig.canvas.draw()
    return fig, ax, plt


@pytest.mark.parametrize("draw", [_stickiness, _cumulative])
def test_every_legend_lies_off_the_data_and_every_axis_is_labelled(tmp_path, draw):
    out = SweepDir(tmp_path / "run")
    write_rows(out, sample_rows())
    rebalances, _ = load_frames(out.root)
    fig, ax, plt = _figure(draw, rebalances)
    try:
        legend = ax.get_legend().get_window_extent()
        axes = ax.get_window_extent()
        assert legend.x0 >= axes.x1  # right of the plotting area, never over a line
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    finally:
        plt.close(fig)


def test_one_optimum_line_per_distinct_optimum_series(tmp_path):
    out = SweepDir(tmp_path / "run")
    # both assignors face the same optimum on history 1: one black line names both
    write_rows(out, history_rows(0, 1, "range", unnecessary=(1, 0)) + history_rows(0, 1, "sticky", unnecessary=(0, 2)))
    rebalances, _ = load_frames(out.root)
    fig, ax, plt = _figure(_cumulative, rebalances)
    try:
        labels = [line.get_label() for line in ax.get_lines()]
        assert labels.count("optimum for range, sticky") == 1 and not [x for x in labels if x.startswith("optimum")
                                                                         and x != "optimum for range, sticky"]
    finally:
        plt.close(fig)


def test_worst_rebalances_come_failing_first_then_by_unnecessary_moves_with_pasteable_replays(tmp_path):
    out = SweepDir(tmp_path / "a dir with spaces")
    path, rebalances, _ = report_of(out, sample_rows())
    worst = [(r["assignor"], r["index"], r["rebalance"]) for r in _worst_rows(rebalances)]
    assert worst == [("range", 1, 2), ("range", 0, 2), ("sticky", 1, 2), ("range", 1, 1)]
    text = path.read_text()
    import html

    commands = [html.unescape(c) for c in text.split("<code>")[1:] if c.startswith("stickyproof ")]
    commands = [c.split("</code>")[0] for c in commands]
    failure = out.failures / failure_file_name(0, 1, 2, "range")
    assert f"stickyproof grade {shlex.quote(str(failure))} --assignor range" in commands
    replay = out.histories / history_file_name(0, 0, "range")
    simulate = f"stickyproof simulate {shlex.quote(str(replay))} --assignor range"
    assert simulate in commands and shlex.split(simulate)[2] == str(replay)
    # the history written for the table is the document the sweep's run of that history has
    assert json.loads(replay.read_text()) == json.loads(json.dumps(history_document(0, 0, "small", "range")))


def test_history_document_is_the_runs_own_replay_document():
    from stickyproof.group.stepper import run_history
    from stickyproof.model import dump_json
    from stickyproof.scenarios.histories import draw_history

    for assignor in ("cooperative-sticky", "sticky@2.2"):
        run = run_history(draw_history(0, 1, scale="small"), assignor)
        assert dump_json(history_document(0, 1, "small", assignor)) == dump_json(dict(run.document))


# ------------------------------------------------------------------------------------------
# headless Chromium


def _check_report():
    spec = importlib.util.spec_from_file_location("check_report", ROOT / "scripts" / "check_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _browser(check_report) -> str:
    browser = check_report.find_browser(None)
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set and no Chromium is installed: .ci/run installs Debian's chromium")
        pytest.skip("no Chromium on this machine (CI installs one; this test never skips there)")
    return browser


@pytest.mark.parametrize("width", [1000, 1400])
def test_report_fits_the_window_with_the_verdict_in_the_first_screen(tmp_path, width):
    """At 1,000 and 1,400 px: the page scrolls only down, no element passes the right edge or hides
    its content, and the whole verdict is in the first 900 px; with long names, long paths and many
    assignors."""
    check_report = _check_report()
    browser = _browser(check_report)
    out = SweepDir(tmp_path / ("a-rather-long-directory-name-" * 4))
    names = ("cooperative-sticky@3.5.1", "range", "sticky@2.2", "roundrobin", "cooperative-sticky", "sticky",
             "exec:" + "/opt/some/long/path/harness " * 3, "kafka-python:cooperative-sticky")
    rows = [r for i, name in enumerate(names)
            for index in range(3)
            for r in history_rows(i, index, name, unnecessary=(index, 2 * index), fail=2 if index == 1 else None)]
    path, _, _ = report_of(out, rows)
    result = check_report.check(path, width, browser, 900)
    assert result["scrollWidth"] <= width and result["offenders"] == [], result
    assert check_report.verdict_in_first_screen(result), result
