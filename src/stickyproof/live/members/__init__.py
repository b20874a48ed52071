"""Live members in Python client libraries, speaking the Java member's JSON-lines protocol (docs/live.md).

    python -m stickyproof.live.members.librdkafka     confluent-kafka (librdkafka) as a member
    python -m stickyproof.live.members.kafka_python   kafka-python as a member
    library_program("franz-go")                       franz-go: a Go program (peers/franz-go-member), built and cached

Each is a small program run as a child process, like ``peers/kafka-member``: commands on standard
input (``start``, ``subscribe``, ``stall``, ``leave``, ``crash``), reports on standard output, one JSON
object a line, stamped with the host's monotonic clock (``time.monotonic_ns``: CLOCK_MONOTONIC on
Linux, the clock the Java member's ``System.nanoTime`` reads), so reports of members of several
libraries order on one time line. The admin commands stay the Java member's (``run.py`` starts one
Java admin whatever the clients).

The loop is shared (``serve``); a library is a ``Library``: how to build its consumer from the
``start`` command, subscribe, poll once, close, and read the generation and member id where the
library exposes them. The consumer is owned by one thread (the poll loop), as every one of these
libraries requires: commands read from standard input wait in a queue and run between two polls,
and the rebalance callbacks (which each library calls from inside its poll) report as they run.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from typing import Any, Callable, Mapping, Sequence

__all__ = ["Library", "serve", "report", "partitions_json", "LIBRARY_MODULES", "library_program"]

LIBRARY_MODULES = {
    "librdkafka": "stickyproof.live.members.librdkafka",
    "kafka-python": "stickyproof.live.members.kafka_python",
}
"""``--clients`` name -> the module ``python -m`` runs as that library's member."""


def library_program(client: str) -> list[str]:
    """The argv that starts one member of ``client`` (not ``java``: ``java_member.member_program``): a
    Python module run unbuffered (a report is written when it happens, not when a buffer fills), or
    franz-go's Go program, built against the pinned franz-go on first use."""
    if client == "franz-go":
        from .franz_go import member_program

        return member_program()
    return [sys.executable, "-u", "-m", LIBRARY_MODULES[client]]

POLL_SECONDS = 0.05

_write = threading.Lock()
_name = "?"


def report(ev: str, **fields: Any) -> None:
    """One report line: ``{"ev", "name", "mono_ns", "wall_ms", **fields}`` (the Java member's shape)."""
    doc = {"ev": ev, "name": _name, "mono_ns": time.monotonic_ns(), "wall_ms": int(time.time() * 1000), **fields}
    line = json.dumps(doc, separators=(",", ":"))
    with _write:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def partitions_json(tps: Sequence[tuple[str, int]]) -> list[list[Any]]:
    """Sorted, each once: ``[[topic, partition], ...]`` as the Java member writes them."""
    return [[t, int(p)] for t, p in sorted({(str(t), int(p)) for t, p in tps})]


class Library:
    """One client library's consumer behind the shared loop. Subclasses fill in the five hooks; each
    runs on the poll thread only. ``on_assigned`` / ``on_revoked`` / ``on_lost`` are for the
    subclass's rebalance callbacks to call with ``(topic, partition)`` pairs."""

    def open(self, start: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def subscribe(self, topics: list[str]) -> None:
        raise NotImplementedError

    def poll(self, seconds: float) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def membership(self) -> tuple[int, str | None]:
        """(generation, member id) as the library exposes them; -1 / None where it does not."""
        return -1, None

    def assignment(self) -> list[tuple[str, int]]:
        return []

    def _say(self, ev: str, tps: Sequence[tuple[str, int]]) -> None:
        generation, member_id = self.membership()
        report(ev, partitions=partitions_json(tps), generation=generation, member_id=member_id)

    def on_assigned(self, tps: Sequence[tuple[str, int]]) -> None:
        self._say("assigned", tps)

    def on_revoked(self, tps: Sequence[tuple[str, int]]) -> None:
        self._say("revoked", tps)

    def on_lost(self, tps: Sequence[tuple[str, int]]) -> None:
        self._say("lost", tps)


def _poll_loop(lib: Library, start: Mapping[str, Any], commands: "queue.Queue[dict[str, Any]]") -> None:
    try:
        lib.open(start)
        lib.subscribe([str(t) for t in start.get("topics") or ()])
    except Exception as exc:  # noqa: BLE001 - reported to stickyproof, which names it
        report("error", op="start", message=f"{type(exc).__name__}: {exc}", fatal=True)
        return
    report("started", topics=list(start.get("topics") or ()), group_protocol=start.get("group_protocol", "classic"))
    resume_pending, last_error = False, None
    while True:
        while True:
            try:
                cmd = commands.get_nowait()
            except queue.Empty:
                break
            op = str(cmd.get("op"))
            try:
                if op == "subscribe":
                    lib.subscribe([str(t) for t in cmd.get("topics") or ()])
                    report("subscribed", topics=list(cmd.get("topics") or ()))
                elif op == "stall":
                    report("stalled", ms=int(cmd["ms"]))
                    time.sleep(int(cmd["ms"]) / 1000.0)
                    resume_pending = True
                elif op == "leave":
                    lib.close()
                    report("closed")
                    os._exit(0)
                else:
                    report("error", op=op, message="unknown command")
            except Exception as exc:  # noqa: BLE001
                report("error", op=op, message=f"{type(exc).__name__}: {exc}")
        try:
            lib.poll(POLL_SECONDS)
            last_error = None
        except Exception as exc:  # noqa: BLE001 - reported once while it repeats; the loop goes on
            message = f"{type(exc).__name__}: {exc}"
            if message != last_error:
                report("error", op="poll", message=message)
            last_error = message
            # not resumed yet: librdkafka's first poll after a stall past max.poll.interval.ms returns
            # that error, and the loss it implies comes with the next poll
            continue
        if resume_pending:
            resume_pending = False
            generation, _ = lib.membership()
            report("resumed", partitions=partitions_json(lib.assignment()), generation=generation)


def serve(make: Callable[[], Library]) -> None:
    """The member's main loop: read commands until standard input closes (stickyproof is gone: end
    at once, as a crash), ``start`` the poll thread, ``crash`` by ``os._exit`` (no LeaveGroup, no
    callbacks, as a killed process)."""
    global _name
    commands: queue.Queue[dict[str, Any]] = queue.Queue()
    poller: threading.Thread | None = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
            if not isinstance(cmd, dict):
                raise ValueError("expected a JSON object")
        except ValueError as exc:
            report("error", message=f"bad command: {exc}")
            continue
        op = str(cmd.get("op"))
        if op == "start":
            if poller is not None:
                report("error", op=op, message="already started")
                continue
            _name = str(cmd.get("name"))
            poller = threading.Thread(target=_poll_loop, args=(make(), cmd, commands), name="poll-loop", daemon=True)
            poller.start()
        elif op == "crash":
            report("crashing")
            os._exit(3)
        elif op == "exit":
            report("exited")
            os._exit(0)
        elif op in ("admin", "create-topics", "add-partitions", "delete-topic"):
            report("error", op=op, message="admin commands are the Java member's")
        else:
            commands.put(cmd)
    os._exit(4)
