"""``model.Index``, the one interning the oracle uses.

Sorted numbering whatever the input order, outsiders after the group, topics counted 0 with an
id but no partitions, and bounds-checked partition ids that convert back.
"""

from __future__ import annotations

import random

import pytest

from stickyproof.model import Index, Member, Scenario, Topic, TopicPartition

TP = TopicPartition


def test_members_then_outsiders_each_sorted():
    ix = Index(("c", "a", "b"), {}, outsiders=("z", "b", "y"))
    assert ix.members == ("a", "b", "c") and ix.outsiders == ("y", "z")  # b is a member, not an outsider
    assert [ix.member_id(m) for m in ("a", "b", "c", "y", "z")] == [0, 1, 2, 3, 4]
    assert [ix.member(i) for i in range(5)] == ["a", "b", "c", "y", "z"]
    with pytest.raises(KeyError):
        ix.member_id("ghost")


def test_topics_counted_zero_have_an_id_but_no_partitions():
    ix = Index((), {"b": 2, "a": 0, "c": 3, "gone": 0})
    assert ix.topics == ("a", "b", "c", "gone") and [ix.topic_id(t) for t in ix.topics] == [0, 1, 2, 3]
    assert ix.num_partitions == 5
    assert ix.partition_id("a", 0) is None and ix.partition_id("gone", 0) is None
    assert ix.topic_partitions() == [TP("b", 0), TP("b", 1), TP("c", 0), TP("c", 1), TP("c", 2)]
    assert [ix.topic_partition(p) for p in range(5)] == ix.topic_partitions()


def test_partition_ids_are_bounds_checked():
    ix = Index(("m",), {"t": 3, "u": 1})
    assert [ix.partition_id("t", p) for p in (-1, 0, 2, 3)] == [None, 0, 2, None]
    assert ix.partition_id("u", 0) == 3 and ix.partition_id("v", 0) is None
    for pid in (-1, 4):
        with pytest.raises(IndexError):
            ix.topic_partition(pid)


def test_of_does_not_depend_on_input_order():
    topics = [Topic("t", 3), Topic("empty", 0), Topic("u", 2), Topic("orphan", 4)]
    members = [Member("b", ("t",)), Member("a", ("u", "missing")), Member("c", ())]
    first = Index.of(Scenario(tuple(topics), tuple(members)), only_subscribed=True)
    assert first.topics == ("t", "u") and first.members == ("a", "b", "c")
    rng = random.Random(5)
    for _ in range(5):
        rng.shuffle(topics)
        rng.shuffle(members)
        again = Index.of(Scenario(tuple(topics), tuple(members)), only_subscribed=True)
        assert again == first
    assert Index.of(Scenario(tuple(topics), tuple(members))).topics == ("orphan", "t", "u")
