"""``validate``, ``decode``, ``encode``: the interchange format and the consumer-protocol bytes."""

from __future__ import annotations

import argparse
import sys

from ._common import load_scenario_ref, print_json, read_json_arg


def _cmd_validate(args: argparse.Namespace) -> int:
    scenario = load_scenario_ref(args.scenario)
    subscribed = scenario.subscribed_partitions()
    claims = sum(len(m.owned) for m in scenario.members)
    versions = sorted({m.version for m in scenario.members})
    print(
        f"ok: {scenario.name or args.scenario}: {len(scenario.members)} members, {len(scenario.topics)} topics, "
        f"{len(subscribed)} subscribed partitions, {claims} owned claims, protocol {scenario.protocol}, "
        f"versions {','.join(map(str, versions)) or '-'}"
    )
    return 0


def add_validate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a scenario file against the interchange format",
        description="Read a scenario (file, '-' or bundled name), enforce every rule of the format, "
        "and print a one-line summary. Exit 2 naming the JSON path of the first broken rule.",
    )
    p.add_argument("scenario", help="scenario file, '-' for standard input, or a bundled scenario name")
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
    p.set_defaults(func=_cmd_decode)


def _cmd_encode(args: argparse.Namespace) -> int:
    from ..wire.cli_json import encode_json_to_hex

    print(encode_json_to_hex(args.message, read_json_arg(args.file), args.version))
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
    p.add_argument("--version", type=int, default=None, help="version to write (default: the document's, else the newest)")
    p.add_argument("file", help="JSON file, or '-' for standard input")
    p.set_defaults(func=_cmd_encode)
