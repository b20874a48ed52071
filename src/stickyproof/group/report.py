"""The monitors' verdict, then the trace as a table, rendered to text with rich (imported here only).

The verdict comes first (one line, then the monitors): a trace runs to hundreds of lines, and the
answer to "did the group misbehave?" must not be below them. The width is the caller's (the CLI
passes the terminal's); the trace's member columns fold within it."""

from __future__ import annotations

from .simulator import SimulationResult
from .trace import format_partitions

__all__ = ["MIN_WIDTH", "render_report", "verdict_line"]

MIN_WIDTH = 60
"""Narrower than this, the trace's columns would fold into one character each: rendered at 60."""

_SHORT_STATE = {
    "STABLE": "stable",
    "UNJOINED": "unjoined",
    "PREPARING_REBALANCE": "joining",
    "COMPLETING_REBALANCE": "syncing",
    "STALLED": "STALLED",
    "STOPPED": "stopped",
}


def verdict_line(result: SimulationResult, assignor_name: str | None = None) -> str:
    """``all monitors hold; ended: settled at tick 23; ...`` or ``MONITOR FAILED: <monitors>; ...``;
    ``assignor_name``: what the assignor's program calls itself (an ``exec:`` hello), if another name."""
    failed = [v.monitor for v in result.verdicts if not v.ok]
    head = "all monitors hold" if result.ok else f"MONITOR FAILED: {', '.join(failed) or 'see the monitors'}"
    switches = ", ".join(sorted(result.without)) or "none"
    return (f"{head}; ended: {result.ended} at tick {result.ticks}; switched off: {switches}"
            f"{'; assignor ' + result.assignor if result.assignor else ''}"
            f"{' (' + assignor_name + ')' if result.assignor and assignor_name else ''}")


def render_report(result: SimulationResult, *, width: int = 160, notes: bool = True,
                  assignor_name: str | None = None) -> str:
    """The verdict line and one row per monitor, then one row per recorded step (what happened, the
    group, and per member: state, generation, owned partitions, with partitions consumed twice in
    red), all within ``width`` columns (at least ``MIN_WIDTH``)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(width=max(MIN_WIDTH, width), record=True, file=_Null(), color_system=None, highlight=False)
    console.print(verdict_line(result, assignor_name), overflow="fold")
    verdicts = Table(title="monitors", show_lines=False)
    verdicts.add_column("monitor", no_wrap=True)
    verdicts.add_column("verdict", no_wrap=True)
    verdicts.add_column("first violation", overflow="fold")
    verdicts.add_column("ticks failing", justify="right")
    for v in result.verdicts:
        verdicts.add_row(
            v.monitor, "ok" if v.ok else "FAILED", f"tick {v.first.tick}: {v.first.message}" if v.first else "-", str(v.count)
        )
    console.print(verdicts)
    names = sorted({m.name for s in result.steps for m in s.members})
    table = Table(title=f"simulation {result.name or ''}".strip(), show_lines=True, expand=False)
    happened_w, group_w, member_w = _widths(console.width, len(names), max((s.tick for s in result.steps), default=0))
    table.add_column("tick", justify="right", no_wrap=True)
    table.add_column("what happened", overflow="fold", min_width=happened_w)
    table.add_column("group", overflow="fold", max_width=group_w)
    for name in names:
        table.add_column(name, overflow="fold", max_width=member_w)
    for step in result.steps:
        doubled = {tp for v in step.violations if v.monitor == "no-double-consumption" for tp in _witness_partition(v)}
        happened = Text()
        for e in step.events:
            happened.append(f"* {e}\n", style="bold")
        if notes:
            for n in step.notes:
                happened.append(f"{n}\n")
        for v in step.violations:
            happened.append(f"VIOLATION {v.monitor}: {v.message}\n", style="bold red")
        g = step.group
        group = f"{g.state}\ngen {g.generation}" + (f"\nleader {g.leader}" if g.leader else "") + (f"\n{g.protocol}" if g.protocol else "")
        cells = []
        views = {m.name: m for m in step.members}
        for name in names:
            m = views.get(name)
            if m is None:
                cells.append("")
                continue
            cell = Text(f"{_SHORT_STATE.get(m.state, m.state)} g{m.generation}\n")
            owned = format_partitions(m.owned)
            style = "bold red" if any(tp in doubled for tp in m.consuming) else None
            cell.append(owned if m.consuming or not m.owned else f"({owned})", style=style)
            cells.append(cell)
        table.add_row(str(step.tick), happened, group, *cells)
    console.print(table)
    console.print("owned partitions in parentheses are believed owned but not being consumed")
    return console.export_text()


def _widths(width: int, members: int, last_tick: int) -> tuple[int, int, int]:
    """Column widths that fit ``width``: what happened at least two fifths of the room, the group
    state up to 19 (``PreparingRebalance``), the members the rest in equal shares (at least 5 each;
    a group of many members in a narrow terminal is cropped on the right). Rich's own shrinking
    stops at each cell's longest word and would crop the last members at 80 columns."""
    columns = 3 + members
    room = width - (columns + 1) - 2 * columns - max(4, len(str(last_tick)))
    happened = max(12, room * 2 // 5)
    group = min(19, max(8, room // 6))
    member = max(5, (room - happened - group) // max(1, members))
    return happened, group, member


def _witness_partition(v):
    from ..model import TopicPartition

    raw = dict(v.witness).get("partition", "")
    topic, _, part = raw.rpartition("-")
    return [TopicPartition(topic, int(part))] if part.isdigit() else []


class _Null:
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass
