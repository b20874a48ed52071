"""The ``stickyproof`` command line: parses, calls one public function, prints.

Exit codes, for every command: 0 ok, 1 a check found a violation, 2 bad input or usage
(one line on stderr, never a traceback), 130 interrupted (Ctrl-C; ``interrupts`` says how, even
inside a solver's C code). Only the ``StickyproofError`` family is caught; anything else is a bug
and shows its traceback.

One module per command family (``wire``, ``scenarios``, ``sweep``, ``assign``, ``simulate``,
``solve``, ``grade``, ``hunt``, ``importing``, ``explain``, ``prove``, ``live``), each command one ``add_<name>(subparsers)`` function registering
its parser and a handler that parses, makes one library call and renders; ``COMMANDS`` lists them
in the order ``--help`` shows them. Limits are spelled as ``grading.Limits`` names them
(``--assignor-seconds``, ``--z3-query-seconds``, ...; ``_common.add_limit_flags``). Heavy
dependencies (OR-Tools, Z3, PySpark) are imported inside handlers so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from .. import __version__
from ..errors import StickyproofError
from . import assign, explain, grade, hunt, importing, live, prove, scenarios, simulate, solve, sweep, wire
from . import _common, interrupts

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
    live.add_live,
    solve.add_solve,
    grade.add_check,
    grade.add_grade,
    hunt.add_hunt,
    importing.add_import,
    explain.add_explain,
    prove.add_prove,
]


class _Version(argparse.Action):
    """``--version``: the release, and whether the KIP-848 ports run compiled (setup.py), looked up
    only when asked so that ``--help`` stays fast."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show the version and whether the KIP-848 ports run compiled, then exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from ..assignors.consumer.compiled import ports_summary

        sys.stdout.write(f"stickyproof {__version__} (KIP-848 ports: {ports_summary()})\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _common.Parser(
        prog="stickyproof",
        description="stickyproof: grade Kafka consumer-group partition assignors against provably optimal "
        "assignments and protocol invariants. Exit codes: 0 ok, 1 a violation found, 2 bad input or usage (one line naming the field), 130 interrupted.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_common.Parser)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; ``argv`` None means a real process (``stickyproof ...``), which also gets the
    interrupt watchdog (``interrupts.watch``)."""
    restore = interrupts.watch() if argv is None else None
    try:
        return _run(argv)
    finally:
        if restore is not None:
            restore()


def _run(argv: list[str] | None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not hasattr(args, "func"):
            parser.print_help(sys.stderr)
            return 2
        if getattr(args.func, "__module__", "").rsplit(".", 1)[-1] in _Z3_COMMANDS:
            interrupts.leave_ctrl_c_to_python()
        return int(args.func(args) or 0)
    except StickyproofError as exc:
        return _one_line(exc)
    except KeyboardInterrupt:
        return interrupts.interrupted()
    except BaseExceptionGroup as group:  # Hypothesis (hunt) wraps what its test raised
        leaves = _leaves(group)
        if any(isinstance(e, KeyboardInterrupt) for e in leaves):
            return interrupts.interrupted()
        if leaves and all(isinstance(e, StickyproofError) for e in leaves):
            return _one_line(leaves[0])  # type: ignore[arg-type]
        raise
    except BrokenPipeError:  # pragma: no cover - `stickyproof ... | head`
        return 0


_Z3_COMMANDS = {"grade", "hunt", "sweep", "simulate", "solve", "prove"}
"""The cli modules whose commands may run Z3 (the others need not import it)."""


def _one_line(exc: StickyproofError) -> int:
    message = " ".join(str(exc).split()) or type(exc).__name__
    # a lone surrogate quoted from the input is written escaped, never as an encoding error
    sys.stderr.write(f"{type(exc).__name__}: {message}\n".encode("utf-8", "backslashreplace").decode("utf-8"))
    return 2


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for e in group.exceptions:
        out.extend(_leaves(e) if isinstance(e, BaseExceptionGroup) else [e])
    return out
