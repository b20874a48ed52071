"""An assignor in a child process, spoken to in JSON lines (``exec:CMD``, models/assignor-protocol.md).

    exec_assignor(name, argv, *, call_seconds=None, env=None, cwd=None) -> AssignorInfo

One child per assignor per worker process: started when the assignor is resolved (its hello
names it), reused call after call, started again after any failure, and started afresh in a
forked worker (a sweep task, a Spark executor) instead of sharing its parent's pipes. Every call
is bounded: ``call_seconds`` (``DEFAULT_CALL_SECONDS`` when none is given), and the child is
killed when it runs past it. The child runs in its own process group, killed whole on failure,
on ``close`` and at interpreter exit, so nothing it started outlives stickyproof.

Each failure of §6 is the call's error, raised from the assignor call (a grade records it):
``AssignorTimeLimit``, ``AssignorCrash`` (exit status or signal), ``AssignorGarbage`` (the line),
each with the child's last 40 lines of standard error. Nothing else escapes a call, and no call
waits longer than its limit.

The pipes are driven by one ``select`` loop per call (``child.py``: write the request while
reading the answer and standard error), so a child that stops reading, floods its standard error
or never answers cannot block stickyproof.
"""

from __future__ import annotations

import atexit
import math
import multiprocessing.util
import os
import threading
import time
import weakref
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from .._perf import gc_paused
from ..assignors.base import GroupSubscription
from ..assignors.info import OUT_OF_PROCESS_CALL_SECONDS, AssignorInfo
from ..assignors.registry import led_as
from ..errors import AssignorCrash, AssignorFailure, AssignorGarbage, AssignorTimeLimit, InvalidOption, UnknownAssignor
from ..model import Assignment
from .child import STDERR_LINES, Child, Ended, TimedOut, TooLong, text_of
from .protocol import MAX_LINE_BYTES, Hello, cut, encode_request, parse_answer_line, parse_hello, read_answer

__all__ = [
    "DEFAULT_CALL_SECONDS",
    "START_SECONDS",
    "STDERR_LINES",
    "CallTiming",
    "ExecClient",
    "ExecAssignorFn",
    "exec_assignor",
    "resolve",
    "info_from_hello",
    "with_call_seconds",
    "close_all",
]

DEFAULT_CALL_SECONDS = OUT_OF_PROCESS_CALL_SECONDS
"""The per-call limit when the caller sets none (``Limits.assignor_seconds`` is None)."""
START_SECONDS = 30.0
"""How long a child may take to write its hello (a JVM starts in about a second)."""
"""Kafka's own protocol names: a peer announcing one of them is led as a Java member running that
assignor would be (its user data, R39's exemption of ``cooperative-sticky``; §2 ``kafka_name``)."""


@dataclass(frozen=True)
class CallTiming:
    """Where one call's time went: building the request line, the exchange (writing it, the
    child working, reading the answer), decoding the answer; and what the child says its
    assignor took (``assign_seconds``, None when it does not say). ``pipe_seconds`` is the cost of
    carrying the group across: everything but the child's own assign time."""

    encode_seconds: float
    exchange_seconds: float
    decode_seconds: float
    assign_seconds: float | None
    request_bytes: int
    answer_bytes: int

    @property
    def total_seconds(self) -> float:
        return self.encode_seconds + self.exchange_seconds + self.decode_seconds

    @property
    def pipe_seconds(self) -> float:
        return self.total_seconds - (self.assign_seconds or 0.0)


# ------------------------------------------------------------------------------------------
# The client: one per assignor per process


_CLIENTS: "weakref.WeakSet[ExecClient]" = weakref.WeakSet()


class ExecClient:
    """The child of one assignor in this process, and the calls made to it (one at a time).

    ``display`` names it in messages (``exec:python child.py``). ``hello`` is what the first child
    said; a restarted child must say the same, or the call that restarted it fails (``garbage``).
    ``last_timing`` is the ``CallTiming`` of the latest call that got an answer.
    """

    def __init__(self, display: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | None = None, start_seconds: float = START_SECONDS):
        if not argv:
            raise UnknownAssignor(f"{display}: no command to run")
        self.display = display
        self.argv = tuple(argv)
        self.env = None if env is None else dict(env)
        self.cwd = cwd
        self.start_seconds = start_seconds
        self.hello: Hello | None = None
        self.last_timing: CallTiming | None = None
        self.starts = 0
        self._child: Child | None = None
        self._lock = threading.Lock()
        self._next_id = 1
        _CLIENTS.add(self)

    # -- starting ----------------------------------------------------------------------------

    def start(self) -> Hello:
        """Start the child now and read its hello (resolving an assignor does this): any failure is
        ``UnknownAssignor`` — the command cannot run at all (§2, exit 2)."""
        with self._lock:
            try:
                self._ensure_child()
            except AssignorFailure as exc:
                raise UnknownAssignor(f"{self.display}: {exc}") from exc
            assert self.hello is not None
            return self.hello

    def _ensure_child(self) -> Child:
        child = self._child
        if child is not None and child.owner != os.getpid():
            child.release()  # inherited through fork: the parent's child, not ours to talk to
            child = self._child = None
        if child is not None:
            return child
        try:
            child = Child(self.argv, self.env, self.cwd)
        except OSError as exc:
            raise AssignorCrash(f"cannot start {' '.join(self.argv)}: {exc.strerror or exc}") from None
        self.starts += 1
        try:
            line = child.exchange(b"", time.monotonic() + self.start_seconds)
            hello = parse_hello(line, self.display)
        except TimedOut:
            tail = child.stderr_tail()
            child.kill()
            raise AssignorTimeLimit(_with_tail(f"{self.display} wrote no hello within {self.start_seconds:g} s", tail)) from None
        except Ended:
            status, sig, tail = child.finish()
            raise AssignorCrash(f"{self.display} {_ended(status, sig)} before its hello",
                                exit_status=status, signal=sig, stderr_tail=tail) from None
        except TooLong:
            child.kill()
            raise AssignorGarbage(f"{self.display} wrote a first line over {MAX_LINE_BYTES} bytes") from None
        except AssignorGarbage as exc:
            tail = child.stderr_tail(0.2)
            child.kill()
            raise AssignorGarbage(f"{self.display}: {exc.args[0].splitlines()[0]}", line=exc.line, stderr_tail=tail) from None
        if self.hello is not None and hello != self.hello:
            child.kill()
            raise AssignorGarbage(f"{self.display} restarted as {hello}, but first said {self.hello}")
        self.hello = hello
        self._child = child
        return child

    # -- calling -----------------------------------------------------------------------------

    def call(self, group: GroupSubscription, seconds: float) -> Assignment:
        """One request, one answer (§3, §5), within ``seconds``; every failure of §6 is raised as the
        call's error and leaves no child behind (the next call starts a new one)."""
        with self._lock:
            child = self._ensure_child()
            assert self.hello is not None
            call_id = self._next_id
            self._next_id += 1
            started = time.perf_counter()
            data = encode_request(call_id, group, ranges="ranges" in self.hello.accepts, wire=self.hello.wire)
            encoded = time.perf_counter()
            try:
                line = child.exchange(data, time.monotonic() + seconds)
                with gc_paused():
                    doc = parse_answer_line(line, call_id, self.display)
                if child.unread_request:
                    raise AssignorGarbage(f"{self.display} answered call {call_id} before reading the whole request",
                                          line=cut(text_of(line)))
            except TimedOut:
                tail = child.stderr_tail()
                self._drop(child)
                raise AssignorTimeLimit(_with_tail(
                    f"{self.display} did not answer call {call_id} within the time limit of {seconds:g} s (killed)", tail
                )) from None
            except Ended:
                self._child = None
                status, sig, tail = child.finish()
                raise AssignorCrash(f"{self.display} {_ended(status, sig)} before answering call {call_id}",
                                    exit_status=status, signal=sig, stderr_tail=tail) from None
            except TooLong:
                tail = child.stderr_tail()
                self._drop(child)
                raise AssignorGarbage(f"{self.display} wrote an answer line over {MAX_LINE_BYTES} bytes (call {call_id})",
                                      stderr_tail=tail) from None
            except AssignorGarbage as exc:  # the stream is out of step: this child cannot be trusted further
                tail = child.stderr_tail(0.2)
                self._drop(child)
                raise AssignorGarbage(exc.args[0], line=exc.line, stderr_tail=tail) from None
            exchanged = time.perf_counter()
            # A malformed assignment or an {"error"} answer leaves the stream in step: the child is kept.
            answer = read_answer(doc, call_id, [s.member_id for s in group.members], self.display)
            self.last_timing = CallTiming(encoded - started, exchanged - encoded, time.perf_counter() - exchanged,
                                          answer.assign_seconds, len(data), len(line))
            return answer.assignment

    def _drop(self, child: Child) -> None:
        self._child = None
        child.kill()

    def close(self, *, wait: float | None = None) -> None:
        """Stop the child (end of input, then the process group killed). ``wait`` bounds how long to
        wait for a call in progress in another thread; past it the child is killed under that call,
        which then fails as a ``crash`` (interpreter exit does this, so it is never held up)."""
        got = self._lock.acquire(timeout=-1 if wait is None else wait)
        try:
            child, self._child = self._child, None
        finally:
            if got:
                self._lock.release()
        if child is not None:
            if got:
                child.close()
            else:
                child.kill_group()

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        if self._child is not None:
            self._child.release()
            self._child = None


def _ended(status: int | None, sig: str | None) -> str:
    if sig is not None:
        return f"was killed by {sig}"
    if status is None:
        return "closed its standard output (killed)"
    return f"exited with status {status}"


def _with_tail(message: str, tail: tuple[str, ...]) -> str:
    if not tail:
        return message
    return message + "\nstderr (last lines):\n" + "\n".join(f"  {line}" for line in tail)


def close_all() -> None:
    """Stop every child this process started (registered with ``atexit``)."""
    for client in list(_CLIENTS):
        try:
            client.close(wait=0.1)
        except Exception:  # noqa: BLE001 - at exit, every child must still be tried
            pass


def _forget_inherited() -> None:
    for client in list(_CLIENTS):
        client._after_fork()


atexit.register(close_all)
os.register_at_fork(after_in_child=_forget_inherited)
# multiprocessing's forked workers end with os._exit, which skips atexit; they run its finalizers.
multiprocessing.util.Finalize(None, close_all, exitpriority=100)


# ------------------------------------------------------------------------------------------
# As an assignor


class ExecAssignorFn:
    """The ``AssignorFn`` of an out-of-process assignor: ``fn(group) -> Assignment`` through its
    client, within ``seconds``. ``with_time_limit(seconds)`` is how a caller holding a
    ``Limits.assignor_seconds`` bounds the call: the child is killed at the limit, so the caller
    must not wrap it in a thread of its own (``grading.leader_run`` checks for this method)."""

    def __init__(self, client: ExecClient, seconds: float = DEFAULT_CALL_SECONDS):
        _check_seconds(seconds)
        self.client = client
        self.seconds = float(seconds)
        self.__name__ = self.__qualname__ = f"exec[{client.display}]"

    def __call__(self, group: GroupSubscription) -> Assignment:
        return self.client.call(group, self.seconds)

    def with_time_limit(self, seconds: float | None) -> "ExecAssignorFn":
        """The same assignor (the same child) bounded by ``seconds``; ``None`` keeps this one's limit."""
        return self if seconds is None else ExecAssignorFn(self.client, seconds)

    @property
    def last_timing(self) -> CallTiming | None:
        return self.client.last_timing

    def close(self) -> None:
        self.client.close()


def _check_seconds(seconds: float) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
        raise InvalidOption("assignor_seconds", f"must be a positive finite number of seconds, got {seconds!r}")


def info_from_hello(name: str, hello: Hello, fn: ExecAssignorFn, description: str) -> AssignorInfo:
    """The registry entry of a peer: named as the user wrote it, the Kafka name and protocols from its
    hello, and the hello's ``name`` as its ``display`` name when that says something ``name`` does not."""
    declared: dict[str, str] = {"contract": hello.contract} if hello.contract else {}
    if hello.name != name:
        declared["display"] = hello.name
    return led_as(hello.kafka_name, name=name, protocols=hello.protocols, fn=fn, description=description, **declared)


def exec_assignor(
    name: str,
    argv: Sequence[str],
    *,
    call_seconds: float | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    start_seconds: float = START_SECONDS,
) -> AssignorInfo:
    """Start ``argv``, read its hello and return the assignor (``UnknownAssignor`` when it cannot
    start or says no valid hello). ``call_seconds`` bounds each call (default ``DEFAULT_CALL_SECONDS``)."""
    client = ExecClient(name, argv, env=env, cwd=cwd, start_seconds=start_seconds)
    fn = ExecAssignorFn(client, DEFAULT_CALL_SECONDS if call_seconds is None else call_seconds)
    hello = client.start()
    return info_from_hello(name, hello, fn, f"{hello.name} (child process: {' '.join(client.argv)})")


def resolve(rest: str) -> AssignorInfo:
    """``exec:REST``: ``REST`` split as a shell would (no shell runs it) and started."""
    import shlex

    name = f"exec:{rest}"
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise UnknownAssignor(f"{name}: cannot split the command ({exc})") from None
    if not argv:
        raise UnknownAssignor(f"{name!r}: exec: needs a command, e.g. exec:'python my_assignor.py'")
    return exec_assignor(name, argv)


def with_call_seconds(info: AssignorInfo, seconds: float | None) -> AssignorInfo:
    """``info`` bounded by ``seconds`` per call when it runs out of process; unchanged otherwise."""
    bind = getattr(info.fn, "with_time_limit", None)
    return info if bind is None or seconds is None else replace(info, fn=bind(seconds))
