"""What running an assignor out of process (``exec:``, models/assignor-protocol.md) costs, and every
available adapter beside stickyproof's built-in assignors.

    python benchmarks/peers.py                  parts 1 and 3 (about 10-14 minutes on 2 shared cores)
    python benchmarks/peers.py --quick          the same, shapes divided by 10 (about a minute)
    python benchmarks/peers.py --part overhead  per-call overhead on a 2-member group only
    python benchmarks/peers.py --part adapters --shape kip615-2100
    python benchmarks/peers.py --part large     the 2,000 x 1,000,000 group across the pipe (part 2)

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
``cooperative-sticky`` on the same group.

Part 3, every adapter: the shapes of benchmarks/assignors.py (imported, not copied) that Kafka
times its assignors on, each with the assignors Kafka times there (``PLAN``): its large uniform and
non-equal tests (2,000 x 1,000,000, round 1 fresh, round 2 with every member but the first owning
its round-1 result at generation 1, the round-1 result being the built-in's), KIP-615's 2,100 x
2,100 and the JMH grid's largest point (10,000 x 500,000). Each group is built once as the leader
hands it over (each member's JoinGroup bytes and what they decode to); then stickyproof's built-in
assignor and every adapter of that name (``kafka-java:``, ``franz-go:``, ``sarama:``, ``kafka-go:``,
``kafkajs:``, ``kafka-python:``, each at its locked version) that resolves run on it, one call each;
Kafka's Java twice, cold (a JVM started for the call) and warm (the same JVM again). Reported per adapter: ``assign`` as the peer measured it
(``assign_seconds``), ``outside`` (the rest of the call: the pipe and the harness for ``exec:``,
kafka-python's own codecs and cluster metadata in process), and both over the built-in's time. An
adapter that does not resolve is skipped with the reason; a protocol it does not serve is said so.
kafka-python runs in a forked child killed at ``--python-seconds`` and is not run again on a shape
at least as large. Figures are wall-clock on a shared machine.
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
    from stickyproof.lookup import get_assignor
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
    from stickyproof.lookup import get_assignor
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


# ------------------------------------------------------------------------------------------
# Part 3


# The scale shapes of benchmarks/assignors.py, each with the assignors Kafka times on it.
PLAN = (
    ("uniform-fresh", ("sticky", "cooperative-sticky")),  # AbstractStickyAssignorTest, large uniform, round 1
    ("uniform-rejoin", ("sticky", "cooperative-sticky")),  # ... its round 2
    ("nonequal-fresh", ("sticky", "cooperative-sticky")),  # ... large non-equal, round 1
    ("nonequal-rejoin", ("sticky", "cooperative-sticky")),  # ... its round 2
    ("kip615-2100", ("range", "roundrobin", "sticky", "cooperative-sticky")),
    ("jmh-full", ("range", "cooperative-sticky")),  # ClientSideAssignorBenchmark's assignorType values
)
PEERS = ("kafka-java", "franz-go", "sarama", "kafka-go", "kafkajs", "kafka-python")
"""Every client adapter, at the version peers/versions.lock pins (built into the cache on first use)."""


def _shapes():
    """benchmarks/assignors.py, whose shape definitions this part reuses."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import assignors as shapes

    return shapes


def _scenario(shape, protocol: str, previous=None):
    """``shape`` as a scenario; ``previous`` (round 1's assignment) makes it round 2 as Kafka's large
    tests build it: every member but the first owns its round-1 result at generation 1."""
    from stickyproof.model import Member, Scenario, Topic

    shapes = _shapes()
    topics = shapes._topic_names(shape)
    names = shapes._member_names(shape.members)
    subs = shapes._subscriptions(shape, names, topics)
    members = []
    for i, name in enumerate(names):
        if previous is None or i == 0:
            members.append(Member(name, subs[i]))
        else:
            members.append(Member(name, subs[i], owned=tuple(previous.get(name, ())), generation=1))
    return Scenario(tuple(Topic(t, shape.partitions) for t in topics), tuple(members), protocol, shape.name)


def _wire_group(scenario, info, check: bool = False):
    """The group as stickyproof's leader hands it over: each member's JoinGroup bytes as ``raw``,
    and the fields they decode to. The fields are taken from the scenario (every member here is v3
    with a generation of 1 or none, topic names in ASCII: decoding yields topics and owned
    partitions sorted, owned partitions only when cooperative, R37), since decoding a million owned partitions back costs the leader tens of seconds in Python;
    ``check`` compares the result with ``leader.build_group``'s decoding (the --quick run does)."""
    from stickyproof.assignors.base import COOPERATIVE, GroupSubscription, Subscription
    from stickyproof.leader import build_group, subscription_bytes

    wire = {m.id: subscription_bytes(m, info, scenario.protocol) for m in scenario.members}
    members = tuple(
        Subscription(m.id, tuple(sorted(m.topics)), user_data=info.user_data(m),
                     owned=tuple(sorted(m.owned)) if scenario.protocol == COOPERATIVE else (),
                     generation=m.generation if m.generation >= 0 else None, rack=m.rack,
                     instance_id=m.instance_id, version=m.version, raw=wire[m.id])
        for m in scenario.members
    )
    group = GroupSubscription({t.name: t for t in scenario.topics}, members, scenario.protocol, False)
    if check:
        assert group == build_group(scenario, info, scenario.protocol, subscriptions=wire), "the group differs from the leader's"
    return group


def _kafka_python_call(fn, group, seconds: float) -> dict:
    """kafka-python's adapter in a forked child (killed at ``seconds``: an in-process call past a
    limit cannot be stopped), its ``assign`` timed apart from its own codecs and cluster metadata."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        spent = []
        base = fn.cls

        class Timed(base):  # type: ignore[misc, valid-type]
            def assign(self, cluster, members):
                started = time.perf_counter()
                try:
                    return super().assign(cluster, members)
                finally:
                    spent.append(time.perf_counter() - started)

        fn.cls = Timed
        started = time.perf_counter()
        try:
            fn(group)
            send.send({"assign": spent[0], "total": time.perf_counter() - started})
        except Exception as exc:  # noqa: BLE001 - reported as the row's outcome
            send.send({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"})

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    try:
        if receive.poll(seconds):
            return receive.recv()
        return {"error": f"did not finish in {seconds:g} s (killed)", "timeout": True}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()


def _time_peer(info, group, seconds: float, *, cold: bool = False) -> dict:
    """One call of ``info`` on ``group``. ``cold``: in a child started for this call (for the JVM:
    its start, class loading and a call before the JIT has compiled anything), its start counted
    in ``total``; otherwise in the running child (warm)."""
    from stickyproof.errors import AssignorFailure
    from stickyproof.peers.exec import with_call_seconds

    if info.name.startswith("kafka-python:"):
        return _kafka_python_call(info.fn, group, seconds)
    fn = with_call_seconds(info, seconds).fn
    started = time.perf_counter()
    try:
        if cold:
            fn.close()  # the next call starts a new child and waits for its hello
        fn(group)
    except AssignorFailure as exc:
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}",
                "timeout": type(exc).__name__ == "AssignorTimeLimit"}
    t = fn.last_timing
    total = time.perf_counter() - started if cold else t.total_seconds
    return {"assign": t.assign_seconds, "total": total, "mb": t.request_bytes / 1e6}


def _resolve_peers(names: set[str]) -> dict[str, object]:
    """Every adapter of ``PEERS`` x ``names`` that resolves; one line per peer (or adapter) that does not, saying why."""
    from stickyproof.lookup import get_assignor
    from stickyproof.errors import UnknownAssignor

    found: dict[str, object] = {}
    for peer in PEERS:
        why: dict[str, str] = {}
        for name in sorted(names):
            try:
                found[f"{peer}:{name}"] = get_assignor(f"{peer}:{name}")
            except UnknownAssignor as exc:
                why[name] = str(exc).splitlines()[0]
        if why and len(set(why.values())) == 1 and len(why) == len(names):
            print(f"  skipped {next(iter(why.values()))}")
        else:
            for name, reason in why.items():
                print(f"  skipped {peer}:{name}: {reason}")
    return found


def adapters(quick: bool, only: list[str] | None, seconds: float, python_seconds: float) -> None:
    """Each shape of ``PLAN`` x assignor: the wire group built once, then the built-in assignor and
    every available adapter of that name on it, one call each."""
    from stickyproof.lookup import get_assignor
    from stickyproof.assignors.base import COOPERATIVE, EAGER

    shapes = _shapes()
    plan = [(s, names) for s, names in PLAN if not only or s in only]
    print(f"\nPart 3: every adapter beside stickyproof's built-ins{' (shapes / 10)' if quick else ''}; one call each, "
          "the same wire group for all")
    peers = _resolve_peers({n for _, names in plan for n in names})
    print(f"  {'implementation':<31} {'assign s':>9} {'outside s':>9} {'total s':>8} {'x assign':>8} {'x total':>8}  "
          "(x: over stickyproof's built-in; outside: pipe and harness for exec:, kafka-python's codecs in process)")
    results: dict[tuple[str, str], object] = {}  # round 1 of the built-ins, fed back as round 2
    gave_up: dict[str, tuple[int, str]] = {}  # adapter -> (size, shape) it ran out of time on
    for shape_name, names in plan:
        shape = shapes.SHAPES[shape_name].scaled(quick)
        size = shape.members * shape.topics * shape.partitions  # members x partitions: the work of one assign
        for name in names:
            builtin = get_assignor(name)
            protocol = COOPERATIVE if COOPERATIVE in builtin.protocols else EAGER
            previous = None
            if shape.round == "rejoin":
                fresh = shape_name.replace("-rejoin", "-fresh")
                previous = results.get((fresh, name))
                if previous is None:  # round 1 not in this run: computed, untimed
                    previous = builtin.fn(_wire_group(_scenario(shapes.SHAPES[fresh].scaled(quick), protocol), builtin)).assignment
            started = time.perf_counter()
            group = _wire_group(_scenario(shape, protocol, previous), builtin, check=quick)
            built = time.perf_counter() - started
            note = shape.note or shapes.SHAPES[shape_name.replace("-rejoin", "-fresh")].note + ", round 2"
            print(f"# {shape_name} {name} ({protocol}): {shape.members} members x {shape.topics * shape.partitions:,} partitions "
                  f"({note}); the members' wire encoding {built:.1f} s", flush=True)
            started = time.perf_counter()
            result = builtin.fn(group)
            ours = time.perf_counter() - started
            results[(shape_name, name)] = result.assignment
            del result
            print(f"  {'stickyproof ' + name:<31} {ours:>9.3f} {'':>9} {ours:>8.3f}", flush=True)
            for peer in PEERS:
                full = f"{peer}:{name}"
                info = peers.get(full)
                if info is None:
                    continue
                if protocol not in info.protocols:
                    print(f"  {full:<31} not run: {peer} serves {name} in {', '.join(info.protocols)} groups only")
                    continue
                limit = python_seconds if peer == "kafka-python" else seconds
                if full in gave_up and size >= gave_up[full][0]:
                    print(f"  {full:<31} not run: timed out on {gave_up[full][1]}, no larger")
                    continue
                # Kafka's JVM cold (a child started for the call) and warm (the same child, again)
                runs = (("cold", True), ("warm", False)) if peer == "kafka-java" else (("", False),)
                for label, cold in runs:
                    shown = f"{full} ({label})" if label else full
                    got = _time_peer(info, group, limit, cold=cold)
                    if "error" in got:
                        if got.get("timeout"):
                            gave_up[full] = (size, shape_name)
                        print(f"  {shown:<31} {got['error']}", flush=True)
                        break
                    assign = got["assign"]
                    outside = got["total"] - (assign or 0.0)
                    a = f"{assign:>9.3f}" if assign is not None else f"{'?':>9}"
                    xa = f"{assign / ours:>7.1f}x" if assign is not None and ours > 0 else f"{'':>8}"
                    print(f"  {shown:<31} {a} {outside:>9.3f} {got['total']:>8.3f} {xa} {got['total'] / ours:>7.1f}x", flush=True)
            del group


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("overhead", "large", "adapters"), action="append",
                        help="part(s) to run (default: overhead and adapters)")
    parser.add_argument("--calls", type=int, default=None, help="calls timed in part 1 (default 2000, --quick 300)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: shapes / 10, fewer calls, shorter limits")
    parser.add_argument("--shape", action="append", choices=[s for s, _ in PLAN], help="part 3: shape(s) to run (default: all)")
    parser.add_argument("--peer-seconds", type=float, default=None,
                        help="part 3: limit per call of an exec: peer (default 300, --quick 60)")
    parser.add_argument("--python-seconds", type=float, default=None,
                        help="part 3: limit per call of kafka-python (default 30, --quick 5)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    parts = args.part or ["overhead", "adapters"]
    if "overhead" in parts:
        overhead(args.calls or (300 if args.quick else 2000))
    if "large" in parts:
        large(args.quick)
    if "adapters" in parts:
        adapters(args.quick, args.shape, args.peer_seconds or (60 if args.quick else 300),
                 args.python_seconds or (5 if args.quick else 30))
    print(f"\n{time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
