"""The constrained path: every member subscribes to the same topics (docs/rules.md R15-R25, R48).

``AbstractStickyAssignor.ConstrainedAssignmentBuilder``, in three phases after the quotas (R15):

1. keep owned partitions up to ``min_quota`` / ``max_quota``, members in map order (R16-R17);
2. rack-aware round robin over members still under ``min_quota`` (R20, rack mode only);
3. plain round robin, first to ``min_quota``, then one more for as many members as
   ``expected_num_members_with_over_min_quota_partitions`` (R21), then the final check (R22).

``constrained_assign`` is the builder of the 3.x releases (``Release.constrained_builder``; 2.6's
own builder is ``reference/constrained_2_6.py``). It has two engines, joined by the one fallback
protocol of ``engines.py``:

* ``constrained_fast`` (here) works on integer partition ids with numpy, for the common case: no
  rack mode, every kept claim a real partition kept once. Partition ids follow Kafka's own
  iteration order (topics by ``String.compareTo``, then partition number), so "sorted" and "in id
  order" are the same thing. It raises ``Declined`` whenever a precondition fails.
* ``reference.constrained.constrained_reference`` follows Kafka line by line over Python lists
  and handles every case: rack mode, Kafka's failure modes (§10 K1: a claimed partition number
  past the topic's count desynchronises ``getUnassignedPartitions``' merge and re-assigns kept
  partitions or throws; a partition kept by two members does the same).

Which releases' rules apply (``Release.quota_order``, KAFKA-16277; ``Release.kafka_15170``) both
engines read from the release record. ``tests/test_constrained.py`` checks on generated groups
that both engines agree exactly.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from .._perf import gc_paused
from ..javaorder import java_string_key
from ..model import TopicPartition
from .engines import FAST, Declined, fast_or_reference
from .ownership import intern_claims, topic_layout
from .reference.constrained import NO_MORE_UNFILLED, constrained_reference, quotas
from .sticky_types import PriorOwners, QuotaOrder, StickyInput, StickyResult

if TYPE_CHECKING:
    from .releases import Release

__all__ = ["constrained_assign", "constrained_fast", "NO_MORE_UNFILLED"]

_new_tp = partial(tuple.__new__, TopicPartition)


def constrained_assign(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """The 3.x constrained path (R15-R25): the fast engine, or the transcription when it declines.

    Kafka's throws come back as ``AssignorFailure`` with ``kafka_exception`` set: ``ArithmeticException``
    on an empty group (R14), ``IllegalStateException`` when the round robin runs out of members
    (R21, e.g. §10 K1) or the final check fails (R22). Those failures are reproduced, not fixed.
    """
    return fast_or_reference(constrained_fast, constrained_reference, inp, prior, release)


# ------------------------------------------------------------------------------------------
# Fast engine (integer ids, numpy)


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


def constrained_fast(inp: StickyInput, prior: PriorOwners, release: Release) -> StickyResult:
    """The reference algorithm on dense partition ids; ``Declined`` when a precondition fails (engines.py).

    Preconditions: rack mode off, every kept claim names an existing partition of
    ``partitions_per_topic``, no partition kept twice. Then ``getUnassignedPartitions`` is a plain
    set difference and the round robin can be computed pass by pass instead of grant by grant:
    pass k serves, in ``under_min`` order, the members still missing at least k partitions.
    """
    if inp.rack_aware:
        raise Declined("rack-aware assignment (R48): the fast engine has no rack phase (R20)")
    members = list(inp.members)
    n = len(members)
    ppt = inp.partitions_per_topic
    total = sum(ppt.values())
    min_quota, max_quota, expected_over_min = quotas(total, n)

    sorted_topics = sorted(ppt, key=java_string_key)
    topic_index, counts, offsets = topic_layout(sorted_topics, ppt)
    owned_lists = [prior.consumer_to_owned_partitions.get(m, ()) for m in members]
    flat, lengths, tidx, part, pid = intern_claims(owned_lists, topic_index, counts, offsets)
    n_claims = len(flat)
    if n_claims:
        if (pid < 0).any():
            # §10 K1 (or a claim outside partitions_per_topic): only the transcription desynchronises like Kafka
            raise Declined("a kept claim is not a partition of partitions_per_topic (§10 K1)")
        seen = np.zeros(total, dtype=bool)
        seen[pid] = True
        if int(seen.sum()) != n_claims:
            raise Declined("a partition kept by two members (e.g. 3.5.1's owner-map overwrite)")
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
        if release.quota_order is QuotaOrder.PARTITION_THEN_TOPIC:  # R16 step 2 (KAFKA-16277), within each member
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
        # cannot happen with well-formed claims; the transcription raises R22's error
        raise Declined("fewer unassigned partitions than the members under min_quota lack (R22)")
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
        # Kafka throws NO_MORE_UNFILLED: the transcription does it
        raise Declined("more unassigned partitions than members able to take them (R21)")
    poll_members = at_min_queue[:extra]
    new_members = np.concatenate((pass_members, poll_members))

    # R25 transferring.
    new_revoked_from = revoked_from[unassigned]
    if release.kafka_15170:
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
    return StickyResult(result, transferring, engine=FAST)
