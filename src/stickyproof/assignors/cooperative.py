"""The cooperative adjustment: withhold partitions that change owner (docs/rules.md R34-R35, N4).

``CooperativeStickyAssignor.assignPartitions`` runs the sticky algorithm, then removes every
"transferring" partition from its *new* owner's list: under the cooperative protocol the old
owner must revoke it first, and the follow-up rebalance hands it out (R40). The output is the
target assignment minus the transferring partitions (N4), never "current owners plus new".

Transferring comes from the constrained builder (R25) or, on the general path where the builder
records nothing, from the wire owned partitions (R34, ``compute_partitions_transferring_ownership``).
Under EAGER the wire owned partitions are empty, so nothing is withheld (R35).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..model import Assignment, TopicPartition
from .sticky_types import StickyInput, StickyResult

__all__ = ["adjust_assignment", "compute_partitions_transferring_ownership", "partitions_transferring_ownership"]


def compute_partitions_transferring_ownership(
    assignment: Mapping[str, Sequence[TopicPartition]], inp: StickyInput
) -> dict[TopicPartition, str]:
    """R34 ``computePartitionsTransferringOwnership``: assigned to a member that did not own it on the wire,
    and owned on the wire by some member that does not get it back.

    Members are visited in map order; when a partition is "added" to two members (a duplicate in
    the assignment) the later one is recorded, as Java's ``HashMap.put`` does.
    """
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member in inp.members:
        owned = inp.wire_owned.get(member, ())
        assigned = assignment.get(member, ())
        owned_set = set(owned)
        for tp in assigned:
            if tp not in owned_set:
                added[tp] = member
        assigned_set = set(assigned)
        revoked.update(tp for tp in owned if tp not in assigned_set)
    return {tp: member for tp, member in added.items() if tp in revoked}


def partitions_transferring_ownership(result: StickyResult, inp: StickyInput) -> Mapping[TopicPartition, str]:
    """The builder's record when it kept one (constrained path, R25), else computed from the wire (R34)."""
    if result.partitions_transferring_ownership is not None:
        return result.partitions_transferring_ownership
    return compute_partitions_transferring_ownership(result.assignment, inp)


def adjust_assignment(result: StickyResult, inp: StickyInput) -> Assignment:
    """``adjustAssignment``: drop each transferring partition from its new owner; report who must revoke it.

    ``List.remove(Object)`` removes the first occurrence (and nothing if absent). ``revoking[m]``
    lists the withheld partitions that ``m`` owned on the wire and does not keep: those are the
    partitions that nobody holds until the follow-up rebalance.
    """
    transferring = partitions_transferring_ownership(result, inp)
    assignment: dict[str, tuple[TopicPartition, ...]] = dict(result.assignment)
    changed: dict[str, list[TopicPartition]] = {}
    for tp, member in transferring.items():
        if member not in assignment:
            continue
        lst = changed.get(member)
        if lst is None:
            lst = changed[member] = list(assignment[member])
        try:
            lst.remove(tp)
        except ValueError:
            pass
    for member, lst in changed.items():
        assignment[member] = tuple(lst)

    revoking: dict[str, tuple[TopicPartition, ...]] = {}
    withheld = set(transferring)
    if withheld:
        for member in inp.members:
            owned = [tp for tp in inp.wire_owned.get(member, ()) if tp in withheld]
            if not owned:
                continue
            kept = set(assignment.get(member, ()))
            lost = tuple(tp for tp in owned if tp not in kept)
            if lost:
                revoking[member] = lost
    return Assignment(assignment, revoking)
