"""``run_sweep``: the whole sweep as one library call -- grade on Spark, summarize, triage, report.

The defaults are the README's first command: about 2,000 groups of the sampler's default space
over every built-in assignor on ``local[*]``, sized to finish within five minutes on two cores
(measured with ``benchmarks/sweep.py`` and reported in the README section of the sweep).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import SweepError
from ..grading import Limits
from .job import GradeRun, run_grading
from .rows import RowFn, RowParams
from .session import DEFAULT_MASTER, spark_session
from .store import SweepDir
from .summary import Summary, load_frame, summarize_frame
from .triage import DEFAULT_BUDGET_SECONDS, MAX_EVALUATIONS, TriageCase, triage

__all__ = [
    "DEFAULT_GROUPS",
    "DEFAULT_SEED",
    "DEFAULT_LIMITS",
    "SweepOutcome",
    "run_sweep",
    "resolve_assignors",
    "canonical_space",
    "check_out_dir",
]

DEFAULT_GROUPS = 2000
DEFAULT_SEED = 0
DEFAULT_LIMITS = Limits(z3_query_seconds=10.0, shrink_seconds=DEFAULT_BUDGET_SECONDS, shrink_evaluations=MAX_EVALUATIONS)
"""A sweep bounds each Z3 query (the default space's groups check in milliseconds; the limit only
stops a pathological case, which is then a ``grade`` error row) and the whole triage's shrinking
(``shrink_seconds`` for all signatures, ``shrink_evaluations`` per signature)."""


@dataclass(frozen=True)
class SweepOutcome:
    """Everything a sweep produced: the grading pass, the summary, the triage, the report's path."""

    out: Path
    grading: GradeRun
    summary: Summary
    triage: tuple[TriageCase, ...]
    report: Path | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        g = self.grading
        return {
            "out": str(self.out),
            "seed": g.seed,
            "groups": g.groups,
            "assignors": list(g.assignors),
            "rows_present_before": g.rows_present,
            "rows_computed": g.rows_computed,
            "chunks_written": len(g.chunks_written),
            "grading_seconds": round(g.seconds, 3),
            "seconds": round(self.seconds, 3),
            "summary": self.summary.to_dict(),
            "triage": [c.to_dict() for c in self.triage],
            "report": str(self.report) if self.report else None,
        }


def resolve_assignors(names: Sequence[str] | None) -> tuple[str, ...]:
    """The assignors to sweep: the given names (each checked to load), or every registered one."""
    from ..assignors.registry import get_assignor, list_assignors

    chosen = tuple(names) if names else tuple(getattr(info, "name", info) for info in list_assignors())
    if not chosen:
        raise SweepError("no assignors to sweep")
    seen: set[str] = set()
    for name in chosen:
        if name in seen:
            raise SweepError(f"--assignors lists {name!r} twice")
        seen.add(name)
        get_assignor(name)  # raises UnknownAssignor naming it
    return chosen


def canonical_space(overrides: Sequence[str]) -> tuple[str, ...]:
    """``--space`` overrides validated and written canonically (so ``members=1..8`` == the default)."""
    from ..scenarios.sampler import Space

    return tuple(Space.from_overrides(list(overrides)).to_overrides())


def check_out_dir(out: Path) -> None:
    """``SweepError`` naming ``out`` unless it is (or can be made) a directory this process can write:
    checked by writing a file into it, before Spark starts (a file, a read-only directory or a path
    under a file once ended the sweep in a traceback, or in Spark's own failure after its start-up)."""
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


def run_sweep(
    out: Path | str,
    *,
    groups: int = DEFAULT_GROUPS,
    seed: int = DEFAULT_SEED,
    assignors: Sequence[str] | None = None,
    space: Sequence[str] = (),
    limits: Limits = DEFAULT_LIMITS,
    master: str = DEFAULT_MASTER,
    session: Any = None,
    row_fn: RowFn | None = None,
    chunk_groups: int | None = None,
    progress: Callable[[float, int], None] | None = None,
    report: bool = True,
) -> SweepOutcome:
    """Grade ``groups`` sampled groups of ``seed`` with every assignor, then summarize, triage and report.

    Re-running on the same ``out`` computes only the (seed, index, assignor) keys not yet there.
    ``session`` reuses a running SparkSession (left running); otherwise one is started on
    ``master`` and stopped at the end. ``row_fn`` replaces the grading of one group (tests and
    benchmarks); it must return rows of ``rows.COLUMNS``. ``limits``: ``z3_query_seconds`` and
    ``assignor_seconds`` bound each row's grading; ``shrink_seconds`` the whole triage and
    ``shrink_evaluations`` each signature's shrinking.
    """
    started = time.perf_counter()
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise SweepError(f"groups must be a positive integer, got {groups!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SweepError(f"seed must be a non-negative integer, got {seed!r}")
    if chunk_groups is not None and chunk_groups < 1:
        raise SweepError(f"chunk size must be positive, got {chunk_groups!r}")
    if row_fn is None:
        names = resolve_assignors(assignors)
        space_items = canonical_space(space)
    else:
        if not assignors:
            raise SweepError("a custom row function needs the assignor names")
        names = tuple(assignors)
        space_items = tuple(space)
    params = RowParams(space=space_items, limits=limits)
    check_out_dir(Path(out))
    sweep_dir = SweepDir(Path(out))
    with sweep_dir.lock():
        sweep_dir.prepare()
        with spark_session(master, session=session) as spark:
            grading = run_grading(
                spark,
                sweep_dir,
                seed=seed,
                groups=groups,
                assignors=names,
                params=params,
                row_fn=row_fn,
                chunk_groups=chunk_groups,
                progress=progress,
            )
        sweep_dir.sync_failures()
        frame = load_frame(sweep_dir.root)
        summary = summarize_frame(sweep_dir.root, frame)
        cases: tuple[TriageCase, ...] = ()
        report_path = None
        if report:
            if row_fn is None:
                budget = limits.shrink_seconds if limits.shrink_seconds is not None else float("inf")
                cases = tuple(triage(sweep_dir, params, budget_seconds=budget, max_evaluations=limits.shrink_evaluations))
            manifest = sweep_dir.read_manifest() or {}
            report_path = _report(sweep_dir, summary, frame, cases, manifest.get("params", {}))
    return SweepOutcome(sweep_dir.root, grading, summary, cases, report_path, time.perf_counter() - started)


def _report(out: SweepDir, summary: Summary, frame: Any, cases: Sequence[TriageCase], params: dict[str, Any]) -> Path:
    from .report import write_report

    return write_report(out, summary, frame, cases, params)
