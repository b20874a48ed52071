"""The CLI's renderables: the sweep's progress bar, its summary lines (plain text, at most 120 columns), the compare table.

Building a table is library work; printing it is the CLI's (this module never prints).
"""

from __future__ import annotations

from typing import Any

from .compare import ASPECTS, Comparison
from .report import summary_cells
from .summary import Summary

__all__ = ["progress_bar", "summary_lines", "compare_table"]


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
        TextColumn("tasks"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


def summary_lines(summary: Summary) -> list[str]:
    """The summary as plain text, one line per assignor (and per class with ``--by``), at most 120 columns."""
    rows = [summary_cells(line) for line in summary.lines]
    # the name column grows to the longest name (kafka-python:cooperative-sticky), up to 35 so the
    # line stays within 120 columns; a longer name ends in an ellipsis
    first = min(35, max([26] + [len(c[0]) + 1 for c in rows]))
    widths = (first, 7, 7, 7, 7, 7, 8, 7, 7, 8, 8, 6, 6)
    heads = ("assignor", "rows", "valid%", "bal%", "stk50", "stk5", "unnec/r", "fu/r", "mv/opt", "ms p50",
             "ms p99", "fail", "unexp")
    out = ["".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(heads, widths)))]
    for cells in rows:
        name = cells[0] if len(cells[0]) < first else cells[0][: first - 2] + "…"
        cells = (name, cells[1], *cells[3:])
        out.append("".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    return out


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
