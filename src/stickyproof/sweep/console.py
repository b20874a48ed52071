"""rich renderables for the CLI: the sweep's progress bar, its summary table, the compare table.

Building a table is library work; printing it is the CLI's (this module never prints).
"""

from __future__ import annotations

from typing import Any

from .compare import ASPECTS, Comparison
from .summary import Summary

__all__ = ["progress_bar", "summary_table", "compare_table"]

# Short headers so the summary fits a terminal; the report spells them out.
_SHORT = {
    "unassigned": "unasg",
    "duplicate": "dup",
    "unsubscribed": "unsub",
    "nonexistent": "nonex",
    "imbalance": "imbal",
    "cooperative_unsafe": "coop",
    "revoking_unclaimed": "revok",
    "nondeterministic": "nondet",
    "unstable": "unstab",
}


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def progress_bar(console: Any) -> Any:
    """A rich Progress showing groups graded, rate and time left."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(
        TextColumn("[bold]grading"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("groups"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


def _violations_text(violations: dict[str, int]) -> str:
    return ", ".join(f"{_SHORT[n]} {c}" for n, c in violations.items() if c) or "-"


def summary_table(summary: Summary) -> Any:
    """One line per assignor x subscription kind (``all`` first, bold); violations as ``name count``."""
    from rich.table import Table

    table = Table(title=f"stickyproof sweep: {summary.rows} graded rows in {summary.out}", show_lines=False)
    table.add_column("assignor", no_wrap=True)
    table.add_column("class", no_wrap=True)
    for name in ("groups", "fail", "err"):
        table.add_column(name, justify="right")
    table.add_column("violations by invariant")
    for name in ("bal %", "stick", "stick p5", "moved", "asg ms", "solve ms"):
        table.add_column(name, justify="right", no_wrap=True)
    previous = None
    for line in summary.lines:
        if previous is not None and line.assignor != previous:
            table.add_section()
        previous = line.assignor
        style = "bold" if line.scenario_class == "all" else None
        table.add_row(
            line.assignor if line.scenario_class == "all" else "",
            line.scenario_class,
            str(line.groups),
            str(line.failing),
            str(line.errors),
            _violations_text(line.violations),
            _f(line.balanced_pct, 1),
            _f(line.stickiness_mean, 3),
            _f(line.stickiness_p5, 3),
            _f(line.moved_mean, 1),
            _f(line.assign_ms_mean),
            _f(line.solve_ms_mean),
            style=style,
        )
    return table


def compare_table(comparison: Comparison, *, limit: int = 20) -> list[Any]:
    """The counts per assignor and aspect, then the first ``limit`` regressions."""
    from rich.table import Table

    counts = Table(
        title=f"{comparison.run_b} against {comparison.run_a}: {comparison.shared} shared (scenario, assignor) pairs "
        f"({comparison.only_a} only in A, {comparison.only_b} only in B)"
    )
    counts.add_column("assignor")
    for aspect in ASPECTS:
        counts.add_column(f"{aspect} worse", justify="right")
        counts.add_column(f"{aspect} better", justify="right")
    for assignor, by_aspect in comparison.counts().items():
        counts.add_row(
            assignor,
            *[str(by_aspect[a][k]) for a in ASPECTS for k in ("regressions", "improvements")],
        )
    out = [counts]
    if comparison.regressions:
        detail = Table(title=f"regressions (first {min(limit, len(comparison.regressions))} of {len(comparison.regressions)})")
        for name in ("assignor", "aspect", "A", "B", "A seed/index", "B seed/index", "scenario"):
            detail.add_column(name)
        for c in comparison.regressions[:limit]:
            detail.add_row(
                c.assignor,
                c.aspect,
                _f(c.a, 3),
                _f(c.b, 3),
                f"{c.key_a[0]}/{c.key_a[1]}",
                f"{c.key_b[0]}/{c.key_b[1]}",
                c.scenario_hash,
            )
        out.append(detail)
    return out
