"""``check`` and ``grade``: an assignment against every invariant; an assignor against the proven optimum."""

from __future__ import annotations

import argparse

import sys
from typing import Any

from ..grading import Limits
from ._common import (SCENARIO_HELP, add_limit_flags, add_protocol_flag, add_size_flags, limits_from, load_scenario_ref,
                      print_json, with_protocol)

BALANCE_CHOICES = ("uniform", "global", "kafka", "per-topic", "pairwise")

GRADE_LIMITS = Limits()
"""``grade`` bounds nothing by default: one group, run by a person who can stop it."""


def _cmd_check(args: argparse.Namespace) -> int:
    from ..model import load_assignment
    from ..oracle.invariants import check_assignment

    scenario = load_scenario_ref(args.scenario, args)
    result = check_assignment(scenario, load_assignment(args.assignment), balance=args.balance)
    doc = result.to_dict()
    if _human(args):
        print(verdict_line(doc["valid"], doc["violations"]))
    else:
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
    p.add_argument("--balance", choices=BALANCE_CHOICES, default=None,
                   help="balance mode (default: uniform when all subscriptions are equal, else global)")
    p.add_argument("--json", action="store_true", help="print the JSON record even on a terminal (it is printed when piped)")
    add_size_flags(p)
    p.set_defaults(func=_cmd_check)


def _cmd_grade(args: argparse.Namespace) -> int:
    from ..grading import grade_assignment, grade_assignor

    limits = limits_from(args, GRADE_LIMITS)
    scenario = load_scenario_ref(args.scenario, args)
    chosen = (args.assignor,) if args.assignor else ()
    scenario = with_protocol(scenario, args.protocol, {m.id: chosen for m in scenario.members})
    if args.assignment:
        from ..model import load_assignment

        g = grade_assignment(scenario, load_assignment(args.assignment), name=args.assignment,
                             balance=args.balance, limits=limits)
    else:
        g = grade_assignor(scenario, args.assignor, direct=args.direct, balance=args.balance, limits=limits)
    doc = g.to_dict()
    if _human(args):
        print(grade_line(doc))
    else:
        print_json(doc)
    return 0 if g.valid else 1


def _human(args: argparse.Namespace) -> bool:
    """A person at a terminal reads one line; a pipe or ``--json`` gets the JSON record."""
    return not args.json and sys.stdout.isatty()


def _tp(p: Any) -> str:
    return f"{p[0]}-{p[1]}" if isinstance(p, (list, tuple)) and len(p) == 2 else str(p)


def _witness(invariant: str, w: dict[str, Any]) -> str:
    """A violation's witness in a few words."""
    if "partition" in w and invariant in ("unassigned", "duplicate", "nonexistent", "unsubscribed", "cooperative-unsafe"):
        who = w.get("member") or w.get("assigned_to") or ", ".join(h.get("member", "") for h in w.get("holders", []))
        return f"{_tp(w['partition'])}{' to ' + who if who else ''}"
    if invariant == "imbalance":
        if "more_loaded" in w:
            return f"{w['more_loaded']} holds {w['more_load']}, {w['less_loaded']} {w['less_load']} ({w.get('mode')})"
        if "member" in w:
            return f"{w['member']} holds {w.get('load', w.get('count'))} ({w.get('mode')})"
        return str(w.get("mode", ""))
    if "partition" in w:
        return f"{_tp(w['partition'])}: {w.get('first')} then {w.get('second')}"
    return ", ".join(f"{k}={v}" for k, v in w.items())[:80]


NOT_A_MEMBER = "not a member of the group"
"""How the verdict line names an ``unsubscribed`` witness whose member is not in the group (``in_group`` false)."""


def verdict_line(valid: bool, violations: list[dict[str, Any]]) -> str:
    if valid:
        return "valid"
    seen: dict[str, str] = {}
    for v in violations:
        witness = v.get("witness") or {}
        # An id the group does not have (a member that left, or came back under a new member id) is
        # no subscription problem: say so, rather than calling it "unsubscribed".
        name = NOT_A_MEMBER if v["invariant"] == "unsubscribed" and witness.get("in_group") is False else v["invariant"]
        seen.setdefault(name, _witness(v["invariant"], witness))
    return "INVALID: " + "; ".join(f"{name} ({w})" if w else name for name, w in seen.items())


_PROMISE = {
    "kafka": "Kafka-balanced",
    "per-topic": "balanced per topic",
    "uniform-if-equal": "balanced as round robin promises",
    "global": "globally balanced",
    "none": "no balance promised",
}


_KNOWN = {"historical": "known bug of the release", "kafka-bug": "known Kafka bug", "hazard": "known Kafka hazard"}


def _known(labels: list[dict[str, Any]]) -> str:
    """`` — known Kafka hazard K1 (docs/grade.md)``: what the failures match, once per rule
    (the JSON grade has every label with its text)."""
    seen = dict.fromkeys((label["category"], label["rule"]) for label in labels)
    if not seen:
        return ""
    return " — " + "; ".join(f"{_KNOWN.get(c, c)} {r}" for c, r in seen) + " (docs/grade.md)"


def grade_line(doc: dict[str, Any]) -> str:
    """``valid; Kafka-balanced; kept 7 of the 8 an optimal assignment keeps; t-3 moved unnecessarily``,
    ending ``(assignor NAME)`` when the assignor's program names itself (an ``exec:`` hello)."""
    named = f" (assignor {doc['assignor_name']})" if doc.get("assignor_name") else ""
    if doc.get("error"):
        return f"FAILED: {doc['assignor']}{named} gave no assignment: {doc['error']}"
    if not doc["valid"]:
        return verdict_line(False, doc["violations"]) + _known(doc.get("hazards") or []) + named
    if doc.get("consumer") is not None:
        return consumer_grade_line(doc) + named
    parts = ["valid", _PROMISE.get(doc["contract"], f"contract {doc['contract']}")]
    kept, best = doc["kept"], doc["optimal_kept"]
    if best is not None:
        bound = "" if doc["proven"] else " (not proven optimal)"
        parts.append(f"kept {kept} of the {best} an optimal assignment keeps{bound}" if kept < best
                     else f"kept all {best} an optimal assignment keeps")
    moved = [_tp(p) for p in doc.get("unnecessary_moves", [])]
    if moved:
        shown = ", ".join(moved[:5]) + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
        parts.append(f"{shown} moved unnecessarily")
    return "; ".join(parts) + named


_TIER_WORDS = {"balance": ("sum_squares", "balance"), "spread": ("spread", "per-topic spread"),
               "racks": ("rack_local", "rack locality"), "kept": ("kept", "partitions kept")}


def consumer_grade_line(doc: dict[str, Any]) -> str:
    """A consumer group's valid grade: ``valid; uniform-homogeneous kept its promise (...); fixed point
    held; kept 5 of the 5 a balanced assignment keeps; at the proven optimum`` (or the first tier it
    falls short in, and by how much)."""
    rec = doc["consumer"]
    parts = ["valid"]
    if rec.get("contract"):
        parts.append(f"{rec['contract']} kept its promise ({rec['promise']})")
    if rec.get("fixed_point_owed"):
        parts.append("balanced input returned unchanged")
    if rec.get("stable") is False:
        parts.append("not stable: a re-run on its own answer moves partitions")
    if doc["optimal_kept"] is not None:
        parts.append(f"kept {doc['kept']} of the {doc['optimal_kept']} a balanced assignment keeps")
    tier = rec.get("first_worse_tier")
    proven = "proven" if rec.get("optimum", {}).get("proven") else "unproven"
    if rec.get("at_optimum"):
        parts.append(f"at the {proven} optimum (balance, per-topic spread, rack locality, kept)")
    elif tier is not None:
        key, words = _TIER_WORDS[tier]
        parts.append(f"short of the {proven} optimum first in {words} (by {rec['gap'][key]})")
    return "; ".join(parts)


def add_grade(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "grade",
        help="grade an assignor (or a given assignment) on a scenario against the proven optimum",
        description="Run the assignor through the leader path (or read --assignment), check every invariant and the "
        "balance the assignor promises (its contract: per topic for range, on equal subscriptions for round robin, "
        "Kafka's for the sticky family and by default), re-run for determinism and stability, and compare the "
        "partitions kept with the most an assignment balanced as promised keeps over what the members really owned "
        "(optimal_kept; the unnecessary moves are what that optimum keeps and the assignor moved). On a terminal "
        "prints one line ('valid; Kafka-balanced; kept 7 of the 8 an optimal assignment keeps; t-3 moved "
        "unnecessarily'); piped or with --json, the grade as JSON (docs/grade.md). Exit 1 when it is not valid (an "
        "assignor that throws is recorded in 'error').",
    )
    p.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--assignor", help="built-in name, NAME@VERSION variant, CLIENT:NAME[@VERSION] of another client (stickyproof assignors lists them), or module.path:callable")
    who.add_argument("--assignment", metavar="FILE", help="grade this assignment document instead of running an assignor")
    p.add_argument("--direct", action="store_true", help="hand the scenario's own owned/generation to the assignor (no wire)")
    p.add_argument("--balance", choices=BALANCE_CHOICES, default=None,
                   help="judge balance by this mode instead of the assignor's own promise")
    add_protocol_flag(p)
    p.add_argument("--json", action="store_true", help="print the JSON grade even on a terminal (it is printed when piped)")
    add_limit_flags(p, GRADE_LIMITS, "assignor_seconds", "z3_query_seconds", "cpsat_work", "cpsat_seconds")
    add_size_flags(p)
    p.set_defaults(func=_cmd_grade)
