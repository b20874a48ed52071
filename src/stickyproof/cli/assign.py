"""``assign`` and ``assignors``: one rebalance through the leader path, and the registry."""

from __future__ import annotations

import argparse
import sys

from ..grading import Limits
from ..model import dump_json
from ._common import (
    SCENARIO_HELP,
    add_json_flag,
    add_limit_flags,
    add_size_flags,
    limits_from,
    load_scenario_ref,
    print_json,
    write_text,
)

ASSIGN_LIMITS = Limits()
"""``assign`` bounds nothing by default (a user assignor in its worker is still bounded per call)."""


def _cmd_assign(args: argparse.Namespace) -> int:
    from ..grading import call_with_limit, leader_run
    from ..leader import lead
    from ..model import assignment_to_dict

    limits = limits_from(args, ASSIGN_LIMITS)
    scenario = load_scenario_ref(args.scenario, args)
    if scenario.is_consumer_group:  # KIP-848: the coordinator runs a server-side assignor, no leader
        from ..grading import DEFAULT_SERVER_ASSIGNOR, consumer_group_run
        from ..lookup import get_assignor

        info = get_assignor(args.assignor or DEFAULT_SERVER_ASSIGNOR)
        assignment = consumer_group_run(info, limits=limits)(scenario)
    elif args.assignor is None:  # the group's own vote picks the assignor
        assignment = call_with_limit(lambda: lead(scenario, None, direct=args.direct).assignment, limits.assignor_seconds)
    else:
        from ..lookup import get_assignor

        assignment = leader_run(get_assignor(args.assignor), direct=args.direct, limits=limits)(scenario)
    text = dump_json(assignment_to_dict(assignment)) + "\n"
    if args.out:
        write_text(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def add_assign(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "assign",
        help="run one rebalance of a scenario with an assignor and print the assignment",
        description="Run the leader path: encode each member's subscription at its version, decode it, run the "
        "assignor on what decoding yields, validate as Kafka's leader does (R39 under cooperative, docs/rules.md), "
        "and print the assignment document ('revoking' filled for cooperative rounds). Assignor failures (Kafka's own "
        "throws) are one line on stderr and exit 2.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    p.add_argument(
        "--assignor",
        default=None,
        metavar="NAME",
        help="a built-in assignor or historical release (see 'stickyproof assignors'), or module.path:callable "
        "(default: the group's protocol vote over members[].assignors; for a consumer group, a server-side "
        "assignor: uniform (the default), consumer-range, kafka-java:uniform@VERSION)",
    )
    p.add_argument(
        "--direct",
        action="store_true",
        help="bypass the wire: hand the assignor each member's owned partitions, generation and rack as stated",
    )
    p.add_argument("--out", metavar="FILE", help="write the assignment document to FILE instead of standard output")
    add_limit_flags(p, ASSIGN_LIMITS, "assignor_seconds")
    add_size_flags(p)
    add_json_flag(p, "print JSON (what assign always prints; accepted so every command takes --json)")
    p.set_defaults(func=_cmd_assign)


def _cmd_assignors(args: argparse.Namespace) -> int:
    from ..assignors.registry import list_assignors, list_consumer_group_assignors

    infos = list_assignors()
    if args.json:
        print_json(
            [
                {"name": i.name, "kafka_name": i.kafka_name, "variant": i.variant, "group_protocol": "classic",
                 "protocols": list(i.protocols), "description": i.description, **_verification(i)}
                for i in infos
            ] + [
                {"name": i.name, "kafka_name": i.kafka_name, "variant": i.variant, "group_protocol": "consumer",
                 "protocols": [], "description": i.description}
                for i in list_consumer_group_assignors()
            ]
        )
        return 0
    width = max(len(i.name) for i in infos)
    print(f"{'name':<{width}}  {'kafka name':<18}  {'variant':<7}  {'protocols':<19}  description")
    for i in infos:
        print(f"{i.name:<{width}}  {i.kafka_name:<18}  {i.variant:<7}  {','.join(i.protocols):<19}  {i.description}")
        verified = _verification(i)
        if verified:
            print(f"{'':<{width}}  verified against {verified['verified_against']}: agrees on "
                  f"{verified['verified_agreeing']} of {verified['verified_inputs']} inputs "
                  "(benchmarks/releases_vs_jars.py)")
    print('server-side (KIP-848), for consumer groups (group_protocol "consumer"); Kafka\'s own: kafka-java:NAME@VERSION:')
    for i in list_consumer_group_assignors():
        print(f"{i.name:<{width}}  {i.kafka_name:<18}  {i.variant:<7}  {'':<19}  {i.description}")
    print("your own: --assignor module.path:callable (run in an isolated worker process), or exec:CMD [ARGS] "
          "(any language, models/assignor-protocol.md)")
    from ..lookup import adapters

    print("other clients (CLIENT:NAME; docs/peers.md, docs/adapters.md):")
    for a in adapters():
        print(f"  {a.prefix + ':':<14} {a.client}; {a.source}")
    return 0


def _verification(info) -> dict:
    """A release row's check against Kafka's own jar (``Release.verified_against``), or nothing."""
    release = info.release
    if release is None or not release.verified_against:
        return {}
    return {"verified_against": release.verified_against, "verified_inputs": release.verified_inputs,
            "verified_agreeing": release.verified_agreeing}


def add_assignors(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "assignors",
        help="list the built-in assignors, their historical variants and supported protocols",
        description="The built-in assignors (Kafka's range, roundrobin, sticky, cooperative-sticky) and the historical "
        "variants stickyproof reproduces, with the rebalance protocols each supports; then the server-side (KIP-848) "
        "assignors for consumer groups (uniform, consumer-range and their releases). --json: one list, each entry's "
        "group_protocol saying which (classic or consumer).",
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_cmd_assignors)
