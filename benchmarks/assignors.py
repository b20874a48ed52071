"""Time stickyproof's assignors (and kafka-python's, where installed) on the scale shapes of issue 3.

    python benchmarks/assignors.py                     every shape, every assignor
    python benchmarks/assignors.py --shape uniform-fresh --assignor range
    python benchmarks/assignors.py --quick             the same shapes scaled down (members and partitions / 10)

Each (shape, assignor, implementation) runs in its own subprocess, so the peak memory reported is that
run's alone: ``peak MB`` is the process's peak RSS, ``+MB`` how much the assignor call raised it above
what building the group had already reached. The assignor is timed directly: the ``GroupSubscription``
(or kafka-python's member list) is built once, outside the timing; ``first`` is the first call in the
process, ``warm`` a second call on the same input. Rejoin shapes first run a fresh round (untimed) with
the same assignor and feed each member's result back as owned partitions (generation 1; the JMH
INCREMENTAL shape uses generation -1 and adds one new member, as Kafka's ClientSideAssignorBenchmark).

kafka-python is imported lazily (``pip install kafka-python``); its assignors get a stand-in cluster
metadata object built offline and run under a 120 s limit (``--peer-timeout``). ``ratio`` is
kafka-python's time over stickyproof's. Figures are wall-clock on a shared machine: run under ``nice``
and read them as orders of magnitude.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")


@dataclass(frozen=True)
class Shape:
    """A group: ``members`` members, ``topics`` x ``partitions`` partitions, who subscribes to what, which round is timed."""

    name: str
    members: int
    topics: int
    partitions: int
    subscription: str  # uniform | last-member-one-topic | halves
    round: str  # fresh | rejoin | incremental
    assignors: tuple[str, ...] = ASSIGNORS
    note: str = ""

    def scaled(self, quick: bool) -> "Shape":
        if not quick:
            return self
        return Shape(
            self.name, max(2, self.members // 10), max(1, self.topics // 10 if self.topics >= 20 else self.topics),
            max(1, self.partitions // 10 if self.topics < 20 else self.partitions), self.subscription, self.round,
            self.assignors, self.note,
        )


SHAPES = {
    s.name: s
    for s in (
        Shape("uniform-fresh", 2000, 500, 2000, "uniform", "fresh", note="AbstractStickyAssignorTest large uniform, round 1"),
        Shape("uniform-rejoin", 2000, 500, 2000, "uniform", "rejoin", note="round 2: members 1.. own their result, member 0 nothing"),
        Shape("kip615-2100", 2100, 1, 2100, "uniform", "fresh", note="2,100 members x 2,100 partitions, one topic"),
        Shape("jmh-full", 10000, 1000, 500, "uniform", "fresh", note="ClientSideAssignorBenchmark FULL, 10,000 x 500,000"),
        Shape("jmh-incremental", 10000, 1000, 500, "uniform", "incremental",
              note="INCREMENTAL: 9,999 members' result fed back (generation -1), one member added"),
        Shape("halves-fresh", 500, 100, 200, "halves", "fresh", note="member i mod 4 = 0 on the first 50 topics, others the last 50"),
        Shape("halves-rejoin", 500, 100, 200, "halves", "rejoin"),
        Shape("nonequal-fresh", 2000, 500, 2000, "last-member-one-topic", "fresh", note="the last member on the first topic only"),
        Shape("nonequal-rejoin", 2000, 500, 2000, "last-member-one-topic", "rejoin"),
        Shape("range-rr-1m", 10000, 10, 100000, "uniform", "fresh", ("range", "roundrobin"),
              note="1,000,000 partitions (10 topics) x 10,000 members"),
    )
}


def _topic_names(shape: Shape) -> list[str]:
    width = len(str(shape.topics - 1))
    return [f"t{i:0{width}d}" for i in range(shape.topics)]


def _member_names(count: int) -> list[str]:
    width = len(str(count - 1))
    return [f"c{i:0{width}d}" for i in range(count)]


def _subscriptions(shape: Shape, members: list[str], topics: list[str]) -> list[tuple[str, ...]]:
    everything = tuple(topics)
    if shape.subscription == "uniform":
        return [everything] * len(members)
    if shape.subscription == "last-member-one-topic":
        return [everything] * (len(members) - 1) + [(topics[0],)]
    half = len(topics) // 2
    first, second = tuple(topics[:half]), tuple(topics[half:])
    return [first if i % 4 == 0 else second for i in range(len(members))]


# ------------------------------------------------------------------------------------------
# stickyproof side


def _stickyproof_runner(shape: Shape, assignor: str) -> tuple[Callable[[], object], Callable[[], object]]:
    """(prepare, call): prepare builds the timed input (running the untimed first round if needed)."""
    from stickyproof.lookup import get_assignor
    from stickyproof.assignors.base import COOPERATIVE, EAGER, GroupSubscription, Subscription
    from stickyproof.model import Topic

    info = get_assignor(assignor)
    topics = _topic_names(shape)
    metadata = {t: Topic(t, shape.partitions) for t in topics}
    protocol = COOPERATIVE if COOPERATIVE in info.protocols else EAGER
    count = shape.members - 1 if shape.round == "incremental" else shape.members
    names = _member_names(shape.members)
    subs = _subscriptions(shape, names, topics)

    def fresh(n: int) -> GroupSubscription:
        return GroupSubscription(metadata, tuple(Subscription(names[i], subs[i]) for i in range(n)), protocol, True)

    state: dict[str, object] = {}

    def prepare() -> None:
        group = fresh(count)
        if shape.round != "fresh":
            first = info.fn(group).assignment
            generation = -1 if shape.round == "incremental" else 1
            members = []
            for i in range(shape.members):
                owned = tuple(first.get(names[i], ())) if (shape.round == "incremental" or i > 0) else ()
                members.append(Subscription(names[i], subs[i], owned=owned, generation=generation if generation >= 0 else None))
            group = GroupSubscription(metadata, tuple(members), protocol, True)
        state["group"] = group

    return prepare, lambda: info.fn(state["group"])


# ------------------------------------------------------------------------------------------
# kafka-python side


class _Cluster:
    """Offline stand-in for kafka-python's ClusterMetadata: the assignors read topics() and partitions_for_topic()."""

    def __init__(self, partitions: dict[str, int]):
        self._partitions = {t: set(range(n)) for t, n in partitions.items()}

    def topics(self):
        return set(self._partitions)

    def partitions_for_topic(self, topic: str):
        return self._partitions.get(topic)


def _kafka_python_runner(shape: Shape, assignor: str):
    from types import SimpleNamespace

    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData

    try:
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    except ImportError:  # older kafka-python releases have no cooperative assignor
        CooperativeStickyAssignor = None
    impl = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor(),
        "cooperative-sticky": CooperativeStickyAssignor() if CooperativeStickyAssignor else None,
    }[assignor]
    if impl is None:
        raise ImportError("this kafka-python has no cooperative-sticky assignor")
    topics = _topic_names(shape)
    cluster = _Cluster({t: shape.partitions for t in topics})
    names = _member_names(shape.members)
    subs = _subscriptions(shape, names, topics)
    count = shape.members - 1 if shape.round == "incremental" else shape.members

    def member(i: int, owned: list[tuple[str, int]] | None = None, generation: int = -1):
        by_topic: dict[str, list[int]] = {}
        for t, p in owned or ():
            by_topic.setdefault(t, []).append(p)
        user_data = StickyAssignorUserData(list(by_topic.items()), generation) if owned is not None and assignor == "sticky" else b""
        metadata = SimpleNamespace(
            version=2, topics=list(subs[i]), user_data=user_data, generation_id=generation,
            owned_partitions=[SimpleNamespace(topic=t, partitions=ps) for t, ps in by_topic.items()],
        )
        return SimpleNamespace(member_id=names[i], group_instance_id=None, metadata=metadata)

    state: dict[str, object] = {}

    def prepare() -> None:
        members = [member(i) for i in range(count)]
        if shape.round != "fresh":
            first = impl.assign(cluster, members)
            generation = -1 if shape.round == "incremental" else 1
            members = []
            for i in range(shape.members):
                got = first.get(names[i])
                owned = [(t, p) for t, ps in got.assigned_partitions for p in ps] if got is not None else []
                keep = shape.round == "incremental" or i > 0
                members.append(member(i, owned if keep else None, generation))
        state["members"] = members

    return prepare, lambda: impl.assign(cluster, state["members"])


# ------------------------------------------------------------------------------------------
# child: one measurement


def _child(shape_name: str, assignor: str, impl: str, quick: bool) -> dict:
    shape = SHAPES[shape_name].scaled(quick)
    runner = _stickyproof_runner if impl == "stickyproof" else _kafka_python_runner
    prepare, call = runner(shape, assignor)
    prepare()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    result = call()
    first = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del result
    started = time.perf_counter()
    result = call()
    warm = time.perf_counter() - started
    return {"first": first, "warm": warm, "peak_mb": after, "delta_mb": after - before}


def _measure(shape: str, assignor: str, impl: str, quick: bool, timeout: float) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", shape, assignor, impl] + (["--quick"] if quick else [])
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout:.0f} s"}
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        return {"error": ("raised " + lines[-1] if lines else f"exit {done.returncode}")[:100]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _have_kafka_python() -> bool:
    try:
        import kafka.coordinator.assignors.range  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="shape(s) to run (default: all)")
    parser.add_argument("--assignor", action="append", choices=ASSIGNORS, help="assignor(s) to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="shapes scaled down by 10 (members and partitions)")
    parser.add_argument("--no-peer", action="store_true", help="skip kafka-python")
    parser.add_argument("--timeout", type=float, default=900, help="limit per stickyproof run, seconds (default 900)")
    parser.add_argument("--peer-timeout", type=float, default=120, help="limit per kafka-python run, seconds (default 120)")
    parser.add_argument("--child", nargs=3, metavar=("SHAPE", "ASSIGNOR", "IMPL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*args.child, args.quick)))
        return 0

    peer = not args.no_peer and _have_kafka_python()
    if not args.no_peer and not peer:
        print("kafka-python is not installed (pip install kafka-python): peer columns skipped\n")
    print("Assignors timed directly: the GroupSubscription is built once, outside the timing; one subprocess per row.")
    header = f"{'shape':<16} {'assignor':<19} {'first s':>8} {'warm s':>8} {'peak MB':>8} {'+MB':>7}"
    if peer:
        header += f"   {'k-python s':>10} {'peak MB':>8} {'ratio':>7}"
    print(header)
    # A peer that ran out of time on a shape is not run again on shapes at least as large (members and partitions).
    peer_gave_up: dict[str, tuple[int, int, str]] = {}
    for name in args.shape or list(SHAPES):
        shape = SHAPES[name].scaled(args.quick)
        print(f"# {name}: {shape.members} members x {shape.topics * shape.partitions} partitions "
              f"({shape.topics} topics), {shape.round}. {shape.note}")
        for assignor in args.assignor or list(shape.assignors):
            if assignor not in shape.assignors:
                continue
            ours = _measure(name, assignor, "stickyproof", args.quick, args.timeout)
            if "error" in ours:
                row = f"{name:<16} {assignor:<19} {ours['error']:>42}"
            else:
                row = (f"{name:<16} {assignor:<19} {ours['first']:>8.3f} {ours['warm']:>8.3f} "
                       f"{ours['peak_mb']:>8.0f} {ours['delta_mb']:>7.0f}")
            size = (shape.members, shape.topics * shape.partitions)
            gave_up = peer_gave_up.get(assignor)
            if peer and gave_up and size[0] >= gave_up[0] and size[1] >= gave_up[1]:
                row += f"   not run: timed out on {gave_up[2]}"
            elif peer:
                theirs = _measure(name, assignor, "kafka-python", args.quick, args.peer_timeout)
                if theirs.get("error", "").startswith("did not finish"):
                    peer_gave_up[assignor] = (*size, name)
                if "error" in theirs:
                    row += f"   {theirs['error']}"
                else:
                    ratio = theirs["first"] / ours["first"] if "first" in ours and ours["first"] > 0 else float("nan")
                    row += f"   {theirs['first']:>10.3f} {theirs['peak_mb']:>8.0f} {ratio:>6.1f}x"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
