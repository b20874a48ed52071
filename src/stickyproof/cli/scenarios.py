"""``scenarios list|show|sample|knobs``: the bundled scenarios, the seeded sampler, and its knobs."""

from __future__ import annotations

import argparse
import sys

from ._common import Parser, add_json_flag, any_int, nonnegative_int, print_json


def _cmd_scenarios_list(args: argparse.Namespace) -> int:
    from ..scenarios import named

    rows = named.table()
    if args.json:
        print_json(rows)
        return 0
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

    print_json(scenario_to_dict(sample(args.seed, args.index, Space.from_overrides(args.space or []))))
    return 0


def _cmd_scenarios_knobs(args: argparse.Namespace) -> int:
    from ..scenarios.space import MAX_SPACE_PARTITIONS, knobs_table

    rows = knobs_table()
    if args.json:
        print_json({"knobs": rows, "max_space_partitions": MAX_SPACE_PARTITIONS})
        return 0
    width = max(len(r["knob"]) for r in rows)
    meaning = max(len(r["help"]) for r in rows if r["kind"] == "range")
    print(f"{'knob':<{width}}  {'kind':<6}  {'default':<8}  {'meaning':<{meaning}}  accepts")
    for r in rows:
        print(f"{r['knob']:<{width}}  {r['kind']:<6}  {r['default']:<8}  {r['help']:<{meaning}}  {r['accepts']}")
    print(f"(--space KNOB=VALUE, repeatable; a space's largest group holds at most {MAX_SPACE_PARTITIONS:,} "
          "partitions, topics x partitions; docs/limits.md)")
    return 0


def add_scenarios(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scenarios",
        help="list, show and sample scenarios of the scenario space; list its knobs",
        description="The bundled scenarios (the README's worked examples and Kafka's known incidents), the seeded "
        "sampler over the scenario space, and the space's knobs. A bundled name is accepted wherever a scenario file is.",
    )
    p.set_defaults(func=lambda _args: p.print_help(sys.stderr) or 2)
    actions = p.add_subparsers(title="actions", metavar="ACTION", parser_class=Parser)
    ls = actions.add_parser("list", help="table of bundled scenarios: name, members, partitions, description")
    add_json_flag(ls, "print the table as JSON")
    ls.set_defaults(func=_cmd_scenarios_list)
    show = actions.add_parser("show", help="write a bundled scenario as a scenario document")
    show.add_argument("name", help="bundled scenario name (see 'stickyproof scenarios list')")
    add_json_flag(show, "print JSON (what show always prints; accepted so every command takes --json)")
    show.set_defaults(func=_cmd_scenarios_show)
    smp = actions.add_parser(
        "sample",
        help="write scenario INDEX of the sweep seeded SEED (reproducible from the two numbers)",
        description="Draw one scenario of the scenario space, reproducibly from (seed, index). The knobs of --space "
        "are listed by 'stickyproof scenarios knobs'.",
    )
    smp.add_argument("--seed", type=any_int, required=True, help="sweep seed")
    smp.add_argument("--index", type=nonnegative_int, required=True, help="scenario index within the sweep (>= 0)")
    smp.add_argument("--space", nargs="+", action="extend", metavar="KNOB=VALUE",
                     help="restrict a knob, e.g. members=2..50 versions=3,0 (see 'stickyproof scenarios knobs')")
    add_json_flag(smp, "print JSON (what sample always prints; accepted so every command takes --json)")
    smp.set_defaults(func=_cmd_scenarios_sample)
    knobs = actions.add_parser(
        "knobs",
        help="the knobs of --space (hunt, sweep, scenarios sample): what each means, its default and its range",
        description="Every knob of the scenario space: range knobs take N or LOW..HIGH (inclusive) up to their cap, "
        "choice knobs a comma-separated subset of their values.",
    )
    add_json_flag(knobs, "print the knobs as JSON")
    knobs.set_defaults(func=_cmd_scenarios_knobs)
