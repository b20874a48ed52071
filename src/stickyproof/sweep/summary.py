"""The summary of a sweep: one line per assignor x scenario class, computed from ``DIR/grades``.

Read with pyarrow, only the columns a summary needs (never the scenario texts), so it costs
seconds even for millions of rows. A scenario class is the subscription kind of the group
(uniform, heterogeneous, nested, disjoint, empty); each assignor also gets an ``all`` line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rows import FEATURE_COLUMNS, INVARIANTS
from .store import SweepDir, read_table

__all__ = ["SummaryLine", "Summary", "summarize", "load_frame", "FRAME_COLUMNS"]

FRAME_COLUMNS = [
    "seed",
    "index",
    "assignor",
    "scenario_hash",
    "valid",
    *INVARIANTS,
    "balanced_kafka",
    "balanced_global",
    "kept",
    "optimal_kept",
    "optimal_kept_global",
    "proven",
    "stickiness",
    "moved",
    "assign_seconds",
    "solve_seconds",
    "error",
    *(name for name, _ in FEATURE_COLUMNS),
]

ALL = "all"


@dataclass(frozen=True)
class SummaryLine:
    """Aggregates of one assignor over one scenario class (``all`` = every class)."""

    assignor: str
    scenario_class: str
    groups: int
    failing: int
    errors: int
    violations: dict[str, int]
    balanced_pct: float | None
    balanced_global_pct: float | None
    stickiness_mean: float | None
    stickiness_p5: float | None
    proven_pct: float | None
    moved_mean: float | None
    assign_ms_mean: float | None
    assign_ms_p95: float | None
    solve_ms_mean: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.assignor,
            "class": self.scenario_class,
            "groups": self.groups,
            "failing": self.failing,
            "errors": self.errors,
            "violations": dict(self.violations),
            "balanced_pct": self.balanced_pct,
            "balanced_global_pct": self.balanced_global_pct,
            "stickiness_mean": self.stickiness_mean,
            "stickiness_p5": self.stickiness_p5,
            "proven_pct": self.proven_pct,
            "moved_mean": self.moved_mean,
            "assign_ms_mean": self.assign_ms_mean,
            "assign_ms_p95": self.assign_ms_p95,
            "solve_ms_mean": self.solve_ms_mean,
        }


@dataclass(frozen=True)
class Summary:
    """Every line of a sweep's summary, assignors sorted, ``all`` first within an assignor."""

    out: Path
    rows: int
    lines: tuple[SummaryLine, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"out": str(self.out), "rows": self.rows, "lines": [line.to_dict() for line in self.lines]}


def load_frame(out: Path | str, columns: list[str] | None = None, *, include_skipped: bool = False) -> Any:
    """The graded rows of a sweep as a pandas DataFrame (default: every column but the scenario texts).

    Rows marked ``skipped`` (pairs Kafka never runs, R36) are left out unless asked for.
    """
    import pyarrow.dataset as ds

    wanted = list(columns or FRAME_COLUMNS)
    table = read_table(SweepDir(Path(out)).grades, wanted, filter=None if include_skipped else ds.field("skipped").is_null())
    return table.to_pandas()


def _pct(series: Any) -> float | None:
    known = series.dropna()
    if known.empty:
        return None
    return round(100.0 * float(known.astype(bool).mean()), 2)


def _mean(series: Any, scale: float = 1.0) -> float | None:
    known = series.dropna()
    return None if known.empty else round(float(known.mean()) * scale, 4)


def _quantile(series: Any, q: float, scale: float = 1.0) -> float | None:
    known = series.dropna()
    return None if known.empty else round(float(known.quantile(q)) * scale, 4)


def _line(assignor: str, klass: str, frame: Any) -> SummaryLine:
    failing = (frame["valid"] == False) | frame["error"].notna()  # noqa: E712 - pandas element-wise
    violations = {name: int((frame[name] == True).sum()) for name in INVARIANTS}  # noqa: E712
    return SummaryLine(
        assignor=assignor,
        scenario_class=klass,
        groups=int(len(frame)),
        failing=int(failing.sum()),
        errors=int(frame["error"].notna().sum()),
        violations=violations,
        balanced_pct=_pct(frame["balanced_kafka"]),
        balanced_global_pct=_pct(frame["balanced_global"]),
        stickiness_mean=_mean(frame["stickiness"]),
        stickiness_p5=_quantile(frame["stickiness"], 0.05),
        proven_pct=_pct(frame["proven"]),
        moved_mean=_mean(frame["moved"]),
        assign_ms_mean=_mean(frame["assign_seconds"], 1000.0),
        assign_ms_p95=_quantile(frame["assign_seconds"], 0.95, 1000.0),
        solve_ms_mean=_mean(frame["solve_seconds"], 1000.0),
    )


def summarize_frame(out: Path, frame: Any) -> Summary:
    lines: list[SummaryLine] = []
    if len(frame):
        classes = frame["subscription"].fillna("?")
        for assignor in sorted(frame["assignor"].unique()):
            mine = frame[frame["assignor"] == assignor]
            lines.append(_line(assignor, ALL, mine))
            mine_classes = classes[frame["assignor"] == assignor]
            for klass in sorted(mine_classes.unique()):
                lines.append(_line(assignor, klass, mine[mine_classes == klass]))
    return Summary(out=out, rows=int(len(frame)), lines=tuple(lines))


def summarize(out: Path | str) -> Summary:
    """Summarize every row in ``out/grades``."""
    out = Path(out)
    return summarize_frame(out, load_frame(out))
