"""``stickyproof import``: a scenario (and the group's assignment) from a real group.

    stickyproof import describe OUTPUT [--topics TOPICS] [options]   kafka-consumer-groups.sh --describe
    stickyproof import capture CAPTURE [options]                     JoinGroup/SyncGroup bytes as hex

``add_import(subparsers)`` registers the command; the handlers parse, call one library function
(``stickyproof.importers``), write the files and print. Like every command, they raise only the
``StickyproofError`` family for bad input, which the CLI's ``main`` prints as one stderr line with
exit 2. Output: the scenario goes to ``-o FILE`` (or standard output), the assignment to
``--assignment-out FILE``; a summary and the notes go to standard output (standard error when the
scenario itself is on standard output); ``--json`` prints one JSON document instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from ..errors import InvalidScenario

__all__ = ["add_import", "render_scenario"]

_DESCRIPTION = """\
Turn what Kafka shows of a live group into a stickyproof scenario, so that check, grade,
assign, solve and hunt can work on it.

  describe  the output of
              kafka-consumer-groups.sh --bootstrap-server B --describe --group G --members --verbose
            (any release from 1.1 on; the --state and default offsets tables may be appended),
            with the partition counts from kafka-topics.sh --describe (--topics) or --partitions.
            The group's current assignment is written with --assignment-out.
  capture   a stickyproof.capture/1 JSON file holding, per member, the JoinGroup metadata
            (ConsumerProtocolSubscription) and the SyncGroup assignment as hex (docs/import.md).

What the input cannot show (generations, protocol versions, subscriptions, the assignor...) is
assumed, and every assumption is written into the scenario's "notes". Exit 0 ok, 2 bad input
(one line on stderr naming the line and column, or the field)."""

_EXAMPLE = """\
example:
  kafka-consumer-groups.sh --bootstrap-server B --describe --group orders-app --members --verbose > members.txt
  kafka-topics.sh --bootstrap-server B --describe --topic orders > topics.txt
  stickyproof import describe members.txt --topics topics.txt --assignor cooperative-sticky \\
      -o orders-app.json --assignment-out orders-app.now.json
  stickyproof check orders-app.json orders-app.now.json
  stickyproof grade orders-app.json --assignor cooperative-sticky"""


def add_import(subparsers: argparse._SubParsersAction) -> None:
    """Register ``import`` with its two sources on the CLI's subparsers."""
    p = subparsers.add_parser(
        "import",
        help="make a scenario from a real group (kafka-consumer-groups.sh output, or captured bytes)",
        description=_DESCRIPTION,
        epilog=_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sources = p.add_subparsers(title="sources", metavar="SOURCE", dest="source", required=True)

    d = sources.add_parser(
        "describe",
        help="kafka-consumer-groups.sh --describe --members --verbose output (+ kafka-topics.sh --describe)",
        description=textwrap.fill(
            "Read one group from kafka-consumer-groups.sh --describe output (the --members --verbose table; the "
            "--state and offsets tables are used when present) and write a scenario of its next rebalance: each "
            "member owns what it holds now. " + _ASSUMPTIONS, 100),
        epilog=_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument("input", metavar="OUTPUT", help="the kafka-consumer-groups.sh output, or '-' for standard input")
    d.add_argument("--topics", metavar="FILE", help="kafka-topics.sh --describe output: partition counts and Replicas")
    d.add_argument("--partitions", action="append", default=[], metavar="TOPIC=N",
                   help="a topic's partition count (repeatable; overrides --topics)")
    d.add_argument("--broker-rack", action="append", default=[], metavar="ID=RACK",
                   help="a broker's rack, to read replica racks from the Replicas column of --topics (repeatable)")
    d.add_argument("--member-rack", action="append", default=[], metavar="ID=RACK",
                   help="client.rack of the member with this member id or client id (repeatable)")
    d.add_argument("--group", help="the group to read when the output describes several")
    d.add_argument("--assignor", metavar="NAME", help="the assignor every member offers (default: ASSIGNMENT-STRATEGY "
                   "of a --state table in the input, else none)")
    d.add_argument("--protocol", choices=("eager", "cooperative"),
                   help="rebalance protocol (default: cooperative for cooperative-sticky, else eager)")
    d.add_argument("--subscription-version", type=int, default=3, metavar="V",
                   help="ConsumerProtocolSubscription version every member speaks, 0-3 (default 3)")
    d.add_argument("--generation", type=int, default=-1, metavar="N", help="every member's generation (default -1: unknown)")
    subs = d.add_mutually_exclusive_group()
    subs.add_argument("--subscribe", metavar="TOPICS", help="comma-separated topics every member subscribes to "
                      "(default: the topics each member holds)")
    subs.add_argument("--subscribe-all", action="store_true", help="every member subscribes to every topic the group holds")
    d.add_argument("--target", action="store_true",
                   help="write TARGET-ASSIGNMENT (Kafka 4.0+, KIP-848 groups) as the assignment instead of the current one")
    d.add_argument("--name", help="the scenario's name (default: GROUP (imported from kafka-consumer-groups.sh))")
    _outputs(d)
    d.set_defaults(func=_cmd_describe)

    c = sources.add_parser(
        "capture",
        help="captured JoinGroup metadata and SyncGroup assignments as hex (stickyproof.capture/1)",
        description=textwrap.fill(
            "Decode each member's ConsumerProtocolSubscription and ConsumerProtocolAssignment with stickyproof's "
            "codecs and write the scenario whose leader path sees exactly what this leader saw (versions, owned "
            "partitions, generations, racks, sticky user data), plus the captured assignment. The capture format is "
            "in docs/import.md.", 100),
        epilog=_CAPTURE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("input", metavar="CAPTURE", help="the capture JSON file, or '-' for standard input")
    c.add_argument("--protocol", choices=("eager", "cooperative"), help="rebalance protocol (overrides the capture's)")
    c.add_argument("--name", help="the scenario's name")
    _outputs(c)
    c.set_defaults(func=_cmd_capture)


_ASSUMPTIONS = (
    "Not shown by the tools, so assumed and noted: generation -1 (--generation), subscription version 3 "
    "(--subscription-version), subscriptions = the topics each member holds (--subscribe, --subscribe-all), the "
    "assignor (--assignor), the rebalance protocol (--protocol), no client racks (--member-rack)."
)

_CAPTURE_EXAMPLE = """\
example capture (one member; the hex of 'stickyproof encode subscription' and 'encode assignment'):
  {"format": "stickyproof.capture/1", "assignor": "cooperative-sticky", "topics": {"orders": 2},
   "members": [{"id": "c-1", "subscription": "0003000000010006...", "assignment": "00030000000100..."}]}
  stickyproof import capture capture.json -o group.json --assignment-out round.json"""


def _outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--out", metavar="FILE", help="write the scenario to FILE (default: standard output)")
    p.add_argument("--assignment-out", metavar="FILE", help="write the assignment the input shows to FILE")
    p.add_argument("--json", action="store_true",
                   help="print {group, members, topics, scenario, assignment, notes} as JSON (documents inline "
                   "unless written to files)")


# ------------------------------------------------------------------------------------------
# handlers


def _cmd_describe(args: argparse.Namespace) -> int:
    from ..importers import DescribeOptions, import_describe

    check_arguments(args)
    if args.input == "-" and args.topics == "-":
        raise InvalidScenario("--topics", "standard input can hold only one of OUTPUT and --topics")
    options = DescribeOptions(
        group=args.group,
        **metadata_options(args),
        assignor=args.assignor,
        protocol=args.protocol,
        version=args.subscription_version,
        generation=args.generation,
        subscribe=subscribed_topics(args),
        subscribe_all=args.subscribe_all,
        target=args.target,
        name=args.name,
    )
    _check_outputs(args)
    text = read_text(args.input, "OUTPUT")
    topics = None if args.topics is None else read_text(args.topics, "--topics")
    return _emit(import_describe(text, topics, options), args, "kafka-consumer-groups.sh output")


def _cmd_capture(args: argparse.Namespace) -> int:
    from ..importers import import_capture, read_capture

    check_arguments(args)
    _check_outputs(args)
    doc = read_capture(_read_bytes(args.input, "CAPTURE"), "standard input" if args.input == "-" else args.input)
    return _emit(import_capture(doc, protocol=args.protocol, name=args.name), args, "capture")


# ------------------------------------------------------------------------------------------
# input


def metadata_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--partitions``, ``--broker-rack`` and ``--member-rack`` as the importers' option fields
    (``partitions``, ``broker_racks``, ``member_racks``): shared by ``import describe`` and ``explain``."""
    return {
        "partitions": {k: _int_value(v, "--partitions", k) for k, v in _pairs(args.partitions, "--partitions", "TOPIC=N")},
        "broker_racks": {_int_value(k, "--broker-rack", k): v for k, v in _pairs(args.broker_rack, "--broker-rack", "ID=RACK")},
        "member_racks": dict(_pairs(args.member_rack, "--member-rack", "ID=RACK")),
    }


def subscribed_topics(args: argparse.Namespace) -> tuple[str, ...] | None:
    """``--subscribe T1,T2`` as a tuple of topics (None when not given)."""
    return None if args.subscribe is None else tuple(t.strip() for t in args.subscribe.split(",") if t.strip())


def check_arguments(args: argparse.Namespace) -> None:
    """An argument with bytes that are not UTF-8 reaches Python as lone surrogates, which no file can hold."""
    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and any("\ud800" <= ch <= "\udfff" for ch in item):
                option = "--" + name.replace("_", "-") if name not in ("input",) else name.upper()
                raise InvalidScenario(option, f"{item.encode('utf-8', 'surrogateescape')!r} is not UTF-8 text")


def _pairs(values: list[str], option: str, shape: str) -> list[tuple[str, str]]:
    out = []
    for value in values:
        for item in value.split(","):
            key, eq, val = item.strip().partition("=")
            if not eq or not key or not val:
                raise InvalidScenario(option, f"{item.strip()!r} is not {shape}")
            out.append((key, val))
    return out


def _int_value(text: str, option: str, what: str) -> int:
    if not text.isdigit() or len(text) > 10:
        raise InvalidScenario(option, f"{what}: {text!r} is not a number")
    return int(text)


def _read_bytes(ref: str, what: str) -> bytes:
    if ref == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(ref).read_bytes()
    except FileNotFoundError:
        raise InvalidScenario(what, f"{ref}: no such file") from None
    except IsADirectoryError:
        raise InvalidScenario(what, f"{ref}: is a directory") from None
    except OSError as exc:
        raise InvalidScenario(what, f"{ref}: cannot read ({exc.strerror or exc})") from None


def read_text(ref: str, what: str) -> str:
    data = _read_bytes(ref, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidScenario(what, f"{'standard input' if ref == '-' else ref} is not UTF-8 text: byte offset {exc.start}") from None


# ------------------------------------------------------------------------------------------
# output


def render_scenario(doc: dict[str, Any]) -> str:
    """The scenario document as ``dump_json`` writes it, but one note per line (they are read by people)."""
    from ..model import dump_json

    notes = doc.get("notes", [])
    body = dump_json({k: v for k, v in doc.items() if k != "notes"})
    if not notes:
        return body + "\n"
    lines = ",\n".join("    " + json.dumps(n, ensure_ascii=False) for n in notes)
    return body[: body.rindex("\n}")] + ',\n  "notes": [\n' + lines + "\n  ]\n}\n"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _check_outputs(args: argparse.Namespace) -> None:
    out, aout = args.out, args.assignment_out
    if out and aout and out != "-" and Path(out).resolve() == Path(aout).resolve():
        raise InvalidScenario("--assignment-out", "is the same file as --out")
    if aout == "-" and (out in (None, "-")) and not args.json:
        raise InvalidScenario("--assignment-out", "standard output already holds the scenario: give -o FILE")


def _write(path: str, text: str, option: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InvalidScenario(option, f"{path}: cannot write ({exc.strerror or exc})") from None


def _emit(result: Any, args: argparse.Namespace, source: str) -> int:
    from ..importers import assignment_document, scenario_document
    from ..model import dump_json

    scenario_doc = scenario_document(result)
    assignment_doc = assignment_document(result)
    if args.assignment_out and assignment_doc is None:
        raise InvalidScenario("--assignment-out", f"the {source} shows no assignment to write")
    scenario_text = render_scenario(scenario_doc)
    to_file = args.out not in (None, "-")
    if to_file:
        _write(args.out, scenario_text, "--out")
    if args.assignment_out and args.assignment_out != "-":
        _write(args.assignment_out, dump_json(assignment_doc) + "\n", "--assignment-out")
    s = result.scenario
    assigned = 0 if result.assignment is None else sum(len(v) for v in result.assignment.assignment.values())
    if args.json:
        sys.stdout.write(dump_json({
            "group": result.group,
            "members": len(s.members),
            "topics": len(s.topics),
            "partitions": sum(t.partitions for t in s.topics),
            "assigned": None if result.assignment is None else assigned,
            "scenario": args.out if to_file else scenario_doc,
            "assignment": args.assignment_out if args.assignment_out and args.assignment_out != "-" else assignment_doc,
            "notes": list(result.notes),
        }) + "\n")
        return 0
    if not to_file:
        sys.stdout.write(scenario_text)
    if args.assignment_out == "-":
        sys.stdout.write(dump_json(assignment_doc) + "\n")
    report = sys.stdout if to_file and args.assignment_out != "-" else sys.stderr
    what = f"group {result.group!r}" if result.group else "the group"
    lines = [
        f"imported {what} from the {source}: {_count(len(s.members), 'member')}, {_count(len(s.topics), 'topic')}, "
        f"{_count(sum(t.partitions for t in s.topics), 'partition')}"
        + ("" if result.assignment is None else f", {assigned} assigned"),
    ]
    if to_file:
        lines.append(f"wrote the scenario to {args.out}")
    if args.assignment_out and args.assignment_out != "-":
        lines.append(f"wrote the assignment to {args.assignment_out}")
    elif assignment_doc is not None and args.assignment_out is None:
        lines.append("the group's assignment was not written (--assignment-out FILE writes it)")
    lines.append("assumed (also in the scenario's \"notes\"):")
    lines.extend(f"  - {note}" for note in result.notes)
    report.write("\n".join(lines) + "\n")
    return 0
