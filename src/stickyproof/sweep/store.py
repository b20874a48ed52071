"""The on-disk layout of a sweep, and how it stays whole when a run is killed.

::

    DIR/manifest.json                         the sweep's fixed parameters and its committed chunks
    DIR/grades/chunk=<name>/part-*.parquet    one directory per committed chunk (Hive-style, so
                                              ``spark.read.parquet(DIR/grades)`` and pyarrow read it
                                              as one table with an extra ``chunk`` column); rows of
                                              ``kind`` rebalance and history (``columns.py``)
    DIR/failures/<seed>-<index>-<rebalance>-<assignor>.json
                                              the leader's input of every failing rebalance row
                                              (``stickyproof grade FILE --assignor NAME`` replays it)
    DIR/histories/<seed>-<index>-<assignor>.json
                                              the replay document of every history with a failing
                                              row or monitor (``stickyproof simulate --scenario FILE``)
    DIR/report.html, DIR/triage/*.json        written after the grading
    DIR/spark.log                             what Spark's JVM and its Python workers wrote (appended
                                              by every run that started Spark)
    DIR/_staging/                             chunks being written, and each running chunk's
                                              ``<name>.status/`` progress files (never read as
                                              data; emptied at start)

Atomicity: Spark writes a chunk into ``_staging/<name>``; only when that write job has succeeded is
the directory renamed into ``grades/`` (one ``rename``, atomic on a POSIX file system), and only
then is the manifest rewritten (temp file + ``os.replace``). A run killed at any point leaves
either a whole chunk or none of it in ``grades/``. Resume reads the (seed, index, assignor) tasks
present in ``grades/`` -- the data, not the manifest, is the truth -- and computes only the rest;
the manifest is reconciled with the directories at the next start.

DIR must be a path the driver and every executor see as the same directory (local disk for
``local[*]`` and a single-host cluster, a shared mount for a multi-host one).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..errors import SweepError
from ..model import dump_json
from .columns import HISTORY, REBALANCE, arrow_schema

__all__ = [
    "MANIFEST_FORMAT",
    "SweepDir",
    "failure_file_name",
    "history_file_name",
    "failing_filter",
    "read_table",
]

MANIFEST_FORMAT = "stickyproof.sweep/2"
_SAFE = re.compile(r"[^A-Za-z0-9@._-]")


def failure_file_name(seed: int, index: int, rebalance: int | None, assignor: str) -> str:
    return f"{seed}-{index}-{rebalance or 0}-{_SAFE.sub('_', assignor)}.json"


def history_file_name(seed: int, index: int, assignor: str, migration: bool = False) -> str:
    """A history's replay file; a migration's (``sweep.migration_rows``) shares its task's key, so its name says so."""
    return f"{seed}-{index}-{_SAFE.sub('_', assignor)}{'-migration' if migration else ''}.json"


def failing_filter() -> Any:
    """The Arrow expression of a rebalance row that may be failing: its ``failing`` column is true
    (set by ``grading.failure.failing_row``, the one definition, as every row is written:
    ``columns.with_failing``), or null (a row written before the column existed, decided by the same
    definition when read: ``_decide_failing``)."""
    import pyarrow.dataset as ds

    return (ds.field("kind") == REBALANCE) & ((ds.field("failing") == True) | ds.field("failing").is_null())  # noqa: E712


_WITNESS_COLUMNS = ["kind", "seed", "index", "rebalance", "assignor", "scenario", "replay", "failing", "valid", "error", "skipped",
                    "migration"]


def _decide_failing(table: Any) -> Any:
    """``table`` without the rebalance rows that are not failing: a null ``failing`` is decided by
    ``grading.failure.failing_row`` (never a second definition here)."""
    import pyarrow as pa

    from ..grading.failure import failing_row

    rows = table.select(["kind", "failing", "valid", "error", "skipped"]).to_pylist()
    keep = [r["kind"] != REBALANCE or r["failing"] is True or (r["failing"] is None and failing_row(r)) for r in rows]
    return table.filter(pa.array(keep, type=pa.bool_()))


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def read_table(grades: Path, columns: list[str] | None = None, filter: Any = None) -> Any:
    """The grades of a sweep as one pyarrow Table (only ``columns``; rows matching ``filter``)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if not grades.is_dir() or not any(grades.glob("chunk=*/*.parquet")):
        schema = arrow_schema()
        names = columns or schema.names
        return pa.table({n: pa.array([], type=schema.field(n).type) for n in names})
    try:
        dataset = ds.dataset(str(grades), format="parquet", partitioning="hive", schema=_dataset_schema())
        return dataset.to_table(columns=columns, filter=filter)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise SweepError(f"{grades}: cannot read the grades: {exc}") from exc


def _dataset_schema() -> Any:
    import pyarrow as pa

    return arrow_schema().append(pa.field("chunk", pa.string()))


@dataclass(frozen=True)
class SweepDir:
    """Paths of one sweep directory, and the few operations that change it."""

    root: Path

    @property
    def grades(self) -> Path:
        return self.root / "grades"

    @property
    def failures(self) -> Path:
        return self.root / "failures"

    @property
    def staging(self) -> Path:
        return self.root / "_staging"

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    @property
    def report_path(self) -> Path:
        return self.root / "report.html"

    @property
    def triage(self) -> Path:
        return self.root / "triage"

    @property
    def histories(self) -> Path:
        return self.root / "histories"

    # -- set-up ---------------------------------------------------------------------------

    def prepare(self) -> None:
        """Create the layout and drop whatever a killed run left half-written in ``_staging``."""
        try:
            for d in (self.root, self.grades, self.failures, self.histories):
                d.mkdir(parents=True, exist_ok=True)
            if self.staging.exists():
                shutil.rmtree(self.staging)
            self.staging.mkdir()
        except OSError as exc:
            raise SweepError(f"{self.root}: cannot prepare the sweep directory: {exc.strerror or exc}") from exc

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold ``DIR/.lock`` for the run: two sweeps writing one directory would interleave chunks."""
        import fcntl

        self.root.mkdir(parents=True, exist_ok=True)
        handle = open(self.root / ".lock", "a+")
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                raise SweepError(f"{self.root}: another sweep is writing this directory (.lock is held)") from exc
            yield
        finally:
            handle.close()

    # -- manifest -------------------------------------------------------------------------

    def read_manifest(self) -> dict[str, Any] | None:
        if not self.manifest_path.exists():
            return None
        try:
            doc = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError) as exc:
            raise SweepError(f"{self.manifest_path}: unreadable manifest: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
            raise SweepError(f"{self.manifest_path}: not a {MANIFEST_FORMAT} manifest")
        return doc

    def open_manifest(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The manifest, created with ``params`` or checked against them, reconciled with ``grades/``.

        ``params`` (sampler space, time limit) fix what a key means: rows graded under other
        parameters would mix silently with these, so a different value is refused.
        """
        doc = self.read_manifest()
        if doc is None:
            doc = {"format": MANIFEST_FORMAT, "params": dict(params), "chunks": {}}
        else:
            old = doc.get("params", {})
            for key, value in params.items():
                if old.get(key) != value:
                    raise SweepError(
                        f"{self.root} was swept with {key}={json.dumps(old.get(key))}, this run asks "
                        f"{key}={json.dumps(value)}: rows would mix; use another output directory"
                    )
        present = {p.name[len("chunk="):] for p in self.grades.glob("chunk=*") if p.is_dir()}
        chunks = {name: info for name, info in doc.get("chunks", {}).items() if name in present}
        for name in sorted(present - set(chunks)):
            chunks[name] = {"recovered": True}
        doc["chunks"] = dict(sorted(chunks.items()))
        self.write_manifest(doc)
        return doc

    def write_manifest(self, doc: Mapping[str, Any]) -> None:
        try:
            _write_atomic(self.manifest_path, dump_json(doc) + "\n")
        except OSError as exc:
            raise SweepError(f"{self.manifest_path}: cannot write: {exc.strerror or exc}") from exc

    # -- chunks ---------------------------------------------------------------------------

    def staging_path(self, name: str) -> Path:
        return self.staging / name

    def commit_chunk(self, name: str) -> Path:
        """Move a fully written chunk from ``_staging`` into ``grades/`` in one rename."""
        src, dst = self.staging_path(name), self.grades / f"chunk={name}"
        if dst.exists():
            raise SweepError(f"{dst}: chunk already committed (the same keys were computed twice)")
        try:
            os.rename(src, dst)
        except OSError as exc:
            raise SweepError(f"cannot commit chunk {name}: {exc.strerror or exc}") from exc
        return dst

    def keys_present(self, seed: int) -> dict[int, set[str]]:
        """index -> assignors whose task (``seed``, index, assignor) is already committed."""
        import pyarrow.dataset as ds

        table = read_table(self.grades, ["index", "assignor"], filter=ds.field("seed") == seed)
        out: dict[int, set[str]] = {}
        for index, assignor in zip(table.column("index").to_pylist(), table.column("assignor").to_pylist()):
            out.setdefault(index, set()).add(assignor)
        return out

    # -- failures -------------------------------------------------------------------------

    def _write_witnesses(self, table: Any) -> int:
        """Write the failure files of ``table``'s rows (those not yet written); returns the failing rebalance rows."""
        failing = 0
        names = ("kind", "seed", "index", "rebalance", "assignor", "scenario", "replay", "migration")
        for kind, seed, index, rebalance, assignor, scenario, replay, migration in zip(
                *(table.column(c).to_pylist() if c in table.column_names else [None] * table.num_rows for c in names)):
            if kind == HISTORY:
                if replay is not None:
                    path = self.histories / history_file_name(seed, index, assignor, migration is True)
                    if not path.exists():
                        _write_atomic(path, replay if replay.endswith("\n") else replay + "\n")
                continue
            failing += 1
            if scenario is not None:
                path = self.failures / failure_file_name(seed, index, rebalance, assignor)
                if not path.exists():
                    _write_atomic(path, scenario if scenario.endswith("\n") else scenario + "\n")
        return failing

    def write_chunk_failures(self, chunk_dir: Path) -> tuple[int, int]:
        """Write the failure files of one committed chunk; returns (rows, failing rebalance rows) of the chunk."""
        import pyarrow.dataset as ds

        dataset = ds.dataset(str(chunk_dir), format="parquet", schema=arrow_schema())
        rows = dataset.count_rows()
        wanted = failing_filter() | ((ds.field("kind") == HISTORY) & ~ds.field("replay").is_null())
        table = dataset.to_table(columns=_WITNESS_COLUMNS, filter=wanted)
        return rows, self._write_witnesses(_decide_failing(table))

    def sync_failures(self) -> int:
        """Write every failure file that is missing (a run killed between commit and write); returns the failing rows."""
        import pyarrow.dataset as ds

        for d in (self.failures, self.histories):
            d.mkdir(parents=True, exist_ok=True)
        wanted = failing_filter() | ((ds.field("kind") == HISTORY) & ~ds.field("replay").is_null())
        table = _decide_failing(read_table(self.grades, _WITNESS_COLUMNS, filter=wanted))
        return self._write_witnesses(table)
