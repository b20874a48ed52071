"""Time ``check_assignment`` (every invariant, Z3) on assignments of 100,000 partitions.

Target (issue 4): an assignment of 100,000 partitions is checked in <= 10 s. Prints one line
per shape: members, topics, partitions, seconds, verdict. Run once, under nice:

    nice .venv/bin/python benchmarks/invariants.py [--partitions 100000] [--members 1000] [--topics 100]

Shapes (all deterministic, seeded):
- uniform: every member subscribes to every topic; round-robin assignment (valid, balanced).
- heterogeneous: each member subscribes to a seeded random quarter of the topics; a greedy
  least-loaded assignment (valid, but not balance-optimal: an improving chain is found).
- cooperative: one member joins a uniform group whose members own their round-robin share; the
  round keeps every member's claims up to the new quota and withholds the excess (revoking) for
  the newcomer, as a sticky cooperative assignor does (valid; balance deferred to the follow-up).
- coop-unsafe: the same round handing the excess to the newcomer at once (cooperative-unsafe).
- coop-reshuffle: worst case, every partition changes owner and is withheld (about 100,000
  revoking entries, every one checked against its member's claims).
"""

from __future__ import annotations

import argparse
import random
import time

from stickyproof.model import Assignment, Member, Scenario, Topic, TopicPartition
from stickyproof.oracle.invariants import check_assignment


def _scenario(members: int, topics: int, per_topic: int, *, subs, protocol="eager", owned=None) -> Scenario:
    width = len(str(max(members, topics) - 1))
    tnames = [f"t{i:0{width}d}" for i in range(topics)]
    mnames = [f"c{i:0{width}d}" for i in range(members)]
    return Scenario(
        topics=tuple(Topic(t, per_topic) for t in tnames),
        members=tuple(
            Member(m, tuple(tnames[j] for j in subs(i)), tuple((owned or {}).get(m, ())), 1 if owned else -1)
            for i, m in enumerate(mnames)
        ),
        protocol=protocol,
        name=f"bench-{members}x{topics}x{per_topic}",
    )


def _round_robin(scenario: Scenario) -> dict[str, list[TopicPartition]]:
    ids = sorted(m.id for m in scenario.members)
    out: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    for i, tp in enumerate(scenario.subscribed_partitions()):
        out[ids[i % len(ids)]].append(tp)
    return out


def _greedy(scenario: Scenario) -> dict[str, list[TopicPartition]]:
    subs: dict[str, list[str]] = {}
    for m in sorted(scenario.members, key=lambda m: m.id):
        for t in m.topics:
            subs.setdefault(t, []).append(m.id)
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in scenario.members}
    for tp in scenario.subscribed_partitions():
        best = min(subs[tp.topic], key=lambda m: (len(out[m]), m))
        out[best].append(tp)
    return out


def _time(name: str, scenario: Scenario, assignment: Assignment) -> None:
    start = time.perf_counter()
    result = check_assignment(scenario, assignment)
    seconds = time.perf_counter() - start
    parts = sum(t.partitions for t in scenario.topics)
    print(
        f"{name:14s} members={len(scenario.members):5d} topics={len(scenario.topics):4d} partitions={parts:7d} "
        f"seconds={seconds:6.2f} valid={result.valid} violated={','.join(result.violated()) or '-'} "
        f"deferred={','.join(result.deferred) or '-'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--members", type=int, default=1_000)
    parser.add_argument("--topics", type=int, default=100)
    args = parser.parse_args()
    per_topic = args.partitions // args.topics
    everything = range(args.topics)

    uniform = _scenario(args.members, args.topics, per_topic, subs=lambda i: everything)
    _time("uniform", uniform, Assignment({m: tuple(v) for m, v in _round_robin(uniform).items()}))

    rng = random.Random(4)
    quarter = {i: sorted(rng.sample(range(args.topics), max(1, args.topics // 4))) for i in range(args.members)}
    hetero = _scenario(args.members, args.topics, per_topic, subs=lambda i: quarter[i])
    _time("heterogeneous", hetero, Assignment({m: tuple(v) for m, v in _greedy(hetero).items()}))

    before = _round_robin(_scenario(args.members - 1, args.topics, per_topic, subs=lambda i: everything))
    coop = _scenario(args.members, args.topics, per_topic, subs=lambda i: everything, protocol="cooperative", owned=before)
    quota = -(-args.partitions // args.members)
    newcomer = max(m.id for m in coop.members)
    kept = {m: tuple(tps[:quota]) for m, tps in before.items()}
    excess = {m: tuple(tps[quota:]) for m, tps in before.items() if len(tps) > quota}
    withheld = Assignment({**kept, newcomer: ()}, excess)
    _time("cooperative", coop, withheld)
    handed = Assignment({**kept, newcomer: tuple(tp for tps in excess.values() for tp in tps)})
    _time("coop-unsafe", coop, handed)

    after = _round_robin(coop)
    claimed_by = {tp: m for m, tps in before.items() for tp in tps}
    assignment, revoking = {}, {}
    for m, tps in after.items():
        assignment[m] = tuple(tp for tp in tps if claimed_by.get(tp) in (None, m))
        for tp in tps:
            if claimed_by.get(tp) not in (None, m):
                revoking.setdefault(claimed_by[tp], []).append(tp)
    _time("coop-reshuffle", coop, Assignment(assignment, {m: tuple(v) for m, v in revoking.items()}))

if __name__ == "__main__":
    main()
