"""The sweep's machinery fails in one line: a wrong ``--master`` within seconds, Ctrl-C at any
moment with what is kept and how to resume, progress lines in a log, and progress inside a chunk.

The master checks and the progress lines need no Spark; the rest start one (``spark`` marker).
The Ctrl-C tests run ``stickyproof sweep`` as a real process and send SIGINT to its process
group, as a terminal's Ctrl-C does (the JVM and the Python workers get it too).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stickyproof.errors import SweepError
from stickyproof.sweep.console import ProgressLines, clock, running_note
from stickyproof.sweep.job import GradingStatus, Running
from stickyproof.sweep.session import check_master

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parent.parent
INTERRUPTED = re.compile(r"^interrupted: (\d+) of (\d+) tasks kept in (\S+); run the same command to resume$")


def _refused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("HADOOP_CONF_DIR", None)
    env.pop("YARN_CONF_DIR", None)
    return env


# -- the master, checked before Spark starts ---------------------------------------------------


@pytest.mark.parametrize("master", ["local", "local[*]", "local[2]", "local[4,2]", "local-cluster[2,1,1024]"])
def test_local_masters_need_no_check(master):
    check_master(master)


def test_an_unreachable_standalone_master_is_named_with_what_was_tried():
    port = _refused_port()
    with pytest.raises(SweepError, match=rf"^--master spark://127\.0\.0\.1:{port}: no Spark master reachable "
                                         rf"\(127\.0\.0\.1:{port}: connection refused\)"):
        check_master(f"spark://127.0.0.1:{port}")


def test_a_standalone_master_with_one_live_host_of_two_passes():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        live = listening.getsockname()[1]
        check_master(f"spark://127.0.0.1:{_refused_port()},127.0.0.1:{live}")


def test_yarn_without_its_configuration_is_named(monkeypatch):
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    monkeypatch.delenv("YARN_CONF_DIR", raising=False)
    with pytest.raises(SweepError, match=r"^--master yarn: neither HADOOP_CONF_DIR nor YARN_CONF_DIR is set"):
        check_master("yarn")


def test_yarn_names_the_resource_manager_it_cannot_reach(monkeypatch, tmp_path):
    port = _refused_port()
    (tmp_path / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.address</name>"
        f"<value>127.0.0.1:{port}</value></property></configuration>")
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    with pytest.raises(SweepError, match=rf"^--master yarn: the ResourceManager 127\.0\.0\.1:{port} named by yarn-site"):
        check_master("yarn")


@pytest.mark.parametrize("master, said", [
    ("lcoal[2]", "not a Spark master URL"),
    ("spark://", "no host"),
    ("spark://h:port", "port 'port' is not a number"),
    ("k8s://https://127.0.0.1:{port}", "Kubernetes API server 127.0.0.1:{port} is not reachable"),
])
def test_a_malformed_or_dead_master_is_one_line_naming_the_flag(master, said):
    port = _refused_port()
    with pytest.raises(SweepError) as caught:
        check_master(master.format(port=port))
    assert str(caught.value).startswith("--master ") and said.format(port=port) in str(caught.value)


def test_the_sweep_command_fails_on_a_dead_master_in_seconds_without_starting_java(tmp_path):
    out = tmp_path / "run"
    started = time.monotonic()
    done = subprocess.run(
        [PYTHON, "-m", "stickyproof", "sweep", "--count", "1", "--assignors", "range", "--out", str(out),
         "--master", f"spark://127.0.0.1:{_refused_port()}"],
        capture_output=True, text=True, env=_env(), timeout=120,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("SweepError: --master spark://127.0.0.1:"), done.stderr
    assert not (out / "spark.log").exists()  # no JVM was started
    assert seconds < 60  # python start-up and imports only (74 s of Spark retries before)


# -- progress lines in a log ---------------------------------------------------------------------


def _status(done: float, running: tuple[Running, ...] = (), started: bool = True) -> GradingStatus:
    return GradingStatus(done=done, total=432, kept=12 + int(done), owed=444, running=running, started=started)


def test_progress_lines_come_every_ten_seconds_with_elapsed_time_and_eta():
    now = [0.0]
    lines = ProgressLines(every=10.0, now=lambda: now[0])
    assert lines.line(_status(0, started=False)) is None  # before Spark starts: nothing to say yet
    assert lines.line(_status(0)) == "grading 432 tasks (12 already present)"
    now[0] = 4.0
    assert lines.line(_status(3)) is None
    now[0] = 10.5
    assert lines.line(_status(0)) == "graded 0/432 tasks, 10s; Spark's Python workers starting"
    now[0] = 21.0
    assert lines.line(_status(0.5, (Running(3, "range", "small", 0.1),))) == "graded 0/432 tasks, 21s, ETA 5h02m"
    now[0] = 190.0
    assert lines.line(_status(120)) == "graded 120/432 tasks, 3m10s, ETA 8m14s"
    now[0] = 191.0
    assert lines.line(_status(432)) == "graded 432/432 tasks, 3m11s"  # the end is said at once, once
    now[0] = 250.0
    assert lines.line(_status(432)) is None


def test_the_eta_is_reckoned_in_planned_cost_when_the_large_tasks_run_first():
    # one large task (cost 150) of 1 + 431 small ones (cost 1 each) done after 3 minutes: by tasks the
    # ETA would read 22 hours; by cost, 581 - 150 = 431 units left at 150 units per 3 minutes
    now = [0.0]
    lines = ProgressLines(every=10.0, now=lambda: now[0])
    lines.line(_status(0))
    now[0] = 180.0
    status = GradingStatus(done=1, total=432, kept=1, owed=432, cost_done=150.0, cost_total=581.0)
    assert lines.line(status) == "graded 1/432 tasks, 3m00s, ETA 8m37s"


def test_a_long_task_is_named_in_the_progress():
    large = Running(index=0, assignor="cooperative-sticky", scale="large", seconds=95.0)
    short = Running(index=7, assignor="range", scale="small", seconds=0.2)
    assert running_note((short,)) == ""
    assert running_note((large, short)) == "history 0 (large) with cooperative-sticky for 1m35s"
    now = [0.0]
    lines = ProgressLines(every=10.0, now=lambda: now[0])
    lines.line(_status(0))
    now[0] = 95.0
    assert lines.line(_status(0, (large, short))) == \
        "graded 0/432 tasks, 1m35s; running history 0 (large) with cooperative-sticky for 1m35s"
    assert clock(3725) == "1h02m"


# -- with Spark ------------------------------------------------------------------------------------


def _slow_task(seed, index, assignor, params):
    from stickyproof.sweep.columns import empty_row

    time.sleep(1.5 if index == 0 else 0.3)
    r = empty_row("rebalance", "histories", seed, index, assignor, rebalance=1)
    r.update(valid=True, stickiness=1.0, scenario_hash=f"{seed}-{index}")
    return [r, empty_row("history", "histories", seed, index, assignor)]


@pytest.fixture(scope="module")
def spark():
    from pyspark import cloudpickle

    from stickyproof.sweep.session import start_session

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    session = start_session("local[2]", app_name="stickyproof-tests")
    yield session


@pytest.mark.spark
def test_progress_counts_tasks_inside_a_running_chunk(spark, tmp_path):
    """One chunk of two slots, eight tasks: Spark alone says 0 until a slot ends; the status files
    count each task, and the running task is named with its time."""
    from stickyproof.sweep.run import run_sweep

    seen: list[GradingStatus] = []
    outcome = run_sweep(tmp_path / "run", count=8, seed=1, assignors=["a"], task_fn=_slow_task, session=spark,
                        chunk_tasks=8, report=False, status=seen.append)
    assert outcome.grading.tasks_computed == 8
    assert seen[0] == GradingStatus(0.0, 8, 0, 8, started=False)
    inside = [s.done for s in seen if s.started and s.kept == 0]  # before the one chunk was committed
    assert any(0 < done < 8 for done in inside), inside
    assert any(r.index >= 0 and r.assignor == "a" for s in seen for r in s.running)
    assert seen[-1].done == 8 and seen[-1].kept == 8
    assert list((tmp_path / "run" / "_staging").iterdir()) == []  # the status files went with the commit


def _sweep_command(out: Path) -> list[str]:
    return [PYTHON, "-m", "stickyproof", "sweep", "--count", "8", "--seed", "5", "--scale", "small",
            "--assignors", "range", "--out", str(out), "--chunk", "1", "--master", "local[1]", "--no-report"]


def _interrupt(out: Path, when) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(_sweep_command(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not when() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, f"the sweep ended before the moment came: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C at a terminal: the whole foreground group
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def _committed_tasks(out: Path) -> int:
    from stickyproof.sweep.store import SweepDir

    return sum(len(a) for a in SweepDir(out).keys_present(5).values())


@pytest.mark.spark
def test_ctrl_c_during_spark_start_up_says_what_is_kept_in_one_line(tmp_path):
    out = tmp_path / "run"
    done = _interrupt(out, lambda: (out / "spark.log").exists())  # the JVM is being launched
    assert done.returncode == 130
    lines = [line for line in done.stderr.splitlines() if not line.startswith("starting Spark (local[1]) for 8 tasks")]
    assert len(lines) == 1, done.stderr
    match = INTERRUPTED.match(lines[0])
    assert match and match.groups() == ("0", "8", str(out)), lines[0]


@pytest.mark.spark
def test_ctrl_c_while_grading_keeps_committed_tasks_and_the_same_command_resumes(tmp_path):
    out = tmp_path / "run"
    # a chunk committed, not merely its folder begun (CI saw the signal land between the two: "0 of 8 kept")
    done = _interrupt(out, lambda: (out / "grades").exists() and _committed_tasks(out) >= 1)
    assert done.returncode == 130
    lines = [line for line in done.stderr.splitlines() if not line.startswith(("starting Spark ", "grading ", "graded "))]
    assert len(lines) == 1, done.stderr
    match = INTERRUPTED.match(lines[0])
    assert match, lines[0]
    kept, owed = int(match.group(1)), int(match.group(2))
    assert owed == 8 and 1 <= kept == _committed_tasks(out)
    if kept == owed:
        return  # every task was committed before the signal landed: nothing to resume
    resumed = subprocess.run(_sweep_command(out) + ["--json"], capture_output=True, text=True, env=_env(), timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    import json

    doc = json.loads(resumed.stdout)
    assert (doc["tasks_present_before"], doc["tasks_computed"]) == (kept, owed - kept)
    assert _committed_tasks(out) == owed


def test_py4j_tracebacks_through_the_root_logger_are_filtered_and_nothing_else_is(capsys):
    """CI saw Ctrl-C land while py4j read an answer: ``GatewayClient.send_command`` logs the broken
    connection with ``logging.exception`` on the root logger (34 lines of traceback on stderr)."""
    import logging

    from stickyproof.sweep import session

    root = logging.getLogger()
    try:
        session._quiet_py4j()
        import py4j

        py4j_file = os.path.join(os.path.dirname(py4j.__file__), "java_gateway.py")
        from_py4j = root.makeRecord("root", logging.ERROR, py4j_file, 1059, "Exception while sending command.", (), None)
        ours = root.makeRecord("root", logging.ERROR, __file__, 1, "ours", (), None)
        assert not root.filter(from_py4j)
        assert root.filter(ours)
    finally:
        root.removeFilter(session._from_py4j)
