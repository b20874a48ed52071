"""Time the sticky general path (``general_assign``) on Kafka's heterogeneous scale tests (docs/rules.md §6).

    python benchmarks/general.py                 both shapes, fresh and rejoin
    python benchmarks/general.py --shape halves  one shape
    python benchmarks/general.py --profile       cProfile of each timed call (top 15 by cumulative time)

Shapes (names as Kafka's tests build them: ``c`` / ``t`` + zero-padded index):

    halves       testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout: 500 members, 100 topics x 200;
                 members i mod 4 == 0 take the first half of the topics, the others the second half.
                 Target: <= 2 s per round.
    last-one     testLargeAssignmentAndGroupWithNonEqualSubscription: 2,000 members, 500 topics x 2,000
                 (10^6 partitions); everybody subscribes to everything except the last member (first topic
                 only). Kafka's timeout: 90 s for both rounds.
    *-rack       the same tests with hasConsumerRack: 50 topics, 3 racks, every partition on every
                 rack, consumer rack = index mod 3, rack mode forced on as Kafka's tests do.

Each shape runs two rounds as Kafka's test does: fresh, then members 1.. rejoin owning their round-one
result with generation 1 (member 0 owns nothing). Only ``general_assign`` is timed; building the
``StickyInput`` and the ``PriorOwners`` (plain: no claim is contested) is reported apart. The figures
are wall-clock on a shared machine: run under ``nice`` and read them as orders of magnitude.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from stickyproof.assignors.general import general_assign  # noqa: E402
from stickyproof.assignors.sticky_types import MemberData, PriorOwners, StickyInput  # noqa: E402
from stickyproof.javaorder import hashmap_order  # noqa: E402

SHAPES = {
    "halves": dict(members=500, topics=100, partitions=200),
    "last-one": dict(members=2000, topics=500, partitions=2000),
    # the hasConsumerRack variants: fewer topics, 3 racks, every partition on every rack, consumer
    # rack = index mod 3, rack mode forced on (Kafka's tests set preferRackAwareLogic)
    "halves-rack": dict(members=500, topics=50, partitions=200, racks=True),
    "last-one-rack": dict(members=2000, topics=50, partitions=2000, racks=True),
}


def _name(prefix: str, i: int, total: int) -> str:
    return prefix + str(i).zfill(len(str(total)))


def build(shape: str, owned: dict | None) -> tuple[StickyInput, PriorOwners]:
    spec = SHAPES[shape]
    n, nt, np_ = spec["members"], spec["topics"], spec["partitions"]
    topics = [_name("t", i, nt) for i in range(nt)]
    ids = [_name("c", i, n) for i in range(n)]
    subs = {}
    for i, m in enumerate(ids):
        if shape.startswith("halves"):
            subs[m] = tuple(topics[: nt // 2]) if i % 4 == 0 else tuple(topics[nt // 2 :])
        else:
            subs[m] = tuple(topics[:1]) if i == n - 1 else tuple(topics)
    data, gens = {}, {}
    for i, m in enumerate(ids):
        if owned is not None and i > 0:
            data[m] = MemberData(tuple(owned[m]), 1)
            gens[m] = 1
        else:
            data[m] = MemberData((), None)
            gens[m] = -1
    racks = spec.get("racks", False)
    everywhere = (frozenset("abc"),) * np_
    inp = StickyInput(
        partitions_per_topic=dict.fromkeys(topics, np_),
        members=tuple(hashmap_order(ids)),
        subscriptions=subs,
        member_data=data,
        wire_generation=gens,
        wire_owned={m: data[m].partitions for m in ids},
        member_rack={m: "abc"[i % 3] for i, m in enumerate(ids)} if racks else dict.fromkeys(ids),
        partition_racks=dict.fromkeys(topics, everywhere) if racks else {},
        rack_aware=racks,
    )
    prior = PriorOwners(
        {m: data[m].partitions for m in ids}, frozenset(), 1 if owned is not None else -1
    )
    return inp, prior


def timed(inp, prior, profile: bool):
    if not profile:
        t0 = time.perf_counter()
        result = general_assign(inp, prior)
        return result, time.perf_counter() - t0
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    result = prof.runcall(general_assign, inp, prior)
    elapsed = time.perf_counter() - t0
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(15)
    print(out.getvalue())
    return result, elapsed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), action="append")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    print(f"{'shape':10} {'round':7} {'build s':>8} {'assign s':>9}  sizes")
    for shape in args.shape or list(SHAPES):
        t0 = time.perf_counter()
        inp, prior = build(shape, None)
        built = time.perf_counter() - t0
        fresh, secs = timed(inp, prior, args.profile)
        sizes = sorted(len(v) for v in fresh.assignment.values())
        print(f"{shape:10} {'fresh':7} {built:8.2f} {secs:9.2f}  min {sizes[0]} max {sizes[-1]} engine {fresh.engine}", flush=True)
        t0 = time.perf_counter()
        inp, prior = build(shape, fresh.assignment)
        built = time.perf_counter() - t0
        rejoin, secs = timed(inp, prior, args.profile)
        sizes = sorted(len(v) for v in rejoin.assignment.values())
        kept = sum(len(set(fresh.assignment[m]) & set(rejoin.assignment[m])) for m in inp.members if m != _name("c", 0, SHAPES[shape]["members"]))
        print(f"{shape:10} {'rejoin':7} {built:8.2f} {secs:9.2f}  min {sizes[0]} max {sizes[-1]} kept {kept} "
              f"engine {rejoin.engine}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
