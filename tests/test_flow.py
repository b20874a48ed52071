"""The min-cost flow oracle (models/optimal-assignment.md §5): exact, and proven by its certificate.

The certificate checker is graded too: it must reject every way a flow can be wrong (FC1 capacity,
FC2 conservation, FC3 a loose relaxation, FC4 a cheaper flow exists), so a pass means something.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from stickyproof.errors import InvalidScenario, SolverError
from stickyproof.model import Assignment, Member, Scenario, Topic, TopicPartition
from stickyproof.oracle.aggregate import aggregate
from stickyproof.oracle.flow import (
    FlowLayout,
    build_flow,
    check_certificate,
    greedy_max_load,
    optimal_loads,
    read_assignment,
    residual_potentials,
    solve_flow,
    solve_flow_model,
)

from .brute import brute_optimum, evaluate_choice
from .builders import group

TP = TopicPartition


def hetero(seed: int = 3, members: int = 12, topics: int = 6) -> Scenario:
    """A heterogeneous group with prior owners, stale and double claims."""
    rng = random.Random(seed)
    names = [f"t{i}" for i in range(topics)]
    ms = []
    for i in range(members):
        subs = tuple(sorted(rng.sample(names, rng.randint(1, topics))))
        owned = tuple(dict.fromkeys(TP(rng.choice(names), rng.randrange(9)) for _ in range(rng.randint(0, 8))))
        ms.append(Member(f"m{i:02d}", subs, owned, rng.choice((-1, 3, 4, 4))))
    return Scenario(tuple(Topic(t, rng.randint(1, 8)) for t in names), tuple(ms))


def certified(scenario: Scenario):
    agg = aggregate(scenario)
    model = build_flow(agg)
    flow = solve_flow_model(model)
    return model, flow, residual_potentials(model, flow)


def check(model, flow, potential):
    return check_certificate(
        model.tail, model.head, model.capacity, model.cost, flow, model.supply, potential, overflow=model.overflow_mask
    )


# ------------------------------------------------------------------------------------------
# the certificate


def test_certificate_accepts_the_solver_flow():
    model, flow, potential = certified(hetero())
    assert check(model, flow, potential).ok


def test_certificate_rejects_a_flow_that_gives_up_a_kept_partition():
    # Move one unit from a used keep arc (F2) to the pool arc (F3) of the same hub and member:
    # still feasible, one partition less kept, so FC4 must fail under the same potentials.
    model, flow, potential = certified(hetero())
    f2_flow = flow[model.f2]
    i = int(np.flatnonzero(f2_flow > 0)[0])
    arc_keep = model.f2.start + i
    hub_node, member_node = model.tail[arc_keep], model.head[arc_keep]
    f3 = np.arange(model.f3.start, model.f3.stop)
    arc_pool = int(f3[(model.tail[f3] == hub_node) & (model.head[f3] == member_node)][0])
    tampered = flow.copy()
    tampered[arc_keep] -= 1
    tampered[arc_pool] += 1
    result = check(model, tampered, potential)
    assert not result.ok
    assert any(f.startswith("FC4") for f in result.failures)
    # and it is still a feasible flow: FC1-FC3 hold, only optimality is refuted
    assert not any(f[:3] in ("FC1", "FC2", "FC3") for f in result.failures)


def test_certificate_rejects_an_unbalanced_flow():
    # Shift one unit of balance: a member's last used F4 arc off, another member's next one on,
    # rerouted through a hub both subscribe to: feasible, worse O1.
    s = group({"t": 4}, [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}])
    model, flow, potential = certified(s)
    layout = model.layout
    f3 = np.arange(model.f3.start, model.f3.stop)
    to_a = int(f3[model.head[f3] == layout.member_node(0)][0])
    to_b = int(f3[model.head[f3] == layout.member_node(1)][0])
    sink_arcs = np.flatnonzero(model.head == layout.SINK)
    a_used = sink_arcs[(model.tail[sink_arcs] == layout.member_node(0)) & (flow[sink_arcs] > 0)]
    b_free = sink_arcs[(model.tail[sink_arcs] == layout.member_node(1)) & (flow[sink_arcs] < model.capacity[sink_arcs])]
    tampered = flow.copy()
    tampered[to_a] -= 1
    tampered[to_b] += 1
    tampered[a_used[-1]] -= 1
    tampered[b_free[0]] += 1
    result = check(model, tampered, potential)
    assert [f[:3] for f in result.failures] == ["FC4"]


def test_certificate_rejects_broken_conservation_and_capacity():
    model, flow, potential = certified(hetero())
    tampered = flow.copy()
    tampered[0] += 1  # one more unit out of the source than it supplies
    assert any(f.startswith("FC2") for f in check(model, tampered, potential).failures)
    tampered = flow.copy()
    tampered[model.f2.start] = model.capacity[model.f2.start] + 1
    assert any(f.startswith("FC1") for f in check(model, tampered, potential).failures)


def test_certificate_rejects_tampered_potentials():
    model, flow, potential = certified(hetero())
    bad = potential.copy()
    bad[FlowLayout.SINK] += 10**6
    assert not check(model, flow, bad).ok
    assert not check(model, flow, None).ok


def test_certificate_rejects_a_loose_overflow_arc():
    # With U = 1, member a must take 3 units through its F5 arc (priced as if all were the 2nd):
    # the relaxation is not tight, so the certificate may not vouch for the true objective.
    s = group({"t": 4}, [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["u"]}])
    model = build_flow(aggregate(s), upper=1)
    flow = solve_flow_model(model)
    result = check(model, flow, residual_potentials(model, flow))
    assert any(f.startswith("FC3") for f in result.failures)


def test_k3_failure_makes_the_solver_retry_with_a_larger_bound():
    s = group({"t": 4}, [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["u"]}])
    hint = Assignment({"a": tuple(TP("t", p) for p in range(4)), "b": ()})
    r = solve_flow(s, hint=hint)
    assert r.optimal and r.objective.sum_squares == 16


# ------------------------------------------------------------------------------------------
# results


def test_flow_matches_exhaustive_enumeration_on_a_mixed_group():
    s = group(
        {"t": 3, "u": 2},
        [
            {"id": "a", "topics": ["t", "u"], "owned": {"t": [0, 1, 2]}, "generation": 4},
            {"id": "b", "topics": ["t"], "owned": {"t": [1]}, "generation": 3},
            {"id": "c", "topics": ["u"], "owned": {"u": [0, 1], "t": [9]}, "generation": 4},
        ],
    )
    r = solve_flow(s)
    assert r.optimal and r.proven
    assert r.objective == brute_optimum(s).objective
    owner = {tp: m for m, tps in r.assignment.assignment.items() for tp in tps}
    assert evaluate_choice(s, owner) == r.objective


def test_uniform_with_unequal_subscriptions_is_reported_infeasible_not_raised():
    # P = 6 over 3 members: C3 wants 2 each, but c can only ever get u's single partition
    s = group({"t": 5, "u": 1}, [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}, {"id": "c", "topics": ["u"]}])
    r = solve_flow(s, balance="uniform")
    assert r.status == "INFEASIBLE" and r.proven and r.assignment is None
    assert solve_flow(s, balance="global").optimal
    with pytest.raises(SolverError):
        optimal_loads(s, balance="uniform")


def test_optimal_loads_is_one_optimal_load_vector():
    s = hetero(seed=11)
    loads = optimal_loads(s)
    assert set(loads) == {m.id for m in s.members}
    r = solve_flow(s)
    assert sorted(loads.values()) == sorted(len(v) for v in r.assignment.assignment.values())
    assert sum(v * v for v in loads.values()) == r.objective.sum_squares
    assert sum(loads.values()) == sum(t.partitions for t in s.topics if any(t.name in m.topics for m in s.members))


def test_cooperative_round_withholds_partitions_changing_owner():
    s = group(
        {"t": 4},
        [
            {"id": "a", "topics": ["t"], "owned": {"t": [0, 1, 2, 3]}, "generation": 2},
            {"id": "b", "topics": ["t"]},
        ],
        protocol="cooperative",
    )
    r = solve_flow(s)
    assert r.objective.kept == 2
    assert sum(len(v) for v in r.target.assignment.values()) == 4
    assert r.assignment.assignment["b"] == ()
    assert len(r.assignment.revoking["a"]) == 2
    assert set(r.assignment.revoking["a"]) == set(r.target.assignment["b"])


def test_rack_tier_prefers_local_replicas_after_stickiness():
    s = group(
        {"t": {"partitions": 2, "racks": [["r1"], ["r2"]]}},
        [
            {"id": "a", "topics": ["t"], "rack": "r2", "owned": {"t": [0]}, "generation": 1},
            {"id": "b", "topics": ["t"], "rack": "r1"},
            {"id": "c", "topics": ["t"], "rack": "r2"},
        ],
    )
    r = solve_flow(s, racks=True)
    # balance first (everyone at most 1), then a keeps t-0 (not local), then t-1 goes to the r2 member c
    assert r.assignment.assignment == {"a": (TP("t", 0),), "b": (), "c": (TP("t", 1),)}
    assert r.objective.rack_local == 1 and r.objective == brute_optimum(s, racks=True).objective


def test_flow_is_deterministic_whatever_the_input_order():
    s = hetero(seed=5, members=15)
    expected = solve_flow(s).assignment
    rng = random.Random(1)
    for _ in range(5):
        members = [replace(m, owned=tuple(rng.sample(m.owned, len(m.owned)))) for m in s.members]
        rng.shuffle(members)
        topics = list(s.topics)
        rng.shuffle(topics)
        assert solve_flow(Scenario(tuple(topics), tuple(members))).assignment == expected


def test_valid_hint_bounds_the_balance_arcs_and_an_invalid_one_is_ignored():
    s = hetero(seed=2)
    r = solve_flow(s)
    agg = aggregate(s)
    assert greedy_max_load(agg) >= r.objective.max_load
    hinted = solve_flow(s, hint=r.target)
    assert hinted.objective == r.objective and hinted.proven
    broken = Assignment({"nobody": (TP("t0", 0),)})
    assert solve_flow(s, hint=broken).objective == r.objective


def test_read_assignment_lists_every_member():
    s = group({"t": 1}, [{"id": "a", "topics": ["t"]}, {"id": "idle", "topics": []}])
    model, flow, _ = certified(s)
    assert read_assignment(model, flow).assignment == {"a": (TP("t", 0),), "idle": ()}


def test_empty_group_and_nothing_to_assign_are_trivially_optimal():
    empty = Scenario((), ())
    r = solve_flow(empty)
    assert r.optimal and r.assignment.assignment == {}
    idle = group({"t": 0}, [{"id": "a", "topics": ["t"]}])
    assert solve_flow(idle).assignment.assignment == {"a": ()}


def test_unknown_balance_mode_is_bad_input():
    with pytest.raises(InvalidScenario):
        solve_flow(hetero(), balance="fair")
