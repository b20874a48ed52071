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

from array import array

from .spec import ConsumerGroupSpec, TopicId

try:
    import cython
except ImportError:  # no Cython at run time: the pure-Python port, its declarations inert
    from . import _cython_shim as cython

__all__ = ["build_heterogeneous", "MAX_ITERATION_COUNT"]

MAX_ITERATION_COUNT = 16




@cython.cclass
class _Balancer:
    """``MemberAssignmentBalancer``: walks a topic's subscribers from least and most loaded ends,
    reading the live target sizes (an assignment made between two calls counts)."""

    sizes = cython.declare(cython.int[:])
    sorted = cython.declare(list)
    least_end = cython.declare(cython.Py_ssize_t)
    least_count = cython.declare(cython.Py_ssize_t)
    next_least = cython.declare(cython.Py_ssize_t)
    most_start = cython.declare(cython.Py_ssize_t)
    most_end = cython.declare(cython.Py_ssize_t)
    most_count = cython.declare(cython.Py_ssize_t)
    next_most = cython.declare(cython.Py_ssize_t)

    def __init__(self, sizes) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    @cython.locals(n=cython.Py_ssize_t, sizes=cython.int[:])
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
class _Scratch:
    """C-int arrays by member (reused topic after topic) and by partition: a topic's partitions
    grouped by owner, ascending within each, owner ``m``'s from ``start[m]`` to ``end[m]``."""

    start = cython.declare(cython.int[:])
    end = cython.declare(cython.int[:])
    parts = cython.declare(cython.int[:])

    def __init__(self, members: int) -> None:
        self.start = array("i", [0]) * members
        self.end = array("i", [0]) * members
        self.parts = array("i", [0])

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(off=cython.Py_ssize_t, n=cython.Py_ssize_t, p=cython.Py_ssize_t, m=cython.Py_ssize_t,
                   run=cython.int, owners=cython.int[:], start=cython.int[:], end=cython.int[:], parts=cython.int[:])
    def by_owner(self, owners, off: int, n: int, subscribers: list) -> None:
        """Group partitions ``off .. off + n`` of ``owners`` by owner (the topic's subscribers)."""
        start, end = self.start, self.end
        if len(self.parts) < n:
            self.parts = array("i", [0]) * n
        parts = self.parts
        for m in subscribers:
            start[m] = 0
        for p in range(n):
            if owners[off + p] != -1:
                start[owners[off + p]] += 1
        run = 0
        for m in subscribers:
            end[m] = run
            run += start[m]
            start[m] = end[m]
        for p in range(n):
            m = owners[off + p]
            if m != -1:
                parts[end[m]] = p
                end[m] += 1


@cython.cclass
class _State:
    """One ``build`` call's working state (Kafka's builder fields); nothing outlives the call.
    Topics are ``spec.index`` positions, members their index in ``memberIds()`` order.

    Partitions live in flat C-int arrays, not in per-member sets: ``owners`` holds every subscribed
    topic's partitions end to end (topic ``t`` from ``base[t]``; -1: unassigned) and ``sizes`` the
    members' target sizes. A member's target is a dict of topic to how many partitions it holds
    there, whose key order is the order Kafka's target map would list; the partitions themselves
    are read off ``owners`` once, at the end (``targets_out``). A partition two kept targets claim
    stays in the earlier claimants' targets without being theirs in ``owners`` (Kafka's map keeps
    it in both sets): ``shared`` holds those, by (member, topic), and is empty in any real group."""

    spec = cython.declare(object)
    counts = cython.declare(tuple)
    order_key = cython.declare(tuple)
    sizes = cython.declare(cython.int[:])
    sizes_array = cython.declare(object)
    subscribers = cython.declare(dict)
    subscribed_sets = cython.declare(list)
    base = cython.declare(cython.int[:])
    n_partitions = cython.declare(cython.int[:])
    owners = cython.declare(cython.int[:])
    owners_array = cython.declare(object)
    free = cython.declare(dict)
    free_parts = cython.declare(cython.int[:])
    order = cython.declare(list)
    targets = cython.declare(list)
    shared = cython.declare(dict)

    def __init__(self, spec: ConsumerGroupSpec) -> None:
        self.spec = spec
        index = spec.index
        self.counts = index.counts
        self.order_key = index.order_key
        self.sizes_array = array("i", [0]) * len(spec.members)  # memberTargetAssignmentSizes, shared with the balancer
        self.sizes = self.sizes_array
        # Each topic's subscribers in member order, gathered per distinct subscription (groups
        # mostly share a few); the topics' order does not matter: every walk over topics sorts them
        # by topicComparator, a total order.
        groups: dict[tuple[int, ...], tuple[list[int], set[int]]] = {}
        self.subscribed_sets: list[set[int]] = []  # by member, one set per distinct subscription
        for member, subscribed in enumerate(index.subscribed):
            group = groups.get(subscribed)
            if group is None:
                group = groups[subscribed] = ([], set(subscribed))
            group[0].append(member)
            self.subscribed_sets.append(group[1])
        self.subscribers: dict[int, list[int]] = {}
        merged = set()
        for subscribed, (members, _) in groups.items():
            for topic in subscribed:
                if topic in self.subscribers:
                    self.subscribers[topic].extend(members)
                    merged.add(topic)
                else:
                    self.subscribers[topic] = list(members)
        for topic in merged:
            self.subscribers[topic].sort()
        # by topic position: where its partitions start in ``owners``, and how many it has
        self.base = array("i", [0]) * len(self.counts)
        self.n_partitions = array("i", [max(c, 0) for c in self.counts])
        total = 0
        for topic in self.subscribers:
            self.base[topic] = total
            total += self.n_partitions[topic]
        self.owners_array = array("i", [-1]) * total
        self.owners = self.owners_array
        # each topic's unassigned partitions once the targets are kept: how many, and where they
        # start in ``free_parts`` (-1: all of the topic's, positions among the free are partitions)
        self.free: dict[int, tuple[int, int]] = {}
        self.free_parts = array("i", [0])
        self.order: list[int] = self.sort_topics()
        self.targets: list[dict[int, int]] = [{} for _ in spec.members]  # by member: topic -> partitions held
        self.shared: dict[tuple[int, int], set[int]] = {}

    def sort_topics(self) -> list[int]:
        """Every subscribed topic by ``topicComparator``: partitions per subscriber descending, fewer
        subscribers, then the id. A total order, so the topics a walk needs are these, filtered."""

        def key(t: int):
            subs = len(self.subscribers[t])
            return (-(self.counts[t] / subs), subs, self.order_key[t])

        return sorted(self.subscribers, key=key)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(topic=cython.Py_ssize_t, partition=cython.Py_ssize_t, member=cython.Py_ssize_t,
                   off=cython.Py_ssize_t, n=cython.Py_ssize_t, p=cython.Py_ssize_t, previous=cython.int,
                   count=cython.Py_ssize_t, total=cython.Py_ssize_t, owners=cython.int[:], sizes=cython.int[:],
                   free=cython.int[:], held=cython.int[:], base=cython.int[:], mine=dict, subscribed_set=set,
                   partitions=tuple)
    def maybe_revoke_partitions(self) -> None:
        """Keep each member's target on topics it still subscribes to; drop the other topics.
        A partition outside the topic raises ``IndexError``, as Kafka's list would."""
        owners, sizes, base = self.owners, self.sizes, self.base
        held = array("i", [0]) * len(self.counts)  # by topic: whether some kept target holds it
        for member, target in enumerate(self.spec.index.targets):
            if not target:
                continue
            subscribed_set = self.subscribed_sets[member]
            mine = self.targets[member]
            for topic, partitions in target:
                if topic not in subscribed_set:
                    continue
                sizes[member] += len(partitions)
                off, n = base[topic], self.n_partitions[topic]
                for partition in partitions:
                    if partition < 0 or partition >= n:
                        raise IndexError(f"partition {partition} of a topic with {n}")
                    previous = owners[off + partition]
                    if previous != -1:
                        self.shared.setdefault((previous, topic), set()).add(partition)
                    owners[off + partition] = member
                mine[topic] = len(partitions)
                held[topic] = 1
        total = 0
        for topic in self.subscribers:
            off, n = base[topic], self.n_partitions[topic]
            if not held[topic]:
                self.free[topic] = (n, -1)  # every partition: positions among the free are partitions
                continue
            count = 0
            for p in range(n):
                if owners[off + p] == -1:
                    count += 1
            self.free[topic] = (count, total)
            total += count
        self.free_parts = array("i", [0]) * total
        free = self.free_parts
        total = 0
        for topic in self.subscribers:
            off, n = base[topic], self.n_partitions[topic]
            if held[topic]:
                for p in range(n):
                    if owners[off + p] == -1:
                        free[total] = p
                        total += 1

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(rounds=cython.Py_ssize_t, first=cython.Py_ssize_t, step=cython.Py_ssize_t,
                   stop=cython.Py_ssize_t, offset=cython.Py_ssize_t, j=cython.Py_ssize_t, off=cython.Py_ssize_t,
                   count=cython.Py_ssize_t, at=cython.Py_ssize_t, whole=cython.bint, member=cython.int, sizes=cython.int[:], owners=cython.int[:], free=cython.int[:], targets=list,
                   takers=list, target=dict)
    def assign_remaining_partitions(self) -> None:
        """Topic by topic, the free partitions go one by one to the least-loaded subscriber, whose
        size grows as it takes them (``MemberAssignmentBalancer``): dealt here a round at a time."""
        sizes, targets, owners = self.sizes, self.targets, self.owners
        free = self.free_parts
        for topic in self.order:
            count, at = self.free[topic]
            if not count:
                continue
            off, whole = self.base[topic], at == -1
            for takers, rounds, first in _deal(sizes, self.subscribers[topic], count):
                step = len(takers)
                stop = first + rounds * step
                for offset in range(first, first + step):
                    member = takers[offset - first]
                    j = offset  # a while loop: a range with a variable step is a Python object when compiled
                    if whole:
                        while j < stop:
                            owners[off + j] = member
                            j += step
                    else:
                        while j < stop:
                            owners[off + free[at + j]] = member
                            j += step
                    target = targets[member]
                    target[topic] = target.get(topic, 0) + rounds
                    sizes[member] += rounds

    def balance(self) -> None:
        topics = [t for t in self.order if len(self.subscribers[t]) >= 2]
        if topics:
            self.balance_topics(topics)

    @cython.locals(last=cython.Py_ssize_t, index=cython.Py_ssize_t, moved=cython.Py_ssize_t, balancer=_Balancer)
    def balance_topics(self, topics: list[int]) -> None:
        """Rounds over the topics until one passes the last topic that moved anything, at most 16."""
        last = -1
        balancer = _Balancer(self.sizes_array)
        scratch = _Scratch(len(self.targets))
        for _ in range(MAX_ITERATION_COUNT):
            for index, topic in enumerate(topics):
                if index == last:
                    return
                moved = self.balance_topic(topic, balancer, scratch)
                if moved > 0 or last == -1:
                    last = index

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(moved=cython.Py_ssize_t, most=cython.Py_ssize_t, least=cython.Py_ssize_t,
                   partition=cython.Py_ssize_t, lo=cython.int, hi=cython.int, m=cython.Py_ssize_t,
                   balancer=_Balancer, scratch=_Scratch, subscribers=list, sizes=cython.int[:],
                   start=cython.int[:], end=cython.int[:], parts=cython.int[:])
    def balance_topic(self, topic: int, balancer: _Balancer, scratch: _Scratch) -> int:
        """Moves partitions from the topic's most-loaded subscribers to its least-loaded ones; a
        giver gives its highest-numbered partitions of the topic as they stood when the topic began."""
        moved = 0
        subscribers = self.subscribers[topic]
        sizes = self.sizes
        lo = hi = sizes[subscribers[0]]
        for m in subscribers:
            lo, hi = min(lo, sizes[m]), max(hi, sizes[m])
        if hi - lo <= 1:  # what initialize would answer, without its sort
            return moved
        balancer.initialize(subscribers)
        scratch.by_owner(self.owners, self.base[topic], self.n_partitions[topic], subscribers)
        start, end, parts = scratch.start, scratch.end, scratch.parts
        while not balancer.is_balanced():
            most = balancer.next_most_loaded()
            while not (most == -1 or end[most] - start[most] > 0):
                balancer.exclude_most_loaded()
                most = balancer.next_most_loaded()
            if most == -1:
                break
            end[most] -= 1
            partition = parts[end[most]]
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self.assign_partition(topic, partition, least)
            moved += 1
        return moved

    @cython.ccall
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(partition=cython.Py_ssize_t, member=cython.Py_ssize_t, old=cython.Py_ssize_t,
                   off=cython.Py_ssize_t, held=cython.Py_ssize_t, target=dict, extra=set)
    def assign_partition(self, topic: int, partition: int, member: int) -> None:
        off = self.base[topic]
        old = self.owners[off + partition]
        if old != -1:
            target = self.targets[old]
            held = target[topic] - 1
            if held:
                target[topic] = held
            else:
                del target[topic]
            self.sizes[old] -= 1
        target = self.targets[member]
        extra = self.shared.get((member, topic)) if self.shared else None
        if extra is not None and partition in extra:
            extra.discard(partition)  # already in its target (a shared claim): now its own
        else:
            target[topic] = target.get(topic, 0) + 1
        self.owners[off + partition] = member
        self.sizes[member] += 1

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(topic=cython.Py_ssize_t, off=cython.Py_ssize_t, n=cython.Py_ssize_t, p=cython.Py_ssize_t,
                   m=cython.Py_ssize_t, owners=cython.int[:], end=cython.int[:], slots=list, row=list,
                   targets=list, ints=list)
    def targets_out(self) -> list:
        """Each member's target, a dict of topic to its partitions ascending, in Kafka's key order."""
        owners, targets = self.owners, self.targets
        end = array("i", [0]) * len(targets)  # by member: how many of the topic it holds, then filled
        slots = [None] * len(targets)
        ints = _partition_ints(max(self.counts, default=0))
        for topic, subscribers in self.subscribers.items():
            off, n = self.base[topic], self.n_partitions[topic]
            for m in subscribers:
                end[m] = 0
            for p in range(n):
                if owners[off + p] != -1:
                    end[owners[off + p]] += 1
            for m in subscribers:
                if end[m]:
                    slots[m] = [0] * end[m]
                    end[m] = 0
            for p in range(n):
                m = owners[off + p]
                if m != -1:
                    row = slots[m]
                    row[end[m]] = ints[p]
                    end[m] += 1
            for m in subscribers:
                if end[m]:
                    targets[m][topic] = slots[m]
                    slots[m] = None
        for (m, topic), extra in self.shared.items():
            if extra:
                held = targets[m].get(topic)
                targets[m][topic] = sorted((held if isinstance(held, list) else []) + list(extra))
        return targets


@cython.locals(state=_State, topics=tuple, members=tuple, out=dict, target=dict, i=cython.Py_ssize_t)
def build_heterogeneous(spec: ConsumerGroupSpec) -> dict[str, list[tuple[TopicId, list[int]]]]:
    """The new target of every member (``build``)."""
    state = _State(spec)
    if not state.subscribers:
        return {}
    state.maybe_revoke_partitions()
    state.assign_remaining_partitions()
    state.balance()
    topics, members = spec.index.topics, spec.members
    out = {}
    for i, target in enumerate(state.targets_out()):
        out[members[i].member_id] = [(topics[t], parts) for t, parts in target.items() if parts]
    return out


_INTS: list[int] = []


def _partition_ints(n: int) -> list[int]:
    """``0 .. n - 1`` (at least) as one list of int objects kept between calls: every target's
    partition numbers are these objects, not fresh ones (ints are immutable; a group's partitions
    are mostly past CPython's small-int cache, and allocating and freeing an int per partition
    per call cost more than the rest of the output)."""
    if len(_INTS) < n:
        _INTS.extend(range(len(_INTS), n))
    return _INTS


@cython.ccall
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(sizes=cython.int[:], members=list, keys=list, span=cython.Py_ssize_t, n=cython.Py_ssize_t,
               m=cython.Py_ssize_t, lo=cython.int, hi=cython.int, at=cython.int[:], out=list)
def _by_size(sizes, members: list[int]) -> list[int]:
    """``members`` (ascending indices) sorted by (size, index): a stable sort by size alone.
    Sizes mostly span a few values: a counting sort over them, in C arrays. Otherwise each member
    is one integer key, ``size * span + index``, so the sort compares plain ints (no key
    function); sizes are never negative."""
    n = len(members)
    if not n:
        return []
    lo = hi = sizes[members[0]]
    for m in members:
        lo, hi = min(lo, sizes[m]), max(hi, sizes[m])
    if hi - lo <= 4 * n:
        at = array("i", [0]) * (hi - lo + 2)  # at[s - lo + 1]: how many members have size s, then where they start
        for m in members:
            at[sizes[m] - lo + 1] += 1
        for m in range(1, hi - lo + 2):
            at[m] += at[m - 1]
        out = [None] * n
        for member in members:
            m = member
            out[at[sizes[m] - lo]] = member
            at[sizes[m] - lo] += 1
        return out
    span = len(sizes)
    keys = [sizes[m] * span + m for m in members]
    keys.sort()
    return [k % span for k in keys]


@cython.ccall
@cython.locals(count=cython.Py_ssize_t, level=cython.Py_ssize_t, prefix=cython.Py_ssize_t, left=cython.Py_ssize_t,
               first=cython.Py_ssize_t, room=cython.Py_ssize_t, full=cython.Py_ssize_t, n=cython.Py_ssize_t,
               sizes=cython.int[:], order=list, start=list, blocks=list)
def _deal(sizes, members: list[int], count: int) -> list[tuple[list[int], int, int]]:
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
