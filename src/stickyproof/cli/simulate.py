"""``simulate``: the group protocol simulator (models/protocol.md)."""

from __future__ import annotations

import argparse
import sys

from ._common import add_json_flag, add_protocol_flag, add_size_flags, print_json, sized, with_protocol


def _cmd_simulate(args: argparse.Namespace) -> int:
    from ..group.runner import resolve_simulation
    from ..group.simulator import simulate

    ref = args.scenario if args.scenario is not None else args.scenario_flag
    if ref is None:
        from ..errors import InvalidOption

        raise InvalidOption("SCENARIO", "simulate needs a scenario: a bundled name, a scenario or simulation file, or '-'")
    if args.scenario is not None and args.scenario_flag is not None:
        from ..errors import InvalidOption

        raise InvalidOption("--scenario", "give the scenario once (positionally; --scenario is the old spelling)")
    scenario, schedule, switched, assignor, name = resolve_simulation(ref, args.events, args.without or (), args.assignor)
    scenario = with_protocol(scenario, args.protocol,
                             {m.id: (assignor,) if assignor else tuple(m.assignors) for m in scenario.members})
    sized(args, scenario)
    result = simulate(scenario, schedule, without=switched, assignor=assignor, name=name)
    if args.json:
        print_json(result.to_dict())
    else:
        import shutil

        from ..group.report import render_report

        # the terminal's width (COLUMNS when set; 160 when stdout is a file or a pipe)
        width = shutil.get_terminal_size((160, 24)).columns
        named = None
        if assignor:
            from ..lookup import get_assignor

            named = get_assignor(assignor).display or None  # resolved by the run already: the lookup's cache
        sys.stdout.write(render_report(result, width=width, notes=not args.brief, assignor_name=named))
    return 0 if result.ok else 1


def add_simulate(sub: argparse._SubParsersAction) -> None:
    from ..group.config import FEATURES

    p = sub.add_parser(
        "simulate",
        help="run the group protocol (JoinGroup/SyncGroup, eager and cooperative) under a schedule of events",
        description="Simulate a consumer group tick by tick: coordinator and members as state machines, the leader "
        "assigning through the real leader path, events (joins, stalls, crashes, restarts, upgrades, fail-overs) from "
        "an events file or the named scenario's own schedule. Prints the trace (one row per step: what happened, the "
        "generation, who owns what) after the verdict (one line, then the monitors), at the terminal's width; exit 1 "
        "when a monitor fails. An event scheduled at or "
        "past config.max_ticks is refused (exit 2). See models/protocol.md.",
    )
    p.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                   help="bundled scenario name, scenario file, stickyproof.simulation/1 document, or '-' for standard input")
    p.add_argument("--scenario", dest="scenario_flag", default=None, metavar="SCENARIO", help=argparse.SUPPRESS)
    p.add_argument("--events", metavar="FILE", help="events file (replaces the scenario's own schedule)")
    p.add_argument("--without", action="append", choices=FEATURES, metavar="FEATURE",
                   help=f"switch a historical safeguard off (repeatable): {', '.join(FEATURES)}")
    p.add_argument("--assignor", metavar="NAME",
                   help="configure every member with this assignor (e.g. sticky@2.2, cooperative-sticky@2.4, module:callable)")
    add_protocol_flag(p)
    add_json_flag(p, "print the machine-readable trace instead of the table")
    p.add_argument("--brief", action="store_true", help="leave the protocol messages out of the table")
    add_size_flags(p)
    p.set_defaults(func=_cmd_simulate)
