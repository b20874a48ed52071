"""The sweep on Spark, end to end: rows and columns, resume without duplicates, crashes as rows,
a killed run, and a standalone Spark master and worker on loopback.

One SparkSession (local[2]) serves every in-process test; the kill and cluster tests run their
own driver in a subprocess because a process holds one SparkContext at a time. Row functions
defined here travel to the Python workers by value (``register_pickle_by_value``): the workers
cannot import this test module by name.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

from stickyproof.sweep.columns import HISTORY, INVARIANTS, REBALANCE, arrow_schema, empty_row  # noqa: E402
from stickyproof.sweep.run import run_sweep  # noqa: E402
from stickyproof.sweep.store import SweepDir, read_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SCENARIO = json.dumps({"format": "stickyproof.scenario/1", "topics": {"t": 3}, "members": [{"id": "c0", "topics": ["t"]}]})


def fake_task(seed, index, assignor, params):
    """A cheap stand-in for a history task: two graded rebalances and the history row; every 7th
    history's second rebalance breaks its balance promise with no known cause."""
    rows = []
    bad = index % 7 == 3
    for number in (1, 2):
        r = empty_row(REBALANCE, "histories", seed, index, assignor, rebalance=number)
        failing = bad and number == 2
        r.update({name: False for name in INVARIANTS})
        r.update(
            scale="small", event="c1 joins (t)" if number == 1 else "c2 leaves", follow_up=False, generation=number,
            scenario_hash=f"{seed}-{index}-{number}", valid=not failing, imbalance=failing,
            unexpected="imbalance" if failing else None, contract_balanced=not failing, contract="kafka",
            kept=index % 5, optimal_kept=5, stickiness=None if failing else (index % 5) / 5, unnecessary=1, moved=2,
            owned=5, optimal_moves=1, assign_seconds=0.001, solve_seconds=0.002, members=2 + index % 3, topics=1,
            partitions=3 + index % 4, subscribed_partitions=3 + index % 4,
            subscription="uniform" if index % 2 else "nested", protocol="eager", versions="3",
        )
        if failing:
            r["scenario"] = SCENARIO
        rows.append(r)
    h = empty_row(HISTORY, "histories", seed, index, assignor)
    h.update(scale="small", rebalances=2, follow_ups=0, failing_rows=int(bad), moved_total=4, moved_known=4,
             optimal_moves_known=2, known_rows=2, unowned=0, monitor_no_double_consumption=True, ended="settled")
    rows.append(h)
    return rows


def crashing_task(seed, index, assignor, params):
    if index == 4:
        raise RuntimeError(f"boom at index {index}")
    return fake_task(seed, index, assignor, params)


@pytest.fixture(scope="session")
def spark():
    from pyspark import cloudpickle

    from stickyproof.sweep.session import start_session

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    session = start_session("local[2]", app_name="stickyproof-tests")
    yield session
    session.stop()


def keys(out: Path, kind: str = HISTORY) -> list[tuple[int, int, str]]:
    import pyarrow.dataset as ds

    t = read_table(SweepDir(out).grades, ["seed", "index", "assignor"], filter=ds.field("kind") == kind)
    return list(zip(*(t.column(c).to_pylist() for c in ("seed", "index", "assignor"))))


def test_sweep_end_to_end_on_local_spark(spark, tmp_path):
    out = tmp_path / "run"
    seen = []
    outcome = run_sweep(
        out, count=24, seed=5, assignors=["a", "b"], task_fn=fake_task, session=spark, chunk_tasks=16,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert outcome.grading.tasks_computed == 48 and len(outcome.grading.chunks_written) == 3
    assert outcome.grading.rows_written == 48 * 3
    ks = keys(out)
    assert len(ks) == len(set(ks)) == 48
    assert sorted(ks) == [(5, i, a) for i in range(24) for a in ("a", "b")]
    # Spark reads the layout as one table (plus the chunk column of the Hive-style directories).
    df = spark.read.parquet(str(out / "grades"))
    assert df.count() == 48 * 3
    assert set(arrow_schema().names) <= set(df.columns)
    # Failing rows: the second rebalance of histories 3, 10, 17 for both assignors.
    assert sorted(p.name for p in (out / "failures").iterdir()) == sorted(
        f"5-{i}-2-{a}.json" for i in (3, 10, 17) for a in ("a", "b")
    )
    lines = {(l.assignor, l.klass): l for l in outcome.summary.lines}
    a = lines[("a", "all")]
    assert (a.rows, a.histories, a.failing, a.unexpected, a.violations["imbalance"]) == (48, 24, 3, 3, 3)
    assert a.valid_pct == round(100 * 45 / 48, 2) and a.unnecessary_per_rebalance == 1.0
    assert a.moves_over_optimum == 2.0 and a.follow_ups_per_rebalance == 0.0
    (finding,) = [f for f in outcome.findings if f.rule == "a: imbalance"]
    assert (finding.section, finding.rows) == ("unexpected", 3)
    text = outcome.report.read_text()
    assert outcome.report == out / "report.html" and text.count("data:image/png;base64,") == 3
    assert text.index("<table") < text.index("data:image/png") < text.index("unexpected failures (2)")
    manifest = json.loads((out / "manifest.json").read_text())
    assert sum(c["rows"] for c in manifest["chunks"].values()) == 48 * 3
    assert seen[0] == (0.0, 48) and seen[-1] == (48.0, 48)
    assert list((out / "_staging").iterdir()) == []


def test_rerun_computes_only_what_is_missing(spark, tmp_path):
    out = tmp_path / "run"
    run_sweep(out, count=16, seed=1, assignors=["a"], task_fn=fake_task, session=spark, chunk_tasks=8, report=False)
    parts = sorted(p.relative_to(out) for p in (out / "grades").rglob("*.parquet"))
    mtimes = [(out / p).stat().st_mtime_ns for p in parts]
    again = run_sweep(out, count=16, seed=1, assignors=["a"], task_fn=fake_task, session=spark, chunk_tasks=8, report=False)
    assert (again.grading.tasks_computed, again.grading.tasks_present, again.grading.chunks_written) == (0, 16, ())
    assert sorted(p.relative_to(out) for p in (out / "grades").rglob("*.parquet")) == parts
    assert [(out / p).stat().st_mtime_ns for p in parts] == mtimes
    # More histories and one more assignor: only the new tasks run.
    more = run_sweep(out, count=20, seed=1, assignors=["a", "b"], task_fn=fake_task, session=spark, chunk_tasks=8,
                     report=False)
    assert more.grading.tasks_computed == 4 + 20
    ks = keys(out)
    assert len(ks) == len(set(ks)) == 40


def test_a_crashing_task_becomes_an_error_row(spark, tmp_path):
    out = tmp_path / "run"
    outcome = run_sweep(out, count=8, seed=0, assignors=["a", "b"], task_fn=crashing_task, session=spark, report=False)
    t = read_table(SweepDir(out).grades, ["kind", "index", "assignor", "valid", "error"]).to_pylist()
    errors = [r for r in t if r["error"]]
    assert [(r["kind"], r["index"], r["assignor"]) for r in errors] == [(HISTORY, 4, "a"), (HISTORY, 4, "b")]
    assert all(r["error"].startswith("task: RuntimeError: boom at index 4") for r in errors)
    crashed = [f for f in outcome.findings if f.section == "unexpected" and "crashed" in f.text]
    assert crashed and sum(f.histories for f in crashed) == 2
    assert [line.unexpected for line in outcome.summary.lines] == [1 + 1, 1 + 1]  # history 3's imbalance, the crash


_DRIVER = textwrap.dedent(
    """
    import sys, time
    from stickyproof.sweep.columns import empty_row
    from stickyproof.sweep.run import run_sweep

    DELAY = float(sys.argv[3])  # read here: an executor's sys.argv is not the driver's

    def slow_task(seed, index, assignor, params):
        time.sleep(DELAY)
        r = empty_row("rebalance", "histories", seed, index, assignor, rebalance=1)
        r.update(valid=True, stickiness=1.0, scenario_hash=f"{seed}-{index}")
        return [r, empty_row("history", "histories", seed, index, assignor)]

    outcome = run_sweep(sys.argv[1], count=int(sys.argv[4]), seed=3, assignors=["a"], task_fn=slow_task,
                        master=sys.argv[2], chunk_tasks=4, report=False)
    print("ROWS", outcome.summary.rows, "ERRORS", sum(l.errors for l in outcome.summary.lines), flush=True)
    """
)


def _driver(tmp_path: Path) -> Path:
    path = tmp_path / "driver.py"
    path.write_text(_DRIVER)
    return path


def _committed(out: Path) -> int:
    grades = out / "grades"
    return len(list(grades.glob("chunk=*"))) if grades.exists() else 0


def test_a_killed_run_loses_nothing_and_resumes(spark, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [PYTHON, str(_driver(tmp_path)), str(out), "local[2]", "0.25", "12"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while _committed(out) < 1 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        assert _committed(out) >= 1
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its JVM, mid-chunk
        proc.wait(timeout=30)
    before = keys(out)
    assert len(before) == len(set(before)) and len(before) % 4 == 0  # whole chunks only
    assert not [r for r in read_table(SweepDir(out).grades, ["error"]).to_pylist() if r["error"]]
    resumed = run_sweep(out, count=12, seed=3, assignors=["a"], task_fn=fake_task, session=spark, chunk_tasks=4,
                        report=False)
    assert resumed.grading.tasks_computed == 12 - len(before)
    after = keys(out)
    assert len(after) == len(set(after)) == 12 and set(before) <= set(after)
    assert list((out / "_staging").iterdir()) == []


# ------------------------------------------------------------------------------------------
# A standalone Spark cluster (master + one worker) on loopback, from the installed pyspark.


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(log: Path, text: str, proc: subprocess.Popen, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.25)
    return False


@pytest.fixture
def standalone_master(tmp_path):
    """``spark://127.0.0.1:PORT`` of a master and a 2-core worker started here; both killed after the test."""
    from pyspark.find_spark_home import _find_spark_home

    home = _find_spark_home()
    spark_class = Path(home) / "bin" / "spark-class"
    env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs = {name: tmp_path / f"{name}.log" for name in ("master", "worker")}
    try:
        master = subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(_free_port())],
            stdout=logs["master"].open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
        procs.append(master)
        deadline = time.monotonic() + 60
        if not _wait_for(logs["master"], "New state: ALIVE", master, deadline):
            pytest.skip(f"the standalone master did not start within 60 s: {logs['master'].read_text()[-500:]}")
        worker = subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "2",
             "--memory", "1g", "--webui-port", str(_free_port()), "--work-dir", str(tmp_path / "work")],
            stdout=logs["worker"].open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
        procs.append(worker)
        if not _wait_for(logs["worker"], "Successfully registered with master", worker, time.monotonic() + 60):
            pytest.skip(f"the standalone worker did not register within 60 s: {logs['worker'].read_text()[-500:]}")
        yield url
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)


def test_sweep_on_a_standalone_cluster(standalone_master, tmp_path):
    out = tmp_path / "run"
    done = subprocess.run(
        [PYTHON, str(_driver(tmp_path)), str(out), standalone_master, "0", "4"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ROWS 4 ERRORS 0" in done.stdout
    ks = keys(out)
    assert sorted(ks) == [(3, i, "a") for i in range(4)]


def test_stickyproof_sweep_command_runs_real_histories(spark, tmp_path, capsys):
    """The CLI on the shared session: drawn histories through the protocol, real assignors and oracles."""
    from stickyproof.cli import main

    out = tmp_path / "run"
    args = ["sweep", "--count", "6", "--seed", "11", "--scale", "small", "--assignors", "range,cooperative-sticky",
            "--out", str(out), "--shrink-seconds", "10"]
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    # the verdicts first (one sentence per assignor, wrapped), a blank line, then the table
    blank = printed.index("")
    assert [v.split(":")[0] for v in printed[:blank] if not v.startswith("  ")] == ["cooperative-sticky", "range"]
    head = next(i for i, line in enumerate(printed) if line.startswith("assignor"))
    assert head == blank + 2 and all(len(line) <= 120 for line in printed[:head + 3])
    assert [line.split()[0] for line in printed[head + 1:head + 3]] == ["cooperative-sticky", "range"]
    assert printed[-1] == f"report: {out / 'report.html'}"
    rows = read_table(SweepDir(out).grades).to_pylist()
    histories = sorted((r["index"], r["assignor"]) for r in rows if r["kind"] == HISTORY)
    assert histories == [(i, a) for i in range(6) for a in ("cooperative-sticky", "range")]
    rebalances = [r for r in rows if r["kind"] == REBALANCE]
    assert rebalances and all(r["event"] and r["generation"] is not None and r["scale"] == "small" for r in rebalances)
    assert all(r["stickiness"] <= 1.0 for r in rebalances if r["valid"] and r["stickiness"] is not None)
    assert not [r for r in rebalances if r["assignor"] == "range" and r["valid"] is False]
    # --by gives the detail; the same command grades nothing new.
    assert main(args + ["--json", "--by", "cause"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["tasks_computed"], doc["tasks_present_before"]) == (0, 12)
    assert {line["klass"] for line in doc["summary"]["lines"]} > {"all"}


def test_adversarial_source_on_spark(spark, tmp_path, capsys):
    from stickyproof.cli import main

    out = tmp_path / "adv"
    assert main(["sweep", "--source", "adversarial", "--count", "8", "--seed", "2", "--assignors", "sticky",
                 "--space", "members=1..4", "partitions=1..4", "past_count_claims=1", "--out", str(out),
                 "--no-report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tasks_computed"] == 8
    rows = read_table(SweepDir(out).grades).to_pylist()
    assert {r["kind"] for r in rows} == {REBALANCE} and all(r["rebalance"] == 0 for r in rows)
    assert all(r["past_count_claims"] >= 1 for r in rows)
    assert all("K1" in (r["hazards"] or "") or not r["unexpected"] for r in rows if r["valid"] is False)


def test_the_sweep_prints_kip848_lines_beside_the_classic_ones(spark, tmp_path, capsys):
    """Server-side assignors live consumer-group histories in the same job: one summary line each."""
    from stickyproof.cli import main

    out = tmp_path / "run"
    args = ["sweep", "--count", "3", "--seed", "0", "--scale", "small", "--assignors", "range,uniform,consumer-range",
            "--out", str(out), "--shrink-seconds", "5"]
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(printed) if line.startswith("assignor"))
    assert [line.split()[0] for line in printed[head + 1:head + 4]] == ["consumer-range", "range", "uniform"]
    rows = read_table(SweepDir(out).grades).to_pylist()
    consumer = [r for r in rows if r["kind"] == REBALANCE and r["assignor"] in ("uniform", "consumer-range")]
    assert consumer and all(r["protocol"] == "consumer" and r["consumer_contract"] and r["valid"] for r in consumer)
    assert all(r["protocol"] != "consumer" for r in rows if r["assignor"] == "range")
