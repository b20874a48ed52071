"""``UniformHeterogeneousAssignmentBuilder`` (Kafka 4.x, as rewritten by KAFKA-17710), ported.

Members subscribe to different topics. Each member keeps its whole current target on the topics it
still subscribes to; then, topic by topic (most partitions per subscriber first), the unassigned
partitions go to the topic's least-loaded subscriber by *total* target size; then a balancing pass
over the topics with two or more subscribers moves partitions from a topic's most-loaded
subscribers (total size) to its least-loaded ones until their totals differ by at most one,
repeating over all topics until a full round moves nothing or 16 rounds have passed. Kafka claims
no optimum: the cap and the per-topic greed are the point of grading it.

Ties are Kafka's: members by size, then by their index in ``memberIds()`` iteration order; topics
by partitions per subscriber (descending, as doubles), subscriber count, then ``Uuid.compareTo``;
partitions moved away from a member are its highest-numbered ones on that topic.
"""

from __future__ import annotations

from itertools import compress
from typing import Sequence

import numpy as np

from .spec import ConsumerGroupSpec, TopicId

try:
    import cython
except ImportError:  # no Cython at run time: the pure-Python port, its declarations inert
    from . import _cython_shim as cython

__all__ = ["build_heterogeneous", "MAX_ITERATION_COUNT"]

MAX_ITERATION_COUNT = 16


def build_heterogeneous(spec: ConsumerGroupSpec) -> dict[str, list[tuple[TopicId, list[int]]]]:
    """The new target of every member (``build``)."""
    state = _State(spec)
    if not state.subscribers:
        return {}
    state.maybe_revoke_partitions()
    state.assign_remaining_partitions()
    state.balance()
    topics = spec.index.topics
    return {
        spec.members[i].member_id: [(topics[t], sorted(parts)) for t, parts in target.items() if parts]
        for i, target in enumerate(state.targets)
    }


@cython.cclass
class _Balancer:
    """``MemberAssignmentBalancer``: walks a topic's subscribers from least and most loaded ends,
    reading the live target sizes (an assignment made between two calls counts)."""

    sizes = cython.declare(list)
    sorted = cython.declare(list)
    least_end = cython.declare(cython.Py_ssize_t)
    least_count = cython.declare(cython.Py_ssize_t)
    next_least = cython.declare(cython.Py_ssize_t)
    most_start = cython.declare(cython.Py_ssize_t)
    most_end = cython.declare(cython.Py_ssize_t)
    most_count = cython.declare(cython.Py_ssize_t)
    next_most = cython.declare(cython.Py_ssize_t)

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    @cython.locals(n=cython.Py_ssize_t, sizes=list)
    def initialize(self, members: list[int]) -> int:
        """Sort ``members`` (ascending indices, as ``_State.subscribers`` keeps them) by (size, index)."""
        sizes = self.sizes
        self.sorted = _by_size(sizes, members)
        n = len(self.sorted)
        self.least_end = 0
        self.least_count = sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = self.most_end = n
        self.most_count = sizes[self.sorted[-1]] + 1
        self.next_most = n - 1
        return sizes[self.sorted[-1]] - sizes[self.sorted[0]]

    @cython.ccall
    @cython.returns(cython.Py_ssize_t)
    @cython.locals(member=cython.Py_ssize_t)
    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    @cython.ccall
    @cython.returns(cython.Py_ssize_t)
    @cython.locals(member=cython.Py_ssize_t)
    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.sorted[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    @cython.ccall
    @cython.locals(i=cython.Py_ssize_t)
    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        self.sorted[i], self.sorted[self.most_end - 1] = self.sorted[self.most_end - 1], self.sorted[i]
        self.most_end -= 1

    @cython.ccall
    @cython.returns(cython.bint)
    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


@cython.cclass
class _State:
    """One ``build`` call's working state (Kafka's builder fields); nothing outlives the call.
    Topics are ``spec.index`` positions, members their index in ``memberIds()`` order, a topic's
    owners a list by partition (-1: unassigned). Compiled, a C struct of typed fields."""

    spec = cython.declare(object)
    counts = cython.declare(tuple)
    order_key = cython.declare(tuple)
    sizes = cython.declare(list)
    subscribers = cython.declare(dict)
    owners = cython.declare(dict)
    free = cython.declare(dict)
    targets = cython.declare(list)

    def __init__(self, spec: ConsumerGroupSpec) -> None:
        self.spec = spec
        index = spec.index
        self.counts = index.counts
        self.order_key = index.order_key
        self.sizes = [0] * len(spec.members)  # memberTargetAssignmentSizes, shared with the balancer
        # Each topic's subscribers in member order, gathered per distinct subscription (groups
        # mostly share a few); the topics' order does not matter: every walk over topics sorts them
        # by topicComparator, a total order.
        groups: dict[tuple[int, ...], list[int]] = {}
        for member, subscribed in enumerate(index.subscribed):
            groups.setdefault(subscribed, []).append(member)
        self.subscribers: dict[int, list[int]] = {}
        merged = set()
        for subscribed, members in groups.items():
            for topic in subscribed:
                if topic in self.subscribers:
                    self.subscribers[topic].extend(members)
                    merged.add(topic)
                else:
                    self.subscribers[topic] = list(members)
        for topic in merged:
            self.subscribers[topic].sort()
        self.owners: dict[int, list[int]] = {}
        self.free: dict[int, Sequence[int]] = {}  # each topic's unassigned partitions once the targets are kept
        # by member, by topic: partitions held, a set, or the spec's tuple while unchanged (_changing)
        self.targets: list[dict[int, set[int] | tuple[int, ...]]] = [{} for _ in spec.members]

    def sort_topics(self, topics) -> list[int]:
        """``topicComparator``: partitions per subscriber descending, fewer subscribers, then the id."""

        def key(t: int):
            subs = len(self.subscribers[t])
            return (-(self.counts[t] / subs), subs, self.order_key[t])

        return sorted(topics, key=key)

    @cython.locals(topic=cython.Py_ssize_t, partition=cython.Py_ssize_t, row=list,
                   sizes=list, owners=dict, mine=dict, held=set, subscribed_set=set)
    def maybe_revoke_partitions(self) -> None:
        """Keep each member's target on topics it still subscribes to; drop the other topics.

        A kept topic's partitions stay the spec's tuple until the member's share of it changes
        (``_changing``): most of a settled group's targets never do, and a set per member and
        topic cost more than the rest of the build. ``member`` stays one int object, stored as is."""
        owners = self.owners
        sizes = self.sizes
        for topic in self.subscribers:
            owners[topic] = [-1] * max(self.counts[topic], 0)
        held = set()
        for member, (subscribed, target) in enumerate(zip(self.spec.index.subscribed, self.spec.index.targets)):
            if not target:
                continue
            subscribed_set = set(subscribed)
            mine = self.targets[member]
            for topic, partitions in target:
                if topic not in subscribed_set:
                    continue
                sizes[member] += len(partitions)
                row = owners[topic]
                for partition in partitions:
                    row[partition] = member
                mine[topic] = partitions
                held.add(topic)
        for topic, row in owners.items():
            self.free[topic] = list(compress(range(len(row)), map((-1).__eq__, row))) if topic in held else range(len(row))

    @cython.locals(rounds=cython.Py_ssize_t, first=cython.Py_ssize_t, step=cython.Py_ssize_t,
                   stop=cython.Py_ssize_t, offset=cython.Py_ssize_t, whole=cython.bint, sizes=list, targets=list,
                   owners=list, takers=list, target=dict)
    def assign_remaining_partitions(self) -> None:
        """Topic by topic, the free partitions go one by one to the least-loaded subscriber, whose
        size grows as it takes them (``MemberAssignmentBalancer``): dealt here a round at a time."""
        sizes, targets = self.sizes, self.targets
        for topic in self.sort_topics(t for t, free in self.free.items() if free):
            free, owners = self.free[topic], self.owners[topic]
            whole = isinstance(free, range)  # every partition: positions in ``free`` are partitions
            for takers, rounds, first in _deal(sizes, self.subscribers[topic], len(free)):
                if rounds == 1:  # one partition each (a partial round, or a prefix that grows next round)
                    for member, partition in zip(takers, free[first:first + len(takers)]):
                        owners[partition] = member
                        target = targets[member]
                        held = target.get(topic)
                        if held is None:
                            target[topic] = {partition}
                        elif type(held) is set:
                            held.add(partition)
                        else:
                            _changing(target, topic).add(partition)
                        sizes[member] += 1
                    continue
                step = len(takers)
                stop = first + rounds * step
                for offset, member in enumerate(takers, first):
                    taken = free[offset:stop:step]
                    if whole:
                        owners[offset:stop:step] = [member] * rounds
                    else:
                        for partition in taken:
                            owners[partition] = member
                    target = targets[member]
                    if topic in target:
                        _changing(target, topic).update(taken)
                    else:
                        target[topic] = set(taken)
                    sizes[member] += rounds

    def balance(self) -> None:
        topics = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if topics:
            self.balance_topics(self.sort_topics(topics))

    @cython.locals(last=cython.Py_ssize_t, index=cython.Py_ssize_t, moved=cython.Py_ssize_t, balancer=_Balancer)
    def balance_topics(self, topics: list[int]) -> None:
        """Rounds over the topics until one passes the last topic that moved anything, at most 16."""
        last = -1
        balancer = _Balancer(self.sizes)
        for _ in range(MAX_ITERATION_COUNT):
            for index, topic in enumerate(topics):
                if index == last:
                    return
                moved = self.balance_topic(topic, balancer)
                if moved > 0 or last == -1:
                    last = index

    @cython.locals(moved=cython.Py_ssize_t, most=cython.Py_ssize_t, least=cython.Py_ssize_t,
                   partition=cython.Py_ssize_t, balancer=_Balancer, subscribers=list, loads=list, partitions=list,
                   start=dict, end=dict)
    def balance_topic(self, topic: int, balancer: _Balancer) -> int:
        moved = 0
        subscribers = self.subscribers[topic]
        loads = list(map(self.sizes.__getitem__, subscribers))
        if max(loads) - min(loads) <= 1:  # what initialize would answer, without its sort
            return moved
        balancer.initialize(subscribers)
        owners = np.array(self.owners[topic], dtype=np.int64)
        by_owner = np.argsort(owners, kind="stable")  # by (owner, partition)
        holders, first, held = np.unique(owners[by_owner], return_index=True, return_counts=True)
        partitions = by_owner.tolist()
        start = dict(zip(holders.tolist(), first.tolist()))
        end = dict(zip(holders.tolist(), (first + held).tolist()))
        while not balancer.is_balanced():
            most = balancer.next_most_loaded()
            while not (most == -1 or (most in end and end[most] - start[most] > 0)):
                balancer.exclude_most_loaded()
                most = balancer.next_most_loaded()
            if most == -1:
                break
            end[most] -= 1
            partition = partitions[end[most]]
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self.assign_partition(topic, partition, least)
            moved += 1
        return moved

    @cython.ccall
    @cython.locals(partition=cython.Py_ssize_t, member=cython.Py_ssize_t, old=cython.Py_ssize_t, owners=list)
    def assign_partition(self, topic: int, partition: int, member: int) -> None:
        owners = self.owners[topic]
        old = owners[partition]
        if old != -1:
            if topic in self.targets[old]:
                parts = _changing(self.targets[old], topic)
                parts.discard(partition)
                if not parts:
                    del self.targets[old][topic]
            self.sizes[old] -= 1
        if topic in self.targets[member]:
            _changing(self.targets[member], topic).add(partition)
        else:
            self.targets[member][topic] = {partition}
        owners[partition] = member
        self.sizes[member] += 1


@cython.locals(target=dict)
def _changing(target: dict[int, set[int] | tuple[int, ...]], topic: int) -> set[int]:
    """A member's partitions of ``topic`` as a set it may change: a kept tuple becomes one, in place."""
    held = target[topic]
    if type(held) is not set:
        held = target[topic] = set(held)
    return held


@cython.locals(sizes=list, members=list, keys=list, span=cython.Py_ssize_t)
def _by_size(sizes: list[int], members: list[int]) -> list[int]:
    """``members`` (ascending indices) sorted by (size, index): a stable sort by size alone.
    Each member is one integer key, ``size * span + index``, so the sort compares plain ints
    (no key function); sizes are never negative."""
    span = len(sizes)
    keys = [sizes[m] * span + m for m in members]
    keys.sort()
    return [k % span for k in keys]


@cython.locals(count=cython.Py_ssize_t, level=cython.Py_ssize_t, prefix=cython.Py_ssize_t, left=cython.Py_ssize_t,
               first=cython.Py_ssize_t, room=cython.Py_ssize_t, full=cython.Py_ssize_t, n=cython.Py_ssize_t,
               order=list, start=list, blocks=list)
def _deal(sizes: list[int], members: list[int], count: int) -> list[tuple[list[int], int, int]]:
    """Who takes each of ``count`` free partitions when each goes to ``next_least_loaded``.

    The balancer sorts the subscribers by (size, index) and walks levels from the smallest size up:
    at level ``L`` the members that started at or below ``L`` (all of them now at ``L``) each take
    one partition, in sorted order. So between two starting sizes the prefix of takers is fixed,
    and its rounds are that prefix repeated; the last round may stop part way. Returns blocks
    (takers, rounds, first): the takers, in order, take the partitions from position ``first`` on,
    ``rounds`` times over (a last partial round is a block of one round)."""
    order = _by_size(sizes, members)
    start = [sizes[m] for m in order]
    n = len(order)
    blocks = []
    level, prefix, left, first = start[0], 0, count, 0
    while left > 0:
        while prefix < n and start[prefix] <= level:
            prefix += 1
        room = start[prefix] - level if prefix < n else left  # rounds before the prefix grows
        full = min(room, left // prefix)
        if full:
            blocks.append((order[:prefix], full, first))
            left -= full * prefix
            first += full * prefix
            level += full
        if full < room:
            if left:
                blocks.append((order[:left], 1, first))
            left = 0
    return blocks
