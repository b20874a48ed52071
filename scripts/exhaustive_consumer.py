"""Every consumer group up to a small size: the oracle against brute force, the ports against Kafka's jars.

    .venv/bin/python scripts/exhaustive_consumer.py                       # the default bound, 2 workers
    .venv/bin/python scripts/exhaustive_consumer.py --members 2 --partitions 2 --workers 1
    .venv/bin/python scripts/exhaustive_consumer.py --racks --members 2   # members and replicas on racks too
    .venv/bin/python scripts/exhaustive_consumer.py --limit 20000         # the first 20,000 groups only

Outside CI (tests/test_exhaustive_consumer.py runs ``check_groups`` on a few hundred). The groups:
1..``--members`` members ``a, b, c, ...``; ``--topics`` topics ``t0, t1, ...`` of 1..``--partitions``
partitions each; every subscription of every member (any subset of the topics, the empty one
included); every current target (each partition held by no one or by any one member, subscribed or
not: the coordinator hands an assignor targets naming topics a member has since dropped); with
``--racks``, every member on rack ``r0``, ``r1`` or none and every partition's replicas on ``r0`` or
``r1``. Groups are numbered in a fixed order, so a run can be cut (``--limit``, ``--start``) and
repeated exactly.

On each group:

- the oracle (``solve_consumer``, all four tiers) must be proven, place every partition of every
  subscribed topic on one of its subscribers, and reach the lexicographic minimum of (sum of
  squared loads, per-topic spread, -rack-local, -kept) found by trying every assignment of the
  partitions to their subscribers; the objective is recounted here, independently of the oracle's
  own ``consumer_objective``;
- each port (``uniform``, ``consumer-range``) must give exactly the targets Kafka's assignor gives
  (``kafka-java:NAME@VERSION``, one harness process per worker serving all its groups), a throw
  counting as an outcome.

Progress lines go to stderr; the summary (groups, seconds, mismatches by kind, the first few
mismatching groups as scenario documents) to stdout. Exit 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import itertools
import json
import string
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

RACKS = ("r0", "r1")


@dataclass(frozen=True)
class Bound:
    """The enumeration's size limits (see the module docstring)."""

    members: int = 3
    topics: int = 2
    partitions: int = 3
    racks: bool = False


def _families(bound: Bound) -> Iterator[tuple[int, tuple[int, ...], tuple[frozenset[int], ...]]]:
    """(member count, partitions per topic, subscriptions), in a fixed order."""
    subsets = [frozenset(c) for k in range(bound.topics + 1) for c in itertools.combinations(range(bound.topics), k)]
    for m in range(1, bound.members + 1):
        for sizes in itertools.product(range(1, bound.partitions + 1), repeat=bound.topics):
            for subs in itertools.product(subsets, repeat=m):
                yield m, sizes, subs


def _family_size(m: int, sizes: tuple[int, ...], bound: Bound) -> int:
    n = (m + 1) ** sum(sizes)
    if bound.racks:
        n *= 3 ** m * 2 ** sum(sizes)
    return n


def count_groups(bound: Bound) -> int:
    """How many groups the bound enumerates."""
    return sum(_family_size(m, sizes, bound) for m, sizes, _ in _families(bound))


def group_docs(bound: Bound, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, dict]]:
    """Groups number ``start`` (inclusive) to ``stop`` (exclusive) of the enumeration, as scenario documents."""
    at = 0
    for m, sizes, subs in _families(bound):
        size = _family_size(m, sizes, bound)
        if at + size <= start:
            at += size
            continue
        if stop is not None and at >= stop:
            return
        parts = [(f"t{t}", p) for t, n in enumerate(sizes) for p in range(n)]
        member_racks = list(itertools.product((None, *RACKS), repeat=m)) if bound.racks else [(None,) * m]
        replica_racks = list(itertools.product(RACKS, repeat=len(parts))) if bound.racks else [None]
        for holders in itertools.product(range(m + 1), repeat=len(parts)):
            for mracks in member_racks:
                for rracks in replica_racks:
                    if at >= start and (stop is None or at < stop):
                        yield at, _doc(m, sizes, subs, holders, mracks, rracks, parts)
                    at += 1
                    if stop is not None and at >= stop:
                        return


def _doc(m, sizes, subs, holders, mracks, rracks, parts) -> dict:
    ids = string.ascii_lowercase[:m]
    topics: dict = {}
    for t, n in enumerate(sizes):
        if rracks is None:
            topics[f"t{t}"] = n
        else:
            topics[f"t{t}"] = {"partitions": n, "racks": [[rracks[parts.index((f"t{t}", p))]] for p in range(n)]}
    members = []
    for i, mid in enumerate(ids):
        owned: dict[str, list[int]] = {}
        for (topic, p), h in zip(parts, holders):
            if h == i + 1:
                owned.setdefault(topic, []).append(p)
        members.append({"id": mid, "topics": [f"t{t}" for t in sorted(subs[i])], "owned": owned, "rack": mracks[i]})
    return {"format": "stickyproof.scenario/1", "name": "exhaustive", "group_protocol": "consumer",
            "topics": topics, "members": members}


def brute_force_key(doc: dict) -> tuple[int, int, int, int] | None:
    """The lexicographic minimum of (sum load^2, sum count^2, -rack local, -kept) over every
    assignment of each subscribed topic's partitions to its subscribers, from the document alone."""
    topics = {t: (v if isinstance(v, int) else v["partitions"]) for t, v in doc["topics"].items()}
    replicas = {t: (None if isinstance(v, int) else v.get("racks")) for t, v in doc["topics"].items()}
    members = doc["members"]
    holder = {(t, p): m["id"] for m in members for t, ps in m["owned"].items() for p in ps}
    rack = {m["id"]: m.get("rack") for m in members}
    choices = []
    for t in sorted(topics):
        subscribers = [m["id"] for m in members if t in m["topics"]]
        if subscribers:
            choices += [((t, p), subscribers) for p in range(topics[t])]
    best = None
    for pick in itertools.product(*(s for _, s in choices)):
        load: dict[str, int] = {}
        count: dict[tuple[str, str], int] = {}
        local = kept = 0
        for ((t, p), _), m in zip(choices, pick):
            load[m] = load.get(m, 0) + 1
            count[t, m] = count.get((t, m), 0) + 1
            r = rack[m]
            local += r is not None and replicas[t] is not None and r in replicas[t][p]
            kept += holder.get((t, p)) == m
        key = (sum(v * v for v in load.values()), sum(v * v for v in count.values()), -local, -kept)
        if best is None or key < best:
            best = key
    return best


def jar_batch(name: str, version: str | None, scenarios: list) -> list:
    """Kafka's ``name`` on every scenario through one harness process, the lines written while the
    answers are read (no round trip per group): each outcome an Assignment or ("raised", exception)."""
    import subprocess
    import threading

    from stickyproof.model import scenario_to_dict
    from stickyproof.peers import builds
    from stickyproof.peers.kafka_java_coordinator import RECIPE, CoordinatorAssignor

    argv = builds.built(RECIPE, version or builds.default_version("kafka-java"))["assignors"][name]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def write() -> None:
        for scenario in scenarios:
            proc.stdin.write(json.dumps(scenario_to_dict(scenario), separators=(",", ":")) + "\n")
        proc.stdin.close()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    out = []
    try:
        for _ in scenarios:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"kafka-java:{name}: the harness ended after {len(out)} of {len(scenarios)} answers")
            answer = json.loads(line)
            out.append(("raised", answer["error"].get("exception")) if "error" in answer else CoordinatorAssignor._assignment(answer))
    finally:
        writer.join()
        proc.wait()
    return out


def _outcome(call, scenario):
    from stickyproof.errors import AssignorFailure

    try:
        return call(scenario)
    except AssignorFailure as exc:
        return ("raised", exc.kafka_exception)


def check_groups(bound: Bound, start: int, stop: int, *, assignors=("uniform", "consumer-range"),
                 version: str | None = None) -> dict:
    """Check groups ``start..stop`` of the enumeration: the oracle against brute force and each
    port against Kafka's jar (one harness process per assignor for the whole range, ``jar_batch``).
    Returns counts and the first mismatches (kind, group number, document)."""
    from stickyproof.assignors.consumer import assign_consumer_group
    from stickyproof.model import scenario_from_dict
    from stickyproof.oracle.consumer import TIERS, assignable_partitions, solve_consumer, subscribers_of
    out = {"groups": 0, "oracle": 0, "mismatches": {}, "examples": []}

    def miss(kind: str, number: int, doc: dict, detail: str) -> None:
        out["mismatches"][kind] = out["mismatches"].get(kind, 0) + 1
        if len(out["examples"]) < 5:
            out["examples"].append({"kind": kind, "group": number, "detail": detail, "doc": doc})

    groups = [(number, doc, scenario_from_dict(doc)) for number, doc in group_docs(bound, start, stop)]
    java = {name: jar_batch(name, version, [s for _, _, s in groups]) for name in assignors}
    for at, (number, doc, scenario) in enumerate(groups):
        out["groups"] += 1
        best = brute_force_key(doc)
        opt = solve_consumer(scenario)
        out["oracle"] += 1
        if not opt.proven:
            miss("oracle-not-proven", number, doc, opt.detail)
        else:
            subs = subscribers_of(scenario)
            placed = {tp: m for m, tps in opt.assignment.assignment.items() for tp in tps}
            wrong = [tp for tp in assignable_partitions(scenario) if placed.get(tp) not in subs[tp.topic]]
            key = opt.objective.key(TIERS)
            if wrong or len(placed) != len(assignable_partitions(scenario)):
                miss("oracle-invalid", number, doc, f"misplaced {wrong}")
            elif best is not None and key != best:
                miss("oracle-not-optimal", number, doc, f"oracle {key}, brute force {best}")
        for name in assignors:
            port = _outcome(lambda s: assign_consumer_group(s, name), scenario)
            if port != java[name][at]:
                miss(f"{name}-differs", number, doc, f"port {port}, java {java[name][at]}")
    return out


def _worker(args):
    bound, start, stop, assignors, version = args
    return start, stop, check_groups(bound, start, stop, assignors=assignors, version=version)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--topics", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=3, help="partitions per topic, at most")
    parser.add_argument("--racks", action="store_true")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="check at most this many groups")
    parser.add_argument("--chunk", type=int, default=5000, help="groups per task")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--assignors", nargs="*", default=["uniform", "consumer-range"])
    parser.add_argument("--version", default=None, help="the Kafka release of the jars (default: the kafka-java pin)")
    args = parser.parse_args(argv)
    for flag in ("members", "topics", "partitions", "chunk", "workers"):
        if getattr(args, flag) < 1:
            print(f"--{flag}: must be at least 1", file=sys.stderr)
            return 2
    bound = Bound(args.members, args.topics, args.partitions, args.racks)
    total = count_groups(bound)
    stop = total if args.limit is None else min(total, args.start + args.limit)
    print(f"{total:,} groups in the bound {bound}; checking {args.start:,}..{stop:,} with {args.workers} workers",
          file=sys.stderr, flush=True)
    tasks = [(bound, s, min(s + args.chunk, stop), tuple(args.assignors), args.version) for s in range(args.start, stop, args.chunk)]
    started = time.monotonic()
    summary = {"groups": 0, "oracle": 0, "mismatches": {}, "examples": []}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for s, e, part in pool.map(_worker, tasks):
            summary["groups"] += part["groups"]
            summary["oracle"] += part["oracle"]
            for k, v in part["mismatches"].items():
                summary["mismatches"][k] = summary["mismatches"].get(k, 0) + v
            summary["examples"] += part["examples"][: max(0, 5 - len(summary["examples"]))]
            elapsed = time.monotonic() - started
            print(f"  {s:,}..{e:,}  {summary['groups']:,} checked  {sum(summary['mismatches'].values())} mismatches  "
                  f"{elapsed:.0f} s", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - started
    print(f"bound {bound}: {total:,} groups; checked {summary['groups']:,} (numbers {args.start:,}..{stop:,}) in {elapsed:.0f} s "
          f"with {args.workers} workers; oracle vs brute force on {summary['oracle']:,}; ports vs kafka-java "
          f"({', '.join(args.assignors) or 'none'}) on {summary['groups']:,}")
    print(f"mismatches: {json.dumps(summary['mismatches']) if summary['mismatches'] else 'none'}")
    for ex in summary["examples"]:
        print(f"  {ex['kind']} group {ex['group']}: {ex['detail']}\n    {json.dumps(ex['doc'], separators=(',', ':'))}")
    return 1 if summary["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
