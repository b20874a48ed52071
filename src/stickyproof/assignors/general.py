"""The sticky assignors' general path (heterogeneous subscriptions), Kafka-exact (docs/rules.md R26-R32).

``general_fast`` reads as Kafka's ``GeneralAssignmentBuilder.build()`` split into its steps:

    intern_group                R26  walk order of partitions, member order, potential consumers (general_state.py)
    _prev_assignment            R27  raw claims of members below the max generation
    _assign_owned_partitions    R28  keep still-subscribed (and rack-matching) claims
    _initial_fill               R29  least-loaded subscriber per unassigned partition, rack pass first
    _set_aside_fixed            R31  topics with < 2 potential consumers, members that cannot change
    _balance                    R30, R32  the reassignment loop, ping-pong avoidance, score revert

Every iteration order that decides Kafka's answer is reproduced: the walk order (topic by number of
potential consumers, then name), the tree of members by (count, ``String.compareTo``), the
``HashSet<TopicPartition>`` order of ``PartitionMovements``, the first pass over newly assigned
partitions when nothing had to be revoked, and the list order of each member's answer (kept claims
in claim order, then grants and moves in the order they happened, R24).

Kafka hazards are reproduced, not repaired (§10): ``prevAssignment`` hands a partition back to a
lower-generation member without checking its subscription (K3); when that member was set aside as
fixed the lookup of its size fails, raised as ``AssignorFailure(kafka_exception=
"java.lang.NullPointerException")``. Kept claims on partition numbers past a topic's count (K1) or
claimed twice break the sorted merge Kafka uses; for such inputs the fast engine raises
``Declined`` and ``general_run`` runs ``reference/general.py`` (the literal transcription) instead:
the one fallback protocol of ``engines.py``, recorded on the result.

Speed: integer ids, one heap per class of members with equal subscriptions, an incremental
``isBalanced`` (``general_state.BalanceTracker``), copy-on-write snapshots for the revert.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from typing import Callable, Iterable

import numpy as np

from .._perf import gc_paused
from ..errors import AssignorFailure
from ..model import DEFAULT_GENERATION
from .engines import FAST, Declined, fast_or_reference
from .general_state import (
    BalanceTracker,
    DenseGroup,
    MemberHeaps,
    Movements,
    balance_score,
    intern_group,
    to_partitions,
)
from .reference.general import NO_SUCH_ELEMENT, NPE, reference_run
from .sticky_types import GeneralRun, PriorOwners, StickyInput, StickyResult

__all__ = ["general_assign", "general_run", "general_fast", "GeneralRun"]


def general_assign(inp: StickyInput, prior: PriorOwners) -> StickyResult:
    """``GeneralAssignmentBuilder.build()`` (R26-R32); ``partitions_transferring_ownership`` is None (R34)."""
    return general_run(inp, prior).result


def general_run(inp: StickyInput, prior: PriorOwners) -> GeneralRun:
    """The fast engine, or the transcription when it declines (``engines.fast_or_reference``)."""
    return fast_or_reference(general_fast, reference_run, inp, prior)


# ------------------------------------------------------------------------------------------
# The steps


def _prev_assignment(inp: StickyInput, prior: PriorOwners, g: DenseGroup) -> dict[int, int]:
    """R27 ``prepopulateCurrentAssignments``: partition -> member, from the raw claims (as decoded, not
    filtered by subscription) of every member whose generation is below ``maxGeneration``; absent
    counts as -1; the highest generation wins, the first seen on ties. Claims that are not real
    partitions can never be looked up, so they are skipped."""
    max_generation = prior.max_generation
    prev: dict[int, tuple[int, int]] = {}
    base_by_name, count_by_name = g.base_by_name, g.count_by_name
    for i, mem in enumerate(g.members):
        md = inp.member_data.get(mem)
        if md is None or not md.partitions:
            continue
        gen = DEFAULT_GENERATION if md.generation is None else md.generation
        if not gen < max_generation:
            continue
        for tp in md.partitions:
            base = base_by_name.get(tp[0])
            if base is None or not 0 <= tp[1] < count_by_name[tp[0]]:
                continue
            pid = base + tp[1]
            seen = prev.get(pid)
            if seen is None or gen > seen[1]:
                prev[pid] = (i, gen)
    return {pid: who for pid, (who, _gen) in prev.items()}


@dataclass
class _Assignment:
    lists: list[list[int]]
    owner: list[int]
    counts: list[int]
    revocation_required: bool
    unassigned: np.ndarray


def _assign_owned_partitions(inp: StickyInput, prior: PriorOwners, g: DenseGroup) -> _Assignment:
    """R28 ``assignOwnedPartitions``: keep each kept claim (R5-R10 already ran) whose topic the member
    still subscribes to and, in rack mode, whose replicas include the member's rack; dropping one for
    either reason sets ``revocationRequired``. Claims on topics outside ``partitionsPerTopic`` are
    dropped silently (R5). Vectorised over all claims at once; each member's kept list keeps claim order."""
    m, total_partitions = len(g.members), g.num_partitions
    owned = prior.consumer_to_owned_partitions
    per_member = [owned.get(mem) or () for mem in g.members]
    lens = np.fromiter(map(len, per_member), np.int64, m)
    n = int(lens.sum())
    empty = _Assignment([[] for _ in range(m)], [], [0] * m, False, np.arange(total_partitions, dtype=np.int64))
    if n == 0:
        return empty
    claims = list(chain.from_iterable(per_member))
    topics = list(map(itemgetter(0), claims))
    parts = np.fromiter(map(itemgetter(1), claims), np.int64, n)
    topic_ids = {t: k for k, t in enumerate(g.topic_names)}
    tid = np.fromiter(map(topic_ids.get, topics, repeat(-1)), np.int64, n)
    known = tid >= 0
    base = np.asarray(g.topic_base + [0], dtype=np.int64)[tid]
    count = np.asarray(g.topic_count + [0], dtype=np.int64)[tid]
    if np.any(known & ((parts < 0) | (parts >= count))):
        raise Declined("a claim past the partition count (K1)")
    pid = np.where(known, base + parts, -1)
    if np.any(known) and np.bincount(pid[known], minlength=total_partitions).max() > 1:
        raise Declined("a partition kept by two members")
    # subscription check on the raw lists (a topic outside partitionsPerTopic never gets here)
    rows: dict[tuple, int] = {}
    row_of_member = []
    for mem in g.members:
        raw = tuple(inp.subscriptions.get(mem, ()))
        row_of_member.append(rows.setdefault(raw, len(rows)))
    subscribed = np.zeros((len(rows), len(g.topic_names) + 1), dtype=bool)
    for raw, row in rows.items():
        for t in raw:
            k = topic_ids.get(t)
            if k is not None:
                subscribed[row, k] = True
    member_of_claim = np.repeat(np.arange(m), lens)
    keep = known & subscribed[np.asarray(row_of_member, dtype=np.int64)[member_of_claim], tid]
    if g.partition_racks is not None and any(r is not None for r in g.consumer_rack):
        racks, member_rack = g.partition_racks, g.consumer_rack
        owner_of_claim = member_of_claim.tolist()
        for k in np.flatnonzero(keep).tolist():
            rack = member_rack[owner_of_claim[k]]
            if rack is not None and rack not in racks[pid[k]]:
                keep[k] = False
    revocation_required = bool(np.any(known & ~keep))
    kept_pids = pid[keep]
    kept_counts = np.bincount(member_of_claim[keep], minlength=m)
    lists = [chunk.tolist() for chunk in np.split(kept_pids, np.cumsum(kept_counts)[:-1])]
    is_kept = np.zeros(total_partitions, dtype=bool)
    is_kept[kept_pids] = True
    return _Assignment(lists, [], kept_counts.tolist(), revocation_required, np.flatnonzero(~is_kept))


def _member_classes(g: DenseGroup) -> tuple[list[int], int, list[list[int]], list[str | None]]:
    """Members with the same subscribed topics (and rack) form a class; per topic, the classes subscribing."""
    class_of: dict[tuple, int] = {}
    member_class = []
    class_rack: list[str | None] = []
    topic_classes: list[list[int]] = [[] for _ in g.topic_names]
    for i, subs in enumerate(g.subscribed):
        key = (tuple(subs), g.consumer_rack[i])
        c = class_of.get(key)
        if c is None:
            c = class_of[key] = len(class_of)
            class_rack.append(g.consumer_rack[i])
            for t in subs:
                topic_classes[t].append(c)
        member_class.append(c)
    return member_class, len(class_of), topic_classes, class_rack


def _initial_fill(g: DenseGroup, a: _Assignment, heaps: MemberHeaps, topic_classes: list[list[int]],
                  class_rack: list[str | None]) -> None:
    """R29 ``maybeAssign``: each unassigned partition, in walk order, goes to the first member of the tree
    that subscribes to its topic; in rack mode a first pass only accepts members whose rack holds a
    replica (members without a rack always match), a second pass places the rest.

    During the fill every class heap holds exactly one entry per member, its current key (grants
    replace the top), so tops need no validity check. Runs of topics whose potential consumers form
    a single class are placed in bulk (``_water_fill``). Sets ``a.owner`` and ``a.counts`` at the end."""
    lists, topic_of = a.lists, g.topic_of
    racks = g.partition_racks
    hs, m, mor, key = heaps.heaps, heaps.m, heaps.member_of_rank, heaps.key
    heapreplace = heapq.heapreplace
    remaining = a.unassigned
    if racks is not None and any(r is not None for r in g.consumer_rack):
        left = []
        for pid in remaining.tolist():
            classes = topic_classes[topic_of[pid]]
            replicas = racks[pid]
            best, best_cls = -1, -1
            for c in classes:
                r = class_rack[c]
                if r is None or r in replicas:
                    k = hs[c][0]
                    if best < 0 or k < best:
                        best, best_cls = k, c
            if best < 0:
                left.append(pid)
                continue
            i = mor[best % m]
            key[i] = best + m
            heapreplace(hs[best_cls], best + m)
            lists[i].append(pid)
        remaining = np.asarray(left, dtype=np.int64)
    bounds = np.searchsorted(remaining, np.asarray(g.topic_base + [g.num_partitions], dtype=np.int64)).tolist()
    num_topics = len(g.topic_names)
    t = 0
    while t < num_topics:
        classes = topic_classes[t]
        lo, hi = bounds[t], bounds[t + 1]
        if len(classes) == 1:
            # one run over the following topics whose potential consumers are the same single class
            end = t + 1
            while end < num_topics and topic_classes[end] == classes:
                end += 1
            hi = bounds[end]
            if hi > lo:
                _water_fill(heaps, classes[0], remaining[lo:hi], lists)
            t = end
            continue
        if classes and hi > lo:
            for pid in remaining[lo:hi].tolist():
                best, best_cls = -1, -1
                for c in classes:
                    k = hs[c][0]
                    if best < 0 or k < best:
                        best, best_cls = k, c
                i = mor[best % m]
                key[i] = best + m
                heapreplace(hs[best_cls], best + m)
                lists[i].append(pid)
        t += 1
    lens = [len(lst) for lst in lists]
    owner = np.full(g.num_partitions, -1, dtype=np.int64)
    owner[np.fromiter(chain.from_iterable(lists), np.int64, sum(lens))] = np.repeat(np.arange(len(lists)), lens)
    a.owner = owner.tolist()
    a.counts = lens


def _water_fill(heaps: MemberHeaps, cls: int, pids: np.ndarray, lists: list[list[int]]) -> None:
    """R29 for a run of partitions that only one class of members can take, in bulk.

    Repeatedly giving the next partition to the class member with the smallest (count, rank) fills
    level by level: at level L every member whose count was at most L gets one partition, in rank
    order. The recipients are computed level by level (whole rounds at once once every member is
    in), then each member's partitions are appended in walk order.
    """
    m, mor = heaps.m, heaps.member_of_rank
    keys = sorted(heaps.heaps[cls])
    total = len(pids)
    picks: list[int] = []  # ranks, one per partition
    eligible: list[int] = []
    j, n = 0, len(keys)
    level = keys[0] // m
    while len(picks) < total:
        while j < n and keys[j] // m <= level:
            bisect.insort(eligible, keys[j] % m)
            j += 1
        need = total - len(picks)
        if j == n and need >= len(eligible):
            rounds = need // len(eligible)
            picks.extend(eligible * rounds)
            level += rounds
            continue
        picks.extend(eligible[:need])
        level += 1
    recipients = np.asarray(picks, dtype=np.int64)
    order = np.argsort(recipients, kind="stable")
    by_rank = recipients[order]
    pid_array = pids[order]
    cuts = (np.flatnonzero(np.diff(by_rank)) + 1).tolist()
    key = heaps.key
    for lo, hi in zip([0] + cuts, cuts + [total]):
        i = mor[int(by_rank[lo])]
        lists[i].extend(pid_array[lo:hi].tolist())
        key[i] += (hi - lo) * m
    heap = [key[mor[k % m]] for k in keys]
    heapq.heapify(heap)
    heaps.heaps[cls] = heap


def _set_aside_fixed(g: DenseGroup, a: _Assignment, heaps: MemberHeaps) -> list[int]:
    """R31: a member is fixed when it holds as many partitions as it could and none of a topic with two or
    more potential consumers; it leaves the tree. Returns the members that stay."""
    reassignable_topic = [n >= 2 for n in g.potential_count]
    topic_of = g.topic_of
    active = []
    for i in range(len(g.members)):
        if a.counts[i] < g.max_assignment[i] or any(reassignable_topic[topic_of[pid]] for pid in a.lists[i]):
            active.append(i)
            continue
        heaps.fixed[i] = 1
        if any(reassignable_topic[t] for t in g.subscribed[i]):
            # unreachable from well-formed input: Kafka would dereference this member's missing list
            raise Declined("a fixed member subscribes to a reassignable topic")
    return active


def _walk(g: DenseGroup, pids: np.ndarray | None):
    """Reassignable partitions in walk order, as a factory of fresh iterators (one per pass):
    ``sortedAllPartitions`` or ``unassignedPartitions``, minus the partitions of fixed topics (R31)."""
    reassignable = [n >= 2 for n in g.potential_count]
    if pids is None:
        spans = [(g.topic_base[t], g.topic_base[t] + g.topic_count[t]) for t in range(len(g.topic_names)) if reassignable[t]]
        return lambda: chain.from_iterable(range(lo, hi) for lo, hi in spans)
    topic_of_pid = np.searchsorted(np.asarray(g.topic_base, dtype=np.int64), pids, side="right") - 1
    chosen = pids[np.asarray(reassignable, dtype=bool)[topic_of_pid]].tolist() if len(pids) else []
    return lambda: iter(chosen)


class _Balancer:
    """R30/R32 ``balance()`` after the fill: the reassignment loop with copy-on-write snapshots for the revert."""

    def __init__(self, g: DenseGroup, a: _Assignment, heaps: MemberHeaps, topic_classes: list[list[int]],
                 active: list[int], prev: dict[int, int]) -> None:
        self.g, self.a, self.heaps, self.topic_classes, self.prev = g, a, heaps, topic_classes, prev
        self.active = active
        self.movements = Movements(g.topic_of, g.topic_names, g.topic_base)
        self.tracker = BalanceTracker(active, a.counts, g.max_assignment, g.subscribed, a.lists, g.topic_of,
                                      len(g.topic_names))
        self.snapshot: dict[int, list[int]] = {}

    def perform_reassignments(self, reassignable: Callable[[], Iterable[int]]) -> bool:
        """``performReassignments``: walk until balanced; repeat while a walk moved something."""
        performed = False
        g, a, heaps, prev, tracker = self.g, self.a, self.heaps, self.prev, self.tracker
        owner, counts, topic_of, topic_classes, fixed = a.owner, a.counts, g.topic_of, self.topic_classes, heaps.fixed
        m = heaps.m
        while True:
            modified = False
            for pid in reassignable():
                if tracker.is_balanced():
                    break
                c = owner[pid]
                p = prev.get(pid)
                if p is not None:
                    if fixed[p]:
                        raise AssignorFailure(
                            f"prevAssignment names {g.members[p]!r} for {g.topic_names[topic_of[pid]]}-"
                            f"{pid - g.topic_base[topic_of[pid]]}, but that member was set aside as fixed (R31, K3)",
                            kafka_exception=NPE,
                        )
                    if counts[c] > counts[p] + 1:
                        self._reassign(pid, p)
                        performed = modified = True
                        continue
                best = heaps.least(topic_classes[topic_of[pid]])
                if best >= 0 and counts[c] > best // m + 1:
                    self._reassign(pid, heaps.member(best))
                    performed = modified = True
            if not modified:
                return performed

    def _reassign(self, pid: int, new: int) -> None:
        """``reassignPartition`` + ``processPartitionMovement``."""
        a = self.a
        actual = self.movements.actual_partition_to_be_moved(pid, a.owner[pid], new)
        old = a.owner[actual]
        if old == new or self.heaps.fixed[old] or old < 0:
            raise Declined("a move between inconsistent owners")
        self.movements.move(actual, old, new)
        snap = self.snapshot
        if old not in snap:
            snap[old] = a.lists[old][:]
        if new not in snap:
            snap[new] = a.lists[new][:]
        a.lists[old].remove(actual)
        a.lists[new].append(actual)
        a.owner[actual] = new
        self.tracker.moved(actual, old, new)
        self.heaps.changed(old, -1)
        self.heaps.changed(new, +1)

    def revert_if_not_better(self) -> bool:
        """Keep the balancing only if the balance score strictly improved (R32)."""
        counts = self.a.counts
        before = [len(self.snapshot[i]) if i in self.snapshot else counts[i] for i in self.active]
        if balance_score(counts[i] for i in self.active) < balance_score(before):
            return False
        for i, lst in self.snapshot.items():
            self.a.lists[i] = lst
        return True


def _balance(g: DenseGroup, a: _Assignment, heaps: MemberHeaps, topic_classes: list[list[int]], active: list[int],
             prev: dict[int, int], initializing: bool) -> tuple[bool, Movements]:
    """R32 ``balance()`` after the fill and the set-asides: new partitions first when nothing had to be
    revoked (those moves are never reverted on their own), then every reassignable partition; revert
    to the post-fill state unless built from scratch or the score strictly improved."""
    b = _Balancer(g, a, heaps, topic_classes, active, prev)
    if not active:
        if any(n >= 2 and c > 0 for n, c in zip(g.potential_count, g.topic_count)):
            raise Declined("no member left in the tree")  # Kafka: TreeSet.first() on an empty set
        return False, b.movements
    if not a.revocation_required:
        b.perform_reassignments(_walk(g, a.unassigned))
    performed = b.perform_reassignments(_walk(g, None))
    reverted = False
    if not initializing and performed:
        reverted = b.revert_if_not_better()
    return reverted, b.movements


def general_fast(inp: StickyInput, prior: PriorOwners) -> GeneralRun:
    """The fast engine; raises ``Declined`` for input outside the well-formed space (then ``reference_run``)."""
    if not inp.members:
        raise AssignorFailure("general path with no members", kafka_exception=NO_SUCH_ELEMENT)
    # The collector is paused while a million small objects are built; the working state is freed
    # (by reference counting) before it resumes, so only the answer is ever scanned.
    with gc_paused():
        return _steps(inp, prior)


def _steps(inp: StickyInput, prior: PriorOwners) -> GeneralRun:
    g = intern_group(inp)
    prev = _prev_assignment(inp, prior, g)
    a = _assign_owned_partitions(inp, prior, g)
    initializing = not any(a.counts)
    member_class, num_classes, topic_classes, class_rack = _member_classes(g)
    heaps = MemberHeaps(len(g.members), g.rank, g.member_of_rank, member_class, num_classes, a.counts)
    _initial_fill(g, a, heaps, topic_classes, class_rack)
    active = _set_aside_fixed(g, a, heaps)
    reverted, movements = _balance(g, a, heaps, topic_classes, active, prev, initializing)
    return GeneralRun(
        result=StickyResult(assignment=to_partitions(g, a.lists), partitions_transferring_ownership=None, engine=FAST),
        movements=movements.pairs_by_topic(g.members),
        revocation_required=a.revocation_required,
        initializing=initializing,
        reverted=reverted,
    )
