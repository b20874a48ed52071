"""``simulate``: the group protocol simulator (models/protocol.md)."""

from __future__ import annotations

import argparse
import sys

from ._common import print_json


def _cmd_simulate(args: argparse.Namespace) -> int:
    from ..group.runner import run_simulation

    result = run_simulation(args.scenario, args.events, args.without or (), args.assignor)
    if args.json:
        print_json(result.to_dict())
    else:
        from ..group.report import render_report

        sys.stdout.write(render_report(result, notes=not args.brief))
    return 0 if result.ok else 1


def add_simulate(sub: argparse._SubParsersAction) -> None:
    from ..group.config import FEATURES

    p = sub.add_parser(
        "simulate",
        help="run the group protocol (JoinGroup/SyncGroup, eager and cooperative) under a schedule of events",
        description="Simulate a consumer group tick by tick: coordinator and members as state machines, the leader "
        "assigning through the real leader path, events (joins, stalls, crashes, restarts, upgrades, fail-overs) from "
        "an events file or the named scenario's own schedule. Prints the trace (one row per step: what happened, the "
        "generation, who owns what) and the monitors' verdicts; exit 1 when a monitor fails. See models/protocol.md.",
    )
    p.add_argument("--scenario", required=True, metavar="NAME|FILE",
                   help="bundled scenario name, scenario file, or stickyproof.simulation/1 document")
    p.add_argument("--events", metavar="FILE", help="events file (replaces the scenario's own schedule)")
    p.add_argument("--without", action="append", choices=FEATURES, metavar="FEATURE",
                   help=f"switch a historical safeguard off (repeatable): {', '.join(FEATURES)}")
    p.add_argument("--assignor", metavar="NAME",
                   help="configure every member with this assignor (e.g. sticky@2.2, cooperative-sticky@2.4, module:callable)")
    p.add_argument("--json", action="store_true", help="print the machine-readable trace instead of the table")
    p.add_argument("--brief", action="store_true", help="leave the protocol messages out of the table")
    p.set_defaults(func=_cmd_simulate)
