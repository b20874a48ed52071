"""The shared checkers (tests/checks.py) and builders (tests/builders.py) graded on hand-made answers.

A checker every test leans on must itself fail where it should: each is shown a known-good answer
and answers that break exactly one thing.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from stickyproof.assignors.sticky_types import PriorOwners
from stickyproof.model import Assignment, Member, TopicPartition

from .builders import direct_group, group, input_of, member, strs, tps
from .checks import (
    doubles,
    fully_balanced,
    kept_claims,
    moves_never_ping_pong,
    placed_twice,
    r33_balanced,
    rack_mismatches,
    rejoin,
    settle,
    validity,
    verify_validity_and_balance,
    violations,
)

TP = TopicPartition
#: a and b subscribe to t (4 partitions), c to u (1).
SPLIT = group({"t": 4, "u": 1}, [member("a").topics("t"), member("b").topics("t"), member("c").topics("u")])


def test_checkers_grade_known_answers():
    """The graders themselves: R33 rejects a 2-gap on a shared topic and accepts it across disjoint topics."""
    inp = input_of({"t": 4, "u": 1}, {"a": ((), None), "b": ((), None), "c": ((), None)}, topics={"a": ["t"], "b": ["t"], "c": ["u"]})
    good = {"a": (TP("t", 0), TP("t", 1)), "b": (TP("t", 2), TP("t", 3)), "c": (TP("u", 0),)}
    skewed = {"a": (TP("t", 0), TP("t", 1), TP("t", 2)), "b": (TP("t", 3),), "c": (TP("u", 0),)}
    assert validity(inp, good) == [] and r33_balanced(good) and fully_balanced(good)
    assert validity(inp, skewed) == [] and not r33_balanced(skewed)
    assert validity(inp, {**good, "c": (TP("t", 0),)})  # twice, and unsubscribed
    assert not fully_balanced({"a": (), "b": (TP("t", 0), TP("t", 1))})
    # R33 compares the topics members hold, not those they subscribe to: an empty member passes
    assert r33_balanced({"a": (), "b": (TP("t", 0), TP("t", 1))})
    prior = PriorOwners({"a": (TP("t", 0),), "b": (TP("t", 1),)}, frozenset(), 1)
    assert not moves_never_ping_pong(prior, {"a": (TP("t", 1),), "b": (TP("t", 0),)})
    assert moves_never_ping_pong(prior, {"a": (TP("t", 0), TP("t", 1)), "b": ()})


def test_validity_names_each_kind_and_reads_every_form_of_group():
    good = Assignment({"a": tps("t-0", "t-1"), "b": tps("t-2", "t-3"), "c": tps("u-0")})
    for form in (SPLIT, direct_group(SPLIT)):
        assert validity(form, good) == [] and violations(form, good) == {}
    broken = {"a": tps("t-0", "t-1", "t-9"), "b": tps("t-1", "u-0"), "zed": tps("t-3")}
    assert set(violations(SPLIT, broken)) == {"missing-member", "unknown-member", "unassigned", "duplicate", "unsubscribed", "nonexistent"}
    assert violations(SPLIT, broken)["unassigned"] == ["t-2 is assigned to nobody"]
    assert validity(SPLIT, broken, only=["missing-member"]) == ["c has no entry in the answer"]
    # a partition past the count listed twice is nonexistent, not a duplicate (models/invariants.md §2)
    assert set(violations(SPLIT, {**good.assignment, "a": tps("t-0", "t-1", "t-7", "t-7")})) == {"nonexistent"}
    assert placed_twice({"a": tps("t-7", "t-7")}) == list(tps("t-7"))
    with pytest.raises(ValueError):
        validity(SPLIT, good, only=["imbalance"])


def test_cooperative_validity_counts_revoking_once_and_hands_claims_only_to_claimants():
    s = group({"t": 2}, [member("a").topics("t").owns("t", 0, 1).generation(1), member("b").topics("t")], "cooperative")
    withheld = Assignment({"a": tps("t-0"), "b": ()}, {"a": tps("t-1")})
    assert violations(s, withheld, cooperative=True) == {}
    assert set(violations(s, withheld)) == {"unassigned"}  # without the round's semantics t-1 is nowhere
    handed_over = Assignment({"a": tps("t-0"), "b": tps("t-1")}, {"a": tps("t-1")})
    assert set(violations(s, handed_over, cooperative=True)) == {"duplicate", "cooperative-unsafe"}


def test_kafka_validity_and_balance_is_kafkas_and_nothing_more():
    assert verify_validity_and_balance(SPLIT, {"a": tps("t-0", "t-1", "t-2"), "b": tps("t-3"), "c": tps("u-0")})
    assert verify_validity_and_balance(SPLIT, {"a": tps("t-0", "t-1"), "b": tps("t-1", "t-2"), "c": tps("u-0")})
    assert verify_validity_and_balance(SPLIT, {"a": tps("u-0"), "b": tps("t-0"), "c": ()})
    # c (0) and a (2) differ by two but share no topic; t-3 unassigned and t-9 nonexistent are not Kafka's concern here
    assert verify_validity_and_balance(SPLIT, {"a": tps("t-0", "t-9"), "b": tps("t-1", "t-2"), "c": ()}) == []


def test_stickiness_and_rack_measures():
    s = group(
        {"t": {"partitions": 2, "racks": [["r1"], ["r2"]]}, "u": 1},
        [
            member("a").topics("t").owns("t", 0, 1).owns("u", 0).rack("r1"),
            member("b").topics("t", "u").owns("t", 5),
        ],
    )
    assert kept_claims(s, {"a": tps("t-0", "u-0"), "b": tps("t-1")}) == 1  # u-0 is not a's topic, t-5 does not exist
    assert kept_claims(s, {"a": tps("t-0", "t-1"), "b": tps("u-0")}) == 2
    assert rack_mismatches(s, {"a": tps("t-1", "u-0"), "b": tps("t-0")}) == 2  # t-1 on r2; u has no racks


def test_settle_replays_follow_up_rounds_until_nothing_is_revoked():
    s = group({"t": 2}, [member("a").topics("t").owns("t", 0, 1).generation(1), member("b").topics("t")], "cooperative")
    rounds = []

    def assign(scenario):
        rounds.append(scenario)
        owned = {m.id: m.owned for m in scenario.members}
        return Assignment({"a": tps("t-0"), "b": tps("t-1") if not owned["a"] or TP("t", 1) not in owned["a"] else ()})

    final_scenario, final = settle(s, assign)
    assert strs(final) == {"a": ["t-0"], "b": ["t-1"]} and len(rounds) == 2
    assert [m.generation for m in final_scenario.members] == [2, 1]  # one past their own, 1 for none
    pinned = rejoin(s, final, generation=1, version=2)
    assert [(m.owned, m.generation, m.version) for m in pinned.members] == [(tps("t-0"), 1, 2), (tps("t-1"), 1, 2)]
    with pytest.raises(AssertionError, match="revokes"):
        settle(s, lambda scenario: Assignment({"a": tps("t-0"), "b": tps("t-1")}))
    def swap(scenario):  # a always trades the partition it owns for the other one
        return Assignment({"a": tps("t-1") if TP("t", 0) in scenario.members[0].owned else tps("t-0"), "b": ()})

    with pytest.raises(AssertionError, match="did not settle"):
        settle(s, swap)


def test_doubles_lists_partitions_consumed_twice_at_the_end():
    def step(**consuming):
        return SimpleNamespace(members=[SimpleNamespace(name=n, consuming=tps(*c)) for n, c in consuming.items()])

    result = SimpleNamespace(steps=[step(a=["t-0"], b=["t-0"]), step(a=["t-0", "t-1"], b=["t-1"], c=[])])
    assert doubles(result) == {"t-1": ["a", "b"]}


def test_group_reads_documents_values_and_builders_alike():
    as_doc = group({"t": 3}, [{"id": "c1", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 3, "version": 1}], "cooperative")
    built = group({"t": 3}, [member("c1").topics("t").owns("t", 0, 1).generation(3).version(1)], "cooperative")
    value = group({"t": 3}, [Member("c1", ("t",), tps("t-0", "t-1"), 3, 1)], "cooperative")
    assert as_doc == built == value
    # claims keep the order they are written in, across topics
    assert member("m").owns("u", 2).owns("t", 0).build().owned == tps("u-2", "t-0")
    assert group({"t": [["r1"], ["r2"]]}, []).topics[0].racks == (("r1",), ("r2",))
