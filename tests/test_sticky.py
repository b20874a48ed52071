"""The sticky entry points: memberData (R1-R4), user data, path selection (R12-R13), the general path
as the core calls it (R26-R33), input building (0.3, 0.4, R48), variants.

Kafka's memberData unit tests (AbstractStickyAssignorTest.testMemberData, StickyAssignorTest and
CooperativeStickyAssignorTest testMemberData*, testEncodeAndDecodeGeneration, testDecodeGeneration)
are re-expressed here; the assignment tests are scenario files (tests/kafka_cases/).
"""

from __future__ import annotations

import random

import pytest

from stickyproof.assignors.base import GroupSubscription, Subscription
from stickyproof.assignors.ownership import all_subscriptions_equal
from stickyproof.assignors.releases import (
    COOPERATIVE_STICKY,
    COOPERATIVE_STICKY_2_4,
    COOPERATIVE_STICKY_2_6,
    COOPERATIVE_STICKY_2_8,
    STICKY,
    STICKY_2_2,
    STICKY_2_6,
)
from stickyproof.assignors.sticky import (
    COOPERATIVE_VARIANTS,
    STICKY_VARIANTS,
    assign_cooperative_sticky,
    assign_sticky,
    build_sticky_input,
    cooperative_user_data,
    member_data,
    members_in_map_order,
    partitions_per_topic,
    sticky_result,
    sticky_user_data,
)
from stickyproof.errors import AssignorFailure, UnknownAssignor
from stickyproof.javaorder import hashmap_order
from stickyproof.assignors.sticky_types import MemberData
from stickyproof.assignors.user_data import COOPERATIVE_GENERATION_2_8, STICKY_V1
from stickyproof.model import Member, Topic
from stickyproof.wire import encode_cooperative_user_data, encode_sticky_user_data

from .builders import direct_group, group, input_of, member, strs, tps, wire_group
from .checks import verify_validity_and_balance

OWNED = tps("topic1-0", "topic2-1")


# ------------------------------------------------------------------------------------------
# What the wire hands the sticky assignors (R1-R3, R37)


def test_wire_group_carries_owned_only_under_cooperative():
    s = group({"t": 2}, [member("a").topics("t").owns("t", 0).generation(3)], protocol="eager")
    assert wire_group(s, assignor="cooperative-sticky").members[0].owned == ()
    s = group({"t": 2}, [member("a").topics("t").owns("t", 0).generation(3)], protocol="cooperative")
    assert wire_group(s, assignor="cooperative-sticky").members[0].owned == tps("t-0")


def test_wire_group_drops_generation_below_v2():
    s = group({"t": 2}, [member("a").topics("t").owns("t", 0).generation(3).version(1)], protocol="cooperative")
    sub = wire_group(s, assignor="cooperative-sticky").members[0]
    assert sub.generation is None and sub.owned == tps("t-0") and sub.user_data == b"\x00\x00\x00\x03"


# ------------------------------------------------------------------------------------------
# R1-R4 memberData


def test_R1_sticky_member_data_comes_from_user_data_only():
    # StickyAssignorTest.testMemberDataWithInconsistentData / testMemberDataWillHonorUserData.
    user_data = encode_sticky_user_data(tps("topic-1"), 1)
    sub = Subscription("c", ("topic",), user_data=user_data, owned=tps("topic-0"), generation=None)
    data = member_data(sub, STICKY)
    assert data.partitions == tps("topic-1") and data.generation == 1
    sub = Subscription("c", ("topic",), user_data=encode_sticky_user_data(OWNED, 0), owned=(), generation=1)
    data = member_data(sub, STICKY)
    assert data.partitions == OWNED and data.generation == 0


def test_R1_sticky_user_data_cases():
    assert member_data(Subscription("c", ("t",)), STICKY).generation is None
    assert member_data(Subscription("c", ("t",), user_data=b""), STICKY).partitions == ()
    v0 = encode_sticky_user_data(OWNED, 5, version=0)
    data = member_data(Subscription("c", ("t",), user_data=v0), STICKY)
    assert data.partitions == OWNED and data.generation is None
    garbage = member_data(Subscription("c", ("t",), user_data=b"\x00\x01"), STICKY)
    assert garbage.partitions == () and garbage.generation == -1


def test_R1_2_2_reads_v0_only_and_throws_on_garbage():
    v1 = encode_sticky_user_data(OWNED, 5)
    data = member_data(Subscription("c", ("t",), user_data=v1), STICKY_2_2)
    assert data.partitions == OWNED and data.generation is None
    with pytest.raises(AssignorFailure) as err:
        member_data(Subscription("c", ("t",), user_data=b"\x00\x01"), STICKY_2_2)
    assert err.value.kafka_exception == "SchemaException"


def test_R2_cooperative_member_data_prefers_the_wire_generation():
    # CooperativeStickyAssignorTest.testMemberDataWithEmptyPartitionsAndEqualGeneration / ...HigherGeneration.
    for user_generation in (1, 0):
        sub = Subscription("c", ("topic",), user_data=encode_cooperative_user_data(user_generation), owned=(), generation=1)
        data = member_data(sub, COOPERATIVE_STICKY)
        assert data.partitions == () and data.generation == 1


def test_R2_cooperative_member_data_without_wire_generation_reads_user_data():
    # CooperativeStickyAssignorTest.testMemberDataWithInconsistentData: owned from the subscription, generation from user data.
    sub = Subscription("c", ("topic",), user_data=encode_cooperative_user_data(1), owned=tps("topic-0"))
    data = member_data(sub, COOPERATIVE_STICKY)
    assert data.partitions == tps("topic-0") and data.generation == 1
    # testDecodeGeneration: no user data and no wire generation -> absent.
    assert member_data(Subscription("c", ("topic",)), COOPERATIVE_STICKY).generation is None
    # testEncodeAndDecodeGeneration: a fresh member's user data decodes to present -1, later to its generation.
    fresh = Member("c", ("topic",))
    assert member_data(Subscription("c", ("topic",), user_data=cooperative_user_data(fresh)), COOPERATIVE_STICKY).generation == -1
    later = Member("c", ("topic",), generation=10)
    assert member_data(Subscription("c", ("topic",), user_data=cooperative_user_data(later)), COOPERATIVE_STICKY).generation == 10
    # Fewer than 4 bytes: -1, present.
    assert member_data(Subscription("c", ("topic",), user_data=b"\x01"), COOPERATIVE_STICKY).generation == -1


def test_R2_before_3_0_cooperative_members_had_no_generation():
    sub = Subscription("c", ("t",), user_data=encode_cooperative_user_data(4), owned=OWNED, generation=4)
    for release in (COOPERATIVE_STICKY_2_4, COOPERATIVE_STICKY_2_6):
        data = member_data(sub, release)
        assert data.partitions == OWNED and data.generation is None
    assert cooperative_user_data(Member("c", ("t",), generation=3), COOPERATIVE_STICKY_2_4) is None


def test_R2_in_2_8_the_cooperative_generation_comes_from_user_data_only():
    # 2.8.1's Subscription had no generation field: the wire generation 4 is not read, the user data's 2 is.
    sub = Subscription("c", ("t",), user_data=encode_cooperative_user_data(2), owned=OWNED, generation=4)
    assert member_data(sub, COOPERATIVE_STICKY_2_8) == MemberData(OWNED, 2)
    assert member_data(Subscription("c", ("t",), owned=OWNED, generation=4), COOPERATIVE_STICKY_2_8).generation is None
    assert member_data(Subscription("c", ("t",), user_data=b"\x01"), COOPERATIVE_STICKY_2_8).generation == -1


def test_a_second_member_data_call_reads_what_the_first_left_of_the_user_data():
    """2.5-2.8's readers parse ``userData()`` in place (``UserData.read_again``): after a well-formed
    sticky V1 or V0 layout nothing is left (no claims, no generation); bytes after it are read as a
    fresh user data; the cooperative int32 consumed leaves an empty buffer, which reads as -1."""
    v1 = encode_sticky_user_data(OWNED, 3)
    again = STICKY_V1.read_again
    assert again(Subscription("c", ("t",), user_data=v1)) == MemberData((), None)
    assert again(Subscription("c", ("t",), user_data=encode_sticky_user_data(OWNED, 3, version=0))) == MemberData((), None)
    assert again(Subscription("c", ("t",), user_data=v1 + encode_sticky_user_data(tps("t-0"), 5))) == MemberData(tps("t-0"), 5)
    assert again(Subscription("c", ("t",))) == MemberData((), None)
    coop = COOPERATIVE_GENERATION_2_8.read_again
    assert coop(Subscription("c", ("t",), user_data=encode_cooperative_user_data(7), owned=OWNED)) == MemberData(OWNED, -1)
    assert coop(Subscription("c", ("t",), owned=OWNED)) == MemberData(OWNED, None)


def test_2_6_general_path_forgets_the_claims_of_members_read_before_a_differing_subscription():
    """Kafka case sticky-assignment-with-conflicting-previous-generations-unequal as 2.6.3 answers it:
    consumer3 comes first in map order, ``allSubscriptionsEqual`` reads its user data and stops at
    consumer2; the general path's second read finds consumer3's buffer consumed, so its generation-2
    claims on topic-2, topic-3 and topic3 are gone and topic-2/topic-3 stay with consumer1."""
    s = group(
        {"topic": 4, "topic2": 4, "topic3": 4},
        [
            member("consumer1").topics("topic").owns("topic", 0, 1, 2, 3).generation(1),
            member("consumer2").topics("topic", "topic2").owns("topic2", 0, 1, 2, 3).owns("topic", 0, 1).generation(2),
            member("consumer3").topics("topic", "topic2", "topic3").owns("topic3", 0, 1, 2, 3).owns("topic", 2, 3).generation(2),
        ],
        protocol="eager",
    )
    assert members_in_map_order(["consumer1", "consumer2", "consumer3"])[0] == "consumer3"
    out = strs(assign_sticky(wire_group(s, assignor="sticky@2.6"), release=STICKY_2_6))
    assert out == {
        "consumer3": ["topic3-0", "topic3-1", "topic3-2", "topic3-3", "topic2-0"],
        "consumer2": ["topic2-2", "topic2-1", "topic2-3", "topic-1"],
        "consumer1": ["topic-2", "topic-3", "topic-0"],
    }


def test_R3_negative_wire_generation_falls_back_like_absent():
    s = group({"t": 2}, [member("c").topics("t").owns("t", 0).generation(-1)], protocol="cooperative")
    sub = wire_group(s, assignor="cooperative-sticky").members[0]
    assert sub.generation is None
    assert member_data(sub, COOPERATIVE_STICKY).generation == -1  # from the user data (R2)


def test_R4_absent_and_minus_one_generations_behave_alike():
    base = {"b": (["t-0"], 2)}
    a_absent = build_and_assign({"t": 2}, {**base, "a": (["t-0", "t-1"], None)})
    a_minus_one = build_and_assign({"t": 2}, {**base, "a": (["t-0", "t-1"], -1)})
    assert a_absent == a_minus_one


def build_and_assign(ppt, claims):
    inp = input_of(ppt, claims)
    return strs(sticky_result(inp).assignment)


def test_member_data_over_every_subscription_version():
    # AbstractStickyAssignorTest.testMemberData: V0 (sticky only), V1, V2+ all yield the owned list and generation 1.
    m = Member("c", ("topic",), owned=OWNED, generation=1)
    for version in (0, 1, 3):
        s = group({"topic": 1, "topic1": 1, "topic2": 2}, [Member("c", ("topic",), OWNED, 1, version)], protocol="eager")
        data = member_data(wire_group(s, assignor="sticky").members[0], STICKY)
        assert data.partitions == OWNED and data.generation == 1
    for version in (1, 3):
        s = group({"topic": 1, "topic1": 1, "topic2": 2}, [Member("c", ("topic",), OWNED, 1, version)], protocol="cooperative")
        data = member_data(wire_group(s, assignor="cooperative-sticky").members[0], COOPERATIVE_STICKY)
        assert data.partitions == OWNED and data.generation == 1
    assert m.owned == OWNED


def test_member_data_direct_takes_the_fields_as_given():
    sub = Subscription("c", ("t",), owned=OWNED, generation=7)
    assert member_data(sub, STICKY, direct=True).generation == 7
    assert member_data(sub, STICKY_2_2, direct=True).generation is None
    assert member_data(sub, COOPERATIVE_STICKY_2_4, direct=True).partitions == OWNED


def test_sticky_user_data_is_null_before_the_first_assignment():
    assert sticky_user_data(Member("c", ("t",))) is None
    assert sticky_user_data(Member("c", ("t",), generation=3)) == encode_sticky_user_data((), 3)
    assert sticky_user_data(Member("c", ("t",), OWNED, 2), STICKY_2_2) == encode_sticky_user_data(OWNED, 2, version=0)


def test_unknown_variants_are_rejected():
    assert STICKY_VARIANTS == ("2.2", "2.3", "2.4", "2.6", "2.8.1", "3.3", "3.4", "3.5.1", "3.6")
    assert COOPERATIVE_VARIANTS == ("2.4", "2.6", "2.8.1", "3.3", "3.4", "3.5.1", "3.6")
    group = GroupSubscription({}, (Subscription("c", ()),))
    with pytest.raises(UnknownAssignor):
        assign_sticky(group, release="3.2")
    with pytest.raises(UnknownAssignor):
        assign_cooperative_sticky(group, release="2.2")


# ------------------------------------------------------------------------------------------
# R12-R14 path selection


def test_R12_equal_subscriptions_take_the_constrained_path():
    s = group({"t": 3, "u": 1}, [member("a").topics("t", "u"), member("b").topics("u", "t")], protocol="eager")
    inp = build_sticky_input(wire_group(s, assignor="sticky"), STICKY)
    assert all_subscriptions_equal(inp)
    assert sticky_result(inp).partitions_transferring_ownership == {}


def test_R12_a_subscription_to_a_missing_topic_makes_members_different():
    s = group({"t": 3}, [member("a").topics("t", "ghost"), member("b").topics("t")], protocol="eager")
    inp = build_sticky_input(wire_group(s, assignor="sticky"), STICKY)
    assert not all_subscriptions_equal(inp)
    assert sticky_result(inp).partitions_transferring_ownership is None  # the general path


def test_R13_empty_subscription_seeding_depends_on_map_order():
    assert hashmap_order(["a", "b", "c"]) == ["a", "b", "c"]
    first = input_of({"t": 3}, {"a": ((), None), "b": ((), None), "c": ((), None)}, topics={"a": [], "b": ["t"], "c": ["t"]})
    assert all_subscriptions_equal(first)
    last = input_of(
        {"t": 3}, {"a": ((), None), "b": ((), None), "c": ((), None)}, topics={"a": [], "b": ["t"], "c": ["t"]}, order=["b", "c", "a"]
    )
    assert not all_subscriptions_equal(last)


def test_R14_empty_group_fails_with_arithmetic_exception():
    with pytest.raises(AssignorFailure) as err:
        assign_sticky(GroupSubscription({"t": Topic("t", 3)}, ()))
    assert err.value.kafka_exception == "ArithmeticException"


# ------------------------------------------------------------------------------------------
# The general path as the core drives it (R26-R33; the path itself is tests/test_general.py)


def test_R26_heterogeneous_subscriptions_reach_the_general_path_with_resolved_claims():
    # AbstractStickyAssignorTest.testMultipleConsumersMixedTopicSubscriptions (exact lists).
    s = group(
        {"topic1": 3, "topic2": 2},
        [member("consumer1").topics("topic1"), member("consumer2").topics("topic1", "topic2"), member("consumer3").topics("topic1")],
        protocol="eager",
    )
    result = assign_sticky(wire_group(s, assignor="sticky"))
    assert strs(result.assignment) == {
        "consumer1": ["topic1-0", "topic1-2"],
        "consumer2": ["topic2-0", "topic2-1"],
        "consumer3": ["topic1-1"],
    }


def test_R27_max_generation_reaches_the_general_path():
    inp = input_of({"t": 4}, {"a": (["t-0", "t-1"], 3), "b": (["t-2"], 9)}, topics={"a": ["t"], "b": ["t", "x"]})
    from stickyproof.assignors.ownership import resolve_prior_owners

    assert resolve_prior_owners(inp, STICKY).max_generation == 9


def test_R28_claims_on_unsubscribed_topics_survive_resolution_for_the_general_path_to_revoke():
    s = group(
        {"t": 2, "u": 2},
        [member("a").topics("t").owns("t", 0).owns("u", 0).generation(1), member("b").topics("t", "u").owns("u", 1).generation(1)],
        protocol="cooperative",
    )
    wired = wire_group(s, assignor="cooperative-sticky")
    result = assign_cooperative_sticky(wired)
    assert "u-0" not in strs(result.assignment)["a"]
    assert not any(p.topic == "u" for p in result.assignment["a"])


def test_R29_initial_fill_gives_each_new_partition_to_the_least_loaded_subscriber():
    s = group({"x": 1, "y": 4}, [member("a").topics("x", "y"), member("b").topics("y")], protocol="eager")
    result = assign_sticky(wire_group(s, assignor="sticky"))
    assert sorted(len(v) for v in result.assignment.values()) == [2, 3]
    assert [str(p) for p in result.assignment["a"]].count("x-0") == 1


def test_R30_no_partition_could_move_to_a_member_two_below_its_holder():
    # isBalanced after KAFKA-15106: for each member that could hold more, no partition of its topics
    # sits with a member holding at least 2 more.
    s = group(
        {"a": 5, "b": 2, "c": 3},
        [member("m1").topics("a", "b"), member("m2").topics("a"), member("m3").topics("b", "c"), member("m4").topics("c")],
        protocol="eager",
    )
    result = assign_sticky(wire_group(s, assignor="sticky")).assignment
    subscribed = {m.id: set(m.topics) for m in s.members}
    holder = {p: m for m, v in result.items() for p in v}
    for m, v in result.items():
        for p, h in holder.items():
            if p.topic in subscribed[m] and h != m:
                assert len(result[h]) < len(v) + 2, (m, p, h)


def test_R31_sole_subscribers_keep_their_topics():
    s = group({"solo": 3, "shared": 3}, [member("a").topics("solo", "shared"), member("b").topics("shared")], protocol="eager")
    result = assign_sticky(wire_group(s, assignor="sticky"))
    assert {p.topic for p in result.assignment["b"]} == {"shared"}
    assert sorted(str(p) for p in result.assignment["a"] if p.topic == "solo") == ["solo-0", "solo-1", "solo-2"]


def test_R32_general_path_result_is_balanced_in_kafkas_sense():
    # AbstractStickyAssignorTest.testMoveExistingAssignments: valid and balanced (R33).
    s = group(
        {f"topic{i}": 1 for i in range(1, 7)},
        [
            member("consumer1").topics("topic1", "topic2").owns("topic1", 0).generation(1),
            member("consumer2").topics("topic1", "topic2", "topic3", "topic4").owns("topic2", 0).owns("topic3", 0).generation(1),
            member("consumer3")
            .topics("topic2", "topic3", "topic4", "topic5", "topic6")
            .owns("topic4", 0)
            .owns("topic5", 0)
            .owns("topic6", 0)
            .generation(1),
        ],
        protocol="eager",
    )
    result = assign_sticky(wire_group(s, assignor="sticky"))
    # consumer1 (1) and consumer3 (3) differ by two but share no subscribable topic: balanced in R33's sense.
    assert verify_validity_and_balance(s, result) == []
    assert sticky_result(build_sticky_input(wire_group(s, assignor="sticky"), STICKY)).partitions_transferring_ownership is None


def test_R33_kafka_balance_notion_holds_after_a_member_leaves():
    s = group(
        {f"t{i}": i for i in range(1, 8)},
        [member(f"c{i}").topics(*[f"t{j}" for j in range(1, i + 1)]) for i in range(1, 8)],
        protocol="eager",
    )
    result = assign_sticky(wire_group(s, assignor="sticky"))
    assert verify_validity_and_balance(s, result) == []


# ------------------------------------------------------------------------------------------
# Input building (0.3, 0.4, N1, R48)


def test_members_iterate_in_java_hashmap_order_of_join_order():
    ids = ["consumer1", "consumer2", "consumer3"]
    assert members_in_map_order(ids) == ("consumer3", "consumer2", "consumer1")


def test_partitions_per_topic_keeps_subscribed_existing_non_empty_topics():
    group = GroupSubscription(
        {"a": Topic("a", 2), "empty": Topic("empty", 0), "unsubscribed": Topic("unsubscribed", 4)},
        (Subscription("c", ("a", "empty", "missing")),),
    )
    assert partitions_per_topic(group) == {"a": 2}


def test_R23_result_does_not_depend_on_join_order_beyond_the_hashmap():
    s = group(
        {"t": 11, "u": 4},
        [member(f"m{i}").topics("t", "u").owns("t", *range(i, 11, 4)).generation(1 + i % 2) for i in range(5)],
        protocol="cooperative",
    )
    base = assign_cooperative_sticky(direct_group(s))
    for seed in range(4):
        members = list(s.members)
        random.Random(seed).shuffle(members)
        from dataclasses import replace

        again = assign_cooperative_sticky(direct_group(replace(s, members=tuple(members))))
        assert strs(again.assignment) == strs(base.assignment)
        assert strs(again.revoking) == strs(base.revoking)
