"""``check`` and ``grade``: an assignment against every invariant; an assignor against the proven optimum."""

from __future__ import annotations

import argparse

from ..grading import Limits
from ._common import SCENARIO_HELP, add_limit_flags, add_size_flags, limits_from, load_scenario_ref, print_json

GRADE_LIMITS = Limits()
"""``grade`` bounds nothing by default: one group, run by a person who can stop it."""


def _cmd_check(args: argparse.Namespace) -> int:
    from ..model import load_assignment
    from ..oracle.invariants import check_assignment

    scenario = load_scenario_ref(args.scenario, args)
    result = check_assignment(scenario, load_assignment(args.assignment), balance=args.balance)
    doc = result.to_dict()
    print_json({"valid": doc["valid"], "violations": doc["violations"], "balance": doc["balance"],
                "cooperative": doc["cooperative"], "deferred": doc["deferred"]})
    return 0 if result.valid else 1


def add_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="check an assignment against every invariant (Z3), with a witness per violation",
        description="Check ASSIGNMENT against SCENARIO: every subscribed partition assigned exactly once (cooperative: "
        "across assignment and revoking), only to subscribers, only existing partitions, balance per mode, cooperative "
        "safety, revoking lists only claimed partitions (models/invariants.md). Prints {valid, violations: [{invariant, "
        "witness}]}; exit 1 when any invariant fails.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    p.add_argument("assignment", help="assignment document (stickyproof.assignment/1), or '-' for standard input")
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default=None,
                   help="balance mode (default: uniform when all subscriptions are equal, else global)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (what check prints today)")
    add_size_flags(p)
    p.set_defaults(func=_cmd_check)


def _cmd_grade(args: argparse.Namespace) -> int:
    from ..grading import grade_assignment, grade_assignor

    limits = limits_from(args, GRADE_LIMITS)
    scenario = load_scenario_ref(args.scenario, args)
    if args.assignment:
        from ..model import load_assignment

        g = grade_assignment(scenario, load_assignment(args.assignment), name=args.assignment,
                             contract=args.balance, limits=limits)
    else:
        g = grade_assignor(scenario, args.assignor, direct=args.direct, contract=args.balance, limits=limits)
    print_json(g.to_dict())
    return 0 if g.valid else 1


def add_grade(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "grade",
        help="grade an assignor (or a given assignment) on a scenario against the proven optimum",
        description="Run the assignor through the leader path (or read --assignment), check every invariant, judge "
        "balance per mode, re-run for determinism and stability, and compare the partitions kept with the certified "
        "optimum over what the assignor's leader decoded (optimal_kept) and over the members' full state "
        "(optimal_kept_truth). Prints one JSON grade; exit 1 when it is not valid (an assignor that throws is "
        "recorded in 'error').",
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--assignor", help="built-in name, NAME@VERSION variant, or module.path:callable")
    who.add_argument("--assignment", metavar="FILE", help="grade this assignment document instead of running an assignor")
    p.add_argument("--direct", action="store_true", help="hand the scenario's own owned/generation to the assignor (no wire)")
    p.add_argument("--balance", choices=("uniform", "global", "kafka"), default=None,
                   help="the mode 'valid' is judged by (default: uniform on equal subscriptions, else global)")
    p.add_argument("--json", action="store_true", help="print the grade as JSON (what grade prints today)")
    add_limit_flags(p, GRADE_LIMITS, "assignor_seconds", "z3_query_seconds")
    add_size_flags(p)
    p.set_defaults(func=_cmd_grade)
