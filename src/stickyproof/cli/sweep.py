"""``sweep`` and ``compare``: the Spark grading pipeline (PySpark, pandas, rich load only when they run)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from ._common import add_json_flag, add_limit_flags, limits_from, nonnegative_int, positive_int, print_json


def _cmd_sweep(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..sweep.console import ProgressLines, progress_bar, protocols_lines, running_note, summary_lines, verdict_text
    from ..sweep.findings import TITLES
    from ..sweep.run import DEFAULT_LIMITS, run_sweep
    from ..sweep.summary import summarize
    from . import interrupts

    assignors = [a.strip() for a in args.assignors.split(",") if a.strip()] if args.assignors else None
    terminal = sys.stderr.isatty()
    bar = progress_bar(Console(stderr=True, quiet=not terminal))  # no bar (nor its blank line) in a log
    lines = ProgressLines()  # in a log: a plain line every PROGRESS_SECONDS instead
    tasks: list[Any] = []
    latest: list[Any] = []

    def kept() -> str:
        if not latest:
            return ""
        return f"{latest[-1].kept} of {latest[-1].owed} tasks kept in {args.out}; run the same command to resume"

    def status(now: Any) -> None:
        latest.append(now)
        del latest[:-1]
        if not now.started:  # the JVM takes seconds to start (a minute on a loaded machine): say so
            sys.stderr.write(f"starting Spark ({args.master}) for {now.total} tasks; its output goes to "
                             f"{Path(args.out) / 'spark.log'}\n")
            sys.stderr.flush()
            return
        if now.started and not tasks:  # grading has begun (first call: the main thread, Spark up)
            _quiet_spark_on_interrupt()
            tasks.append(bar.add_task("grading", total=now.total))
            if terminal:
                bar.start()
        if not terminal:
            line = lines.line(now)
            if line is not None:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
        elif tasks:
            from rich.markup import escape  # an assignor name may hold [brackets]

            bar.update(tasks[0], completed=now.done, total=now.total,
                       description=escape(running_note(now.running)) or "grading")

    interrupts.explain(kept)
    try:
        outcome = run_sweep(
            args.out,
            source=args.source,
            count=args.count,
            seed=args.seed,
            scale=args.scale,
            assignors=assignors,
            space=args.space or (),
            direct=args.direct,
            limits=limits_from(args, DEFAULT_LIMITS),
            master=args.master,
            chunk_tasks=args.chunk,
            historical_small=not args.historical_all_scales,
            status=status,
            report=not args.no_report,
        )
    except BaseException:
        if terminal and tasks:
            bar.stop()
        raise  # Ctrl-C: cli.main says ``interrupted: N of M tasks kept ...`` (interrupts.explain)
    if terminal and tasks:
        bar.stop()
    interrupts.explain(None)
    summary = outcome.summary if args.by is None else summarize(outcome.out, by=args.by)
    if args.json:
        doc = outcome.to_dict()
        doc["summary"] = summary.to_dict()
        print_json(doc)
    else:
        protocols = protocols_lines(summary)
        for line in (*verdict_text(summary), "", *summary_lines(summary, outcome.names),  # the answer first, then the figures
                     *([""] + protocols if protocols else [])):
            print(line)
        g = outcome.grading
        print(f"{g.tasks_computed} tasks run ({g.tasks_present} already present), {g.rows_written} rows, "
              f"in {g.seconds:.1f} s")
        cases = {(c.section, c.rule): c for c in outcome.triage}
        for finding in outcome.findings:
            who = ", ".join(sorted(finding.assignors))
            head = f"{TITLES[finding.section]}: {finding.rule} ({who}): {finding.rows} rows, {finding.histories} histories"
            print(textwrap.shorten(head, 120, placeholder="..."))
            case = cases.get((finding.section, finding.rule))
            if case is not None and finding.section in ("kafka-bug", "unexpected"):
                for command in (case.command, case.history_command):
                    if command:
                        print(f"  replay: {command}")
        if not outcome.findings:
            print("no failures")
        if outcome.report is not None:
            print(f"report: {outcome.report}")
    if args.junit:
        from ..junit import sweep_cases, write_junit

        write_junit(args.junit, "stickyproof sweep", sweep_cases(outcome.out))
    unexpected = any(f.section == "unexpected" for f in outcome.findings)
    return 1 if args.strict and unexpected else 0


def _quiet_spark_on_interrupt() -> None:
    """Ctrl-C during grading: PySpark's own SIGINT handler cancels every job, and Spark logs each
    cancelled task with its Java stack (dozens of lines). Switch Spark's logging off first, then let
    PySpark cancel (committed chunks stay; the next run resumes), so the command ends with exit 130
    and the one line ``interrupted``. Installed from the first progress call, which the main thread
    makes once the session is up."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return  # (the poller thread's call: the main thread installs it after the next commit)
    from pyspark import SparkContext

    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: Any) -> None:
        context = SparkContext._active_spark_context
        if context is not None:
            try:  # every logger, the ones configured at their own level included
                jvm = context._jvm
                jvm.org.apache.logging.log4j.core.config.Configurator.setAllLevels("", jvm.org.apache.logging.log4j.Level.OFF)
            except Exception:  # noqa: BLE001 - the JVM may already be going away
                pass
        if callable(previous):
            previous(signum, frame)  # PySpark's: cancels all jobs, raises KeyboardInterrupt
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)


def add_sweep(sub: argparse._SubParsersAction) -> None:
    from ..scenarios.space import knobs_help
    from ..sweep.rows import SOURCES, SWEEP_SCALES
    from ..sweep.run import DEFAULT_GROUPS, DEFAULT_HISTORIES, DEFAULT_LIMITS, DEFAULT_SCALE, DEFAULT_SEED
    from ..sweep.session import DEFAULT_MASTER
    from ..sweep.summary import CLASSES

    p = sub.add_parser(
        "sweep",
        help="run group histories (or sampled groups) with every assignor on Spark; Parquet, summary, report",
        description=textwrap.fill("Draw COUNT group histories (--source histories, the default) and run each through "
        "the group protocol with every assignor, grading every rebalance's leader input against the assignor's own "
        "contract and what members really held; or grade COUNT groups of the adversarial sampler (--source "
        "adversarial, shaped by --space). Writes DIR/grades (Parquet), DIR/failures, DIR/histories, "
        "DIR/report.html; prints one line per assignor and the failures by kind (known Kafka hazards, Kafka bugs on "
        "reachable states, historical incidents, unexpected). Re-running on the same DIR computes only what is "
        "missing. Exit 0 when the sweep ran (with --strict: 1 when a failure is unexpected), 2 on bad input or a "
        "Spark failure, 130 on Ctrl-C (committed chunks stay). See docs/sweep.md.", 100),
        epilog=knobs_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--source", choices=SOURCES, default=SOURCES[0], help="histories (reachable states) or adversarial")
    p.add_argument("--count", "--groups", dest="count", type=positive_int, default=None,
                   help=f"histories (default {DEFAULT_HISTORIES}) or sampled groups (default {DEFAULT_GROUPS})")
    p.add_argument("--scale", choices=SWEEP_SCALES, default=DEFAULT_SCALE,
                   help=f"history size preset (default {DEFAULT_SCALE}: history 0 large, every 10th medium, the rest "
                   "small; mix: every 100th large)")
    p.add_argument("--seed", type=nonnegative_int, default=DEFAULT_SEED, help=f"sweep seed (default {DEFAULT_SEED})")
    p.add_argument("--out", required=True, help="output directory (created; re-used to resume)")
    p.add_argument("--master", default=DEFAULT_MASTER, help=f"Spark master URL (default {DEFAULT_MASTER})")
    p.add_argument("--assignors", default=None,
                   help="comma-separated assignor names (default: every registered classic one, and uniform, "
                        "uniform@4.0.0, consumer-range on consumer-group histories)")
    p.add_argument("--by", choices=CLASSES, default=None, help="also print one line per assignor x this class")
    p.add_argument(
        "--space", nargs="+", action="extend", metavar="KNOB=VALUE",
        help="adversarial sampler overrides, e.g. members=2..20 past_count=0 (the knobs are listed below)"
    )
    p.add_argument("--direct", action="store_true", help="hand the assignor the group's own fields (no wire)")
    p.add_argument("--historical-all-scales", action="store_true",
                   help="run historical releases on every history (default: the first 20 below large)")
    add_limit_flags(p, DEFAULT_LIMITS, "assignor_seconds", "z3_query_seconds", "cpsat_work", "cpsat_seconds",
                    "shrink_seconds", "triage_seconds", "shrink_evaluations")
    p.add_argument("--chunk", type=positive_int, default=None, help="tasks per committed chunk (default: automatic)")
    p.add_argument("--no-report", action="store_true", help="skip triage and report.html")
    p.add_argument("--strict", action="store_true", help="exit 1 when any failure is unexpected")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML for CI: one test case per assignor and history (or sampled group), "
                   "failing with the failure kind and the replay command")
    add_json_flag(p, "print the outcome as JSON instead of the table")
    p.set_defaults(func=_cmd_sweep)


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..sweep.compare import compare_runs

    comparison = compare_runs(args.run_a, args.run_b)
    if args.json:
        print_json(comparison.to_dict())
    else:
        from rich.console import Console

        from ..sweep.console import compare_table

        console = Console()
        for table in compare_table(comparison, limit=args.limit):
            console.print(table)
        print(f"{len(comparison.regressions)} regressions, {len(comparison.improvements)} improvements")
    return 1 if comparison.regressions else 0


def add_compare(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="regressions and improvements of one sweep against another",
        description="On the (scenario, assignor) pairs two sweeps share (matched by scenario content hash), list "
        "where RUN_B is worse than RUN_A on validity, balance or stickiness, and where it is better. "
        "Exit 1 when there are regressions; exit 2 when the two sweeps share no pair (nothing was compared).",
    )
    p.add_argument("run_a", help="the baseline sweep directory")
    p.add_argument("run_b", help="the sweep directory to judge")
    add_json_flag(p, "print every regression and improvement as JSON")
    p.add_argument("--limit", type=nonnegative_int, default=20, help="regressions listed in the table (default 20)")
    p.set_defaults(func=_cmd_compare)
