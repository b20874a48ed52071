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

from stickyproof.sweep.rows import INVARIANTS, arrow_schema, empty_row  # noqa: E402
from stickyproof.sweep.run import run_sweep  # noqa: E402
from stickyproof.sweep.store import SweepDir, read_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def fake_rows(seed, index, assignors, params):
    """A cheap stand-in for grading: deterministic values, every 7th group failing imbalance."""
    rows = []
    for a in assignors:
        r = empty_row(seed, index, a)
        bad = index % 7 == 3
        r.update({name: False for name in INVARIANTS})
        r.update(
            scenario_hash=f"{seed}-{index}",
            valid=not bad,
            imbalance=bad,
            balanced_kafka=not bad,
            kept=index % 5,
            optimal_kept=5,
            stickiness=(index % 5) / 5,
            moved=1,
            assign_seconds=0.001,
            solve_seconds=0.002,
            members=2 + index % 3,
            topics=1,
            partitions=3 + index % 4,
            subscribed_partitions=3 + index % 4,
            subscription="uniform" if index % 2 else "nested",
            protocol="eager",
            versions="3",
            stale_claimants=0,
        )
        if bad:
            r["scenario"] = json.dumps(
                {"format": "stickyproof.scenario/1", "topics": {"t": 3}, "members": [{"id": "c0", "topics": ["t"]}]}
            )
        rows.append(r)
    return rows


def crashing_rows(seed, index, assignors, params):
    if index == 4:
        raise RuntimeError(f"boom at index {index}")
    return fake_rows(seed, index, assignors, params)


@pytest.fixture(scope="session")
def spark():
    from pyspark import cloudpickle

    from stickyproof.sweep.session import start_session

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    session = start_session("local[2]", app_name="stickyproof-tests")
    yield session
    session.stop()


def keys(out: Path) -> list[tuple[int, int, str]]:
    t = read_table(SweepDir(out).grades, ["seed", "index", "assignor"])
    return list(zip(*(t.column(c).to_pylist() for c in ("seed", "index", "assignor"))))


def test_sweep_end_to_end_on_local_spark(spark, tmp_path):
    out = tmp_path / "run"
    seen = []
    outcome = run_sweep(
        out, groups=24, seed=5, assignors=["a", "b"], row_fn=fake_rows, session=spark, chunk_groups=8,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert outcome.grading.rows_computed == 48 and len(outcome.grading.chunks_written) == 3
    ks = keys(out)
    assert len(ks) == len(set(ks)) == 48
    assert sorted(ks) == [(5, i, a) for i in range(24) for a in ("a", "b")]
    # Spark reads the layout as one table (plus the chunk column of the Hive-style directories).
    df = spark.read.parquet(str(out / "grades"))
    assert df.count() == 48
    assert set(arrow_schema().names) <= set(df.columns)
    # Failing rows: group indices 3, 10, 17 for both assignors.
    assert sorted(p.name for p in (out / "failures").iterdir()) == sorted(
        f"5-{i}-{a}.json" for i in (3, 10, 17) for a in ("a", "b")
    )
    lines = {(l.assignor, l.scenario_class): l for l in outcome.summary.lines}
    assert lines[("a", "all")].groups == 24 and lines[("a", "all")].violations["imbalance"] == 3
    assert outcome.report == out / "report.html" and "data:image/png;base64," in outcome.report.read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert sum(c["rows"] for c in manifest["chunks"].values()) == 48
    assert seen[0] == (0.0, 24) and seen[-1] == (24.0, 24)
    assert list((out / "_staging").iterdir()) == []


def test_rerun_computes_only_what_is_missing(spark, tmp_path):
    out = tmp_path / "run"
    run_sweep(out, groups=16, seed=1, assignors=["a"], row_fn=fake_rows, session=spark, chunk_groups=8, report=False)
    parts = sorted(p.relative_to(out) for p in (out / "grades").rglob("*.parquet"))
    mtimes = [(out / p).stat().st_mtime_ns for p in parts]
    again = run_sweep(out, groups=16, seed=1, assignors=["a"], row_fn=fake_rows, session=spark, chunk_groups=8, report=False)
    assert (again.grading.rows_computed, again.grading.rows_present, again.grading.chunks_written) == (0, 16, ())
    assert sorted(p.relative_to(out) for p in (out / "grades").rglob("*.parquet")) == parts
    assert [(out / p).stat().st_mtime_ns for p in parts] == mtimes
    # More groups and one more assignor: only the new keys are graded.
    more = run_sweep(out, groups=20, seed=1, assignors=["a", "b"], row_fn=fake_rows, session=spark, chunk_groups=8, report=False)
    assert more.grading.rows_computed == 4 + 20
    ks = keys(out)
    assert len(ks) == len(set(ks)) == 40


def test_a_crashing_group_becomes_an_error_row(spark, tmp_path):
    out = tmp_path / "run"
    outcome = run_sweep(out, groups=8, seed=0, assignors=["a", "b"], row_fn=crashing_rows, session=spark, report=False)
    t = read_table(SweepDir(out).grades, ["index", "assignor", "valid", "error"]).to_pylist()
    errors = [r for r in t if r["error"]]
    assert len(t) == 16 and [(r["index"], r["assignor"]) for r in errors] == [(4, "a"), (4, "b")]
    assert all(r["valid"] is False and r["error"].startswith("row: RuntimeError: boom at index 4") for r in errors)
    assert sum(l.errors for l in outcome.summary.lines if l.scenario_class == "all") == 2


_DRIVER = textwrap.dedent(
    """
    import sys, time
    from stickyproof.sweep.rows import empty_row
    from stickyproof.sweep.run import run_sweep

    def slow_rows(seed, index, assignors, params):
        time.sleep(float(sys.argv[3]))
        rows = []
        for a in assignors:
            r = empty_row(seed, index, a)
            r.update(valid=True, stickiness=1.0, scenario_hash=f"{seed}-{index}")
            rows.append(r)
        return rows

    outcome = run_sweep(sys.argv[1], groups=int(sys.argv[4]), seed=3, assignors=["a"], row_fn=slow_rows,
                        master=sys.argv[2], chunk_groups=4, report=False)
    print("ROWS", outcome.summary.rows, flush=True)
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
    resumed = run_sweep(out, groups=12, seed=3, assignors=["a"], row_fn=fake_rows, session=spark, chunk_groups=4, report=False)
    assert resumed.grading.rows_computed == 12 - len(before)
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
    assert "ROWS 4" in done.stdout
    ks = keys(out)
    assert sorted(ks) == [(3, i, "a") for i in range(4)]


def test_stickyproof_sweep_command_grades_real_groups(spark, tmp_path, capsys):
    """The CLI on the shared session: real sampler, leader, assignors and oracles; summary and report."""
    from stickyproof.cli import main

    out = tmp_path / "run"
    args = ["sweep", "--groups", "6", "--seed", "11", "--assignors", "range,cooperative-sticky", "--out", str(out),
            "--space", "members=1..4", "partitions=1..4", "--shrink-seconds", "20"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert f"report: {out / 'report.html'}" in printed and "cooperative-sticky" in printed
    rows = read_table(SweepDir(out).grades).to_pylist()
    assert sorted((r["index"], r["assignor"]) for r in rows) == [(i, a) for i in range(6) for a in ("cooperative-sticky", "range")]
    graded = [r for r in rows if not r["skipped"]]
    assert graded and all(r["error"] or r["stickiness"] is not None for r in graded)
    assert all(r["skipped"] == "cooperative protocol unsupported (R36)" for r in rows if r["assignor"] == "range" and r["protocol"] == "cooperative")
    failing = {f"11-{r['index']}-{r['assignor']}.json" for r in rows if r["valid"] is False and r["scenario"]}
    assert {p.name for p in (out / "failures").iterdir()} == failing
    # The same command again grades nothing new.
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["rows_computed"], doc["rows_present_before"]) == (0, 12)
