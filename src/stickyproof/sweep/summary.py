"""The summary of a sweep: one line per assignor (and, with ``by``, per assignor x class), from ``DIR/grades``.

Read with pyarrow, only the columns a summary needs (never the scenario texts). What each number is:

- ``rows``: graded rebalances (rows Kafka never runs, R36, and rows whose grading crashed left out);
- ``valid %``: rows where the assignor kept every promise of its contract (models/invariants.md §5);
- ``balanced %``: rows whose settled assignment keeps the contract's balance (``contract_balanced``);
- stickiness ``p50``/``p5``: over valid rows, kept / the contract notion's optimum over what members
  really held (never above 1);
- ``unnecessary per rebalance``: partitions moved that the optimum keeps with their owner, per valid row;
- ``follow-ups per rebalance``: cooperative follow-up rebalances per rebalance an event started;
- ``moves / optimum``: partitions moved over the optimum's moves, summed over rows where both are known;
- assign ms ``p50``/``p99``: the assignor call of the rebalance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .columns import HISTORY, INVARIANTS, MONITORS, REBALANCE, is_failing, monitor_column
from .store import SweepDir, read_table

__all__ = ["SummaryLine", "Summary", "summarize", "summarize_frame", "load_frames", "CLASSES", "cause_of", "ALL"]

ALL = "all"

#: What ``--by`` may name: a column of the rows, or ``cause`` (the kind of event behind a rebalance).
CLASSES = ("scale", "subscription", "protocol", "cause", "versions", "racks", "source")

REBALANCE_FRAME = [
    "source", "seed", "index", "rebalance", "assignor", "scale", "event", "follow_up", "valid", *INVARIANTS,
    "contract", "contract_balanced", "stickiness", "proven", "unnecessary", "moved", "owned", "optimal_moves", "assign_seconds",
    "solve_seconds", "grade_seconds", "error", "hazards", "hazard_categories", "unexpected", "members",
    "subscribed_partitions", "subscription", "protocol", "versions", "racks", "kept", "optimal_kept", "skipped",
    "failing", "failures", "signature",
]
HISTORY_FRAME = [
    "source", "seed", "index", "assignor", "scale", "rebalances", "follow_ups", "failing_rows", "moved_total",
    "moved_known", "optimal_moves_known", "known_rows", "unowned", *(monitor_column(m) for m in MONITORS),
    "monitor_failures", "ended", "run_seconds", "history_seconds", "error", "start_members", "start_partitions",
    "protocol", "episodes",
]


@dataclass(frozen=True)
class SummaryLine:
    """Aggregates of one assignor over one class of rows (``all`` = every row)."""

    assignor: str
    klass: str
    rows: int
    histories: int
    valid_pct: float | None
    balanced_pct: float | None
    stickiness_p50: float | None
    stickiness_p5: float | None
    unnecessary_per_rebalance: float | None
    follow_ups_per_rebalance: float | None
    moves_over_optimum: float | None
    assign_ms_p50: float | None
    assign_ms_p99: float | None
    failing: int
    unexpected: int
    errors: int
    monitor_failures: int
    violations: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Summary:
    """Every line, assignors sorted, the ``all`` line first within an assignor."""

    out: Path
    rows: int
    histories: int
    by: str | None
    lines: tuple[SummaryLine, ...]

    def overall(self) -> tuple[SummaryLine, ...]:
        return tuple(line for line in self.lines if line.klass == ALL)

    def to_dict(self) -> dict[str, Any]:
        return {"out": str(self.out), "rows": self.rows, "histories": self.histories, "by": self.by,
                "lines": [line.to_dict() for line in self.lines]}


def cause_of(event: Any, follow_up: Any = False) -> str:
    """The kind of event behind a rebalance, its members, topics and counts left out (``c3 joins (t0)`` -> ``joins``)."""
    if follow_up is True:
        return "follow-up"
    if not isinstance(event, str) or not event:
        return "?"
    text = re.sub(r"\(.*", "", event)
    text = re.sub(r"\b[ct]\d+\b|\d+", " ", text)
    words = [w for w in text.replace(",", " ").split() if w not in ("of", "to", "the")]
    return " ".join(words[:3]) or "start"


def load_frames(out: Path | str) -> tuple[Any, Any]:
    """(rebalance rows, history rows) of a sweep as pandas DataFrames, without the scenario texts."""
    import pyarrow.dataset as ds

    grades = SweepDir(Path(out)).grades
    rebalances = read_table(grades, REBALANCE_FRAME, filter=ds.field("kind") == REBALANCE).to_pandas()
    histories = read_table(grades, HISTORY_FRAME, filter=ds.field("kind") == HISTORY).to_pandas()
    rebalances["cause"] = [cause_of(e, f) for e, f in zip(rebalances["event"], rebalances["follow_up"])]
    return with_failing_column(rebalances), histories


def with_failing_column(rebalances: Any) -> Any:
    """``rebalances`` with ``failing`` a boolean on every row: the column the rows carry
    (``columns.with_failing``, the one definition), filled by that same definition on rows written
    before it existed (an older sweep directory)."""
    missing = rebalances["failing"].isna()
    if missing.any():
        filled = [is_failing(r) for r in rebalances.loc[missing, ["valid", "error", "skipped"]].to_dict("records")]
        rebalances.loc[missing, "failing"] = filled
    rebalances["failing"] = rebalances["failing"].astype(bool)
    return rebalances


def _pct(mask: Any, among: Any) -> float | None:
    n = int(among.sum())
    return None if n == 0 else round(100.0 * float((mask & among).sum()) / n, 2)


def _quantile(series: Any, q: float, scale: float = 1.0) -> float | None:
    known = series.dropna()
    return None if known.empty else round(float(known.quantile(q)) * scale, 4)


def _line(assignor: str, klass: str, frame: Any, histories: Any) -> SummaryLine:
    graded = frame[frame["valid"].notna()]
    valid = graded["valid"] == True  # noqa: E712 - pandas element-wise
    ok = graded[valid]
    balanced = graded["contract_balanced"]
    known = graded[graded["optimal_moves"].notna() & graded["moved"].notna()]
    optimum = float(known["optimal_moves"].sum())
    follow = frame["follow_up"] == True  # noqa: E712
    started = int((frame["follow_up"] == False).sum())  # noqa: E712
    failing = frame["failing"] == True  # noqa: E712 - the rows' own column (grading.failure)
    crashed = failing & frame["valid"].isna()  # failing without a verdict: the grading crashed
    monitor_failed = (histories[[monitor_column(m) for m in MONITORS]] == False).any(axis=1)  # noqa: E712
    return SummaryLine(
        assignor=assignor,
        klass=klass,
        rows=int(len(graded)),
        histories=int(len(histories)),
        valid_pct=_pct(valid, graded["valid"].notna()),
        balanced_pct=_pct(balanced == True, balanced.notna()),  # noqa: E712
        stickiness_p50=_quantile(ok["stickiness"], 0.5),
        stickiness_p5=_quantile(ok["stickiness"], 0.05),
        unnecessary_per_rebalance=None if ok["unnecessary"].dropna().empty else round(float(ok["unnecessary"].dropna().mean()), 4),
        follow_ups_per_rebalance=None if started == 0 else round(float(follow.sum()) / started, 4),
        moves_over_optimum=None if optimum <= 0 else round(float(known["moved"].sum()) / optimum, 4),
        assign_ms_p50=_quantile(frame["assign_seconds"], 0.5, 1000.0),
        assign_ms_p99=_quantile(frame["assign_seconds"], 0.99, 1000.0),
        failing=int(failing.sum()),
        # a crashed grading or history run has no cause a rule could name: unexpected too
        unexpected=int(frame["unexpected"].notna().sum() + crashed.sum() + histories["error"].notna().sum()),
        errors=int(crashed.sum()),
        monitor_failures=int(monitor_failed.sum()),
        violations={name: int((frame[name] == True).sum()) for name in INVARIANTS},  # noqa: E712
    )


def summarize_frame(out: Path, rebalances: Any, histories: Any, *, by: str | None = None) -> Summary:
    """The summary of the given frames (``load_frames``), with per-class lines when ``by`` names a class."""
    if by is not None and by not in CLASSES:
        from ..errors import SweepError

        raise SweepError(f"--by {by!r}: expected one of {', '.join(CLASSES)}")
    frame = rebalances[rebalances["skipped"].isna()]
    lines: list[SummaryLine] = []
    names = sorted(set(frame["assignor"].unique()) | set(histories["assignor"].unique()))
    for assignor in names:
        mine = frame[frame["assignor"] == assignor]
        hist = histories[histories["assignor"] == assignor]
        lines.append(_line(assignor, ALL, mine, hist))
        if by is None:
            continue
        values = mine[by].fillna("?").astype(str)
        hvalues = hist[by].fillna("?").astype(str) if by in hist else None
        for value in sorted(values.unique()):
            hmine = hist[hvalues == value] if hvalues is not None else hist.iloc[0:0]
            lines.append(_line(assignor, value, mine[values == value], hmine))
    return Summary(out=out, rows=int(frame["valid"].notna().sum()), histories=int(len(histories)), by=by, lines=tuple(lines))


def summarize(out: Path | str, *, by: str | None = None) -> Summary:
    """Summarize every row in ``out/grades``."""
    out = Path(out)
    rebalances, histories = load_frames(out)
    return summarize_frame(out, rebalances, histories, by=by)
