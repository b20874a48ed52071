"""The ``stickyproof`` command line: parses, calls one public function, prints.

Exit codes, for every command: 0 ok, 1 a check found a violation, 2 bad input or usage
(one line on stderr, never a traceback). Only the ``StickyproofError`` family is caught;
anything else is a bug and shows its traceback.

Each command is one ``_add_<name>(subparsers)`` function registering its parser and
handler; ``COMMANDS`` lists them in the order ``--help`` shows them. Heavy dependencies
(OR-Tools, Z3, PySpark) are imported inside handlers so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from . import __version__
from .errors import InvalidScenario, StickyproofError
from .model import Scenario, dump_json, load_scenario


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2 (not usage + message)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def print_json(doc: Any) -> None:
    sys.stdout.write(dump_json(doc) + "\n")


def load_scenario_ref(ref: str) -> Scenario:
    """A scenario file path, ``-`` for standard input, or the name of a bundled scenario."""
    if ref == "-" or Path(ref).exists():
        return load_scenario(ref)
    try:
        from .scenarios import named
    except ImportError:  # pragma: no cover - the named catalogue ships with the package
        named = None
    if named is not None and ref in named.names():
        return named.get(ref)
    raise InvalidScenario("", f"{ref}: no such file, and no bundled scenario of that name (see 'stickyproof scenarios list')")


def read_json_arg(ref: str) -> Any:
    """Read a JSON document from a file path or ``-``."""
    from .model import parse_json

    if ref == "-":
        return parse_json(sys.stdin.buffer.read(), "standard input")
    try:
        data = Path(ref).read_bytes()
    except OSError as exc:
        raise InvalidScenario("", f"{ref}: cannot read ({exc.strerror or exc})") from exc
    return parse_json(data, ref)


# ------------------------------------------------------------------------------------------
# validate


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


def _add_validate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a scenario file against the interchange format",
        description="Read a scenario (file, '-' or bundled name), enforce every rule of the format, "
        "and print a one-line summary. Exit 2 naming the JSON path of the first broken rule.",
    )
    p.add_argument("scenario", help="scenario file, '-' for standard input, or a bundled scenario name")
    p.set_defaults(func=_cmd_validate)


# ------------------------------------------------------------------------------------------
# decode / encode (consumer-protocol bytes)


def _cmd_decode(args: argparse.Namespace) -> int:
    from .wire.cli_json import decode_hex_to_json

    text = sys.stdin.read() if args.hex == ["-"] else " ".join(args.hex)
    print_json(decode_hex_to_json(args.message, text))
    return 0


def _add_decode(sub: argparse._SubParsersAction) -> None:
    from .wire.cli_json import MESSAGE_KINDS

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
    from .wire.cli_json import encode_json_to_hex

    print(encode_json_to_hex(args.message, read_json_arg(args.file), args.version))
    return 0


def _add_encode(sub: argparse._SubParsersAction) -> None:
    from .wire.cli_json import MESSAGE_KINDS

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


# ------------------------------------------------------------------------------------------
# scenarios


def _cmd_scenarios_list(args: argparse.Namespace) -> int:
    from .scenarios import named

    rows = named.table()
    width = max(len(r["name"]) for r in rows)
    print(f"{'name':<{width}}  {'members':>7}  {'partitions':>10}  description")
    for r in rows:
        print(f"{r['name']:<{width}}  {r['members']:>7}  {r['partitions']:>10}  {r['summary']}")
    return 0


def _cmd_scenarios_show(args: argparse.Namespace) -> int:
    from .model import scenario_to_dict
    from .scenarios import named

    print_json(scenario_to_dict(named.get(args.name)))
    return 0


def _cmd_scenarios_sample(args: argparse.Namespace) -> int:
    from .model import scenario_to_dict
    from .scenarios import Space, sample

    print_json(scenario_to_dict(sample(args.seed, args.index, Space.from_overrides(args.space))))
    return 0


def _add_scenarios(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scenarios",
        help="list, show and sample scenarios of the scenario space",
        description="The bundled named scenarios (from the KIPs and KAFKA_SEMANTICS.md) and the seeded "
        "sampler over the scenario space. A bundled name is accepted wherever a scenario file is.",
    )
    p.set_defaults(func=lambda _args: p.print_help(sys.stderr) or 2)
    actions = p.add_subparsers(title="actions", metavar="ACTION", parser_class=_Parser)
    ls = actions.add_parser("list", help="table of bundled scenarios: name, members, partitions, description")
    ls.set_defaults(func=_cmd_scenarios_list)
    show = actions.add_parser("show", help="write a bundled scenario as a scenario document")
    show.add_argument("name", help="bundled scenario name (see 'stickyproof scenarios list')")
    show.set_defaults(func=_cmd_scenarios_show)
    smp = actions.add_parser(
        "sample",
        help="write scenario INDEX of the sweep seeded SEED (reproducible from the two numbers)",
        description="Draw one scenario of the scenario space, reproducibly from (seed, index). "
        "Knobs: members, topics, partitions, zero_partition_topics, generation, stale, double_claims, "
        "unknown_generation, deleted_topic_claims, past_count_claims (N or LOW..HIGH); subscriptions, "
        "ownership, versions, protocols, racks, static, assignors, ids (comma-separated values).",
    )
    smp.add_argument("--seed", type=int, required=True, help="sweep seed")
    smp.add_argument("--index", type=int, required=True, help="scenario index within the sweep (>= 0)")
    smp.add_argument(
        "--space", action="append", default=[], metavar="KNOB=VALUE", help="restrict a knob, e.g. members=2..50 (repeatable)"
    )
    smp.set_defaults(func=_cmd_scenarios_sample)


# ------------------------------------------------------------------------------------------
# sweep / compare (the Spark grading pipeline; PySpark, pandas, rich load only when they run)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .sweep.console import progress_bar, summary_table
    from .sweep.run import run_sweep

    assignors = [a.strip() for a in args.assignors.split(",") if a.strip()] if args.assignors else None
    bar = progress_bar(Console(stderr=True))
    tasks: list[Any] = []

    def progress(done: float, total: int) -> None:
        if not tasks:  # the bar appears once grading starts, not before the input is checked
            bar.start()
            tasks.append(bar.add_task("grading", total=total))
        bar.update(tasks[0], completed=done, total=total)

    try:
        outcome = run_sweep(
            args.out,
            groups=args.groups,
            seed=args.seed,
            assignors=assignors,
            space=args.space or (),
            time_limit=args.time_limit,
            master=args.master,
            chunk_groups=args.chunk,
            progress=progress,
            report=not args.no_report,
            triage_seconds=args.triage_seconds,
        )
    finally:
        if tasks:
            bar.stop()
    if args.json:
        print_json(outcome.to_dict())
    else:
        console = Console(width=None if sys.stdout.isatty() else 150)  # piped: wide enough for the table
        console.print(summary_table(outcome.summary))
        g = outcome.grading
        failing = sum(line.failing for line in outcome.summary.lines if line.scenario_class == "all")
        print(
            f"graded {g.rows_computed} new rows ({g.rows_present} already present) in {g.seconds:.1f} s; "
            f"{failing} failing rows in {outcome.out / 'failures'}, {len(outcome.triage)} signatures triaged"
        )
        if outcome.report is not None:
            print(f"report: {outcome.report}")
    failing_rows = any(line.failing for line in outcome.summary.lines)
    return 1 if args.strict and failing_rows else 0


def _add_sweep(sub: argparse._SubParsersAction) -> None:
    from .sweep.run import DEFAULT_GROUPS, DEFAULT_SEED, DEFAULT_TIME_LIMIT
    from .sweep.session import DEFAULT_MASTER

    p = sub.add_parser(
        "sweep",
        help="grade sampled groups with every assignor on Spark; Parquet, summary, report",
        description="Sample GROUPS groups with the seeded sampler, grade every assignor on each through the leader "
        "path on Spark, and write DIR/grades (Parquet, one row per group x assignor), DIR/failures, "
        "DIR/report.html. Re-running on the same DIR computes only what is missing. Exit 0 when the sweep "
        "ran (with --strict: 1 when any row failed), 2 on bad input or a Spark failure.",
    )
    p.add_argument("--groups", type=int, default=DEFAULT_GROUPS, help=f"groups to sample (default {DEFAULT_GROUPS})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"sampler seed (default {DEFAULT_SEED})")
    p.add_argument("--out", required=True, help="output directory (created; re-used to resume)")
    p.add_argument("--master", default=DEFAULT_MASTER, help=f"Spark master URL (default {DEFAULT_MASTER})")
    p.add_argument("--assignors", default=None, help="comma-separated assignor names (default: every registered one)")
    p.add_argument(
        "--space", nargs="+", action="extend", metavar="KNOB=VALUE", help="sampler space overrides, e.g. members=2..20 versions=3,0"
    )
    p.add_argument(
        "--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help=f"oracle time limit per solve, seconds (default {DEFAULT_TIME_LIMIT:g})"
    )
    p.add_argument("--chunk", type=int, default=None, help="groups per committed chunk (default: automatic)")
    p.add_argument("--triage-seconds", type=float, default=30.0, help="time budget for shrinking failures (default 30)")
    p.add_argument("--no-report", action="store_true", help="skip triage and report.html")
    p.add_argument("--strict", action="store_true", help="exit 1 when any row failed")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON instead of the table")
    p.set_defaults(func=_cmd_sweep)


def _cmd_compare(args: argparse.Namespace) -> int:
    from .sweep.compare import compare_runs

    comparison = compare_runs(args.run_a, args.run_b)
    if args.json:
        print_json(comparison.to_dict())
    else:
        from rich.console import Console

        from .sweep.console import compare_table

        console = Console()
        for table in compare_table(comparison, limit=args.limit):
            console.print(table)
        print(f"{len(comparison.regressions)} regressions, {len(comparison.improvements)} improvements")
    return 1 if comparison.regressions else 0


def _add_compare(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="regressions and improvements of one sweep against another",
        description="On the (scenario, assignor) pairs two sweeps share (matched by scenario content hash), list "
        "where RUN_B is worse than RUN_A on validity, balance or stickiness, and where it is better. "
        "Exit 1 when there are regressions.",
    )
    p.add_argument("run_a", help="the baseline sweep directory")
    p.add_argument("run_b", help="the sweep directory to judge")
    p.add_argument("--json", action="store_true", help="print every regression and improvement as JSON")
    p.add_argument("--limit", type=int, default=20, help="regressions listed in the table (default 20)")
    p.set_defaults(func=_cmd_compare)


# ------------------------------------------------------------------------------------------
# assign / assignors


def _cmd_assign(args: argparse.Namespace) -> int:
    from .leader import lead
    from .model import assignment_to_dict

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


def _add_assign(sub: argparse._SubParsersAction) -> None:
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
        help="range, roundrobin, sticky[@2.2|@2.6], cooperative-sticky[@2.4|@2.6|@3.5.1], or module.path:callable "
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
    from .assignors.registry import list_assignors

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


def _add_assignors(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "assignors",
        help="list the built-in assignors, their historical variants and supported protocols",
        description="The built-in assignors (Kafka's range, roundrobin, sticky, cooperative-sticky) and the historical "
        "variants stickyproof reproduces, with the rebalance protocols each supports.",
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_cmd_assignors)


# ------------------------------------------------------------------------------------------
# simulate (the group protocol simulator, models/protocol.md)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .group.runner import run_simulation

    result = run_simulation(args.scenario, args.events, args.without or (), args.assignor)
    if args.json:
        print_json(result.to_dict())
    else:
        from .group.report import render_report

        sys.stdout.write(render_report(result, notes=not args.brief))
    return 0 if result.ok else 1


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    from .group.config import FEATURES

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


# ------------------------------------------------------------------------------------------
# solve (the optimality oracles, models/optimal-assignment.md)


def _cmd_solve(args: argparse.Namespace) -> int:
    from .oracle.solve import solve_document

    scenario = load_scenario_ref(args.scenario)
    if args.view:
        from .leader import decoded_view

        scenario = decoded_view(scenario, args.view)
    doc = solve_document(
        scenario, engine=args.engine, balance=args.balance, time_limit=args.time_limit, racks=args.racks
    )
    print_json(doc)
    return 1 if doc.get("agree") is False else 0


def _add_solve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "solve",
        help="compute the provably optimal balanced-then-sticky assignment of a scenario",
        description="Optimise over the members' stated owned partitions and generations (or, with --view, over what "
        "a leader running that assignor decodes): balance first, then partitions kept by their retainable claimant "
        "(models/optimal-assignment.md). Prints the assignment document with status, proven, kept, bound and "
        "seconds; 'proven' is true only with a solver proof or a checked flow certificate. With --engine both, exit 1 "
        "if two proven results disagree.",
    )
    p.add_argument("scenario", help="scenario file, '-' for standard input, or a bundled scenario name")
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default="global",
                   help="balance mode (default global; kafka is solved as global, which implies it)")
    p.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                   help="CP-SAT time limit in seconds (default 60; the flow has none)")
    p.add_argument("--engine", choices=("cpsat", "flow", "both"), default="cpsat",
                   help="cpsat (aggregated, flow-hinted), flow (min-cost flow with certificate), or both (default cpsat)")
    p.add_argument("--view", metavar="ASSIGNOR",
                   help="optimise over the owned partitions and generations this assignor's leader would decode")
    p.add_argument("--racks", action="store_true", help="add the rack-locality tier (O3) after stickiness")
    p.set_defaults(func=_cmd_solve)


# ------------------------------------------------------------------------------------------
# hunt (Hypothesis search for a failing group, shrunk; stickyproof.hunt)


def _cmd_hunt(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .hunt import hunt, regression_document, regression_name

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def progress(p: Any) -> None:
        if not tasks:
            bar.start()
        if p.phase not in tasks:
            label = f"hunting {args.assignor}" if p.phase == "search" else f"shrinking ({p.failure})"
            tasks[p.phase] = bar.add_task(label, total=p.total, note="")
        worst = "-" if p.worst_stickiness is None else f"{p.worst_stickiness:.3f}"
        note = f"worst stickiness {worst}"
        if p.phase == "shrink":
            note = f"{p.members} members, {p.partitions} partitions"
        bar.update(tasks[p.phase], completed=p.done, total=p.total, note=note)

    try:
        result = hunt(
            args.assignor,
            examples=args.examples,
            seed=args.seed,
            space=args.space or (),
            min_stickiness=args.min_stickiness,
            time_limit=args.time_limit,
            balance=args.balance,
            progress=progress,
        )
    finally:
        if tasks:
            bar.stop()
    saved = None
    if result.finding is not None and args.save:
        out = Path(args.save)
        try:
            out.mkdir(parents=True, exist_ok=True)
            saved = out / f"{regression_name(result)}.json"
            saved.write_text(dump_json(regression_document(result)) + "\n", encoding="utf-8")
        except OSError as exc:
            raise InvalidScenario("", f"{args.save}: cannot write the regression file ({exc.strerror or exc})") from exc
    if args.json:
        doc = result.to_dict()
        doc["saved"] = None if saved is None else str(saved)
        print_json(doc)
        return 1 if result.found else 0
    worst = "none graded" if result.worst_stickiness is None else f"{result.worst_stickiness:.4f}"
    if result.finding is None:
        print(
            f"no failure: {result.assignor} passed {result.tried} examples (seed {result.seed}); "
            f"worst stickiness seen {worst}; {result.seconds:.1f} s"
        )
        if result.tried < result.examples:
            print(
                f"note: Hypothesis stopped after {result.tried} of {result.examples} examples: most groups it drew "
                "were left out (cooperative groups with v0 claims, see stickyproof.hunt.claims_invisible)"
            )
        return 0
    f = result.finding
    size = f.to_dict()["size"]
    print(
        f"FAILED {f.failure}: {result.assignor} after {result.tried} examples (seed {result.seed}); "
        f"shrunk to {size['members']} members, {size['partitions']} partitions, {size['claims']} claims "
        f"in {f.shrink_evaluations} evaluations"
    )
    print(f"violated: {', '.join(f.failures)}")
    print("witness: " + json.dumps(f.to_dict()["witness"], sort_keys=True))
    print("minimal scenario:")
    print_json(f.to_dict()["scenario"])
    if saved is not None:
        print(f"saved: {saved}")
    print(f"repeat: {result.command()}")
    return 1


def _add_hunt(sub: argparse._SubParsersAction) -> None:
    from .hunt import DEFAULT_EXAMPLES, DEFAULT_TIME_LIMIT

    p = sub.add_parser(
        "hunt",
        help="search generated groups for one the assignor gets wrong, shrink it, save it as a regression",
        description="Hypothesis draws groups from the scenario space and grades the assignor on each through the "
        "leader path; the first group on which it breaks an invariant, raises, runs past the time limit or keeps "
        "less than --min-stickiness of the optimal stickiness is shrunk by delta debugging and printed with the "
        "violated invariant and the oracle's witness. The same --seed gives the same hunt. Exit 1 when a failure "
        "was found, 0 when every example passed, 2 on bad input.",
    )
    p.add_argument("--assignor", required=True, metavar="NAME",
                   help="a built-in assignor (see 'stickyproof assignors') or module.path:callable")
    p.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES,
                   help=f"groups to draw at most (default {DEFAULT_EXAMPLES})")
    p.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    p.add_argument("--space", nargs="+", action="extend", metavar="KNOB=VALUE",
                   help="restrict the scenario space, e.g. members=2..6 versions=3,2 (repeatable)")
    p.add_argument("--min-stickiness", type=float, default=None, metavar="R",
                   help="also fail when the assignor keeps less than R (0..1) of the optimal stickiness")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="S",
                   help=f"seconds one assignor call may take (default {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default=None,
                   help="balance mode for the imbalance invariant (default: uniform on equal subscriptions, else global)")
    p.add_argument("--save", metavar="DIR",
                   help="write the shrunk group as a regression file (tests/regressions/README.md format) into DIR")
    p.add_argument("--json", action="store_true", help="print the hunt result as JSON")
    p.set_defaults(func=_cmd_hunt)


# ------------------------------------------------------------------------------------------
# check, grade


def _cmd_check(args: argparse.Namespace) -> int:
    from .model import load_assignment
    from .oracle.invariants import check_assignment

    scenario = load_scenario_ref(args.scenario)
    result = check_assignment(scenario, load_assignment(args.assignment), balance=args.balance)
    doc = result.to_dict()
    print_json({"valid": doc["valid"], "violations": doc["violations"], "balance": doc["balance"],
                "cooperative": doc["cooperative"], "deferred": doc["deferred"]})
    return 0 if result.valid else 1


def _add_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="check an assignment against every invariant (Z3), with a witness per violation",
        description="Check ASSIGNMENT against SCENARIO: every subscribed partition assigned exactly once (cooperative: "
        "across assignment and revoking), only to subscribers, only existing partitions, balance per mode, cooperative "
        "safety, revoking lists only claimed partitions (models/invariants.md). Prints {valid, violations: [{invariant, "
        "witness}]}; exit 1 when any invariant fails.",
    )
    p.add_argument("scenario", help="scenario file, '-' for standard input, or a bundled scenario name")
    p.add_argument("assignment", help="assignment document (stickyproof.assignment/1)")
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default=None,
                   help="balance mode (default: uniform when all subscriptions are equal, else global)")
    p.set_defaults(func=_cmd_check)


def _cmd_grade(args: argparse.Namespace) -> int:
    from .oracle.grade import grade

    scenario = load_scenario_ref(args.scenario)
    if args.assignment:
        from .model import load_assignment

        g = grade(scenario, assignment=load_assignment(args.assignment), assignor=args.assignment,
                  time_limit=args.time_limit, balance=args.balance)
    else:
        from .assignors.registry import get_assignor
        from .leader import decoded_view, lead

        info = get_assignor(args.assignor)
        view = scenario if args.direct else decoded_view(scenario, info)
        g = grade(scenario, run=lambda s: lead(s, info, direct=args.direct).assignment, view=view,
                  assignor=info.name, time_limit=args.time_limit, balance=args.balance)
    print_json(g.to_dict())
    return 0 if g.valid else 1


def _add_grade(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "grade",
        help="grade an assignor (or a given assignment) on a scenario against the proven optimum",
        description="Run the assignor through the leader path (or read --assignment), check every invariant, judge "
        "balance per mode, re-run for determinism and stability, and compare the partitions kept with the certified "
        "optimum over what the assignor's leader decoded (optimal_kept) and over the members' full state "
        "(optimal_kept_truth). Prints one JSON grade; exit 1 when it is not valid (an assignor that throws is "
        "recorded in 'error').",
    )
    p.add_argument("scenario", help="scenario file, '-' for standard input, or a bundled scenario name")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--assignor", help="built-in name, NAME@VERSION variant, or module.path:callable")
    who.add_argument("--assignment", metavar="FILE", help="grade this assignment document instead of running an assignor")
    p.add_argument("--direct", action="store_true", help="hand the scenario's own owned/generation to the assignor (no wire)")
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default=None,
                   help="the mode 'valid' is judged by (default: uniform on equal subscriptions, else global)")
    p.add_argument("--time-limit", type=float, default=None, metavar="S", help="seconds per Z3 query of the invariant check")
    p.set_defaults(func=_cmd_grade)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_validate,
    _add_scenarios,
    _add_decode,
    _add_encode,
    _add_sweep,
    _add_compare,
    _add_assign,
    _add_assignors,
    _add_simulate,
    _add_solve,
    _add_check,
    _add_grade,
    _add_hunt,
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stickyproof",
        description="stickyproof: grade Kafka consumer-group partition assignors against provably optimal "
        "assignments and protocol invariants. Exit codes: 0 ok, 1 a violation found, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"stickyproof {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except StickyproofError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(f"{type(exc).__name__}: {message}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover - `stickyproof ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
