"""Child processes that never outlive the command: each in its own process group, killed with it.

A broker or a member left running after ``stickyproof live`` ends would hold ports, memory and a
group's partitions until someone noticed, so every child started here is stopped by whichever comes
first: the context that started it ending (normally, by an exception, by Ctrl-C), ``atexit``, a
SIGTERM or SIGHUP to us (turned into ``SystemExit`` while children run, so the contexts unwind), or,
when we die without unwinding (SIGKILL, a crash in C), the kernel: on Linux each child asks for
SIGKILL when its parent dies (``PR_SET_PDEATHSIG``). The temporary directory such a killed run leaves
is deleted by the next run (``owned_tempdir``: its owner's pid is gone).
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Sequence

__all__ = ["spawn", "stop", "running_children", "owned_tempdir", "keep_for_log"]

_children: dict[int, subprocess.Popen] = {}
_lock = threading.Lock()
_previous_handlers: dict[int, object] = {}


def _load_prctl():
    """Linux's ``prctl``, looked up here and not in the child: between fork and exec the child may
    not import (another thread of ours could hold the import lock it would wait for)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _install_handlers() -> None:
    """SIGTERM/SIGHUP become ``SystemExit`` while children run, so ``with`` blocks stop them; only when
    nobody else handles those signals and only from the main thread (Python's rule for handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if sig not in _previous_handlers and signal.getsignal(sig) == signal.SIG_DFL:
            _previous_handlers[sig] = signal.signal(sig, _exit_on_signal)


def _restore_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, handler in list(_previous_handlers.items()):
        signal.signal(sig, handler)  # type: ignore[arg-type]
        del _previous_handlers[sig]


def spawn(argv: Sequence[str], *, cwd: str | None = None, stdin=None, stdout: IO | int | None = None,
          stderr: IO | int | None = None, text: bool = False) -> subprocess.Popen:
    """Start ``argv`` in a new process group (Ctrl-C in the terminal reaches us, not it: we stop it,
    in order), registered for ``stop`` at exit."""
    proc = subprocess.Popen(list(argv), cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr, text=text,
                            start_new_session=True, preexec_fn=_die_with_parent, bufsize=1 if text else -1)
    with _lock:
        _children[proc.pid] = proc
        _install_handlers()
    return proc


def stop(proc: subprocess.Popen, *, grace: float = 3.0) -> int | None:
    """SIGTERM to the child's process group, SIGKILL after ``grace`` seconds; waits for it. Returns its
    exit status."""
    try:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        # the group may hold more than the leader (a JVM forks nothing, but a wrapper script would)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return proc.wait()
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        with _lock:
            _children.pop(proc.pid, None)
            if not _children:
                _restore_handlers()


def running_children() -> list[int]:
    """The pids of children started here and not yet stopped (a test asserts this ends empty)."""
    with _lock:
        return sorted(pid for pid, p in _children.items() if p.poll() is None)


@atexit.register
def _stop_all() -> None:
    with _lock:
        procs = list(_children.values())
    for proc in procs:
        stop(proc, grace=1.0)


_OWNER = "owner.pid"
_KEPT = "kept-for-its-log"


def owned_tempdir(prefix: str) -> Path:
    """A fresh temporary directory marked with our pid, after deleting the ones earlier runs left when
    they were killed outright (their owner is gone, and no one kept them for a log)."""
    import tempfile

    root = Path(tempfile.gettempdir())
    for old in root.glob(f"{prefix}*"):
        try:
            pid = int((old / _OWNER).read_text().strip())
        except (OSError, ValueError):
            continue
        if (old / _KEPT).exists() or _pid_alive(pid):
            continue
        import shutil

        shutil.rmtree(old, ignore_errors=True)
    path = Path(tempfile.mkdtemp(prefix=prefix))
    (path / _OWNER).write_text(f"{os.getpid()}\n")
    return path


def keep_for_log(path: Path) -> None:
    """Mark a directory as kept on purpose (a failed start's log was named to the user)."""
    try:
        (path / _KEPT).write_text("")
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
