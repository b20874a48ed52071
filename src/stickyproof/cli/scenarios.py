"""``scenarios list|show|sample``: the bundled scenarios and the seeded sampler."""

from __future__ import annotations

import argparse
import sys

from ._common import Parser, print_json


def _cmd_scenarios_list(args: argparse.Namespace) -> int:
    from ..scenarios import named

    rows = named.table()
    width = max(len(r["name"]) for r in rows)
    print(f"{'name':<{width}}  {'members':>7}  {'partitions':>10}  description")
    for r in rows:
        print(f"{r['name']:<{width}}  {r['members']:>7}  {r['partitions']:>10}  {r['summary']}")
    return 0


def _cmd_scenarios_show(args: argparse.Namespace) -> int:
    from ..model import scenario_to_dict
    from ..scenarios import named

    print_json(scenario_to_dict(named.get(args.name)))
    return 0


def _cmd_scenarios_sample(args: argparse.Namespace) -> int:
    from ..model import scenario_to_dict
    from ..scenarios import Space, sample

    print_json(scenario_to_dict(sample(args.seed, args.index, Space.from_overrides(args.space))))
    return 0


def add_scenarios(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scenarios",
        help="list, show and sample scenarios of the scenario space",
        description="The bundled named scenarios (from the KIPs and KAFKA_SEMANTICS.md) and the seeded "
        "sampler over the scenario space. A bundled name is accepted wherever a scenario file is.",
    )
    p.set_defaults(func=lambda _args: p.print_help(sys.stderr) or 2)
    actions = p.add_subparsers(title="actions", metavar="ACTION", parser_class=Parser)
    ls = actions.add_parser("list", help="table of bundled scenarios: name, members, partitions, description")
    ls.set_defaults(func=_cmd_scenarios_list)
    show = actions.add_parser("show", help="write a bundled scenario as a scenario document")
    show.add_argument("name", help="bundled scenario name (see 'stickyproof scenarios list')")
    show.set_defaults(func=_cmd_scenarios_show)
    smp = actions.add_parser(
        "sample",
        help="write scenario INDEX of the sweep seeded SEED (reproducible from the two numbers)",
        description="Draw one scenario of the scenario space, reproducibly from (seed, index). "
        "Knobs: members, topics, partitions, zero_partition_topics, generation, stale, double_claims, "
        "unknown_generation, deleted_topic_claims, past_count_claims (N or LOW..HIGH); subscriptions, "
        "ownership, versions, protocols, racks, static, assignors, ids (comma-separated values).",
    )
    smp.add_argument("--seed", type=int, required=True, help="sweep seed")
    smp.add_argument("--index", type=int, required=True, help="scenario index within the sweep (>= 0)")
    smp.add_argument(
        "--space", action="append", default=[], metavar="KNOB=VALUE", help="restrict a knob, e.g. members=2..50 (repeatable)"
    )
    smp.set_defaults(func=_cmd_scenarios_sample)
