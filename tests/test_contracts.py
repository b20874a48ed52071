"""Contracts (models/invariants.md §5): each engine of ``contract_optimum`` against plain enumeration,
and the promise that a valid assignment never scores above 1 (issue 11, item 4).

The enumeration is written here from the notions' definitions (every assignment of every partition
to one of its subscribers, C1-C2, filtered by the notion's balance), without the engines' code.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from stickyproof.grading import grade_assignor
from stickyproof.oracle.contracts import CONTRACTS, contract_optimum, raw_subscriptions_equal

from .brute import enumerate_assignments, simple_retainable
from .oracle_groups import small_groups


def _admissible(scenario, owner, notion) -> bool:
    members = [m.id for m in scenario.members]
    loads = Counter(owner.values())
    load = {m: loads.get(m, 0) for m in members}
    total = sum(load.values())
    if notion == "none":
        return True
    if notion == "uniform":
        lo, hi = total // len(members), -(-total // len(members))
        return all(lo <= load[m] <= hi for m in members)
    subscribers = {t: [m.id for m in scenario.members if t in m.topics] for t in {tp.topic for tp in owner}}
    if notion == "per-topic":
        for t, subs in subscribers.items():
            n = sum(1 for tp in owner if tp.topic == t)
            q, r = divmod(n, len(subs))
            count = Counter(m for tp, m in owner.items() if tp.topic == t)
            if any(not q <= count.get(m, 0) <= q + (1 if r else 0) for m in subs):
                return False
        return True
    if notion == "pairwise":  # R30: a holder of t has at most one more than every subscriber of t
        for tp, holder in owner.items():
            if any(load[holder] >= load[b] + 2 for b in subscribers[tp.topic]):
                return False
        return True
    raise AssertionError(notion)


def _brute(scenario, notion) -> int:
    keep = simple_retainable(scenario)
    best = -1
    for owner in enumerate_assignments(scenario):
        if _admissible(scenario, owner, notion):
            best = max(best, sum(1 for tp, m in owner.items() if keep.get(tp) == m))
    return best


@settings(max_examples=60, deadline=None)
@given(small_groups(max_members=3, max_partitions=6, racks=False), st.sampled_from(["kafka", "per-topic", "uniform-if-equal", "none"]))
def test_each_contract_optimum_equals_enumeration(scenario, name):
    contract = CONTRACTS[name]
    notion = contract.notion(scenario)
    result = contract_optimum(scenario, contract)
    assert result.proven and result.notion == notion
    assert result.kept == _brute(scenario, notion), (name, notion)


def test_the_kafka_contract_reads_equal_subscriptions_from_the_raw_lists():
    from stickyproof.model import Member, Scenario, Topic

    same = Scenario((Topic("t", 2),), (Member("a", ("t", "ghost")), Member("b", ("ghost", "t"))))
    other = Scenario((Topic("t", 2),), (Member("a", ("t",)), Member("b", ("t", "ghost"))))
    assert raw_subscriptions_equal(same) and not raw_subscriptions_equal(other)
    assert (CONTRACTS["kafka"].check(same), CONTRACTS["kafka"].check(other)) == ("uniform", "kafka")
    assert (CONTRACTS["kafka"].notion(same), CONTRACTS["kafka"].notion(other)) == ("uniform", "pairwise")


@settings(max_examples=40, deadline=None)
@given(small_groups(max_members=4, max_partitions=8, racks=False), st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky"]))
def test_a_valid_grade_never_keeps_more_than_its_notions_optimum(scenario, assignor):
    if assignor != "cooperative-sticky" and scenario.protocol == "cooperative":
        return  # R36: an eager-only assignor never leads a cooperative group
    g = grade_assignor(scenario, assignor)
    if g.valid:
        assert g.optimal_kept is not None and g.kept <= g.optimal_kept
        assert g.stickiness is not None and 0.0 <= g.stickiness <= 1.0
        assert len(g.unnecessary) >= g.optimal_kept - g.kept
    else:
        assert g.stickiness is None


def test_no_valid_grade_of_a_built_in_scores_above_one_on_sampled_groups():
    # The sampler's groups carry richer claim histories than small_groups draws: 60 of them per assignor.
    from stickyproof.lookup import get_assignor
    from stickyproof.grading import unsupported_reason
    from stickyproof.scenarios.sampler import Space, sample

    space = Space.from_overrides(["members=2..6", "partitions=1..8", "topics=1..3"])
    graded = below_one = 0
    for i in range(60):
        s = sample(7, i, space)
        for name in ("range", "roundrobin", "sticky", "cooperative-sticky"):
            info = get_assignor(name)
            if unsupported_reason(s, info):
                continue
            g = grade_assignor(s, info)
            if g.valid:
                graded += 1
                below_one += g.stickiness < 1
                assert g.stickiness <= 1.0, (i, name, g.kept, g.optimal_kept, g.notion)
    assert graded >= 80 and below_one >= 10, (graded, below_one)  # the property was exercised, not vacuous
