"""Each ``Release`` record diffed against the kafka-clients jar it names, on a few hundred inputs.

    .venv/bin/python benchmarks/releases_vs_jars.py                       # 150 sampler groups, 150 history rebalances
    .venv/bin/python benchmarks/releases_vs_jars.py --sampler 400 --histories 400 --releases sticky@2.2
    .venv/bin/python benchmarks/releases_vs_jars.py --examples 5
    .venv/bin/python benchmarks/releases_vs_jars.py --releases sticky --against 3.6.2 3.7.2 --examples 1

For each record with ``verified_against`` (src/stickyproof/assignors/releases.py), the Kafka cases,
the bundled scenarios, ``--sampler`` sampler groups and ``--histories`` history rebalances go through
the leader path twice, with the record and with ``kafka-java:NAME@<its jar>`` led as the record
(tests/releases_vs_jars.py says how). Prints one line per record (inputs by kind, agreement, time),
then up to ``--examples`` disagreements per record with the group. The first run builds each jar's
harness (Maven, about half a minute each); later runs reuse the cache. At the defaults, over every
record, it also checks each record's ``verified_inputs`` / ``verified_agreeing`` against what it
measured, and exits 2 naming the record when they differ; else exit 1 when any record disagrees
with its jar (each disagreement is explained in the record's docstring), 0 when none does.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.releases_vs_jars import diff_release, verified_releases  # noqa: E402

DEFAULT_GROUPS = 150
"""Sampler groups and history rebalances per record: the counts every record's ``verified_inputs`` was measured with."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sampler", type=int, default=DEFAULT_GROUPS, help=f"sampler groups per record (default {DEFAULT_GROUPS})")
    parser.add_argument("--histories", type=int, default=DEFAULT_GROUPS,
                        help=f"history rebalances per record (default {DEFAULT_GROUPS})")
    parser.add_argument("--releases", nargs="*", help="record names (default: every record with verified_against)")
    parser.add_argument("--examples", type=int, default=2, help="disagreements printed per record (default 2)")
    parser.add_argument("--against", nargs="+", metavar="VERSION",
                        help="diff each record against these kafka-clients versions instead of its own jar "
                        "(which release lines behave as a record); no count check")
    args = parser.parse_args()
    releases = [r for r in verified_releases() if not args.releases or r.name in args.releases]
    args.releases_given = bool(args.releases)
    failed = stale = False
    if args.against:
        from stickyproof.errors import UnknownAssignor

        for release in releases:
            for version in args.against:
                started = time.perf_counter()
                try:
                    diff = diff_release(release, sampler=args.sampler, histories=args.histories,
                                        grade_differences=False, jar=version)
                except UnknownAssignor as exc:
                    print(f"{release.name} vs kafka-clients {version}: {exc}", flush=True)
                    continue
                print(f"{diff.line()}; {time.perf_counter() - started:.1f} s", flush=True)
                for example in diff.examples(args.examples):
                    print("  " + example, flush=True)
        return 0
    for release in releases:
        started = time.perf_counter()
        diff = diff_release(release, sampler=args.sampler, histories=args.histories)
        print(f"{diff.line()}; {time.perf_counter() - started:.1f} s", flush=True)
        agreeing = diff.total - len(diff.differ)
        if (args.sampler, args.histories) == (DEFAULT_GROUPS, DEFAULT_GROUPS) and not args.releases_given:
            stated = (release.verified_inputs, release.verified_agreeing)
            if stated != (diff.total, agreeing):
                print(f"  the record states {stated[1]} of {stated[0]}: update verified_inputs={diff.total}, "
                      f"verified_agreeing={agreeing} and its docstring", flush=True)
                stale = True
        for example in diff.examples(args.examples):
            print("  " + example, flush=True)
        failed |= bool(diff.differ)
    if stale:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
