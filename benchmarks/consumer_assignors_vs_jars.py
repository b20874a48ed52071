"""The server-side (KIP-848) ports diffed against Kafka's group-coordinator jars, on many random groups.

    .venv/bin/python benchmarks/consumer_assignors_vs_jars.py                    # 3,000 groups, every pair below
    .venv/bin/python benchmarks/consumer_assignors_vs_jars.py --groups 50000 --seed 7 --examples 2
    .venv/bin/python benchmarks/consumer_assignors_vs_jars.py --pairs uniform@4.0.0=uniform@4.0.0

Each pair PORT=NAME@VERSION runs registry assignor PORT and ``kafka-java:NAME@VERSION`` (the
peers/kafka-java-coordinator harness, Maven-built once and cached) on the same groups of
tests/consumer_groups.py and counts the groups whose new targets differ in any member (a throw
counts as an outcome: both must throw the same Java exception). One line per pair, then up to
``--examples`` differing groups as scenario documents. Exit 1 when any pair differs, else 0.
The test suite runs the same diff on 1,000 groups (tests/test_consumer_assignors_vs_jars.py).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.consumer_groups import random_group  # noqa: E402

DEFAULT_PAIRS = (
    "uniform=uniform@4.4.0",
    "consumer-range=consumer-range@4.4.0",
    "uniform=uniform@4.0.1",
    "uniform@4.0.0=uniform@4.0.0",
    "uniform@3.9.1=uniform@3.9.1",
)


def _outcome(call, scenario):
    from stickyproof.errors import AssignorFailure

    try:
        return call(scenario)
    except AssignorFailure as exc:
        return ("raised", exc.kafka_exception)


def main(argv: list[str] | None = None) -> int:
    from stickyproof.assignors.consumer import assign_consumer_group
    from stickyproof.model import scenario_to_dict
    from stickyproof.peers.kafka_java_coordinator import coordinator_assignor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=3000)  # the ServerSideRelease records cite this run
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--examples", type=int, default=1)
    parser.add_argument("--pairs", nargs="+", default=list(DEFAULT_PAIRS), help="PORT=NAME@VERSION")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    groups = [random_group(rng) for _ in range(args.groups)]
    failed = False
    for pair in args.pairs:
        port, _, jar_name = pair.partition("=")
        name, _, version = jar_name.partition("@")
        jar = coordinator_assignor(name, version or None)
        started = time.monotonic()
        differ = []
        try:
            for scenario in groups:
                if _outcome(lambda s: assign_consumer_group(s, port), scenario) != _outcome(jar, scenario):
                    differ.append(scenario)
        finally:
            jar.close()
        failed |= bool(differ)
        print(f"{port:>16} vs kafka-java:{jar_name:<24} {len(groups)} groups  {len(differ)} differ  "
              f"{time.monotonic() - started:.1f} s")
        for scenario in differ[: args.examples]:
            print("  " + json.dumps(scenario_to_dict(scenario), separators=(",", ":")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
