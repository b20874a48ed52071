"""The trace as a table and the monitors' verdicts, rendered to text with rich (imported here only)."""

from __future__ import annotations

from .simulator import SimulationResult
from .trace import format_partitions

__all__ = ["render_report"]

_SHORT_STATE = {
    "STABLE": "stable",
    "UNJOINED": "unjoined",
    "PREPARING_REBALANCE": "joining",
    "COMPLETING_REBALANCE": "syncing",
    "STALLED": "STALLED",
    "STOPPED": "stopped",
}


def render_report(result: SimulationResult, *, width: int = 160, notes: bool = True) -> str:
    """One row per recorded step (what happened, the group, and per member: state, generation, owned
    partitions, with partitions consumed twice in red), then one row per monitor."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(width=width, record=True, file=_Null(), color_system=None, highlight=False)
    names = sorted({m.name for s in result.steps for m in s.members})
    table = Table(title=f"simulation {result.name or ''}".strip(), show_lines=True, expand=False)
    table.add_column("tick", justify="right", no_wrap=True)
    table.add_column("what happened", ratio=3, overflow="fold")
    table.add_column("group", no_wrap=True)
    for name in names:
        table.add_column(name, overflow="fold")
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
    switches = ", ".join(sorted(result.without)) or "none"
    console.print(
        f"{'all monitors hold' if result.ok else 'MONITOR FAILED'}; ended: {result.ended} at tick {result.ticks}; "
        f"switched off: {switches}{'; assignor ' + result.assignor if result.assignor else ''}"
    )
    return console.export_text()


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
