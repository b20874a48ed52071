"""``DIR/report.html``: one self-contained page (figures as base64 PNGs) a person opens in a browser.

In order: the verdict, one line per assignor in words (what it graded, what failed by kind); the
summary table and what it means; stickiness as an ECDF per assignor over the rebalances where a
move was possible (an optimum that keeps nothing says nothing about stickiness); the worst
rebalances (failing first, then the most unnecessary moves) with a copyable replay command each;
cumulative moves over one history against the optimum; assign time against group size; then triage
-- the findings by section (known Kafka hazards, Kafka bugs on reachable states, historical
incidents, unexpected failures), each with its replay command. Drawn with matplotlib's Agg backend
from the rows' columns only, every legend outside its axes. Laid out for windows from 1,000 to
1,400 px: tables wrap their cells (a box of their own scrolls only as a last resort), figures scale
down; tests/test_report.py measures both widths in headless Chromium.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any, Sequence

from .findings import SECTIONS, TITLES, Finding
from .store import SweepDir, _write_atomic
from .summary import Summary, SummaryLine, verdict_lines

__all__ = ["write_report", "SUMMARY_HEADERS", "summary_cells", "FIGURES", "WORST"]

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1em auto;max-width:1340px;padding:0 1em;
color:#222;overflow-wrap:break-word;line-height:1.35}
h1{font-size:1.5em;margin:.3em 0}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
.box{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;font-size:.82em;max-width:100%}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f3f3f3;vertical-align:bottom;font-weight:600}td.l,th.l{text-align:left}
table.summary{width:100%}table.summary th,table.summary td:first-child{overflow-wrap:anywhere}
table.summary td{white-space:nowrap}table.summary td:first-child{white-space:normal;min-width:8em}
code{background:#f4f4f4;padding:1px 4px;border-radius:3px;word-break:break-all;white-space:pre-wrap;user-select:all}
img{max-width:100%;height:auto;display:block}.muted{color:#666}
table.findings td,table.worst td{overflow-wrap:anywhere}table.findings td:last-child,table.worst td:last-child{min-width:18em}
#verdict{border:2px solid #888;border-radius:6px;padding:.4em 1em;margin:.6em 0 1em;background:#fafafa}
#verdict h2{margin:.2em 0 .3em;border:0}#verdict ul{margin:.2em 0;padding-left:1.2em}
#verdict li{margin:.15em 0}#verdict li.fail{color:#a00}
@media (max-width:1100px){body{padding:0 .5em}table{font-size:.78em}td,th{padding:2px 4px}}
"""

SUMMARY_HEADERS = ("assignor", "rebalances", "histories", "valid %", "contract-balanced %",
                   "stickiness median*", "stickiness mean*", "at the optimum %*", "optimum proven %", "unmeasured",
                   "unnecessary moves / rebalance (history median)", "moves / optimum (history median)",
                   "follow-ups / rebalance", "assign ms p50", "assign ms p99", "failing rows", "assignor errors",
                   "unexpected")
#: What the starred headers mean, printed under the table.
SUMMARY_NOTE = ("* over valid rebalances where a move was possible (the optimum keeps something); an optimum keeping "
                "nothing would make every assignor read 1.0. Unmeasured: valid rows with no stickiness stated (no optimum computed, or a contract owing no balance), "
                "never dropped silently. History median: the median of each history's own figure, so one large "
                "history does not set it.")


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def summary_cells(line: SummaryLine) -> tuple[str, ...]:
    """The cells of one summary line, in ``SUMMARY_HEADERS`` order."""
    return (line.assignor if line.klass == "all" else f"  {line.klass}", str(line.rows), str(line.histories),
            _f(line.valid_pct, 1), _f(line.balanced_pct, 1), _f(line.stickiness_p50, 3), _f(line.stickiness_mean, 3),
            _f(line.at_optimum_pct, 1), _f(line.proven_pct, 1), str(line.unmeasured),
            _f(line.unnecessary_per_rebalance, 2), _f(line.moves_over_optimum, 2), _f(line.follow_ups_per_rebalance, 2),
            _f(line.assign_ms_p50, 1), _f(line.assign_ms_p99, 1), str(line.failing), str(line.errors),
            str(line.unexpected))


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _moves_possible(frame: Any) -> Any:
    """Valid rows whose optimum keeps something: where a move was avoidable, so stickiness says something
    (an optimum keeping nothing makes every assignor's stickiness 1.0)."""
    ok = frame[(frame["valid"] == True) & frame["stickiness"].notna()]  # noqa: E712
    return ok[ok["optimal_kept"].fillna(0) > 0]


_STYLES = ("-", "--", "-.", ":")


def _name(assignor: str, width: int = 36) -> str:
    """An assignor's name short enough for a legend (an ``exec:`` command line would shrink the figure)."""
    return assignor if len(assignor) <= width else assignor[: width - 1] + "…"


def _legend(ax: Any) -> None:
    """The legend right of the axes, never over a line."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _stickiness(ax: Any, frame: Any, assignors: list[str]) -> None:
    import numpy as np

    ok = _moves_possible(frame)
    drawn = 0
    for i, a in enumerate(assignors):
        values = np.sort(ok.loc[ok["assignor"] == a, "stickiness"].to_numpy(dtype=float))
        if not len(values):
            continue
        share = np.arange(1, len(values) + 1) / len(values) * 100.0
        ax.step(np.concatenate(([0.0], values)), np.concatenate(([0.0], share)), where="post", color=f"C{i % 10}",
                linestyle=_STYLES[(i // 10) % len(_STYLES)], linewidth=1.4,
                label=f"{_name(a)} (n={len(values):,}, median {float(np.median(values)):.3f})")
        drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "no valid rebalance where a move was possible", ha="center", transform=ax.transAxes)
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(0, 101)
    ax.set_xlabel("stickiness: partitions kept / the most a balanced assignment keeps (1 = optimal)")
    ax.set_ylabel("rebalances with stickiness at or below x (%)")
    ax.set_title("Stickiness ECDF per assignor (valid rebalances where the optimum keeps something)")
    ax.grid(True, alpha=0.3)
    _legend(ax)


def _pick_history(frame: Any) -> tuple[int, int] | None:
    """The (seed, index) whose history has the most rebalances with a known optimum for every assignor."""
    known = frame[frame["optimal_moves"].notna() & frame["moved"].notna()]
    if known.empty:
        return None
    counts = known.groupby(["seed", "index", "assignor"]).size().groupby(level=[0, 1]).agg(["min", "count"])
    best = counts.sort_values(["count", "min"], ascending=False).index[0]
    return int(best[0]), int(best[1])


def _cumulative(ax: Any, frame: Any, assignors: list[str]) -> None:
    """Each assignor's cumulative moves (solid) and the optimum's (dashed, black): assignors whose
    optimum is the same series (one contract notion) share one line naming them all, so no two
    optimum lines lie on top of each other."""
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
    optima: dict[tuple[tuple[int, int], ...], list[str]] = {}
    for i, a in enumerate(assignors):
        rows = mine[mine["assignor"] == a].sort_values("rebalance")
        rows = rows[rows["optimal_moves"].notna() & rows["moved"].notna()]
        if rows.empty:
            continue
        ax.step(rows["rebalance"], rows["moved"].cumsum(), where="post", color=f"C{i % 10}",
                linestyle=_STYLES[(i // 10) % len(_STYLES)], label=f"{_name(a)} moved")
        series = tuple(zip(rows["rebalance"].astype(int), rows["optimal_moves"].cumsum().astype(int)))
        optima.setdefault(series, []).append(a)
    for j, (series, names) in enumerate(sorted(optima.items(), key=lambda kv: kv[1])):
        x, y = zip(*series)
        ax.step(x, y, where="post", color="black", linewidth=1.0, alpha=0.8,
                linestyle=(0, (1 + 2 * j, 2)), label=f"optimum for {', '.join(map(_name, names))}")
    scale = mine["scale"].dropna()
    ax.set_xlabel(f"rebalance number in history seed {seed} index {index}"
                  + (f" ({scale.iloc[0]})" if len(scale) else ""))
    ax.set_ylabel("partitions moved, cumulative (count)")
    ax.set_title("Cumulative moves over one history (solid) against the optimum (black, dashed)")
    ax.grid(True, alpha=0.3)
    _legend(ax)


def _assign_time(ax: Any, frame: Any, assignors: list[str]) -> None:
    markers = "o^sDv<>p*h"
    for i, a in enumerate(assignors):
        rows = frame[(frame["assignor"] == a) & frame["assign_seconds"].notna() & (frame["subscribed_partitions"] > 0)]
        if len(rows):
            ax.scatter(rows["subscribed_partitions"], rows["assign_seconds"].clip(lower=1e-6) * 1000, s=8,
                       alpha=0.6, color=f"C{i % 10}", marker=markers[(i // 10) % len(markers)], label=_name(a))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("subscribed partitions (count, log scale)")
    ax.set_ylabel("assign time (ms, log scale)")
    ax.set_title("Assign time against group size")
    ax.grid(True, alpha=0.3, which="major")
    _legend(ax)


FIGURES = (
    ("stickiness", "Stickiness per assignor (ECDF)", _stickiness),
    ("cumulative", "Cumulative moves over a history against the optimum", _cumulative),
    ("assign-time", "Assign time against group size", _assign_time),
)


def _figures(frame: Any) -> dict[str, tuple[str, str]]:
    """{figure id: (title, data URI)}, empty when there is no row."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if frame is None or not len(frame):
        return {}
    frame = frame[frame["skipped"].isna()]
    assignors = sorted(frame["assignor"].unique())
    out = {}
    for key, title, draw in FIGURES:
        fig, ax = plt.subplots(figsize=(8.5, 4.2))
        draw(ax, frame, assignors)
        out[key] = (title, _png(fig))
    return out


#: Rows of the worst-rebalances table.
WORST = 15


def _int(value: Any) -> int | None:
    return None if value is None or value != value else int(value)


def _worst_rows(rebalances: Any, n: int = WORST) -> list[dict[str, Any]]:
    """The ``n`` worst graded rebalances: failing ones first, then the most unnecessary moves; ties by
    key, so the table is the same every run. Rows with neither are left out."""
    if rebalances is None or not len(rebalances):
        return []
    frame = rebalances[rebalances["skipped"].isna()]
    frame = frame[(frame["failing"] == True) | (frame["unnecessary"].fillna(0) > 0)]  # noqa: E712
    records = frame.to_dict("records")
    records.sort(key=lambda r: (not bool(r.get("failing")), -(_int(r.get("unnecessary")) or 0), str(r["assignor"]),
                                int(r["seed"]), int(r["index"]), _int(r.get("rebalance")) or 0))
    return records[:n]


def _replay(out: SweepDir, row: dict[str, Any], params: dict[str, Any]) -> str:
    """The command that replays ``row``'s rebalance: its failure file graded (a failing row), else its
    history simulated (the sweep's document, written to ``DIR/histories/`` when no failure did), else
    (a sampled group, or a consumer group's target computation) the group written to ``DIR/worst/``
    and graded."""
    from .rows import ADVERSARIAL, history_document, sample_scenario
    from .store import failure_file_name, history_file_name
    from .triage import replay_command

    seed, index, assignor = int(row["seed"]), int(row["index"]), str(row["assignor"])
    failure = out.failures / failure_file_name(seed, index, _int(row.get("rebalance")), assignor)
    if row.get("failing") and failure.exists():
        return replay_command("grade", failure, assignor)
    from ..model import dump_json, scenario_to_dict

    if row.get("source") == ADVERSARIAL:
        path = out.root / "worst" / failure_file_name(seed, index, 0, assignor)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, dump_json(scenario_to_dict(sample_scenario(seed, index, params.get("space") or ())))
                          + "\n")
        return replay_command("grade", path, assignor)
    if row.get("protocol") == "consumer":  # a consumer group's target computation: its group, graded
        from .consumer_rows import consumer_step_scenario

        rebalance = int(row["rebalance"])
        path = out.root / "worst" / failure_file_name(seed, index, rebalance, assignor)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            scenario = consumer_step_scenario(seed, index, str(row.get("scale")), assignor, rebalance)
            _write_atomic(path, dump_json(scenario_to_dict(scenario)) + "\n")
        return replay_command("grade", path, assignor)
    path = out.histories / history_file_name(seed, index, assignor)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, dump_json(history_document(seed, index, str(row.get("scale")), assignor)) + "\n")
    return replay_command("simulate", path, assignor)


def _worst(out: SweepDir, rebalances: Any, params: dict[str, Any]) -> str:
    rows = []
    for r in _worst_rows(rebalances):
        try:
            command = f"<code>{html.escape(_replay(out, r, params))}</code>"
        except Exception as exc:  # noqa: BLE001 - one row without a replay must not lose the report
            command = f"<span class=muted>no replay: {html.escape(type(exc).__name__)}: {html.escape(str(exc)[:200])}</span>"
        moved, optimum = _int(r.get("moved")), _int(r.get("optimal_moves"))
        failures = r.get("failures") if isinstance(r.get("failures"), str) else ("grading crashed" if r.get("failing")
                                                                                else "")
        rows.append((html.escape(str(r["assignor"])),
                     html.escape(f"seed {int(r['seed'])} index {int(r['index'])}"
                                 + (f" ({r['scale']})" if isinstance(r.get("scale"), str) else "")),
                     str(_int(r.get("rebalance")) if _int(r.get("rebalance")) is not None else "-"),
                     html.escape(str(r.get("event") or "")),
                     _f(_int(r.get("unnecessary"))),
                     f"{_f(moved)} / {_f(optimum)}",
                     html.escape(failures.replace(",", ", ")),
                     command))
    if not rows:
        return "<p class=muted>no failing rebalance and no unnecessary move</p>"
    return ("<div class=box>" + _table(("assignor", "history", "rebalance", "event before it", "unnecessary moves",
                                        "moved / optimum", "failures", "replay"), rows, left=(0, 1, 3, 6, 7),
                                       cls="worst") + "</div>")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (0,), cls: str = "") -> str:
    head = "".join(f"<th{' class=l' if i in left else ''}>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{' class=l' if i in left else ''}>{c}</td>" for i, c in enumerate(r)) + "</tr>"
                   for r in rows)
    return f"<table{f' class={cls}' if cls else ''}><tr>{head}</tr>{body}</table>"


def _protocols(summary: Summary) -> str:
    """The two protocols side by side (``sweep.protocols``): a table and what its figures mean."""
    from .protocols import PROTOCOL_LEGEND, PROTOCOL_TITLES

    if not summary.protocols:
        return ""
    rows = []
    for line in summary.protocols:
        name = (f"<b>{html.escape(PROTOCOL_TITLES[line.protocol])}</b>"
                if line.assignor is None else "&nbsp;&nbsp;" + html.escape(line.assignor))
        values = (str(line.histories), _num(line.converge_ticks, 1), _num(line.unsettled_ticks, 1),
                  _num(line.unowned_ticks, 0), _num(line.moves_over_optimum, 2),
                  f"{line.monitor_failures}" + (f" ({line.monitor_hazards} known hazard)" if line.monitor_hazards else ""))
        rows.append((name, *values))
    headers = ("protocol / assignor", "histories", "ticks to settle per event", "unsettled ticks",
               "unowned partition-ticks", "moves / optimum", "histories with a failed monitor")
    return ("<h2 id=protocols>Protocols side by side</h2>"
            "<p>What migrating from the classic protocol to KIP-848's consumer protocol changes: classic assignors on "
            "classic histories (the classic simulator), server-side assignors on consumer histories (the consumer "
            "protocol's simulator, today's coordinator), and the migration between them: classic groups upgraded online "
            "to the consumer protocol, sometimes downgraded back (the migration simulator, a server-side assignor per "
            "line). Every figure is the median over histories.</p>"
            + f"<div class=box>{_table(headers, rows)}</div>"
            + f"<p class=muted>{html.escape(' '.join(' '.join(PROTOCOL_LEGEND).split()))}</p>")


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


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
    """Write ``DIR/report.html`` and return its path (and, for the worst rebalances, any replay
    document the sweep did not keep: ``_replay``)."""
    figures = _figures(rebalances)
    table = _table(SUMMARY_HEADERS, [tuple(html.escape(c) for c in summary_cells(line)) for line in summary.lines],
                   cls="summary")
    counts = {s: sum(1 for f in findings if f.section == s) for s in SECTIONS}
    verdicts = verdict_lines(summary)
    failed = [line.assignor + ":" for line in summary.overall() if line.failing]
    items = "".join(f"<li{' class=fail' if any(v.startswith(name) for name in failed) else ''}>{html.escape(v)}</li>"
                    for v in verdicts) or "<li>no graded rebalance</li>"
    findings_line = ", ".join(f"<a href='#triage'>{counts[s]} {html.escape(TITLES[s])}</a>" for s in SECTIONS)

    def figure(key: str) -> str:
        if key not in figures:
            return ""
        title, uri = figures[key]
        return f"<h2 id={key}>{html.escape(title)}</h2><img alt='{html.escape(title)}' src='{uri}'>"

    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width, initial-scale=1'><title>stickyproof sweep report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>stickyproof sweep report</h1>",
        "<section id=verdict><h2>Verdict</h2>",
        f"<ul>{items}</ul>",
        f"<p>Findings: {findings_line}. <a href='#worst'>Worst rebalances</a> · <a href='#stickiness'>stickiness</a>"
        " · <a href='#summary'>the table</a> · <a href='#protocols'>protocols side by side</a></p></section>",
        "<h2 id=summary>Summary</h2>",
        f"<div class=box>{table}</div>",
        f"<p class=muted>{html.escape(SUMMARY_NOTE)}</p>",
        "<p>Each line grades one assignor on every rebalance of every history: <em>valid %</em> is the share "
        "where it kept every promise of its own contract (range: per-topic balance; round robin: balance on equal "
        "subscriptions; the sticky family: Kafka's balance), and <em>stickiness</em> is the share of what members "
        "really owned that it kept, against the most an assignment balanced in that same notion could keep (1 is "
        "the best possible, never above). A failure is a broken promise; the sections below say which failures are "
        f"known Kafka hazards ({counts['hazard']}), real Kafka bugs on reachable states ({counts['kafka-bug']}), "
        f"historical incidents ({counts['historical']}) and unexpected ({counts['unexpected']}).</p>",
        _protocols(summary),
        figure("stickiness"),
        "<p class=muted>Read it from the right: the height of a line just left of 1 is the share of rebalances "
        "where the assignor kept less than it could; a line that stays at 0 until 1 is optimal everywhere. "
        "Rebalances where the optimum keeps nothing (every move forced) are left out, as are invalid ones.</p>",
        f"<h2 id=worst>Worst rebalances (at most {WORST})</h2>",
        "<p class=muted>Failing rebalances first, then the most unnecessary moves (partitions an optimal "
        "assignment keeps with their owner and the assignor moved). <em>grade</em> replays the leader's input; "
        "<em>simulate</em> replays the whole history (the rebalance number says which step).</p>",
        _worst(out, rebalances, params),
        figure("cumulative"),
        figure("assign-time"),
        "<h2 id=triage>Triage</h2>",
        _findings(findings, cases),
        f"<h2>Parameters</h2><p>Directory <code>{html.escape(str(out.root))}</code>; "
        f"{summary.rows} graded rebalances, {summary.histories} history runs; "
        f"<code>{html.escape(str(params))}</code>. Every failing row's leader input is in "
        "<code>failures/</code>, every failing history's replay in <code>histories/</code>; the Parquet "
        "columns of <code>grades/</code> are described one by one in docs/columns.md.</p>",
        "</body></html>\n",
    ]
    _write_atomic(out.report_path, "".join(p for p in parts if p))
    return out.report_path
