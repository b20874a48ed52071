"""``solve``: the optimality oracles (models/optimal-assignment.md)."""

from __future__ import annotations

import argparse

from ..grading import Limits
from ._common import SCENARIO_HELP, add_json_flag, add_limit_flags, add_size_flags, limits_from, load_scenario_ref, print_json

SOLVE_LIMITS = Limits(cpsat_seconds=60.0)


def _cmd_solve(args: argparse.Namespace) -> int:
    from ..oracle.solve import solve_document

    limits = limits_from(args, SOLVE_LIMITS)
    scenario = load_scenario_ref(args.scenario, args)
    if args.view:
        from ..leader import decoded_view

        scenario = decoded_view(scenario, args.view)
    doc = solve_document(
        scenario, engine=args.engine, balance=args.balance, cpsat_seconds=limits.cpsat_seconds,
        racks="kafka" if args.kafka_racks else args.racks,
    )
    print_json(doc)
    return 1 if doc.get("agree") is False else 0


def add_solve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "solve",
        help="compute the provably optimal balanced-then-sticky assignment of a scenario",
        description="Optimise over the members' stated owned partitions and generations (or, with --view, over what "
        "a leader running that assignor decodes): balance first, then partitions kept by their retainable claimant "
        "(models/optimal-assignment.md). Prints the assignment document with status, proven, kept, bound and "
        "seconds; 'proven' is true only with a solver proof or a checked flow certificate. With --engine both, exit 1 "
        "if two proven results disagree.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default="global",
                   help="balance mode (default global). kafka: Kafka's own test notion R33 as a constraint "
                        "(no two members 2+ apart both hold a topic), the most partitions kept first, then the "
                        "most balanced; it may leave a newcomer with nothing (CP-SAT only)")
    add_limit_flags(p, SOLVE_LIMITS, "cpsat_seconds")
    p.add_argument("--engine", choices=("cpsat", "flow", "both"), default="cpsat",
                   help="cpsat (aggregated, flow-hinted), flow (min-cost flow with certificate), or both (default cpsat)")
    p.add_argument("--view", metavar="ASSIGNOR",
                   help="optimise over the owned partitions and generations this assignor's leader would decode")
    p.add_argument("--racks", action="store_true", help="add the rack-locality tier (O3) after stickiness")
    p.add_argument("--kafka-racks", action="store_true",
                   help="Kafka's rack-aware order (KIP-881) where its rack-aware path applies: balance, then rack "
                        "alignment (a member without a rack matches every partition), then partitions kept")
    add_size_flags(p)
    add_json_flag(p, "print JSON (what solve always prints; accepted so every command takes --json)")
    p.set_defaults(func=_cmd_solve)
