"""The constrained path: every member subscribes to the same topics (KAFKA_SEMANTICS.md R15-R25, R48).

``AbstractStickyAssignor.ConstrainedAssignmentBuilder``, in three phases after the quotas (R15):

1. keep owned partitions up to ``min_quota`` / ``max_quota``, members in map order (R16-R17);
2. rack-aware round robin over members still under ``min_quota`` (R20, rack mode only);
3. plain round robin, first to ``min_quota``, then one more for as many members as
   ``expected_num_members_with_over_min_quota_partitions`` (R21), then the final check (R22).

Two implementations produce the same answer:

* ``_constrained_reference`` follows Kafka line by line over Python lists. It handles every case:
  rack mode, the historical variants, and Kafka's failure modes (§10 K1: a claimed partition
  number past the topic's count desynchronises ``getUnassignedPartitions``' merge and
  re-assigns kept partitions or throws; a partition kept by two members does the same).
* ``_constrained_fast`` does the same on integer partition ids with numpy, for the common case
  (no rack mode, every kept claim a real partition kept once). Partition ids follow Kafka's own
  iteration order (topics by ``String.compareTo``, then partition number), so "sorted" and
  "in id order" are the same thing. It declines (returns None) whenever its preconditions fail.

``tests/test_constrained.py`` checks on generated groups that both agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Mapping, Sequence

import numpy as np

from .._perf import gc_paused
from ..errors import AssignorFailure, UnknownAssignor
from ..javaorder import java_string_key
from ..model import TopicPartition
from .ownership import _topic_layout, intern_claims
from .sticky_types import PriorOwners, StickyInput, StickyResult

__all__ = ["constrained_assign", "ConstrainedRules", "rules_for_variant", "NO_MORE_UNFILLED"]

NO_MORE_UNFILLED = "No more unfilled consumers to be assigned."
_NOT_REACHED_EXPECTED = (
    "We haven't reached the expected number of members with more than the minQuota partitions, "
    "but no more partitions to be assigned"
)

_new_tp = partial(tuple.__new__, TopicPartition)


@dataclass(frozen=True)
class ConstrainedRules:
    """What changed in the constrained builder between the releases stickyproof models.

    ``sort_owned``: KAFKA-16277 (3.7.1/3.8.0), owned partitions sorted by (partition, topic)
    before the quotas apply (R16 step 2); earlier releases took them in claim order.
    ``kafka_15170``: the same releases' rack fixes: rack-mismatched claims recorded as maybe
    revoked, transferring only to a *different* member, and the "minQuota members considered
    filled" bookkeeping of the rack round robin (R20). Before it, any partition revoked in phase 1
    counted as transferring, even when it went back to the member that owned it.
    """

    sort_owned: bool = True
    kafka_15170: bool = True


CURRENT_RULES = ConstrainedRules()
_PRE_3_7_1_RULES = ConstrainedRules(sort_owned=False, kafka_15170=False)


def rules_for_variant(variant: str) -> ConstrainedRules:
    """The constrained builder of ``variant`` (3.0-3.7.0 share one; 2.6 had its own, see ``_constrained_assign_2_6``)."""
    if variant == "current":
        return CURRENT_RULES
    if variant == "3.5.1":
        return _PRE_3_7_1_RULES
    raise UnknownAssignor(f"no 3.x constrained builder for variant {variant!r}")


def _quotas(total_partitions: int, num_members: int) -> tuple[int, int, int]:
    """R15: ``minQuota``, ``maxQuota``, ``expectedNumMembersWithOverMinQuotaPartitions``; R14 on an empty group."""
    if num_members == 0:
        # Java computes the quotas in double (no throw) but the int modulo divides by zero.
        raise AssignorFailure("/ by zero", kafka_exception="ArithmeticException")
    return total_partitions // num_members, -(-total_partitions // num_members), total_partitions % num_members


def _owned_sort_key(tp: TopicPartition) -> tuple[int, bytes]:
    """R16 step 2 (KAFKA-16277): ``comparing(TopicPartition::partition).thenComparing(TopicPartition::topic)``."""
    return (tp[1], java_string_key(tp[0]))


def _tp_sort_key(tp: TopicPartition) -> tuple[bytes, int]:
    """``comparing(TopicPartition::topic).thenComparing(TopicPartition::partition)``."""
    return (java_string_key(tp[0]), tp[1])


# ------------------------------------------------------------------------------------------
# Rack information (R48; AbstractStickyAssignor.RackInfo)


class _RackInfo:
    """``RackInfo`` restricted to what the constrained builder asks: mismatch, rack order, next rack consumer."""

    def __init__(self, inp: StickyInput):
        self.on = inp.rack_aware
        self.consumer_racks = {m: r for m, r in inp.member_rack.items() if r} if inp.rack_aware else {}
        self._partition_racks = inp.partition_racks
        consumers_by_rack: dict[str, int] = {}
        for r in inp.member_rack.values():
            if r:
                consumers_by_rack[r] = consumers_by_rack.get(r, 0) + 1
        self._consumers_by_rack = consumers_by_rack

    def racks(self, tp: TopicPartition) -> frozenset[str]:
        per_partition = self._partition_racks.get(tp[0], ())
        return per_partition[tp[1]] if 0 <= tp[1] < len(per_partition) else frozenset()

    def mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        """``racksMismatch``: a member with a rack, and no replica of ``tp`` on it (a member without a rack never mismatches)."""
        rack = self.consumer_racks.get(consumer)
        return rack is not None and rack not in self.racks(tp)

    def num_consumers(self, tp: TopicPartition) -> int:
        """``numConsumersByPartition``: members whose rack holds a replica of ``tp`` (R18's sort key)."""
        return sum(self._consumers_by_rack.get(r, 0) for r in self.racks(tp))

    def next_rack_consumer(self, tp: TopicPartition, consumers: Sequence[str], first: int) -> int:
        """``nextRackConsumer``: from ``first``, wrapping, the first member on a rack holding ``tp``; -1 if none."""
        racks = self.racks(tp)
        if not racks:
            return -1
        n = len(consumers)
        for i in range(n):
            index = (first + i) % n
            rack = self.consumer_racks.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


# ------------------------------------------------------------------------------------------
# Reference implementation (line by line)


def _unassigned_partitions(
    partitions_per_topic: Mapping[str, int], sorted_topics: Sequence[str], assigned: list[TopicPartition]
) -> list[TopicPartition]:
    """``getUnassignedPartitions``: a two-pointer merge of all partitions against the sorted kept ones.

    The merge assumes every kept partition exists and is kept once. When not (§10 K1: a claim on
    ``t-5`` of a 4-partition topic; or a partition kept by two members), the pointer stops
    advancing and every later partition is reported unassigned, kept or not.
    """
    everything = [TopicPartition(t, p) for t in sorted_topics for p in range(partitions_per_topic[t])]
    if not assigned:
        return everything
    ordered = sorted(assigned, key=_tp_sort_key)
    pointer = iter(ordered)
    next_assigned = next(pointer)
    add_directly = False
    out: list[TopicPartition] = []
    for tp in everything:
        if add_directly or not (next_assigned[0] == tp.topic and next_assigned[1] == tp.partition):
            out.append(tp)
        else:
            try:
                next_assigned = next(pointer)
            except StopIteration:
                add_directly = True
    return out


def _constrained_reference(inp: StickyInput, prior: PriorOwners, rules: ConstrainedRules) -> StickyResult:
    """``ConstrainedAssignmentBuilder.build`` over Python lists, exactly as Kafka runs it (R15-R25)."""
    members = list(inp.members)
    owned_by_member = prior.consumer_to_owned_partitions
    dup = prior.partitions_with_multiple_previous_owners
    ppt = inp.partitions_per_topic
    total = sum(ppt.values())
    min_quota, max_quota, expected_over_min = _quotas(total, len(members))
    current_over_min = 0
    rack = _RackInfo(inp)

    assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
    assigned: list[TopicPartition] = []
    maybe_revoked: dict[TopicPartition, str] = {}  # kafka_15170: tp -> member it was taken from
    all_revoked: set[TopicPartition] = set()  # before: a plain set
    under_min: list[str] = []  # unfilledMembersWithUnderMinQuotaPartitions
    at_min: list[str] = []  # unfilledMembersWithExactlyMinQuotaPartitions

    def revoke(tp: TopicPartition, member: str) -> None:
        if rules.kafka_15170:
            maybe_revoked[tp] = member
        else:
            all_revoked.add(tp)

    # Phase 1 (R16): keep owned partitions, members in map order; R17 strips multiply-claimed ones.
    for member in members:
        owned: list[TopicPartition] = []
        for tp in owned_by_member.get(member, ()):
            if rack.mismatch(member, tp):
                if rules.kafka_15170:
                    maybe_revoked[tp] = member
            else:
                owned.append(tp)
        if rules.sort_owned:
            owned.sort(key=_owned_sort_key)
        for tp in dup:
            if tp in owned:
                owned.remove(tp)
        if len(owned) < min_quota:
            assignment[member].extend(owned)
            assigned.extend(owned)
            under_min.append(member)
        elif len(owned) >= max_quota and current_over_min < expected_over_min:
            current_over_min += 1
            if current_over_min == expected_over_min:
                at_min.clear()
            assignment[member].extend(owned[:max_quota])
            assigned.extend(owned[:max_quota])
            for tp in owned[max_quota:]:
                revoke(tp, member)
        else:
            assignment[member].extend(owned[:min_quota])
            assigned.extend(owned[:min_quota])
            for tp in owned[min_quota:]:
                revoke(tp, member)
            if current_over_min < expected_over_min:
                at_min.append(member)

    sorted_topics = sorted(ppt, key=java_string_key)
    unassigned = _unassigned_partitions(ppt, sorted_topics, assigned)
    under_min.sort(key=java_string_key)  # R19
    at_min.sort(key=java_string_key)
    if rack.on:
        unassigned.sort(key=rack.num_consumers)  # R18: stable, fewest co-located members first

    transferring: dict[TopicPartition, str] = {}

    def assign_new(tp: TopicPartition, member: str) -> int:
        assignment[member].append(tp)
        # R25: newly granted, and taken from another member (or contested): transferring.
        if rules.kafka_15170:
            moved = tp in maybe_revoked and maybe_revoked[tp] != member
        else:
            moved = tp in all_revoked
        if moved or tp in dup:
            transferring[tp] = member
        return len(assignment[member])

    # Phase 2 (R20): rack-aware round robin, only in rack mode.
    if rack.consumer_racks:
        remaining: list[TopicPartition] = []
        next_index = 0
        for tp in unassigned:
            consumer = None
            index = rack.next_rack_consumer(tp, under_min, next_index)
            if index >= 0:
                consumer = under_min[index]
                count = len(assignment[consumer]) + 1
                if count >= min_quota:
                    under_min.remove(consumer)
                    if count < max_quota and (not rules.kafka_15170 or current_over_min < expected_over_min):
                        at_min.append(consumer)
                else:
                    index += 1
                next_index = index % len(under_min) if under_min else 0
            elif at_min:
                first = rack.next_rack_consumer(tp, at_min, 0)
                if first >= 0:
                    consumer = at_min[first]
                    if len(assignment[consumer]) + 1 == max_quota:
                        del at_min[first]
                        if rules.kafka_15170:
                            current_over_min += 1
                            if current_over_min == expected_over_min:
                                at_min.clear()
            if consumer is not None:
                assign_new(tp, consumer)
            else:
                remaining.append(tp)
        unassigned = remaining

    # Phase 3 (R21): plain round robin; ``cursor`` emulates the LinkedList iterator over under_min.
    cursor = 0
    for tp in unassigned:
        from_iterator = True
        if cursor < len(under_min):
            consumer = under_min[cursor]
        elif not under_min and not at_min:
            raise AssignorFailure(NO_MORE_UNFILLED, kafka_exception="IllegalStateException")
        elif not under_min:
            consumer = at_min.pop(0)
            from_iterator = False
        else:
            cursor = 0
            consumer = under_min[0]
        count = assign_new(tp, consumer)
        if count == min_quota:
            if not from_iterator:  # the stale iterator's remove(): lastReturned already unlinked
                raise AssignorFailure("iterator remove() without next()", kafka_exception="IllegalStateException")
            del under_min[cursor]
            at_min.append(consumer)
        else:
            if count == max_quota:
                current_over_min += 1
            if from_iterator:
                cursor += 1

    _verify_unfilled_members(under_min, assignment, min_quota, current_over_min, expected_over_min)
    return StickyResult({m: tuple(v) for m, v in assignment.items()}, transferring)


def _verify_unfilled_members(
    under_min: Sequence[str],
    assignment: Mapping[str, Sequence[TopicPartition]],
    min_quota: int,
    current_over_min: int,
    expected_over_min: int,
) -> None:
    """R22 ``verifyUnfilledMembers``: members still under ``minQuota`` make the assignment fail."""
    if not under_min:
        return
    if current_over_min != expected_over_min:
        raise AssignorFailure(_NOT_REACHED_EXPECTED, kafka_exception="IllegalStateException")
    for member in under_min:
        if len(assignment[member]) != min_quota:
            raise AssignorFailure(
                f"Consumer: [{member}] doesn't reach minQuota partitions, and no more partitions to be assigned",
                kafka_exception="IllegalStateException",
            )


# ------------------------------------------------------------------------------------------
# Fast path (integer ids, numpy)


def _topic_partitions(pids: np.ndarray, names_of: np.ndarray, offsets: np.ndarray) -> list[TopicPartition]:
    """Partition ids back to ``TopicPartition`` values (the one conversion point; ``tuple.__new__`` skips
    the NamedTuple's Python-level constructor)."""
    if not len(pids):
        return []
    topic_of = np.searchsorted(offsets, pids, side="right") - 1
    return list(map(_new_tp, zip(names_of[topic_of].tolist(), (pids - offsets[topic_of]).tolist())))


def _owned_order(member: np.ndarray, part: np.ndarray, tidx: np.ndarray) -> np.ndarray:
    """Order claims by (member, partition, topic): one packed int64 key when the fields fit, else lexsort."""
    if not len(member):
        return np.zeros(0, dtype=np.int64)
    if member.max() < 2**20 and tidx.max() < 2**12 and part.max() < 2**31:
        key = (member << 43) | (part << 12) | tidx
        if bool((key[1:] > key[:-1]).all()):
            return np.arange(len(key))
        return np.argsort(key)  # keys are unique: any sort is stable enough
    return np.lexsort((tidx, part, member))


def _constrained_fast(inp: StickyInput, prior: PriorOwners, rules: ConstrainedRules) -> StickyResult | None:
    """The reference algorithm on dense partition ids; None when a precondition fails (then use the reference).

    Preconditions: rack mode off, every kept claim names an existing partition of
    ``partitions_per_topic``, no partition kept twice. Then ``getUnassignedPartitions`` is a plain
    set difference and the round robin can be computed pass by pass instead of grant by grant:
    pass k serves, in ``under_min`` order, the members still missing at least k partitions.
    """
    if inp.rack_aware:
        return None
    members = list(inp.members)
    n = len(members)
    ppt = inp.partitions_per_topic
    total = sum(ppt.values())
    min_quota, max_quota, expected_over_min = _quotas(total, n)

    sorted_topics = sorted(ppt, key=java_string_key)
    topic_index, counts, offsets = _topic_layout(sorted_topics, ppt)
    owned_lists = [prior.consumer_to_owned_partitions.get(m, ()) for m in members]
    flat, lengths, tidx, part, pid = intern_claims(owned_lists, topic_index, counts, offsets)
    n_claims = len(flat)
    if n_claims:
        if (pid < 0).any():
            return None  # §10 K1 (or a claim outside partitions_per_topic): only the reference desynchronises
        seen = np.zeros(total, dtype=bool)
        seen[pid] = True
        if int(seen.sum()) != n_claims:
            return None  # a partition kept twice (3.5.1, 2.2): reference only
    member_of = np.repeat(np.arange(n, dtype=np.int64), lengths)

    # R17: multiply-claimed partitions are stripped before the quotas.
    dup_mask = np.zeros(total, dtype=bool)
    for tp in prior.partitions_with_multiple_previous_owners:
        t = topic_index.get(tp[0])
        if t is not None and 0 <= tp[1] < counts[t]:
            dup_mask[offsets[t] + tp[1]] = True
    claim_index = np.arange(n_claims, dtype=np.int64)
    if n_claims:
        keep_claim = ~dup_mask[pid]
        claim_index = claim_index[keep_claim]
        if rules.sort_owned:  # R16 step 2: by partition number, then topic name, within each member
            claim_index = claim_index[_owned_order(member_of[claim_index], part[claim_index], tidx[claim_index])]
    c_member = member_of[claim_index]
    sizes = np.bincount(c_member, minlength=n) if n_claims else np.zeros(n, dtype=np.int64)

    # R16 steps 4-6: how many each member keeps, in map order (first come, first served for max_quota).
    keep_count = np.empty(n, dtype=np.int64)
    under_min: list[int] = []
    at_min: list[int] = []
    current_over_min = 0
    for i, size in enumerate(sizes.tolist()):
        if size < min_quota:
            keep_count[i] = size
            under_min.append(i)
        elif size >= max_quota and current_over_min < expected_over_min:
            keep_count[i] = max_quota
            current_over_min += 1
            if current_over_min == expected_over_min:
                at_min.clear()
        else:
            keep_count[i] = min_quota
            if current_over_min < expected_over_min:
                at_min.append(i)

    if len(claim_index):
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        rank = np.arange(len(claim_index), dtype=np.int64) - starts[c_member]
        kept_sel = rank < keep_count[c_member]
    else:
        kept_sel = np.zeros(0, dtype=bool)
    kept_claims = claim_index[kept_sel]
    revoked_claims = claim_index[~kept_sel]
    assigned_mask = np.zeros(total, dtype=bool)
    assigned_mask[pid[kept_claims]] = True
    revoked_from = np.full(total, -1, dtype=np.int64)  # maybeRevokedPartitions (or the allRevoked set)
    revoked_from[pid[revoked_claims]] = member_of[revoked_claims]
    unassigned = np.flatnonzero(~assigned_mask)

    id_key = [java_string_key(m) for m in members]
    under_min.sort(key=id_key.__getitem__)  # R19
    at_min.sort(key=id_key.__getitem__)

    # Phase 3 (R21) in passes: deficit d_i = min_quota - kept_i.
    u = np.asarray(under_min, dtype=np.int64)
    deficit = min_quota - keep_count[u] if len(u) else np.zeros(0, dtype=np.int64)
    total_deficit = int(deficit.sum())
    if len(unassigned) < total_deficit:
        return None  # cannot happen with well-formed claims; the reference raises R22's error
    grants: list[np.ndarray] = []
    active = np.arange(len(u), dtype=np.int64)
    for k in range(1, int(deficit.max()) + 1 if len(u) else 1):
        active = active[deficit[active] >= k]
        grants.append(u[active])
    pass_members = np.concatenate(grants) if grants else np.zeros(0, dtype=np.int64)
    # Members reaching min_quota join at_min's tail in the order they finish: by deficit, then position.
    finish_order = u[np.lexsort((np.arange(len(u)), deficit))] if len(u) else np.zeros(0, dtype=np.int64)
    at_min_queue = np.concatenate((np.asarray(at_min, dtype=np.int64), finish_order))
    extra = len(unassigned) - total_deficit
    if extra > len(at_min_queue):
        return None  # Kafka throws NO_MORE_UNFILLED: let the reference do it
    poll_members = at_min_queue[:extra]
    new_members = np.concatenate((pass_members, poll_members))

    # R25 transferring.
    new_revoked_from = revoked_from[unassigned]
    if rules.kafka_15170:
        moved = (new_revoked_from >= 0) & (new_revoked_from != new_members)
    else:
        moved = new_revoked_from >= 0
    moved |= dup_mask[unassigned]

    out_member = np.concatenate((member_of[kept_claims], new_members))
    # Per member: kept partitions (R16 order), then grants in grant order (R24).
    # numpy's stable sort is a radix sort on 16-bit keys: use it when member numbers fit.
    sort_key = out_member.astype(np.int16) if n < 2**15 else out_member
    order = np.argsort(sort_key, kind="stable")
    per_member = np.bincount(out_member, minlength=n) if len(out_member) else np.zeros(n, dtype=np.int64)
    names_of = np.asarray(sorted_topics, dtype=object)
    with gc_paused():
        if len(kept_claims):
            # Kept partitions are the claim objects themselves; only grants are new values.
            claim_objects = np.fromiter(flat, dtype=object, count=n_claims)
            granted = np.fromiter(_topic_partitions(unassigned, names_of, offsets), dtype=object, count=len(unassigned))
            objects = np.concatenate((claim_objects[kept_claims], granted))[order].tolist()
            moved_objects = granted[moved].tolist()
        else:
            # Nothing kept (a fresh group): build the values directly in output order.
            objects = _topic_partitions(unassigned[order], names_of, offsets)
            moved_objects = _topic_partitions(unassigned[moved], names_of, offsets)
        result: dict[str, tuple[TopicPartition, ...]] = {}
        start = 0
        for m, c in zip(members, per_member.tolist()):
            result[m] = tuple(objects[start : start + c])
            start += c
        transferring = dict(zip(moved_objects, (members[i] for i in new_members[moved].tolist())))
    return StickyResult(result, transferring)


# ------------------------------------------------------------------------------------------
# 2.6's constrained builder (KAFKA-9987)


def _constrained_assign_2_6(inp: StickyInput, prior: PriorOwners) -> StickyResult:
    """``constrainedAssign`` as released in 2.6 (to 2.8): claim order, everyone keeps up to ``maxQuota``.

    Members over quota keep their first ``maxQuota`` claims regardless of how many members may
    end at ``maxQuota``; members left under ``minQuota`` when partitions run out steal the first
    partition of members at ``maxQuota`` (transferring). No rack awareness, no duplicate detection.
    """
    members = list(inp.members)
    ppt = inp.partitions_per_topic
    sorted_topics = sorted(ppt, key=java_string_key)
    unassigned: dict[TopicPartition, None] = {
        TopicPartition(t, p): None for t in sorted_topics for p in range(ppt[t])
    }  # a TreeSet by (topic, partition); dict keeps that order and removes in O(1)
    total = len(unassigned)
    n = len(members)
    # Java: (int) Math.floor(P / (double) N); an empty group gives NaN -> 0 and Infinity -> MAX_VALUE.
    min_quota = total // n if n else 0
    max_quota = -(-total // n) if n else 2**31 - 1
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
    all_revoked: set[TopicPartition] = set()
    transferring: dict[TopicPartition, str] = {}
    unfilled: list[str] = []
    max_capacity: list[str] = []
    min_capacity: list[str] = []
    for member in members:
        owned = prior.consumer_to_owned_partitions.get(member, ())
        for i, tp in enumerate(owned):
            tp = TopicPartition(tp[0], tp[1])
            if i < max_quota:
                assignment[member].append(tp)
                unassigned.pop(tp, None)
            else:
                all_revoked.add(tp)
        if len(owned) < min_quota:
            unfilled.append(member)
        else:
            if len(assignment[member]) == min_quota:
                min_capacity.append(member)
            if len(assignment[member]) == max_quota:
                max_capacity.append(member)
    unfilled.sort(key=java_string_key)
    pool = iter(list(unassigned))
    while unfilled and unassigned:
        still_unfilled = []
        exhausted = False
        for i, member in enumerate(unfilled):
            tp = next(pool, None)
            if tp is None:
                still_unfilled.extend(unfilled[i:])
                exhausted = True
                break
            assignment[member].append(tp)
            del unassigned[tp]
            if tp in all_revoked:
                transferring[tp] = member
            if len(assignment[member]) == min_quota:
                min_capacity.append(member)
            else:
                still_unfilled.append(member)
        unfilled = still_unfilled
        if exhausted:
            break
    for member in unfilled:
        remaining = min_quota - len(assignment[member])
        while remaining > 0:
            if not max_capacity:
                raise AssignorFailure(
                    "Some consumers are under capacity but all partitions have been assigned",
                    kafka_exception="IllegalStateException",
                )
            overloaded = max_capacity.pop(0)
            swapped = assignment[overloaded].pop(0)
            assignment[member].append(swapped)
            remaining -= 1
            transferring[swapped] = member
        min_capacity.append(member)
    for tp in unassigned:
        if not min_capacity:
            raise AssignorFailure(
                "Some partitions are unassigned but all consumers are at maximum capacity",
                kafka_exception="IllegalStateException",
            )
        member = min_capacity.pop(0)
        assignment[member].append(tp)
        if tp in all_revoked:
            transferring[tp] = member
    return StickyResult({m: tuple(v) for m, v in assignment.items()}, transferring)


# ------------------------------------------------------------------------------------------


def constrained_assign(inp: StickyInput, prior: PriorOwners, *, variant: str = "current") -> StickyResult:
    """The constrained path of ``variant`` (R15-R25; KAFKA_SEMANTICS §1.3 for the older builders).

    Kafka's throws come back as ``AssignorFailure`` with ``kafka_exception`` set: ``ArithmeticException``
    on an empty group (R14), ``IllegalStateException`` when the round robin runs out of members
    (R21, e.g. §10 K1) or the final check fails (R22). Those failures are reproduced, not fixed.
    """
    if variant == "2.6":
        return _constrained_assign_2_6(inp, prior)
    rules = rules_for_variant(variant)
    fast = _constrained_fast(inp, prior, rules)
    return fast if fast is not None else _constrained_reference(inp, prior, rules)
