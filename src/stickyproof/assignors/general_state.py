"""Working state of the fast general path (``general.py``): dense ids, member heaps, movements, balance tracker.

Kafka keeps the general path's state in string-keyed maps and a ``TreeSet`` of member ids ordered
by (assigned count, ``String.compareTo``). Here everything is an integer:

* partition ids are positions in Kafka's walk order (R26: topics by number of potential consumers,
  then name; then partition number), so "sorted partitions" is ``range(P)`` and a topic's
  partitions are one contiguous block;
* member ids are positions in ``inp.members`` (Java ``HashMap`` order, N1); a member's tree key is
  ``count * M + rank`` with ``rank`` its position in ``String.compareTo`` order, so one integer
  compares exactly like Kafka's ``SubscriptionComparator`` and ``key % M`` gives the member back;
* members with the same subscribed topic set (and, in rack mode, the same rack) share one heap of
  keys: "the first member of the tree that subscribes to t" is the smallest top over the heaps of
  the classes that subscribe to t, which costs the number of classes instead of a tree walk past
  every member that does not subscribe to t.

``intern_group`` builds the dense ids (``DenseGroup``) once per call and ``to_partitions`` converts back,
the one conversion point each way. Nothing here outlives one call of ``general_run``.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Iterable, Sequence

import numpy as np

from ..javaorder import hashmap_capacity, java_string_key, spread, topic_partition_hash
from ..model import TopicPartition
from .sticky_types import StickyInput

__all__ = ["DenseGroup", "intern_group", "to_partitions", "MemberHeaps", "Movements", "BalanceTracker", "balance_score"]


@dataclass
class DenseGroup:
    """Dense ids for one call (R26). Partition ids are positions in Kafka's walk order."""

    members: tuple[str, ...]
    rank: list[int]
    member_of_rank: list[int]
    topic_names: list[str]
    topic_base: list[int]
    topic_count: list[int]
    topic_of: list[int]
    base_by_name: dict[str, int]
    count_by_name: dict[str, int]
    potential_count: list[int]
    subscribed: list[list[int]]
    max_assignment: list[int]
    num_partitions: int
    consumer_rack: list[str | None]
    partition_racks: list[frozenset[str]] | None


def intern_group(inp: StickyInput) -> DenseGroup:
    """R26: ``topic2AllPotentialConsumers`` (a topic listed twice counts twice, as in Kafka's lists),
    topics by (potential consumers, ``String.compareTo``), partitions by number within a topic.
    Members usually share a few subscription lists: each distinct list is interned once."""
    ppt = inp.partitions_per_topic
    members = tuple(inp.members)
    m = len(members)
    by_rank = sorted(range(m), key=lambda i: java_string_key(members[i]))
    rank = [0] * m
    for r, i in enumerate(by_rank):
        rank[i] = r
    raw = [tuple(inp.subscriptions.get(mem, ())) for mem in members]
    distinct = {sub: [t for t in sub if t in ppt] for sub in set(raw)}
    npot: dict[str, int] = dict.fromkeys(ppt, 0)
    for sub, times in Counter(raw).items():
        for t in distinct[sub]:
            npot[t] += times
    names = sorted(ppt, key=lambda t: (npot[t], java_string_key(t)))
    tid = {t: k for k, t in enumerate(names)}
    base, count, topic_of = [], [], []
    start = 0
    for k, t in enumerate(names):
        n = ppt[t]
        base.append(start)
        count.append(n)
        topic_of.extend([k] * n)
        start += n
    total = start
    max_by_sub = {
        sub: total if len(lst) == len(ppt) else sum(ppt[t] for t in lst) for sub, lst in distinct.items()
    }
    subscribed_by_sub = {sub: sorted({tid[t] for t in lst}) for sub, lst in distinct.items()}
    rack_aware = inp.rack_aware
    consumer_rack = [(inp.member_rack.get(mem) or None) if rack_aware else None for mem in members]
    partition_racks = None
    if rack_aware:
        partition_racks = []
        for t in names:
            racks = inp.partition_racks.get(t, ())
            partition_racks.extend(frozenset(racks[p]) if p < len(racks) else frozenset() for p in range(ppt[t]))
    return DenseGroup(
        members=members,
        rank=rank,
        member_of_rank=by_rank,
        topic_names=names,
        topic_base=base,
        topic_count=count,
        topic_of=topic_of,
        base_by_name={t: base[k] for k, t in enumerate(names)},
        count_by_name=dict(ppt),
        potential_count=[npot[t] for t in names],
        subscribed=[subscribed_by_sub[sub] for sub in raw],
        max_assignment=[max_by_sub[sub] for sub in raw],
        num_partitions=total,
        consumer_rack=consumer_rack,
        partition_racks=partition_racks,
    )


def to_partitions(g: DenseGroup, lists: list[list[int]]) -> dict[str, tuple[TopicPartition, ...]]:
    """Back from ids to ``TopicPartition`` in one place, each member's list in Kafka's order (R24)."""
    tps: list[TopicPartition] = []
    new = tuple.__new__
    for t, name in enumerate(g.topic_names):
        n = g.topic_count[t]
        tps.extend(map(new, repeat(TopicPartition, n), zip(repeat(name, n), range(n))))
    return {mem: tuple([tps[pid] for pid in lists[i]]) for i, mem in enumerate(g.members)}


class MemberHeaps:
    """Kafka's ``sortedCurrentSubscriptions`` split into one lazy min-heap of keys per member class.

    A heap entry is valid while it equals the member's current key and the member is not fixed;
    stale entries are dropped when they reach the top.
    """

    def __init__(self, num_members: int, rank: Sequence[int], member_of_rank: Sequence[int],
                 member_class: Sequence[int], num_classes: int, counts: Sequence[int]) -> None:
        self.m = max(num_members, 1)
        self.rank = rank
        self.member_of_rank = member_of_rank
        self.member_class = member_class
        self.key = [counts[i] * self.m + rank[i] for i in range(num_members)]
        self.fixed = bytearray(num_members)
        self.heaps: list[list[int]] = [[] for _ in range(num_classes)]
        for i in range(num_members):
            self.heaps[member_class[i]].append(self.key[i])
        for h in self.heaps:
            heapq.heapify(h)

    def top(self, cls: int) -> int:
        """The smallest valid key of a class, or -1."""
        h = self.heaps[cls]
        key, fixed, m, mor = self.key, self.fixed, self.m, self.member_of_rank
        while h:
            k = h[0]
            i = mor[k % m]
            if key[i] == k and not fixed[i]:
                return k
            heapq.heappop(h)
        return -1

    def least(self, classes: Iterable[int]) -> int:
        """Smallest valid key over some classes (Kafka: the first member of the tree among their members), or -1."""
        best = -1
        for c in classes:
            k = self.top(c)
            if k >= 0 and (best < 0 or k < best):
                best = k
        return best

    def member(self, key: int) -> int:
        return self.member_of_rank[key % self.m]

    def grant_top(self, key: int) -> int:
        """The member holding valid top ``key`` of its class gets one partition more; returns the member."""
        i = self.member_of_rank[key % self.m]
        new = key + self.m
        self.key[i] = new
        heapq.heapreplace(self.heaps[self.member_class[i]], new)
        return i

    def changed(self, i: int, delta: int) -> None:
        """A member's count changed by ``delta`` outside the fill: push its new key (old entries go stale)."""
        new = self.key[i] + delta * self.m
        self.key[i] = new
        heapq.heappush(self.heaps[self.member_class[i]], new)


class _PidHashSet:
    """``HashSet<TopicPartition>`` iteration order over partition ids (N1): bucket index, then insertion order."""

    __slots__ = ("seq", "capacity")

    def __init__(self) -> None:
        self.seq: dict[int, int] = {}
        self.capacity = hashmap_capacity(0)


class Movements:
    """``PartitionMovements``: net moves of this run (src, dst) per partition, grouped by topic and pair.

    ``actual_partition_to_be_moved`` is Kafka's ping-pong avoidance (R32): a move A->B of a partition
    of topic t becomes the return of a partition of t that earlier moved B->A, the first one in
    Java ``HashSet`` order.
    """

    def __init__(self, topic_of: Sequence[int], topic_names: Sequence[str], topic_base: Sequence[int]) -> None:
        self.topic_of = topic_of
        self.topic_names = topic_names
        self.topic_base = topic_base
        self.moves: dict[int, tuple[int, int]] = {}
        self.by_topic: dict[int, dict[tuple[int, int], _PidHashSet]] = {}
        self._seq = 0
        self._hash: dict[int, int] = {}

    def _bucket_hash(self, pid: int) -> int:
        h = self._hash.get(pid)
        if h is None:
            t = self.topic_of[pid]
            h = spread(topic_partition_hash(self.topic_names[t], pid - self.topic_base[t]))
            self._hash[pid] = h
        return h

    def _remove_record(self, pid: int) -> tuple[int, int]:
        pair = self.moves.pop(pid)
        t = self.topic_of[pid]
        for_topic = self.by_topic[t]
        s = for_topic[pair]
        del s.seq[pid]
        if not s.seq:
            del for_topic[pair]
            if not for_topic:
                del self.by_topic[t]
        return pair

    def _add_record(self, pid: int, pair: tuple[int, int]) -> None:
        self.moves[pid] = pair
        for_topic = self.by_topic.setdefault(self.topic_of[pid], {})
        s = for_topic.get(pair)
        if s is None:
            s = for_topic[pair] = _PidHashSet()
        s.seq[pid] = self._seq
        self._seq += 1
        if len(s.seq) > s.capacity * 3 // 4:
            s.capacity = hashmap_capacity(len(s.seq))

    def move(self, pid: int, old: int, new: int) -> None:
        if pid in self.moves:
            src, _dst = self._remove_record(pid)
            if src != new:
                self._add_record(pid, (src, new))
        else:
            self._add_record(pid, (old, new))

    def actual_partition_to_be_moved(self, pid: int, old: int, new: int) -> int:
        for_topic = self.by_topic.get(self.topic_of[pid])
        if for_topic is None:
            return pid
        earlier = self.moves.get(pid)
        if earlier is not None:
            old = earlier[0]
        s = for_topic.get((new, old))
        if s is None:
            return pid
        mask = s.capacity - 1
        return min(s.seq, key=lambda p: (self._bucket_hash(p) & mask, s.seq[p]))

    def pairs_by_topic(self, member_names: Sequence[str]) -> dict[str, frozenset[tuple[str, str]]]:
        return {
            self.topic_names[t]: frozenset((member_names[a], member_names[b]) for a, b in pairs)
            for t, pairs in self.by_topic.items()
        }


def balance_score(counts: Iterable[int]) -> int:
    """``getBalanceScore``: sum over member pairs of |size difference|, from the sorted sizes in O(M log M)."""
    xs = sorted(counts)
    n = len(xs)
    return sum(x * (2 * i - n + 1) for i, x in enumerate(xs))


class BalanceTracker:
    """R30 ``isBalanced`` kept up to date move by move instead of recomputed over every partition.

    Kafka: unbalanced iff some member C of the tree that does not hold as many partitions as it
    could (``count != getMaxAssignmentSize``) subscribes to a topic t of which some partition is
    held by a member with at least ``count(C) + 2``. Per topic that is one comparison,
    ``max holder count(t) > min count of unsaturated subscribers(t) + 1`` (C itself never
    satisfies the inequality, so "held by another member" needs no special case). The tracker keeps,
    per topic, the multiset of holder counts and of unsaturated-subscriber counts, and the number of
    violating topics; a move touches only the topics the two members hold or subscribe to.
    The quick exit (tree min >= max - 1) is kept separately from a histogram of member counts and
    the per-topic part is built only the first time the quick exit fails.
    """

    def __init__(self, members: Sequence[int], counts: list[int], max_assignment: Sequence[int],
                 subscribed: Sequence[Sequence[int]], lists: Sequence[list[int]], topic_of: Sequence[int],
                 num_topics: int) -> None:
        self.counts = counts
        self.max_assignment = max_assignment
        self.subscribed = subscribed
        self.lists = lists
        self.topic_of = topic_of
        self.num_topics = num_topics
        self.members = list(members)
        self.hist: dict[int, int] = {}
        for i in self.members:
            self.hist[counts[i]] = self.hist.get(counts[i], 0) + 1
        self.lo = min(self.hist) if self.hist else 0
        self.hi = max(self.hist) if self.hist else 0
        self.built = False

    # -- global min/max (the quick exit) --------------------------------------------------------

    def _hist_move(self, a: int, b: int) -> None:
        h = self.hist
        h[a] -= 1
        h[b] = h.get(b, 0) + 1
        if b > self.hi:
            self.hi = b
        if b < self.lo:
            self.lo = b
        if h[a] == 0:
            del h[a]
            if a == self.lo:
                self.lo = min(h)
            if a == self.hi:
                self.hi = max(h)

    # -- per-topic part ---------------------------------------------------------------------

    def _build(self) -> None:
        """Per-topic multisets from the current state, in bulk (one ``np.unique`` per multiset)."""
        self.built = True
        n = self.num_topics
        members = np.asarray(self.members, dtype=np.int64)
        counts = np.asarray(self.counts, dtype=np.int64)
        lens = np.asarray([len(self.lists[i]) for i in self.members], dtype=np.int64)
        pids = np.fromiter(chain.from_iterable(self.lists[i] for i in self.members), np.int64, int(lens.sum()))
        topic_of = np.asarray(self.topic_of, dtype=np.int64)
        # hold[i]: topic -> partitions of it held by member i
        pairs, held = np.unique(np.repeat(members, lens) * n + topic_of[pids], return_counts=True)
        pair_member, pair_topic = pairs // n, pairs % n
        self.hold = {i: {} for i in self.members}
        cuts = (np.flatnonzero(np.diff(pair_member)) + 1).tolist()
        for lo, hi in zip([0] + cuts, cuts + [len(pairs)]):
            if hi > lo:
                self.hold[int(pair_member[lo])] = dict(zip(pair_topic[lo:hi].tolist(), held[lo:hi].tolist()))
        self.holders = self._multisets(pair_topic, counts[pair_member])
        # unsaturated subscribers (count != getMaxAssignmentSize) per subscribed topic
        unsat = [i for i in self.members if self.counts[i] != self.max_assignment[i]]
        sub_lens = [len(self.subscribed[i]) for i in unsat]
        sub_topics = np.fromiter(chain.from_iterable(self.subscribed[i] for i in unsat), np.int64, sum(sub_lens))
        self.unsat = self._multisets(sub_topics, np.repeat(counts[np.asarray(unsat, dtype=np.int64)], sub_lens))
        self.violating = 0
        self.viol = bytearray(n)
        for t in range(n):
            if self._violates(t):
                self.viol[t] = 1
                self.violating += 1

    def _multisets(self, topics: np.ndarray, values: np.ndarray) -> list[dict[int, int]]:
        """Per topic, a count -> multiplicity dict of ``values`` (``topics[k]`` owns ``values[k]``)."""
        out: list[dict[int, int]] = [{} for _ in range(self.num_topics)]
        if len(topics):
            span = int(values.max()) + 1
            keys, times = np.unique(topics * span + values, return_counts=True)
            for key, k in zip(keys.tolist(), times.tolist()):
                out[key // span][key % span] = k
        return out

    def _violates(self, t: int) -> bool:
        h, u = self.holders[t], self.unsat[t]
        return bool(h) and bool(u) and max(h) > min(u) + 1

    def is_balanced(self) -> bool:
        if self.lo >= self.hi - 1:
            return True
        if not self.built:
            self._build()
        return self.violating == 0

    def moved(self, pid: int, old: int, new: int) -> None:
        """Partition ``pid`` went from ``old`` to ``new``; the caller has not yet changed ``counts``."""
        counts = self.counts
        if not self.built:
            self._hist_move(counts[old], counts[old] - 1)
            self._hist_move(counts[new], counts[new] + 1)
            counts[old] -= 1
            counts[new] += 1
            return
        holders, unsat, hold, max_assignment = self.holders, self.unsat, self.hold, self.max_assignment
        t = self.topic_of[pid]
        # the moved partition's topic: old may stop holding it, new may start
        held = hold[old]
        if held[t] == 1:
            del held[t]
            _remove(holders[t], counts[old])
        else:
            held[t] -= 1
        held = hold[new]
        if t in held:
            held[t] += 1
        else:
            held[t] = 1
            d = holders[t]
            d[counts[new]] = d.get(counts[new], 0) + 1
        touched = {t}
        for x, delta in ((old, -1), (new, 1)):
            c = counts[x]
            c2 = c + delta
            for u in hold[x]:
                d = holders[u]
                _remove(d, c)
                d[c2] = d.get(c2, 0) + 1
            touched.update(hold[x])
            was, now = c != max_assignment[x], c2 != max_assignment[x]
            if was or now:
                for u in self.subscribed[x]:
                    d = unsat[u]
                    if was:
                        _remove(d, c)
                    if now:
                        d[c2] = d.get(c2, 0) + 1
                touched.update(self.subscribed[x])
            self._hist_move(c, c2)
            counts[x] = c2
        viol = self.viol
        for u in touched:
            h, un = holders[u], unsat[u]
            v = 1 if h and un and max(h) > min(un) + 1 else 0
            if v != viol[u]:
                viol[u] = v
                self.violating += 1 if v else -1


def _remove(d: dict[int, int], c: int) -> None:
    if d[c] == 1:
        del d[c]
    else:
        d[c] -= 1
