"""One running child process of the assignor protocol: its pipes, driven by one ``select`` loop.

``Child.exchange(data, deadline)`` writes a request while reading the answer and standard error,
so a child that stops reading, floods its standard error or never answers cannot block the
caller past ``deadline``; ``finish``/``kill`` end it with its whole process group. ``exec.py``
turns what happens here into the call's error (models/assignor-protocol.md §6).
"""

from __future__ import annotations

import collections
import os
import select
import selectors
import signal
import subprocess
import time
from typing import Mapping, Sequence

from .protocol import MAX_LINE_BYTES, cut

__all__ = ["Child", "Ended", "TimedOut", "TooLong", "STDERR_LINES", "EXIT_GRACE_SECONDS", "text_of"]

STDERR_LINES = 40
"""How many of the child's last standard-error lines an error carries (§1)."""
EXIT_GRACE_SECONDS = 1.0
"""After the child closes its standard output, how long to wait for its exit status before killing it."""
MAX_STDERR_LINE = 1000


class Ended(Exception):
    """The child closed its standard output (it exited, or is about to)."""


class TimedOut(Exception):
    """The deadline passed without a full line."""


class TooLong(Exception):
    """A line grew past ``MAX_LINE_BYTES`` without ending."""


class Child:
    """One running child: its pipes, the unread part of its standard output, its stderr tail."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: str | None):
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,  # its own process group: killed whole, never by the terminal's Ctrl-C
            cwd=cwd,
            env=None if env is None else dict(env),
        )
        self.owner = os.getpid()
        self.stdin = self.proc.stdin.fileno()
        self.stdout = self.proc.stdout.fileno()
        self.stderr = self.proc.stderr.fileno()
        for fd in (self.stdin, self.stdout, self.stderr):
            os.set_blocking(fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout, selectors.EVENT_READ)
        self.selector.register(self.stderr, selectors.EVENT_READ)
        self.out = bytearray()
        self.scanned = 0
        self.err_partial = bytearray()
        self.err_lines: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.stdin_open = True
        self.stderr_closed = False
        self.unread_request = False  # the last answer came before the child had read its whole request

    # -- the one loop ------------------------------------------------------------------------

    def exchange(self, data: bytes, deadline: float) -> bytes:
        """Write ``data`` and return the next full line of standard output, by ``deadline``."""
        view = memoryview(data)
        written = 0
        writing = bool(data) and self.stdin_open
        if writing:
            self.selector.register(self.stdin, selectors.EVENT_WRITE)
        try:
            while True:
                newline = self.out.find(b"\n", self.scanned)
                if newline >= 0:
                    line = bytes(self.out[: newline + 1])
                    del self.out[: newline + 1]
                    self.scanned = 0
                    self.unread_request = writing and written < len(data)
                    return line
                self.scanned = len(self.out)
                if len(self.out) > MAX_LINE_BYTES:
                    raise TooLong()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimedOut()
                for key, _ in self.selector.select(remaining):
                    fd = key.fd
                    if fd == self.stdout:
                        chunk = _read(fd, 1 << 20)
                        if chunk == b"":
                            raise Ended()
                        self.out += chunk or b""
                    elif fd == self.stderr:
                        chunk = _read(fd, 1 << 16)
                        if chunk == b"":
                            self.selector.unregister(fd)
                            self.stderr_closed = True
                        elif chunk:
                            self._take_stderr(chunk)
                    elif fd == self.stdin and writing:
                        try:
                            written += os.write(fd, view[written: written + (1 << 20)])
                        except BlockingIOError:
                            continue
                        except (BrokenPipeError, ConnectionResetError):
                            written = len(data)  # it stopped reading: its answer, or its exit, says why
                            self.stdin_open = False
                        if written >= len(data):
                            self.selector.unregister(fd)
                            writing = False
        finally:
            if writing:
                self.selector.unregister(self.stdin)

    def _take_stderr(self, chunk: bytes) -> None:
        self.err_partial += chunk
        *lines, rest = self.err_partial.split(b"\n")
        for line in lines:
            self.err_lines.append(cut(text_of(line), MAX_STDERR_LINE))
        if len(rest) > 1 << 16:
            self.err_lines.append(cut(text_of(rest), MAX_STDERR_LINE))
            rest = b""
        self.err_partial = bytearray(rest)

    def stderr_tail(self, drain_seconds: float = 0.0) -> tuple[str, ...]:
        """The last lines of standard error, after reading what is already there (up to ``drain_seconds``
        more for a child that is exiting: its last words are usually why)."""
        deadline = time.monotonic() + drain_seconds
        for _ in range(64):  # at most 4 MiB: a child flooding its stderr cannot keep us here
            if self.stderr_closed:
                break
            ready, _w, _x = select.select([self.stderr], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = _read(self.stderr, 1 << 16)
            if chunk == b"":
                self.selector.unregister(self.stderr)
                self.stderr_closed = True
            elif chunk:
                self._take_stderr(chunk)
        lines = list(self.err_lines)
        if self.err_partial:
            lines = (lines + [cut(text_of(bytes(self.err_partial)), MAX_STDERR_LINE)])[-STDERR_LINES:]
        return tuple(lines)

    # -- ending ------------------------------------------------------------------------------

    def finish(self) -> tuple[int | None, str | None, tuple[str, ...]]:
        """After standard output closed: (exit status, signal name, stderr tail), killing a child
        that does not exit within ``EXIT_GRACE_SECONDS``."""
        tail = self.stderr_tail(EXIT_GRACE_SECONDS)
        try:
            self.proc.wait(EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        killed_by_us = self.proc.returncode is None
        self.kill()
        if killed_by_us:
            return None, None, tail
        return _status(self.proc.returncode) + (tail,)

    def kill_group(self) -> None:
        """SIGKILL the child's process group, nothing else (safe from another thread: the call
        using the pipes sees them close and ends as a ``crash``)."""
        if self.owner == os.getpid():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """Kill the child's whole process group and release its pipes (idempotent)."""
        if self.owner == os.getpid():
            self.kill_group()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not wait on the child
                pass
        self.release()

    def release(self) -> None:
        """Close this process's ends of the pipes (a forked worker drops its parent's child this way)."""
        try:
            self.selector.close()
        except Exception:  # noqa: BLE001 - closing twice
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def close(self, grace: float = 0.5) -> None:
        """End of standard input means "stop" (§1): give the child ``grace`` seconds, then kill the group."""
        if self.owner == os.getpid():
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


def _read(fd: int, size: int) -> bytes | None:
    try:
        return os.read(fd, size)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def text_of(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").rstrip("\r\n")


def _status(returncode: int) -> tuple[int | None, str | None]:
    if returncode >= 0:
        return returncode, None
    try:
        return None, signal.Signals(-returncode).name
    except ValueError:
        return None, f"signal {-returncode}"


