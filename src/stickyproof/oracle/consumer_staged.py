"""The consumer-group optimum by CP-SAT, tier by tier (models/optimal-assignment.md §10): for groups
too large for the one flow's weights in 64 bits (``consumer.solve_consumer`` calls it).
"""

from __future__ import annotations

import time
from typing import Any

from ..model import Assignment, Scenario, TopicPartition
from .consumer import ConsumerOptimum, consumer_objective, partition_classes, subscribers_of

__all__ = ["solve_staged"]


def solve_staged(scenario: Scenario, tiers: tuple[str, ...], started: float, seconds: float | None) -> ConsumerOptimum:
    """CP-SAT over class x member counts, one tier after the other, each fixed at the value reached
    (one worker; OPTIMAL only when every stage is): for groups whose K5 weights overflow 64 bits."""
    from ortools.sat.python import cp_model

    subs = subscribers_of(scenario)
    classes = partition_classes(scenario, subs)
    racks = {m.id: m.rack or None for m in scenario.members}
    members = sorted({m for ms in subs.values() for m in ms})
    model = cp_model.CpModel()
    x: dict[tuple[int, str], Any] = {}
    for c, (topic, _, _, tps) in enumerate(classes):
        for m in subs[topic]:
            x[c, m] = model.new_int_var(0, len(tps), f"x[{c},{m}]")
        # Every partition of a subscribed topic goes to exactly one of its subscribers.
        model.add(sum(x[c, m] for m in subs[topic]) == len(tps))
    load = {m: model.new_int_var(0, len(classes) and sum(len(c[3]) for c in classes), f"load[{m}]") for m in members}
    for m in members:
        model.add(load[m] == sum(v for (c, mm), v in x.items() if mm == m))
    count = {}
    for topic, ms in subs.items():
        for m in ms:
            count[topic, m] = model.new_int_var(0, scenario.topic(topic).partitions, f"count[{topic},{m}]")
            model.add(count[topic, m] == sum(x[c, m] for c, cl in enumerate(classes) if cl[0] == topic))

    def squares(vs: list[Any], hi: int) -> Any:
        out = []
        for v in vs:
            s = model.new_int_var(0, hi * hi, "")
            model.add_multiplication_equality(s, [v, v])
            out.append(s)
        return sum(out)

    total = sum(len(c[3]) for c in classes)
    exprs = {
        "balance": squares(list(load.values()), total),
        "spread": squares(list(count.values()), total),
        "racks": -sum(v for (c, m), v in x.items() if racks[m] is not None and racks[m] in classes[c][2]),
        "kept": -sum(v for (c, m), v in x.items() if classes[c][1] == m),
    }
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    if seconds is not None:
        solver.parameters.max_time_in_seconds = seconds
    proven = True
    status_name = "OPTIMAL"
    for tier in tiers:
        model.minimize(exprs[tier])
        status = solver.solve(model)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return ConsumerOptimum("cpsat", "UNKNOWN", False, tiers, None, None, time.perf_counter() - started,
                                   f"stage {tier}: {solver.status_name(status)}")
        if status != cp_model.OPTIMAL:
            proven, status_name = False, "FEASIBLE"
        # Later stages keep this tier at the value reached.
        model.add(exprs[tier] == int(round(solver.objective_value)))
        model.clear_hints()
        for v in x.values():
            model.add_hint(v, solver.value(v))
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in scenario.members}
    for c, (topic, _, _, tps) in enumerate(classes):
        at = 0
        for m in subs[topic]:
            n = solver.value(x[c, m])
            out[m].extend(tps[at:at + n])
            at += n
    assignment = Assignment({m: tuple(sorted(tps)) for m, tps in out.items()})
    return ConsumerOptimum("cpsat", status_name, proven, tiers, assignment, consumer_objective(scenario, assignment),
                           time.perf_counter() - started)
