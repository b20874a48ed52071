"""A consumer-group simulation written as a ``stickyproof.kip848-history/1`` document, so that
proofs/reconciliation/validate.py can check it is a run of the reconciliation model (the other
direction of ``history.py``; docs/consumer-protocol.md, "Simulator runs as histories").

``RecordingSimulation`` is the simulator itself, unchanged, with each request the coordinator acts on
written down as the model's steps: a member's first heartbeat (epoch 0) as ``join``, ``new-target``
and ``heartbeat``; a heartbeat in which the coordinator computed a new target as ``new-target`` then
``heartbeat``; a heartbeat whose response is lost as ``heartbeat`` with ``lost_response``; a leave
(epoch -1) as ``leave``, and its group epoch bump as the ``new-target`` computed at the next heartbeat
(nothing reaches the coordinator in between). A heartbeat lost on its way is no step. After each step
it writes what the simulator holds: group epoch, partition epochs, and per member in the group its
state, epoch, assigned and pending partitions and what its client owns. Between the steps of one
request the simulator has no state of its own, so those steps carry none; after a leave the group
epoch is left out (the simulator has bumped it, the model bumps it at the next ``new-target``).

A group that starts settled (members owning partitions) starts, in the history, with each member
joining, one target (epoch 1) and each member's heartbeat: the state ``establish`` creates.

The model has no static members, topics or subscriptions as such, no timers, and a client that
applies each answer within its heartbeat; and it replaces a fenced member's record when it rejoins,
where today's coordinator keeps it (KAFKA-19233's fix). So a run is refused (``NotAHistory``, saying
why) when it has static members, more than one topic or a partition count that changes, a
slow revocation, a member removed by a timeout, a fenced member, or two group epoch bumps answered
by one target. Subscription changes are kept: to the model they are just another target.
"""

from __future__ import annotations

from typing import Any

from ...errors import StickyproofError
from ...model import Scenario
from .coordinator import FENCED_MEMBER_EPOCH, ConsumerCoordinator, HeartbeatRequest, HeartbeatResponse, Transition
from .events import ConsumerEvent
from .history import HISTORY_FORMAT
from .simulator import ConsumerSimulation, _Process

__all__ = ["NotAHistory", "RecordingSimulation", "history_of_simulation", "MODEL_OF_RELEASE"]

#: The model variant each coordinator release runs (the inverse of ``history.release_for``).
MODEL_OF_RELEASE: dict[str, dict[str, Any]] = {
    "current": {"builder": "today", "bookkeeping": "fixed", "kafka_19449_fix": True},
    "before-kafka-19449": {"builder": "today", "bookkeeping": "fixed", "kafka_19449_fix": False},
    "3.7": {"builder": "2024", "bookkeeping": "kafka-16147", "kafka_19449_fix": False},
}
_REFUSED_EVENTS = {"add-partitions": "the model has a fixed set of partitions",
                   "create-topic": "the model has one topic", "delete-topic": "the model has a fixed set of partitions",
                   "slow-revocation": "the model's replayable client applies each answer within its heartbeat"}


class NotAHistory(StickyproofError):
    """The run does something the reconciliation model does not have (the message says what)."""


class _Coordinator(ConsumerCoordinator):
    """The coordinator, keeping its last answer (the recorder needs to know a fencing even when the
    response is lost on its way to the member)."""

    last: HeartbeatResponse | None = None

    def heartbeat(self, now: int, req: HeartbeatRequest) -> HeartbeatResponse:
        self.last = super().heartbeat(now, req)
        return self.last


class RecordingSimulation(ConsumerSimulation):
    """The simulator, writing each request as the model's steps (module docstring)."""

    def __init__(self, scenario: Scenario, events: Any = (), **kwargs: Any):
        events = list(events)
        for e in events:
            if e.event in _REFUSED_EVENTS:
                raise NotAHistory(f"{e.path}: {e.event}: {_REFUSED_EVENTS[e.event]}")
            if e.instance_id is not None:
                raise NotAHistory(f"{e.path}: static members are not in the model")
        if len(scenario.topics) != 1:
            raise NotAHistory("the model has one topic; the scenario has " + str(len(scenario.topics)))
        if any(m.instance_id is not None for m in scenario.members):
            raise NotAHistory("static members are not in the model")
        self.hevents: list[dict[str, Any]] = []
        self.hstates: list[dict[str, Any]] = []
        self.order: list[str] = []
        self._leaving = False
        self._target_epoch = 0  # the epoch of the last new-target written
        super().__init__(scenario, events, **kwargs)

    # ------------------------------------------------------------------------------------------
    def _make_coordinator(self, assign) -> ConsumerCoordinator:
        def seen(t: Transition) -> None:
            if t.new is None and not self._leaving:
                raise NotAHistory(f"tick {t.tick}: {t.old.member_id} removed by the coordinator's timer: the model "
                                  "has no timers for members that keep heartbeating")
            self.monitors.on_transition(t)

        return _Coordinator(self.release, self.config, assign, lambda: self.cluster, self.notes, seen, self.name)

    def _start(self) -> None:
        super()._start()
        c = self.coordinator
        if not c.members:
            if c.assignment_epoch == 1:  # KAFKA-20268: a new group's empty target of epoch 1, the model's first
                self._write_target(1, None)
            return
        names = sorted(c.members, key=lambda mid: (c.members[mid].order, mid))
        for mid in names:
            self._write({"event": "join", "member": mid}, {})
        self._write_target(1, {})
        for mid in names:
            self._write({"event": "heartbeat", "member": mid}, None if mid == names[-1] else {})

    def _heartbeat(self, p: _Process) -> None:
        c, now = self.coordinator, self.now
        lost = now < p.loss_until
        if lost and p.loss_direction in ("request", "both"):
            super()._heartbeat(p)  # nothing reaches the coordinator: no step
            return
        existed = p.member_id in c.members
        epoch_sent, assignment_epoch = p.epoch, c.assignment_epoch
        super()._heartbeat(p)
        error = c.last.error if c.last is not None else None
        if error == FENCED_MEMBER_EPOCH:
            raise NotAHistory(f"tick {now}: {p.name} was fenced: the model replaces a fenced member's record on "
                              "rejoin, today's coordinator keeps it")
        if error is not None or p.member_id not in c.members:
            raise NotAHistory(f"tick {now}: {p.name}'s heartbeat at epoch {epoch_sent} was refused ({error})")
        if not existed:
            if epoch_sent != 0:
                raise NotAHistory(f"tick {now}: {p.name} entered the group at epoch {epoch_sent}")
            self._write({"event": "join", "member": p.name}, {})
        if c.assignment_epoch != assignment_epoch:
            self._write_target(c.assignment_epoch, {})
        event: dict[str, Any] = {"event": "heartbeat", "member": p.name}
        if lost:
            event["lost_response"] = True
        self._write(event, None)

    def _apply(self, e: ConsumerEvent) -> None:
        if e.event not in ("leave", "restart"):
            super()._apply(e)
            return
        p = self.processes.get(e.member)
        old_id = p.member_id if p is not None else None
        inside = old_id in self.coordinator.members
        self._leaving = True
        try:
            super()._apply(e)
        finally:
            self._leaving = False
        if inside and old_id not in self.coordinator.members:
            state = self._state()
            state.pop("group_epoch")
            self._write({"event": "leave", "member": p.name}, state)

    # ------------------------------------------------------------------------------------------
    def _write_target(self, epoch: int, state: dict[str, Any] | None) -> None:
        if epoch != self._target_epoch + 1:
            raise NotAHistory(f"tick {self.now}: target of epoch {epoch} after the one of epoch {self._target_epoch}: "
                              "two group epoch bumps answered by one target (the model's new target bumps by one)")
        self._target_epoch = epoch
        c = self.coordinator
        by_name = {self._name_of(mid): tps for mid, tps in c.targets.items()}
        self._write({"event": "new-target", "epoch": epoch,
                     "assignment": {n: _names(tps) for n, tps in sorted(by_name.items())}}, state)

    def _write(self, event: dict[str, Any], state: dict[str, Any] | None) -> None:
        event = {"step": len(self.hevents) + 1, **event}
        member = event.get("member")
        if member is not None and member not in self.order:
            self.order.append(member)
        self.hevents.append(event)
        self.hstates.append(self._state() if state is None else state)

    def _name_of(self, member_id: str) -> str:
        for p in self.processes.values():
            if p.member_id == member_id:
                return p.name
        return member_id

    def _state(self) -> dict[str, Any]:
        c = self.coordinator
        (topic,) = self.cluster.values()
        members = {}
        for mid, r in sorted(c.members.items()):
            name = self._name_of(mid)
            p = self.processes.get(name)
            members[name] = {"state": r.state, "epoch": r.epoch, "assigned": _names(r.assigned),
                             "pending_revocation": _names(r.pending_revocation),
                             "holds": _names(p.owned) if p is not None else []}
        return {"group_epoch": c.group_epoch,
                "partition_epochs": {str(tp): c.partition_epoch(tp) for tp in topic.partition_list()},
                "members": members}

    def history(self) -> dict[str, Any]:
        """The run so far as a history document."""
        model = MODEL_OF_RELEASE.get(self.release.name)
        if model is None:
            raise NotAHistory(f"coordinator {self.release.name} runs no variant of the model "
                              f"(known: {', '.join(MODEL_OF_RELEASE)})")
        (topic,) = self.cluster.values()
        for e in self.hevents:  # every member the model must have a slot for, also those named only in targets
            for name in e.get("assignment", {}):
                if name not in self.order:
                    self.order.append(name)
        return {"format": HISTORY_FORMAT, "source": f"stickyproof simulate ({self.name or 'consumer group'})",
                "coordinator": dict(model), "topic": topic.name, "partitions": topic.partitions,
                "members": list(self.order), "events": list(self.hevents), "states": list(self.hstates)}


def history_of_simulation(scenario: Scenario, events: Any = (), **kwargs: Any) -> tuple[dict[str, Any], Any]:
    """Run the simulation and return (its history document, its ``ConsumerResult``)."""
    sim = RecordingSimulation(scenario, events, **kwargs)
    result = sim.run()
    return sim.history(), result


def _names(tps: Any) -> list[str]:
    return sorted(str(tp) for tp in tps)

