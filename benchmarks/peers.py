"""What running an assignor out of process (``exec:``, models/assignor-protocol.md) costs.

    python benchmarks/peers.py                 both parts
    python benchmarks/peers.py --part overhead per-call overhead on a 2-member group only
    python benchmarks/peers.py --part large    the 2,000 x 1,000,000 group only
    python benchmarks/peers.py --quick         the large group scaled down (200 members x 100,000 partitions)

Part 1, per-call overhead: a trivial Python child (the protocol's §7 example: the first member
takes everything) answers ``--calls`` requests for a 2-member group; the time of the whole call
(``info.fn(group)``: build the request, write it, the child reads, assigns and answers, read and
check the answer) beside stickyproof's in-process ``range`` on the same group. Target: under 1 ms.

Part 2, carrying a large group across the pipe: Kafka's uniform shape (c0000..c1999, t000..t499 x
2,000 partitions, everyone on every topic), cooperative, each member owning its share, and a
Python child (collector off) that answers "each member keeps what it owns" (so its own assign time is small and
the answer carries all 1,000,000 partitions back). Two shares: ``dealt`` (member i owns partition
i of every topic: what range, round robin and the sticky assignors' first round give this shape,
and what Kafka's large test feeds back) and ``blocks`` (member i owns 500 consecutive partitions
of one topic). Each with and without the ranges encoding (§4). Reported: building the request,
the exchange (write, the child decoding, assigning and encoding, reading), checking the answer,
the child's own assign time, the bytes each way; and beside them stickyproof's in-process
``cooperative-sticky`` on the same group. Figures are wall-clock on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

TRIVIAL_CHILD = """
import json, sys, time
print(json.dumps({"stickyproof": "assignor/1", "name": "first-member-takes-all"}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    started = time.perf_counter()
    members = req["group"]["members"]
    topics = req["group"]["topics"]
    count = lambda t: t if isinstance(t, int) else t["partitions"]
    first = members[0]["id"]
    mine = {t: list(range(count(topics[t]))) for m in members for t in m["topics"] if t in topics}
    seconds = time.perf_counter() - started
    print(json.dumps({"id": req["id"], "assignment": {first: mine}, "assign_seconds": seconds}), flush=True)
"""

KEEPER_CHILD = """
import gc, json, sys, time
gc.disable()  # a million small lists each way, no cycles (stickyproof's side pauses its collector too)
RANGES = sys.argv[1] == "ranges"
hello = {"stickyproof": "assignor/1", "name": "keep-what-you-own", "supported_protocols": ["cooperative", "eager"]}
if RANGES:
    hello["accepts"] = ["ranges"]
print(json.dumps(hello), flush=True)

def expand(v):
    if isinstance(v, list):
        return v
    return [p for a, b in v["ranges"] for p in range(a, b + 1)]

def shorten(ps):
    if not RANGES or len(ps) < 5:
        return ps
    runs = []
    for p in ps:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return {"ranges": runs} if 2 * len(runs) + 2 < len(ps) else ps

for line in sys.stdin:
    req = json.loads(line)
    started = time.perf_counter()
    plan = {m["id"]: {t: expand(v) for t, v in m["owned"].items()} for m in req["group"]["members"]}
    seconds = time.perf_counter() - started
    answer = {m: {t: shorten(ps) for t, ps in topics.items()} for m, topics in plan.items()}
    print(json.dumps({"id": req["id"], "assignment": answer, "assign_seconds": seconds}), flush=True)
"""


def _child_file(source: str) -> str:
    fd, path = tempfile.mkstemp(prefix="stickyproof-bench-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(textwrap.dedent(source))
    return path


# ------------------------------------------------------------------------------------------
# Part 1


def overhead(calls: int) -> None:
    from stickyproof.assignors import get_assignor
    from stickyproof.assignors.base import GroupSubscription, Subscription
    from stickyproof.model import Topic
    from stickyproof.peers.exec import exec_assignor

    group = GroupSubscription({"orders": Topic("orders", 6)}, (Subscription("c0", ("orders",)), Subscription("c1", ("orders",))))
    path = _child_file(TRIVIAL_CHILD)
    info = exec_assignor("exec:trivial", [sys.executable, path])
    try:
        for _ in range(50):  # warm up both ends
            info.fn(group)
        totals, pipes = [], []
        for _ in range(calls):
            started = time.perf_counter()
            info.fn(group)
            totals.append(time.perf_counter() - started)
            pipes.append(info.fn.last_timing.pipe_seconds)
        in_process = get_assignor("range").fn
        local = []
        for _ in range(calls):
            started = time.perf_counter()
            in_process(group)
            local.append(time.perf_counter() - started)
    finally:
        info.fn.close()
        os.unlink(path)
    totals.sort()
    print(f"Part 1: per-call overhead, 2 members x 6 partitions, {calls} calls to a trivial Python child")
    print(f"  exec: call          median {statistics.median(totals) * 1e3:7.3f} ms   mean {statistics.fmean(totals) * 1e3:7.3f} ms"
          f"   p99 {totals[int(0.99 * len(totals)) - 1] * 1e3:7.3f} ms   (target < 1 ms)")
    print(f"  of which the pipe   median {statistics.median(pipes) * 1e3:7.3f} ms   (everything but the child's own assign time)")
    print(f"  range in process    median {statistics.median(local) * 1e3:7.3f} ms   ratio exec/in-process "
          f"{statistics.median(totals) / statistics.median(local):.0f}x")


# ------------------------------------------------------------------------------------------
# Part 2


def large_group(members: int, topics: int, partitions: int, share: str):
    from stickyproof.assignors.base import COOPERATIVE, GroupSubscription, Subscription
    from stickyproof.model import Topic, TopicPartition

    tw, mw = len(str(topics - 1)), len(str(members - 1))
    names = [f"t{i:0{tw}d}" for i in range(topics)]
    metadata = {t: Topic(t, partitions) for t in names}
    everything = tuple(names)
    owned: list[list[TopicPartition]] = [[] for _ in range(members)]
    if share == "dealt":  # the sorted partitions dealt round robin: member i gets partitions i, i + M, ... of each topic
        k = 0
        for t in names:
            for p in range(partitions):
                owned[k % members].append(TopicPartition(t, p))
                k += 1
    else:  # blocks: each member a run of consecutive partitions
        total = topics * partitions
        per = total // members
        flat = [(t, p) for t in names for p in range(partitions)]
        for i in range(members):
            owned[i] = [TopicPartition(t, p) for t, p in flat[i * per:(i + 1) * per]]
    subs = tuple(
        Subscription(f"c{i:0{mw}d}", everything, owned=tuple(owned[i]), generation=1) for i in range(members)
    )
    return GroupSubscription(metadata, subs, COOPERATIVE, True)


def large(quick: bool) -> None:
    from stickyproof.assignors import get_assignor
    from stickyproof.peers.exec import exec_assignor

    members, topics, partitions = (200, 50, 2000) if quick else (2000, 500, 2000)
    print(f"\nPart 2: {members} members x {topics * partitions:,} partitions ({topics} topics x {partitions}), cooperative, "
          "each member owning its share; a Python child answering 'keep what you own'")
    header = (f"  {'share':<7} {'encoding':<8} {'request MB':>10} {'answer MB':>9} {'encode s':>8} {'exchange s':>10} "
              f"{'decode s':>8} {'child assign s':>14} {'pipe s':>7} {'total s':>7}")
    path = _child_file(KEEPER_CHILD)
    try:
        for share in ("dealt", "blocks"):
            group = large_group(members, topics, partitions, share)
            print(header if share == "dealt" else "", end="\n" if share == "dealt" else "")
            for encoding in ("arrays", "ranges"):
                info = exec_assignor(f"exec:keeper-{encoding}", [sys.executable, path, encoding], call_seconds=600)
                try:
                    result = info.fn(group)
                    t = info.fn.last_timing
                finally:
                    info.fn.close()
                assert sum(result.loads().values()) == topics * partitions
                print(f"  {share:<7} {encoding:<8} {t.request_bytes / 1e6:>10.1f} {t.answer_bytes / 1e6:>9.1f} "
                      f"{t.encode_seconds:>8.2f} {t.exchange_seconds:>10.2f} {t.decode_seconds:>8.2f} "
                      f"{t.assign_seconds:>14.2f} {t.pipe_seconds:>7.2f} {t.total_seconds:>7.2f}", flush=True)
            started = time.perf_counter()
            get_assignor("cooperative-sticky").fn(group)
            print(f"  {share:<7} stickyproof cooperative-sticky in process, same group: assign {time.perf_counter() - started:.2f} s",
                  flush=True)
            del group
    finally:
        os.unlink(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("overhead", "large"), action="append", help="part(s) to run (default: both)")
    parser.add_argument("--calls", type=int, default=2000, help="calls timed in part 1 (default 2000)")
    parser.add_argument("--quick", action="store_true", help="part 2 on 200 members x 100,000 partitions")
    args = parser.parse_args(argv)
    parts = args.part or ["overhead", "large"]
    if "overhead" in parts:
        overhead(args.calls)
    if "large" in parts:
        large(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
