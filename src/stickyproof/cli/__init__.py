"""The ``stickyproof`` command line: parses, calls one public function, prints.

Exit codes, for every command: 0 ok, 1 a check found a violation, 2 bad input or usage
(one line on stderr, never a traceback). Only the ``StickyproofError`` family is caught;
anything else is a bug and shows its traceback.

One module per command family (``wire``, ``scenarios``, ``sweep``, ``assign``, ``simulate``,
``solve``, ``grade``, ``hunt``, ``importing``, ``prove``), each command one ``add_<name>(subparsers)`` function registering
its parser and a handler that parses, makes one library call and renders; ``COMMANDS`` lists them
in the order ``--help`` shows them. Limits are spelled as ``grading.Limits`` names them
(``--assignor-seconds``, ``--z3-query-seconds``, ...; ``_common.add_limit_flags``). Heavy
dependencies (OR-Tools, Z3, PySpark) are imported inside handlers so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Any, Callable

from .. import __version__
from ..errors import StickyproofError
from . import assign, grade, hunt, importing, prove, scenarios, simulate, solve, sweep, wire
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
    prove.add_prove,
]


def build_parser() -> argparse.ArgumentParser:
    parser = _common.Parser(
        prog="stickyproof",
        description="stickyproof: grade Kafka consumer-group partition assignors against provably optimal "
        "assignments and protocol invariants. Exit codes: 0 ok, 1 a violation found, 2 bad input or usage (one line naming the field), 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"stickyproof {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_common.Parser)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; ``argv`` None means a real process (``stickyproof ...``), which also gets the
    interrupt watchdog (see ``_watch_interrupts``)."""
    restore = _watch_interrupts() if argv is None else None
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
        if getattr(args.func, "__module__", "").rsplit(".", 1)[-1] in _SOLVER_COMMANDS:
            _solvers_leave_ctrl_c_to_python()
        return int(args.func(args) or 0)
    except StickyproofError as exc:
        return _one_line(exc)
    except KeyboardInterrupt:
        return _interrupted()
    except BaseExceptionGroup as group:  # Hypothesis (hunt) wraps what its test raised
        leaves = _leaves(group)
        if any(isinstance(e, KeyboardInterrupt) for e in leaves):
            return _interrupted()
        if leaves and all(isinstance(e, StickyproofError) for e in leaves):
            return _one_line(leaves[0])  # type: ignore[arg-type]
        raise
    except BrokenPipeError:  # pragma: no cover - `stickyproof ... | head`
        return 0


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


# ------------------------------------------------------------------------------------------
# Ctrl-C: exit 130 and one line, in every command, even inside a solver's C code

_SOLVER_COMMANDS = {"grade", "hunt", "sweep", "simulate", "solve", "prove"}  # cli modules whose commands run Z3 or CP-SAT
_said = threading.Lock()
INTERRUPT_GRACE_SECONDS = 3.0
"""After Ctrl-C, how long the command has to unwind (close its progress bar, stop Spark; a sweep's
committed chunks are already on disk) before the watchdog ends the process itself."""


def _interrupted() -> int:
    import signal

    try:  # a second Ctrl-C while the command winds down changes nothing: ignore it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # the watchdog thread: it ends the process next
        pass
    _ctrl_c.set()
    if _said.acquire(blocking=False):
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
    return 130


_ctrl_c = threading.Event()
"""Set once the user pressed Ctrl-C (by the SIGINT handler ``_watch_interrupts`` installs)."""


def _on_sigint(signum: int, frame: Any) -> None:
    _ctrl_c.set()
    raise KeyboardInterrupt


def _unraisable_after_ctrl_c(previous: Callable[[Any], None], redeliver: Callable[[], None]) -> Callable[[Any], None]:
    """Python raises ``KeyboardInterrupt`` in whatever the main thread runs, and two places turn it
    into an "Exception ignored in ..." traceback on stderr (``sys.unraisablehook``):

    - a gc or weakref callback (Hypothesis's gc timer, ``WeakSet``'s remover): Python prints the
      interrupt there and goes on, so the command never hears of it. ``redeliver`` asks the
      watchdog to raise it again in the main thread, once the callback is over (raising it from
      here would only land in this hook).
    - a finalizer of an object the interrupt cut in half (Ctrl-C between two statements of z3's
      ``ParamsRef.__init__``, whose ``__del__`` then fails on the missing attribute). The process is
      ending on the user's word: after Ctrl-C, what finalizers raise is not the user's news.

    Anything else unraisable, before any Ctrl-C, goes to the previous hook."""

    def hook(unraisable: Any) -> None:
        try:
            if isinstance(unraisable.exc_value, KeyboardInterrupt):
                _ctrl_c.set()
                if not _said.locked():  # not yet winding down
                    redeliver()
                return
            if _ctrl_c.is_set():
                return
        except KeyboardInterrupt:  # the interrupt landed in this hook: one more to deliver
            redeliver()
            return
        previous(unraisable)

    return hook


def _solvers_leave_ctrl_c_to_python() -> None:
    """Both solvers take SIGINT for themselves by default, which loses the user's Ctrl-C: Z3 answers
    ``unknown`` to the check it interrupts (the oracle then reports a SolverError), and CP-SAT stops
    its search *and leaves SIGINT at the system default when it returns*, so a later Ctrl-C kills the
    process without a word. With Z3's ``ctrl_c`` off and CP-SAT's ``catch_sigint_signal`` off on
    every solve, the signal reaches Python (and the watchdog). The CP-SAT half belongs in the oracle
    (``solver.parameters.catch_sigint_signal = False`` where it builds its solvers); until then the
    command line sets it on each solve."""
    import z3
    from ortools.sat.python import cp_model

    z3.set_param("ctrl_c", False)
    solve = cp_model.CpSolver.solve
    if getattr(solve, "_leaves_sigint_to_python", False):
        return

    def solve_without_sigint(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.parameters.catch_sigint_signal = False
        return solve(self, *args, **kwargs)

    solve_without_sigint._leaves_sigint_to_python = True  # type: ignore[attr-defined]
    cp_model.CpSolver.solve = solve_without_sigint  # type: ignore[method-assign]


def _watch_interrupts() -> Callable[[], None] | None:
    """A thread woken by SIGINT through ``signal.set_wakeup_fd``: Python runs its handler (and raises
    ``KeyboardInterrupt``) only between bytecodes, so a command inside a long C call (a CP-SAT or Z3
    solve, a flow) would not stop. The watchdog gives the main thread ``INTERRUPT_GRACE_SECONDS`` to
    unwind, then says ``interrupted`` and ends the process with 130. Returns what restores the old
    wakeup fd, SIGINT handler and unraisable hook (the hook stays after a Ctrl-C).

    It also re-raises, in the main thread, a Ctrl-C that Python swallowed in a callback (see
    ``_unraisable_after_ctrl_c``). The SIGINT handler it installs records the Ctrl-C first."""
    import _thread
    import signal
    import socket

    try:
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except (ValueError, OSError):  # pragma: no cover - not the main thread, or no socketpair
        return None
    redeliver_byte = b"\xff"  # no signal's number

    def redeliver() -> None:
        try:
            writer.send(redeliver_byte)
        except OSError:  # pragma: no cover - closed: the command is over
            pass

    previous_handler = signal.signal(signal.SIGINT, _on_sigint)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable_after_ctrl_c(previous_hook, redeliver)

    def watch() -> None:
        deadline: float | None = None
        while True:
            try:
                reader.settimeout(None if deadline is None else max(0.001, deadline - time.monotonic()))  # 0 would not block
                data = reader.recv(64)
            except TimeoutError:  # the grace is over
                _interrupted()
                os._exit(130)
            except OSError:  # pragma: no cover - closed at exit
                return
            if not data:
                return
            if redeliver_byte in data and not _said.locked():
                time.sleep(0.02)  # out of the callback and the hook first
                _thread.interrupt_main(signal.SIGINT)  # writes SIGINT to this socket too: no change
            if signal.SIGINT in data and deadline is None:
                _ctrl_c.set()
                deadline = time.monotonic() + INTERRUPT_GRACE_SECONDS

    threading.Thread(target=watch, name="stickyproof-interrupt-watchdog", daemon=True).start()

    def restore() -> None:
        signal.set_wakeup_fd(previous)
        writer.close()
        if signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, previous_handler)
        if not _ctrl_c.is_set():  # after Ctrl-C, interpreter shutdown's finalizers stay quiet
            sys.unraisablehook = previous_hook

    return restore
