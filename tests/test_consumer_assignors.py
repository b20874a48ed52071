"""The server-side (KIP-848) ports on their own, without Kafka's jars: each one's promise, and
KAFKA-18688 reproduced by its release record and not by today's code."""

from __future__ import annotations

import random

from stickyproof.assignors.consumer import assign_consumer_group
from stickyproof.assignors.consumer.spec import HOMOGENEOUS, subscription_type
from stickyproof.model import TopicPartition, scenario_from_dict

from .consumer_groups import random_group


def _group(members, topics):
    return scenario_from_dict({
        "format": "stickyproof.scenario/1", "group_protocol": "consumer", "topics": topics,
        "members": [{"id": m, "topics": subs, "owned": owned} for m, subs, owned in members],
    })


def _owned(assignment, member):
    return sorted(tp.partition for tp in assignment.assignment[member])


def test_a_balanced_homogeneous_group_comes_back_unchanged_kafka_18688():
    # A, B hold 2 of 7 partitions and C holds the "+1" third. Before the fix (4.0.0) A, first in
    # iteration order, claimed the extra partition, so C had to give one up: a balanced group moved.
    # (kafka-java:uniform@4.4.0 and kafka-java:uniform@4.0.0 return exactly these.)
    group = _group([("A", ["t"], {"t": [0, 1]}), ("B", ["t"], {"t": [2, 3]}), ("C", ["t"], {"t": [4, 5, 6]})], {"t": 7})
    fixed = assign_consumer_group(group, "uniform")
    assert [_owned(fixed, m) for m in "ABC"] == [[0, 1], [2, 3], [4, 5, 6]]
    before = assign_consumer_group(group, "uniform@4.0.0")
    assert [_owned(before, m) for m in "ABC"] == [[0, 1, 6], [2, 3], [4, 5]]


def test_every_partition_once_and_homogeneous_sizes_within_one():
    rng = random.Random(18688)
    checked = 0
    for _ in range(400):
        group = random_group(rng)
        counts = {t.name: t.partitions for t in group.topics}
        subscribed = {t for m in group.members for t in m.topics if t in counts}
        want = sorted(TopicPartition(t, p) for t in subscribed for p in range(counts[t]))
        for name in ("uniform", "consumer-range"):
            result = assign_consumer_group(group, name).assignment
            got = sorted(tp for tps in result.values() for tp in tps)
            assert got == want, (name, group)
            for m in group.members:
                assert all(tp.topic in m.topics for tp in result[m.id]), (name, m.id)
        if subscription_type(group) == HOMOGENEOUS and subscribed:
            sizes = [len(tps) for tps in assign_consumer_group(group, "uniform").assignment.values()]
            assert max(sizes) - min(sizes) <= 1, group
            checked += 1
    assert checked > 50


def test_consumer_range_gives_each_subscriber_a_contiguous_range_per_topic():
    rng = random.Random(7)
    for _ in range(200):
        group = random_group(rng)
        for tps in assign_consumer_group(group, "consumer-range").assignment.values():
            by_topic: dict[str, list[int]] = {}
            for tp in tps:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            for parts in by_topic.values():
                assert parts == list(range(parts[0], parts[0] + len(parts)))


def test_member_order_is_the_coordinators_hashmap_order_not_the_document_order():
    # "zz" hashes to bucket 0 and "a" to bucket 1 of a 16-bucket HashMap, so memberIds() yields zz
    # first whatever the document order (and against sorted order): the homogeneous builder deals
    # the unassigned partitions in that order, and since KAFKA-18688's fix a member holding nothing
    # leaves the extra partition to the members after it, so zz gets one and a the other two.
    members = [("zz", ["t"], {}), ("a", ["t"], {})]
    forward = assign_consumer_group(_group(members, {"t": 3}), "uniform")
    backward = assign_consumer_group(_group(members[::-1], {"t": 3}), "uniform")
    assert forward == backward  # a HashMap's order does not depend on insertion order here
    assert _owned(forward, "zz") == [0] and _owned(forward, "a") == [1, 2]
