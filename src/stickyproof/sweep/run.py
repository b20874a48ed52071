"""``run_sweep``: the whole sweep as one library call -- grade on Spark, summarize, find, triage, report.

The defaults are ``./scripts/main.sh``: ``DEFAULT_HISTORIES`` group histories at the ``main`` scale
(history 0 is large: >= 500 members and >= 50,000 partitions; every 10th medium; the rest small),
each run with every built-in assignor; historical releases only on the first ``HISTORICAL_HISTORIES``
histories below ``large`` (they reproduce their incidents on small groups, and a large history costs
a minute per assignor). The server-side (KIP-848) assignors ``DEFAULT_SERVER_SIDE`` run consumer-group
histories of the same indexes instead (``sweep.consumer_rows``), a historical one on the first
``CONSUMER_HISTORICAL_HISTORIES``; today's also run the first ``MIGRATION_HISTORIES`` drawn
classic -> consumer migrations (``sweep.migration_rows``) in the same tasks.
Sized to finish within five minutes on two cores (docs/sweep.md gives the measurement).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import SweepError
from ..grading import Limits
from .job import GradeRun, GradingStatus, run_grading
from .rows import ADVERSARIAL, HISTORIES, SOURCES, TaskFn, TaskParams
from .session import DEFAULT_MASTER, check_master, spark_session
from .store import SweepDir
from .summary import Summary, load_frames, summarize_frame

__all__ = [
    "DEFAULT_HISTORIES",
    "DEFAULT_GROUPS",
    "DEFAULT_SEED",
    "DEFAULT_SCALE",
    "DEFAULT_LIMITS",
    "SweepOutcome",
    "run_sweep",
    "resolve_assignors",
    "canonical_space",
    "check_out_dir",
    "is_historical",
]

DEFAULT_HISTORIES = 32
DEFAULT_GROUPS = 2000
DEFAULT_SEED = 0
DEFAULT_SCALE = "main"
DEFAULT_LIMITS = Limits(z3_query_seconds=8.0, cpsat_work=8.0, cpsat_seconds=120.0, shrink_seconds=None,
                        triage_seconds=20.0, shrink_evaluations=120)
"""A sweep bounds each Z3 query and each CP-SAT solve of the contract optimum (in deterministic
units, so the same seed gives the same optimum on a loaded machine; the wall-clock stop is a safety
net), and the triage's shrinking (``triage_seconds`` in all, ``shrink_evaluations`` per finding).
An optimum cut short is unproven: stickiness is then measured against the best solution found,
``proven`` false."""

#: The sweep scales at which consumer-group histories are drawn (``sweep.consumer_rows.consumer_scale``):
#: the default sweep runs the server-side assignors beside the classic ones only there.
CONSUMER_SWEEP_SCALES = ("main", "mix", "small", "medium")

#: The server-side assignors the main job sweeps by default: today's two (the broker's default
#: ``group.consumer.assignors`` is ``uniform,range``) and 4.0.0's ``uniform``, which reproduces
#: KAFKA-18688. ``uniform@3.9.1`` (the KIP-848 preview) runs 4.0.0's homogeneous builder, and its
#: heterogeneous one (before KAFKA-17710) is diffed against its jar elsewhere: named with
#: ``--assignors`` it is swept like the others.
DEFAULT_SERVER_SIDE = ("uniform", "uniform@4.0.0", "consumer-range")
#: How many consumer-group histories a historical server-side release runs (it reproduces its
#: incident within the first few; today's assignors run every history).
CONSUMER_HISTORICAL_HISTORIES = 12

#: Scales a historical release is not run at (a production-sized incident is the same incident), and
#: how many histories it runs at most: the main job spends its time on today's assignors.
_HISTORICAL_SKIPS = ("large", "production")
HISTORICAL_HISTORIES = 20


@dataclass(frozen=True)
class SweepOutcome:
    """Everything a sweep produced: the grading pass, the summary, the findings, the report's path."""

    out: Path
    grading: GradeRun
    summary: Summary
    findings: tuple[Any, ...]
    triage: tuple[Any, ...]
    report: Path | None
    seconds: float
    names: Mapping[str, str] = field(default_factory=dict)
    """Assignor -> the name its program gives itself (an ``exec:`` child's hello), where they differ."""

    def to_dict(self) -> dict[str, Any]:
        g = self.grading
        return {
            "out": str(self.out),
            "seed": g.seed,
            "count": g.count,
            "assignors": list(g.assignors),
            "assignor_names": dict(self.names),
            "tasks_present_before": g.tasks_present,
            "tasks_computed": g.tasks_computed,
            "rows_written": g.rows_written,
            "chunks_written": len(g.chunks_written),
            "grading_seconds": round(g.seconds, 3),
            "seconds": round(self.seconds, 3),
            "summary": self.summary.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
            "triage": [c.to_dict() for c in self.triage],
            "report": str(self.report) if self.report else None,
        }


def is_historical(name: str) -> bool:
    """A registered historical release (``sticky@2.2``, ``uniform@4.0.0``...), as opposed to today's assignor."""
    from ..lookup import get_assignor

    from ..assignors.consumer.releases import SERVER_SIDE_RELEASES

    info = get_assignor(name)
    server = next((r for r in SERVER_SIDE_RELEASES if r.name == info.name), None)
    if server is not None:
        return server.version != "current"
    release = info.release
    return release is not None and release.version != "current"


def is_server_side(name: str) -> bool:
    """A server-side (KIP-848) assignor: its tasks are consumer-group histories (``sweep.consumer_rows``)."""
    from ..lookup import get_assignor

    return get_assignor(name).consumer_group is not None


def resolve_assignors(names: Sequence[str] | None, *, server_side: bool = True) -> tuple[str, ...]:
    """The assignors to sweep: the given names (each checked to load), or every registered one: the
    classic ones, then (``server_side``) the server-side ones, which live consumer-group histories."""
    from ..assignors.registry import list_assignors, list_consumer_group_assignors
    from ..lookup import get_assignor

    defaults = tuple(getattr(info, "name", info) for info in list_assignors())
    if server_side:
        defaults += tuple(info.name for info in list_consumer_group_assignors() if info.name in DEFAULT_SERVER_SIDE)
    chosen = tuple(names) if names else defaults
    if not chosen:
        raise SweepError("no assignors to sweep")
    seen: set[str] = set()
    for name in chosen:
        if name in seen:
            raise SweepError(f"--assignors lists {name!r} twice")
        seen.add(name)
        get_assignor(name)  # raises UnknownAssignor naming it
    return chosen


def display_names(names: Sequence[str]) -> dict[str, str]:
    """Assignor -> the name its program gives itself, for those whose differs (``exec:`` children;
    resolved already, so this reads the lookup's cache)."""
    from ..lookup import get_assignor

    return {name: get_assignor(name).display for name in names if get_assignor(name).display}


def canonical_space(overrides: Sequence[str]) -> tuple[str, ...]:
    """``--space`` overrides validated and written canonically (so ``members=1..8`` == the default)."""
    from ..scenarios.sampler import Space

    return tuple(Space.from_overrides(list(overrides)).to_overrides())


def check_out_dir(out: Path) -> None:
    """``SweepError`` naming ``out`` unless it is (or can be made) a directory this process can write,
    checked before Spark starts."""
    import os
    import tempfile

    if out.exists() and not out.is_dir():
        raise SweepError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SweepError(f"--out {out}: cannot create the directory ({exc.strerror or exc})") from exc
    try:
        handle, probe = tempfile.mkstemp(prefix=".write-check-", dir=out)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise SweepError(f"--out {out}: cannot write into the directory ({exc.strerror or exc})") from exc


def _scales(source: str, count: int, scale: str) -> dict[int, str]:
    if source == ADVERSARIAL:
        return {i: "adversarial" for i in range(count)}
    from .rows import preset_of

    try:
        return {i: preset_of(i, scale) for i in range(count)}
    except Exception as exc:  # noqa: BLE001 - InvalidScenario naming the scale
        raise SweepError(f"--scale {scale!r}: {exc}") from exc


def run_sweep(
    out: Path | str,
    *,
    source: str = HISTORIES,
    count: int | None = None,
    seed: int = DEFAULT_SEED,
    scale: str = DEFAULT_SCALE,
    assignors: Sequence[str] | None = None,
    space: Sequence[str] = (),
    direct: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    master: str = DEFAULT_MASTER,
    session: Any = None,
    task_fn: TaskFn | None = None,
    chunk_tasks: int | None = None,
    historical_small: bool = True,
    progress: Callable[[float, int], None] | None = None,
    report: bool = True,
    status: Callable[[GradingStatus], None] | None = None,
) -> SweepOutcome:
    """Run ``count`` histories (or sampled groups, ``source=adversarial``) of ``seed`` with every
    assignor on Spark, then summarize, collect findings, triage and write the report.

    Re-running on the same ``out`` computes only the (seed, index, assignor) tasks not yet there.
    ``session`` reuses a running SparkSession (left running). ``task_fn`` replaces one task
    (tests); it must return rows of ``columns.COLUMNS``. ``historical_small``: historical releases
    are run only on the first ``HISTORICAL_HISTORIES`` histories below the ``large`` scale.
    ``status`` hears where the sweep is (``GradingStatus``) once the tasks present in ``out`` are
    known -- before Spark starts, so a Ctrl-C during Spark's start-up can say what is kept -- then
    while grading. Spark's own output goes to ``out/spark.log``.
    """
    started = time.perf_counter()
    if source not in SOURCES:
        raise SweepError(f"--source {source!r}: expected one of {', '.join(SOURCES)}")
    if count is None:
        count = DEFAULT_HISTORIES if source == HISTORIES else DEFAULT_GROUPS
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SweepError(f"count must be a positive integer, got {count!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SweepError(f"seed must be a non-negative integer, got {seed!r}")
    if chunk_tasks is not None and chunk_tasks < 1:
        raise SweepError(f"chunk size must be positive, got {chunk_tasks!r}")
    if source == HISTORIES and space:
        raise SweepError("--space shapes the adversarial sampler; histories take --scale")
    consumer_scales = source == HISTORIES and scale in CONSUMER_SWEEP_SCALES
    if task_fn is None:
        names = resolve_assignors(assignors, server_side=consumer_scales)
        if not consumer_scales:
            server = [n for n in names if is_server_side(n)]
            if server:
                raise SweepError(f"--assignors {server[0]}: a server-side (KIP-848) assignor is swept on consumer-group "
                                 f"histories, at --scale {', '.join(CONSUMER_SWEEP_SCALES)} (got "
                                 f"{'--source ' + source if source != HISTORIES else '--scale ' + scale})")
        space_items = canonical_space(space) if source == ADVERSARIAL else ()
        shown = display_names(names)
    else:
        shown = {}
        if not assignors:
            raise SweepError("a custom task function needs the assignor names")
        names = tuple(assignors)
        space_items = tuple(space)

    scales = _scales(source, count, scale)
    skip: set[tuple[int, str]] = set()
    costs: dict[tuple[int, str], float] = {}
    server = {n for n in names if is_server_side(n)} if task_fn is None else set()
    if source == HISTORIES and historical_small and task_fn is None:
        for name in names:
            if is_historical(name):
                # a consumer-group history is small or medium whatever the classic history's scale
                skip |= {(i, name) for i, s in scales.items()
                         if (s in _HISTORICAL_SKIPS or i >= HISTORICAL_HISTORIES) if name not in server}
                skip |= {(i, name) for i in scales if i >= CONSUMER_HISTORICAL_HISTORIES if name in server}
    if server:
        from .consumer_rows import consumer_scale
        from .plan import CONSUMER_COSTS

        costs = {(i, n): CONSUMER_COSTS[consumer_scale(i, scale)] for i in range(count) for n in server}
    params = TaskParams(source=source, scale=scale, space=space_items, direct=direct, limits=limits)
    manifest_params = {"source": source, "scale": scale if source == HISTORIES else None, "space": list(space_items),
                       "direct": direct, "z3_query_seconds": limits.z3_query_seconds,
                       "cpsat_work": limits.cpsat_work, "cpsat_seconds": limits.cpsat_seconds,
                       "assignor_seconds": limits.assignor_seconds}
    if session is None:
        check_master(master)  # before anything is said or written: a wrong --master is one line
    check_out_dir(Path(out))
    sweep_dir = SweepDir(Path(out))
    with sweep_dir.lock():
        sweep_dir.prepare()
        present = sweep_dir.keys_present(seed)
        if status is not None:
            owed = [(i, a) for i in range(count) for a in names if (i, a) not in skip]
            kept = sum(1 for i, a in owed if a in present.get(i, ()))
            status(GradingStatus(0.0, len(owed) - kept, kept, len(owed), started=False))
        with spark_session(master, session=session, log=sweep_dir.root / "spark.log") as spark:
            grading = run_grading(
                spark, sweep_dir, seed=seed, count=count, assignors=names, params=params,
                manifest_params=manifest_params, scale_of=scales, skip=skip, task_fn=task_fn,
                chunk_tasks=chunk_tasks, progress=progress, status=status, present=present, costs=costs,
            )
        sweep_dir.sync_failures()
        rebalances, histories = load_frames(sweep_dir.root)
        summary = summarize_frame(sweep_dir.root, rebalances, histories)
        from .findings import collect_findings

        failing = rebalances[rebalances["failing"] == True]  # noqa: E712 - the rows' own column (grading.failure)
        findings = tuple(collect_findings(failing.to_dict("records"), histories.to_dict("records")))
        cases: tuple[Any, ...] = ()
        report_path = None
        if report:
            if task_fn is None:
                from .triage import triage

                cases = tuple(triage(sweep_dir, findings, params, budget_seconds=limits.triage_seconds,
                                     finding_seconds=limits.shrink_seconds,
                                     max_evaluations=limits.shrink_evaluations or 120))
            from .report import write_report

            manifest = sweep_dir.read_manifest() or {}
            report_path = write_report(sweep_dir, summary, rebalances, histories, findings, cases,
                                       manifest.get("params", {}))
    return SweepOutcome(sweep_dir.root, grading, summary, findings, cases, report_path, time.perf_counter() - started,
                        shown)
