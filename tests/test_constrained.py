"""The constrained path, rule by rule (docs/rules.md R14-R25, R48, §10 K1), and fast == reference.

Each test is named after the rule it pins. Expected assignments are worked out by hand from the
rule text (and, where Kafka's own tests assert them, from those tests; see tests/kafka_cases/).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stickyproof.assignors.constrained import NO_MORE_UNFILLED, constrained_assign, constrained_fast
from stickyproof.assignors.engines import FAST, REFERENCE, Declined
from stickyproof.assignors.ownership import resolve_prior_owners
from stickyproof.assignors.reference.constrained import constrained_reference
from stickyproof.assignors.releases import COOPERATIVE_STICKY, COOPERATIVE_STICKY_3_5_1, STICKY, Release
from stickyproof.assignors.sticky import assign_cooperative_sticky, assign_sticky, build_sticky_input
from stickyproof.assignors.sticky_types import StickyInput
from stickyproof.errors import AssignorFailure
from stickyproof.javaorder import hashmap_order

from .builders import group, input_of, member, strs, tps, wire_group


def run(inp: StickyInput, *, release: Release = STICKY):
    """The release's constrained builder on ``inp`` (R12 assumed: the tests here give equal subscriptions)."""
    return release.constrained_builder(inp, resolve_prior_owners(inp, release), release)


def ordered(*ids: str) -> tuple[str, ...]:
    """Members in exactly this iteration order (tests that need a given HashMap order state it)."""
    return tuple(ids)


# ------------------------------------------------------------------------------------------
# R14, R15


def test_R14_empty_group_divides_by_zero():
    inp = input_of({"t": 3}, {})
    with pytest.raises(AssignorFailure) as err:
        run(inp)
    assert err.value.kafka_exception == "ArithmeticException"


def test_R15_quotas_min_max_and_expected_over_min():
    # 7 partitions, 3 members: min 2, max 3, exactly one member ends with 3.
    inp = input_of({"t": 7}, {"a": ((), -1), "b": ((), -1), "c": ((), -1)})
    sizes = sorted(len(v) for v in run(inp).assignment.values())
    assert sizes == [2, 2, 3]


# ------------------------------------------------------------------------------------------
# R16, R17


def test_R16_first_owner_in_map_order_keeps_max_quota():
    # 4 partitions, 3 members: min 1, max 2, one slot at max. a and b both own 2.
    claims = {"a": (["t-0", "t-1"], 1), "b": (["t-2", "t-3"], 1), "c": ((), 1)}
    first_a = run(input_of({"t": 4}, claims, order=ordered("a", "b", "c")))
    first_b = run(input_of({"t": 4}, claims, order=ordered("b", "a", "c")))
    assert strs(first_a.assignment) == {"a": ["t-0", "t-1"], "b": ["t-2"], "c": ["t-3"]}
    assert strs(first_b.assignment) == {"b": ["t-2", "t-3"], "a": ["t-0"], "c": ["t-1"]}


def test_R16_owned_sorted_by_partition_then_topic_before_quota():
    # KAFKA-16277: a owns x-0, x-1, y-0 but may keep 2 (min 2 of 6 over 3): sorted x-0, y-0, x-1.
    claims = {"a": (["x-0", "x-1", "y-0"], 1), "b": (["x-2", "y-1", "y-2"], 1), "c": ((), 1)}
    result = run(input_of({"x": 3, "y": 3}, claims, order=ordered("a", "b", "c")))
    assert [str(p) for p in result.assignment["a"]] == ["x-0", "y-0"]
    assert [str(p) for p in result.assignment["b"]] == ["y-1", "x-2"]


def test_R16_claim_order_before_3_7_1():
    claims = {"a": (["x-0", "x-1", "y-0"], 1), "b": (["x-2", "y-1", "y-2"], 1), "c": ((), 1)}
    result = run(input_of({"x": 3, "y": 3}, claims, order=ordered("a", "b", "c")), release=COOPERATIVE_STICKY_3_5_1)
    assert [str(p) for p in result.assignment["a"]] == ["x-0", "x-1"]
    assert [str(p) for p in result.assignment["b"]] == ["x-2", "y-1"]


def test_R17_multiply_claimed_partition_stripped_even_from_higher_generation_winner():
    # R9: gens 3, 3, 5 in map order: the gen-5 member wins t-0 but t-0 is in DUP, so it is withheld.
    claims = {"a": (["t-0"], 3), "b": (["t-0"], 3), "c": (["t-0"], 5)}
    inp = input_of({"t": 3}, claims, order=ordered("a", "b", "c"))
    prior = resolve_prior_owners(inp, STICKY)
    assert prior.consumer_to_owned_partitions["c"] == tps("t-0")
    assert prior.partitions_with_multiple_previous_owners == frozenset(tps("t-0"))
    result = constrained_assign(inp, prior, STICKY)
    assert strs(result.assignment) == {"a": ["t-0"], "b": ["t-1"], "c": ["t-2"]}
    assert strs({str(k): [v] for k, v in result.partitions_transferring_ownership.items()}) == {"t-0": ["a"]}


# ------------------------------------------------------------------------------------------
# R18-R22


def test_R18_unassigned_in_topic_then_partition_order():
    # Fresh: the round robin hands partitions out in (topic, partition) order over sorted members.
    inp = input_of({"b": 2, "a": 2}, {"m1": ((), -1), "m2": ((), -1)})
    assert strs(run(inp).assignment) == {"m1": ["a-0", "b-0"], "m2": ["a-1", "b-1"]}


def test_R19_unfilled_members_sorted_by_member_id_in_java_order():
    # U+FFFF sorts after U+10000 in UTF-16 (surrogates start with U+D800), before it in code points.
    hi, astral = "\uffff", "\U00010000"
    inp = input_of({"t": 2}, {hi: ((), -1), astral: ((), -1)})
    result = run(inp).assignment
    assert [str(p) for p in result[astral]] == ["t-0"]
    assert [str(p) for p in result[hi]] == ["t-1"]


def test_R20_rack_round_robin_prefers_rack_aligned_members():
    racks = (("r1",), ("r2",), ("r1",), ("r2",))
    s = group(
        {"t": racks},
        [member("a").topics("t").rack("r2"), member("b").topics("t").rack("r1")],
        protocol="cooperative",
    )
    result = assign_sticky(wire_group(s, assignor="sticky"))
    # Each partition goes to the next under-min member on its rack, cursor kept between partitions.
    assert strs(result.assignment) == {"a": ["t-1", "t-3"], "b": ["t-0", "t-2"]}


def _transfer_ownership_list_input() -> StickyInput:
    """testUniformSubscriptionTransferOwnershipListIsRight's group as the cooperative assignor sees it:
    topic1's partitions on racks a, b, a, b; c0 (rack a) owns topic1-0, 1 and c1 (rack b) owns 2, 3,
    so each owns one partition on the other's rack."""
    racks = (("a",), ("b",), ("a",), ("b",))
    s = group(
        {"topic1": racks},
        [
            member("c0").topics("topic1").owns("topic1", 0, 1).generation(1).rack("a"),
            member("c1").topics("topic1").owns("topic1", 2, 3).generation(1).rack("b"),
        ],
        protocol="cooperative",
    )
    return build_sticky_input(wire_group(s, assignor="cooperative-sticky"), COOPERATIVE_STICKY)


def test_R20_rack_mismatched_owned_partition_is_maybe_revoked_and_transferring():
    # CooperativeStickyAssignorTest.testUniformSubscriptionTransferOwnershipListIsRight: racks a, b, a, b.
    inp = _transfer_ownership_list_input()
    assert inp.rack_aware
    result = run(inp)
    assert len(result.partitions_transferring_ownership) == 2
    assert {str(k): v for k, v in result.partitions_transferring_ownership.items()} == {
        "topic1-2": "c0",
        "topic1-1": "c1",
    }


def test_R21_round_robin_fills_to_min_then_one_more_in_order():
    # 5 partitions, 2 members (min 2, max 3); a owns t-4, b nothing; both start under min.
    # t-0 -> a (a reaches min, joins at_min), t-1 -> b, t-2 -> b (b reaches min, joins at_min),
    # then under_min is empty: t-3 goes to the head of at_min, a.
    inp = input_of({"t": 5}, {"a": (["t-4"], 1), "b": ((), 1)}, order=ordered("a", "b"))
    assert strs(run(inp).assignment) == {"a": ["t-4", "t-0", "t-3"], "b": ["t-1", "t-2"]}


def test_R22_unfilled_member_at_the_end_fails():
    # §10 K1: a's claims t-5, t-6 do not exist; the merge desynchronises; Kafka throws.
    inp = input_of({"t": 4}, {"a": (["t-5", "t-6"], 1), "b": ((), 1)}, order=ordered("a", "b"))
    with pytest.raises(AssignorFailure) as err:
        run(inp)
    assert err.value.kafka_exception == "IllegalStateException"
    assert NO_MORE_UNFILLED in str(err.value)


def _kafka_15170_group():
    """7 partitions over a, b (rack r1, own 2 each) and c (rack r2, owns none); t-4..t-6 only on r1.

    min 2, max 3, one member may reach max. Both a and b are at min and rack-aligned with every
    free partition; c is aligned with none.
    """
    racks = (("r1", "r2"),) + (("r1",),) * 6
    return group(
        {"t": racks},
        [
            member("a").topics("t").owns("t", 0, 1).generation(1).rack("r1"),
            member("b").topics("t").owns("t", 2, 3).generation(1).rack("r1"),
            member("c").topics("t").generation(1).rack("r2"),
        ],
        protocol="cooperative",
    )


def test_R22_final_check_fails_when_a_member_stays_under_min_quota():
    # Before KAFKA-15170 the rack round robin neither counted members reaching max_quota nor cleared
    # at_min: a and b both get a rack-aligned partition, c ends with 1 < min 2, R22 throws.
    inp = build_sticky_input(wire_group(_kafka_15170_group(), assignor="cooperative-sticky"), COOPERATIVE_STICKY)
    assert inp.rack_aware
    with pytest.raises(AssignorFailure) as err:
        run(inp, release=COOPERATIVE_STICKY_3_5_1)
    assert err.value.kafka_exception == "IllegalStateException"
    assert "haven't reached the expected number" in str(err.value)
    fixed = run(inp)
    assert sorted(len(v) for v in fixed.assignment.values()) == [2, 2, 3]


def test_R23_deterministic_whatever_the_input_order():
    claims = {f"m{i}": ([f"t-{j}" for j in range(i, 40, 7)], 1 + i % 2) for i in range(7)}
    base = run(input_of({"t": 40, "u": 3}, claims))
    for seed in range(5):
        items = list(claims.items())
        random.Random(seed).shuffle(items)
        shuffled = dict(items)
        again = run(input_of({"u": 3, "t": 40}, shuffled, order=hashmap_order(list(shuffled))))
        assert strs(again.assignment) == strs(base.assignment)


def test_R23_every_member_ends_at_min_or_max_quota():
    inp = input_of({"t": 23}, {f"m{i}": ([f"t-{i}", f"t-{i + 7}"], 1) for i in range(5)})
    sizes = {len(v) for v in run(inp).assignment.values()}
    assert sizes <= {4, 5}


def test_R24_kept_partitions_first_then_grants_in_grant_order():
    # 6 partitions, min = max = 3. a keeps t-3, t-5 (sorted), both a and b are under min:
    # t-0 -> a (a is full), then b takes t-1, t-2, t-4 on the following passes.
    inp = input_of({"t": 6}, {"a": (["t-5", "t-3"], 1), "b": ((), 1)}, order=ordered("a", "b"))
    assert strs(run(inp).assignment) == {"a": ["t-3", "t-5", "t-0"], "b": ["t-1", "t-2", "t-4"]}


def test_R25_transferring_only_when_taken_from_another_member():
    # a owns 4 of 4, b joins: a keeps 2, t-2 and t-3 move to b and are transferring.
    inp = input_of({"t": 4}, {"a": (["t-0", "t-1", "t-2", "t-3"], 1), "b": ((), 1)}, order=ordered("a", "b"))
    result = run(inp)
    assert strs(result.assignment) == {"a": ["t-0", "t-1"], "b": ["t-2", "t-3"]}
    assert {str(k): v for k, v in result.partitions_transferring_ownership.items()} == {"t-2": "b", "t-3": "b"}


def test_R25_before_kafka_15170_rack_mismatched_claims_were_not_transferring():
    # testUniformSubscriptionTransferOwnershipListIsRight under 3.5.1: the rack-mismatched owned
    # partitions move to the other member but were not recorded, so the cooperative assignor
    # handed them over at once while their owner still held them.
    inp = _transfer_ownership_list_input()
    assert run(inp, release=COOPERATIVE_STICKY_3_5_1).partitions_transferring_ownership == {}
    assert len(run(inp).partitions_transferring_ownership) == 2


# ------------------------------------------------------------------------------------------
# R48 (constrained parts), §10 K1, K2


def test_R48_rack_mode_off_when_every_partition_is_on_every_rack():
    racks = (("a", "b"), ("a", "b"))
    s = group({"t": racks}, [member("x").topics("t").rack("a"), member("y").topics("t").rack("b")], protocol="cooperative")
    assert not build_sticky_input(wire_group(s, assignor="sticky"), STICKY).rack_aware


def test_R48_rack_mode_on_when_a_partition_misses_a_rack():
    racks = (("a",), ("a", "b"))
    s = group({"t": racks}, [member("x").topics("t").rack("a"), member("y").topics("t").rack("b")], protocol="cooperative")
    assert build_sticky_input(wire_group(s, assignor="sticky"), STICKY).rack_aware


def test_R48_member_without_rack_never_mismatches_owned_partitions():
    # 2 partitions, 3 members (min 0, max 1). x (rack a) owns t-1 (rack b): dropped, maybe revoked.
    # z (no rack) keeps t-0 although t-0 is on rack a. The rack round robin gives t-1 to y (rack b):
    # transferring, so withheld this round while x revokes it.
    racks = (("a",), ("b",))
    s = group(
        {"t": racks},
        [
            member("x").topics("t").owns("t", 1).generation(1).rack("a"),
            member("y").topics("t").generation(1).rack("b"),
            member("z").topics("t").owns("t", 0).generation(1),
        ],
        protocol="cooperative",
    )
    result = assign_cooperative_sticky(wire_group(s, assignor="cooperative-sticky"))
    assert strs(result.assignment) == {"x": [], "y": [], "z": ["t-0"]}
    assert strs(result.revoking) == {"x": ["t-1"]}


def test_K1_nonexistent_partition_claim_desynchronises_the_merge():
    # t:4, a owns t-0 and the nonexistent t-7; b owns t-1. min = max = 2.
    claims = {"a": (["t-0", "t-7"], 1), "b": (["t-1"], 1)}
    inp = input_of({"t": 4}, claims, order=ordered("a", "b"))
    result = run(inp)
    # kept: a {t-0, t-7}, b {t-1}; sorted kept t-0, t-1, t-7: the merge matches t-0, t-1, then
    # waits for t-7 and reports t-2, t-3 unassigned; b reaches min with t-2 and, polled from
    # at_min, also takes t-3: a holds a partition that does not exist, b holds 3 of 4.
    assert strs(result.assignment) == {"a": ["t-0", "t-7"], "b": ["t-1", "t-2", "t-3"]}


def test_K1_desynchronised_merge_reassigns_a_kept_partition():
    # s:1, t:3 over a, b, c (min 1, max 2). a keeps the nonexistent s-9, b keeps t-0. Sorted kept
    # s-9, t-0: the merge waits for s-9 forever, so every partition, t-0 included, is "unassigned".
    # c takes s-0; the at_min queue a, b, c then takes t-0, t-1, t-2: t-0 is owned twice.
    claims = {"a": (["s-9"], 1), "b": (["t-0"], 1), "c": ((), 1)}
    inp = input_of({"s": 1, "t": 3}, claims, order=ordered("a", "b", "c"))
    assert strs(run(inp).assignment) == {"a": ["s-9", "t-0"], "b": ["t-0", "t-1"], "c": ["s-0", "t-2"]}


def test_K1_merge_desynchronised_at_the_first_partition_throws():
    # s:1, t:1 over a, b (min = max = 1): a keeps s-9, b keeps t-0, both partitions reported free,
    # nobody is under min or at_min: IllegalStateException.
    claims = {"a": (["s-9"], 1), "b": (["t-0"], 1)}
    inp = input_of({"s": 1, "t": 1}, claims, order=ordered("a", "b"))
    with pytest.raises(AssignorFailure) as err:
        run(inp)
    assert NO_MORE_UNFILLED in str(err.value)


def test_K2_member_with_empty_subscription_iterating_first_gets_partitions():
    ids = hashmap_order(["a", "b", "c"])
    assert ids[0] == "a"
    s = group({"t": 3}, [member("a"), member("b").topics("t"), member("c").topics("t")], protocol="eager")
    result = assign_sticky(wire_group(s, assignor="sticky"))
    assert len(result.assignment["a"]) == 1


# ------------------------------------------------------------------------------------------
# The fast path equals the reference


@st.composite
def constrained_inputs(draw):
    n_topics = draw(st.integers(1, 3))
    counts = {f"t{i}": draw(st.integers(0, 9)) for i in range(n_topics)}
    n_members = draw(st.integers(1, 7))
    ids = draw(st.lists(st.sampled_from([f"c{i}" for i in range(12)] + ["consumer1", "x", "ß"]), min_size=n_members, max_size=n_members, unique=True))
    claims = {}
    all_tps = [f"{t}-{p}" for t, c in counts.items() for p in range(c)]
    for m in ids:
        owned = draw(st.lists(st.sampled_from(all_tps), unique=True, max_size=8)) if all_tps else []
        claims[m] = (owned, draw(st.sampled_from([None, -1, 1, 2, 3])))
    return input_of(counts, claims)


@settings(max_examples=300)
@given(constrained_inputs(), st.sampled_from([COOPERATIVE_STICKY, COOPERATIVE_STICKY_3_5_1]))
def test_fast_path_equals_reference(inp, release):
    prior = resolve_prior_owners(inp, release)
    try:
        expected = constrained_reference(inp, prior, release)
    except AssignorFailure as exc:
        expected = exc
    try:
        fast = constrained_fast(inp, prior, release)
    except AssignorFailure as exc:
        assert isinstance(expected, AssignorFailure) and str(exc) == str(expected)
        return
    except Declined:
        return
    assert not isinstance(expected, AssignorFailure), expected
    assert {m: list(v) for m, v in fast.assignment.items()} == {m: list(v) for m, v in expected.assignment.items()}
    assert dict(fast.partitions_transferring_ownership) == dict(expected.partitions_transferring_ownership)


def test_fast_path_taken_for_a_large_clean_group():
    claims = {f"c{i:03d}": ([f"t-{j}" for j in range(i * 3, i * 3 + 3)], 1) for i in range(100)}
    claims.update({f"n{i}": ((), 1) for i in range(20)})
    inp = input_of({"t": 400, "u": 50}, claims)
    prior = resolve_prior_owners(inp, STICKY)
    fast = constrained_fast(inp, prior, STICKY)
    assert fast is not None
    assert fast == constrained_reference(inp, prior, STICKY)


# ------------------------------------------------------------------------------------------
# The fallback protocol: every result records its engine (engines.py)


def test_fast_engine_result_records_fast_and_no_decline():
    result = run(input_of({"t": 5}, {"a": (["t-0"], 1), "b": ((), 1)}))
    assert (result.engine, result.declined) == (FAST, None)


def test_fast_engine_declines_k1_with_a_reason_and_the_transcription_runs():
    inp = input_of({"t": 4}, {"a": (["t-0", "t-7"], 1), "b": (["t-1"], 1)}, order=ordered("a", "b"))
    with pytest.raises(Declined) as declined:
        constrained_fast(inp, resolve_prior_owners(inp, STICKY), STICKY)
    result = run(inp)
    assert result.engine == REFERENCE and result.declined == declined.value.reason
    assert "K1" in result.declined


def test_fast_engine_declines_rack_mode():
    inp = build_sticky_input(wire_group(_kafka_15170_group(), assignor="cooperative-sticky"), COOPERATIVE_STICKY)
    result = run(inp, release=COOPERATIVE_STICKY)
    assert result.engine == REFERENCE and "rack" in result.declined


def test_the_2_6_builder_is_its_own_transcription():
    from stickyproof.assignors.releases import STICKY_2_6

    result = run(input_of({"t": 5}, {"a": (["t-0"], 1), "b": ((), 1)}), release=STICKY_2_6)
    assert (result.engine, result.declined) == (REFERENCE, None)
