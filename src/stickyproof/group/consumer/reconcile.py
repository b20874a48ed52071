"""A member's current assignment moved towards its target, and the partition epochs that keep two
members from holding one partition (docs/consumer-protocol.md, "Reconciliation").

Pure functions over frozen ``MemberRecord`` values, after Kafka's ``CurrentAssignmentBuilder`` (both
state machines a ``CoordinatorRelease`` may name), ``ConsumerGroup``'s partition-epoch bookkeeping and
``GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid``. Nothing here keeps state: the
coordinator passes the partition epochs in and gets new ones back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping

from ...model import TopicPartition
from .releases import EARLY_ACCESS, CoordinatorRelease

__all__ = [
    "STABLE",
    "UNREVOKED_PARTITIONS",
    "UNRELEASED_PARTITIONS",
    "UNKNOWN",
    "REVOKING",
    "ASSIGNING",
    "LEAVE_EPOCH",
    "STATIC_LEAVE_EPOCH",
    "FENCED_MEMBER_EPOCH",
    "MemberRecord",
    "Partitions",
    "new_member",
    "is_reconciled",
    "reconcile",
    "epoch_error",
    "update_partition_epochs",
    "remove_partition_epochs",
]

STABLE = "STABLE"
UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"
UNKNOWN = "UNKNOWN"
# the early-access state machine's names for its non-stable states (derived from the sets, as 3.7 did)
REVOKING = "REVOKING"
ASSIGNING = "ASSIGNING"

LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2
FENCED_MEMBER_EPOCH = "FENCED_MEMBER_EPOCH"

Partitions = frozenset  # of TopicPartition
_NONE: frozenset[TopicPartition] = frozenset()


@dataclass(frozen=True)
class MemberRecord:
    """A member as the coordinator keeps it (``ConsumerGroupMember``).

    ``assigned``: the partitions the member may own now; ``pending_revocation``: those it must give up
    before its epoch moves; ``pending_assignment`` and ``target_epoch``: the early-access state machine
    only (partitions waiting for release, and the epoch it reconciles towards). ``order``: when the
    member entered the group, the order of the coordinator's member map. ``classic``: for a member
    speaking the classic protocol inside a consumer group (online migration), the protocol names of its
    JoinGroup (``ClassicMemberMetadata.supportedProtocols``); None for a consumer-protocol member.
    """

    member_id: str
    instance_id: str | None
    rack: str | None
    topics: tuple[str, ...]
    state: str
    epoch: int
    previous_epoch: int
    assigned: frozenset[TopicPartition] = _NONE
    pending_revocation: frozenset[TopicPartition] = _NONE
    pending_assignment: frozenset[TopicPartition] = _NONE
    target_epoch: int = 0
    order: int = 0
    classic: tuple[str, ...] | None = None

    @property
    def holds(self) -> frozenset[TopicPartition]:
        """What the member's record holds a partition epoch for: assigned and pending revocation."""
        return self.assigned | self.pending_revocation


def new_member(member_id: str, instance_id: str | None, rack: str | None, topics: tuple[str, ...], order: int) -> MemberRecord:
    """A member created by a heartbeat with epoch 0: STABLE at epoch 0, nothing assigned."""
    return MemberRecord(member_id, instance_id, rack, topics, STABLE, 0, 0, order=order)


def is_reconciled(member: MemberRecord, target_epoch: int, release: CoordinatorRelease) -> bool:
    """Whether the coordinator skips reconciliation (``isReconciledTo``; 3.7: STABLE at the target epoch)."""
    if release.state_machine == EARLY_ACCESS:
        return member.state == STABLE and member.target_epoch == target_epoch
    return member.state == STABLE and member.epoch == target_epoch


def reconcile(
    member: MemberRecord,
    target_epoch: int,
    target: frozenset[TopicPartition],
    partition_epoch: Callable[[TopicPartition], int],
    owned: frozenset[TopicPartition] | None,
    release: CoordinatorRelease,
) -> MemberRecord:
    """The member's next record (``CurrentAssignmentBuilder.build``), or ``member`` itself when it
    cannot move. ``owned``: the partitions the heartbeat lists (None: the field was not sent, which
    counts as still owning everything); ``partition_epoch``: -1 for a partition nobody holds.
    Raises ``Fenced`` from an UNKNOWN state with partitions owned."""
    if release.state_machine == EARLY_ACCESS:
        return _reconcile_early_access(member, target_epoch, target, partition_epoch, owned)
    if member.state == STABLE:
        if member.epoch == target_epoch:
            return member
        return _next_assignment(member, member.epoch, target_epoch, target, partition_epoch, owned, release)
    if member.state == UNREVOKED_PARTITIONS:
        # the epoch moves only once the heartbeat stops listing every partition pending revocation
        if _owns_any(owned, member.pending_revocation):
            return member
        return _next_assignment(member, member.epoch + 1, target_epoch, target, partition_epoch, owned, release)
    if member.state == UNRELEASED_PARTITIONS:
        return _next_assignment(member, member.epoch, target_epoch, target, partition_epoch, owned, release)
    # UNKNOWN: a state from a newer coordinator; fenced unless the member owns nothing
    if owned is None or owned:
        raise Fenced("the member is in an unknown state and must abandon its partitions and rejoin")
    return _next_assignment(member, target_epoch, target_epoch, target, partition_epoch, owned, release)


class Fenced(Exception):
    """A heartbeat answered with FENCED_MEMBER_EPOCH (internal to the coordinator)."""


def _owns_any(owned: frozenset[TopicPartition] | None, partitions: frozenset[TopicPartition]) -> bool:
    """``ownsRevokedPartitions``: a heartbeat without its owned partitions is taken to own them all."""
    return owned is None or not owned.isdisjoint(partitions)


def _next_assignment(member, epoch, target_epoch, target, partition_epoch, owned, release) -> MemberRecord:
    """``computeNextAssignment``: kept = assigned ∩ target; the rest of assigned pending revocation;
    the rest of the target given now when released, otherwise left for a later heartbeat."""
    kept = member.assigned & target
    revoke = member.assigned - kept
    wanted = target - kept
    unreleased = frozenset(tp for tp in wanted if _unreleased(tp, member, partition_epoch, release))
    give = wanted - unreleased
    if revoke and _owns_any(owned, revoke):
        return replace(member, state=UNREVOKED_PARTITIONS, epoch=epoch, previous_epoch=member.epoch,
                       assigned=kept, pending_revocation=revoke)
    state = UNRELEASED_PARTITIONS if unreleased else STABLE
    return replace(member, state=state, epoch=target_epoch, previous_epoch=member.epoch,
                   assigned=kept | give, pending_revocation=_NONE)


def _unreleased(tp: TopicPartition, member: MemberRecord, partition_epoch, release: CoordinatorRelease) -> bool:
    """A partition of the target that some record still holds. Before KAFKA-19449's fix the member's
    own pending revocation counted too, costing it one heartbeat in UNRELEASED_PARTITIONS."""
    if partition_epoch(tp) == -1:
        return False
    return not (release.kafka_19449_fixed and tp in member.pending_revocation)


def _reconcile_early_access(member, target_epoch, target, partition_epoch, owned) -> MemberRecord:
    """Kafka 3.7's builder: a new target restarts reconciliation from assigned plus pending revocation
    (so a partition being revoked may come straight back to assigned); REVOKING waits until the
    heartbeat's owned partitions match the assigned ones; ASSIGNING takes partitions as they free up."""
    if target_epoch != member.target_epoch:
        held = member.assigned | member.pending_revocation
        assigned = held & target
        revoke = held - assigned
        waiting = target - assigned
        if revoke:
            return _early_state(replace(member, assigned=assigned, pending_revocation=revoke,
                                        pending_assignment=waiting, target_epoch=target_epoch))
        assigned, waiting = _take_released(assigned, waiting, partition_epoch)
        return _early_state(replace(member, assigned=assigned, pending_revocation=_NONE, pending_assignment=waiting,
                                    previous_epoch=member.epoch, epoch=target_epoch, target_epoch=target_epoch))
    if member.state == REVOKING:
        if member.pending_revocation and not _matches(owned, member.assigned):
            return member
        assigned, waiting = _take_released(member.assigned, member.pending_assignment, partition_epoch)
        return _early_state(replace(member, assigned=assigned, pending_revocation=_NONE, pending_assignment=waiting,
                                    previous_epoch=member.epoch, epoch=target_epoch, target_epoch=target_epoch))
    if member.state == ASSIGNING:
        assigned, waiting = _take_released(member.assigned, member.pending_assignment, partition_epoch)
        if waiting == member.pending_assignment:
            return member
        return _early_state(replace(member, assigned=assigned, pending_assignment=waiting,
                                    previous_epoch=member.epoch, epoch=target_epoch, target_epoch=target_epoch))
    return member


def _take_released(assigned, waiting, partition_epoch):
    free = frozenset(tp for tp in waiting if partition_epoch(tp) == -1)
    return assigned | free, waiting - free


def _matches(owned: frozenset[TopicPartition] | None, assigned: frozenset[TopicPartition]) -> bool:
    """3.7's ``matchesAssignedPartitions``: as many topics as assigned, each owned partition assigned."""
    if owned is None:
        return False
    return len({tp.topic for tp in owned}) == len({tp.topic for tp in assigned}) and owned <= assigned


def _early_state(member: MemberRecord) -> MemberRecord:
    """3.7 derived the state from the sets: REVOKING, then ASSIGNING, else STABLE."""
    state = REVOKING if member.pending_revocation else ASSIGNING if member.pending_assignment else STABLE
    return replace(member, state=state)


def epoch_error(member: MemberRecord, epoch: int, owned: frozenset[TopicPartition] | None,
                release: CoordinatorRelease) -> str | None:
    """``throwIfConsumerGroupMemberEpochIsInvalid``: None when the heartbeat's epoch is accepted, else
    why it is fenced. A greater epoch is fenced; a smaller one is accepted only when it is the previous
    epoch and the owned partitions are a subset of the assignment (the response with the new epoch may
    have been lost). KAFKA-19233's fix accepts epoch 0, a fenced member's rejoin."""
    if epoch == 0 and release.kafka_19233_fixed:
        return None
    if epoch > member.epoch:
        return f"epoch {epoch} is greater than the coordinator's {member.epoch}"
    if epoch < member.epoch:
        if epoch != member.previous_epoch or owned is None or not owned <= member.assigned:
            return f"epoch {epoch} is smaller than the coordinator's {member.epoch}"
    return None


def update_partition_epochs(
    epochs: Mapping[TopicPartition, int], old: MemberRecord | None, new: MemberRecord, release: CoordinatorRelease
) -> dict[TopicPartition, int]:
    """The partition epochs after ``old`` becomes ``new`` (``maybeUpdatePartitionEpoch``).

    Fixed (KAFKA-16147): remove everything the old record held, then add everything the new one holds.
    Before: assigned and pending revocation were each replaced only when they changed, assigned first,
    so a partition moving from pending revocation to assigned was written by the first step and erased
    by the second, and the coordinator then saw it as free while its member still owned it."""
    out = dict(epochs)
    if old is None:
        _add(out, new.assigned, new.epoch)
        _add(out, new.pending_revocation, new.epoch)
        return out
    if release.kafka_16147_fixed:
        _remove(out, old.holds)
        _add(out, new.assigned, new.epoch)
        _add(out, new.pending_revocation, new.epoch)
        return out
    if old.assigned != new.assigned:
        _remove(out, old.assigned)
        _add(out, new.assigned, new.epoch)
    if old.pending_revocation != new.pending_revocation:
        _remove(out, old.pending_revocation)
        _add(out, new.pending_revocation, new.epoch)
    return out


def remove_partition_epochs(epochs: Mapping[TopicPartition, int], old: MemberRecord) -> dict[TopicPartition, int]:
    """The partition epochs once ``old`` leaves the group (``removePartitionEpochs`` of both sets)."""
    out = dict(epochs)
    _remove(out, old.holds)
    return out


def _add(epochs: dict, partitions, epoch: int) -> None:
    for tp in partitions:
        epochs[tp] = epoch


def _remove(epochs: dict, partitions) -> None:
    for tp in partitions:
        epochs.pop(tp, None)
