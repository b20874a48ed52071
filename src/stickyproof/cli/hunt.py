"""``hunt``: search generated groups for one the assignor gets wrong (``stickyproof.hunt``)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from ..model import dump_json
from ._common import add_json_flag, add_limit_flags, any_int, fraction, limits_from, positive_int, print_json


def _cmd_hunt(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..hunt import DEFAULT_LIMITS, hunt, regression_document, regression_name, render_result

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True, quiet=not sys.stderr.isatty()),  # no bar (nor its blank line) in a log
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

    limits = limits_from(args, DEFAULT_LIMITS)
    _check_space(args.space or ())
    try:
        result = hunt(
            args.assignor,
            examples=args.examples,
            seed=args.seed,
            space=args.space or (),
            min_stickiness=args.min_stickiness,
            contract=args.balance,
            direct=args.direct,
            limits=limits,
            keep_going=args.keep_going,
            skip=tuple(args.skip or ()),
            reference=args.reference,
            progress=progress,
        )
    finally:
        if tasks:
            bar.stop()
    saved: list[str] = []
    save_error = None
    if result.findings and args.save:
        # The findings are printed whatever happens here: a bad --save path must not lose them.
        try:
            out = Path(args.save)
            out.mkdir(parents=True, exist_ok=True)
            for finding in result.findings:
                target = out / f"{regression_name(result, finding)}.json"
                target.write_text(dump_json(regression_document(result, finding)) + "\n", encoding="utf-8")
                saved.append(str(target))
        except OSError as exc:
            save_error = f"{args.save}: cannot write the regression file ({exc.strerror or exc})"
    if args.json:
        doc = result.to_dict()
        doc["saved"] = saved
        if save_error:
            doc["save_error"] = save_error
        print_json(doc)
    else:
        sys.stdout.write(render_result(result, saved=saved))
    if save_error:
        sys.stderr.write(f"warning: {save_error}; the finding is printed above\n")
    if args.junit:
        from ..junit import hunt_cases, write_junit

        write_junit(args.junit, "stickyproof hunt", hunt_cases(result, saved=saved))
    return 1 if result.found else 0


def _check_space(overrides: Any) -> None:
    """Refuse, before Hypothesis starts, a space whose smallest group Hypothesis could never draw."""
    from ..scenarios.sampler import Space, check_hypothesis_budget

    check_hypothesis_budget(Space.from_overrides(list(overrides)))


def add_hunt(sub: argparse._SubParsersAction) -> None:
    from ..hunt import DEFAULT_EXAMPLES, DEFAULT_LIMITS
    from ..scenarios.space import knobs_help

    p = sub.add_parser(
        "hunt",
        help="search generated groups for one the assignor gets wrong, shrink it, save it as a regression",
        description=textwrap.fill("Hypothesis draws groups from the scenario space and grades the assignor on each through the "
        "leader path; the first group on which it breaks an invariant, raises, runs past the time limit or keeps "
        "less than --min-stickiness of the optimal stickiness is shrunk by delta debugging and printed with the "
        "violated invariant and the oracle's witness. The same --seed gives the same hunt. Exit 1 when a failure "
        "was found, 0 when every example passed, 2 on bad input. A server-side (KIP-848) assignor (uniform, "
        "consumer-range, uniform@4.0.0, ...) is hunted on consumer groups instead, held to its server-side contract; "
        "only the members, topics and partitions knobs shape them.", 100),
        epilog=knobs_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--assignor", required=True, metavar="NAME",
                   help="a built-in assignor (see 'stickyproof assignors') or module.path:callable")
    p.add_argument("--examples", type=positive_int, default=DEFAULT_EXAMPLES,
                   help=f"groups to draw at most (default {DEFAULT_EXAMPLES})")
    p.add_argument("--seed", type=any_int, default=0, help="Hypothesis seed (default 0)")
    p.add_argument("--space", nargs="+", action="extend", metavar="KNOB=VALUE",
                   help="restrict the scenario space, e.g. members=2..6 versions=3,2 (the knobs are listed below)")
    p.add_argument("--min-stickiness", type=fraction, default=None, metavar="R",
                   help="also fail when the assignor keeps less than R (0..1) of the optimal stickiness")
    add_limit_flags(p, DEFAULT_LIMITS, "assignor_seconds", "z3_query_seconds", "cpsat_work", "cpsat_seconds",
                    "shrink_seconds", "shrink_evaluations")
    p.add_argument("--direct", action="store_true",
                   help="hand the assignor each member's owned partitions and generation as stated (no wire)")
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default=None,
                   help="balance mode for the imbalance invariant (default: uniform on equal subscriptions, else global)")
    p.add_argument("--keep-going", action="store_true",
                   help="search every example and keep one minimal group per failure signature (invariant, or "
                   "exception type and message shape) instead of stopping at the first")
    p.add_argument("--skip", action="append", metavar="KIND",
                   help="leave out a failure class already understood: an invariant id (unstable, ...), error, "
                   "time-limit, stickiness, or error:TYPE (repeatable)")
    p.add_argument("--reference", metavar="NAME",
                   help="judge a second assignor on every group: a failure counts only where the graded one fails "
                   "and NAME does not; the largest shortfall in kept partitions against NAME is reported")
    p.add_argument("--save", metavar="DIR",
                   help="write the shrunk group as a regression file (tests/regressions/README.md format) into DIR")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML for CI: one test case per finding (its kind, witness and replay "
                   "command), or one passing case")
    add_json_flag(p, "print the hunt result as JSON")
    p.set_defaults(func=_cmd_hunt)
