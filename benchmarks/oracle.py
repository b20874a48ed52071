"""Time to a proven optimum for each oracle engine, per group shape.

    nice .venv/bin/python benchmarks/oracle.py            # every shape (several minutes)
    nice .venv/bin/python benchmarks/oracle.py --quick    # scaled-down shapes, a smoke run

Targets on a 2-core machine (issue 4): the flow with its certificate checked solves the
homogeneous 10,000 x 500,000 shape in <= 5 s and the heterogeneous 2,000 x 1,000,000 shape
(>= 50 subscription sets, prior owners, stale and double claimants) in <= 15 s; CP-SAT
(aggregated, flow-hinted) proves the joint optimum of a >= 1,000 x 100,000 heterogeneous
group in <= 60 s; the per-partition Boolean model: the largest group proven within 60 s.

Prints one line per run: shape, engine, status, proven, kept, seconds (scenario construction
excluded; aggregation, solving, certificate and expansion included). A run that is not proven
says so; nothing is called optimal without the proof.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from stickyproof.model import Member, Scenario, Topic, TopicPartition


def homogeneous(members: int, topics: int, per_topic: int, *, seed: int = 1) -> Scenario:
    """Everyone subscribes to every topic; members re-join owning a round-robin share (gen 1),
    the first member owns nothing (a newcomer), as in Kafka's testLargeAssignment... shapes."""
    names = [f"t{i:04d}" for i in range(topics)]
    ids = [f"c{i:05d}" for i in range(members)]
    owned: list[list[TopicPartition]] = [[] for _ in ids]
    k = 0
    for t in names:
        for p in range(per_topic):
            owned[1 + k % (members - 1)].append(TopicPartition(t, p))
            k += 1
    ms = tuple(Member(ids[i], tuple(names), tuple(owned[i]), 1 if owned[i] else -1) for i in range(members))
    return Scenario(tuple(Topic(t, per_topic) for t in names), ms, "eager", f"homogeneous-{members}x{topics * per_topic}")


def heterogeneous(members: int, topics: int, per_topic: int, *, buckets: int = 50, seed: int = 1) -> Scenario:
    """``buckets`` distinct subscription sets (each a random 10-40% of the topics, every topic
    covered); prior owners from a skewed previous assignment at generation 5, 2% stale claims
    (generation 4) by other subscribers, 0.5% double claims at generation 5 (nobody may keep
    those), and claims on partitions past the count and on a deleted topic."""
    rng = random.Random(seed)
    buckets = max(1, min(buckets, members))
    names = [f"t{i:04d}" for i in range(topics)]
    subs_of_bucket = []
    for b in range(buckets):
        k = rng.randint(max(1, topics // 10), max(1, (2 * topics) // 5))
        subs_of_bucket.append(sorted(rng.sample(names, k)))
    for i, t in enumerate(names):  # every topic has a subscriber
        b = i % buckets
        if t not in subs_of_bucket[b]:
            subs_of_bucket[b] = sorted(subs_of_bucket[b] + [t])
    ids = [f"c{i:05d}" for i in range(members)]
    bucket = [i % buckets for i in range(members)]
    subscribers: dict[str, list[int]] = {t: [] for t in names}
    for i in range(members):
        for t in subs_of_bucket[bucket[i]]:
            subscribers[t].append(i)
    owned: list[list[TopicPartition]] = [[] for _ in ids]
    gens = [5] * members
    for i in range(0, members, 10):
        gens[i] = 4  # a tenth of the group rejoins one generation behind (stale)
    for t in names:
        subs = subscribers[t]
        for p in range(per_topic):
            r = rng.random()
            owner = subs[int(len(subs) * rng.random() ** 1.5)]  # skewed: the previous plan was unbalanced
            if r < 0.9:
                owned[owner].append(TopicPartition(t, p))
            if r < 0.02 and len(subs) > 1:
                other = subs[rng.randrange(len(subs))]
                if other != owner:
                    owned[other].append(TopicPartition(t, p))
    for i in range(0, members, 7):
        owned[i].append(TopicPartition(names[0], per_topic + 3))  # past the partition count: void
        owned[i].append(TopicPartition("deleted-topic", 0))  # missing topic: void
    ms = []
    for i in range(members):
        seen = set()
        mine = tuple(tp for tp in owned[i] if not (tp in seen or seen.add(tp)))
        ms.append(Member(ids[i], tuple(subs_of_bucket[bucket[i]]), mine, gens[i]))
    return Scenario(
        tuple(Topic(t, per_topic) for t in names), tuple(ms), "eager", f"heterogeneous-{members}x{topics * per_topic}"
    )


def run(label: str, fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    seconds = time.perf_counter() - start
    print(
        f"{label:<44} {result.engine:<22} {result.status:<10} proven={str(result.proven):<5} "
        f"kept={result.kept} bound={result.bound} {seconds:8.2f} s",
        flush=True,
    )
    return result


def booleans(scenario: Scenario) -> int:
    """owns[m, p] variables of the per-partition model: one per (partition, subscriber)."""
    subs: dict[str, int] = {}
    for m in scenario.members:
        for t in m.topics:
            subs[t] = subs.get(t, 0) + 1
    return sum(t.partitions * subs.get(t.name, 0) for t in scenario.topics)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="scaled-down shapes (smoke run)")
    parser.add_argument("--only", choices=("flow", "cpsat", "per-partition"), help="run one engine's shapes")
    args = parser.parse_args(argv)

    from stickyproof.oracle.flow import solve_flow
    from stickyproof.oracle.optimal import solve_cpsat

    q = 10 if args.quick else 1
    if args.only in (None, "flow"):
        s = homogeneous(10_000 // q, 100, 5_000 // q)
        run(s.name, solve_flow, s)
        s = heterogeneous(2_000 // q, 500, 2_000 // q)
        run(s.name, solve_flow, s)
    if args.only in (None, "cpsat"):
        s = heterogeneous(1_000 // q, 200, 500 // q)
        run(s.name, solve_flow, s)
        run(s.name, solve_cpsat, s, time_limit=60, model="aggregated")
    if args.only in (None, "per-partition"):
        # growing shapes until one is not proven within 60 s: the last proven one is the figure
        for members, topics, per_topic in ((50, 20, 50), (100, 25, 100), (150, 30, 100), (200, 40, 100), (200, 50, 100)):
            s = heterogeneous(members // q or 2, topics, per_topic // q or 1, buckets=min(50, members // 4))
            r = run(f"{s.name} ({booleans(s)} owns)", solve_cpsat, s, time_limit=60, model="per-partition")
            if not r.proven:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
