"""``prove``: ``stickyproof prove [NAME...] [--deep] [--json]``: parse, call ``stickyproof.prove.prove``, render.

Registered in ``cli.COMMANDS`` as ``add_prove``. Exit codes as every command: 0 every verdict
is the one proofs/README.md promises, 1 some verdict differs, 2 bad usage (one line on stderr).
A progress line per statement goes to stderr as it finishes, so ``--json`` keeps stdout clean.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import StickyproofError

__all__ = ["add_prove", "run_prove", "render_table"]


def _progress_printer(total: int) -> Any:
    done = [0]

    live = sys.stderr.isatty()  # on a terminal, say which statement runs (a --deep one takes minutes)

    def progress(name: str, record: Any) -> None:
        if record is None:
            if live:
                sys.stderr.write(f"[{done[0] + 1:>2}/{total}] {name}: running ...")
                sys.stderr.flush()
            return
        if live:
            sys.stderr.write("\r\033[K")
        done[0] += 1
        verdict = record.verdict + (f" ({record.length} steps)" if record.length is not None else "")
        flag = "" if record.ok else f"  DIFFERS from the promise: {record.promised}"
        sys.stderr.write(f"[{done[0]:>2}/{total}] {name}: {verdict} in {record.seconds:.1f} s{flag}\n")
        sys.stderr.flush()

    return progress


def render_table(report: Any) -> str:
    """The statement table: statement, verdict, promised, bound, seconds; then one summary line."""
    rows = [("statement", "verdict", "promised", "bound", "seconds")]
    for r in report.records:
        verdict = r.verdict + (f", {r.length} steps" if r.length is not None else "")
        rows.append((r.name, verdict + ("" if r.ok else "  <-- DIFFERS"), r.promised, r.bound, f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[j]) if j < len(row) - 1 else cell.rjust(widths[j])
                               for j, cell in enumerate(row)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    differing = [r.name for r in report.records if not r.ok]
    summary = (f"{len(report.records)} statements in {report.seconds:.1f} s"
               f"{' (deep)' if report.deep else ''}: "
               + ("every verdict as promised" if not differing else f"{len(differing)} differ from proofs/README.md: "
                  + ", ".join(differing)))
    return "\n".join(lines + ["", summary]) + "\n"


def run_prove(args: argparse.Namespace) -> int:
    """The handler: 0 as promised, 1 a verdict differs, 2 bad usage (one stderr line)."""
    try:
        from ..prove import prove, statement_names

        names = list(args.names or [])
        total = len(names) if names else len(statement_names(args.proofs, deep=args.deep))
        report = prove(names or None, deep=args.deep, path=args.proofs, progress=_progress_printer(total))
    except StickyproofError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(f"{type(exc).__name__}: {message}\n")
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n")
    else:
        sys.stdout.write(render_table(report))
    return 0 if report.ok else 1


def add_prove(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``prove`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "prove",
        help="run the Z3 proofs of proofs/: protocol safety for every group size, Kafka's historical bugs as "
        "counterexamples, the constrained assignor's balance, the optimisation model's lemmas",
        description="Run the statements of proofs/ (see proofs/README.md) and print each one's verdict (proved, "
        "counterexample, unknown), what it covered and how long it took. Without NAME: every statement of the "
        "quick set (under a minute); --deep adds the long ones (bounded search of the safe theorems, the partition-level "
        "constrained model at 6 x 12, flow exactness and windows at 4 x 2 x 4) and searches counterexamples past "
        "their promised length. Counterexample lengths are always minimal. Exit 0 when every verdict is the one proofs/README.md promises, "
        "1 when one differs, 2 on bad usage.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="statements to run (default: all of the run)")
    p.add_argument("--deep", action="store_true", help="also run the long statements and search counterexamples past their promise")
    p.add_argument("--json", action="store_true", help="print the records as JSON (stickyproof.prove/1) instead of the table")
    p.add_argument("--proofs", metavar="DIR", default=None, help="the proofs folder (default: $STICKYPROOF_PROOFS or <repo>/proofs)")
    p.set_defaults(func=run_prove)
    return p
