"""``validate``, ``decode``, ``encode``: the interchange format and the consumer-protocol bytes."""

from __future__ import annotations

import argparse
import sys

from ._common import SCENARIO_HELP, add_json_flag, any_int, load_scenario_ref, print_json, read_json_arg


def _cmd_validate(args: argparse.Namespace) -> int:
    # Counted, never built: a topic of 2^31 - 1 partitions validates in the time it takes to read it.
    scenario = load_scenario_ref(args.scenario)
    subscribed = scenario.subscribed_partition_count()
    claims = sum(len(m.owned) for m in scenario.members)
    versions = sorted({m.version for m in scenario.members})
    name = scenario.name or args.scenario
    if args.json:
        print_json({"valid": True, "name": name, "members": len(scenario.members), "topics": len(scenario.topics),
                    "partitions": scenario.partition_count(), "subscribed_partitions": subscribed,
                    "owned_claims": claims, "protocol": scenario.protocol, "versions": versions})
        return 0
    print(
        f"ok: {name}: {len(scenario.members)} members, {len(scenario.topics)} topics, "
        f"{subscribed} subscribed partitions, {claims} owned claims, protocol {scenario.protocol}, "
        f"versions {','.join(map(str, versions)) or '-'}"
    )
    return 0


def add_validate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a scenario file against the interchange format",
        description="Read a scenario (file, '-' or bundled name), enforce every rule of the format "
        "(docs/scenario-format.md), and print a one-line summary. Exit 2 naming the JSON path of the first "
        "broken rule. Counts are arithmetic: no size limit applies.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    add_json_flag(p, "print the summary as JSON")
    p.set_defaults(func=_cmd_validate)


def _cmd_decode(args: argparse.Namespace) -> int:
    from ..wire.cli_json import decode_hex_to_json

    text = sys.stdin.read() if args.hex == ["-"] else " ".join(args.hex)
    print_json(decode_hex_to_json(args.message, text))
    return 0


def add_decode(sub: argparse._SubParsersAction) -> None:
    from ..wire.cli_json import MESSAGE_KINDS

    p = sub.add_parser(
        "decode",
        help="decode consumer-protocol bytes (hex) to JSON",
        description="Decode a ConsumerProtocolSubscription/Assignment (v0-v3, newer versions read as v3) or an "
        "assignor's user data from hex, and print it as JSON. Exit 2 naming the field and byte offset when "
        "the bytes do not decode.",
    )
    p.add_argument("message", choices=MESSAGE_KINDS, help="which message the bytes hold")
    p.add_argument("hex", nargs="+", help="the bytes as hex (spaces, colons and a 0x prefix allowed), or '-' for standard input")
    add_json_flag(p, "print JSON (what decode always prints; accepted so every command takes --json)")
    p.set_defaults(func=_cmd_decode)


def _cmd_encode(args: argparse.Namespace) -> int:
    from ..wire.cli_json import encode_json_to_hex

    text = encode_json_to_hex(args.message, read_json_arg(args.file), args.version)
    if args.json:
        print_json({"message": args.message, "hex": text})
    else:
        print(text)
    return 0


def add_encode(sub: argparse._SubParsersAction) -> None:
    from ..wire.cli_json import MESSAGE_KINDS

    p = sub.add_parser(
        "encode",
        help="encode a JSON message (the shape 'decode' prints) to hex",
        description="Read the JSON shape 'stickyproof decode' prints and write the bytes as lower-case hex, "
        "ordered as Kafka's writers order them. Exit 2 naming the field on bad input.",
    )
    p.add_argument("message", choices=MESSAGE_KINDS, help="which message to write")
    p.add_argument("--version", type=any_int, default=None,
                   help="version to write: subscription and assignment 0-3, sticky-user-data 0-1, cooperative-user-data 0 "
                   "(default: the document's, else the newest); any other is refused")
    p.add_argument("file", help="JSON file, or '-' for standard input")
    add_json_flag(p, "print {message, hex} as JSON instead of the bare hex")
    p.set_defaults(func=_cmd_encode)
