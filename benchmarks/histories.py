"""Histories per second, by scale and engine: the stepper against the tick simulator (models/protocol.md §9).

    .venv/bin/python benchmarks/histories.py                               # small and medium, both engines
    .venv/bin/python benchmarks/histories.py --scales large --count 3
    .venv/bin/python benchmarks/histories.py --scales production --count 1 --engines stepper
    .venv/bin/python benchmarks/histories.py --scales mix --count 200 --assignors all --engines stepper

Each line runs histories ``0 .. count-1`` of ``--seed`` at one scale with one engine and one assignor,
one after another in this process, and prints histories per second, rebalances (leader steps), the
mean seconds per rebalance, and how much of the time the leader path took (``run_leader``: the
subscriptions encoded and decoded at each member's version, the assignor, the R39 check) against
the rest (the protocol, the monitors, the history measures). ``--compare`` also checks that both
engines gave the same records (what tests/test_histories.py asserts on small histories).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import stickyproof.group.member as member_module
from stickyproof.assignors.registry import BUILTIN_NAMES
from stickyproof.group.stepper import run_history
from stickyproof.scenarios.histories import SCALES, draw_history

_LEADER = [0.0]
_run_leader = member_module.run_leader


def _timed_run_leader(*args: Any, **kwargs: Any):
    started = time.perf_counter()
    try:
        return _run_leader(*args, **kwargs)
    finally:
        _LEADER[0] += time.perf_counter() - started


member_module.run_leader = _timed_run_leader


def measure(scale: str, engine: str, assignor: str, count: int, seed: int, timeout: float) -> dict[str, Any]:
    _LEADER[0] = 0.0
    runs, seconds, rebalances, assign = 0, 0.0, 0, 0.0
    members = partitions = 0
    records = []
    cpu = 0.0
    for index in range(count):
        history = draw_history(seed, index, scale=scale)
        started = time.process_time()
        run = run_history(history, assignor, engine=engine)
        cpu += time.process_time() - started
        runs += 1
        seconds += run.seconds
        rebalances += len(run.rebalances)
        assign += sum(r.assign_seconds for r in run.rebalances)
        members, partitions = max(members, history.members), max(partitions, history.partitions)
        records.append(run.rebalances)
        if seconds > timeout:
            break
    return {
        "scale": scale, "engine": engine, "assignor": assignor, "histories": runs, "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "histories_per_second": round(runs / seconds, 3) if seconds else None, "rebalances": rebalances,
        "seconds_per_rebalance": round(seconds / rebalances, 4) if rebalances else None,
        "leader_seconds": round(_LEADER[0], 2), "assignor_seconds": round(assign, 2),
        "other_seconds": round(seconds - _LEADER[0], 2), "largest_members": members, "largest_partitions": partitions,
        "_records": records,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="small,medium", help=f"comma-separated: mix, {', '.join(SCALES)}")
    parser.add_argument("--engines", default="stepper,simulator")
    parser.add_argument("--assignors", default="cooperative-sticky", help="comma-separated, or all")
    parser.add_argument("--count", type=int, default=None, help="histories per line (default: 100 small, 20 medium, 2 large, 1 production, 200 mix)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1800.0, help="stop a line after this many seconds (reports what ran)")
    parser.add_argument("--compare", action="store_true", help="check that both engines gave the same records")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    defaults = {"small": 100, "medium": 20, "large": 2, "production": 1, "mix": 200}
    assignors = list(BUILTIN_NAMES) if args.assignors == "all" else args.assignors.split(",")
    results = []
    for scale in args.scales.split(","):
        for assignor in assignors:
            by_engine = {}
            for engine in args.engines.split(","):
                r = measure(scale, engine, assignor, args.count or defaults[scale], args.seed, args.timeout)
                by_engine[engine] = r.pop("_records")
                results.append(r)
                if not args.json:
                    print(f"{scale:10s} {engine:9s} {assignor:24s} {r['histories']:4d} histories {r['seconds']:8.1f} s "
                          f"(cpu {r['cpu_seconds']:.1f} s) "
                          f"{r['histories_per_second'] or 0:8.3f}/s  {r['rebalances']:5d} rebalances "
                          f"{r['seconds_per_rebalance'] or 0:7.3f} s each (leader path {r['leader_seconds']:.1f} s, "
                          f"assignor {r['assignor_seconds']:.1f} s, rest {r['other_seconds']:.1f} s)", flush=True)
            if args.compare and len(by_engine) == 2:
                a, b = by_engine.values()
                n = min(len(a), len(b))
                same = a[:n] == b[:n]
                print(f"{'':10s} engines agree on {n} histories: {same}", flush=True)
                if not same:
                    return 1
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
