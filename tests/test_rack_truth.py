"""Rack-aware truth (issue 20): on Kafka's rack-aware path (KIP-881, R48) the ``kafka`` contract's
optimum follows Kafka's order, balance, then rack alignment (D7), then partitions kept; a move that
improves alignment is neither unnecessary nor ``unstable``, and ``rack-unstable`` names only moves
without an alignment gain.

The enumeration is written here from the definitions (every assignment, C1-C2, filtered by the
notion's balance; D7 restated with plain dicts), without the engines' code.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stickyproof.assignors.racks import use_rack_aware_assignment
from stickyproof.grading import grade_assignor
from stickyproof.model import Assignment, Member, Scenario, Topic, TopicPartition
from stickyproof.oracle.contracts import CONTRACTS, contract_optimum
from stickyproof.oracle.racks import kafka_rack_path

from .brute import enumerate_assignments, simple_retainable
from .oracle_groups import small_groups
from .test_contracts import _admissible
from .test_regressions import load_regression

REGRESSIONS = Path(__file__).parent / "regressions"

TP = TopicPartition


def _d7(scenario: Scenario, owner: dict[TopicPartition, str]) -> int:
    """Kafka's racksMismatch negated, from its definition: a v3 member's rack (none before v3)
    matches a partition if a replica is on it; a member without a rack matches everything."""
    rack = {m.id: (m.rack if m.version >= 3 else None) for m in scenario.members}
    replicas = {t.name: t.racks for t in scenario.topics}
    total = 0
    for tp, m in owner.items():
        if rack[m] is None:
            total += 1
        elif replicas[tp.topic] is not None and rack[m] in replicas[tp.topic][tp.partition]:
            total += 1
    return total


def _brute(scenario: Scenario, notion: str, graded_aligned: int | None) -> tuple[int, int]:
    """(most aligned partitions in the notion, most kept at min(that, graded_aligned) or more aligned)."""
    keep = simple_retainable(scenario)
    rows = []
    for owner in enumerate_assignments(scenario):
        if _admissible(scenario, owner, notion):
            rows.append((_d7(scenario, owner), sum(1 for tp, m in owner.items() if keep.get(tp) == m)))
    best = max(a for a, _ in rows)
    target = best if graded_aligned is None else min(best, graded_aligned)
    return best, max(k for a, k in rows if a >= target)


def _racked_groups():
    return small_groups(max_members=3, max_partitions=6, racks=True).filter(lambda s: kafka_rack_path(s) is not None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_racked_groups())
def test_rack_aware_contract_optimum_equals_enumeration(scenario):
    notion = CONTRACTS["kafka"].notion(scenario)
    result = contract_optimum(scenario, "kafka")
    best, kept = _brute(scenario, notion, None)
    assert result.proven and result.notion == f"{notion}+racks"
    assert (result.aligned, result.kept) == (best, kept)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_racked_groups(), st.randoms(use_true_random=False))
def test_t9_a_graded_assignment_is_measured_at_its_own_alignment_when_lower(scenario, rnd):
    notion = CONTRACTS["kafka"].notion(scenario)
    admissible = [o for o in enumerate_assignments(scenario) if _admissible(scenario, o, notion)]
    owner = rnd.choice(admissible)
    graded = Assignment({m.id: tuple(sorted(tp for tp, v in owner.items() if v == m.id)) for m in scenario.members})
    result = contract_optimum(scenario, "kafka", assignment=graded)
    _, kept = _brute(scenario, notion, _d7(scenario, owner))
    keep = simple_retainable(scenario)
    graded_kept = sum(1 for tp, m in owner.items() if keep.get(tp) == m)
    assert result.proven and result.kept == kept
    assert graded_kept <= result.kept and len(result.unnecessary) == result.kept - graded_kept


@settings(max_examples=200, deadline=None)
@given(small_groups(max_members=4, max_partitions=8, racks=True))
def test_the_oracles_rack_path_rule_agrees_with_the_assignors(scenario):
    # Two implementations of R48 written apart: the oracle's and the sticky assignors'.
    subscribed = {t for m in scenario.members for t in m.topics}
    per_partition = [
        frozenset(r) for t in scenario.topics if t.partitions > 0 and t.name in subscribed
        for r in (t.racks if t.racks is not None else [()] * t.partitions)
    ]
    expected = use_rack_aware_assignment([m.rack for m in scenario.members], per_partition)
    assert (kafka_rack_path(scenario) is not None) == expected


def test_a_member_before_v3_sends_no_rack_so_it_does_not_turn_the_path_on():
    topics = (Topic("t", 2, (("r0",), ("r1",))),)
    v3 = Scenario(topics, (Member("a", ("t",), rack="r0"), Member("b", ("t",))))
    v2 = Scenario(topics, (Member("a", ("t",), version=2, rack="r0"), Member("b", ("t",))))
    assert kafka_rack_path(v3) == {"a": "r0", "b": None} and kafka_rack_path(v2) is None


def _misaligned(owned_a, owned_b, racks=(("r0",), ("r1",), ("r0",), ("r1",))) -> Scenario:
    return Scenario(
        (Topic("t", len(racks), racks),),
        (
            Member("a", ("t",), tuple(TP("t", p) for p in owned_a), 1, rack="r0"),
            Member("b", ("t",), tuple(TP("t", p) for p in owned_b), 1, rack="r1"),
        ),
        "eager",
    )


def test_a_locality_improving_move_is_not_unnecessary():
    s = _misaligned((1, 3), (0, 2))
    g = grade_assignor(s, "sticky")
    assert g.valid and g.kept == 0 and g.optimal_kept == 0 and g.stickiness == 1.0 and g.unnecessary == ()
    assert g.notion == "uniform+racks"


def test_a_move_without_alignment_gain_is_still_unnecessary():
    # a owns the partitions on its own rack; giving it the others instead gains nothing
    s = _misaligned((0, 2), (1, 3))
    swapped = Assignment({"a": (TP("t", 1), TP("t", 3)), "b": (TP("t", 0), TP("t", 2))})
    result = contract_optimum(s, "kafka", assignment=swapped)
    assert result.aligned == 4 and result.kept == 4 and result.unnecessary == tuple(TP("t", p) for p in range(4))


def test_a_release_before_kip_881_is_measured_without_the_rack_tier():
    s = _misaligned((1, 3), (0, 2))
    g = grade_assignor(s, "sticky@3.4")
    assert g.notion == "uniform" and g.optimal_kept == 4 and g.stickiness == 1.0


def test_a_re_run_that_only_improves_alignment_is_not_unstable():
    # tests/regressions/sticky-rack-aware-general-path-moves-its-own-balanced-assignment.json, one
    # rebalance earlier: the general path's balancing move puts t0-6 (replica on r0 only) on c (r1);
    # fed back, the rack-aware path swaps it for t0-0, which has a replica on r1: alignment 6 -> 7.
    racks = (("r0", "r1"),) * 2 + (("r1", "r0"),) * 3 + (("r0", "r1"), ("r0",))
    s = Scenario(
        (Topic("t0", 7, racks), Topic("t2", 1)),
        (
            Member("a", ("t2",), (TP("t2", 0),), 1),
            Member("b", ("t0",), tuple(TP("t0", p) for p in range(4)), 1),
            Member("c", ("t0",), (), 1, rack="r1"),
        ),
        "eager",
    )
    g = grade_assignor(s, "sticky")
    assert g.valid and "unstable" not in g.violated() and g.labels == ()


def test_rack_unstable_names_only_the_narrow_real_case_a_move_without_alignment_gain():
    # A partition with no known replica rack moved between two equally mismatched members.
    scenario, _ = load_regression(REGRESSIONS / "cooperative-sticky-rack-aware-moves-its-own-balanced-assignment.json")
    g = grade_assignor(scenario, "cooperative-sticky")
    [unstable] = [v for v in g.violations if v.invariant == "unstable"]
    assert unstable.witness["aligned_after"] <= unstable.witness["aligned_before"]
    assert [(label.failure, label.rule) for label in g.labels] == [("unstable", "rack-unstable")]


# ------------------------------------------------------------------------------------------
# the engines of `solve --kafka-racks`: the flow by weights (T4 swapped), CP-SAT by the same weights


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_racked_groups())
def test_kafka_rack_order_engines_agree_with_exhaustive_enumeration(scenario):
    from stickyproof.oracle.flow import solve_flow
    from stickyproof.oracle.optimal import solve_cpsat

    from .brute import brute_optimum, evaluate_choice

    expected = brute_optimum(scenario, racks="kafka")
    for result in (
        solve_flow(scenario, racks="kafka"),
        solve_cpsat(scenario, racks="kafka"),
        solve_cpsat(scenario, racks="kafka", model="per-partition", balance_source="cpsat"),
    ):
        assert result.status == "OPTIMAL" and result.proven, result
        assert result.objective == expected.objective, (result.engine, result.objective, expected.objective)
        owner = {tp: m for m, tps in result.target.assignment.items() for tp in tps}
        assert evaluate_choice(scenario, owner, racks="kafka") == result.objective


def test_kafka_rack_order_differs_from_rack_after_kept():
    # a (r0) owns the r1 partitions and b the r0 ones: Kafka's order realigns them, O3-after-kept keeps them.
    s = _misaligned((1, 3), (0, 2))
    from stickyproof.oracle.flow import solve_flow

    kafka, after = solve_flow(s, racks="kafka"), solve_flow(s, racks=True)
    assert (kafka.objective.kept, kafka.objective.rack_local) == (0, 4)
    assert (after.objective.kept, after.objective.rack_local) == (4, 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(small_groups(max_members=4, max_partitions=8, racks=True).filter(lambda s: kafka_rack_path(s) is not None),
       st.sampled_from(["sticky", "cooperative-sticky", "sticky@3.4"]))
def test_a_valid_grade_on_the_rack_path_never_scores_above_one(scenario, assignor):
    if assignor != "cooperative-sticky" and scenario.protocol == "cooperative":
        return  # R36: an eager-only assignor never leads a cooperative group
    g = grade_assignor(scenario, assignor)
    if g.valid:
        assert g.notion.endswith("+racks") == (assignor != "sticky@3.4")
        assert g.optimal_kept is not None and g.kept <= g.optimal_kept and 0.0 <= g.stickiness <= 1.0
        assert len(g.unnecessary) >= g.optimal_kept - g.kept
