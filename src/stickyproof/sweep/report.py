"""``DIR/report.html``: one self-contained page (figures as base64 PNGs) a person opens in a browser.

In order: the summary table (one line per assignor) and what it means in two sentences; three
figures (stickiness distribution per assignor; cumulative moves over one history against the
optimum; assign time against group size on log axes); then triage -- the findings by section
(known Kafka hazards, Kafka bugs on reachable states, historical incidents, unexpected failures),
each with its replay command. Drawn with matplotlib's Agg backend from the rows' columns only.
The page is laid out to fit 1,400 px: tables wrap long cells, figures scale down.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any, Sequence

from .findings import SECTIONS, TITLES, Finding
from .store import SweepDir, _write_atomic
from .summary import Summary, SummaryLine

__all__ = ["write_report", "SUMMARY_HEADERS", "summary_cells"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1340px;padding:0 1em;
color:#222;overflow-wrap:break-word}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;max-width:100%}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3;vertical-align:bottom}td.l,th.l{text-align:left}table.summary td{white-space:nowrap}table.summary td:first-child{white-space:normal;overflow-wrap:anywhere;min-width:15em}
code{background:#f4f4f4;padding:1px 4px;border-radius:3px;word-break:break-all;white-space:pre-wrap}
img{max-width:100%;height:auto}.muted{color:#777}table.findings td{overflow-wrap:anywhere}table.findings td:last-child{min-width:26em}
"""

SUMMARY_HEADERS = ("assignor", "rebalances", "histories", "valid %", "contract-balanced %", "stickiness p50",
                   "stickiness p5", "unnecessary moves / rebalance", "follow-ups / rebalance", "moves / optimum",
                   "assign ms p50", "assign ms p99", "failing rows", "unexpected")


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def summary_cells(line: SummaryLine) -> tuple[str, ...]:
    """The cells of one summary line, in ``SUMMARY_HEADERS`` order (the console uses them too)."""
    return (line.assignor if line.klass == "all" else f"  {line.klass}", str(line.rows), str(line.histories),
            _f(line.valid_pct, 1), _f(line.balanced_pct, 1), _f(line.stickiness_p50, 3), _f(line.stickiness_p5, 3),
            _f(line.unnecessary_per_rebalance, 2), _f(line.follow_ups_per_rebalance, 2), _f(line.moves_over_optimum, 2),
            _f(line.assign_ms_p50, 1), _f(line.assign_ms_p99, 1), str(line.failing), str(line.unexpected))


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _stickiness(ax: Any, frame: Any, assignors: list[str]) -> None:
    ok = frame[frame["valid"] == True]  # noqa: E712
    data = [ok.loc[ok["assignor"] == a, "stickiness"].dropna().to_numpy() for a in assignors]
    if any(len(d) for d in data):
        ax.boxplot([d if len(d) else [float("nan")] for d in data], tick_labels=assignors, showmeans=True,
                   showfliers=True, flierprops={"markersize": 2})
    ax.set_ylabel("stickiness (kept / contract optimum)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Stickiness per assignor, valid rebalances (box 25-75 %, triangle = mean)")
    import matplotlib.pyplot as plt

    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")


def _pick_history(frame: Any) -> tuple[int, int] | None:
    """The (seed, index) whose history has the most rebalances with a known optimum for every assignor."""
    known = frame[frame["optimal_moves"].notna() & frame["moved"].notna()]
    if known.empty:
        return None
    counts = known.groupby(["seed", "index", "assignor"]).size().groupby(level=[0, 1]).agg(["min", "count"])
    best = counts.sort_values(["count", "min"], ascending=False).index[0]
    return int(best[0]), int(best[1])


def _cumulative(ax: Any, frame: Any, assignors: list[str]) -> None:
    current = [a for a in assignors if "@" not in a]
    if current and len(current) < len(assignors):  # historical releases would crowd the lines out
        assignors = current
        frame = frame[frame["assignor"].isin(current)]
    chosen = _pick_history(frame)
    if chosen is None:
        ax.text(0.5, 0.5, "no rebalance with a known optimum", ha="center", transform=ax.transAxes)
        return
    seed, index = chosen
    mine = frame[(frame["seed"] == seed) & (frame["index"] == index)]
    for i, a in enumerate(assignors):
        rows = mine[mine["assignor"] == a].sort_values("rebalance")
        rows = rows[rows["optimal_moves"].notna() & rows["moved"].notna()]
        if rows.empty:
            continue
        color = f"C{i % 10}"
        ax.step(rows["rebalance"], rows["moved"].cumsum(), where="post", color=color, label=f"{a} moved")
        ax.step(rows["rebalance"], rows["optimal_moves"].cumsum(), where="post", color=color, linestyle=":",
                label=f"{a} optimum")
    ax.set_xlabel(f"rebalance of history seed {seed} index {index}")
    ax.set_ylabel("partitions moved, cumulative")
    ax.set_title("Cumulative moves over a history (solid) against the per-rebalance optimum (dotted)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _assign_time(ax: Any, frame: Any, assignors: list[str]) -> None:
    for i, a in enumerate(assignors):
        rows = frame[(frame["assignor"] == a) & frame["assign_seconds"].notna() & (frame["subscribed_partitions"] > 0)]
        if len(rows):
            ax.scatter(rows["subscribed_partitions"], rows["assign_seconds"].clip(lower=1e-6) * 1000, s=6,
                       alpha=0.6, color=f"C{i % 10}", label=a)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("subscribed partitions (log)")
    ax.set_ylabel("assign time, ms (log)")
    ax.set_title("Assign time against group size")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _figures(frame: Any) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if frame is None or not len(frame):
        return []
    frame = frame[frame["skipped"].isna()]
    assignors = sorted(frame["assignor"].unique())
    out = []
    for title, draw, size in (("Stickiness distribution per assignor", _stickiness, (max(7, 1.1 * len(assignors)), 4)),
                              ("Cumulative moves over a history against the optimum", _cumulative, (9, 4.5)),
                              ("Assign time against group size", _assign_time, (9, 4.5))):
        fig, ax = plt.subplots(figsize=size)
        draw(ax, frame, assignors)
        out.append((title, _png(fig)))
    return out


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (0,), cls: str = "") -> str:
    head = "".join(f"<th{' class=l' if i in left else ''}>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{' class=l' if i in left else ''}>{c}</td>" for i, c in enumerate(r)) + "</tr>"
                   for r in rows)
    return f"<table{f' class={cls}' if cls else ''}><tr>{head}</tr>{body}</table>"


def _findings(findings: Sequence[Finding], cases: Sequence[Any]) -> str:
    by_key = {(c.section, c.rule): c for c in cases}
    parts = []
    for section in SECTIONS:
        mine = [f for f in findings if f.section == section]
        parts.append(f"<h3>{html.escape(TITLES[section])} ({len(mine)})</h3>")
        if not mine:
            parts.append("<p class=muted>none</p>")
            continue
        rows = []
        for f in mine:
            case = by_key.get((f.section, f.rule))
            replay = []
            if case is not None and case.command:
                replay.append(f"<code>{html.escape(case.command)}</code>")
            if case is not None and case.history_command:
                replay.append(f"<code>{html.escape(case.history_command)}</code>")
            if case is not None and case.note:
                replay.append(f"<span class=muted>{html.escape(case.note)}</span>")
            if case is not None and case.shrunk_size:
                replay.append(f"<span class=muted>shrunk {case.original_size} -> {case.shrunk_size} "
                              "(members, topics, partitions)</span>")
            if case is not None and case.path is not None:
                replay.append("<span class=muted>a regression file with its verdict: copy it into tests/regressions/ "
                              "(docs/sweep.md)</span>")
            rows.append((html.escape(f.rule), html.escape(f.text),
                         html.escape(", ".join(f"{k} {v}" for k, v in sorted(f.assignors.items()))),
                         html.escape(", ".join(f"{k} {v}" for k, v in sorted(f.failures.items()))),
                         str(f.rows), str(f.histories), "<br>".join(replay)))
        parts.append(_table(("rule", "what", "assignors", "failures", "rows", "histories", "replay"), rows, left=(0, 1, 2, 3, 6), cls="findings"))
    return "".join(parts)


def write_report(out: SweepDir, summary: Summary, rebalances: Any, histories: Any, findings: Sequence[Finding],
                 cases: Sequence[Any], params: dict[str, Any]) -> Path:
    """Write ``DIR/report.html`` and return its path."""
    figures = _figures(rebalances)
    table = _table(SUMMARY_HEADERS, [tuple(html.escape(c) for c in summary_cells(line)) for line in summary.lines],
                   cls="summary")
    counts = {s: sum(1 for f in findings if f.section == s) for s in SECTIONS}
    parts = [
        "<!doctype html><html><head><meta charset=utf-8><title>stickyproof sweep report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>stickyproof sweep report</h1>",
        table,
        "<p>Each line grades one assignor on every rebalance of every history: <em>valid %</em> is the share "
        "where it kept every promise of its own contract (range: per-topic balance; round robin: balance on equal "
        "subscriptions; the sticky family: Kafka's balance), and <em>stickiness</em> is the share of what members "
        "really owned that it kept, against the most an assignment balanced in that same notion could keep (1 is "
        "the best possible, never above). A failure is a broken promise; the sections below say which failures are "
        f"known Kafka hazards ({counts['hazard']}), real Kafka bugs on reachable states ({counts['kafka-bug']}), "
        f"historical incidents ({counts['historical']}) and unexpected ({counts['unexpected']}).</p>",
    ]
    for title, uri in figures:
        parts.append(f"<h2>{html.escape(title)}</h2><img alt='{html.escape(title)}' src='{uri}'>")
    parts.append("<h2>Triage</h2>")
    parts.append(_findings(findings, cases))
    parts.append(f"<h2>Parameters</h2><p>Directory <code>{html.escape(str(out.root))}</code>; "
                 f"{summary.rows} graded rebalances, {summary.histories} history runs; "
                 f"<code>{html.escape(str(params))}</code>. Every failing row's leader input is in "
                 "<code>failures/</code>, every failing history's replay in <code>histories/</code>.</p>")
    parts.append("</body></html>\n")
    _write_atomic(out.report_path, "".join(parts))
    return out.report_path
