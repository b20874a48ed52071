"""Kafka's Java ``KafkaConsumer`` as a live member, driven over a pipe (``peers/kafka-member``).

    program = member_program()                      # built by Maven on first use, then cached
    m = JavaMember.start(program, "c1", config)      # a JVM: KafkaConsumer subscribed, polling
    m.send({"op": "stall", "ms": 3000})              # stop polling for 3 s
    m.reports()                                      # every report so far: assigned, revoked, lost, ...
    m.crash() / m.leave() / m.stop()

The member program is stickyproof's own Java (``peers/kafka-member/src``), compiled against the
kafka-clients release ``peers/versions.lock`` pins (``kafka-java-member``) and cached by
``peers.builds`` like the kafka-java harness. It speaks JSON lines: commands on standard input
(``start``, ``subscribe``, ``stall``, ``leave``, ``crash``; ``admin``, ``create-topics``,
``add-partitions``, ``delete-topic`` for the admin instance), reports on standard output, each with
the host's monotonic clock (``mono_ns``) so the reports of several members share one time line
(docs/live.md lists them).

A member owns a process, a reader thread and the reports it has read, so it is a class; the values
it produces (``Report``) are frozen.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Mapping

from ..errors import StickyproofError
from ..peers import builds
from . import processes

__all__ = ["JavaMember", "MemberFailed", "Report", "RECIPE", "MAIN_CLASS", "MEMBER_JAVA_OPTS", "member_program"]

MAIN_CLASS = "stickyproof.live.LiveMember"
MEMBER_JAVA_OPTS = ("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-XX:CICompilerCount=1")
"""A member fetches nothing much: a small heap, and the client compiler for a fast start on 2 cores."""


class MemberFailed(StickyproofError, RuntimeError):
    """A live member could not be built, started, or answered something that is not a report."""


@dataclass(frozen=True)
class Report:
    """One line a member wrote: ``ev`` (``assigned``, ``revoked``, ``lost``, ``stalled``, ``resumed``,
    ``started``, ``closed``, ``crashing``, ``error``, ...), the member's ``name``, the host's monotonic
    clock in nanoseconds, the wall clock in milliseconds, and the event's own fields."""

    ev: str
    name: str
    mono_ns: int
    wall_ms: int
    fields: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.fields).get(key, default)

    def partitions(self) -> frozenset[tuple[str, int]]:
        return frozenset((t, int(p)) for t, p in (self.get("partitions") or ()))

    def to_dict(self) -> dict[str, Any]:
        return {"ev": self.ev, "name": self.name, "mono_ns": self.mono_ns, "wall_ms": self.wall_ms, **dict(self.fields)}


def _build(version: str, out: Path, final: Path, log: IO[str]) -> Mapping[str, list[str]]:
    """``recipe.build``: Maven compiles the member against kafka-clients ``version`` (``classes/``,
    ``lib/``); the manifest's one program is ``member``, without JVM options (ours at start time)."""
    mvn, java = shutil.which("mvn"), shutil.which("java")
    if mvn is None:
        raise builds.BuildStep("maven", "mvn not found on PATH (Debian: apt-get install maven)")
    if java is None:
        raise builds.BuildStep("maven", "java not found on PATH (Debian: apt-get install openjdk-17-jdk-headless)")
    pom = builds.repo_peers_dir() / RECIPE.sources / "pom.xml"
    builds.run_tool("maven", [mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(pom), f"-Dkafka.version={version}",
                              f"-Dmember.out={out / 'maven'}", "process-classes"], log, cwd=pom.parent)
    os.replace(out / "maven" / "classes", out / "classes")
    os.replace(out / "maven" / "lib", out / "lib")
    shutil.rmtree(out / "maven", ignore_errors=True)
    jars = sorted(p.name for p in (out / "lib").glob("*.jar"))
    log.write(f"runtime jars: {' '.join(jars)}\n")
    classpath = os.pathsep.join([str(final / "classes"), *(str(final / "lib" / j) for j in jars)])
    return {"member": [java, "-cp", classpath, MAIN_CLASS]}


RECIPE = builds.Recipe("kafka-java-member", "maven", "kafka-member", _build)


def member_program(version: str | None = None) -> list[str]:
    """The argv that starts one member (JVM options included), building it on first use."""
    try:
        manifest = builds.built(RECIPE, version)
    except builds.PeerBuildFailed as exc:
        raise MemberFailed(f"the Java live member could not be built: {exc}") from None
    argv = manifest["assignors"]["member"]
    return [argv[0], *MEMBER_JAVA_OPTS, *argv[1:]]


class JavaMember:
    """One member process: commands in, reports out (read by a thread into ``reports()``)."""

    def __init__(self, name: str, proc: subprocess.Popen, stderr_path: Path | None):
        self.name = name
        self.proc = proc
        self._stderr_path = stderr_path
        self._reports: list[Report] = []
        self._new: queue.Queue[Report] = queue.Queue()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name=f"live-{name}", daemon=True)
        self._reader.start()

    @classmethod
    def spawn(cls, program: list[str], name: str, *, stderr_dir: Path | None = None) -> "JavaMember":
        """Start the program (not yet a consumer: ``start`` or ``admin`` makes it one)."""
        stderr_path = (stderr_dir / f"{name}.stderr") if stderr_dir else None
        err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        try:
            proc = processes.spawn(program, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
        except OSError as exc:
            raise MemberFailed(f"{name}: cannot start the Java member ({exc})") from None
        finally:
            if stderr_path:
                err.close()  # type: ignore[union-attr]
        return cls(name, proc, stderr_path)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                doc = json.loads(line)
                report = Report(str(doc.pop("ev")), str(doc.pop("name")), int(doc.pop("mono_ns")), int(doc.pop("wall_ms")),
                                tuple(sorted(doc.items())))
            except (ValueError, KeyError, TypeError):
                report = Report("garbage", self.name, time.monotonic_ns(), int(time.time() * 1000), (("line", line[:200]),))
            with self._lock:
                self._reports.append(report)
            self._new.put(report)

    def send(self, command: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise MemberFailed(f"{self.name}: the member process is gone (exit status {self.proc.poll()}){self._stderr_tail()}") from None

    def reports(self) -> list[Report]:
        with self._lock:
            return list(self._reports)

    def wait_for(self, ev: str, timeout: float, *, op: str | None = None) -> Report:
        """The next report ``ev``; an ``error`` report of command ``op``, or the process ending first,
        is a ``MemberFailed``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise MemberFailed(f"{self.name}: no {ev!r} report within {timeout:.0f} s{self._stderr_tail()}")
            try:
                r = self._new.get(timeout=min(left, 0.2))
            except queue.Empty:
                if self.proc.poll() is not None and not self._reader.is_alive() and self._new.empty():
                    raise MemberFailed(f"{self.name}: exited (status {self.proc.returncode}) before reporting {ev!r}"
                                       f"{self._stderr_tail()}") from None
                continue
            if r.ev == ev:
                return r
            if r.ev == "error" and op is not None and r.get("op") == op:
                raise MemberFailed(f"{self.name}: {op}: {r.get('message')}")

    def _stderr_tail(self) -> str:
        if not self._stderr_path:
            return ""
        try:
            lines = [ln for ln in self._stderr_path.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        return f": {lines[-1][:300]}" if lines else ""

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def crash(self) -> None:
        """Halt the JVM now (no LeaveGroup, no callbacks); SIGKILL when it does not answer."""
        if self.alive:
            try:
                self.send({"op": "crash"})
                self.proc.wait(5)
            except (MemberFailed, subprocess.TimeoutExpired):
                pass
        self.stop(grace=0.0)

    def leave(self, timeout: float = 30.0) -> None:
        """Close the consumer (its callbacks run, LeaveGroup unless static) and wait for the process to end."""
        self.send({"op": "leave"})
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        self.stop(grace=0.0)

    def stop(self, grace: float = 3.0) -> None:
        """End the process (and its group) however it stands; reports read so far are kept."""
        processes.stop(self.proc, grace=grace)
        self._reader.join(5)
