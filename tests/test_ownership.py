"""Prior-ownership resolution, rule by rule (docs/rules.md R5-R11, §1.3's historical rules)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from stickyproof.assignors.ownership import owner_after_lost_claim_current, replay_contested, resolve_prior_owners
from stickyproof.assignors.releases import STICKY, get_release
from stickyproof.assignors.sticky_types import PriorOwners, StickyInput
from stickyproof.model import TopicPartition

from .builders import input_of, literal_prior_owners, tps


def kept(prior: PriorOwners) -> dict[str, list[str]]:
    return {m: [str(p) for p in v] for m, v in prior.consumer_to_owned_partitions.items()}


def resolve(claims, *, order, ppt=None, release="sticky", **kw) -> PriorOwners:
    return resolve_prior_owners(input_of(ppt or {"t": 6, "u": 3}, claims, order=order, **kw), get_release(release))


# ------------------------------------------------------------------------------------------
# R5-R11 (current rule)


def test_R5_claims_on_topics_outside_partitions_per_topic_are_dropped():
    prior = resolve({"a": (["gone-0", "t-1", "gone-1"], 1)}, order=["a"])
    assert kept(prior) == {"a": ["t-1"]}


def test_R6_partition_numbers_and_subscriptions_are_not_checked():
    # t-9 does not exist (t has 6) and a does not subscribe to u: both claims survive resolution.
    prior = resolve({"a": (["t-9", "u-0"], 1)}, order=["a"], topics={"a": ["t"]})
    assert kept(prior) == {"a": ["t-9", "u-0"]}


def test_R6_nonexistent_partition_claims_still_conflict():
    prior = resolve({"a": (["t-9"], 1), "b": (["t-9"], 1)}, order=["a", "b"])
    assert kept(prior) == {"a": [], "b": []}
    assert prior.partitions_with_multiple_previous_owners == frozenset(tps("t-9"))


def test_R7_a_lone_claim_is_honoured_whatever_its_generation():
    prior = resolve({"old": (["t-0"], -1), "new": (["t-1"], 50)}, order=["new", "old"])
    assert kept(prior) == {"new": ["t-1"], "old": ["t-0"]}


def test_R8_same_generation_both_lose_and_the_partition_is_multiply_claimed():
    prior = resolve({"a": (["t-0", "t-1"], 4), "b": (["t-0"], 4)}, order=["a", "b"])
    assert kept(prior) == {"a": ["t-1"], "b": []}
    assert prior.partitions_with_multiple_previous_owners == frozenset(tps("t-0"))


def test_R8_higher_generation_wins_either_order():
    for order in (["a", "b"], ["b", "a"]):
        prior = resolve({"a": (["t-0"], 3), "b": (["t-0"], 5)}, order=order)
        assert kept(prior) == {"a": [], "b": ["t-0"]}
        assert not prior.partitions_with_multiple_previous_owners


def test_R8_kept_claims_stay_in_claim_order():
    prior = resolve({"a": (["t-5", "u-1", "t-0", "t-3"], 3), "b": (["u-1"], 4)}, order=["a", "b"])
    assert kept(prior)["a"] == ["t-5", "t-0", "t-3"]


def test_R9_three_claimants_depend_on_iteration_order():
    claims = {"a": (["t-0"], 3), "b": (["t-0"], 3), "c": (["t-0"], 5)}
    prior = resolve(claims, order=["a", "b", "c"])
    assert kept(prior)["c"] == ["t-0"] and prior.partitions_with_multiple_previous_owners == frozenset(tps("t-0"))
    prior = resolve(claims, order=["c", "a", "b"])
    assert kept(prior)["c"] == ["t-0"] and not prior.partitions_with_multiple_previous_owners


def test_R10_rival_generation_is_read_from_the_wire():
    # a is a v1 member: its member data says generation 7 but its wire generation is absent (-1).
    # b claims the same partition in generation 2: it beats a, whose generation is read as -1.
    prior = resolve({"a": (["t-0"], 7), "b": (["t-0"], 2)}, order=["a", "b"], wire_generation={"a": -1})
    assert kept(prior) == {"a": [], "b": ["t-0"]}
    # Two claimants with the same real generation but no wire generation: no duplicate, the later wins.
    prior = resolve({"a": (["t-0"], 2), "b": (["t-0"], 2)}, order=["a", "b"], wire_generation={"a": -1, "b": -1})
    assert kept(prior) == {"a": [], "b": ["t-0"]} and not prior.partitions_with_multiple_previous_owners


def test_R11_max_generation_is_the_highest_member_generation_or_minus_one():
    assert resolve({"a": ((), 3), "b": ((), None)}, order=["a", "b"]).max_generation == 3
    assert resolve({"a": ((), None)}, order=["a"]).max_generation == -1
    assert resolve_prior_owners(input_of({"t": 1}, {}), STICKY).max_generation == -1


# ------------------------------------------------------------------------------------------
# Historical rules (§1.3)


def test_variant_2_2_trusts_every_claim_so_a_stalled_member_keeps_reassigned_partitions():
    prior = resolve({"stalled": (["t-0", "t-1"], None), "current": (["t-0", "t-1", "t-2"], None)}, order=["stalled", "current"], release="sticky@2.2")
    assert kept(prior) == {"stalled": ["t-0", "t-1"], "current": ["t-0", "t-1", "t-2"]}
    assert not prior.partitions_with_multiple_previous_owners


def test_variant_2_4_last_claimant_without_generation_wins():
    claims = {"a": (["t-0"], None), "b": (["t-0"], None)}
    assert kept(resolve(claims, order=["a", "b"], release="cooperative-sticky@2.4")) == {"a": [], "b": ["t-0"]}
    assert kept(resolve(claims, order=["b", "a"], release="cooperative-sticky@2.4")) == {"a": ["t-0"], "b": []}


def test_variant_2_4_treemap_first_claim_wins_within_a_present_generation():
    claims = {"a": (["t-0"], 2), "b": (["t-0"], 2), "c": (["t-0"], 1)}
    prior = resolve(claims, order=["a", "b", "c"], release="cooperative-sticky@2.4")
    assert kept(prior) == {"a": ["t-0"], "b": [], "c": []}


def test_variant_2_6_highest_generation_only_drops_uncontested_claims_of_older_members():
    claims = {"a": (["t-0"], 3), "b": (["t-1"], 5), "c": (["t-2"], None)}
    prior = resolve(claims, order=["a", "b", "c"], release="sticky@2.6")
    assert kept(prior) == {"a": [], "b": ["t-1"], "c": []}
    assert prior.max_generation == 5
    # Generation-less claims count only while nobody with a generation has been seen.
    prior = resolve({"c": (["t-2"], None), "d": (["t-3"], None)}, order=["c", "d"], release="sticky@2.6")
    assert kept(prior) == {"c": ["t-2"], "d": ["t-3"]}


def test_variant_2_6_duplicates_within_the_highest_generation_are_not_detected():
    prior = resolve({"a": (["t-0"], 4), "b": (["t-0"], 4)}, order=["a", "b"], release="sticky@2.6")
    assert kept(prior) == {"a": ["t-0"], "b": ["t-0"]}


def test_variant_2_8_a_partition_claimed_twice_in_the_highest_generation_is_taken_from_every_claimant():
    """KAFKA-13081 (2.8.1): the first claimant loses it at the second claim, a member listing it twice
    loses it too, and a rise in generation forgets both the lower claims and the marks."""
    claims = {"a": (["t-0", "t-1"], 5), "b": (["t-1", "t-2", "t-2"], 5), "c": (["t-3"], 5)}
    prior = resolve(claims, order=["a", "b", "c"], release="sticky@2.8.1")
    assert kept(prior) == {"a": ["t-0"], "b": [], "c": ["t-3"]}
    assert prior.partitions_with_multiple_previous_owners == frozenset(tps("t-1", "t-2"))
    claims = {"a": (["t-0"], 5), "b": (["t-0"], 5), "c": (["t-0", "t-4"], 6)}
    prior = resolve(claims, order=["a", "b", "c"], release="cooperative-sticky@2.8.1")
    assert kept(prior) == {"a": [], "b": [], "c": ["t-0", "t-4"]}
    assert prior.partitions_with_multiple_previous_owners == frozenset() and prior.max_generation == 6


def test_variant_2_6_unequal_subscriptions_use_the_general_path_treemap():
    claims = {"a": (["t-0"], 3), "b": (["t-1"], 5)}
    prior = resolve(claims, order=["a", "b"], release="sticky@2.6", topics={"a": ["t"], "b": ["t", "u"]})
    assert kept(prior) == {"a": ["t-0"], "b": ["t-1"]}  # not "highest generation only"


def test_variant_3_5_1_owner_map_overwrite_lets_two_members_keep_a_partition():
    for gens, both in (((2, 1, 3), True), ((3, 1, 2), True), ((1, 2, 3), False), ((1, 3, 2), False), ((2, 3, 1), False), ((3, 2, 1), False)):
        claims = {m: (["t-0"], g) for m, g in zip("abc", gens)}
        prior = resolve(claims, order=list("abc"), release="cooperative-sticky@3.5.1")
        keepers = [m for m, v in kept(prior).items() if v]
        assert (len(keepers) == 2) == both, (gens, keepers)
        current = resolve(claims, order=list("abc"))
        assert [m for m, v in kept(current).items() if v] == ["abc"[gens.index(3)]]


# ------------------------------------------------------------------------------------------
# The bulk path equals a claim-by-claim replay of R7-R8


def literal_resolution(inp: StickyInput) -> tuple[dict[str, list[TopicPartition]], set[TopicPartition]]:
    """``allSubscriptionsEqual``'s ownership loop, claim by claim, as Kafka writes it (builders.literal_prior_owners)."""
    literal = literal_prior_owners(inp)
    owned = {m: list(v) for m, v in literal.consumer_to_owned_partitions.items()}
    return owned, set(literal.partitions_with_multiple_previous_owners)


@st.composite
def claim_groups(draw):
    ids = draw(st.lists(st.sampled_from(list("abcdefg")), min_size=1, max_size=6, unique=True))
    pool = [f"t-{p}" for p in range(5)] + ["u-0", "u-7", "gone-1"]
    claims = {m: (draw(st.lists(st.sampled_from(pool), max_size=5)), draw(st.sampled_from([None, -1, 0, 1, 2]))) for m in ids}
    wire = {m: draw(st.sampled_from([-1, g if g is not None else -1])) for m, (_, g) in claims.items()}
    return input_of({"t": 5, "u": 3}, claims, wire_generation=wire)


@settings(max_examples=300)
@given(claim_groups())
def test_bulk_resolution_equals_the_literal_loop(inp):
    prior = resolve_prior_owners(inp, STICKY)
    owned, dup = literal_resolution(inp)
    assert {m: list(v) for m, v in prior.consumer_to_owned_partitions.items()} == owned
    assert set(prior.partitions_with_multiple_previous_owners) == dup


def test_replay_pops_the_first_occurrence_like_list_remove():
    # A member claiming the same partition twice with a generation above its own wire generation.
    inp = input_of({"t": 2}, {"a": (["t-0", "t-0"], 3)}, wire_generation={"a": -1})
    survivors, dup = replay_contested(inp, [("a", 3, 0), ("a", 3, 1)], owner_after_lost_claim_current)
    assert list(survivors) == [("a", 1)] and not dup
    assert kept(resolve_prior_owners(inp, STICKY)) == {"a": ["t-0"]}


def test_resolution_does_not_depend_on_claim_object_identity():
    claims = {"a": (["t-0", "t-1"], 1), "b": (["t-1"], 2)}
    prior1 = resolve(claims, order=["a", "b"])
    prior2 = resolve(dict(reversed(list(claims.items()))), order=["a", "b"])
    assert kept(prior1) == kept(prior2) == {"a": ["t-0"], "b": ["t-1"]}
    assert list(itertools.chain(*prior1.consumer_to_owned_partitions.values())) == list(tps("t-0", "t-1"))
