"""Server-side (KIP-848) assignors at Kafka's own JMH shapes: the ports, Kafka's Java and the exact oracle, side by side.

    .venv/bin/python benchmarks/server_side.py                     # the default shapes, a few minutes on 2 cores
    .venv/bin/python benchmarks/server_side.py --members 10000 --ratio 50 --topics 1000 --oracle-max-partitions 0
    .venv/bin/python benchmarks/server_side.py --members 100 1000 --ratio 5 10 --subscription homogeneous --kind incremental

The shapes are those of Kafka's ``ServerSideAssignorBenchmark`` (jmh-benchmarks): ``memberCount``
members ``member0..``, ``memberCount * partitionsToMemberRatio / topicCount`` partitions in each of
``topicCount`` topics ``topic0..``; homogeneous (everyone subscribes to every topic) or
heterogeneous (members and topics cut into 5 buckets, each bucket's members subscribing to its
topics); ``full`` (no current targets) or ``incremental`` (``memberCount - 1`` members holding the
assignor's own full answer, plus ``newMember`` subscribing as the last bucket's members do); racks
off, or on: member ``i`` in ``rack{i % 3}`` and partition ``p``'s replicas on racks ``p, p+1, p+2 (mod 3)``.

For each shape and assignor (``uniform``, ``consumer-range``):

- ``java s``: Kafka's ``assign`` call timed inside the harness (peers/kafka-java-coordinator, one
  JVM for the whole run), after unmeasured calls on the same ``GroupSpec`` (JMH's warm-up
  iterations): at least ``--warmup`` of them and, where those take less than ``--warmup-seconds``,
  as many more as fill that time (JMH warms up for seconds; five calls of a millisecond leave the
  JIT half done, and the figure would then depend on which shapes ran before); the median of
  ``--iterations`` measured calls in each of ``--rounds`` rounds (the JIT's warm-up in the first);
  JVM start, JSON and the ``GroupSpec`` building are not in it.
  ``java heap``: the JVM's used heap after the last call.
- ``port s``: the port's assign call (``CONSUMER_GROUP_ASSIGNORS[name](spec)``: the ports compiled
  by setup.py where they are built and current, the first line says whether) on the same
  group, in a forked child after each round's Java calls: one unmeasured call, then
  ``--port-iterations`` measured; the median over every round, ``group_spec`` (the Python side of
  building the ``GroupSpec``, done once by the parent before the forks) not in it. The rounds
  interleave the two sides, so that both meet the same moments of a machine whose speed drifts (on
  a shared 2-core machine the same call's time moves by up to 1.8x from one second to the next). ``port MB``: the largest growth of peak
  resident memory over a round's calls (each child starts afresh). ``ratio``:
  port s / java s (the target: <= 5). ``port cpu s`` (at the line's end): the same calls' median
  thread CPU time, which shows how much of ``port s`` a loaded machine's preemption added (a call
  of a millisecond, as Java's are, is rarely preempted; one of tens of milliseconds is). Both ``java
  s`` and ``port s`` are wall clock, with Python's cyclic collector on (the
  port pays for the collections its allocations set off, as the JVM's call pays for its GCs), the
  script's own heap frozen (``gc.freeze``) so that those collections do not trace it.
- ``same``: whether the port's targets equal Kafka's on this group, in every round.
- with ``--pure``, at the line's end: the pure-Python ports (``PURE_CONSUMER_GROUP_ASSIGNORS``)
  timed the same way in a child of their own, wall and CPU, and whether their targets equal Kafka's
  too: before and after compiling, in one run.
- ``oracle s``: ``solve_consumer`` (balance, spread, racks, kept), its engine and whether the
  optimum is proven, in a forked child with its peak memory growth; skipped above
  ``--oracle-max-partitions``.

Deterministic groups (no randomness); timings are wall clock on whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import multiprocessing
import resource
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

NUMBER_OF_RACKS = 3
MAX_BUCKET_COUNT = 5
ASSIGNORS = ("uniform", "consumer-range")


@dataclass(frozen=True)
class Shape:
    """One point of ServerSideAssignorBenchmark's parameter grid."""

    members: int
    ratio: int
    topics: int
    subscription: str  # homogeneous | heterogeneous
    kind: str  # full | incremental
    racks: bool

    @property
    def partitions_per_topic(self) -> int:
        return self.members * self.ratio // self.topics

    @property
    def partitions(self) -> int:
        return self.partitions_per_topic * self.topics

    def label(self) -> str:
        return (f"{self.members}x{self.partitions} ({self.topics}t) {self.subscription[:3]} {self.kind[:4]} "
                f"racks {'on' if self.racks else 'off'}")


def shapes(args) -> Iterator[Shape]:
    """The grid the flags name (members x ratio x topics x subscription x kind x racks), in that
    order, shapes without a partition per topic left out."""
    for members, ratio, topics, subscription, kind, racks in itertools.product(
            args.members, args.ratio, args.topics, args.subscription, args.kind, args.racks):
        shape = Shape(members, ratio, topics, subscription, kind, racks == "on")
        if shape.partitions_per_topic:
            yield shape


def _subscriptions(shape: Shape, count: int) -> list[list[str]]:
    """Each of ``count`` members' topics, as the JMH setup buckets them."""
    names = [f"topic{i}" for i in range(shape.topics)]
    if shape.subscription == "homogeneous":
        return [names] * count
    buckets = min(MAX_BUCKET_COUNT, count)
    if shape.topics < buckets:
        raise SystemExit(f"--topics {shape.topics}: a heterogeneous shape needs at least {buckets} topics")
    topics_per, members_per = -(-shape.topics // buckets), -(-count // buckets)
    out: list[list[str]] = []
    for b in range(buckets):
        out += [names[b * topics_per:(b + 1) * topics_per]] * max(0, min((b + 1) * members_per, count) - b * members_per)
    return out


def group_doc(shape: Shape, targets: dict[str, dict[str, list[int]]] | None = None) -> dict:
    """The shape's group as a scenario document; ``targets``: the incremental shape's current targets."""
    n = shape.partitions_per_topic
    racks = [[f"rack{(p + k) % NUMBER_OF_RACKS}" for k in range(3)] for p in range(n)] if shape.racks else None
    topics = {f"topic{i}": ({"partitions": n, "racks": racks} if racks else n) for i in range(shape.topics)}
    count = shape.members - 1 if shape.kind == "incremental" else shape.members
    subs = _subscriptions(shape, count)
    members = [{"id": f"member{i}", "topics": subs[i], "rack": f"rack{i % NUMBER_OF_RACKS}" if shape.racks else None,
                "owned": (targets or {}).get(f"member{i}", {})} for i in range(count)]
    if shape.kind == "incremental":
        members.append({"id": "newMember", "topics": subs[-1] if shape.subscription == "heterogeneous" else subs[0],
                        "rack": f"rack{(shape.members - 1) % NUMBER_OF_RACKS}" if shape.racks else None, "owned": {}})
    return {"format": "stickyproof.scenario/1", "name": shape.label(), "group_protocol": "consumer",
            "topics": topics, "members": members}


def _as_targets(assignment) -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for member, tps in assignment.assignment.items():
        for tp in tps:
            out.setdefault(member, {}).setdefault(tp.topic, []).append(tp.partition)
    return out


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _in_child(fn, *args):
    """Run ``fn(*args)`` in a forked child: its result plus the peak RSS growth (MB) over the call."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def body():
        before = _rss_kb()
        try:
            result = fn(*args)
        except Exception as exc:  # reported, not raised: one shape's failure should not end the table
            result = ("error", f"{type(exc).__name__}: {exc}")
        child.send((result, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024))
        child.close()

    proc = ctx.Process(target=body)
    proc.start()
    out = parent.recv()
    proc.join()
    return out


def _port_run(spec, member_ids, name: str, iterations: int, expected, pure: bool = False):
    """The port's calls on ``spec`` (built by the parent, before the fork: the Python side of
    building the ``GroupSpec`` is not in the figures, as the Java side's is not): each call's wall
    and thread CPU seconds, and whether the last answer equals ``expected`` (Kafka's)."""
    from stickyproof.assignors.consumer import CONSUMER_GROUP_ASSIGNORS, PURE_CONSUMER_GROUP_ASSIGNORS, to_assignment

    fn = (PURE_CONSUMER_GROUP_ASSIGNORS if pure else CONSUMER_GROUP_ASSIGNORS)[name]
    fn(spec)  # unmeasured, as the Java side's warm-up: first-touch allocations are not the assignor's
    # The benchmark's own heap (modules, OR-Tools, the scenario, the spec) out of the collector's
    # sight, as a generational JVM does not trace its old generation in a young collection: a full
    # collection set off by the port's allocations would otherwise cost in proportion to this
    # script's heap. The port's own allocations are collected as usual.
    gc.collect()
    gc.freeze()
    seconds, cpu = [], []
    targets = None
    for _ in range(iterations):
        targets = None  # the previous answer freed before the call, not during it
        started, started_cpu = time.perf_counter(), time.thread_time()
        targets = fn(spec)
        seconds.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - started_cpu)
    gc.unfreeze()
    return seconds, to_assignment(spec, targets, member_ids) == expected, cpu


def _oracle_run(scenario, cpsat_seconds):
    from stickyproof.oracle.consumer import solve_consumer

    opt = solve_consumer(scenario, cpsat_seconds=cpsat_seconds)
    return opt.seconds, opt.engine, opt.proven, opt.detail


def main(argv: list[str] | None = None) -> int:
    from stickyproof.model import scenario_from_dict
    from stickyproof.peers.kafka_java_coordinator import coordinator_assignor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[100, 1000], help="memberCount (JMH: 100 500 1000 5000 10000)")
    parser.add_argument("--ratio", type=int, nargs="+", default=[10], help="partitionsToMemberRatio (JMH: 5 10 50)")
    parser.add_argument("--topics", type=int, nargs="+", default=[10, 100], help="topicCount (JMH: 10 100 1000)")
    parser.add_argument("--subscription", nargs="+", default=["homogeneous", "heterogeneous"], choices=["homogeneous", "heterogeneous"])
    parser.add_argument("--kind", nargs="+", default=["full", "incremental"], choices=["full", "incremental"])
    parser.add_argument("--racks", nargs="+", default=["off", "on"], choices=["off", "on"])
    parser.add_argument("--assignors", nargs="+", default=list(ASSIGNORS), choices=list(ASSIGNORS))
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured Java calls first (JMH: 5)")
    parser.add_argument("--warmup-seconds", type=float, default=2.0,
                        help="Java warms up at least this long, with more calls than --warmup where those are quicker")
    parser.add_argument("--iterations", type=int, default=5, help="measured Java calls (JMH: 5)")
    parser.add_argument("--port-iterations", type=int, default=5, help="the port's measured calls (after one unmeasured) in each round")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds per row, each Java's --iterations calls then the port's --port-iterations in a fresh child; "
                             "the medians are over every round's calls (both sides meet the same moments of a busy machine)")
    parser.add_argument("--pure", action="store_true",
                        help="also time the pure-Python ports (at the line's end), beside the compiled ones")
    parser.add_argument("--oracle-max-partitions", type=int, default=20000, help="skip the oracle above this many partitions (0: never run it)")
    parser.add_argument("--cpsat-seconds", type=float, default=20.0, help="bound on each CP-SAT stage of the oracle (groups too large for one flow)")
    parser.add_argument("--version", default=None, help="the Kafka release of the Java side (default: the kafka-java pin)")
    args = parser.parse_args(argv)
    for flag in ("members", "ratio", "topics"):
        if any(v <= 0 for v in getattr(args, flag)):
            print(f"--{flag}: every value must be positive", file=sys.stderr)
            return 2
    for flag in ("warmup", "iterations", "port_iterations", "rounds"):
        if getattr(args, flag) < (0 if flag == "warmup" else 1):
            print(f"--{flag.replace('_', '-')}: must be {'non-negative' if flag == 'warmup' else 'positive'}", file=sys.stderr)
            return 2
    if args.warmup_seconds < 0:
        print("--warmup-seconds: must be non-negative", file=sys.stderr)
        return 2

    from ortools.graph.python import min_cost_flow  # noqa: F401  imported before the forks: no import in the timings
    from stickyproof.assignors.consumer import ports_status

    print(f"KIP-848 ports: {', '.join(f'{n} {s}' for n, s in ports_status().items())}")

    jars = {name: coordinator_assignor(name, args.version) for name in args.assignors}
    for jar in jars.values():
        jar.call_seconds = 3600.0
    header = (f"{'shape':<44} {'assignor':<14} {'java s':>9} {'java MB':>8} {'port s':>9} {'port MB':>8} "
              f"{'ratio':>7} {'same':>5} {'oracle s':>9} {'oracle MB':>9}  oracle")
    print(header)
    print("-" * len(header))
    worst = 0.0
    try:
        for shape in shapes(args):
            for name in args.assignors:
                worst = max(worst, _row(shape, name, jars[name], args, scenario_from_dict))
    finally:
        for jar in jars.values():
            jar.close()
    print(f"worst port/java ratio: {worst:.1f}x (target <= 5x)")
    return 0


MAX_WARMUP_CALLS = 20000


def _java_timed(jar, scenario, args):
    """``--warmup`` unmeasured calls, then ``--iterations`` measured; if the calls were quicker than
    ``--warmup-seconds`` all told, once more on the same group with as many warm-up calls as fill it
    (the second figures replace the first: the JIT has seen the shape by then)."""
    answer, seconds, heap = jar.timed(scenario, warmup=args.warmup, iterations=args.iterations)
    per_call = max(statistics.median(seconds), 1e-6)
    if per_call * (args.warmup + args.iterations) < args.warmup_seconds:
        warmup = min(MAX_WARMUP_CALLS, max(args.warmup, int(args.warmup_seconds / per_call)))
        answer, seconds, heap = jar.timed(scenario, warmup=warmup, iterations=args.iterations)
    return answer, seconds, heap


def _row(shape: Shape, name: str, jar, args, scenario_from_dict) -> float:
    from stickyproof.assignors.consumer import group_spec

    targets = None
    if shape.kind == "incremental":
        # JMH's simulateIncrementalRebalance: the assignor's own full answer for memberCount - 1 members.
        base = Shape(shape.members - 1, shape.ratio, shape.topics, shape.subscription, "full", shape.racks)
        base_doc = group_doc(base)
        base_doc["topics"] = group_doc(shape)["topics"]  # the same partitions per topic as the shape itself
        targets = _as_targets(jar(scenario_from_dict(base_doc)))
    scenario = scenario_from_dict(group_doc(shape, targets))
    spec, member_ids = group_spec(scenario), [m.id for m in scenario.members]
    java_seconds, port_seconds, port_cpu, port_mb, port, same = [], [], [], 0.0, None, True
    for round_ in range(args.rounds):
        if round_ == 0:
            java_assignment, seconds, heap = _java_timed(jar, scenario, args)
        else:  # the JIT has seen this group: --warmup calls keep it there
            java_assignment, seconds, heap = jar.timed(scenario, warmup=args.warmup, iterations=args.iterations)
        java_seconds += seconds
        port, mb = _in_child(_port_run, spec, member_ids, name, args.port_iterations, java_assignment)
        port_mb = max(port_mb, mb)
        if port[0] == "error":
            break
        port_seconds += port[0]
        port_cpu += port[2]
        same = same and port[1]  # every round's answer compared with that round's Kafka answer
    java_s = statistics.median(java_seconds)
    if port[0] == "error":
        port_s, same, port_txt = float("nan"), "-", port[1]
    else:
        port_s, same = statistics.median(port_seconds), "yes" if same else "NO"
        port_txt = f"  port cpu s {statistics.median(port_cpu):.6f}"
    if args.pure:
        pure, _ = _in_child(_port_run, spec, member_ids, name, args.port_iterations, java_assignment, True)
        port_txt += (f"  pure: {pure[1]}" if pure[0] == "error" else
                     f"  pure s {statistics.median(pure[0]):.6f} cpu s {statistics.median(pure[2]):.6f} "
                     f"same {'yes' if pure[1] else 'NO'}")
    oracle_cols = f"{'-':>9} {'-':>9}  skipped (> --oracle-max-partitions)"
    if name == "uniform" and shape.partitions <= args.oracle_max_partitions:
        oracle, oracle_mb = _in_child(_oracle_run, scenario, args.cpsat_seconds)
        if oracle[0] == "error":
            oracle_cols = f"{'-':>9} {oracle_mb:>9.0f}  {oracle[1]}"
        else:
            o_s, engine, proven, detail = oracle
            oracle_cols = f"{o_s:>9.3f} {oracle_mb:>9.0f}  {engine}, {'proven' if proven else 'NOT proven: ' + detail}"
    elif name != "uniform":
        oracle_cols = f"{'':>9} {'':>9}  (one oracle per group: on the uniform row)"
    ratio = port_s / java_s if java_s > 0 else float("inf")
    print(f"{shape.label():<44} {name:<14} {java_s:>9.6f} {heap / 2**20:>8.0f} {port_s:>9.6f} {port_mb:>8.0f} "
          f"{ratio:>6.1f}x {same:>5} {oracle_cols}{port_txt if same != '-' else '  port: ' + port_txt}", flush=True)
    return ratio if ratio == ratio else 0.0


if __name__ == "__main__":
    sys.exit(main())
