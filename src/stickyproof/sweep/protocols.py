"""The two group protocols side by side: what a user deciding to migrate from the classic protocol to
KIP-848's consumer protocol wants to see, from the history rows of a sweep (docs/sweep.md,
"Protocols side by side").

Classic assignors live the classic histories (the classic simulator); the server-side assignors
(``uniform``, ``consumer-range``, ...) live the consumer histories through the consumer-protocol
simulator. One line per protocol (its assignors pooled), then one per assignor under it, each the
MEDIAN OVER HISTORIES of a history's figure, so one large history weighs as much as a small one:

- ``ticks/event``: the history's median ticks (heartbeat intervals) from an event to a settled group
  (``converge_ticks_median``);
- ``unsettled``: ticks that ended unsettled (``unsettled_ticks``);
- ``unowned``: partition-ticks no member owned (``unowned_ticks``);
- ``moves/opt``: partitions the graded targets moved over the optimum's moves (``moved_known /
  optimal_moves_known``, histories whose optimum moves nothing left out);
- ``monitors``: histories in which a protocol monitor failed, and how many of them a known Kafka
  hazard explains.

The two protocols live different histories (the classic draw has stalls, upgrades and fail-overs
the consumer draw has not; the consumer draw spaces its events so each settles on its own), so the
figures compare what each protocol costs on its own kind of life, not the same life twice.

A third line, ``migration``, is the switch itself: drawn classic groups upgraded online to the
consumer protocol and sometimes downgraded back (``sweep.migration_rows``, rows with ``migration``
true), one line per server-side assignor under it; ``moves/opt`` is unmeasured there (no graded
targets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .columns import MONITORS, monitor_column

__all__ = ["CLASSIC", "CONSUMER", "MIGRATION", "PROTOCOL_TITLES", "ProtocolLine", "protocol_lines", "protocol_text",
           "PROTOCOL_LEGEND"]

CLASSIC = "classic"
CONSUMER = "consumer"
MIGRATION = "migration"

#: The pooled line's name per protocol, in the block's order.
PROTOCOL_TITLES = {CLASSIC: "classic protocol", CONSUMER: "consumer protocol (KIP-848)",
                   MIGRATION: "migration classic -> consumer"}

#: What the console says under the block (each line at most 120 columns).
PROTOCOL_LEGEND = (
    "median over histories: ticks/event = heartbeats from an event to a settled group; unsettled = ticks not settled;",
    "  unowned = partition-ticks no member owned; moves/opt = partitions moved over the optimum's moves; monitors:",
    "  histories where a protocol monitor failed (known Kafka hazards among them). Each protocol lives its own histories;",
    "  migration: classic groups upgraded online to the consumer protocol (sometimes downgraded back).",
)


@dataclass(frozen=True)
class ProtocolLine:
    """One protocol (``assignor`` None: its assignors pooled) or one assignor under it."""

    protocol: str
    assignor: str | None
    histories: int
    converge_ticks: float | None
    unsettled_ticks: float | None
    unowned_ticks: float | None
    moves_over_optimum: float | None
    monitor_failures: int
    monitor_hazards: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _median(values: Any) -> float | None:
    known = [float(v) for v in values if v is not None and v == v]
    if not known:
        return None
    known.sort()
    mid = len(known) // 2
    return round(known[mid] if len(known) % 2 else (known[mid - 1] + known[mid]) / 2, 4)


def _protocol_of(row: dict[str, Any]) -> str:
    if row.get("migration") == True:  # noqa: E712 - numpy's bool too
        return MIGRATION
    return CONSUMER if row.get("protocol") == CONSUMER else CLASSIC


def _failed(row: dict[str, Any]) -> tuple[bool, bool]:
    """(a monitor failed, every failure a known hazard) of one history row."""
    if _protocol_of(row) in (CONSUMER, MIGRATION):
        failed = isinstance(row.get("monitors_failed"), str) and bool(row["monitors_failed"])
        return failed, failed and not row.get("monitor_unexpected")
    return any(row.get(monitor_column(m)) is False for m in MONITORS), False


def _line(protocol: str, assignor: str | None, rows: list[dict[str, Any]]) -> ProtocolLine:
    ratios = [r["moved_known"] / r["optimal_moves_known"] for r in rows
              if r.get("optimal_moves_known") and r.get("moved_known") is not None and r["optimal_moves_known"] > 0]
    failed = [_failed(r) for r in rows]
    return ProtocolLine(
        protocol=protocol, assignor=assignor, histories=len(rows),
        converge_ticks=_median(r.get("converge_ticks_median") for r in rows),
        unsettled_ticks=_median(r.get("unsettled_ticks") for r in rows),
        unowned_ticks=_median(r.get("unowned_ticks") for r in rows),
        moves_over_optimum=_median(ratios),
        monitor_failures=sum(1 for f, _ in failed if f),
        monitor_hazards=sum(1 for f, h in failed if f and h),
    )


def protocol_lines(histories: Any) -> tuple[ProtocolLine, ...]:
    """The block from the history rows (a DataFrame of ``summary.HISTORY_FRAME``): per protocol present,
    classic first, then consumer, then migration, each its pooled line then one per assignor; rows of
    a crashed run left out."""
    if histories is None or len(histories) == 0:
        return ()
    records = [{k: (None if v is None or v != v else v) for k, v in r.items()} for r in histories.to_dict("records")]
    records = [r for r in records if not r.get("error")]
    out: list[ProtocolLine] = []
    for protocol in PROTOCOL_TITLES:
        mine = [r for r in records if _protocol_of(r) == protocol]
        if not mine:
            continue
        out.append(_line(protocol, None, mine))
        for assignor in sorted({str(r["assignor"]) for r in mine}):
            out.append(_line(protocol, assignor, [r for r in mine if str(r["assignor"]) == assignor]))
    return tuple(out)


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


_HEADS = (("histories", 10), ("ticks/event", 12), ("unsettled", 10), ("unowned", 10), ("moves/opt", 10), ("monitors", 15))


def protocol_text(lines: tuple[ProtocolLine, ...]) -> list[str]:
    """The block as plain text, at most 120 columns: a title, a header, the lines, the legend."""
    if not lines:
        return []
    first = min(40, max([30] + [len(line.assignor or "") + 3 for line in lines]))
    out = ["protocols side by side: classic assignors on classic histories, server-side ones on KIP-848 histories"
           + (" and migrations" if any(line.protocol == MIGRATION for line in lines) else ""),
           "protocol / assignor".ljust(first) + "".join(h.rjust(w) for h, w in _HEADS)]
    for line in lines:
        if line.assignor is None:
            name = PROTOCOL_TITLES[line.protocol]
        else:
            name = "  " + line.assignor
        name = name if len(name) < first else name[: first - 2] + "…"
        monitors = f"{line.monitor_failures}" + (f" ({line.monitor_hazards} hazard)" if line.monitor_hazards else "")
        cells = (str(line.histories), _f(line.converge_ticks), _f(line.unsettled_ticks), _f(line.unowned_ticks, 0),
                 _f(line.moves_over_optimum, 2), monitors)
        out.append(name.ljust(first) + "".join(c.rjust(w) for c, (_, w) in zip(cells, _HEADS)))
    out.extend(PROTOCOL_LEGEND)
    return out
