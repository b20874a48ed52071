"""Python user assignors (``module:callable``) run in a child worker process (issue 14, item 1).

    isolated_user_assignor(ref, *, call_seconds=None, memory_bytes=DEFAULT_MEMORY_BYTES) -> AssignorInfo

The callable keeps the contract of ``assignors.registry`` (same dict in, same checks on what it
returns), but runs in ``python -m stickyproof.peers.worker REF``, spoken to over the assignor
protocol like any ``exec:`` peer. So whatever it does is one call's recorded error, never the end
of stickyproof: ``sys.exit``/``os._exit`` and a segfault are a ``crash`` with the exit status or
signal and its stderr tail, an endless loop a ``time-limit`` (the child is killed), a result
breaking the contract an ``error`` naming the path, and its ``print()`` output goes to the stderr
tail. The next call starts a fresh worker.

The worker sees the module the way ``python -m`` does: the current directory first on its path,
then every entry of this process's ``sys.path`` (so what imports here imports there), with this
stickyproof first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..assignors.info import AssignorInfo
from ..errors import AssignorCrash, UnknownAssignor
from .exec import DEFAULT_CALL_SECONDS, START_SECONDS, ExecAssignorFn, ExecClient

__all__ = ["DEFAULT_MEMORY_BYTES", "isolated_user_assignor", "worker_argv"]

DEFAULT_MEMORY_BYTES = 4 * 1024**3
"""The worker's address-space cap (``RLIMIT_AS``): 4 GiB, room for the scientific stack a user
module may import, and a bound on an assignor that allocates without end (it gets ``MemoryError``,
recorded as its error). ``None`` or 0 lifts it."""

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding this stickyproof


def worker_argv(ref: str, memory_bytes: int | None = DEFAULT_MEMORY_BYTES, python: str | None = None) -> list[str]:
    """The command line of the worker serving ``ref``."""
    return [python or sys.executable, "-m", "stickyproof.peers.worker", "--memory-bytes", str(memory_bytes or 0), ref]


def _worker_env() -> dict[str, str]:
    paths = [_PACKAGE_ROOT] + [p for p in sys.path if p and p != _PACKAGE_ROOT]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.setdefault("PYTHONHASHSEED", "0")  # a user assignor iterating a set answers the same way each run
    return env


def isolated_user_assignor(
    ref: str,
    *,
    call_seconds: float | None = None,
    memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
    cwd: str | None = None,
    start_seconds: float = START_SECONDS,
) -> AssignorInfo:
    """The user assignor ``ref`` (``module.path:callable``) served by a worker process.

    Raises ``UnknownAssignor`` when the worker cannot load it (the registry's message: no such
    module, no such attribute, not callable, bad ``supported_protocols``...). ``call_seconds``
    bounds each call (default ``DEFAULT_CALL_SECONDS``; ``grading`` binds
    ``Limits.assignor_seconds``), ``memory_bytes`` the worker's address space.
    """
    module, _, attr = ref.partition(":")
    if not module or not attr or ":" in attr:
        raise UnknownAssignor(f"{ref!r}: a user assignor is written module.path:callable")
    if memory_bytes is not None and (isinstance(memory_bytes, bool) or not isinstance(memory_bytes, int) or memory_bytes < 0):
        raise UnknownAssignor(f"{ref}: memory_bytes must be a non-negative integer or None, got {memory_bytes!r}")
    client = ExecClient(ref, worker_argv(ref, memory_bytes), env=_worker_env(), cwd=cwd, start_seconds=start_seconds)
    fn = ExecAssignorFn(client, DEFAULT_CALL_SECONDS if call_seconds is None else call_seconds)
    try:
        hello = client.start()
    except UnknownAssignor as exc:
        cause = exc.__cause__
        tail = cause.stderr_tail if isinstance(cause, AssignorCrash) else ()
        said = [line.removeprefix("UnknownAssignor: ") for line in tail if line.startswith("UnknownAssignor: ")]
        if said:  # the worker's own one-line reason: the registry's message, as in process
            raise UnknownAssignor(said[-1]) from None
        raise
    return AssignorInfo(
        name=ref,
        kafka_name=hello.kafka_name,
        variant="user",
        protocols=hello.protocols,
        fn=fn,
        description=f"user assignor {ref}, isolated in a worker process",
        user=True,
        contract=hello.contract or "kafka",
    )
