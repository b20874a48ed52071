"""The summary of a sweep: a verdict per assignor in words, then one line per assignor (and, with
``by``, per assignor x class), from ``DIR/grades``.

Read with pyarrow, only the columns a summary needs (never the scenario texts).

``verdict_lines(summary)`` answers "is it correct?" first, one sentence per assignor that reads alone:
``sticky: kept every promise on 1,188 of 1,188 rebalances (132 histories)``, or the failing rebalances
grouped by what failed (the row's ``failures``, ``grading.failure``'s one definition, most severe
first) and by what explains them (a known Kafka hazard, a Kafka bug on reachable states, a historical
incident, or unexpected), then how sticky it was where a move was possible.

What each number of a line is:

- ``rows``: graded rebalances (rows Kafka never runs, R36, and rows whose grading crashed left out);
- ``valid %``: rows where the assignor kept every promise of its contract (models/invariants.md §5);
- ``balanced %``: rows whose settled assignment keeps the contract's balance (``contract_balanced``);
- stickiness ``p50`` (median), ``mean``, ``p5`` and ``at optimum %`` (the share equal to 1): kept / the
  contract notion's optimum over what members really held (never above 1), over the valid rows where a
  move was possible. A rebalance whose optimum keeps nothing (``optimal_kept == 0``: nobody owned
  anything the group may keep, e.g. a first join) says nothing about stickiness and is left out
  (``nothing_to_keep`` counts them); counting it as 1 made every assignor's median read 1;
- ``proven %``: of the rows stickiness is measured on, those whose optimum the solver proved
  (``proven``); the others are measured against the solver's bound;
- ``unmeasured``: valid rows where a move was possible but stickiness is null (the optimum could not
  be computed, or the contract owes no balance to measure it against: heterogeneous ``uniform``),
  counted, never dropped in silence;
- ``unnecessary per rebalance`` and ``moves / optimum``: the MEDIAN OVER HISTORIES of each history's
  figure (its mean unnecessary moves per valid rebalance; its partitions moved over the optimum's moves).
  One large history moves a thousand times more partitions than a small one, so a mean over rows (or
  over histories) is that one history's figure; the median is the typical history's;
- ``follow-ups per rebalance``: cooperative follow-up rebalances per rebalance an event started;
- assign ms ``p50``/``p99``: the assignor call of the rebalance;
- ``failing``: rebalances that failed (``grading.failure``); ``errors``: those where the assignor raised
  or ran past its time limit (``error``, ``time-limit``); ``crashes``: those whose grading crashed
  (stickyproof's failure, never the assignor's); ``unexpected``: failures no known Kafka behaviour explains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..grading.failure import ERROR_KINDS, crashed_row
from .columns import HISTORY, INVARIANTS, MONITORS, REBALANCE, is_failing, monitor_column
from .store import SweepDir, read_table

__all__ = ["SummaryLine", "Summary", "summarize", "summarize_frame", "load_frames", "CLASSES", "cause_of", "ALL",
           "verdict_lines", "verdict_line", "EXPLANATIONS"]

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
    "protocol", "episodes", "converge_ticks_median", "unsettled_ticks", "unowned_ticks", "monitors_failed",
    "monitor_hazards", "monitor_unexpected", "protocol_moved", "migration",
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
    stickiness_mean: float | None = None
    at_optimum_pct: float | None = None
    proven_pct: float | None = None
    unmeasured: int = 0
    nothing_to_keep: int = 0
    crashes: int = 0
    #: the failing rows grouped: (failure kinds joined by ``+``, what explains them, rows), most rows first
    failures_by_kind: tuple[tuple[str, str, int], ...] = ()
    #: histories that failed each protocol monitor (models/protocol.md §7), as (monitor, histories)
    monitors_failed: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.__dict__.items()}
        out["failures_by_kind"] = [{"kinds": k, "explained_as": e, "rows": n} for k, e, n in self.failures_by_kind]
        out["verdict"] = verdict_line(self)
        return out


@dataclass(frozen=True)
class Summary:
    """Every line, assignors sorted, the ``all`` line first within an assignor."""

    out: Path
    rows: int
    histories: int
    by: str | None
    lines: tuple[SummaryLine, ...]
    #: the two group protocols side by side (``sweep.protocols``), from the history rows
    protocols: tuple[Any, ...] = ()

    def overall(self) -> tuple[SummaryLine, ...]:
        return tuple(line for line in self.lines if line.klass == ALL)

    def to_dict(self) -> dict[str, Any]:
        return {"out": str(self.out), "rows": self.rows, "histories": self.histories, "by": self.by,
                "lines": [line.to_dict() for line in self.lines],
                "protocols": [line.to_dict() for line in self.protocols]}


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


def _median_over_histories(frame: Any, per_history: Any) -> float | None:
    """The median over histories (``seed``, ``index``) of ``per_history(rows of one history)``, histories
    whose figure is None left out: one large history weighs as much as a small one."""
    if frame.empty:
        return None
    figures = [per_history(rows) for _, rows in frame.groupby(["seed", "index"], sort=True)]
    known = [f for f in figures if f is not None]
    if not known:
        return None
    known.sort()
    mid = len(known) // 2
    value = known[mid] if len(known) % 2 else (known[mid - 1] + known[mid]) / 2
    return round(float(value), 4)


def _mean_unnecessary(rows: Any) -> float | None:
    known = rows["unnecessary"].dropna()
    return None if known.empty else float(known.mean())


def _moves_over_optimum(rows: Any) -> float | None:
    optimum = float(rows["optimal_moves"].sum())
    return None if optimum <= 0 else float(rows["moved"].sum()) / optimum


def _true(series: Any) -> Any:
    return series == True  # noqa: E712 - pandas element-wise


def _kinds_of(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The failure kinds of a failing row, most severe first: its ``failures`` column (grading.failure's
    verdict), ``crash`` when stickyproof's grading crashed; on rows written before the column existed,
    the violated invariants (and ``error`` for an assignor error)."""
    if crashed_row(row):
        return ("crash",)
    failures = row.get("failures")
    if isinstance(failures, str) and failures:
        return tuple(failures.split(","))
    kinds = [name.replace("_", "-") for name in INVARIANTS if row.get(name) is True]
    error = row.get("error")
    if isinstance(error, str) and error:
        kinds.insert(0, "error")
    return tuple(kinds) or ("unknown",)


def _explanation_of(row: Mapping[str, Any]) -> str:
    """What explains a failing row: ``unexpected`` (no rule, or a crash of the grading), else its labels'
    categories (``grading.hazards``: hazard, kafka-bug, historical)."""
    if crashed_row(row):
        return "unexpected"
    unexpected = row.get("unexpected")
    if isinstance(unexpected, str) and unexpected:
        return "unexpected"
    categories = row.get("hazard_categories")
    return categories if isinstance(categories, str) and categories else "unlabelled"


def _failures_by_kind(failing_rows: Any) -> tuple[tuple[str, str, int], ...]:
    counts: dict[tuple[str, str], int] = {}
    columns = [c for c in ("valid", "error", "skipped", "failures", "unexpected", "hazard_categories", *INVARIANTS)
               if c in failing_rows]
    for row in failing_rows[columns].to_dict("records"):
        row = {k: (None if v is None or v != v else (bool(v) if k in INVARIANTS or k == "valid" else v))
               for k, v in row.items()}
        key = ("+".join(_kinds_of(row)), _explanation_of(row))
        counts[key] = counts.get(key, 0) + 1
    return tuple((k, e, n) for (k, e), n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _line(assignor: str, klass: str, frame: Any, histories: Any) -> SummaryLine:
    graded = frame[frame["valid"].notna()]
    valid = _true(graded["valid"])
    ok = graded[valid]
    # stickiness says something only where a move was possible: the optimum keeps something
    movable = ok[~(ok["optimal_kept"] == 0)]
    measured = movable["stickiness"].dropna()
    proven = movable.loc[movable["stickiness"].notna(), "proven"]
    balanced = graded["contract_balanced"]
    known = graded[graded["optimal_moves"].notna() & graded["moved"].notna()]
    follow = _true(frame["follow_up"])
    started = int((frame["follow_up"] == False).sum())  # noqa: E712
    failing = _true(frame["failing"])  # the rows' own column (grading.failure)
    crashed = failing & frame["valid"].isna()  # failing without a verdict: the grading crashed
    by_kind = _failures_by_kind(frame[failing])
    errors = sum(n for kinds, _, n in by_kind if set(kinds.split("+")) & set(ERROR_KINDS))
    monitor_failed = (histories[[monitor_column(m) for m in MONITORS]] == False).any(axis=1)  # noqa: E712
    if "monitors_failed" in histories:  # a consumer history's protocol monitors (sweep/consumer_protocol.py)
        monitor_failed = monitor_failed | histories["monitors_failed"].notna()
    return SummaryLine(
        assignor=assignor,
        klass=klass,
        rows=int(len(graded)),
        histories=int(len(histories)),
        valid_pct=_pct(valid, graded["valid"].notna()),
        balanced_pct=_pct(_true(balanced), balanced.notna()),
        stickiness_p50=_quantile(measured, 0.5),
        stickiness_p5=_quantile(measured, 0.05),
        unnecessary_per_rebalance=_median_over_histories(ok, _mean_unnecessary),
        follow_ups_per_rebalance=None if started == 0 else round(float(follow.sum()) / started, 4),
        moves_over_optimum=_median_over_histories(known, _moves_over_optimum),
        assign_ms_p50=_quantile(frame["assign_seconds"], 0.5, 1000.0),
        assign_ms_p99=_quantile(frame["assign_seconds"], 0.99, 1000.0),
        failing=int(failing.sum()),
        # a crashed grading or history run has no cause a rule could name: unexpected too
        unexpected=int(frame["unexpected"].notna().sum() + crashed.sum() + histories["error"].notna().sum()),
        errors=int(errors),
        monitor_failures=int(monitor_failed.sum()),
        violations={name: int(_true(frame[name]).sum()) for name in INVARIANTS},
        stickiness_mean=None if measured.empty else round(float(measured.mean()), 4),
        at_optimum_pct=None if measured.empty else round(100.0 * float((measured >= 1.0).sum()) / len(measured), 2),
        proven_pct=None if proven.empty else round(100.0 * float(_true(proven).sum()) / len(proven), 2),
        unmeasured=int(movable["stickiness"].isna().sum()),
        nothing_to_keep=int((ok["optimal_kept"] == 0).sum()),
        crashes=int(crashed.sum()),
        failures_by_kind=by_kind,
        monitors_failed=tuple((m, int(n)) for m in MONITORS
                              if (n := (histories[monitor_column(m)] == False).sum())) + _consumer_monitors(histories),  # noqa: E712
    )


def _consumer_monitors(histories: Any) -> tuple[tuple[str, int], ...]:
    """(monitor, histories) for the consumer protocol's failed monitors, a known hazard's label kept
    (``no-double-ownership:zombie``)."""
    if "monitors_failed" not in histories:
        return ()
    counts: dict[str, int] = {}
    for failed, hazards in zip(histories["monitors_failed"], histories.get("monitor_hazards", [None] * len(histories))):
        if not isinstance(failed, str) or not failed:
            continue
        labels = dict(h.split(":", 1) for h in hazards.split(",")) if isinstance(hazards, str) and hazards else {}
        for m in failed.split(","):
            key = f"{m} ({labels[m]}: known hazard)" if m in labels else m
            counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts.items()))


def summarize_frame(out: Path, rebalances: Any, histories: Any, *, by: str | None = None) -> Summary:
    """The summary of the given frames (``load_frames``), with per-class lines when ``by`` names a class."""
    if by is not None and by not in CLASSES:
        from ..errors import SweepError

        raise SweepError(f"--by {by!r}: expected one of {', '.join(CLASSES)}")
    frame = rebalances[rebalances["skipped"].isna()]
    lines: list[SummaryLine] = []
    # a migration's row (sweep.migration_rows) judges the coordinator's switch, not the assignor's
    # histories: it has its own line in the protocols side by side, and its failures are findings
    lived = histories[~(histories["migration"] == True)] if "migration" in histories else histories  # noqa: E712
    names = sorted(set(frame["assignor"].unique()) | set(lived["assignor"].unique()))
    for assignor in names:
        mine = frame[frame["assignor"] == assignor]
        hist = lived[lived["assignor"] == assignor]
        lines.append(_line(assignor, ALL, mine, hist))
        if by is None:
            continue
        values = mine[by].fillna("?").astype(str)
        hvalues = hist[by].fillna("?").astype(str) if by in hist else None
        for value in sorted(values.unique()):
            hmine = hist[hvalues == value] if hvalues is not None else hist.iloc[0:0]
            lines.append(_line(assignor, value, mine[values == value], hmine))
    from .protocols import protocol_lines

    return Summary(out=out, rows=int(frame["valid"].notna().sum()), histories=int(len(histories)), by=by, lines=tuple(lines),
                   protocols=protocol_lines(histories))


def summarize(out: Path | str, *, by: str | None = None) -> Summary:
    """Summarize every row in ``out/grades``."""
    out = Path(out)
    rebalances, histories = load_frames(out)
    return summarize_frame(out, rebalances, histories, by=by)


# ------------------------------------------------------------------------------------------
# The verdict in words


#: How a failing row's labels read in a verdict (``grading.hazards.CATEGORIES``, and the rest).
EXPLANATIONS = {
    "hazard": "known Kafka hazard",
    "kafka-bug": "Kafka bug on reachable states",
    "historical": "historical incident",
    "unexpected": "unexpected",
    "unlabelled": "unlabelled",
}
_KIND_WORDS = {
    "error": "assignor errors",
    "time-limit": "past the time limit",
    "crash": "grading crashes (stickyproof's own)",
}


def _explained(explanation: str) -> str:
    return ", ".join(EXPLANATIONS.get(c, c) for c in explanation.split(","))


def verdict_line(line: SummaryLine) -> str:
    """One assignor's verdict as a sentence that reads alone: every promise kept on N of N rebalances,
    or how many failed and how (by kind and by what explains them); then, where a move was possible,
    how much of what the optimum keeps it kept."""
    total = line.rows + line.crashes
    histories = f" ({line.histories:,} histories)" if line.histories else ""
    if line.failing == 0:
        text = f"{line.assignor}: kept every promise on {total:,} of {total:,} rebalances{histories}"
    else:
        kinds = {k for group, _, _ in line.failures_by_kind for k in group.split("+")}
        verb = "failed" if kinds & {*ERROR_KINDS, "crash", "unknown"} else "broke a promise"
        groups = ", ".join(f"{n:,} {_KIND_WORDS.get(k, k)} ({_explained(e)})" for k, e, n in line.failures_by_kind)
        text = f"{line.assignor}: {line.failing:,} of {total:,} rebalances{histories} {verb}: {groups}"
    if line.monitor_failures:
        which = ", ".join(m for m, _ in line.monitors_failed)
        text += (f"; {line.monitor_failures:,} of {line.histories:,} histories failed a group-protocol check"
                 + (f" ({which})" if which else ""))
    if line.stickiness_p50 is not None:
        text += (f"; where partitions could stay, it kept a median {100 * line.stickiness_p50:.1f}% of the most "
                 f"that could (mean {100 * (line.stickiness_mean or 0):.1f}%)")
    if line.unmeasured:
        text += f"; {line.unmeasured:,} rebalances unmeasured (no optimum computed, or no balance owed)"
    return text


def verdict_lines(summary: Summary) -> list[str]:
    """One verdict sentence per assignor (``verdict_line`` of each ``all`` line), assignors sorted."""
    return [verdict_line(line) for line in summary.overall()]
