"""The KIP-848 simulator against Kafka's real coordinator, member epochs step by step, one broker for all (docs/live.md).

    .venv/bin/python benchmarks/live_epochs.py                          # the bundled histories the comparison takes
    .venv/bin/python benchmarks/live_epochs.py --histories 4 --save DIR  # and the first 4 small sampled ones
    .venv/bin/python benchmarks/live_epochs.py --load DIR --verbose      # compare kept runs again, no broker

Runs each history as ``stickyproof live HISTORY --group-protocol consumer --clients java --compare``
does (Java members, the broker's ``uniform``), and prints one line per history: the targets'
checkpoints (agree, timing, disagree) and the members' epoch steps (agree, missed, timing, disagree).
``--save`` keeps each live run (a pickle of the ``LiveResult``: the comparison reads all of it) so
``--load`` compares it again with changed comparison code. Exit 1 when any history disagrees.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from stickyproof.errors import StickyproofError
from stickyproof.group.events import simulation_from_dict
from stickyproof.group.runner import resolve_simulation
from stickyproof.live.broker import running_broker
from stickyproof.live.compare import check_comparable, joins_as_members, render_compare
from stickyproof.live.compare_consumer import compare_consumer_run
from stickyproof.live.epochs import render_epochs
from stickyproof.live.run import LiveSettings, check_live, run_live
from stickyproof.scenarios import named
from stickyproof.sweep.rows import history_document, preset_of


def _takes(scenario, schedule, settings: LiveSettings) -> str:
    if len(scenario.members) > 12:
        return "too large for a live run (members are JVMs)"
    try:
        check_live(scenario, schedule, settings)
        check_comparable(scenario, schedule, settings)
    except StickyproofError as exc:
        return str(exc)
    return ""


def _bundled(settings: LiveSettings):
    for name in named.names():
        scenario, schedule, _, _, _ = resolve_simulation(name)
        scenario, schedule = joins_as_members(scenario, schedule)
        yield name, scenario, schedule, _takes(scenario, schedule, settings)


def _sampled(seed: int, count: int, settings: LiveSettings):
    found, index = 0, 1
    while found < count and index < 10_000:
        if preset_of(index, "main") == "small":
            sim = simulation_from_dict(history_document(seed, index, "small", "cooperative-sticky"))
            scenario, schedule = joins_as_members(sim.scenario, sim.schedule)
            if not _takes(scenario, schedule, settings):
                found += 1
                yield sim.name, scenario, schedule, ""
        index += 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--histories", type=int, default=0, help="how many of the main job's small histories (default 0)")
    p.add_argument("--no-bundled", action="store_true", help="skip the bundled scenarios")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tick-ms", type=int, default=500)
    p.add_argument("--only", action="append", default=[], help="run only this history (repeatable)")
    p.add_argument("--verbose", action="store_true", help="print each comparison in full")
    p.add_argument("--save", metavar="DIR", help="keep each live run (a pickled LiveResult) in DIR")
    p.add_argument("--load", metavar="DIR", help="compare the live runs kept in DIR again, without a broker")
    args = p.parse_args(argv)
    settings = LiveSettings(tick_ms=args.tick_ms, group_protocol="consumer", assignor="uniform")
    todo = [] if args.no_bundled else list(_bundled(settings))
    if args.histories:
        todo += list(_sampled(args.seed, args.histories, settings))
    if args.only:
        todo = [t for t in todo if t[0] in args.only]
    failed = 0
    # KIP-1263's batching and offload off, as `live --compare` starts its broker (live.broker.ASSIGNMENT_AT_ONCE)
    with (nullcontext() if args.load else running_broker(assignment_at_once=True)) as broker:
        if broker is not None:
            print(f"broker up in {broker.start_seconds:.1f} s", flush=True)
        for name, scenario, schedule, why in todo:
            if why:
                print(f"{name:<36} skipped: {why}", flush=True)
                continue
            started = time.monotonic()
            if args.load:
                path = Path(args.load) / f"{name}.pickle"
                if not path.exists():
                    continue
                live = pickle.loads(path.read_bytes())
            else:
                with running_broker(bootstrap=broker.bootstrap) as attached:  # attached: the run's topics get a prefix
                    live = run_live(scenario, schedule, broker=attached, name=name, settings=settings)
                if args.save:
                    Path(args.save).mkdir(parents=True, exist_ok=True)
                    (Path(args.save) / f"{name}.pickle").write_bytes(pickle.dumps(live))
            try:
                result = compare_consumer_run(scenario, schedule, live, settings)
            except StickyproofError as exc:  # the comparison could not run the history: a failure, said
                failed += 1
                print(f"{name:<36} FAILED   the comparison could not run: {type(exc).__name__}: {exc}", flush=True)
                continue
            targets = {v: sum(1 for s in result.steps if s.verdict == v) for v in ("agree", "timing", "disagree")}
            e = result.epochs
            steps = "no member states" if e is None else ", ".join(f"{e.count(v)} {v}" for v in ("agree", "missed", "timing", "disagree"))
            failed += not result.agrees or not live.ok
            print(f"{name:<36} {'AGREE' if result.agrees else 'DISAGREE':<8} targets {targets['agree']} agree, "
                  f"{targets['timing']} timing, {targets['disagree']} disagree; epoch steps {steps}; "
                  f"monitors {'ok' if live.ok else 'FAIL'}; live run {live.seconds:.1f} s "
                  f"({time.monotonic() - started:.1f} s)", flush=True)
            if args.verbose or not result.agrees:
                sys.stdout.write(render_compare(result))
                if e is not None:
                    sys.stdout.write(render_epochs(e))
                print(flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
