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

Progress: Spark counts a slot (a partition) done only when all its tasks are, and the first chunk's
slots hold a large history and many small tasks each, so Spark alone would report ``0/223`` for the
first minute and a half. Each slot therefore writes a status file (``DIR/_staging/<chunk>.status/
<slot>.json``: tasks done, and the task running with when it started) after every task; the driver
reads them (``GradingStatus``: tasks done, the tasks running and for how long). A best effort: a
status file that cannot be written or read only makes the progress coarser.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import SweepError
from .columns import HISTORY, REBALANCE, arrow_schema, empty_row, with_failing
from .plan import Chunk, Task, plan_chunks
from .rows import ADVERSARIAL, TaskFn, TaskParams, error_text, run_task
from .store import SweepDir

__all__ = ["GradeRun", "GradingStatus", "Running", "run_grading", "CONCURRENT_CHUNKS"]

Progress = Callable[[float, int], None]


@dataclass(frozen=True)
class Running:
    """A task being graded now: history (or group) ``index`` with ``assignor``, for ``seconds``."""

    index: int
    assignor: str
    scale: str | None
    seconds: float


@dataclass(frozen=True)
class GradingStatus:
    """Where the grading is: ``done`` of the ``total`` tasks this run computes (fractional while a
    chunk runs); ``kept`` of the ``owed`` tasks the whole sweep has (those present before this run
    included) committed to disk, which is what a Ctrl-C leaves; the tasks running now, longest first."""

    done: float
    total: int
    kept: int
    owed: int
    running: tuple[Running, ...] = ()
    started: bool = True
    """False for the call made before Spark starts (the tasks present are known, grading is not)."""
    cost_done: float = 0.0
    cost_total: float = 0.0
    """The same progress in the plan's cost units (``plan.COSTS``: a large history is 150 small ones),
    which an ETA must be reckoned in: the large tasks run first, so counting tasks would promise hours."""

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


def _write_status(status_dir: str | None, slot: int, done: int, task: Task | None) -> None:
    """Record, for the driver's progress, that ``slot`` finished ``done`` tasks and runs ``task`` now."""
    if status_dir is None:
        return
    doc = {"done": done, "running": None if task is None else [task.index, task.assignor, time.time()]}
    path = os.path.join(status_dir, f"{slot}.json")
    try:
        os.makedirs(status_dir, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}"
        with open(tmp, "w") as handle:
            json.dump(doc, handle)
        os.replace(tmp, path)
    except OSError:  # progress is best effort; the rows are what matters
        pass


def _read_status(status_dir: Path) -> list[dict[str, Any]]:
    out = []
    try:
        paths = list(status_dir.glob("*.json"))
    except OSError:
        return out
    for path in paths:
        try:
            out.append(json.loads(path.read_text()))
        except (OSError, ValueError):  # being replaced, or gone with the chunk
            continue
    return out


def map_slots(seed: int, slots: Sequence[Sequence[Task]], params: TaskParams, task_fn: TaskFn,
              status_dir: str | None = None) -> Callable:
    """The function ``mapInArrow`` runs on the executors: run each incoming slot's tasks, yield their
    rows; after each task, the slot's status file (``status_dir``) says how many are done."""

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
                for number, task in enumerate(slots[slot]):
                    _write_status(status_dir, slot, number, task)
                    try:
                        group = list(task_fn(seed, task.index, task.assignor, params))
                    except Exception as exc:  # noqa: BLE001 - a crash is a row, never a failed job
                        group = crash_rows(seed, task, params, error_text("task", exc))
                    _write_status(status_dir, slot, number + 1, None)
                    group = [with_failing(r) for r in group]  # the one definition of a failing row
                    pending.append((task, group))
                    size += len(group)
                    if size >= _BATCH_ROWS:
                        yield flush()
                        size = 0
        if pending:
            yield flush()

    return run_slots


def status_dir_of(target: Path) -> Path:
    """Where a chunk's slots write their status files: beside its staging directory (Spark must
    create that one itself)."""
    return target.with_name(target.name + ".status")


def _run_chunk(spark: Any, chunk: Chunk, params: TaskParams, task_fn: TaskFn, target: Path) -> None:
    """One Spark job: one partition per slot, its tasks run in order, rows written as Parquet to ``target``."""
    sc = spark.sparkContext
    sc.setJobGroup(_job_group(chunk), f"stickyproof sweep chunk {chunk.name}", interruptOnCancel=True)
    slots = len(chunk.slots)
    ids = spark.range(0, slots, numPartitions=slots)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*pandas >= 3.0.0.*", category=FutureWarning)
        graded = ids.mapInArrow(map_slots(chunk.seed, chunk.slots, params, task_fn, str(status_dir_of(target))),
                                 _spark_schema())
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
    status: Callable[[GradingStatus], None] | None = None,
    present: dict[int, set[str]] | None = None,
    costs: Mapping[tuple[int, str], float] | None = None,
) -> GradeRun:
    """Run tasks (seed, 0..count-1, assignor) for every assignor, skipping those already in ``out``
    (``present``, when the caller has read them). ``progress(done, total)`` and ``status`` are
    called every half second and after each committed chunk. ``costs`` overrides a task's estimated
    cost (``plan.plan_chunks``)."""
    started = time.perf_counter()
    task_fn = task_fn or run_task
    sc = spark.sparkContext
    parallelism = max(1, int(sc.defaultParallelism))
    manifest = out.open_manifest(manifest_params)
    present = out.keys_present(seed) if present is None else present
    chunks = plan_chunks(seed, count, assignors, present, scale_of=scale_of, parallelism=parallelism,
                         chunk_tasks=chunk_tasks, skip=skip, costs=costs)
    tasks_present = sum(len({a for a in present.get(i, set()) & set(assignors) if (i, a) not in skip}) for i in range(count))
    total_tasks = sum(len(c.tasks) for c in chunks)

    state = {"committed": 0.0, "shown": 0.0, "committed_cost": 0.0, "shown_cost": 0.0}
    total_cost = sum(c.cost for c in chunks)
    running: dict[str, Chunk] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def report() -> None:
        if progress is None and status is None:
            return
        with lock:
            chunks_now = list(running.values())
            committed = state["committed"]
            current_cost = state["committed_cost"]
        now = time.time()
        current = committed
        busy: list[Running] = []
        for chunk in chunks_now:
            slots = _read_status(status_dir_of(out.staging_path(chunk.name)))
            by_status = sum(int(doc.get("done") or 0) for doc in slots)
            fraction = max(_safe_fraction(sc, chunk), min(by_status, len(chunk.tasks)) / max(1, len(chunk.tasks)))
            current += len(chunk.tasks) * fraction
            current_cost += chunk.cost * fraction
            for doc in slots:
                if doc.get("running"):
                    index, assignor, since = doc["running"]
                    busy.append(Running(int(index), str(assignor), (scale_of or {}).get(int(index)), max(0.0, now - since)))
        with lock:
            state["shown"] = max(state["shown"], min(current, float(total_tasks)))
            shown = state["shown"]
            state["shown_cost"] = max(state["shown_cost"], min(current_cost, total_cost))
            shown_cost = state["shown_cost"]
        if progress is not None:
            progress(shown, total_tasks)
        if status is not None:
            busy.sort(key=lambda r: (-r.seconds, r.index, r.assignor))
            status(GradingStatus(shown, total_tasks, tasks_present + int(committed), tasks_present + total_tasks, tuple(busy),
                                 cost_done=shown_cost, cost_total=total_cost))

    def poll() -> None:
        while not stop.wait(0.5):
            report()

    if progress is not None or status is not None:
        report()
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
                _drop(status_dir_of(out.staging_path(chunk.name)))
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
                    state["committed_cost"] += chunk.cost
                report()
    except BaseException:
        # Kill what still runs (Ctrl-C, or another chunk failed); staged parts are dropped at the next start.
        for chunk in pending.values():
            try:
                sc.cancelJobGroup(_job_group(chunk))
            except Exception:  # noqa: BLE001 - the context may already be gone
                pass
        if status is not None:
            # What is kept, from the disk: Ctrl-C may land between a chunk's rename and its count.
            on_disk = sum(len(c.tasks) for c in chunks if (out.grades / f"chunk={c.name}").is_dir())
            status(GradingStatus(state["shown"], total_tasks, tasks_present + on_disk, tasks_present + total_tasks))
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


def _drop(directory: Path) -> None:
    import shutil

    shutil.rmtree(directory, ignore_errors=True)


def _safe_fraction(sc: Any, chunk: Chunk) -> float:
    try:
        return _chunk_fraction(sc, chunk)
    except Exception:  # noqa: BLE001 - progress is best effort; the status tracker can race a stop
        return 0.0
