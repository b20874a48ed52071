"""Tasks per second: the Spark sweep against a plain multiprocessing pool on the same tasks.

    .venv/bin/python benchmarks/sweep.py --source adversarial --groups 10000   # the issue-6 target run
    .venv/bin/python benchmarks/sweep.py --groups 40 --pool-only                # histories, the baseline
    .venv/bin/python benchmarks/sweep.py --groups 10000 --fake-ms 1             # pure plumbing overhead

Both sides run the same (seed, index, assignor) tasks through the same task function
(``stickyproof.sweep.rows.run_task``: one history, or one sampled group); the pool discards rows after counting them,
while Spark also writes them as Parquet, commits chunks and tracks progress, so the overhead
printed is everything the pipeline adds. Spark's figure is given two ways: the whole run (session
start and stop included, what a user waits for) and the grading pass alone (warm session).

Target (issue 6): Spark's overhead <= 20 % at 10,000 groups on 2 cores.

How throughput scales with executors: each chunk is one Spark job of one task per core and two
chunks run at once, so every core has a task while work remains; tasks are independent (no
shuffle, each writes its own Parquet part), so graded groups per second grow linearly with
executor cores, ``rate ~= cores x (1 / seconds per group)``, until the fixed costs show: the
driver plans and commits about one chunk per ``chunk_groups x seconds per group / cores``
seconds, each commit costing ~0.1-0.5 s of driver time plus the job's scheduling, so keep chunks
at >= ~16 groups per core (the default ``chunk_size`` does) and the driver stays idle. The
session's fixed ~7 s start matters only for short sweeps.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from stickyproof.sweep.columns import empty_row
from stickyproof.sweep.rows import TaskParams, run_task


def fake_task(seed: int, index: int, assignor: str, params: TaskParams) -> list[dict[str, Any]]:
    """A task function that burns a fixed CPU time per task: measures the plumbing alone."""
    end = time.process_time() + FAKE_SECONDS
    x = 0
    while time.process_time() < end:
        x += 1
    row = empty_row("rebalance", params.source, seed, index, assignor, rebalance=0)
    row.update(valid=True, stickiness=1.0, scenario_hash=f"{seed}-{index}", assign_seconds=FAKE_SECONDS)
    return [row]


FAKE_SECONDS = 0.001
_POOL_ARGS: tuple = ()


def _pool_init(args: tuple) -> None:
    global _POOL_ARGS, FAKE_SECONDS
    _POOL_ARGS = args
    FAKE_SECONDS = args[3]


def _pool_task(task: tuple[int, str]) -> int:
    seed, assignors, params, fake_seconds = _POOL_ARGS
    fn = fake_task if fake_seconds else run_task
    return len(fn(seed, task[0], task[1], params))


def run_pool(groups: int, seed: int, assignors: Sequence[str], params: TaskParams, workers: int, fake_seconds: float) -> tuple[float, int]:
    start = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    tasks = [(i, a) for i in range(groups) for a in assignors]
    with ctx.Pool(workers, initializer=_pool_init, initargs=((seed, tuple(assignors), params, fake_seconds),)) as pool:
        rows = sum(pool.imap_unordered(_pool_task, tasks, chunksize=1 if params.source == "histories" else 8))
    return time.perf_counter() - start, rows


def run_spark(groups: int, seed: int, assignors: Sequence[str], params: TaskParams,
              workers: int, fake_seconds: float, out: Path) -> dict[str, Any]:
    from stickyproof.sweep.run import run_sweep
    from stickyproof.sweep.session import start_session

    global FAKE_SECONDS
    FAKE_SECONDS = fake_seconds
    start = time.perf_counter()
    session = start_session(f"local[{workers}]", app_name="stickyproof-benchmark")
    started = time.perf_counter()
    try:
        if fake_seconds:
            from pyspark import cloudpickle

            cloudpickle.register_pickle_by_value(sys.modules[__name__])
        outcome = run_sweep(
            out, source=params.source, count=groups, seed=seed, scale=params.scale, assignors=assignors,
            space=params.space, limits=params.limits, session=session, historical_small=False,
            task_fn=fake_task if fake_seconds else None, report=False,
        )
    finally:
        stopping = time.perf_counter()
        session.stop()
    end = time.perf_counter()
    return {
        "total_seconds": end - start,
        "session_start_seconds": started - start,
        "session_stop_seconds": end - stopping,
        "grading_seconds": outcome.grading.seconds,
        "tasks": outcome.grading.tasks_computed,
        "rows": outcome.grading.rows_written,
        "chunks": len(outcome.grading.chunks_written),
        "sweep_seconds": outcome.seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=10_000, help="histories or sampled groups")
    parser.add_argument("--source", choices=("histories", "adversarial"), default="histories")
    parser.add_argument("--scale", default="main", help="history scale preset (default main)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--assignors", default=None, help="comma-separated (default: every registered assignor)")
    parser.add_argument("--space", nargs="*", default=[], metavar="KNOB=VALUE")
    parser.add_argument("--z3-query-seconds", type=float, default=None, help="seconds per Z3 query (default: the sweep's)")
    parser.add_argument("--workers", type=int, default=2, help="pool processes = Spark local cores (default 2)")
    parser.add_argument("--fake-ms", type=float, default=0.0, help="replace grading by this much CPU per row")
    parser.add_argument("--pool-only", action="store_true")
    parser.add_argument("--spark-only", action="store_true")
    parser.add_argument("--out", default=None, help="Spark output directory (default: a temporary one, removed)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from dataclasses import replace

    from stickyproof.sweep.run import DEFAULT_LIMITS, canonical_space, resolve_assignors

    fake = args.fake_ms / 1000.0
    assignors = resolve_assignors(args.assignors.split(",") if args.assignors else None) if not fake else ("a", "b")
    limits = DEFAULT_LIMITS if args.z3_query_seconds is None else replace(DEFAULT_LIMITS, z3_query_seconds=args.z3_query_seconds)
    space = canonical_space(args.space) if not fake and args.source == "adversarial" else tuple(args.space)
    params = TaskParams(source=args.source, scale=args.scale, space=tuple(space), limits=limits)
    result: dict[str, Any] = {
        "groups": args.groups, "workers": args.workers, "assignors": list(assignors), "space": list(space),
        "fake_ms_per_row": args.fake_ms,
    }
    if not args.spark_only:
        seconds, rows = run_pool(args.groups, args.seed, assignors, params, args.workers, fake)
        result["pool"] = {"seconds": seconds, "rows": rows, "groups_per_second": args.groups / seconds}
    if not args.pool_only:
        tmp = None
        out = Path(args.out) if args.out else Path(tmp := tempfile.mkdtemp(prefix="stickyproof-bench-")) / "run"
        try:
            spark = run_spark(args.groups, args.seed, assignors, params, args.workers, fake, out)
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        spark["groups_per_second"] = args.groups / spark["total_seconds"]
        spark["grading_groups_per_second"] = args.groups / spark["grading_seconds"]
        result["spark"] = spark
    if "pool" in result and "spark" in result:
        pool_s = result["pool"]["seconds"]
        result["overhead_total_pct"] = 100.0 * (result["spark"]["total_seconds"] / pool_s - 1)
        result["overhead_grading_pct"] = 100.0 * (result["spark"]["grading_seconds"] / pool_s - 1)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{args.groups} groups x {len(assignors)} assignors, {args.workers} workers"
          + (f", fake {args.fake_ms} ms/row" if fake else ""))
    if "pool" in result:
        p = result["pool"]
        print(f"  multiprocessing.Pool({args.workers}): {p['seconds']:8.1f} s  {p['groups_per_second']:8.1f} groups/s")
    if "spark" in result:
        s = result["spark"]
        print(f"  Spark local[{args.workers}] total:   {s['total_seconds']:8.1f} s  {s['groups_per_second']:8.1f} groups/s"
              f"  (session start {s['session_start_seconds']:.1f} s, stop {s['session_stop_seconds']:.1f} s, {s['chunks']} chunks)")
        print(f"  Spark grading pass:        {s['grading_seconds']:8.1f} s  {s['grading_groups_per_second']:8.1f} groups/s")
    if "overhead_total_pct" in result:
        print(f"  Spark overhead vs pool: {result['overhead_total_pct']:+.1f} % whole run, "
              f"{result['overhead_grading_pct']:+.1f} % grading pass (target <= 20 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
