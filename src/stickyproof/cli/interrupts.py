"""Ctrl-C on the command line: exit 130 and one line (``interrupted``), in every command.

Python turns SIGINT into ``KeyboardInterrupt`` in the main thread, and ``cli.main`` answers that
with ``interrupted()``. Three things stand in the way, and this module handles each:

- **Long C calls.** Python runs its SIGINT handler only between bytecodes, so a command inside
  one long C call (a Z3 check, a min-cost flow) would not stop. ``watch()`` starts a watchdog
  thread woken by SIGINT through ``signal.set_wakeup_fd``; it gives the main thread
  ``INTERRUPT_GRACE_SECONDS`` to unwind, then says ``interrupted`` and ends the process with 130.
  A CP-SAT solve needs no grace: the oracle's ``solve_interruptibly`` stops its search at once.
- **Solvers that take SIGINT for themselves.** Z3's ``ctrl_c`` makes a check answer ``unknown``
  (the oracle would report a SolverError, not the user's Ctrl-C), so ``leave_ctrl_c_to_python()``
  turns it off for the commands that run Z3. CP-SAT's ``catch_sigint_signal`` is the oracle's to
  turn off (it does, on every solve); nothing here touches a solver class.
- **Ctrl-C that Python prints and swallows.** Two places turn the interrupt into an "Exception
  ignored in ..." traceback via ``sys.unraisablehook`` (``_unraisable_after_ctrl_c``; CI saw the
  second, a hunt the first): a gc or weakref callback (Hypothesis's gc timer), where the command
  never hears of it, so the watchdog raises it again in the main thread; and the finalizer of an
  object the interrupt cut in half (z3's ``ParamsRef``), whose error is silenced once the user
  has pressed Ctrl-C.

A second Ctrl-C while the command winds down changes nothing. ``watch()`` runs only for a real
process (``cli.main()`` without ``argv``); ``stickyproof._entry`` covers the import of the command
line itself, before any of this runs.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable

__all__ = ["INTERRUPT_GRACE_SECONDS", "explain", "interrupted", "leave_ctrl_c_to_python", "on_sigint", "watch"]

INTERRUPT_GRACE_SECONDS = 3.0
"""After Ctrl-C, how long the command has to unwind (close its progress bar, stop Spark; a sweep's
committed chunks are already on disk) before the watchdog ends the process itself."""

_said = threading.Lock()
"""Held once ``interrupted`` was written: the line is written once, and the command is winding down."""

_ctrl_c = threading.Event()
"""Set once the user pressed Ctrl-C (by the SIGINT handler ``watch`` installs, or on the way out)."""

_detail: list[Callable[[], str]] = []
"""What the command wants said after ``interrupted:`` (``explain``); the last one given counts."""


def explain(detail: Callable[[], str] | None) -> None:
    """Have ``interrupted`` say ``interrupted: <detail()>`` (a sweep: what is kept and how to resume),
    whichever thread says it -- the main thread unwinding, or the watchdog once the grace is over.
    ``None`` takes it back."""
    _detail.clear()
    if detail is not None:
        _detail.append(detail)


def _line() -> str:
    try:
        said = _detail[-1]() if _detail else ""
    except Exception:  # noqa: BLE001 - the detail is a courtesy; the line must still be written
        said = ""
    said = " ".join(said.split())
    return f"interrupted: {said}\n" if said else "interrupted\n"


def interrupted() -> int:
    """Say ``interrupted`` (once per process; with the command's detail, ``explain``) and return 130;
    a later Ctrl-C is ignored."""
    import signal

    try:  # a second Ctrl-C while the command winds down changes nothing: ignore it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # the watchdog thread: it ends the process next
        pass
    _ctrl_c.set()
    if _said.acquire(blocking=False):
        sys.stderr.write(_line())
        sys.stderr.flush()
    return 130


def on_sigint(signum: int, frame: Any) -> None:
    """The SIGINT handler ``watch`` installs: records the Ctrl-C, then raises as Python's own does."""
    _ctrl_c.set()
    raise KeyboardInterrupt


def leave_ctrl_c_to_python() -> None:
    """Z3 takes SIGINT for itself by default and answers ``unknown`` to the check it interrupts (the
    oracle then reports a SolverError instead of the user's Ctrl-C). With its ``ctrl_c`` parameter
    off the signal reaches Python and the watchdog. A Z3 setting for this process, made only by the
    commands that run Z3 (importing Z3 costs a tenth of a second)."""
    import z3

    z3.set_param("ctrl_c", False)


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


def watch() -> Callable[[], None] | None:
    """Start the watchdog: a thread woken by SIGINT through ``signal.set_wakeup_fd``, which gives the
    main thread ``INTERRUPT_GRACE_SECONDS`` to unwind, then says ``interrupted`` and ends the process
    with 130. It also re-raises, in the main thread, a Ctrl-C that Python swallowed in a callback
    (see ``_unraisable_after_ctrl_c``). The SIGINT handler it installs (``on_sigint``) records the
    Ctrl-C first.

    Returns what restores the old wakeup fd, SIGINT handler and unraisable hook (the hook stays
    after a Ctrl-C, so interpreter shutdown's finalizers stay quiet), or None when the watchdog
    cannot run (not the main thread)."""
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

    previous_handler = signal.signal(signal.SIGINT, on_sigint)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable_after_ctrl_c(previous_hook, redeliver)

    def watchdog() -> None:
        deadline: float | None = None
        while True:
            try:
                reader.settimeout(None if deadline is None else max(0.001, deadline - time.monotonic()))  # 0 would not block
                data = reader.recv(64)
            except TimeoutError:  # the grace is over
                interrupted()
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

    threading.Thread(target=watchdog, name="stickyproof-interrupt-watchdog", daemon=True).start()

    def restore() -> None:
        signal.set_wakeup_fd(previous)
        writer.close()
        if signal.getsignal(signal.SIGINT) is on_sigint:
            signal.signal(signal.SIGINT, previous_handler)
        if not _ctrl_c.is_set():  # after Ctrl-C, interpreter shutdown's finalizers stay quiet
            sys.unraisablehook = previous_hook

    return restore
