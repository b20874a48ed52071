"""The optimality engines agree with exhaustive enumeration, and only proofs are called optimal.

For every generated group small enough to enumerate (<= 10 partitions, <= 4 members;
heterogeneous subscriptions, claims with generations, stale and double claims, claims on
nonexistent partitions and topics), CP-SAT aggregated, CP-SAT per-partition, the min-cost flow
and the enumerator reach the same lexicographic objective in all three balance modes. The
enumerator and the window theorem T3 are themselves checked against plain enumeration.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from stickyproof.errors import InvalidScenario
from stickyproof.model import Assignment, TopicPartition
from stickyproof.oracle import flow as flow_module
from stickyproof.oracle import optimal as optimal_module
from stickyproof.oracle.aggregate import aggregate
from stickyproof.oracle.flow import CertificateCheck, certified_solution, solve_flow
from stickyproof.oracle.optimal import solve_cpsat
from stickyproof.oracle.windows import load_windows

from .brute import admissible, brute_key, brute_optimum, enumerate_assignments, evaluate_choice, problem
from .builders import group
from .oracle_groups import small_groups

TP = TopicPartition
MODES = ("global", "uniform", "kafka")


def owner_map(assignment: Assignment) -> dict[TopicPartition, str]:
    return {tp: m for m, tps in assignment.assignment.items() for tp in tps}


def assert_agrees(result, expected, scenario, racks=False):
    if not expected.feasible:
        assert result.status == "INFEASIBLE" and result.proven, result
        return
    assert result.status == "OPTIMAL" and result.proven, result
    assert result.objective == expected.objective, (result.engine, result.objective, expected.objective)
    # the reported objective is the objective of the assignment returned (target)
    assert evaluate_choice(scenario, owner_map(result.target), racks=racks) == result.objective
    assert result.bound == result.score and result.gap == 0


def product_size(scenario) -> int:
    _, _, choices = problem(scenario)
    return int(np.prod([len(c) for c in choices], dtype=np.int64)) if choices else 1


# ------------------------------------------------------------------------------------------
# agreement


@pytest.mark.parametrize("balance", ("global", "uniform"))
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(scenario=small_groups())
def test_engines_agree_with_exhaustive_enumeration(balance, scenario):
    expected = brute_optimum(scenario, balance=balance)
    assert_agrees(solve_flow(scenario, balance=balance), expected, scenario)
    assert_agrees(solve_cpsat(scenario, balance=balance, model="aggregated"), expected, scenario)
    # per-partition with CP-SAT's own O1 (stage 1): independent of the flow altogether
    assert_agrees(solve_cpsat(scenario, balance=balance, model="per-partition", balance_source="cpsat"), expected, scenario)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(scenario=small_groups(max_members=3, max_partitions=7))
def test_the_r33_optimum_agrees_with_exhaustive_enumeration(scenario):
    # T10: C5 as a constraint, the most kept first, then O1; CP-SAT's two stages against the enumerator.
    assert_agrees(solve_cpsat(scenario, balance="kafka"), brute_optimum(scenario, balance="kafka"), scenario)


def test_the_flow_refuses_kafka_balance_naming_the_engine():
    s = group({"t": 2}, [{"id": "a", "topics": ["t"]}])
    with pytest.raises(InvalidScenario, match="engine"):
        solve_flow(s, balance="kafka")


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=small_groups())
def test_remaining_engine_combinations_agree(scenario):
    expected = brute_optimum(scenario, balance="global")
    assert_agrees(solve_cpsat(scenario, model="per-partition"), expected, scenario)
    assert_agrees(solve_cpsat(scenario, model="aggregated", balance_source="cpsat"), expected, scenario)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=small_groups(racks=True))
def test_rack_tier_engines_agree_with_exhaustive_enumeration(scenario):
    expected = brute_optimum(scenario, balance="global", racks=True)
    assert_agrees(solve_flow(scenario, racks=True), expected, scenario, racks=True)
    assert_agrees(solve_cpsat(scenario, racks=True), expected, scenario, racks=True)
    assert_agrees(solve_cpsat(scenario, racks=True, model="per-partition", balance_source="cpsat"), expected, scenario, racks=True)


# ------------------------------------------------------------------------------------------
# grading the graders: the enumerator's DP, and T3


@settings(max_examples=60)
@given(scenario=small_groups(max_partitions=6))
def test_enumerator_dp_equals_the_plain_product(scenario):
    if product_size(scenario) > 4096:
        return
    parts, _, _ = problem(scenario)
    for balance in MODES:
        best = None
        for owner in enumerate_assignments(scenario):
            members = sorted(m.id for m in scenario.members)
            loads = tuple(sum(1 for v in owner.values() if v == m) for m in members)
            held = tuple(frozenset(tp.topic for tp, v in owner.items() if v == m) for m in members)
            if not admissible(balance, loads, held, len(parts)):
                continue
            obj = evaluate_choice(scenario, owner, racks=True)
            if best is None or brute_key(balance, obj) < brute_key(balance, best):
                best = obj
        result = brute_optimum(scenario, balance=balance, racks=True)
        assert result.objective == best


def test_kafka_balance_alone_is_weak_so_its_optimum_may_keep_more_than_the_global_one():
    # T5/T10: a member holding nothing never violates C5, so C5 admits a badly unbalanced assignment;
    # R33's own optimum (kept first) leaves the newcomer with nothing where global balance splits 2/2.
    s = group({"t": 4}, [{"id": "a", "topics": ["t"], "owned": {"t": [0, 1, 2, 3]}, "generation": 1},
                         {"id": "b", "topics": ["t"]}])
    lopsided = ((4, 0), (frozenset({"t"}), frozenset()))
    assert admissible("kafka", *lopsided, 4)
    uneven = ((3, 1), (frozenset({"t"}), frozenset({"t"})))
    assert not admissible("kafka", *uneven, 4)
    r33, global_ = brute_optimum(s, balance="kafka").objective, brute_optimum(s, balance="global").objective
    assert (r33.kept, r33.max_load) == (4, 4) and (global_.kept, global_.max_load) == (2, 2)
    result = solve_cpsat(s, balance="kafka")
    assert result.optimal and result.objective == r33 and result.assignment.assignment["b"] == ()


@settings(max_examples=80)
@given(scenario=small_groups(max_partitions=7))
def test_t3_windows_and_level_sums_hold_for_every_balance_optimum(scenario):
    if product_size(scenario) > 20000:
        return
    agg = aggregate(scenario)
    _, sol, expansion = certified_solution(agg)
    assert sol.check.ok
    lo, hi = load_windows(agg, expansion.owner, expansion.loads)
    assert ((hi - lo) <= 1).all()
    members = list(agg.members)
    best = expansion.objective.sum_squares
    moving = hi > lo
    for owner in enumerate_assignments(scenario):
        loads = np.array([sum(1 for v in owner.values() if v == m) for m in members], dtype=np.int64)
        if int((loads * loads).sum()) != best:
            assert int((loads * loads).sum()) > best  # the flow's O1 is the minimum
            continue
        assert (lo <= loads).all() and (loads <= hi).all(), (loads, lo, hi)
        for level in np.unique(lo[moving]):
            group_ = moving & (lo == level)
            assert loads[group_].sum() == expansion.loads[group_].sum()


# ------------------------------------------------------------------------------------------
# status honesty


def mid_group():
    topics = {f"t{i}": 12 for i in range(6)}
    members = [
        {"id": f"m{i:02d}", "topics": [f"t{j}" for j in range(6) if (i + j) % 3], "owned": {f"t{i % 6}": list(range(i % 5, 12, 3))},
         "generation": 1 + i % 2}
        for i in range(16)
    ]
    return group(topics, members)


def test_a_time_limited_result_is_never_proven(monkeypatch):
    s = mid_group()
    real_run = optimal_module._run

    def interrupted(model, time_limit, workers, seed, *, presolve=True):
        solver, status = real_run(model, time_limit, workers, seed, presolve=presolve)
        return solver, ("FEASIBLE" if status == "OPTIMAL" else status)  # as if the limit struck first

    monkeypatch.setattr(optimal_module, "_run", interrupted)
    for model in ("aggregated", "per-partition"):
        r = solve_cpsat(s, model=model, time_limit=30)
        assert r.status == "FEASIBLE" and not r.proven and not r.optimal
        assert r.bound is not None and r.gap == r.bound - r.score and r.gap >= 0
        assert r.to_dict()["proven"] is False


def test_a_zero_time_limit_yields_no_claim_at_all():
    for kwargs in ({}, {"model": "per-partition"}, {"balance_source": "cpsat"}):
        r = solve_cpsat(mid_group(), time_limit=0.0, **kwargs)
        assert r.status in ("UNKNOWN", "FEASIBLE") and not r.proven


def test_a_stage_one_balance_without_proof_is_not_proven(monkeypatch):
    s = mid_group()
    real_run = optimal_module._run
    calls = []

    def first_unproven(model, time_limit, workers, seed, *, presolve=True):
        solver, status = real_run(model, time_limit, workers, seed, presolve=presolve)
        calls.append(status)
        return solver, ("FEASIBLE" if len(calls) == 1 and status == "OPTIMAL" else status)

    monkeypatch.setattr(optimal_module, "_run", first_unproven)
    r = solve_cpsat(s, balance_source="cpsat")
    assert calls[1] == "OPTIMAL" and r.status == "FEASIBLE" and not r.proven


def test_a_rejected_flow_certificate_proves_nothing(monkeypatch):
    s = mid_group()
    monkeypatch.setattr(flow_module, "check_certificate", lambda *a, **k: CertificateCheck(False, ("FC4: forced",)))
    r = solve_flow(s)
    assert r.status == "FEASIBLE" and not r.proven and r.bound is None
    c = solve_cpsat(s)
    assert c.status == "FEASIBLE" and not c.proven and "certificate rejected" in c.detail


# ------------------------------------------------------------------------------------------
# hints, arguments, determinism


def test_hint_from_an_assignor_output_warm_starts_and_a_bad_hint_is_ignored():
    s = mid_group()
    reference = solve_cpsat(s)
    members = sorted(m.id for m in s.members)
    subs = {m.id: set(m.topics) for m in s.members}
    rr = {m: [] for m in members}
    for k, tp in enumerate(TP(t, p) for t in sorted(f"t{i}" for i in range(6)) for p in range(12)):
        eligible = [m for m in members if tp.topic in subs[m]]
        rr[eligible[k % len(eligible)]].append(tp)
    hint = Assignment({m: tuple(v) for m, v in rr.items()})
    for model in ("aggregated", "per-partition"):
        assert solve_cpsat(s, hint=hint, model=model).objective == reference.objective
    bad = Assignment({"m00": (TP("t0", 99),)})
    assert solve_cpsat(s, hint=bad).objective == reference.objective


def test_cpsat_is_deterministic():
    s = mid_group()
    first = solve_cpsat(s)
    assert all(solve_cpsat(s).assignment == first.assignment for _ in range(3))
    assert solve_cpsat(s, workers=2).objective == first.objective


def test_cooperative_targets_agree_and_round_one_withholds_transfers():
    s = group(
        {"t": 6},
        [
            {"id": "a", "topics": ["t"], "owned": {"t": [0, 1, 2, 3, 4, 5]}, "generation": 3},
            {"id": "b", "topics": ["t"], "owned": {"t": [5]}, "generation": 2},
            {"id": "c", "topics": ["t"]},
        ],
        protocol="cooperative",
    )
    f, c = solve_flow(s), solve_cpsat(s)
    assert f.objective == c.objective == brute_optimum(s).objective
    for r in (f, c):
        given_out = {tp for tps in r.assignment.assignment.values() for tp in tps}
        withheld = {tp for tps in r.assignment.revoking.values() for tp in tps}
        assert not given_out & withheld
        assert given_out | withheld == {TP("t", p) for p in range(6)}


@pytest.mark.parametrize(
    "kwargs, field",
    [({"balance": "even"}, "balance"), ({"model": "dense"}, "model"), ({"balance_source": "guess"}, "balance_source"),
     ({"workers": 0}, "workers")],
)
def test_bad_arguments_name_the_argument(kwargs, field):
    with pytest.raises(InvalidScenario) as info:
        solve_cpsat(mid_group(), **kwargs)
    assert info.value.path == field


def test_uniform_infeasible_is_proven_by_cpsat_itself():
    s = group({"t": 5, "u": 1}, [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}, {"id": "c", "topics": ["u"]}])
    for model in ("aggregated", "per-partition"):
        r = solve_cpsat(s, balance="uniform", model=model)
        assert r.status == "INFEASIBLE" and r.proven and r.assignment is None


def test_all_small_engines_on_every_two_member_split():
    # A hand-checkable case: 3 partitions, a keeps t-0..t-2 claims at generation 2, b is new.
    s = group({"t": 3}, [{"id": "a", "topics": ["t"], "owned": {"t": [0, 1, 2]}, "generation": 2}, {"id": "b", "topics": ["t"]}])
    for r in (solve_flow(s), solve_cpsat(s), solve_cpsat(s, model="per-partition")):
        assert r.objective.sum_squares == 5 and r.objective.kept == 2
        assert len(r.assignment.assignment["a"]) == 2 and set(r.assignment.assignment["a"]) < {TP("t", p) for p in range(3)}
