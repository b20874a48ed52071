"""``stickyproof explain BEFORE AFTER``: why each partition moved between two looks at a group.

Parses, calls ``stickyproof.explain`` once per side and once to explain, renders: the verdict
first, then the members, then one block per moved partition; ``--json`` (or a pipe) prints the
``stickyproof.explain/1`` record. Bad input raises the ``StickyproofError`` family naming the file
and the line, which ``cli.main`` prints as one stderr line with exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InvalidScenario
from . import importing

__all__ = ["add_explain", "render"]

_DESCRIPTION = """\
Explain a rebalance from two looks at one group: which members left, joined or stayed, and for
each partition whose holder changed, why, and whether an optimal assignment would have moved it.

BEFORE and AFTER are each one of
  - the output of kafka-consumer-groups.sh --describe --group G --members --verbose (any release
    from 1.1 to 4.x, classic or consumer-protocol groups; the --state and default offsets tables
    may be appended, and a 3.8/3.9 output needs them or --topics to name its topics),
  - a stickyproof.capture/1 file (JoinGroup metadata and SyncGroup assignments as hex),
  - a scenario file (each member holds what it owns).

Reasons: left (its owner is not a member of the group any more), joined (members joined and
the owner's share shrank), unsubscribed (its owner is still a member but not subscribed to the
topic), stale-claim (another member's claim counted), gone (not in the metadata after), balance
(its owner held more than its share), rack (moved into a rack holding a replica, KIP-881), and
unnecessary: the most-sticky assignment balanced as the assignor promises, over AFTER's members
owning what they held BEFORE, keeps it (a provably optimal assignment, CP-SAT or a checked flow).
Each move also lists the built-in assignors and releases that, led on that same rebalance, keep it.
Exit 0; 2 on bad input (one line naming the file and the line)."""

_EXAMPLE = """\
example:
  kafka-consumer-groups.sh --bootstrap-server B --describe --group orders-app --members --verbose > before.txt
  ... the rebalance ...
  kafka-consumer-groups.sh --bootstrap-server B --describe --group orders-app --members --verbose > after.txt
  stickyproof explain before.txt after.txt

  2 partitions moved; 2 necessary (membership 2), none an optimal assignment would have kept
  ...
  orders-4  consumer-orders-app-3-a1b2...  ->  consumer-orders-app-3-77c1...   left
      its owner consumer-orders-app-3-a1b2... is not a member of the group any more (it left)

Without --topics/--partitions a topic's partition count is one more than the highest partition
either output shows held; every member is taken to subscribe to every topic the group holds
(--subscribe to say otherwise). docs/explain.md has the full story."""


def add_explain(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain",
        help="why each partition moved between two kafka-consumer-groups.sh outputs (or captures, or scenarios)",
        description=_DESCRIPTION,
        epilog=_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("before", metavar="BEFORE", help="the group before: describe output, capture or scenario file ('-': stdin)")
    p.add_argument("after", metavar="AFTER", help="the group after, in any of the same forms")
    p.add_argument("--topics", metavar="FILE", help="kafka-topics.sh --describe output: partition counts and Replicas")
    p.add_argument("--partitions", action="append", default=[], metavar="TOPIC=N",
                   help="a topic's partition count (repeatable; overrides --topics)")
    p.add_argument("--broker-rack", action="append", default=[], metavar="ID=RACK",
                   help="a broker's rack, to read replica racks from the Replicas column of --topics (repeatable)")
    p.add_argument("--member-rack", action="append", default=[], metavar="ID=RACK",
                   help="client.rack of the member with this member id or client id (repeatable)")
    p.add_argument("--group", help="the group to read when an output describes several")
    p.add_argument("--assignor", metavar="NAME",
                   help="the group's assignor, when the outputs do not show it (its balance promise is the optimum's)")
    p.add_argument("--subscribe", metavar="TOPICS",
                   help="comma-separated topics every member subscribes to (default: every topic the group holds)")
    p.add_argument("--protocol", choices=("eager", "cooperative"),
                   help="the group's rebalance protocol when the outputs cannot show it (default: what the assignor supports, "
                   "eager for range, roundrobin and sticky)")
    p.add_argument("--target", action="store_true",
                   help="read AFTER's TARGET-ASSIGNMENT (Kafka 4.0+, consumer-protocol groups): the assignor's decision")
    p.add_argument("--no-assignors", action="store_true", help="do not run the built-in assignors (faster)")
    p.add_argument("--json", action="store_true", help="print the JSON record even on a terminal (it is printed when piped)")
    p.set_defaults(func=_cmd_explain)


def _cmd_explain(args: argparse.Namespace) -> int:
    from ..explain import SnapshotOptions, explain, read_snapshot

    importing.check_arguments(args)
    if args.before == "-" and args.after == "-":
        raise InvalidScenario("AFTER", "standard input can hold only one of BEFORE and AFTER")
    options = SnapshotOptions(
        group=args.group,
        topics_text=None if args.topics is None else importing.read_text(args.topics, "--topics"),
        **importing.metadata_options(args),
        subscribe=importing.subscribed_topics(args),
        protocol=args.protocol,
        assignor=args.assignor,
    )
    before_text = importing.read_text(args.before, "BEFORE")
    after_text = importing.read_text(args.after, "AFTER")
    before_name = "standard input" if args.before == "-" else args.before
    after_name = "standard input" if args.after == "-" else args.after
    from dataclasses import replace

    before = read_snapshot(before_text, before_name, options, others=(after_text,))
    after = read_snapshot(after_text, after_name, replace(options, target=args.target), others=(before_text,))
    result = explain(before, after, assignors=not args.no_assignors)
    if args.json or not sys.stdout.isatty():
        from ..model import dump_json

        sys.stdout.write(dump_json(result.to_dict()) + "\n")
    else:
        sys.stdout.write(render(result))
    return 0


def _tp(p: Any) -> str:
    return f"{p.topic}-{p.partition}"


def _family(names: tuple[str, ...], every: tuple[str, ...]) -> str:
    """``sticky (every release), cooperative-sticky@2.4``: a family whose every release keeps it, once."""
    out: list[str] = []
    done: set[str] = set()
    for name in names:
        base = name.split("@")[0]
        if base in done:
            continue
        releases = [n for n in every if n.split("@")[0] == base]
        if len(releases) > 1 and all(n in names for n in releases):
            out.append(f"{base} (every release)")
            done.add(base)
        else:
            out.append(name)
    return ", ".join(out)


def render(e: Any) -> str:
    """The explanation for a person: verdict first, then members, then each move with its reason."""
    from ..explain import verdict_line

    lines = [verdict_line(e), ""]
    who = f"group {e.group!r}" if e.group else "the group"
    lines.append(f"members of {who}: {len(e.left)} left, {len(e.joined)} joined, {len(e.stayed)} stayed")
    lines += [f"  left    {m}  (not a member of the group any more)" for m in e.left]
    lines += [f"  joined  {m}" for m in e.joined]
    lines += [f"  stayed  {a}  (was {b}: {why})" for b, a, why in e.rejoined]
    lines += [f"          {b} -> {a}: same client id and host, probably the same consumer restarted" for b, a in e.returned]
    every = tuple(name for name, _, _ in e.assignors)
    if e.moves:
        lines += ["", "moved partitions (reason, why; the built-in assignors that keep it on the same rebalance):"]
        width = max(len(_tp(m.partition)) for m in e.moves)
        for m in e.moves:
            lines.append(f"  {_tp(m.partition):<{width}}  {m.source}  ->  {m.to or '(nobody yet)'}   {m.reason}")
            lines.append(f"  {'':<{width}}    {m.why}")
            if m.kept_by is not None:
                kept = _family(m.kept_by, every) if m.kept_by else "none of them"
                lines.append(f"  {'':<{width}}    kept by: {kept}")
    if e.assigned:
        lines += ["", f"assigned, held by nobody before: {', '.join(f'{_tp(tp)} to {m}' for tp, m in e.assigned)}"]
    kept = "?" if e.optimal_kept is None else str(e.optimal_kept)
    proof = "proven" if e.proven else f"not proven ({e.optimum_status})"
    lines += ["", f"optimum ({e.contract} promise, {e.notion} balance): keeps {kept} of what members held before "
              f"({proof}); AFTER kept {e.after_kept}"]
    ran = [(n, k) for n, k, err in e.assignors if err is None]
    if ran and e.moves:
        best = max(k for _, k in ran)
        lines.append(f"built-in assignors: the most moves kept is {best} of {len(e.moves)}"
                     + (f" ({_family(tuple(n for n, k in ran if k == best), every)})" if best else ""))
    failed = [(n, err) for n, k, err in e.assignors if err is not None]
    lines += [f"  {n} failed on this rebalance: {err}" for n, err in failed]
    if e.notes:
        lines += ["", "assumed and noted:"] + [f"  - {n}" for n in e.notes]
    return "\n".join(lines) + "\n"
