"""Trace records of a consumer-group simulation: the coordinator's view and each member's at every
recorded tick, and the run's verdicts (docs/consumer-protocol.md, "Trace")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...model import TopicPartition, tp_map_to_dict
from ..config import GroupConfig
from ..trace import MonitorVerdict, MonitorViolation

__all__ = ["CONSUMER_TRACE_FORMAT", "GroupState", "MemberState", "ConsumerStep", "ConsumerResult"]

CONSUMER_TRACE_FORMAT = "stickyproof.consumer-trace/1"


@dataclass(frozen=True)
class GroupState:
    """The coordinator at the end of a step: group epoch, target assignment epoch, member ids, and the
    group's type (``classic`` while a migrating group is a classic group: the epochs are its generation)."""

    group_epoch: int
    assignment_epoch: int
    members: tuple[str, ...]
    group_type: str = "consumer"


@dataclass(frozen=True)
class MemberState:
    """One process at the end of a step: the client's view (status, epoch, owned) and, while the
    coordinator holds its member id, the coordinator's (state, epoch, assigned, pending revocation,
    target)."""

    name: str
    member_id: str
    status: str
    epoch: int
    owned: tuple[TopicPartition, ...]
    state: str | None
    coordinator_epoch: int | None
    assigned: tuple[TopicPartition, ...]
    pending_revocation: tuple[TopicPartition, ...]
    target: tuple[TopicPartition, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "member_id": self.member_id, "status": self.status, "epoch": self.epoch,
            "owned": tp_map_to_dict(self.owned), "state": self.state, "coordinator_epoch": self.coordinator_epoch,
            "assigned": tp_map_to_dict(self.assigned), "pending_revocation": tp_map_to_dict(self.pending_revocation),
            "target": tp_map_to_dict(self.target),
        }


@dataclass(frozen=True)
class ConsumerStep:
    tick: int
    events: tuple[str, ...]
    notes: tuple[str, ...]
    group: GroupState
    members: tuple[MemberState, ...]
    violations: tuple[MonitorViolation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "tick": self.tick, "events": list(self.events), "notes": list(self.notes),
            "group": {"group_epoch": self.group.group_epoch, "assignment_epoch": self.group.assignment_epoch,
                      "members": list(self.group.members),
                      **({"group_type": self.group.group_type} if self.group.group_type != "consumer" else {})},
            "members": [m.to_dict() for m in self.members],
            "violations": [v.to_dict() for v in self.violations],
        }


@dataclass(frozen=True)
class ConsumerResult:
    """A finished run: trace, verdicts, how it ended, and which coordinator and assignor ran."""

    name: str
    steps: tuple[ConsumerStep, ...]
    verdicts: tuple[MonitorVerdict, ...]
    ticks: int
    settled: bool
    ended: str
    config: GroupConfig
    coordinator: str
    assignor: str
    migration_policy: str | None = None  # a migration history's group.consumer.migration.policy

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    def verdict(self, monitor: str) -> MonitorVerdict:
        for v in self.verdicts:
            if v.monitor == monitor:
                return v
        raise KeyError(monitor)

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(v.monitor for v in self.verdicts if not v.ok)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CONSUMER_TRACE_FORMAT,
            "group_protocol": "consumer",
            "name": self.name,
            "ok": self.ok,
            "ticks": self.ticks,
            "settled": self.settled,
            "ended": self.ended,
            "coordinator": self.coordinator,
            "assignor": self.assignor,
            **({"migration_policy": self.migration_policy} if self.migration_policy is not None else {}),
            "config": {f: getattr(self.config, f) for f in self.config.__dataclass_fields__},
            "monitors": [v.to_dict() for v in self.verdicts],
            "steps": [s.to_dict() for s in self.steps],
        }
