"""A consumer-group run as text: the verdict line, the monitors, then the trace, rendered with rich
(imported here only), like the classic report (group/report.py) so the two read alike."""

from __future__ import annotations

from ..report import MIN_WIDTH
from ..trace import format_partitions
from .trace import ConsumerResult

__all__ = ["consumer_verdict_line", "render_consumer_report"]


def consumer_verdict_line(result: ConsumerResult) -> str:
    """``all monitors hold; ended: settled at tick 7; coordinator current; assignor uniform``."""
    head = "all monitors hold" if result.ok else f"MONITOR FAILED: {', '.join(result.failed)}"
    policy = f"; migration policy {result.migration_policy}" if result.migration_policy is not None else ""
    return f"{head}; ended: {result.ended} at tick {result.ticks}; coordinator {result.coordinator}; assignor {result.assignor}{policy}"


def render_consumer_report(result: ConsumerResult, *, width: int = 160, notes: bool = True) -> str:
    """The verdict, one row per monitor, then one row per recorded tick: what happened (events, the
    heartbeats' effects, violations), the group and target epochs, and per member the client's view
    (status, epoch, owned) over the coordinator's (state, epoch, assigned, pending revocation)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(width=max(MIN_WIDTH, width), record=True, file=_Null(), color_system=None, highlight=False)
    console.print(consumer_verdict_line(result), overflow="fold")
    verdicts = Table(title="monitors")
    verdicts.add_column("monitor", no_wrap=True)
    verdicts.add_column("verdict", no_wrap=True)
    verdicts.add_column("first violation", overflow="fold")
    verdicts.add_column("ticks failing", justify="right")
    for v in result.verdicts:
        verdicts.add_row(v.monitor, "ok" if v.ok else "FAILED", f"tick {v.first.tick}: {v.first.message}" if v.first else "-",
                         str(v.count))
    console.print(verdicts)
    names = sorted({m.name for s in result.steps for m in s.members})
    table = Table(title=f"consumer group {result.name or ''}".strip(), show_lines=True)
    room = max(MIN_WIDTH, width) - 3 * (3 + len(names)) - 4
    happened_w = max(12, room * 2 // 5)
    member_w = max(8, (room - happened_w - 9) // max(1, len(names)))
    table.add_column("tick", justify="right", no_wrap=True)
    table.add_column("what happened", overflow="fold", min_width=happened_w)
    table.add_column("group", overflow="fold", max_width=9)
    for name in names:
        table.add_column(name, overflow="fold", max_width=member_w)
    for step in result.steps:
        happened = Text()
        for e in step.events:
            happened.append(f"* {e}\n", style="bold")
        if notes:
            for n in step.notes:
                happened.append(f"{n}\n")
        for v in step.violations:
            happened.append(f"VIOLATION {v.monitor}: {v.message}\n", style="bold red")
        happened.rstrip()
        group = f"epoch {step.group.group_epoch}\ntarget {step.group.assignment_epoch}"
        views = {m.name: m for m in step.members}
        cells = []
        for name in names:
            m = views.get(name)
            if m is None:
                cells.append("")
                continue
            cell = f"{m.status.lower()} e{m.epoch} {format_partitions(m.owned)}"
            if m.state is not None:
                cell += f"\n{m.state} e{m.coordinator_epoch} {format_partitions(m.assigned)}"
                if m.pending_revocation:
                    cell += f"\nrevoking {format_partitions(m.pending_revocation)}"
            cells.append(cell)
        table.add_row(str(step.tick), happened, group, *cells)
    console.print(table)
    console.print("each member: the client (status, epoch, owned), then the coordinator's record (state, epoch, assigned)")
    return console.export_text()


class _Null:
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass
