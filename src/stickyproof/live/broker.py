"""A single-node Kafka broker that stickyproof starts for itself, or one the user names.

    with running_broker() as broker:                 # resolved from Maven on first use, then cached
        broker.bootstrap                              # "127.0.0.1:PORT"
    with running_broker(bootstrap="host:9092") as b:  # attach: nothing started, nothing stopped

The broker is Kafka's own, ``org.apache.kafka:kafka_2.13`` at the version ``peers/versions.lock``
pins (``kafka-broker``), with its runtime dependencies: ``peers/kafka-broker/pom.xml`` has Maven copy
them into the user's cache (``peers.builds``: one build per version, under a file lock), and every
later start runs from there without the network. A start formats a fresh temporary directory
(``kafka.tools.StorageTool format --standalone``) and runs ``kafka.Kafka`` as a combined
broker+controller on loopback, on free ports, with the settings a one-node test group needs
(replication factor 1 for the internal topics, ``group.initial.rebalance.delay.ms=0`` so the first
rebalance does not wait three seconds). It is ready when its broker listener answers an
``ApiVersions`` request: the listener's acceptors open only once the broker is unfenced.

The broker runs in its own process group and is stopped when the ``with`` block ends, however it
ends (``live.processes``: atexit, SIGTERM, and the kernel's parent-death signal when we are killed);
its directory is deleted. A broker that cannot start is one ``BrokerUnavailable`` line naming why
(the first ERROR of its log, or the time it was given) and where its log was kept.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import struct
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator, Mapping

from ..errors import StickyproofError
from ..peers import builds
from . import processes

__all__ = ["ASSIGNMENT_AT_ONCE", "CONSUMER_HEARTBEAT_MS", "CONSUMER_SESSION_MS", "Broker", "BrokerUnavailable", "RECIPE", "DEFAULT_START_SECONDS",
           "BROKER_JAVA_OPTS", "running_broker",
           "peak_rss_bytes", "parse_bootstrap", "broker_settings"]

CONSUMER_SESSION_MS = 10000
"""``group.consumer.session.timeout.ms`` of the broker started here: a KIP-848 member's session is the broker's."""

CONSUMER_HEARTBEAT_MS = 1000
"""``group.consumer.heartbeat.interval.ms`` of the broker started here: a KIP-848 member heartbeats at the broker's pace."""

DEFAULT_START_SECONDS = 120.0
"""How long a start may take before it is called failed: measured 10-25 s on a loaded 2-core machine
(docs/live.md), so this is a hang, not a slow start."""

BROKER_JAVA_OPTS = ("-Xmx512m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
                    "-XX:CICompilerCount=1", "-Djava.awt.headless=true")
"""A small heap and the client compiler only: a test broker serves a handful of members, and the
C1-only JIT halves its start-up on two busy cores (docs/live.md)."""


class BrokerUnavailable(StickyproofError, RuntimeError):
    """The broker could not be built, started or reached (one line: why, and where its log is)."""


@dataclass(frozen=True)
class Broker:
    """A running broker: where to reach it, and, when stickyproof started it, its process and directory."""

    bootstrap: str
    pid: int | None = None
    directory: Path | None = None
    version: str | None = None
    start_seconds: float | None = None

    @property
    def started_here(self) -> bool:
        return self.pid is not None


ASSIGNMENT_AT_ONCE = {"group.consumer.assignment.interval.ms": "0", "group.consumer.assignor.offload.enable": "false"}
"""KIP-1263 (Kafka 4.3+) batches a consumer group's target computation (at most one per
``group.consumer.assignment.interval.ms``, 1 s by default) and computes it on a background thread
(``group.consumer.assignor.offload.enable``, on by default): a new group's first computed target then
comes after the joins it batched, empty at first, one group epoch later than a coordinator that
computes at every bump. The KIP-848 simulator computes every target at once, as these two settings
make the broker do; ``live --compare`` under ``group.protocol=consumer`` starts its broker with them
(measured: ``history-0-17`` forming, default settings: epochs 2 (empty) then 8; these: 7, as the
simulator)."""


def broker_settings(port: int, controller_port: int, data_dir: Path, migration_policy: str | None = None,
                    assignment_at_once: bool = False) -> dict[str, str]:
    """``server.properties`` of the one-node broker: every value is what a single node needs, or what
    makes a test group's life take seconds rather than minutes (the KIP-848 timeouts' floors).
    ``migration_policy``: ``group.consumer.migration.policy`` when a run names one (absent: Kafka's
    default, ``bidirectional``), so a migration history runs under the policy it was written for.
    ``assignment_at_once``: KIP-1263's batching and offload off (``ASSIGNMENT_AT_ONCE``), for a run
    compared step by step with the simulator; otherwise Kafka's defaults."""
    policy = {} if migration_policy is None else {"group.consumer.migration.policy": migration_policy}
    if assignment_at_once:
        policy.update(ASSIGNMENT_AT_ONCE)
    return {**policy,
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(data_dir),
        # one node: every internal topic at replication factor 1
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # the first rebalance of a new group starts at once (default: 3 s later)
        "group.initial.rebalance.delay.ms": "0",
        # classic groups: session timeouts from one second, so a history's ticks can be half a second
        "group.min.session.timeout.ms": "1000",
        # KIP-848 groups: the broker's floors, so a history's stalls and crashes take seconds
        "group.consumer.min.session.timeout.ms": "6000",
        "group.consumer.session.timeout.ms": str(CONSUMER_SESSION_MS),
        "group.consumer.min.heartbeat.interval.ms": "500",
        "group.consumer.heartbeat.interval.ms": str(CONSUMER_HEARTBEAT_MS),
        # topics come from an AdminClient call, with the partitions the scenario names
        "auto.create.topics.enable": "false",
        "num.partitions": "1",
        # few threads: two shared cores
        "num.network.threads": "1",
        "num.io.threads": "2",
        "background.threads": "2",
        "num.recovery.threads.per.data.dir": "1",
        "log.cleaner.enable": "false",
    }


_LOG4J2 = """\
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = OUT
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = INFO
"""


# ------------------------------------------------------------------------------------------
# The jars, from Maven, into the cache


def _build(version: str, out: Path, final: Path, log: IO[str]) -> Mapping[str, list[str]]:
    """``recipe.build``: Maven copies ``kafka_2.13:version`` and its runtime jars into ``out/lib``; the
    manifest names the two programs a start runs (``storage-tool``, ``server``), without their
    JVM options, which are ours at start time."""
    mvn, java = shutil.which("mvn"), shutil.which("java")
    if mvn is None:
        raise builds.BuildStep("maven", "mvn not found on PATH (Debian: apt-get install maven)")
    if java is None:
        raise builds.BuildStep("maven", "java not found on PATH (Kafka 4 needs Java 17: apt-get install openjdk-17-jdk-headless)")
    pom = builds.repo_peers_dir() / RECIPE.sources / "pom.xml"
    builds.run_tool("maven", [mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(pom), f"-Dkafka.version={version}",
                              f"-Dbroker.out={out / 'maven'}", "dependency:copy-dependencies"], log, cwd=pom.parent)
    os.replace(out / "maven" / "lib", out / "lib")
    shutil.rmtree(out / "maven", ignore_errors=True)
    jars = sorted(p.name for p in (out / "lib").glob("*.jar"))
    if f"kafka_2.13-{version}.jar" not in jars:
        raise builds.BuildStep("maven", f"kafka_2.13-{version}.jar is not among the copied jars")
    log.write(f"runtime jars: {' '.join(jars)}\n")
    classpath = os.pathsep.join(str(final / "lib" / j) for j in jars)
    return {"storage-tool": [java, "-cp", classpath, "kafka.tools.StorageTool"],
            "server": [java, "-cp", classpath, "kafka.Kafka"]}


RECIPE = builds.Recipe("kafka-broker", "maven", "kafka-broker", _build)


# ------------------------------------------------------------------------------------------
# Starting, probing, stopping


def parse_bootstrap(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9092`` too) -> (host, port); ``BrokerUnavailable`` naming ``--bootstrap``."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise BrokerUnavailable(f"--bootstrap: {text!r} is not HOST:PORT")
    return host, int(port)


def _free_ports(n: int) -> list[int]:
    """Ports the kernel just handed out, released for the broker to bind (the window where another
    process could take one is short; a clash shows as a bind error in the broker's first ERROR line)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _api_versions(host: str, port: int, timeout: float) -> bool:
    """One ``ApiVersions`` v0 request (api key 18: size, key, version, correlation id, client id) and
    its answer: the broker serves requests, not only accepts connections."""
    client = b"stickyproof"
    body = struct.pack(">hhih", 18, 0, 1, len(client)) + client
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(struct.pack(">i", len(body)) + body)
            head = b""
            while len(head) < 10:
                chunk = s.recv(10 - len(head))
                if not chunk:
                    return False
                head += chunk
            _size, correlation, error = struct.unpack(">iih", head)
            return correlation == 1 and error == 0
    except OSError:
        return False


def _first_error(log: Path) -> str | None:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines):
        if " ERROR " in line or line.startswith(("Exception", "Error:")):
            text = line.split(" ERROR ", 1)[-1].strip()
            # an exception's message is often on the next line
            if i + 1 < len(lines) and lines[i + 1].strip() and not lines[i + 1].startswith("["):
                text += " " + lines[i + 1].strip()
            return text[:300]
    return None


def _cluster_id() -> str:
    """A random Kafka ``Uuid`` in its base64url form (what ``kafka-storage random-uuid`` prints)."""
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode("ascii")


@contextmanager
def running_broker(*, bootstrap: str | None = None, version: str | None = None,
                   start_seconds: float = DEFAULT_START_SECONDS, migration_policy: str | None = None,
                   assignment_at_once: bool = False) -> Iterator[Broker]:
    """The broker at ``bootstrap`` (checked to answer), else a fresh one-node broker, stopped and
    deleted when the block ends; ``migration_policy`` is the fresh broker's
    ``group.consumer.migration.policy`` and ``assignment_at_once`` its KIP-1263 settings
    (``broker_settings``; a broker at ``bootstrap`` keeps its own)."""
    if bootstrap is not None:
        host, port = parse_bootstrap(bootstrap)
        if not _api_versions(host, port, timeout=10.0):
            raise BrokerUnavailable(f"--bootstrap {bootstrap}: no Kafka broker answers there (ApiVersions)")
        yield Broker(bootstrap=f"{host}:{port}")
        return
    try:
        manifest = builds.built(RECIPE, version)
    except builds.PeerBuildFailed as exc:
        raise BrokerUnavailable(f"the Kafka broker could not be resolved: {exc}") from None
    programs = manifest["assignors"]  # the manifest's name -> argv map: here, the broker's programs
    version = manifest["version"]
    directory = processes.owned_tempdir("stickyproof-broker-")
    proc = None
    failed = False
    try:
        started = time.monotonic()
        port, controller_port = _free_ports(2)
        settings = broker_settings(port, controller_port, directory / "data", migration_policy, assignment_at_once)
        (directory / "server.properties").write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
        (directory / "log4j2.properties").write_text(_LOG4J2, encoding="utf-8")
        jvm = [*BROKER_JAVA_OPTS, f"-Dlog4j2.configurationFile={directory / 'log4j2.properties'}"]

        def with_opts(argv: list[str]) -> list[str]:
            return [argv[0], *jvm, *argv[1:]]

        log_path = directory / "server.log"
        with open(directory / "format.log", "wb") as out:
            fmt = processes.spawn(with_opts(programs["storage-tool"]) + [
                "format", "-t", _cluster_id(), "-c", str(directory / "server.properties"), "--standalone"],
                cwd=str(directory), stdout=out, stderr=out)
            try:
                status = fmt.wait(start_seconds)
            except BaseException:
                processes.stop(fmt)
                raise
            processes.stop(fmt)
        if status != 0:
            why = _first_error(directory / "format.log") or f"exit status {status}"
            raise BrokerUnavailable(f"kafka-broker {version}: formatting its storage failed: {why}")
        with open(log_path, "wb") as out:
            proc = processes.spawn(with_opts(programs["server"]) + [str(directory / "server.properties")],
                                   cwd=str(directory), stdout=out, stderr=out)
        deadline = started + start_seconds
        while not _api_versions("127.0.0.1", port, timeout=2.0):
            if proc.poll() is not None:
                why = _first_error(log_path) or f"exit status {proc.returncode}"
                raise BrokerUnavailable(f"kafka-broker {version} exited while starting: {why}")
            if time.monotonic() > deadline:
                raise BrokerUnavailable(f"kafka-broker {version} did not answer within {start_seconds:.0f} s")
            time.sleep(0.1)
    except BrokerUnavailable as exc:
        failed = True  # its directory is kept: the one line says where the log is
        processes.keep_for_log(directory)
        raise BrokerUnavailable(f"{exc} (log: {directory})") from None
    else:
        yield Broker(bootstrap=f"127.0.0.1:{port}", pid=proc.pid, directory=directory, version=version,
                     start_seconds=round(time.monotonic() - started, 2))
    finally:
        if proc is not None:
            processes.stop(proc)
        if not failed:
            shutil.rmtree(directory, ignore_errors=True)


def peak_rss_bytes(pid: int) -> int | None:
    """The process's peak resident set (Linux ``VmHWM``), or None where /proc does not say."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
