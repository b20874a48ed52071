"""The optimality gap of heterogeneous ``uniform`` (its per-topic greed and 16-round cap), per group shape.

    .venv/bin/python benchmarks/consumer_heterogeneous_gap.py                  # 40 groups per shape and state, seed 1
    .venv/bin/python benchmarks/consumer_heterogeneous_gap.py --groups 100 --seed 7 --assignor kafka-java:uniform@4.4.0

Each group is heterogeneous (the coordinator hands it to ``UniformHeterogeneousAssignmentBuilder``),
drawn in one of four subscription shapes and two states:

- ``buckets``: topics in buckets, each member subscribes to one bucket and sometimes one topic of
  another (Kafka's JMH heterogeneous shape, with overlap so the buckets interact);
- ``nested``: member i subscribes to topics 0..k_i (a few members see everything, most see little);
- ``shared+private``: one topic everyone reads plus a private topic or two each;
- ``random``: each member a random non-empty subset.

``fresh``: nothing held. ``churn``: the targets of a previous ``uniform`` run, then one event (a
member joins, one leaves, or one changes its subscription), so stickiness matters.

For each group the assignor's answer is compared with the oracle's proven optimum
(``oracle.consumer.solve_consumer``: balance, per-topic spread, rack locality, kept; and balance
then kept for the stickiness column). Columns: groups; at the balance optimum (sum of squared sizes
equal to the optimum's); mean and max excess of the sum of squares; max-min size above the
optimum's; at the spread optimum among those at the balance one; kept versus the most a
balance-optimal assignment keeps (mean shortfall); at the full lexicographic optimum; every
optimum proven. A Markdown table on stdout (docs/server-side.md publishes one run).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from stickyproof.grading import Limits, consumer_group_run  # noqa: E402
from stickyproof.lookup import get_assignor  # noqa: E402
from stickyproof.model import Scenario, scenario_from_dict  # noqa: E402
from stickyproof.oracle.consumer import consumer_objective, solve_consumer  # noqa: E402
from stickyproof.oracle.consumer_contracts import homogeneous  # noqa: E402

SHAPES = ("buckets", "nested", "shared+private", "random")
STATES = ("fresh", "churn")


def _subscriptions(rng: random.Random, shape: str, members: int, topics: list[str]) -> list[list[str]]:
    if shape == "buckets":
        buckets = [topics[i::3] for i in range(3)]
        out = []
        for i in range(members):
            subs = list(buckets[i % 3])
            if rng.random() < 0.5:
                subs.append(rng.choice(topics))
            out.append(sorted(set(subs)))
        return out
    if shape == "nested":
        return [topics[: rng.randint(1, len(topics))] for _ in range(members)]
    if shape == "shared+private":
        shared, private = topics[0], topics[1:]
        return [sorted({shared, *rng.sample(private, min(len(private), rng.randint(1, 2)))}) for _ in range(members)]
    return [rng.sample(topics, rng.randint(1, len(topics))) for _ in range(members)]


def draw_group(rng: random.Random, shape: str) -> Scenario:
    n_topics = rng.randint(3, 6)
    topics = {f"t{i}": rng.randint(1, 24) for i in range(n_topics)}
    n_members = rng.randint(3, 10)
    names = list(topics)
    for _ in range(20):
        subs = _subscriptions(rng, shape, n_members, names)
        members = [{"id": f"m{rng.randrange(10**6)}-{i}", "topics": s} for i, s in enumerate(subs)]
        s = scenario_from_dict({"format": "stickyproof.scenario/1", "group_protocol": "consumer", "name": shape,
                                "topics": topics, "members": members})
        if not homogeneous(s):
            return s
    raise RuntimeError(f"could not draw a heterogeneous {shape} group")


def churn(rng: random.Random, scenario: Scenario, run) -> Scenario:
    """Install ``run``'s targets, then one event: a member joins, one leaves, or one changes its subscription."""
    target = run(scenario)
    members = [replace(m, owned=tuple(target.assignment.get(m.id, ()))) for m in scenario.members]
    event = rng.choice(("join", "leave", "resubscribe"))
    names = [t.name for t in scenario.topics]
    if event == "join":
        members.append(replace(members[0], id=f"m{rng.randrange(10**6)}-new", owned=(), topics=tuple(rng.sample(names, rng.randint(1, len(names))))))
    elif event == "leave" and len(members) > 2:
        members.pop(rng.randrange(len(members)))
    else:
        i = rng.randrange(len(members))
        members[i] = replace(members[i], topics=tuple(rng.sample(names, rng.randint(1, len(names)))))
    return replace(scenario, members=tuple(members))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", type=int, default=40, help="groups per shape and state (default 40)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--assignor", default="uniform")
    args = ap.parse_args(argv)
    run = consumer_group_run(get_assignor(args.assignor), limits=Limits())
    rng = random.Random(args.seed)
    print(f"`{args.assignor}` on heterogeneous groups, {args.groups} per shape and state, seed {args.seed}\n")
    print("| shape | state | groups | at balance optimum | sum-of-squares excess mean / max | max-min above optimum | "
          "at spread optimum (of balance-optimal) | kept short of balance-then-kept optimum (mean) | at full optimum | proven |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    started = time.perf_counter()
    totals = {"groups": 0, "bal": 0, "full": 0}
    for shape in SHAPES:
        for state in STATES:
            rows = []
            while len(rows) < args.groups:
                s = draw_group(rng, shape)
                if state == "churn":
                    s = churn(rng, s, run)
                    if homogeneous(s):
                        continue
                answer = run(s)
                got = consumer_objective(s, answer)
                full = solve_consumer(s)
                sticky = solve_consumer(s, tiers=("balance", "kept"))
                sizes = [len(answer.assignment.get(m.id, ())) for m in s.members]
                best = [len(full.assignment.assignment.get(m.id, ())) for m in s.members]
                rows.append({
                    "bal": got.sum_squares == full.objective.sum_squares,
                    "excess": got.sum_squares - full.objective.sum_squares,
                    "spread": max(sizes) - min(sizes) - (max(best) - min(best)),
                    "spread_opt": got.sum_squares == full.objective.sum_squares and got.spread == full.objective.spread,
                    "kept_short": sticky.objective.kept - got.kept if got.sum_squares == sticky.objective.sum_squares else None,
                    "full": got.key() == full.objective.key(),
                    "proven": full.proven and sticky.proven,
                })
            n = len(rows)
            bal = sum(r["bal"] for r in rows)
            excess = [r["excess"] for r in rows]
            short = [r["kept_short"] for r in rows if r["kept_short"] is not None]
            totals["groups"] += n
            totals["bal"] += bal
            totals["full"] += sum(r["full"] for r in rows)
            print(f"| {shape} | {state} | {n} | {bal} ({100 * bal / n:.0f}%) | {sum(excess) / n:.1f} / {max(excess)} | "
                  f"{sum(r['spread'] > 0 for r in rows)} groups | {sum(r['spread_opt'] for r in rows)} of {bal} | "
                  f"{(sum(short) / len(short)) if short else 0:.2f} (over {len(short)}) | {sum(r['full'] for r in rows)} | "
                  f"{sum(r['proven'] for r in rows)} of {n} |")
    print(f"\n{totals['groups']} groups, {totals['bal']} at the balance optimum, {totals['full']} at the full optimum, "
          f"{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
