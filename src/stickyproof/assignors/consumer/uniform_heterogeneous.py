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

from .spec import ConsumerGroupSpec, TopicId
from ...model.topic_ids import uuid_order_key

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
    return {
        spec.members[i].member_id: [(t, sorted(parts)) for t, parts in target.items() if parts]
        for i, target in enumerate(state.targets)
    }


class _State:
    """One ``build`` call's working state (Kafka's builder fields); nothing outlives the call."""

    def __init__(self, spec: ConsumerGroupSpec) -> None:
        self.spec = spec
        self.sizes = [0] * len(spec.members)  # memberTargetAssignmentSizes, shared with the balancer
        self.subscribers: dict[TopicId, list[int]] = {}
        for index, member in enumerate(spec.members):
            for topic in member.subscribed:
                self.subscribers.setdefault(topic, []).append(index)
        self.owners = {t: [-1] * spec.num_partitions(t) for t in self.subscribers}
        self.targets: list[dict[TopicId, set[int]]] = [{} for _ in spec.members]

    def sort_topics(self, topics) -> list[TopicId]:
        """``topicComparator``: partitions per subscriber descending, fewer subscribers, then the id."""

        def key(t: TopicId):
            subs = len(self.subscribers[t])
            return (-(self.spec.num_partitions(t) / subs), subs, uuid_order_key(t))

        return sorted(topics, key=key)

    def maybe_revoke_partitions(self) -> None:
        """Keep each member's target on topics it still subscribes to; drop the other topics."""
        for index, member in enumerate(self.spec.members):
            subscribed = set(member.subscribed)
            for topic, partitions in member.target:
                if topic not in subscribed:
                    continue
                self.sizes[index] += len(partitions)
                for p in partitions:
                    self.owners[topic][p] = index
                self.targets[index][topic] = set(partitions)

    def assign_remaining_partitions(self) -> None:
        unassigned = {}
        for topic, owners in self.owners.items():
            free = [p for p, owner in enumerate(owners) if owner == -1]
            if free:
                unassigned[topic] = free
        balancer = _Balancer(self.sizes)
        for topic in self.sort_topics(unassigned):
            balancer.initialize(self.subscribers[topic])
            for p in unassigned[topic]:
                self.assign_partition(topic, p, balancer.next_least_loaded())

    def balance(self) -> None:
        topics = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if topics:
            self.balance_topics(self.sort_topics(topics))

    def balance_topics(self, topics: list[TopicId]) -> None:
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

    def balance_topic(self, topic: TopicId, balancer: _Balancer) -> int:
        moved = 0
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return moved
        owners = self.owners[topic]
        partitions = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(partitions):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
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

    def assign_partition(self, topic: TopicId, partition: int, member: int) -> None:
        old = self.owners[topic][partition]
        if old != -1:
            parts = self.targets[old].get(topic)
            if parts is not None:
                parts.discard(partition)
                if not parts:
                    del self.targets[old][topic]
            self.sizes[old] -= 1
        self.targets[member].setdefault(topic, set()).add(partition)
        self.owners[topic][partition] = member
        self.sizes[member] += 1


class _Balancer:
    """``MemberAssignmentBalancer``: walks a topic's subscribers from least and most loaded ends,
    reading the live target sizes (an assignment made between two calls counts)."""

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

    def initialize(self, members: list[int]) -> int:
        sizes = self.sizes
        self.sorted = sorted(members, key=lambda m: (sizes[m], m))
        n = len(self.sorted)
        self.least_end = 0
        self.least_count = sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = self.most_end = n
        self.most_count = sizes[self.sorted[-1]] + 1
        self.next_most = n - 1
        return sizes[self.sorted[-1]] - sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

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

    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        self.sorted[i], self.sorted[self.most_end - 1] = self.sorted[self.most_end - 1], self.sorted[i]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1
