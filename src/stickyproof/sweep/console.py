"""The CLI's renderables: the sweep's progress bar, its verdict and summary lines (plain text, at most 120
columns), the compare table.

Building a table is library work; printing it is the CLI's (this module never prints).
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

from .compare import ASPECTS, Comparison
from .job import GradingStatus, Running
from .summary import Summary, SummaryLine, verdict_lines

__all__ = ["PROGRESS_SECONDS", "ProgressLines", "clock", "progress_bar", "running_note", "summary_lines", "verdict_text",
           "protocols_lines", "compare_table"]

PROGRESS_SECONDS = 10.0
"""How often a sweep whose stderr is not a terminal (a CI log, ``2> file``) writes a progress line."""

#: A task running at least this long is named in the progress (a large history, minutes long).
LONG_TASK_SECONDS = 15.0


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def clock(seconds: float) -> str:
    """``45s``, ``3m10s``, ``1h02m``: a duration as a progress line says it."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def running_note(running: Sequence[Running]) -> str:
    """The long tasks running now (``history 0 (large) with sticky for 1m20s``), longest first, or ''."""
    long = [r for r in running if r.seconds >= LONG_TASK_SECONDS]
    if not long:
        return ""
    first = long[0]
    scale = f" ({first.scale})" if first.scale else ""
    more = f" and {len(long) - 1} more" if len(long) > 1 else ""
    return f"history {first.index}{scale} with {first.assignor} for {clock(first.seconds)}{more}"


class ProgressLines:
    """The plain progress lines of a sweep in a log: one when grading starts, then one every
    ``PROGRESS_SECONDS`` (``graded 120/432 tasks, 3m10s, ETA 4m``), naming a long task running.

    The one stateful piece of the console: it remembers when it last spoke."""

    def __init__(self, every: float = PROGRESS_SECONDS, now: Any = time.monotonic) -> None:
        self.every = every
        self.now = now
        self.began: float | None = None
        self.last = 0.0
        self.finished = False

    def line(self, status: GradingStatus) -> str | None:
        """The line to write for ``status`` now, or None when the last one is too recent."""
        if not status.started:
            return None
        t = self.now()
        if self.began is None:
            self.began = self.last = t
            present = f" ({status.kept} already present)" if status.kept else ""
            return f"grading {status.total} tasks{present}"
        done = status.done >= status.total
        if self.finished or (t - self.last < self.every and not done):
            return None
        self.last, self.finished = t, done
        elapsed = t - self.began
        text = f"graded {int(status.done)}/{status.total} tasks, {clock(elapsed)}"
        if 0 < status.done < status.total:
            # reckoned in planned cost, not in tasks: the large histories run first and are most of the work
            done, total = (status.cost_done, status.cost_total) if status.cost_total > 0 and status.cost_done > 0 \
                else (status.done, status.total)
            text += f", ETA {clock(elapsed * (total - done) / done)}"
        note = running_note(status.running)
        if note:
            text += f"; running {note}"
        elif status.done == 0 and not status.running:
            text += "; Spark's Python workers starting"  # no task has begun: imports, under load a minute
        return text


def progress_bar(console: Any) -> Any:
    """A rich Progress showing tasks graded, rate and time left; its description names a long task running."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tasks"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


#: The table's columns: (group caption, header, width); captions span their consecutive columns.
_COLUMNS = (
    ("", "rows", 6), ("", "valid%", 7),
    ("stickiness*", "med", 6), ("stickiness*", "mean", 6), ("stickiness*", "@opt%", 6),
    ("", "prov%", 6), ("", "unmeas", 7),
    ("history median", "unnec/r", 8), ("history median", "mv/opt", 7),
    ("", "fu/r", 5), ("", "ms p99", 8), ("", "fail", 5), ("", "err", 4), ("", "unexp", 6),
)
_LEGEND = (
    "* over valid rebalances where a move was possible (the optimum keeps something); @opt%: share kept as much as it;",
    "  prov%: optimum proven; unmeas: no stickiness stated (no optimum, or no balance owed); history median: over histories",
)


def _cells(line: SummaryLine) -> tuple[str, ...]:
    return (line.assignor if line.klass == "all" else f"  {line.klass}", str(line.rows), _f(line.valid_pct, 1),
            _f(line.stickiness_p50, 3), _f(line.stickiness_mean, 3), _f(line.at_optimum_pct, 1),
            _f(line.proven_pct, 1), str(line.unmeasured), _f(line.unnecessary_per_rebalance, 2),
            _f(line.moves_over_optimum, 2), _f(line.follow_ups_per_rebalance, 2), _f(line.assign_ms_p99, 1),
            str(line.failing), str(line.errors), str(line.unexpected))


def verdict_text(summary: Summary, width: int = 120) -> list[str]:
    """The verdict per assignor (``summary.verdict_lines``), each wrapped to ``width`` with a hanging indent."""
    import textwrap

    out: list[str] = []
    for sentence in verdict_lines(summary):
        out.extend(textwrap.wrap(sentence, width, subsequent_indent="  ", break_on_hyphens=False))
    return out


def summary_lines(summary: Summary, names: Mapping[str, str] | None = None) -> list[str]:
    """The summary table as plain text: two header lines, one line per assignor (and per class with
    ``--by``), then a two-line legend; at most 120 columns. An assignor whose program names itself
    otherwise (``names``: an ``exec:`` hello) is shown as ``NAME (assignor)``."""
    rows = [_cells(line) for line in summary.lines]
    if names:
        rows = [(f"{names[c[0]]} ({c[0]})", *c[1:]) if c[0] in names else c for c in rows]
    # the name column grows to the longest name (kafka-python:cooperative-sticky), up to 33 so the
    # line stays within 120 columns; a longer name ends in an ellipsis
    first = min(33, max([26] + [len(c[0]) + 1 for c in rows]))
    widths = (first, *(w for _, _, w in _COLUMNS))
    top = " " * first
    i = 0
    while i < len(_COLUMNS):
        caption = _COLUMNS[i][0]
        j = i
        while j < len(_COLUMNS) and _COLUMNS[j][0] == caption:
            j += 1
        span = sum(w for _, _, w in _COLUMNS[i:j])
        top += caption.rjust(span) if caption else " " * span
        i = j
    heads = ("assignor", *(h for _, h, _ in _COLUMNS))
    out = [top.rstrip(), "".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(heads, widths)))]
    for cells in rows:
        name = cells[0] if len(cells[0]) < first else cells[0][: first - 2] + "…"
        cells = (name, *cells[1:])
        out.append("".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    out.extend(_LEGEND)
    return out


def protocols_lines(summary: Summary) -> list[str]:
    """The two protocols side by side (``sweep.protocols``), at most 120 columns; none without history rows."""
    from .protocols import protocol_text

    return protocol_text(summary.protocols)


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
