"""The simulator against Kafka's real coordinator on many histories, one broker for all (docs/live.md).

    .venv/bin/python benchmarks/live_compare.py                         # the bundled scenarios a live run takes
    .venv/bin/python benchmarks/live_compare.py --histories 12 --assignor cooperative-sticky
    .venv/bin/python benchmarks/live_compare.py --only history-0-4 --verbose

Starts one broker (``stickyproof.live.broker.running_broker``), runs each history with Java members
and the simulator as ``stickyproof live HISTORY --compare`` does, and prints one line per history:
the steps that agree, the timing-dependent ones (excluded, with the reason in ``--verbose``), the
disagreements, the settled assignment's verdict and the run's seconds. The sample of the main job's
histories is the first ``--histories`` small ones of ``--seed`` (``sweep.rows.preset_of(i, "main")``)
that a live run can apply (no rolling restart, fail-over, listener error or stall inside
onJoinPrepare), each run with ``--assignor``. Exit 1 when any history disagrees.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace

from stickyproof.errors import StickyproofError
from stickyproof.group.events import simulation_from_dict
from stickyproof.group.runner import resolve_simulation
from stickyproof.live.broker import running_broker
from stickyproof.live.compare import check_comparable, compare_run, joins_as_members, render_compare
from stickyproof.live.run import LiveEntry, LiveSettings, check_live, run_live
from stickyproof.model import TopicPartition
from stickyproof.scenarios import named
from stickyproof.sweep.rows import history_document, preset_of


def _bundled(settings: LiveSettings):
    for name in named.names():
        scenario, schedule, _, _, _ = resolve_simulation(name)
        if len(scenario.members) > 12:
            yield name, None, None, "too large for a live run (members are JVMs)"
            continue
        try:
            check_live(scenario, schedule, settings)
            check_comparable(scenario, schedule, settings)
        except StickyproofError as exc:
            yield name, None, None, str(exc)
            continue
        yield name, scenario, schedule, ""


def _sampled(seed: int, count: int, assignor: str, settings: LiveSettings):
    found, index = 0, 1
    while found < count and index < 10_000:
        if preset_of(index, "main") == "small":
            sim = simulation_from_dict(history_document(seed, index, "small", assignor))
            scenario, schedule = joins_as_members(sim.scenario, sim.schedule)
            try:
                check_live(scenario, schedule, settings)
                check_comparable(scenario, schedule, settings)
            except StickyproofError:
                index += 1
                continue
            found += 1
            yield sim.name, scenario, schedule, ""
        index += 1


def _loaded(doc: dict) -> SimpleNamespace:
    """What the comparison reads of a kept live run: its name, timeline, settled assignment, verdicts."""
    def tps(pairs):
        return tuple(TopicPartition(t, p) for t, p in pairs)

    timeline = tuple(LiveEntry(e["at_ms"], e["member"], e["what"], tps(e.get("partitions", ())), e.get("generation"),
                               e.get("detail", "")) for e in doc["timeline"])
    settled = tuple(sorted((m, tps(p)) for m, p in doc["assignment"].items()))
    return SimpleNamespace(name=doc["name"], timeline=timeline, settled=settled, ok=doc["ok"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--histories", type=int, default=0, help="how many of the main job's small histories (default 0)")
    p.add_argument("--no-bundled", action="store_true", help="skip the bundled scenarios")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--assignor", default="cooperative-sticky", help="the sampled histories' assignor (default cooperative-sticky)")
    p.add_argument("--tick-ms", type=int, default=500)
    p.add_argument("--only", action="append", default=[], help="run only this history (repeatable)")
    p.add_argument("--verbose", action="store_true", help="print each comparison in full")
    p.add_argument("--save", metavar="DIR", help="keep each live run (stickyproof.live/1 JSON) in DIR")
    p.add_argument("--load", metavar="DIR", help="compare the live runs kept in DIR again, without a broker")
    args = p.parse_args(argv)
    bundled = LiveSettings(tick_ms=args.tick_ms)
    sampled = LiveSettings(tick_ms=args.tick_ms, assignor=args.assignor)
    todo = []
    if not args.no_bundled:
        todo += [(n, s, h, why, bundled) for n, s, h, why in _bundled(bundled)]
    if args.histories:
        todo += [(n, s, h, why, sampled) for n, s, h, why in _sampled(args.seed, args.histories, args.assignor, sampled)]
    if args.only:
        todo = [t for t in todo if t[0] in args.only]
    failed = 0
    with (nullcontext() if args.load else running_broker()) as broker:
        if broker is not None:
            print(f"broker up in {broker.start_seconds:.1f} s", flush=True)
        for name, scenario, schedule, why, settings in todo:
            if scenario is None:
                print(f"{name:<36} skipped: {why}", flush=True)
                continue
            started = time.monotonic()
            if args.load:
                path = Path(args.load) / f"{name}.json"
                if not path.exists():
                    continue
                live = _loaded(json.loads(path.read_text()))
            else:
                with running_broker(bootstrap=broker.bootstrap) as attached:  # attached: the run's topics get a prefix
                    live = run_live(scenario, schedule, broker=attached, name=name, settings=settings)
                if args.save:
                    Path(args.save).mkdir(parents=True, exist_ok=True)
                    (Path(args.save) / f"{name}.json").write_text(json.dumps(live.to_dict()))
            result = compare_run(scenario, schedule, live, settings)
            counts = {v: sum(1 for s in result.steps if s.verdict == v) for v in ("agree", "timing", "disagree")}
            failed += not result.agrees or not live.ok
            print(f"{name:<36} {'AGREE' if result.agrees else 'DISAGREE':<8} steps {counts['agree']} agree, "
                  f"{counts['timing']} timing, {counts['disagree']} disagree; settled {result.final}; "
                  f"monitors {'ok' if live.ok else 'FAIL'}; {time.monotonic() - started:.1f} s", flush=True)
            if args.verbose or not result.agrees:
                sys.stdout.write(render_compare(result))
                print(flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
