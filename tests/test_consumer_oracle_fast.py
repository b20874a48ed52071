"""The consumer-group oracle's fast paths (homogeneous groups in closed form, independent parts one
by one) against the general network of models/optimal-assignment.md §10 on the same groups: the
same optimum, every tier, and proven."""

from __future__ import annotations

import random

from stickyproof.model import scenario_from_dict
from stickyproof.oracle import consumer as oracle


def _general(scenario):
    """The general network solved directly, bypassing the fast paths."""
    net = oracle._build(scenario, oracle.TIERS)
    flow = oracle._solve_network(net)
    return oracle.consumer_objective(scenario, oracle._read(net, flow, scenario))


def _group(rng: random.Random, *, homogeneous: bool) -> dict:
    topics = {f"t{i}": {"partitions": rng.randint(1, 7), "racks": [[rng.choice("xyz")] for _ in range(7)]} for i in range(rng.randint(1, 4))}
    for t in topics.values():
        t["racks"] = t["racks"][: t["partitions"]]
    names = list(topics)
    members = []
    taken = set()
    # Half the heterogeneous groups in two blocks of topics no member spans (Kafka's buckets).
    half = rng.randint(1, len(names) - 1) if len(names) > 1 and rng.random() < 0.5 else None
    for i in range(rng.randint(1, 6)):
        pool = names if half is None else (names[:half] if i % 2 else names[half:])
        subs = names if homogeneous else rng.sample(pool, rng.randint(1, len(pool)))
        owned = {}
        for t in names:
            parts = [p for p in range(topics[t]["partitions"]) if (t, p) not in taken and rng.random() < 0.3]
            taken.update((t, p) for p in parts)
            if parts:
                owned[t] = parts
        members.append({"id": f"m{i}", "topics": list(subs), "owned": owned, "rack": rng.choice([None, "x", "y"])})
    return {"format": "stickyproof.scenario/1", "name": "fast", "group_protocol": "consumer", "topics": topics, "members": members}


def test_homogeneous_fast_path_reaches_the_general_networks_optimum():
    rng = random.Random(5)
    for _ in range(150):
        scenario = scenario_from_dict(_group(rng, homogeneous=True))
        opt = oracle.solve_consumer(scenario)
        assert opt.engine == "flow-homogeneous" and opt.proven
        assert opt.objective == _general(scenario)


def test_parts_are_solved_one_by_one_to_the_same_optimum():
    rng = random.Random(6)
    seen_parts = 0
    for _ in range(150):
        scenario = scenario_from_dict(_group(rng, homogeneous=False))
        opt = oracle.solve_consumer(scenario)
        assert opt.proven, opt.detail
        seen_parts += opt.engine.startswith("parts(")
        assert opt.objective == _general(scenario)
    assert seen_parts > 30  # the sample does exercise the split
