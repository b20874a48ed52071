"""D1-D5 of models/optimal-assignment.md: which partitions are assigned, who may keep which.

One test per rule, named after it; a property checks the vectorised ``claim_table`` against the
plain-dict restatement in ``tests/brute.py`` on generated groups.
"""

from __future__ import annotations

import random

from hypothesis import given, settings

from stickyproof.model import Assignment, Member, Scenario, Topic, TopicPartition
from stickyproof.oracle.aggregate import cooperative_round
from stickyproof.oracle.claims import (
    assignable_partitions,
    assignable_topics,
    claimants,
    current_owners,
    retainable_claims,
    subscribers_by_topic,
)
from stickyproof.oracle.flow import solve_flow

from .brute import simple_retainable
from .builders import group
from .oracle_groups import small_groups

TP = TopicPartition


def test_d1_only_existing_partitions_of_subscribed_topics_are_assigned():
    s = group(
        {"t": 2, "unsubscribed": 3, "empty": 0},
        [{"id": "a", "topics": ["t", "empty", "missing"]}, {"id": "b", "topics": []}],
    )
    assert assignable_topics(s) == {"t": 2}
    assert assignable_partitions(s) == [TP("t", 0), TP("t", 1)]


def test_d2_subscribers_are_sorted_member_ids():
    s = group({"t": 1, "u": 1}, [{"id": "z", "topics": ["t"]}, {"id": "a", "topics": ["u", "t"]}])
    assert subscribers_by_topic(s) == {"t": ("a", "z"), "u": ("a",)}


def test_d3_unique_highest_generation_claimant_is_the_owner():
    s = group(
        {"t": 2},
        [
            {"id": "old", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 3},
            {"id": "new", "topics": ["t"], "owned": {"t": [0]}, "generation": 4},
        ],
    )
    assert current_owners(s) == {TP("t", 0): "new", TP("t", 1): "old"}
    assert retainable_claims(s) == {TP("t", 0): "new", TP("t", 1): "old"}


def test_d3_shared_highest_generation_means_nobody_owns_it():
    s = group(
        {"t": 1},
        [
            {"id": "a", "topics": ["t"], "owned": {"t": [0]}, "generation": 5},
            {"id": "b", "topics": ["t"], "owned": {"t": [0]}, "generation": 5},
            {"id": "c", "topics": ["t"], "owned": {"t": [0]}, "generation": 2},
        ],
    )
    assert current_owners(s) == {}
    assert retainable_claims(s) == {}


def test_d3_claims_on_nonexistent_partitions_and_topics_are_void():
    s = group(
        {"t": 2, "nobody": 2},
        [
            {"id": "a", "topics": ["t"], "owned": {"t": [5], "gone": [0], "nobody": [0]}, "generation": 9},
            {"id": "b", "topics": ["t"], "owned": {"t": [1]}, "generation": 1},
        ],
    )
    assert retainable_claims(s) == {TP("t", 1): "b"}


def test_d3_a_negative_partition_claim_is_void():
    # Only a Scenario built in Python can hold one (the format rejects it); it used to crash
    # claim_table with numpy's ValueError and be listed by claimants.
    s = Scenario((Topic("t", 2),), (Member("a", ("t",), (TP("t", -1), TP("t", 0)), 3), Member("b", ("t",))))
    assert retainable_claims(s) == {TP("t", 0): "a"}
    assert claimants(s) == {TP("t", 0): ("a",)}
    assert solve_flow(s).optimal


def test_d3_a_void_claim_does_not_tie_with_a_real_one():
    # a claims t-1 on a topic it does not subscribe to: the claim is real (t is assignable) and
    # ties with b's; a claim past the partition count is void and ties with nothing.
    s = group(
        {"t": 2},
        [
            {"id": "a", "topics": ["u"], "owned": {"t": [1, 7]}, "generation": 2},
            {"id": "b", "topics": ["t"], "owned": {"t": [1, 7]}, "generation": 2},
        ],
    )
    assert current_owners(s) == {}
    assert claimants(s) == {TP("t", 1): ("a", "b")}


def test_d4_owner_that_unsubscribed_may_not_keep_and_stale_claimants_neither():
    s = group(
        {"t": 1},
        [
            {"id": "left", "topics": ["u"], "owned": {"t": [0]}, "generation": 7},
            {"id": "stale", "topics": ["t"], "owned": {"t": [0]}, "generation": 6},
        ],
    )
    assert current_owners(s) == {TP("t", 0): "left"}
    assert retainable_claims(s) == {}


def test_d4_lone_claim_with_unknown_generation_is_retainable():
    s = group({"t": 1}, [{"id": "old-client", "topics": ["t"], "owned": {"t": [0]}}])
    assert retainable_claims(s) == {TP("t", 0): "old-client"}


def test_d5_transferring_partitions_are_withheld_and_revoked_by_every_other_claimant():
    s = group(
        {"t": 3},
        [
            {"id": "a", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 2},
            {"id": "b", "topics": ["t"], "owned": {"t": [1]}, "generation": 1},
            {"id": "c", "topics": ["t"]},
        ],
        protocol="cooperative",
    )
    target = Assignment({"a": (TP("t", 0),), "b": (TP("t", 2),), "c": (TP("t", 1),)})
    round1 = cooperative_round(s, target)
    assert round1.assignment == {"a": (TP("t", 0),), "b": (TP("t", 2),), "c": ()}
    assert round1.revoking == {"a": (TP("t", 1),), "b": (TP("t", 1),)}


def test_claims_do_not_depend_on_member_or_claim_order():
    rng = random.Random(7)
    members = [
        Member(f"m{i}", ("t", "u"), tuple(TP(rng.choice("tu"), rng.randrange(6)) for _ in range(3)), rng.choice((-1, 1, 2)))
        for i in range(6)
    ]
    members = [Member(m.id, m.topics, tuple(dict.fromkeys(m.owned)), m.generation) for m in members]
    base = Scenario((Topic("t", 4), Topic("u", 3)), tuple(members))
    expected = retainable_claims(base)
    for _ in range(10):
        shuffled = [Member(m.id, m.topics, tuple(rng.sample(m.owned, len(m.owned))), m.generation) for m in members]
        rng.shuffle(shuffled)
        assert retainable_claims(Scenario(base.topics, tuple(shuffled))) == expected


@settings(max_examples=200)
@given(small_groups())
def test_claim_table_matches_the_plain_restatement(scenario):
    assert retainable_claims(scenario) == simple_retainable(scenario)
