"""Grading consumer groups (KIP-848): the oracle's optimum, the server-side contracts, ``stickyproof grade``.

The oracle is checked against brute force on every small group Hypothesis draws; the contracts of
models/invariants.md §5.2 against the ports on reachable groups; KAFKA-18688 is the regression file
tests/regressions/uniform-4.0.0-balanced-group-moves-its-extra-partition.json, reproduced by
``uniform@4.0.0`` there and not by ``uniform`` here.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stickyproof.cli import main
from stickyproof.grading import grade_assignment, grade_assignor
from stickyproof.grading.consumer import grade_consumer_assignment, order_verdict
from stickyproof.model import Assignment, TopicPartition, scenario_from_dict
from stickyproof.oracle.consumer import TIERS, assignable_partitions, consumer_objective, solve_consumer, subscribers_of
from stickyproof.strategies import InvalidStrategyArgument, consumer_groups

REGRESSION = Path(__file__).parent / "regressions" / "uniform-4.0.0-balanced-group-moves-its-extra-partition.json"

SMALL = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _group(topics, members):
    return scenario_from_dict({"format": "stickyproof.scenario/1", "group_protocol": "consumer", "topics": topics, "members": members})


def _brute_best(scenario, tiers):
    """The best objective key over every assignment of every assignable partition to a subscriber."""
    subs = subscribers_of(scenario)
    parts = assignable_partitions(scenario)
    best = None
    for choice in itertools.product(*[subs[tp.topic] for tp in parts]):
        out = {m.id: [] for m in scenario.members}
        for tp, m in zip(parts, choice):
            out[m].append(tp)
        key = consumer_objective(scenario, Assignment({m: tuple(v) for m, v in out.items()})).key(tiers)
        best = key if best is None or key < best else best
    return best


@SMALL
@given(consumer_groups(max_members=3, max_topics=2, max_partitions=3), st.sampled_from([TIERS, ("balance", "kept")]))
def test_the_consumer_optimum_is_proven_and_no_assignment_beats_it(scenario, tiers):
    optimum = solve_consumer(scenario, tiers=tiers)
    assert optimum.proven and optimum.status == "OPTIMAL", optimum.detail
    assert optimum.objective == consumer_objective(scenario, optimum.assignment)
    assert optimum.objective.key(tiers) == _brute_best(scenario, tiers)


@SMALL
@given(consumer_groups(max_members=3, max_topics=2, max_partitions=3))
def test_the_tier_by_tier_cpsat_fallback_finds_the_same_optimum(scenario):
    import stickyproof.oracle.consumer as consumer

    flow = solve_consumer(scenario)
    saved = consumer._INT64_SAFE
    consumer._INT64_SAFE = 0  # every group "overflows": CP-SAT, one tier after the other
    try:
        staged = solve_consumer(scenario)
    finally:
        consumer._INT64_SAFE = saved
    # A group whose topics split into parts no member spans is solved part by part, each by CP-SAT.
    assert re.fullmatch(r"cpsat|parts\(\d+: cpsat\)", staged.engine) and staged.proven, staged.engine
    assert staged.objective.key() == flow.objective.key()


def test_balance_comes_before_spread_before_racks_before_kept():
    # m0 holds all of t0 (4); the optimum must balance (2/2) first, then spread t0 and t1 evenly, and
    # among those prefer the rack-local placement of t1-0 over keeping t0's partitions on m0.
    s = _group({"t0": 4, "t1": {"partitions": 2, "racks": [["r1"], ["r0"]]}},
               [{"id": "m0", "topics": ["t0", "t1"], "owned": {"t0": [0, 1, 2, 3]}, "rack": "r0"},
                {"id": "m1", "topics": ["t0", "t1"], "rack": "r1"}])
    best = solve_consumer(s)
    assert best.proven
    assert sorted(len(v) for v in best.assignment.assignment.values()) == [3, 3]
    assert best.objective.spread == 2 * 2 + 2 * 2 + 1 + 1
    assert best.objective.rack_local == 2
    assert best.objective.kept == 2


@SMALL
@given(consumer_groups(max_members=5, max_partitions=6))
def test_uniform_keeps_its_contract_on_reachable_consumer_groups(scenario):
    g = grade_assignor(scenario, "uniform")
    assert g.error is None
    assert g.valid, [v.to_dict() for v in g.violations]
    assert g.proven and g.consumer["optimum"]["proven"]


@SMALL
@given(consumer_groups(max_members=5, max_partitions=6))
def test_stickiness_is_never_above_one_and_unstated_where_no_balance_is_owed(scenario):
    # heterogeneous uniform owes no balance: keeping more than a balanced assignment could by staying
    # unbalanced read as stickiness 1.002 in the main job; it is unmeasured instead, never above 1
    g = grade_assignor(scenario, "uniform")
    if g.consumer["contract"] == "uniform-heterogeneous":
        assert g.stickiness is None
    else:
        assert g.stickiness is None or 0.0 <= g.stickiness <= 1.0


@SMALL
@given(consumer_groups(max_members=5, max_partitions=6, subscriptions=st.just("homogeneous")))
def test_homogeneous_uniform_keeps_as_many_as_a_within_one_assignment_keeps(scenario):
    g = grade_assignor(scenario, "uniform")
    assert g.consumer["contract"] == "uniform-homogeneous"
    assert g.balanced["uniform"] and g.kept == g.optimal_kept


def test_kafka_18688_is_reproduced_by_4_0_0_and_not_by_uniform():
    doc = json.loads(REGRESSION.read_text())
    doc.pop("expect")
    s = scenario_from_dict(doc)
    old = grade_assignor(s, "uniform@4.0.0")
    assert not old.valid and {"not-fixed-point", "stickiness"} == set(old.violated())
    new = grade_assignor(s, "uniform")
    assert new.valid and new.consumer["fixed_point_owed"] and new.kept == 3 == new.optimal_kept


def test_a_given_target_breaking_a_contract_is_caught():
    s = _group({"t": 4}, [{"id": "a", "topics": ["t"], "owned": {"t": [0, 1]}}, {"id": "b", "topics": ["t"], "owned": {"t": [2, 3]}}])
    lopsided = Assignment({"a": tuple(TopicPartition("t", p) for p in (0, 1, 2)), "b": (TopicPartition("t", 3),)})
    g = grade_consumer_assignment(s, lopsided, contract="uniform-homogeneous")
    assert not g.valid and {"imbalance", "not-fixed-point", "stickiness"} <= set(g.violated())
    gapped = Assignment({"a": (TopicPartition("t", 0), TopicPartition("t", 2)), "b": (TopicPartition("t", 1), TopicPartition("t", 3))})
    g = grade_consumer_assignment(s, gapped, contract="consumer-range")
    assert "not-contiguous" in g.violated()
    missing = Assignment({"a": (TopicPartition("t", 0),), "b": ()})
    assert "unassigned" in grade_assignment(s, missing).violated()


def test_order_verdicts_tell_ties_from_differences():
    s = _group({"t": 3}, [{"id": "a", "topics": ["t"], "owned": {"t": [0]}}, {"id": "b", "topics": ["t"]}])
    tp = lambda p: TopicPartition("t", p)  # noqa: E731
    base = Assignment({"a": (tp(0), tp(1)), "b": (tp(2),)})
    assert order_verdict(s, base, base) == "identical"
    assert order_verdict(s, base, Assignment({"a": (tp(0), tp(2)), "b": (tp(1),)})) == "same-sizes-and-kept"
    assert order_verdict(s, base, Assignment({"a": (tp(1),), "b": (tp(0), tp(2))})) == "differs"


def test_consumer_range_owes_identical_answers_however_the_members_are_listed():
    s = _group({"t": 5, "u": 3}, [{"id": "b", "topics": ["t", "u"]}, {"id": "a", "topics": ["t"]}, {"id": "c", "topics": ["u", "t"]}])
    g = grade_assignor(s, "consumer-range")
    assert g.valid and g.consumer["order"]["reordered"] == "identical" and g.consumer["stable"]


def test_consumer_groups_validates_its_arguments():
    with pytest.raises(InvalidStrategyArgument, match="max_members=0"):
        consumer_groups(max_members=0)
    with pytest.raises(InvalidStrategyArgument, match="subscriptions="):
        consumer_groups(subscriptions="homogeneous")


GROUP = {"format": "stickyproof.scenario/1", "group_protocol": "consumer", "topics": {"t": 3},
         "members": [{"id": "a", "topics": ["t"], "owned": {"t": [0]}}, {"id": "b", "topics": ["t"], "owned": {"t": [1, 2]}}]}


def test_grade_cli_grades_a_consumer_group_with_uniform(tmp_path, capsys):
    f = tmp_path / "group.json"
    f.write_text(json.dumps(GROUP))
    assert main(["grade", str(f), "--assignor", "uniform", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] and doc["contract"] == "uniform-homogeneous" and doc["consumer"]["at_optimum"]
    assert main(["grade", str(f), "--assignor", "uniform@4.0.0", "--json"]) == 1
    assert {v["invariant"] for v in json.loads(capsys.readouterr().out)["violations"]} == {"not-fixed-point", "stickiness"}


def test_grade_cli_grades_a_given_consumer_target(tmp_path, capsys):
    f = tmp_path / "group.json"
    f.write_text(json.dumps(GROUP))
    a = tmp_path / "a.json"
    a.write_text(json.dumps({"format": "stickyproof.assignment/1", "assignment": {"a": {"t": [0, 1, 2]}, "b": {}}}))
    assert main(["grade", str(f), "--assignment", str(a), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["consumer"]["first_worse_tier"] == "balance" and doc["consumer"]["gap"]["sum_squares"] == 4


def test_grade_line_of_a_consumer_group_says_promise_and_distance():
    from stickyproof.cli.grade import grade_line

    line = grade_line(grade_assignor(scenario_from_dict(GROUP), "uniform").to_dict())
    assert line.startswith("valid; uniform-homogeneous kept its promise")
    assert "balanced input returned unchanged" in line and "at the proven optimum" in line


def test_the_sweep_hook_gives_a_classic_row_plus_consumer_columns():
    from stickyproof.grading.consumer import consumer_group_row

    row = consumer_group_row(scenario_from_dict(GROUP), "uniform@4.0.0")
    assert row["valid"] is False and row["kept"] == 2 and row["optimal_kept"] == 3
    assert row["consumer_contract"] == "uniform-homogeneous" and row["consumer_first_worse_tier"] == "kept"
    assert "consumer" not in row and row["consumer_gap_kept"] == 1
