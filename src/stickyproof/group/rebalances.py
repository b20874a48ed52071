"""Per-rebalance records: what the leader was handed and what it answered, with where it came from.

Both engines (the tick simulator and the stepper, models/protocol.md §9) record one
``RebalanceRecord`` each time a leader runs its assignor, follow-up rounds included. The record is
built by the simulation itself at the leader's step, so the two engines share the code that makes it
and differ only in how time passes between leader steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from ..assignors.base import COOPERATIVE
from ..model import Scenario, TopicPartition, scenario_to_dict, tp_map_to_dict
from .messages import JoinMetadata

__all__ = ["RebalanceRecord", "Recorder", "prior_ownership", "record_to_dict"]


@dataclass(frozen=True)
class RebalanceRecord:
    """One leader step.

    ``number``: 1, 2, ... in the order leaders ran. ``generation``/``epoch``: the generation the
    leader assigned for (a non-persisted fail-over starts a new coordinator epoch). ``rebalance``:
    the coordinator's sequence number of the rebalance that formed the generation.
    ``event``/``event_tick``: the last history event (a scheduled event, a restarted process starting,
    a stalled process resuming) before that rebalance started: the cause a person would name;
    ``trigger``: the coordinator's own reason for starting it (``c3 joined``, ``c2's session
    expired``); ``follow_up``: it was started by a cooperative member rejoining after it revoked
    partitions (R38), so it completes an earlier rebalance rather than answering an event.
    ``committed``: the coordinator stored the answer; False for a failed leader, and for a leader
    that ran late (it stalled between its JoinGroup answer and its SyncGroup, and the group moved on):
    Kafka's leader runs its assignor then too, so the row is a real input all the same.

    ``scenario``: the leader's input exactly as ``group_scenario`` builds it (None only when the
    leader could not even pick its assignor); ``assignment``/``revoking``: its answer, or ``error``,
    the exception its caller saw. ``prior``: what each member of the generation held when the
    rebalance began, whatever the assignor is told: a cooperative member's owned partitions after its
    join prepare, an eager member's last assignment unless its generation was reset (R37: then it
    knows it lost them). ``assign_seconds`` (the assignor call alone) is left out of comparisons.
    """

    number: int
    tick: int
    epoch: int
    generation: int
    rebalance: int
    leader: str
    event: str
    event_tick: int
    trigger: str
    follow_up: bool
    scenario: Scenario | None
    assignor: str | None
    assignment: Mapping[str, tuple[TopicPartition, ...]] | None
    revoking: Mapping[str, tuple[TopicPartition, ...]]
    error: str | None
    prior: Mapping[str, tuple[TopicPartition, ...]]
    assign_seconds: float = field(default=0.0, compare=False)
    committed: bool = False
    seed: int | None = None  # the history's, when the run was one (stepper.run_history)
    index: int | None = None

    @property
    def cooperative(self) -> bool:
        return self.scenario is not None and self.scenario.protocol == COOPERATIVE

    @property
    def provenance(self) -> dict[str, Any]:
        """Where the row comes from: history seed and index, rebalance number, and its cause."""
        return {"seed": self.seed, "index": self.index, "rebalance": self.number, "event": self.event,
                "event_tick": self.event_tick, "trigger": self.trigger, "follow_up": self.follow_up}


class Recorder:
    """What a simulation keeps to write records (both engines): the last history event, what started
    each rebalance, and, when ``keep``, the records themselves."""

    def __init__(self, keep: bool):
        self.keep = keep
        self.records: list[RebalanceRecord] = []
        self.last_event: tuple[int, str] = (0, "start")
        self.causes: dict[int, tuple[tuple[int, str], str, bool]] = {}  # rebalance seq -> (event, trigger, follow-up)

    def event(self, t: int, what: str) -> None:
        self.last_event = (t, what)

    def rebalance_started(self, seq: int, reason: str, follow_up: bool) -> None:
        self.causes[seq] = (self.last_event, reason, follow_up)

    def leader_ran(self, t: int, coordinator, member, outcome) -> None:
        """``member`` (a ``MemberProcess``, the leader) ran its assignor: ``outcome`` is its ``LeaderOutcome``."""
        if not self.keep:
            return
        seq = next((s for _, g, _, s in reversed(coordinator.formed) if g == member.generation), 0)
        (event_tick, event), trigger, follow_up = self.causes.get(seq, ((0, "start"), "", False))
        self.records.append(
            RebalanceRecord(
                number=len(self.records) + 1,
                tick=t,
                epoch=coordinator.epoch,
                generation=member.generation,
                rebalance=seq,
                leader=member.member_id or member.name,
                event=event,
                event_tick=event_tick,
                trigger=trigger,
                follow_up=follow_up,
                scenario=outcome.scenario,
                assignor=outcome.selected,
                assignment=outcome.assignment,
                revoking=outcome.revoking,
                error=outcome.error,
                prior=prior_ownership(member.leader_members),
                assign_seconds=outcome.assign_seconds,
            )
        )

    def leader_synced(self, committed: bool) -> None:
        if self.keep and committed and self.records:
            self.records[-1] = replace(self.records[-1], committed=True)


def prior_ownership(members: Sequence[tuple[str, JoinMetadata]]) -> dict[str, tuple[TopicPartition, ...]]:
    """Each member's holdings when the rebalance began (see ``RebalanceRecord.prior``)."""
    out = {}
    for member_id, m in members:
        if m.protocol == COOPERATIVE:
            out[member_id] = tuple(m.owned)
        else:
            out[member_id] = tuple(m.memory) if m.generation >= 0 else ()
    return out


def _tps(mapping: Mapping[str, Sequence[TopicPartition]] | None) -> dict[str, Any] | None:
    if mapping is None:
        return None
    return {m: tp_map_to_dict(tps) for m, tps in mapping.items()}


def record_to_dict(r: RebalanceRecord) -> dict[str, Any]:
    """The record as JSON (scenario as a ``stickyproof.scenario/1`` document, partitions as topic -> list)."""
    return {
        "seed": r.seed,
        "index": r.index,
        "number": r.number,
        "tick": r.tick,
        "epoch": r.epoch,
        "generation": r.generation,
        "rebalance": r.rebalance,
        "leader": r.leader,
        "event": r.event,
        "event_tick": r.event_tick,
        "trigger": r.trigger,
        "follow_up": r.follow_up,
        "scenario": None if r.scenario is None else scenario_to_dict(r.scenario),
        "assignor": r.assignor,
        "assignment": _tps(r.assignment),
        "revoking": _tps(r.revoking),
        "error": r.error,
        "committed": r.committed,
        "prior": _tps(r.prior),
        "assign_seconds": r.assign_seconds,
    }
