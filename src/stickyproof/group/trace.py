"""Trace records: what every member believed at each step, and what happened (models/protocol.md §1, §7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..model import TopicPartition, tp_map_to_dict
from .config import FEATURES, GroupConfig
from .rebalances import RebalanceRecord

__all__ = ["MemberView", "GroupView", "Step", "MonitorViolation", "MonitorVerdict", "SimulationResult", "TRACE_FORMAT", "step_to_dict",
           "format_partitions"]

TRACE_FORMAT = "stickyproof.trace/1"


def format_partitions(tps) -> str:
    """``t-0,1,2 u-3``: partitions grouped by topic, short enough for a table cell."""
    if not tps:
        return "-"
    return " ".join(f"{topic}-{','.join(map(str, parts))}" for topic, parts in tp_map_to_dict(tps).items())


@dataclass(frozen=True)
class MemberView:
    """One process at the end of a step. ``state`` is the member state, or ``STALLED``/``STOPPED``."""

    name: str
    member_id: str | None
    state: str
    generation: int
    protocol: str
    owned: tuple[TopicPartition, ...]
    consuming: tuple[TopicPartition, ...]
    returning: bool = False


@dataclass(frozen=True)
class GroupView:
    """The coordinator at the end of a step."""

    state: str
    generation: int
    epoch: int
    leader: str | None
    protocol: str | None
    members: tuple[str, ...]


@dataclass(frozen=True)
class MonitorViolation:
    monitor: str
    tick: int
    message: str
    witness: tuple[tuple[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"monitor": self.monitor, "tick": self.tick, "message": self.message, "witness": dict(self.witness)}


@dataclass(frozen=True)
class MonitorVerdict:
    """A monitor's result over the whole run: its first violation and how many ticks it failed."""

    monitor: str
    rule: str
    ok: bool
    first: MonitorViolation | None = None
    count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor,
            "rule": self.rule,
            "ok": self.ok,
            "violations": self.count,
            "first": self.first.to_dict() if self.first else None,
        }


@dataclass(frozen=True)
class Step:
    """One recorded tick: the events applied, the protocol messages, and everyone's state after it."""

    tick: int
    events: tuple[str, ...]
    notes: tuple[str, ...]
    group: GroupView
    members: tuple[MemberView, ...]
    violations: tuple[MonitorViolation, ...] = ()


def step_to_dict(step: Step) -> dict[str, Any]:
    return {
        "tick": step.tick,
        "events": list(step.events),
        "notes": list(step.notes),
        "group": {
            "state": step.group.state,
            "generation": step.group.generation,
            "epoch": step.group.epoch,
            "leader": step.group.leader,
            "protocol": step.group.protocol,
            "members": list(step.group.members),
        },
        "members": [
            {
                "name": m.name,
                "member_id": m.member_id,
                "state": m.state,
                "generation": m.generation,
                "protocol": m.protocol,
                "owned": tp_map_to_dict(m.owned),
                "consuming": tp_map_to_dict(m.consuming),
                **({"returning": True} if m.returning else {}),
            }
            for m in step.members
        ],
        "violations": [v.to_dict() for v in step.violations],
    }


@dataclass(frozen=True)
class SimulationResult:
    """A finished run: the trace, the monitors' verdicts, and how it ended."""

    name: str
    steps: tuple[Step, ...]
    verdicts: tuple[MonitorVerdict, ...]
    ticks: int
    settled: bool
    ended: str
    config: GroupConfig
    without: frozenset[str]
    assignor: str | None
    document: Mapping[str, Any]
    rebalances: tuple[RebalanceRecord, ...] = ()  # filled when the run records them (``record_rebalances``)

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    @property
    def violations(self) -> tuple[MonitorViolation, ...]:
        return tuple(v for s in self.steps for v in s.violations)

    def verdict(self, monitor: str) -> MonitorVerdict:
        for v in self.verdicts:
            if v.monitor == monitor:
                return v
        raise KeyError(monitor)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": TRACE_FORMAT,
            "name": self.name,
            "ok": self.ok,
            "ticks": self.ticks,
            "settled": self.settled,
            "ended": self.ended,
            "without": [f for f in FEATURES if f in self.without],
            "assignor": self.assignor,
            "config": {f: getattr(self.config, f) for f in self.config.__dataclass_fields__},
            "monitors": [v.to_dict() for v in self.verdicts],
            "steps": [step_to_dict(s) for s in self.steps],
            "simulation": dict(self.document),
        }
