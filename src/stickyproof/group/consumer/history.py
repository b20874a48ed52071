"""A ``stickyproof.kip848-history/1`` document (proofs/README.md, "The KAFKA-16147 history") replayed
on the KIP-848 coordinator, with the simulator's monitors (docs/consumer-protocol.md, "Replaying a
proof's history").

The history is a run of the reconciliation model: ``join``, ``new-target`` (an exact target),
``heartbeat`` (maybe with a lost response) and ``leave`` events, and the states after each. The
replay drives ``ConsumerCoordinator`` request by request in the history's order, with a scripted
assignor that answers the history's targets, and a client per member that applies each answer at
once (the model's atomic client). One tick is one history step, so a violation names the step.

Kafka does in one request what the model takes in several steps, so the translation groups them:

* ``join m``, ``new-target``, ``heartbeat m``: one ConsumerGroupHeartbeat at epoch 0. The new member
  bumps the group epoch, the coordinator computes the target (the history's) and reconciles the
  member in the same request. The request is recorded at the step of the ``heartbeat``.
* ``leave m``, ``new-target``: m's heartbeat with epoch -1, which bumps the group epoch; the target
  (the history's) is computed at the next heartbeat. Recorded at the step of the ``new-target``.
* ``new-target`` alone: a group epoch bump without a membership change (to Kafka, a change of the
  subscription metadata; ``ConsumerCoordinator.bump_group_epoch``).
* ``heartbeat m``: m's heartbeat at the epoch its client holds, reporting what it holds.

Any other arrangement (a join whose member is not reconciled in the same request, a leave with no
new target) is not something Kafka's coordinator does, and is refused naming the event. After each
request the simulator's state is compared with the history's state after the request's last step:
group epoch, partition epochs, and per member its state, epoch, assigned and pending partitions and
what its client holds. The coordinator release is the one the history names (``release_for``) unless
the caller chooses another (``--coordinator``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from ...errors import InvalidScenario
from ...model import Assignment, Scenario, Topic, TopicPartition
from ..config import GroupConfig
from .coordinator import ConsumerCoordinator, HeartbeatRequest
from .monitors import ConsumerMonitors
from .reconcile import LEAVE_EPOCH
from .releases import CoordinatorRelease, coordinator_release
from .trace import ConsumerResult, ConsumerStep, GroupState, MemberState

__all__ = ["HISTORY_FORMAT", "HistoryReplay", "is_history_document", "history_of", "release_for", "replay_history"]

HISTORY_FORMAT = "stickyproof.kip848-history/1"
PROVE_FORMAT = "stickyproof.prove/1"
_KINDS = ("join", "new-target", "heartbeat", "leave")
#: Not judged on a history (it needs heartbeats after the last disturbance, and a history ends where
#: its run ends): left out of the verdicts rather than reported as held.
_UNJUDGED = ("convergence",)


@dataclass(frozen=True)
class HistoryReplay:
    """The replay of one history: the simulator's result (ticks are history steps), the release run,
    what the history expects (``expect``), the first step at which the expected monitor failed in the
    simulator (None: it held), and the state differences from the history (``mismatches``)."""

    result: ConsumerResult
    release: str
    mapping: str
    expect: Mapping[str, Any]
    failed_at: int | None
    failed_on: tuple[str, tuple[str, ...]] | None
    mismatches: tuple[str, ...]

    @property
    def reproduced(self) -> bool:
        """The expected monitor failed at the expected step, on the expected partition and members."""
        e = self.expect
        return (self.failed_at is not None and self.failed_at == e.get("after_step")
                and self.failed_on == (e.get("partition"), tuple(e.get("members", ()))))

    def to_dict(self) -> dict[str, Any]:
        return {"release": self.release, "mapping": self.mapping, "expect": dict(self.expect),
                "failed_at": self.failed_at,
                "failed_on": {"partition": self.failed_on[0], "members": list(self.failed_on[1])} if self.failed_on else None,
                "reproduced": self.reproduced, "mismatches": list(self.mismatches)}

    def summary(self) -> str:
        e = self.expect
        what = f"{e.get('monitor')} on {e.get('partition')} ({', '.join(e.get('members', ()))}) after step {e.get('after_step')}"
        if self.failed_at is None:
            got = f"{e.get('monitor')} held on every step"
        else:
            got = f"{e.get('monitor')} failed after step {self.failed_at} on {self.failed_on[0]} ({', '.join(self.failed_on[1])})"
        states = "states agree with the history" if not self.mismatches else f"{len(self.mismatches)} state differences"
        return f"history replay on coordinator {self.release} ({self.mapping}): expected {what}; {got}; {states}"


def is_history_document(doc: Any) -> bool:
    """A history, or ``stickyproof prove --json`` output one of whose statements carries one."""
    if not isinstance(doc, Mapping):
        return False
    if doc.get("format") == HISTORY_FORMAT:
        return True
    return doc.get("format") == PROVE_FORMAT and any(
        isinstance(s, Mapping) and isinstance(s.get("detail"), Mapping) and isinstance(s["detail"].get("history"), Mapping)
        for s in doc.get("statements", ()))


def history_of(doc: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The history a document holds and its JSON path (a prove output: its first statement's)."""
    if doc.get("format") == HISTORY_FORMAT:
        return dict(doc), ""
    for i, s in enumerate(doc.get("statements", ())):
        if isinstance(s, Mapping) and isinstance(s.get("detail"), Mapping) and isinstance(s["detail"].get("history"), Mapping):
            return dict(s["detail"]["history"]), f"statements[{i}].detail.history."
    raise InvalidScenario("statements", "no statement carries a detail.history")


def release_for(coordinator: Any, path: str = "coordinator") -> tuple[CoordinatorRelease, str]:
    """The coordinator release that runs the model variant a history names, and how it was chosen.

    ``2024`` + ``kafka-16147``: ``3.7`` (the early-access builder, partition epochs set by set).
    ``today`` + ``fixed``: ``current`` with KAFKA-19449's fix, else ``before-kafka-19449`` (which also
    lacks KAFKA-19233's fix; the model replaces a fenced member's record on rejoin instead).
    ``2024`` + ``fixed`` and ``today`` + ``kafka-16147`` were never released (PR #15212 and KAFKA-16249
    both reached users in 3.8): the nearest release with its bookkeeping switched, named as such."""
    if not isinstance(coordinator, Mapping):
        raise InvalidScenario(path, "expected an object with builder and bookkeeping")
    builder, books = coordinator.get("builder"), coordinator.get("bookkeeping")
    fix = bool(coordinator.get("kafka_19449_fix", False))
    if builder not in ("today", "2024"):
        raise InvalidScenario(f"{path}.builder", f"expected today or 2024, got {builder!r}")
    if books not in ("fixed", "kafka-16147"):
        raise InvalidScenario(f"{path}.bookkeeping", f"expected fixed or kafka-16147, got {books!r}")
    if builder == "2024":
        base = coordinator_release("3.7", path)
        if books == "kafka-16147":
            return base, "builder 2024 with the bookkeeping before PR #15212 = release 3.7"
        return (replace(base, name="3.7+pr-15212", kafka_16147_fixed=True),
                "builder 2024 with PR #15212's bookkeeping: 3.7 with that fix (never released)")
    base = coordinator_release("current" if fix else "before-kafka-19449", path)
    if books == "fixed":
        return base, f"today's builder {'with' if fix else 'without'} KAFKA-19449's fix = release {base.name}"
    return (replace(base, name=f"{base.name}-without-pr-15212", kafka_16147_fixed=False),
            f"today's builder with the bookkeeping before PR #15212: {base.name} without that fix (never released)")


class _Replay:
    """The driver: the coordinator, the monitors, a scripted assignor and the members' clients."""

    def __init__(self, history: Mapping[str, Any], release: CoordinatorRelease, path: str):
        self.path = path
        self.topic = history.get("topic", "t")
        count = history.get("partitions")
        if not isinstance(count, int) or count < 1:
            raise InvalidScenario(f"{path}partitions", f"expected a positive integer, got {count!r}")
        self.parts = [TopicPartition(self.topic, p) for p in range(count)]
        self.names = {str(tp): tp for tp in self.parts}
        members = history.get("members")
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise InvalidScenario(f"{path}members", "expected a list of member names")
        self.members = list(members)
        self.cluster = {self.topic: Topic(self.topic, count)}
        self.notes: list[str] = []
        self.monitors = ConsumerMonitors()
        self.scripted: dict[str, frozenset[TopicPartition]] = {}
        self.coordinator = ConsumerCoordinator(release, GroupConfig(), self._assign, lambda: self.cluster, self.notes,
                                               self.monitors.on_transition, "history")
        self.epoch: dict[str, int] = {m: 0 for m in members}
        self.owned: dict[str, frozenset[TopicPartition]] = {m: frozenset() for m in members}
        self.inside: dict[str, bool] = {m: False for m in members}
        self.steps: list[ConsumerStep] = []
        self.mismatches: list[str] = []

    def _assign(self, scenario: Scenario) -> Assignment:
        """The scripted assignor: the history's target, for the members of the group."""
        return Assignment({m.id: tuple(sorted(self.scripted.get(m.id, ()))) for m in scenario.members})

    def _target(self, event: Mapping[str, Any], where: str) -> None:
        assignment = event.get("assignment")
        if not isinstance(assignment, Mapping):
            raise InvalidScenario(f"{where}.assignment", "expected an object of member -> partitions")
        scripted = {}
        for m, parts in assignment.items():
            bad = [p for p in parts if p not in self.names]
            if bad:
                raise InvalidScenario(f"{where}.assignment.{m}", f"unknown partition {bad[0]!r}")
            scripted[m] = frozenset(self.names[p] for p in parts)
        self.scripted = scripted

    def _member(self, event: Mapping[str, Any], where: str) -> str:
        m = event.get("member")
        if m not in self.epoch:
            raise InvalidScenario(f"{where}.member", f"{m!r} is not one of the history's members")
        return m

    def _heartbeat(self, now: int, m: str, epoch: int, owned: frozenset[TopicPartition], lost: bool = False) -> None:
        req = HeartbeatRequest(m, epoch, None, None, (self.topic,), owned)
        before = self.coordinator.members.get(m)
        resp = self.coordinator.heartbeat(now, req)
        self.monitors.on_heartbeat(now, req, before, resp)
        if lost:
            self.notes.append(f"{m}: response (epoch {resp.epoch}{', ' + resp.error if resp.error else ''}) lost")
            return
        if resp.error is not None:
            self.notes.append(f"{m} (epoch {epoch}): {resp.error}: {resp.message}")
            self.epoch[m], self.owned[m], self.inside[m] = 0, frozenset(), False
            return
        self.epoch[m], self.inside[m] = resp.epoch, True
        self.owned[m] = resp.assignment if resp.assignment is not None else self.owned[m]
        self.notes.append(f"{m} <- epoch {resp.epoch}, holds {_fmt(self.owned[m])}")

    def run(self, events: list[Any], states: list[Any]) -> None:
        k = 0
        while k < len(events):
            where = f"{self.path}events[{k}]"
            e = events[k]
            kind = e.get("event") if isinstance(e, Mapping) else None
            if kind not in _KINDS:
                raise InvalidScenario(f"{where}.event", f"expected one of {', '.join(_KINDS)}, got {kind!r}")
            self.notes.clear()
            now = k + 1
            if kind == "join":
                m = self._member(e, where)
                nxt, hb = _at(events, k + 1), _at(events, k + 2)
                if nxt.get("event") != "new-target" or hb.get("event") != "heartbeat" or hb.get("member") != m:
                    raise InvalidScenario(where, f"a join must be followed by its new-target and {m}'s heartbeat "
                                                 "(Kafka bumps the epoch, computes the target and reconciles the member "
                                                 "in the join request)")
                self._target(nxt, f"{self.path}events[{k + 1}]")
                self._heartbeat(k + 3, m, 0, frozenset(), bool(hb.get("lost_response")))
                self._check_epoch(nxt, k + 2)
                used, now = 3, k + 3
            elif kind == "leave":
                m = self._member(e, where)
                nxt = _at(events, k + 1)
                if nxt.get("event") != "new-target":
                    raise InvalidScenario(where, "a leave must be followed by a new-target (Kafka bumps the group epoch "
                                                 "when a member leaves)")
                self._target(nxt, f"{self.path}events[{k + 1}]")
                self.coordinator.heartbeat(k + 2, HeartbeatRequest(m, LEAVE_EPOCH, None, None, (self.topic,), frozenset()))
                self.epoch[m], self.owned[m], self.inside[m] = 0, frozenset(), False
                self._check_epoch(nxt, k + 2)
                used, now = 2, k + 2
            elif kind == "new-target":
                c = self.coordinator
                # KAFKA-20268: a new group's empty target of epoch 1 is where the coordinator starts
                if not (not c.members and not e.get("assignment") and e.get("epoch") == c.group_epoch == c.assignment_epoch):
                    self._target(e, where)
                    c.bump_group_epoch(now, "the history's new target")
                self._check_epoch(e, now)
                used = 1
            else:
                m = self._member(e, where)
                self._heartbeat(now, m, self.epoch[m], self.owned[m], bool(e.get("lost_response")))
                used = 1
            described = [_describe(_at(events, i)) for i in range(k, k + used)]
            self._end_step(now, described, states[now - 1] if now - 1 < len(states) else None)
            k += used

    def _check_epoch(self, event: Mapping[str, Any], step: int) -> None:
        if event.get("epoch") is not None and event["epoch"] != self.coordinator.group_epoch:
            self.mismatches.append(f"step {step}: new-target epoch: history {event['epoch']}, "
                                   f"simulator {self.coordinator.group_epoch}")

    def _end_step(self, now: int, described: list[str], after: Any) -> None:
        owning = {m: self.owned[m] for m in self.members if self.inside[m] and self.owned[m]}
        self.monitors.on_tick_end(now, owning, None, now)
        violations = tuple(self.monitors.pending)
        self.monitors.pending.clear()
        c = self.coordinator
        group = GroupState(c.group_epoch, c.assignment_epoch, tuple(sorted(c.members)))
        states = []
        for m in sorted(self.members):
            r = c.members.get(m)
            states.append(MemberState(m, m, "MEMBER" if self.inside[m] else "OUT", self.epoch[m], tuple(sorted(self.owned[m])),
                                      r.state if r else None, r.epoch if r else None, tuple(sorted(r.assigned)) if r else (),
                                      tuple(sorted(r.pending_revocation)) if r else (), tuple(sorted(c.targets.get(m, ())))))
        self.steps.append(ConsumerStep(now, tuple(described), tuple(self.notes), group, tuple(states), violations))
        if isinstance(after, Mapping):
            self.mismatches.extend(f"step {now}: {d}" for d in self._compare(after))

    def _compare(self, after: Mapping[str, Any]) -> list[str]:
        """The history's state after a request against the simulator's (the fields the history gives)."""
        c = self.coordinator
        out = []
        if "group_epoch" in after and after["group_epoch"] != c.group_epoch:
            out.append(f"group_epoch: history {after['group_epoch']}, simulator {c.group_epoch}")
        for name, want in (after.get("partition_epochs") or {}).items():
            got = c.partition_epoch(self.names[name]) if name in self.names else None
            if want != got:
                out.append(f"partition_epochs[{name}]: history {want}, simulator {got}")
        members = after.get("members")
        if not isinstance(members, Mapping):
            return out
        for m in self.members:
            r = c.members.get(m)
            if (m in members) != (r is not None):
                out.append(f"{m}: {'in' if m in members else 'not in'} the group in the history, "
                           f"{'in' if r is not None else 'not in'} the simulator")
                continue
            if r is None:
                continue
            view = {"state": r.state, "epoch": r.epoch, "assigned": _names(r.assigned),
                    "pending_revocation": _names(r.pending_revocation), "holds": _names(self.owned[m])}
            for key, value in view.items():
                got = members[m].get(key)
                if key in members[m] and (sorted(got) if isinstance(value, list) else got) != value:
                    out.append(f"{m}.{key}: history {got}, simulator {value}")
        return out


def replay_history(doc: Mapping[str, Any], coordinator: str | CoordinatorRelease | None = None) -> HistoryReplay:
    """Replay the history ``doc`` holds (a history or a prove output) on the release it names, or on
    ``coordinator`` (a release name, as ``--coordinator`` gives it, or a record)."""
    history, path = history_of(doc)
    if coordinator is None:
        release, mapping = release_for(history.get("coordinator"), f"{path}coordinator")
    elif isinstance(coordinator, CoordinatorRelease):
        release, mapping = coordinator, "chosen by the caller"
    else:
        release, mapping = coordinator_release(coordinator, "--coordinator"), "chosen with --coordinator"
    events, states = history.get("events"), history.get("states", [])
    if not isinstance(events, list) or not events:
        raise InvalidScenario(f"{path}events", "expected a non-empty list of events")
    if not isinstance(states, list):
        raise InvalidScenario(f"{path}states", "expected a list of states")
    replay = _Replay(history, release, path)
    replay.run(events, states)
    verdicts = tuple(v for v in replay.monitors.results() if v.monitor not in _UNJUDGED)
    scenario_name = str(history.get("source", "history"))
    result = ConsumerResult(scenario_name, tuple(replay.steps), verdicts, len(events), False, "end of history",
                            GroupConfig(), release.name, "scripted (the history's targets)")
    expect = history.get("expect") if isinstance(history.get("expect"), Mapping) else {}
    monitor = expect.get("monitor", "no-double-ownership")
    failed_at, failed_on = None, None
    for step in replay.steps:
        hit = [v for v in step.violations if v.monitor == monitor]
        if hit:
            w = dict(hit[0].witness)
            failed_at = step.tick
            failed_on = (w.get("partition"), tuple(w.get("members", ()))) if "partition" in w else None
            break
    return HistoryReplay(result, release.name, mapping, expect, failed_at, failed_on, tuple(replay.mismatches))


def _at(events: list[Any], i: int) -> Mapping[str, Any]:
    e = events[i] if i < len(events) else {}
    return e if isinstance(e, Mapping) else {}


def _describe(e: Mapping[str, Any]) -> str:
    kind = e.get("event")
    if kind == "new-target":
        parts = "; ".join(f"{m}: {', '.join(p) or '-'}" for m, p in sorted((e.get("assignment") or {}).items()))
        return f"step {e.get('step')}: new-target epoch {e.get('epoch')} ({parts})"
    lost = " (response lost)" if e.get("lost_response") else ""
    return f"step {e.get('step')}: {kind} {e.get('member')}{lost}"


def _names(tps) -> list[str]:
    return sorted(str(tp) for tp in tps)


def _fmt(tps) -> str:
    return ", ".join(_names(tps)) or "nothing"

