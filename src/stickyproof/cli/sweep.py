"""``sweep`` and ``compare``: the Spark grading pipeline (PySpark, pandas, rich load only when they run)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from ._common import add_json_flag, add_limit_flags, limits_from, nonnegative_int, positive_int, print_json


def _cmd_sweep(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..sweep.console import progress_bar, summary_table
    from ..sweep.run import DEFAULT_LIMITS, run_sweep

    assignors = [a.strip() for a in args.assignors.split(",") if a.strip()] if args.assignors else None
    bar = progress_bar(Console(stderr=True, quiet=not sys.stderr.isatty()))  # no bar (nor its blank line) in a log
    tasks: list[Any] = []

    def progress(done: float, total: int) -> None:
        if not tasks:  # the bar appears once grading starts, not before the input is checked
            _quiet_spark_on_interrupt()
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
            limits=limits_from(args, DEFAULT_LIMITS),
            master=args.master,
            chunk_groups=args.chunk,
            progress=progress,
            report=not args.no_report,
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


def _quiet_spark_on_interrupt() -> None:
    """Ctrl-C during grading: PySpark's own SIGINT handler cancels every job, and Spark logs each
    cancelled task with its Java stack (dozens of lines). Switch Spark's logging off first, then let
    PySpark cancel (committed chunks stay; the next run resumes), so the command ends with exit 130
    and the one line ``interrupted``. Installed from the first progress call, which the main thread
    makes once the session is up."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
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
    from ..sweep.run import DEFAULT_GROUPS, DEFAULT_LIMITS, DEFAULT_SEED
    from ..sweep.session import DEFAULT_MASTER

    p = sub.add_parser(
        "sweep",
        help="grade sampled groups with every assignor on Spark; Parquet, summary, report",
        description=textwrap.fill("Sample GROUPS groups with the seeded sampler, grade every assignor on each through the leader "
        "path on Spark, and write DIR/grades (Parquet, one row per group x assignor), DIR/failures, "
        "DIR/report.html. Re-running on the same DIR computes only what is missing. Exit 0 when the sweep "
        "ran (with --strict: 1 when any row failed), 2 on bad input or a Spark failure. Ctrl-C stops it with exit "
        "130, keeping every chunk already committed (re-run the same command to resume).", 100),
        epilog=knobs_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--groups", type=positive_int, default=DEFAULT_GROUPS, help=f"groups to sample (default {DEFAULT_GROUPS})")
    p.add_argument("--seed", type=nonnegative_int, default=DEFAULT_SEED, help=f"sampler seed (default {DEFAULT_SEED})")
    p.add_argument("--out", required=True, help="output directory (created; re-used to resume)")
    p.add_argument("--master", default=DEFAULT_MASTER, help=f"Spark master URL (default {DEFAULT_MASTER})")
    p.add_argument("--assignors", default=None, help="comma-separated assignor names (default: every registered one)")
    p.add_argument(
        "--space", nargs="+", action="extend", metavar="KNOB=VALUE",
        help="sampler space overrides, e.g. members=2..20 versions=3,0 (the knobs are listed below)"
    )
    add_limit_flags(p, DEFAULT_LIMITS, "assignor_seconds", "z3_query_seconds", "shrink_seconds", "shrink_evaluations")
    p.add_argument("--chunk", type=positive_int, default=None, help="groups per committed chunk (default: automatic)")
    p.add_argument("--no-report", action="store_true", help="skip triage and report.html")
    p.add_argument("--strict", action="store_true", help="exit 1 when any row failed")
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
