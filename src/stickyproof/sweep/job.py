"""The Spark job of a sweep: (seed, index) rows in, graded rows out, written chunk by chunk.

The driver plans chunks of consecutive group indices, skips every (seed, index, assignor) key
already in ``DIR/grades``, and submits one Spark job per chunk: ``spark.range`` generates the
(seed, index) rows on the executors, ``mapInArrow`` samples each group and grades every assignor
on it (``rows.grade_group``), and Spark writes the rows as Parquet into ``DIR/_staging``; the
driver then commits the chunk with one rename (see ``store.py``). The driver never collects
rows: it reads back only each committed chunk's row count and its failing rows.

A chunk job has one task per core, and two chunk jobs run at once (from two driver threads):
Spark's FIFO scheduler hands the second job's tasks to cores the first job's last tasks leave
idle, so the tail of one chunk does not stall the machine, and few tasks keep the per-task cost
(a round trip to a Python worker) small.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import SweepError
from .rows import RowFn, RowParams, arrow_schema, error_row, error_text, grade_group
from .store import SweepDir

__all__ = ["Chunk", "GradeRun", "plan_chunks", "chunk_size", "run_grading"]

Progress = Callable[[float, int], None]

# Concurrent chunk jobs: two keep every core busy across chunk boundaries.
CONCURRENT_CHUNKS = 2


@dataclass(frozen=True)
class Chunk:
    """Consecutive group indices [start, end) of one seed, with the assignors still to grade per index."""

    seed: int
    start: int
    end: int
    todo: tuple[tuple[int, tuple[str, ...]], ...]

    @property
    def groups(self) -> int:
        return len(self.todo)

    @property
    def rows(self) -> int:
        return sum(len(a) for _, a in self.todo)

    @property
    def name(self) -> str:
        """Deterministic and unique per set of keys: a re-run that adds assignors gets a new name."""
        digest = hashlib.sha1(repr(self.todo).encode()).hexdigest()[:10]
        return f"s{self.seed}-{self.start:09d}-{self.end:09d}-{digest}"


@dataclass(frozen=True)
class GradeRun:
    """What one grading pass did."""

    seed: int
    groups: int
    assignors: tuple[str, ...]
    rows_present: int
    rows_computed: int
    chunks_written: tuple[str, ...]
    seconds: float
    failing_rows: int = 0
    errors: tuple[str, ...] = field(default=())


def chunk_size(groups: int, parallelism: int) -> int:
    """Groups per chunk: about an eighth of the sweep, at least 4 tasks' worth, at most 250 (or 16 per core)."""
    low = 4 * max(1, parallelism)
    high = max(250, 16 * max(1, parallelism))
    return max(low, min(high, math.ceil(groups / 8)))


def plan_chunks(seed: int, groups: int, assignors: Sequence[str], present: dict[int, set[str]], size: int) -> list[Chunk]:
    """Chunks covering indices 0..groups-1 that still miss some (index, assignor) key."""
    chunks = []
    for start in range(0, groups, size):
        end = min(groups, start + size)
        todo = []
        for index in range(start, end):
            done = present.get(index, ())
            missing = tuple(a for a in assignors if a not in done)
            if missing:
                todo.append((index, missing))
        if todo:
            chunks.append(Chunk(seed, start, end, tuple(todo)))
    return chunks


def _spark_schema() -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema())


# Rows gathered before one Arrow batch is built and handed to Spark: building a batch and
# crossing to the JVM cost ~1 ms each, as much as grading a small group, so not once per group.
_BATCH_ROWS = 256


def _map_groups(seed: int, todo: dict[int, tuple[str, ...]], params: RowParams, row_fn: RowFn) -> Callable:
    """The function ``mapInArrow`` runs on the executors: grade the groups of each incoming batch."""

    def grade_batches(batches: Any) -> Any:
        import pyarrow as pa

        schema = arrow_schema()
        pending: list[tuple[int, int, tuple[str, ...], list[dict[str, Any]]]] = []

        def flush() -> Any:
            rows = [r for *_, group in pending for r in group]
            try:
                out = pa.RecordBatch.from_pylist(rows, schema=schema)
            except Exception:  # noqa: BLE001 - some group's rows do not fit: find it, make it error rows
                parts = []
                for s, index, assignors, group in pending:
                    try:
                        parts.append(pa.RecordBatch.from_pylist(group, schema=schema))
                    except Exception as exc:  # noqa: BLE001
                        error = error_text("row", exc)
                        parts.append(pa.RecordBatch.from_pylist([error_row(s, index, a, error) for a in assignors], schema=schema))
                out = pa.Table.from_batches(parts, schema=schema).combine_chunks().to_batches()[0]
            pending.clear()
            return out

        size = 0
        for batch in batches:
            for s, index in zip(batch.column("seed").to_pylist(), batch.column("index").to_pylist()):
                assignors = todo.get(index)
                if not assignors:
                    continue
                try:
                    group = list(row_fn(s, index, assignors, params))
                except Exception as exc:  # noqa: BLE001 - a crash is a row, never a failed job
                    error = error_text("row", exc)
                    group = [error_row(s, index, a, error) for a in assignors]
                pending.append((s, index, assignors, group))
                size += len(group)
                if size >= _BATCH_ROWS:
                    yield flush()
                    size = 0
        if pending:
            yield flush()

    return grade_batches


def _run_chunk(spark: Any, chunk: Chunk, params: RowParams, row_fn: RowFn, partitions: int, target: Path) -> None:
    """One Spark job: generate the chunk's (seed, index) rows, grade them, write Parquet to ``target``."""
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    sc.setJobGroup(_job_group(chunk), f"stickyproof sweep chunk {chunk.name}", interruptOnCancel=True)
    todo = dict(chunk.todo)
    ids = spark.range(chunk.start, chunk.end, numPartitions=max(1, min(partitions, chunk.groups)))
    pairs = ids.select(F.lit(chunk.seed).cast("long").alias("seed"), F.col("id").alias("index"))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*pandas >= 3.0.0.*", category=FutureWarning)
        graded = pairs.mapInArrow(_map_groups(chunk.seed, todo, params, row_fn), _spark_schema())
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
    groups: int,
    assignors: Sequence[str],
    params: RowParams,
    row_fn: RowFn | None = None,
    chunk_groups: int | None = None,
    progress: Progress | None = None,
) -> GradeRun:
    """Grade groups 0..groups-1 of ``seed`` with every assignor, skipping keys already in ``out``."""
    started = time.perf_counter()
    row_fn = row_fn or grade_group
    sc = spark.sparkContext
    parallelism = max(1, int(sc.defaultParallelism))
    present = out.keys_present(seed)
    size = chunk_groups or chunk_size(groups, parallelism)
    chunks = plan_chunks(seed, groups, assignors, present, size)
    rows_present = sum(len(present.get(i, set()) & set(assignors)) for i in range(groups))
    total_groups = sum(c.groups for c in chunks)
    manifest = out.open_manifest(
        {"space": list(params.space), "assignor_seconds": params.limits.assignor_seconds,
         "z3_query_seconds": params.limits.z3_query_seconds}
    )

    state = {"committed": 0.0, "shown": 0.0}
    running: dict[str, Chunk] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def report() -> None:
        if progress is None:
            return
        with lock:
            current = state["committed"] + sum(c.groups * _safe_fraction(sc, c) for c in running.values())
            state["shown"] = max(state["shown"], min(current, float(total_groups)))
            shown = state["shown"]
        progress(shown, total_groups)

    def poll() -> None:
        while not stop.wait(0.5):
            report()

    if progress is not None:
        progress(0.0, total_groups)
    poller = threading.Thread(target=poll, name="stickyproof-sweep-progress", daemon=True)
    poller.start()
    written: list[str] = []
    failing = 0
    pool = ThreadPoolExecutor(max_workers=CONCURRENT_CHUNKS, thread_name_prefix="stickyproof-chunk")
    pending: dict[Future, Chunk] = {}
    queue = list(chunks)
    try:
        while queue or pending:
            while queue and len(pending) < CONCURRENT_CHUNKS:
                chunk = queue.pop(0)
                with lock:
                    running[chunk.name] = chunk
                future = pool.submit(
                    _run_chunk, spark, chunk, params, row_fn, parallelism, out.staging_path(chunk.name)
                )
                pending[future] = chunk
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: pending[f].start):
                chunk = pending.pop(future)
                exc = future.exception()
                if exc is not None:
                    raise SweepError(f"chunk {chunk.name} (groups {chunk.start}..{chunk.end - 1}) failed: {_spark_message(exc)}") from exc
                committed = out.commit_chunk(chunk.name)
                rows, bad = out.write_chunk_failures(committed)
                failing += bad
                manifest["chunks"][chunk.name] = {
                    "seed": chunk.seed,
                    "start": chunk.start,
                    "end": chunk.end,
                    "groups": chunk.groups,
                    "rows": rows,
                    "failing": bad,
                }
                manifest["chunks"] = dict(sorted(manifest["chunks"].items()))
                out.write_manifest(manifest)
                written.append(chunk.name)
                with lock:
                    running.pop(chunk.name, None)
                    state["committed"] += chunk.groups
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
        groups=groups,
        assignors=tuple(assignors),
        rows_present=rows_present,
        rows_computed=sum(c.rows for c in chunks),
        chunks_written=tuple(written),
        seconds=time.perf_counter() - started,
        failing_rows=failing,
    )


def _safe_fraction(sc: Any, chunk: Chunk) -> float:
    try:
        return _chunk_fraction(sc, chunk)
    except Exception:  # noqa: BLE001 - progress is best effort; the status tracker can race a stop
        return 0.0
