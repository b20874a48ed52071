"""``live``: a scenario's history applied to real members on a real Kafka broker (docs/live.md)."""

from __future__ import annotations

import argparse
import sys

from ._common import add_json_flag, positive_int, print_json

MIGRATION_POLICY_NAMES = ("disabled", "upgrade", "downgrade", "bidirectional")
"""``group.consumer.migration.policy`` values (``group.consumer.migration_coordinator.MIGRATION_POLICIES``)."""

CLIENTS = ("java", "librdkafka", "kafka-python", "franz-go")
"""The member libraries a live run drives (``live.run.CLIENTS``)."""


def _clients(text: str) -> tuple[str, ...]:
    from ..errors import InvalidOption

    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise InvalidOption("--clients", f"name at least one client library ({', '.join(CLIENTS)})")
    for n in names:
        if n not in CLIENTS:
            raise InvalidOption("--clients", f"{n!r} has no live member yet (live members: {', '.join(CLIENTS)})")
    return names


def _cmd_live(args: argparse.Namespace) -> int:
    from ..group.runner import resolve_simulation
    from ..live.broker import running_broker
    from ..live.choice import choose_assignor
    from ..live.run import LiveSettings, check_live, run_live

    from ..errors import InvalidOption
    from ..live.migration import migration_history

    clients = _clients(args.clients)
    if args.migration_policy is not None and args.bootstrap is not None:
        raise InvalidOption("--migration-policy", "sets the policy of the broker a run starts; a broker at --bootstrap keeps its own")
    migration = migration_history(args.history)
    if migration is not None:  # the migration simulator's document: each process names its group.protocol
        if args.events is not None:
            raise InvalidOption("--events", "a migration history carries its own events (edit the document)")
        if args.group_protocol is not None:
            raise InvalidOption("--group-protocol", "a migration history names each process's group.protocol in its join "
                                "and restart events (edit the document)")
        scenario, schedule, policy, remote, name = migration
        settings = LiveSettings(tick_ms=args.tick_ms, group_protocol="consumer" if scenario.is_consumer_group else "classic",
                                assignor=args.assignor, clients=clients, migration=True, remote_assignor=remote,
                                migration_policy=args.migration_policy or policy)
        check_live(scenario, schedule, settings)
        with running_broker(bootstrap=args.bootstrap, migration_policy=settings.migration_policy) as broker:
            result = run_live(scenario, schedule, broker=broker, name=name, settings=settings)
        return _report_migration(args, scenario, schedule, result, settings)
    scenario, schedule, switched, assignor, name = resolve_simulation(args.history, args.events, (), None)
    settings = LiveSettings(tick_ms=args.tick_ms, group_protocol=args.group_protocol or "classic", assignor=args.assignor, clients=clients,
                            migration_policy=args.migration_policy)
    settings, note = choose_assignor(scenario, schedule, settings)
    if note:
        print(note, file=sys.stderr)
    check_live(scenario, schedule, settings)  # bad input is refused before a broker starts
    if args.compare:
        from ..live.compare import check_comparable, joins_as_members

        scenario, schedule = joins_as_members(scenario, schedule)
        check_comparable(scenario, schedule, settings)
    # compared step by step, the broker computes each target at once, as the simulator does (KIP-1263 off)
    at_once = bool(args.compare) and settings.group_protocol == "consumer"
    with running_broker(bootstrap=args.bootstrap, migration_policy=args.migration_policy,
                        assignment_at_once=at_once) as broker:
        result = run_live(scenario, schedule, broker=broker, name=name, settings=settings)
    compared = None
    if args.compare:
        from ..live.compare import compare_run, render_compare
        from ..live.compare_consumer import compare_consumer_run

        if settings.group_protocol == "consumer":  # the KIP-848 simulator's targets against the broker's
            compared = compare_consumer_run(scenario, schedule, result, settings)
        else:
            compared = compare_run(scenario, schedule, result, settings)

    def rendered(c) -> str:
        if getattr(c, "epochs", None) is None:
            return render_compare(c)
        from ..live.epochs import render_epochs  # group.protocol=consumer: member epochs step by step

        return render_compare(c) + "\n" + render_epochs(c.epochs)

    return _emit(args, result, compared, rendered)


def _emit(args: argparse.Namespace, result, compared, render_compared) -> int:
    """The run (``--json``: its record with the comparison under ``compare``; else rendered, the
    comparison after it); exit 0 only when every monitor held and the comparison agrees."""
    if args.json:
        doc = result.to_dict()
        if compared is not None:
            doc["compare"] = compared.to_dict()
        print_json(doc)
    else:
        from ..live.run import render_live

        sys.stdout.write(render_live(result))
        if compared is not None:
            sys.stdout.write("\n" + render_compared(compared))
    return 0 if result.ok and (compared is None or compared.agrees) else 1


def _report_migration(args: argparse.Namespace, scenario, schedule, result, settings) -> int:
    """A migration run's output: the run, and with ``--compare`` the migration simulator beside it."""
    compared = None
    if args.compare:
        from ..live.migration import compare_migration

        compared = compare_migration(scenario, schedule, result, settings)
    from ..live.migration import render_migration_comparison

    return _emit(args, result, compared, render_migration_comparison)


def add_live(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "live",
        help="run a scenario's history with real consumers on a real Kafka broker, and check what they reported",
        description="Start a one-node Kafka broker (resolved from Maven on first use and cached; or attach to one "
        "with --bootstrap), create the scenario's topics, start its members as real Kafka clients, apply its history "
        "(joins, leaves, crashes, stalls, subscription changes, restarts, partitions added) on a wall clock of "
        "--tick-ms per tick, and print every assignment, revocation and loss the members reported, the settled "
        "assignment, each settled assignment graded by the oracle as a sweep row is, and the monitors' verdicts. Exit 1 when a monitor fails, 2 on bad input or a broker that "
        "cannot start. Everything started is stopped before the command ends. See docs/live.md.",
    )
    p.add_argument("history", metavar="HISTORY",
                   help="bundled scenario name (its history from the catalogue), scenario file, or stickyproof.simulation/1 document; "
                   "a migration history (join/restart events naming a group_protocol) restarts its members with that group.protocol")
    p.add_argument("--events", metavar="FILE", help="events file (replaces the scenario's own history)")
    p.add_argument("--clients", default="java", metavar="LIST", help="member libraries, comma-separated, members assigned round-robin over them: "
                   "java, librdkafka (confluent-kafka), kafka-python, franz-go (default java)")
    p.add_argument("--assignor", metavar="NAME",
                   help="every member's assignor: range, roundrobin, sticky, cooperative-sticky (classic); uniform, range "
                   "(--group-protocol consumer, the broker's)")
    p.add_argument("--group-protocol", default=None, choices=("classic", "consumer"),
                   help="the members' group.protocol (default classic; consumer is KIP-848; a migration history names "
                   "each process's own)")
    p.add_argument("--tick-ms", type=positive_int, default=500, metavar="MS",
                   help="wall time of one simulator tick: heartbeat interval; the session and poll timeouts are "
                   "config.session_timeout ticks (default 500)")
    p.add_argument("--migration-policy", choices=MIGRATION_POLICY_NAMES, metavar="POLICY",
                   help="group.consumer.migration.policy of the broker the run starts: "
                   f"{', '.join(MIGRATION_POLICY_NAMES)} (default: a migration history's migration_policy, else Kafka's "
                   "default, bidirectional)")
    p.add_argument("--bootstrap", metavar="HOST:PORT", help="use this broker instead of starting one (topics get a run prefix)")
    p.add_argument("--compare", action="store_true",
                   help="also run the simulator on the same history (started fresh, as the live run starts) and print, "
                   "step by step, whether it reaches the same rebalances and settled assignments as the real coordinator "
                   "(Java members; under --group-protocol consumer the KIP-848 simulator, its targets against the "
                   "broker's; exit 1 on a disagreement)")
    add_json_flag(p, "print the run (timeline, assignment, verdicts) as JSON")
    p.set_defaults(func=_cmd_live)
