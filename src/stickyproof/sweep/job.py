"""The Spark job of a sweep: tasks in, rows out, written chunk by chunk.

The driver plans chunks of tasks (``plan.py``: every (seed, index, assignor) not yet in
``DIR/grades``, most expensive first, each chunk's tasks balanced over the cores) and submits one
Spark job per chunk: ``spark.range`` makes one row per slot, each on its own partition, and
``mapInArrow`` runs that slot's tasks (``rows.run_task``: a history run and its graded rebalances,
or one sampled group) and yields their rows; Spark writes them as Parquet into ``DIR/_staging``; the
driver then commits the chunk with one rename (see ``store.py``). The driver never collects rows:
it reads back only each committed chunk's row count and its failing rows.

Two chunk jobs run at once (from two driver threads): Spark's FIFO scheduler hands the second job's
tasks to cores the first job's last tasks leave idle, so the tail of one chunk does not stall the
machine.
"""

from __future__ import annotations

import re
import threading
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import SweepError
from .columns import HISTORY, REBALANCE, arrow_schema, empty_row, with_failing
from .plan import Chunk, Task, plan_chunks
from .rows import ADVERSARIAL, TaskFn, TaskParams, error_text, run_task
from .store import SweepDir

__all__ = ["GradeRun", "run_grading", "CONCURRENT_CHUNKS"]

Progress = Callable[[float, int], None]

# Concurrent chunk jobs: two keep every core busy across chunk boundaries.
CONCURRENT_CHUNKS = 2


@dataclass(frozen=True)
class GradeRun:
    """What one grading pass did (counts in tasks: one history, or one sampled group, with one assignor)."""

    seed: int
    count: int
    assignors: tuple[str, ...]
    tasks_present: int
    tasks_computed: int
    chunks_written: tuple[str, ...]
    seconds: float
    rows_written: int = 0
    failing_rows: int = 0
    errors: tuple[str, ...] = field(default=())


def _spark_schema() -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema())


# Rows gathered before one Arrow batch is built and handed to Spark: a batch and its trip to the JVM
# cost about a millisecond each, as much as grading a small rebalance, so not once per task.
_BATCH_ROWS = 256


def crash_rows(seed: int, task: Task, params: TaskParams, error: str) -> list[dict[str, Any]]:
    """The rows of a task whose function raised (or whose rows did not fit the schema): one, with the error."""
    kind, rebalance = (REBALANCE, 0) if params.source == ADVERSARIAL else (HISTORY, None)
    row = empty_row(kind, params.source, seed, task.index, task.assignor, rebalance=rebalance)
    row["error"] = error
    return [row]


def map_slots(seed: int, slots: Sequence[Sequence[Task]], params: TaskParams, task_fn: TaskFn) -> Callable:
    """The function ``mapInArrow`` runs on the executors: run each incoming slot's tasks, yield their rows."""

    def run_slots(batches: Any) -> Any:
        import pyarrow as pa

        schema = arrow_schema()
        pending: list[tuple[Task, list[dict[str, Any]]]] = []

        def flush() -> Any:
            rows = [r for _, group in pending for r in group]
            try:
                out = pa.RecordBatch.from_pylist(rows, schema=schema)
            except Exception:  # noqa: BLE001 - some task's rows do not fit: find it, make it an error row
                parts = []
                for task, group in pending:
                    try:
                        parts.append(pa.RecordBatch.from_pylist(group, schema=schema))
                    except Exception as exc:  # noqa: BLE001
                        bad = [with_failing(r) for r in crash_rows(seed, task, params, error_text("row", exc))]
                        parts.append(pa.RecordBatch.from_pylist(bad, schema=schema))
                out = pa.Table.from_batches(parts, schema=schema).combine_chunks().to_batches()[0]
            pending.clear()
            return out

        size = 0
        for batch in batches:
            for slot in batch.column("id").to_pylist():
                for task in slots[slot]:
                    try:
                        group = list(task_fn(seed, task.index, task.assignor, params))
                    except Exception as exc:  # noqa: BLE001 - a crash is a row, never a failed job
                        group = crash_rows(seed, task, params, error_text("task", exc))
                    group = [with_failing(r) for r in group]  # the one definition of a failing row
                    pending.append((task, group))
                    size += len(group)
                    if size >= _BATCH_ROWS:
                        yield flush()
                        size = 0
        if pending:
            yield flush()

    return run_slots


def _run_chunk(spark: Any, chunk: Chunk, params: TaskParams, task_fn: TaskFn, target: Path) -> None:
    """One Spark job: one partition per slot, its tasks run in order, rows written as Parquet to ``target``."""
    sc = spark.sparkContext
    sc.setJobGroup(_job_group(chunk), f"stickyproof sweep chunk {chunk.name}", interruptOnCancel=True)
    slots = len(chunk.slots)
    ids = spark.range(0, slots, numPartitions=slots)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*pandas >= 3.0.0.*", category=FutureWarning)
        graded = ids.mapInArrow(map_slots(chunk.seed, chunk.slots, params, task_fn), _spark_schema())
    graded.write.mode("errorifexists").parquet(str(target))


def _job_group(chunk: Chunk) -> str:
    return f"stickyproof-{chunk.name}"


def _chunk_fraction(sc: Any, chunk: Chunk) -> float:
    """Share of the chunk's tasks finished, from Spark's status tracker (0 when not started)."""
    tracker = sc.statusTracker()
    done = total = 0
    for job_id in tracker.getJobIdsForGroup(_job_group(chunk)):
        info = tracker.getJobInfo(job_id)
        if info is None:
            continue
        for stage_id in info.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                done += stage.numCompletedTasks
                total += stage.numTasks
    return done / total if total else 0.0


def _spark_message(exc: BaseException) -> str:
    """The line that says what went wrong: a Python worker's exception line, else Spark's first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    python = [line for line in lines if _EXCEPTION_LINE.match(line)]
    text = python[-1] if python else (lines[0] if lines else type(exc).__name__)
    return text[:600]


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)(: .*)?$")


def run_grading(
    spark: Any,
    out: SweepDir,
    *,
    seed: int,
    count: int,
    assignors: Sequence[str],
    params: TaskParams,
    manifest_params: dict[str, Any],
    scale_of: dict[int, str] | None = None,
    skip: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
    task_fn: TaskFn | None = None,
    chunk_tasks: int | None = None,
    progress: Progress | None = None,
) -> GradeRun:
    """Run tasks (seed, 0..count-1, assignor) for every assignor, skipping those already in ``out``."""
    started = time.perf_counter()
    task_fn = task_fn or run_task
    sc = spark.sparkContext
    parallelism = max(1, int(sc.defaultParallelism))
    manifest = out.open_manifest(manifest_params)
    present = out.keys_present(seed)
    chunks = plan_chunks(seed, count, assignors, present, scale_of=scale_of, parallelism=parallelism,
                         chunk_tasks=chunk_tasks, skip=skip)
    tasks_present = sum(len({a for a in present.get(i, set()) & set(assignors) if (i, a) not in skip}) for i in range(count))
    total_tasks = sum(len(c.tasks) for c in chunks)

    state = {"committed": 0.0, "shown": 0.0}
    running: dict[str, Chunk] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def report() -> None:
        if progress is None:
            return
        with lock:
            current = state["committed"] + sum(len(c.tasks) * _safe_fraction(sc, c) for c in running.values())
            state["shown"] = max(state["shown"], min(current, float(total_tasks)))
            shown = state["shown"]
        progress(shown, total_tasks)

    def poll() -> None:
        while not stop.wait(0.5):
            report()

    if progress is not None:
        progress(0.0, total_tasks)
    poller = threading.Thread(target=poll, name="stickyproof-sweep-progress", daemon=True)
    poller.start()
    written: list[str] = []
    rows_written = failing = 0
    pool = ThreadPoolExecutor(max_workers=CONCURRENT_CHUNKS, thread_name_prefix="stickyproof-chunk")
    pending: dict[Future, Chunk] = {}
    queue = list(chunks)
    try:
        while queue or pending:
            while queue and len(pending) < CONCURRENT_CHUNKS:
                chunk = queue.pop(0)
                with lock:
                    running[chunk.name] = chunk
                future = pool.submit(_run_chunk, spark, chunk, params, task_fn, out.staging_path(chunk.name))
                pending[future] = chunk
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: pending[f].name):
                chunk = pending.pop(future)
                exc = future.exception()
                if exc is not None:
                    raise SweepError(f"chunk {chunk.name} ({len(chunk.tasks)} tasks) failed: {_spark_message(exc)}") from exc
                committed = out.commit_chunk(chunk.name)
                rows, bad = out.write_chunk_failures(committed)
                rows_written += rows
                failing += bad
                manifest["chunks"][chunk.name] = {
                    "seed": chunk.seed,
                    "tasks": len(chunk.tasks),
                    "indices": sorted({t.index for t in chunk.tasks}),
                    "rows": rows,
                    "failing": bad,
                }
                manifest["chunks"] = dict(sorted(manifest["chunks"].items()))
                out.write_manifest(manifest)
                written.append(chunk.name)
                with lock:
                    running.pop(chunk.name, None)
                    state["committed"] += len(chunk.tasks)
                report()
    except BaseException:
        # Kill what still runs (Ctrl-C, or another chunk failed); staged parts are dropped at the next start.
        for chunk in pending.values():
            try:
                sc.cancelJobGroup(_job_group(chunk))
            except Exception:  # noqa: BLE001 - the context may already be gone
                pass
        raise
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        poller.join(timeout=2)
    return GradeRun(
        seed=seed,
        count=count,
        assignors=tuple(assignors),
        tasks_present=tasks_present,
        tasks_computed=total_tasks,
        chunks_written=tuple(written),
        seconds=time.perf_counter() - started,
        rows_written=rows_written,
        failing_rows=failing,
    )


def _safe_fraction(sc: Any, chunk: Chunk) -> float:
    try:
        return _chunk_fraction(sc, chunk)
    except Exception:  # noqa: BLE001 - progress is best effort; the status tracker can race a stop
        return 0.0
