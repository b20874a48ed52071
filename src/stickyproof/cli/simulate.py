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
    document = None
    if ref == "-":
        from ..model import parse_json

        document = parse_json(sys.stdin.buffer.read(), "standard input")
    replayed = _replay_history(args, ref, document)
    if replayed is not None:
        return replayed
    from ..group.consumer.runner import consumer_simulation_for

    consumer = consumer_simulation_for(ref, document)
    if consumer is not None:
        return _simulate_consumer_group(args, consumer)
    if args.coordinator is not None:
        from ..errors import InvalidOption

        raise InvalidOption("--coordinator", 'applies to consumer groups ("group_protocol": "consumer") only')
    scenario, schedule, switched, assignor, name = resolve_simulation(ref, args.events, args.without or (), args.assignor,
                                                                      document=document)
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


def _replay_history(args: argparse.Namespace, ref: str, document) -> int | None:
    """A ``stickyproof.kip848-history/1`` document (or ``prove --json`` output carrying one) replayed
    on the coordinator release it names or ``--coordinator``; None when ``ref`` holds no history."""
    from pathlib import Path

    from ..errors import InvalidOption, InvalidScenario
    from ..group.consumer.history import is_history_document, replay_history
    from ..model import parse_json

    if ref != "-":
        path = Path(ref)
        if not path.is_file():
            return None
        try:
            document = parse_json(path.read_bytes(), ref)
        except OSError as exc:
            raise InvalidScenario("", f"{ref}: cannot read ({exc.strerror or exc})") from exc
    if not is_history_document(document):
        return None
    for flag, value in (("--without", args.without), ("--protocol", args.protocol), ("--events", args.events),
                        ("--assignor", args.assignor)):
        if value:
            raise InvalidOption(flag, "a KIP-848 history fixes its events and targets; only --coordinator applies")
    replay = replay_history(document, args.coordinator)
    if args.json:
        out = replay.result.to_dict()
        out["replay"] = replay.to_dict()
        print_json(out)
    else:
        import shutil

        from ..group.consumer.report import render_consumer_report

        width = shutil.get_terminal_size((160, 24)).columns
        sys.stdout.write(replay.summary() + "\n")
        for line in replay.mismatches:
            sys.stdout.write(f"  differs: {line}\n")
        sys.stdout.write(render_consumer_report(replay.result, width=width, notes=not args.brief))
    return 0 if replay.result.ok else 1


def _simulate_consumer_group(args: argparse.Namespace, sim) -> int:
    """A consumer group (KIP-848): the coordinator release and server-side assignor of the flags."""
    from ..errors import InvalidOption
    from ..group.consumer.report import render_consumer_report
    from ..group.consumer.runner import run_consumer_simulation

    for flag, value in (("--without", args.without), ("--protocol", args.protocol)):
        if value:
            raise InvalidOption(flag, 'a classic-protocol switch; a consumer group ("group_protocol": "consumer") has none '
                                      "(choose a coordinator release with --coordinator)")
    sized(args, sim.scenario)
    result = run_consumer_simulation(sim, events=args.events, coordinator=args.coordinator, assignor=args.assignor)
    if args.json:
        print_json(result.to_dict())
    else:
        import shutil

        width = shutil.get_terminal_size((160, 24)).columns
        sys.stdout.write(render_consumer_report(result, width=width, notes=not args.brief))
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
        "past config.max_ticks is refused (exit 2). See models/protocol.md. A consumer group (\"group_protocol\": "
        "\"consumer\") runs KIP-848's protocol instead: the coordinator computes targets with a server-side assignor "
        "and members reconcile by heartbeat (docs/consumer-protocol.md). A document one of whose join or restart "
        "events names a group_protocol is a migration history: the group moves between the classic and the consumer "
        "protocol as its members restart (docs/consumer-protocol.md, Online migration). A stickyproof.kip848-history/1 "
        "document, or the JSON of `stickyproof prove reconciliation.kafka-16147 --json`, is replayed request by request "
        "on the coordinator release it names (or --coordinator) with its exact targets (docs/consumer-protocol.md, "
        "Replaying a proof's history).",
    )
    p.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                   help="bundled scenario name, scenario file, stickyproof.simulation/1 document, or '-' for standard input")
    p.add_argument("--scenario", dest="scenario_flag", default=None, metavar="SCENARIO", help=argparse.SUPPRESS)
    p.add_argument("--events", metavar="FILE", help="events file (replaces the scenario's own schedule)")
    p.add_argument("--without", action="append", choices=FEATURES, metavar="FEATURE",
                   help=f"switch a historical safeguard off (repeatable): {', '.join(FEATURES)}")
    p.add_argument("--assignor", metavar="NAME",
                   help="configure every member with this assignor (e.g. sticky@2.2, cooperative-sticky@2.4, module:callable); "
                        "in a consumer group, the coordinator's server-side assignor (uniform, consumer-range; default uniform)")
    p.add_argument("--coordinator", metavar="RELEASE",
                   help="consumer groups: the group coordinator release to run (current, before-kafka-19233, "
                        "before-kafka-19449, 3.7; default current)")
    add_protocol_flag(p)
    add_json_flag(p, "print the machine-readable trace instead of the table")
    p.add_argument("--brief", action="store_true", help="leave the protocol messages out of the table")
    add_size_flags(p)
    p.set_defaults(func=_cmd_simulate)
