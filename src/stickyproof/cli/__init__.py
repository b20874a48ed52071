"""The ``stickyproof`` command line: parses, calls one public function, prints.

Exit codes, for every command: 0 ok, 1 a check found a violation, 2 bad input or usage
(one line on stderr, never a traceback). Only the ``StickyproofError`` family is caught;
anything else is a bug and shows its traceback.

One module per command family (``wire``, ``scenarios``, ``sweep``, ``assign``, ``simulate``,
``solve``, ``grade``, ``hunt``, ``importing``), each command one ``add_<name>(subparsers)`` function registering
its parser and a handler that parses, makes one library call and renders; ``COMMANDS`` lists them
in the order ``--help`` shows them. Limits are spelled as ``grading.Limits`` names them
(``--assignor-seconds``, ``--z3-query-seconds``, ...; ``_common.add_limit_flags``). Heavy
dependencies (OR-Tools, Z3, PySpark) are imported inside handlers so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from .. import __version__
from ..errors import StickyproofError
from . import assign, grade, hunt, importing, scenarios, simulate, solve, sweep, wire
from . import _common

__all__ = ["COMMANDS", "build_parser", "main"]


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    wire.add_validate,
    scenarios.add_scenarios,
    wire.add_decode,
    wire.add_encode,
    sweep.add_sweep,
    sweep.add_compare,
    assign.add_assign,
    assign.add_assignors,
    simulate.add_simulate,
    solve.add_solve,
    grade.add_check,
    grade.add_grade,
    hunt.add_hunt,
    importing.add_import,
]


def build_parser() -> argparse.ArgumentParser:
    parser = _common.Parser(
        prog="stickyproof",
        description="stickyproof: grade Kafka consumer-group partition assignors against provably optimal "
        "assignments and protocol invariants. Exit codes: 0 ok, 1 a violation found, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"stickyproof {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_common.Parser)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not hasattr(args, "func"):
            parser.print_help(sys.stderr)
            return 2
        return int(args.func(args) or 0)
    except StickyproofError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        # a lone surrogate quoted from the input is written escaped, never as an encoding error
        sys.stderr.write(f"{type(exc).__name__}: {message}\n".encode("utf-8", "backslashreplace").decode("utf-8"))
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: whatever was committed stays (a sweep's finished chunks); one line, the shell's code for SIGINT.
        _quiet_second_interrupt()
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:  # pragma: no cover - `stickyproof ... | head`
        return 0


def _quiet_second_interrupt() -> None:
    """A second Ctrl-C while the process winds down (Spark stopping, threads joining) ends it at once."""
    import signal

    try:
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    except ValueError:  # pragma: no cover - not the main thread (main() called from a worker thread)
        pass
