"""The consumer protocol's monitors (docs/consumer-protocol.md, "Monitors").

Each monitor restates its rule from what it observes (record transitions, heartbeats and their
answers, what members own at the end of a tick), without calling the reconciliation code it checks:
a rule read off the same code would let a bug grade itself. A violation is reported once per
distinct witness while it lasts and counted every tick it stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ...model import TopicPartition
from ..trace import MonitorVerdict, MonitorViolation, format_partitions
from .coordinator import FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, HeartbeatRequest, HeartbeatResponse, Transition
from .reconcile import STATIC_LEAVE_EPOCH, UNRELEASED_PARTITIONS, MemberRecord

__all__ = ["CONSUMER_MONITORS", "CONVERGENCE_BOUND", "ConsumerMonitors"]

#: Heartbeat rounds after the last disturbance by which every member must be settled. A target
#: computed in tick T reaches a member that must revoke at its heartbeat in T+1 at the latest; it
#: acknowledges in T+2, which releases the partitions; a member that heartbeated before it in T+2
#: found them unreleased and takes them in T+3. Nothing else waits: a released partition waits for
#: no third member, and a member reconciles every heartbeat.
CONVERGENCE_BOUND = 3

CONSUMER_MONITORS: dict[str, str] = {
    "no-double-ownership": "no partition is owned by two running members at the end of a tick (partitions a member "
                           "still owns while revoking count; a stalled process fetches nothing)",
    "member-epochs-increase": "the coordinator never lowers a member's epoch while the member stays in the group "
                              "(a static member's leave, epoch -2, ends its stay)",
    "revoke-before-epoch": "a member's epoch moves past the epoch in which it had partitions pending revocation only "
                           "on a heartbeat that no longer lists them",
    "assign-only-released": "the coordinator adds a partition to a member's assignment only when no other member's "
                            "record holds it (assigned or pending revocation): its partition epoch is cleared",
    "unreleased-only-when-held": "a member waits in UNRELEASED_PARTITIONS only for a partition of its target that "
                                 "another member's record still holds",
    "convergence": f"within {CONVERGENCE_BOUND} heartbeats after the last disturbance every member is STABLE at the "
                   "group epoch and owns exactly its assignment",
    "rejoin-accepted": "a heartbeat with member epoch 0 (a join, or a fenced member's rejoin under its own member id) "
                       "is never answered FENCED_MEMBER_EPOCH, nor UNRELEASED_INSTANCE_ID when the instance id is its own",
    "stale-epoch-fenced": "a heartbeat is answered FENCED_MEMBER_EPOCH exactly when its epoch is neither 0, nor the "
                          "member's epoch, nor its previous epoch with owned partitions a subset of its assignment",
}


@dataclass
class ConsumerMonitors:
    """The verdicts so far; fed by the simulation through the three ``on_*`` calls."""

    rules: Mapping[str, str] = field(default_factory=lambda: CONSUMER_MONITORS)  # a subclass adds its own
    bound: int = CONVERGENCE_BOUND
    verdicts: dict[str, list[MonitorViolation]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    pending: list[MonitorViolation] = field(default_factory=list)  # new violations since the last tick's end
    _active: dict[str, set] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for m in self.rules:
            self.verdicts.setdefault(m, [])
            self.counts.setdefault(m, 0)
            self._active.setdefault(m, set())

    def _report(self, monitor: str, tick: int, key, message: str, witness: dict, now: set | None = None) -> None:
        self.counts[monitor] += 1
        if now is not None:
            now.add(key)
            if key in self._active[monitor]:
                return
        v = MonitorViolation(monitor, tick, message, tuple(sorted(witness.items())))
        self.verdicts[monitor].append(v)
        self.pending.append(v)

    # ------------------------------------------------------------------------------------------
    def on_transition(self, t: Transition) -> None:
        """Rules of one record written by the coordinator."""
        old, new = t.old, t.new
        if new is None or old is None or old.member_id != new.member_id:
            if new is not None and old is None:
                self._check_handout(t, frozenset(), new)
            return
        if new.epoch < old.epoch and new.epoch != STATIC_LEAVE_EPOCH:
            self._report("member-epochs-increase", t.tick, ("epoch", new.member_id, old.epoch, new.epoch),
                         f"{new.member_id}'s epoch went from {old.epoch} down to {new.epoch}",
                         {"member": new.member_id, "from": old.epoch, "to": new.epoch})
        if new.epoch > old.epoch and old.pending_revocation and t.owned is not None:
            unrevoked = sorted((old.pending_revocation - new.assigned) & t.owned)
            if unrevoked:
                self._report("revoke-before-epoch", t.tick, ("revoke", new.member_id, new.epoch),
                             f"{new.member_id} moved to epoch {new.epoch} while still owning {format_partitions(unrevoked)} "
                             "pending revocation", {"member": new.member_id, "epoch": new.epoch,
                                                   "unrevoked": [str(tp) for tp in unrevoked]})
        self._check_handout(t, old.holds, new)
        if new.state == UNRELEASED_PARTITIONS and t.target is not None:
            self._check_unreleased(t.tick, new, t.target, t.others)

    def _check_unreleased(self, tick: int, record: MemberRecord, target: frozenset[TopicPartition],
                          others: tuple[MemberRecord, ...]) -> None:
        """``unreleased-only-when-held``: some partition of the target the member lacks must be held
        by another member's record (KAFKA-19449: its own pending revocation counted as another's)."""
        missing = target - record.assigned
        held = set().union(*(o.holds for o in others)) if others else set()
        if not missing & held:
            self._report("unreleased-only-when-held", tick, ("unreleased", record.member_id, record.epoch),
                         f"{record.member_id} waits in UNRELEASED_PARTITIONS at epoch {record.epoch} for "
                         f"{format_partitions(sorted(missing)) or 'nothing'}, which no other member holds",
                         {"member": record.member_id, "epoch": record.epoch, "waiting_for": [str(tp) for tp in sorted(missing)]})

    def _check_handout(self, t: Transition, before: frozenset[TopicPartition], new: MemberRecord) -> None:
        added = new.assigned - before
        for other in t.others:
            taken = sorted(added & other.holds)
            if taken:
                self._report("assign-only-released", t.tick, ("handout", new.member_id, other.member_id, tuple(taken)),
                             f"{format_partitions(taken)} given to {new.member_id} while {other.member_id}'s record still holds it",
                             {"member": new.member_id, "holder": other.member_id, "partitions": [str(tp) for tp in taken]})

    # ------------------------------------------------------------------------------------------
    def on_heartbeat(self, tick: int, req: HeartbeatRequest, before: MemberRecord | None, resp: HeartbeatResponse) -> None:
        """Rules of one heartbeat and its answer; ``before``: the member's record when it arrived."""
        fenced = resp.error == FENCED_MEMBER_EPOCH
        own = before is not None and before.member_id == req.member_id
        if req.epoch == 0 and (fenced or (resp.error == UNRELEASED_INSTANCE_ID and own)):
            self._report("rejoin-accepted", tick, ("rejoin", req.member_id, tick),
                         f"{req.member_id}'s rejoin with epoch 0 was refused: {resp.error} ({resp.message})",
                         {"member": req.member_id, "coordinator_epoch": before.epoch if before else None})
        if before is None or req.epoch <= 0 or before.member_id != req.member_id or before.epoch == STATIC_LEAVE_EPOCH:
            return
        accept = req.epoch == before.epoch or (req.epoch == before.previous_epoch and req.owned <= before.assigned)
        if accept == fenced:
            what = "fenced" if fenced else "accepted"
            self._report("stale-epoch-fenced", tick, ("stale", req.member_id, tick),
                         f"{req.member_id}'s heartbeat at epoch {req.epoch} was {what} (coordinator: epoch {before.epoch}, "
                         f"previous {before.previous_epoch})",
                         {"member": req.member_id, "sent": req.epoch, "epoch": before.epoch, "previous": before.previous_epoch})

    # ------------------------------------------------------------------------------------------
    def on_tick_end(self, tick: int, owning: Mapping[str, frozenset[TopicPartition]], unsettled: str | None,
                    quiet_since: int, outside: frozenset[str] = frozenset()) -> None:
        """End-of-tick rules: ``owning`` maps each running member to what it owns; ``outside``: those of
        them the coordinator no longer counts in the group (cut off past their session, they keep
        fetching, as Kafka's clients do: a zombie, named in the witness); ``unsettled`` says why the
        group is not settled (None when it is)."""
        seen: dict[str, set] = {m: set() for m in self.rules}
        owners: dict[TopicPartition, list[str]] = {}
        for name in sorted(owning):
            for tp in owning[name]:
                owners.setdefault(tp, []).append(name)
        for tp in sorted(owners):
            if len(owners[tp]) > 1:
                names = owners[tp]
                zombies = [n for n in names if n in outside]
                why = f" ({', '.join(zombies)} removed from the group but still fetching: a zombie)" if zombies else ""
                self._report("no-double-ownership", tick, (tp, tuple(names)), f"{tp} owned by {' and '.join(names)}{why}",
                             {"partition": str(tp), "members": names, "zombies": zombies}, seen["no-double-ownership"])
        if unsettled is not None and tick > quiet_since + self.bound:
            self._report("convergence", tick, ("late", quiet_since),
                         f"not settled {tick - quiet_since} heartbeats after the last disturbance at tick {quiet_since} "
                         f"(bound {self.bound}): {unsettled}", {"disturbance": quiet_since, "why": unsettled},
                         seen["convergence"])
        for monitor in ("no-double-ownership", "convergence"):
            self._active[monitor] = seen[monitor]

    def results(self) -> tuple[MonitorVerdict, ...]:
        return tuple(
            MonitorVerdict(m, rule, not self.verdicts[m], self.verdicts[m][0] if self.verdicts[m] else None, self.counts[m])
            for m, rule in self.rules.items()
        )
