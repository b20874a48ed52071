"""``DIR/report.html``: one self-contained page (figures as base64 PNGs) a person opens in a browser.

Sections: the parameters, the summary table, four figures (stickiness distribution per assignor;
stickiness gap against group size; assign and solve time against size; violations by invariant)
and the triage (failures shrunk to minimal scenarios, grouped by signature, each with its replay
command). Plots are drawn with matplotlib's Agg backend from the summary's columns only.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any, Sequence

from .rows import INVARIANTS
from .store import SweepDir, _write_atomic
from .summary import Summary
from .triage import TriageCase

__all__ = ["write_report"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}tr.all td{font-weight:600;background:#fafafa}
code{background:#f4f4f4;padding:1px 4px;border-radius:3px}img{max-width:100%}.muted{color:#777}
"""


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _figures(frame: Any) -> list[tuple[str, str]]:
    """(title, data URI) of every figure; an empty sweep gets none."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if frame is None or not len(frame):
        return []
    out: list[tuple[str, str]] = []
    assignors = sorted(frame["assignor"].unique())
    ok = frame[frame["error"].isna()]

    # Stickiness distribution per assignor.
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(assignors)), 4))
    data = [ok.loc[ok["assignor"] == a, "stickiness"].dropna().to_numpy() for a in assignors]
    if any(len(d) for d in data):
        ax.boxplot([d if len(d) else [float("nan")] for d in data], tick_labels=assignors, showmeans=True, showfliers=False)
    ax.set_ylabel("stickiness (kept / optimal kept)")
    ax.set_title("Stickiness per assignor (box 25-75 %, whiskers 1.5 IQR, triangle = mean, outliers not drawn)")
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    out.append(("Stickiness distribution per assignor", _png(fig)))

    # Stickiness gap against group size.
    fig, ax = plt.subplots(figsize=(7, 4))
    # Against the optimum over the *true* ownership: what full knowledge could have kept. (The
    # view's optimum can be 0 when the wire hid every claim, which would make every gap negative.)
    gap = ok.assign(gap=ok["optimal_kept_global"] - ok["kept"])
    for a in assignors:
        mine = gap[(gap["assignor"] == a) & gap["gap"].notna()]
        if len(mine):
            means = mine.groupby("subscribed_partitions")["gap"].mean()
            ax.plot(means.index, means.to_numpy(), marker="o", ms=3, label=a)
    ax.set_xlabel("subscribed partitions")
    ax.set_ylabel("mean partitions short of the optimum\n(over the true ownership)")
    ax.set_title("Stickiness gap against group size")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    out.append(("Stickiness gap against group size", _png(fig)))

    # Assign and solve time against size.
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for a in assignors:
        mine = frame[frame["assignor"] == a]
        t = mine.groupby("subscribed_partitions")["assign_seconds"].mean().dropna() * 1000
        if len(t):
            left.plot(t.index, t.to_numpy(), marker="o", ms=3, label=a)
        s = mine.groupby("subscribed_partitions")["solve_seconds"].mean().dropna() * 1000
        if len(s):
            right.plot(s.index, s.to_numpy(), marker="o", ms=3, label=a)
    for axis, what in ((left, "assign"), (right, "oracle solve")):
        axis.set_xlabel("subscribed partitions")
        axis.set_ylabel(f"mean {what} time (ms)")
        axis.set_title(f"{what.capitalize()} time against size")
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=8)
    out.append(("Assign and solve time against size", _png(fig)))

    # Violations by invariant.
    fig, ax = plt.subplots(figsize=(9, 4))
    labels = [*INVARIANTS, "error"]
    width = 0.8 / max(1, len(assignors))
    for i, a in enumerate(assignors):
        mine = frame[frame["assignor"] == a]
        counts = [int((mine[name] == True).sum()) for name in INVARIANTS] + [int(mine["error"].notna().sum())]  # noqa: E712
        ax.bar([x + i * width for x in range(len(labels))], counts, width=width, label=a)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(labels))], labels, rotation=30, ha="right")
    ax.set_yscale("symlog")
    ax.set_ylabel("rows")
    ax.set_title("Violations by invariant")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    out.append(("Violations by invariant", _png(fig)))
    return out


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _summary_table(summary: Summary) -> str:
    head = (
        "<tr><th class=l>assignor</th><th class=l>class</th><th>groups</th><th>failing</th><th>errors</th>"
        + "".join(f"<th>{html.escape(n)}</th>" for n in INVARIANTS)
        + "<th>balanced %</th><th>stickiness mean</th><th>stickiness p5</th><th>proven %</th>"
        "<th>moved mean</th><th>assign ms</th><th>assign ms p95</th><th>solve ms</th></tr>"
    )
    body = []
    for line in summary.lines:
        cls = ' class="all"' if line.scenario_class == "all" else ""
        body.append(
            f"<tr{cls}><td class=l>{html.escape(line.assignor)}</td><td class=l>{html.escape(line.scenario_class)}</td>"
            f"<td>{line.groups}</td><td>{line.failing}</td><td>{line.errors}</td>"
            + "".join(f"<td>{line.violations.get(n, 0) or ''}</td>" for n in INVARIANTS)
            + f"<td>{_fmt(line.balanced_pct, 1)}</td><td>{_fmt(line.stickiness_mean, 3)}</td>"
            f"<td>{_fmt(line.stickiness_p5, 3)}</td><td>{_fmt(line.proven_pct, 1)}</td><td>{_fmt(line.moved_mean)}</td>"
            f"<td>{_fmt(line.assign_ms_mean)}</td><td>{_fmt(line.assign_ms_p95)}</td><td>{_fmt(line.solve_ms_mean)}</td></tr>"
        )
    return f"<table>{head}{''.join(body)}</table>"


def _triage_table(cases: Sequence[TriageCase]) -> str:
    if not cases:
        return "<p>No failing rows.</p>"
    head = (
        "<tr><th class=l>assignor</th><th class=l>failure</th><th class=l>class</th><th>rows</th>"
        "<th class=l>example (seed, index)</th><th>size before</th><th>size after</th><th class=l>replay</th></tr>"
    )
    body = []
    for c in cases:
        size = lambda s: f"{s[0]}m {s[1]}t {s[2]}p"  # noqa: E731 - members, topics, partitions
        note = f' <span class="muted">({html.escape(c.note)})</span>' if c.note else ""
        replay = f"<code>{html.escape(c.command)}</code>" if c.command else ""
        body.append(
            f"<tr><td class=l>{html.escape(c.signature.assignor)}</td><td class=l>{html.escape(c.signature.failure)}</td>"
            f"<td class=l>{html.escape(c.signature.scenario_class)}</td><td>{c.rows}</td>"
            f"<td class=l>{c.example[0]}, {c.example[1]}</td><td>{size(c.original_size)}</td><td>{size(c.shrunk_size)}</td>"
            f"<td class=l>{replay}{note}</td></tr>"
        )
    return f"<table>{head}{''.join(body)}</table>"


def write_report(out: SweepDir, summary: Summary, frame: Any, cases: Sequence[TriageCase], params: dict[str, Any]) -> Path:
    """Write ``DIR/report.html`` and return its path."""
    figures = _figures(frame)
    parts = [
        "<!doctype html><html><head><meta charset=utf-8><title>stickyproof sweep report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>stickyproof sweep report</h1>",
        f"<p>Directory <code>{html.escape(str(out.root))}</code>: {summary.rows} graded rows "
        f"(scenario x assignor). Parameters: <code>{html.escape(str(params))}</code>.</p>",
        "<p>An invariant column counts rows where the grader found that invariant violated. "
        "<em>balanced %</em> is Kafka's balance notion; <em>stickiness</em> is kept / optimal kept, where "
        "the optimum is the oracle's (proven when <em>proven %</em> says so). Times are per row.</p>",
        "<h2>Summary</h2>",
        _summary_table(summary),
    ]
    for title, uri in figures:
        parts.append(f"<h2>{html.escape(title)}</h2><img alt='{html.escape(title)}' src='{uri}'>")
    parts.append("<h2>Triage</h2>")
    parts.append(
        "<p>Failing rows grouped by signature (assignor, failure, scenario class); the smallest case of each "
        "signature shrunk by delta debugging (the hunt's shrinker) while the same signature still fails. The files listed "
        "under <code>failures/</code> hold every failing row's full scenario.</p>"
    )
    parts.append(_triage_table(cases))
    parts.append("</body></html>\n")
    _write_atomic(out.report_path, "".join(parts))
    return out.report_path
