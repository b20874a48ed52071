"""The same seed gives the same figures whatever the load and the core count.

Two runs of one sweep: one on ``local[2]`` on an idle machine, one on ``local[1]`` beside two
processes that keep both cores busy. Every column of every row but the timings must be equal:
solver budgets are deterministic (CP-SAT's ``cpsat_work``), so a busy machine changes how long a
sweep takes, never what it reports. (A figure once depended on load: an optimum past a wall-clock
limit dropped out of the means, and two runs of one seed disagreed.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
TIMING = {"assign_seconds", "solve_seconds", "grade_seconds", "run_seconds", "history_seconds"}


def _rows(out: Path) -> dict[tuple, dict]:
    import pyarrow.dataset as ds

    table = ds.dataset(str(out / "grades"), format="parquet", partitioning="hive").to_table()
    rows = {}
    for row in table.to_pylist():
        key = (row["kind"], row["seed"], row["index"], row["assignor"], row.get("rebalance"))
        rows[key] = {k: v for k, v in row.items() if k not in TIMING and k != "chunk"}
    return rows


def _sweep(out: Path, master: str, hogs: int) -> dict[tuple, dict]:
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "stickyproof", "sweep", "--out", str(out), "--count", "2", "--scale", "small",
             "--seed", "3", "--master", master, "--no-report", "--assignors", "cooperative-sticky,sticky"],
            cwd=ROOT, capture_output=True, text=True, timeout=900,
        )
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert done.returncode == 0, done.stderr[-2000:]
    return _rows(out)


def test_one_seed_gives_the_same_figures_idle_and_loaded_and_on_another_core_count(tmp_path):
    idle = _sweep(tmp_path / "idle", "local[2]", hogs=0)
    loaded = _sweep(tmp_path / "loaded", "local[1]", hogs=2)
    assert idle and set(idle) == set(loaded)
    differing = [(key, column, idle[key][column], loaded[key][column])
                 for key in sorted(idle, key=str) for column in idle[key] if idle[key][column] != loaded[key][column]]
    assert not differing, f"{len(differing)} figures differ, e.g. {differing[:3]}"
