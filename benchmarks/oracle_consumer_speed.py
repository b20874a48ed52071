"""The consumer-group oracle (``solve_consumer``, all four tiers) at Kafka's JMH shapes: seconds and proven, one row per shape.

    .venv/bin/python benchmarks/oracle_consumer_speed.py                      # 10,000 x 500,000 (10 topics), every combination
    .venv/bin/python benchmarks/oracle_consumer_speed.py --members 1000 --ratio 10 --topics 100
    .venv/bin/python benchmarks/oracle_consumer_speed.py --subscription homogeneous --kind full --racks off --profile

The groups are ``benchmarks/server_side.py``'s (``group_doc``: members, buckets, racks as Kafka's
``ServerSideAssignorBenchmark`` sets them up). The incremental shape's current targets are the
``uniform`` port's full answer for ``members - 1`` members (server_side.py takes Kafka's jar's; the
port gives the same targets on these shapes, its ``same`` column); they are built before the clock
starts, so the time is ``solve_consumer`` alone (``ConsumerOptimum.seconds``, wall clock; ``cpu s``
the process's CPU time over the same call, which a machine shared with other jobs inflates less).
Each solve runs in a forked child that unpickles the scenario itself, as a process that read the
group would hold it (a scenario inherited from the parent would be copied page by page as the
child touches it, and that copying would be timed). ``--cache DIR`` keeps the built scenarios
between runs (default: a temporary directory). A table for reading, not a test.
"""

from __future__ import annotations

import argparse
import cProfile
import multiprocessing
import pickle
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_side import Shape, _as_targets, group_doc, shapes  # noqa: E402


def build(shape: Shape, cache: Path) -> Path:
    """The shape's scenario (incremental: with the port's full answer as the current targets), pickled under ``cache``."""
    from stickyproof.assignors.consumer import assign_consumer_group
    from stickyproof.model import scenario_from_dict

    path = cache / f"{shape.label().replace(' ', '_')}.pickle"
    if path.exists():
        return path
    targets = None
    if shape.kind == "incremental":
        base = Shape(shape.members - 1, shape.ratio, shape.topics, shape.subscription, "full", shape.racks)
        base_doc = group_doc(base)
        base_doc["topics"] = group_doc(shape)["topics"]
        targets = _as_targets(assign_consumer_group(scenario_from_dict(base_doc), "uniform"))
    scenario = scenario_from_dict(group_doc(shape, targets))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(scenario, protocol=pickle.HIGHEST_PROTOCOL))
    return path


def _solve(path: Path, profile: int):
    from stickyproof.oracle.consumer import solve_consumer

    scenario = pickle.loads(path.read_bytes())
    cpu = time.process_time()
    if profile:
        prof = cProfile.Profile(time.process_time)
        opt = prof.runcall(solve_consumer, scenario)
        pstats.Stats(prof).sort_stats("tottime").print_stats(profile)
    else:
        opt = solve_consumer(scenario)
    cpu = time.process_time() - cpu
    return opt.seconds, cpu, opt.engine, opt.proven, opt.detail, None if opt.objective is None else opt.objective.to_dict()


def _in_child(fn, *args):
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def body():
        try:
            child.send(fn(*args))
        except Exception as exc:  # one shape's failure should not end the table
            child.send(("error", f"{type(exc).__name__}: {exc}"))
        child.close()

    proc = ctx.Process(target=body)
    proc.start()
    out = parent.recv()
    proc.join()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[10000])
    parser.add_argument("--ratio", type=int, nargs="+", default=[50])
    parser.add_argument("--topics", type=int, nargs="+", default=[10])
    parser.add_argument("--subscription", nargs="+", default=["homogeneous", "heterogeneous"], choices=["homogeneous", "heterogeneous"])
    parser.add_argument("--kind", nargs="+", default=["full", "incremental"], choices=["full", "incremental"])
    parser.add_argument("--racks", nargs="+", default=["off", "on"], choices=["off", "on"])
    parser.add_argument("--repeat", type=int, default=1, help="solve each shape this many times; the best is shown")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's N top functions per shape")
    parser.add_argument("--cache", type=Path, default=None, help="keep the built scenarios here between runs (default: a temporary directory)")
    args = parser.parse_args(argv)
    for flag in ("members", "ratio", "topics", "repeat"):
        if any(v <= 0 for v in ([getattr(args, flag)] if flag == "repeat" else getattr(args, flag))):
            print(f"--{flag}: every value must be positive", file=sys.stderr)
            return 2

    from ortools.graph.python import min_cost_flow  # noqa: F401  imported before the forks: no import in the timings

    cache = args.cache or Path(tempfile.mkdtemp(prefix="oracle-consumer-speed-"))
    try:
        _table(args, cache)
    finally:
        if args.cache is None:
            shutil.rmtree(cache, ignore_errors=True)
    return 0


def _table(args, cache: Path) -> None:
    header = f"{'shape':<44} {'build s':>8} {'oracle s':>9} {'cpu s':>7}  {'engine':<28} proven  objective"
    print(header)
    print("-" * len(header))
    for shape in shapes(args):
        started = time.perf_counter()
        path = build(shape, cache)
        built = time.perf_counter() - started
        runs = [_in_child(_solve, path, args.profile) for _ in range(args.repeat)]
        if any(r[0] == "error" for r in runs):
            print(f"{shape.label():<44} {built:>8.1f} {'-':>9}  {next(r[1] for r in runs if r[0] == 'error')}", flush=True)
            continue
        seconds, cpu, engine, proven, detail, objective = min(runs, key=lambda r: r[0])
        verdict = "yes" if proven else f"NO: {detail}"
        print(f"{shape.label():<44} {built:>8.1f} {seconds:>9.3f} {cpu:>7.3f}  {engine:<28} {verdict:<6}  {objective}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
