"""``assign`` and ``assignors``: one rebalance through the leader path, and the registry."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InvalidScenario
from ..model import dump_json
from ._common import load_scenario_ref, print_json


def _cmd_assign(args: argparse.Namespace) -> int:
    from ..leader import lead
    from ..model import assignment_to_dict

    result = lead(load_scenario_ref(args.scenario), args.assignor, direct=args.direct)
    text = dump_json(assignment_to_dict(result.assignment)) + "\n"
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InvalidScenario("", f"{args.out}: cannot write ({exc.strerror or exc})") from exc
    else:
        sys.stdout.write(text)
    return 0


def add_assign(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "assign",
        help="run one rebalance of a scenario with an assignor and print the assignment",
        description="Run the leader path: encode each member's subscription at its version, decode it, run the "
        "assignor on what decoding yields, validate as Kafka's leader does (R39 under cooperative), and print the "
        "assignment document ('revoking' filled for cooperative rounds). Assignor failures (Kafka's own throws) "
        "are one line on stderr and exit 2.",
    )
    p.add_argument("scenario", help="scenario file, '-' for standard input, or a bundled scenario name")
    p.add_argument(
        "--assignor",
        default=None,
        metavar="NAME",
        help="a built-in assignor or historical release (see 'stickyproof assignors'), or module.path:callable "
        "(default: the group's protocol vote over members[].assignors)",
    )
    p.add_argument(
        "--direct",
        action="store_true",
        help="bypass the wire: hand the assignor each member's owned partitions, generation and rack as stated",
    )
    p.add_argument("--out", metavar="FILE", help="write the assignment document to FILE instead of standard output")
    p.set_defaults(func=_cmd_assign)


def _cmd_assignors(args: argparse.Namespace) -> int:
    from ..assignors.registry import list_assignors

    infos = list_assignors()
    if args.json:
        print_json(
            [
                {"name": i.name, "kafka_name": i.kafka_name, "variant": i.variant, "protocols": list(i.protocols),
                 "description": i.description}
                for i in infos
            ]
        )
        return 0
    width = max(len(i.name) for i in infos)
    print(f"{'name':<{width}}  {'kafka name':<18}  {'variant':<7}  {'protocols':<19}  description")
    for i in infos:
        print(f"{i.name:<{width}}  {i.kafka_name:<18}  {i.variant:<7}  {','.join(i.protocols):<19}  {i.description}")
    print("user assignors: --assignor module.path:callable (see stickyproof.assignors.registry)")
    return 0


def add_assignors(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "assignors",
        help="list the built-in assignors, their historical variants and supported protocols",
        description="The built-in assignors (Kafka's range, roundrobin, sticky, cooperative-sticky) and the historical "
        "variants stickyproof reproduces, with the rebalance protocols each supports.",
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_cmd_assignors)
