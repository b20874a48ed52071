"""``kafka-java:uniform@VERSION``, ``kafka-java:consumer-range@VERSION``: Kafka's own server-side
(KIP-848) assignors, run from the ``org.apache.kafka:kafka-group-coordinator`` jars.

    resolve("uniform@4.4.0") -> AssignorInfo   its ``consumer_group`` runs the jar on a consumer-group scenario
    coordinator_assignor("uniform", "4.4.0") -> CoordinatorAssignor   the same, as a callable
    RECIPE                                   -> how builds.built builds one version

The harness (``peers/kafka-java-coordinator/src``, stickyproof's own Java) builds the coordinator's
``GroupSpec`` from a consumer-group scenario (docs/scenario-format.md) the way
``TargetAssignmentBuilder`` does, calls ``UniformAssignor``/``RangeAssignor.assign`` and prints the
new targets; one JSON line in, one out. Maven compiles it against the coordinator jars of that
Kafka release and copies every runtime jar beside it (``peers/kafka-java-coordinator/pom.xml``), and
``builds`` caches the result, so later runs need neither the network nor Maven. The default version
is kafka-java's pin in ``peers/versions.lock``. Kafka's ``PartitionAssignorException`` (and any other
throw) comes back as ``AssignorFailure`` naming it.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import IO, Mapping

from ..assignors.info import OUT_OF_PROCESS_CALL_SECONDS, AssignorInfo
from ..assignors.registry import consumer_group_row
from ..errors import AssignorCrash, AssignorFailure, AssignorTimeLimit, UnknownAssignor
from ..model import Assignment, Scenario, TopicPartition, scenario_to_dict
from . import builds
from .child import Child, Ended, TimedOut, TooLong, text_of

__all__ = ["RECIPE", "MAIN_CLASS", "NAMES", "CoordinatorAssignor", "coordinator_assignor", "resolve", "build"]

MAIN_CLASS = "stickyproof.peers.coordinator.CoordinatorPeer"
NAMES = ("uniform", "consumer-range")
"""The server-side assignors the harness runs (Kafka's ``uniform`` and coordinator ``range``)."""


def build(version: str, out: Path, final: Path, log: IO[str]) -> Mapping[str, list[str]]:
    """``recipe.build``: Maven compiles the harness against the coordinator jars of ``version``."""
    from .kafka_java import _maven

    mvn, java = shutil.which("mvn"), shutil.which("java")
    if mvn is None:
        raise builds.BuildStep("maven", "mvn not found on PATH (Debian: apt-get install maven)")
    if java is None:
        raise builds.BuildStep("maven", "java not found on PATH (Debian: apt-get install openjdk-17-jdk-headless)")
    sources = builds.repo_peers_dir() / RECIPE.sources
    maven_out = out / "maven"
    _maven([mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(sources / "pom.xml"),
            f"-Dkafka.version={version}", f"-Dharness.out={maven_out}", "process-classes"], log, cwd=sources)
    os.replace(maven_out / "classes", out / "classes")
    os.replace(maven_out / "lib", out / "lib")
    shutil.rmtree(maven_out)
    jars = sorted(p.name for p in (out / "lib").glob("*.jar"))
    log.write(f"runtime jars: {' '.join(jars)}\n")
    classpath = os.pathsep.join([str(final / "classes"), *(str(final / "lib" / j) for j in jars)])
    return {name: [java, "-cp", classpath, MAIN_CLASS, name] for name in NAMES}


RECIPE = builds.Recipe("kafka-java-coordinator", "maven", "kafka-java-coordinator", build)


class CoordinatorAssignor:
    """One harness child serving one assignor: ``__call__(scenario) -> Assignment``, bounded by
    ``call_seconds``; started on first call, started again after a failure, killed at exit."""

    def __init__(self, name: str, argv: list[str], call_seconds: float = OUT_OF_PROCESS_CALL_SECONDS):
        self.name = name
        self.argv = argv
        self.call_seconds = call_seconds
        self._child: Child | None = None
        self._lock = threading.Lock()
        atexit.register(self.close)

    def __call__(self, scenario: Scenario) -> Assignment:
        return self._assignment(self._exchange(scenario, None))

    def timed(self, scenario: Scenario, *, warmup: int, iterations: int) -> tuple[Assignment, tuple[float, ...], int]:
        """Run the assign call ``warmup`` times unmeasured, then ``iterations`` times timed inside the
        harness (no JVM start, JSON or GroupSpec building in the figures): the answer, each timed
        call's seconds, and the JVM's used heap after the last call (benchmarks/server_side.py)."""
        answer = self._exchange(scenario, {"warmup": warmup, "iterations": iterations})
        return self._assignment(answer), tuple(float(x) for x in answer["assign_seconds"]), int(answer["heap_used_bytes"])

    def _exchange(self, scenario: Scenario, timing: Mapping[str, int] | None) -> dict:
        if not scenario.is_consumer_group:
            raise AssignorFailure(f"{self.name} is a server-side (KIP-848) assignor: it assigns consumer groups "
                                  "(group_protocol \"consumer\"), not a classic group")
        doc = scenario_to_dict(scenario)
        if timing is not None:
            doc["timing"] = dict(timing)
        line = (json.dumps(doc, separators=(",", ":")) + "\n").encode()
        with self._lock:
            if self._child is None or self._child.owner != os.getpid():
                self._child = Child(self.argv, None, None)
            child = self._child
            try:
                raw = child.exchange(line, time.monotonic() + self.call_seconds)
            except TimedOut:
                self._drop()
                raise AssignorTimeLimit(f"{self.name}: no answer within {self.call_seconds:g} s") from None
            except (Ended, TooLong):
                tail = child.stderr_tail(0.2)
                self._drop()
                raise AssignorCrash(f"{self.name}: the harness ended without an answer: {' | '.join(tail[-3:])}") from None
        answer = json.loads(text_of(raw))
        if "error" in answer:
            err = answer["error"]
            raise AssignorFailure(err.get("message", ""), kafka_exception=err.get("exception"))
        return answer

    @staticmethod
    def _assignment(answer: dict) -> Assignment:
        return Assignment({
            member_id: tuple(sorted(TopicPartition(t, p) for t, parts in topics.items() for p in parts))
            for member_id, topics in answer["assignment"].items()
        })

    def _drop(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None

    def close(self) -> None:
        with self._lock:
            if self._child is not None:
                self._child.close()
                self._child = None


def coordinator_assignor(name: str, version: str | None = None) -> CoordinatorAssignor:
    """Kafka's server-side assignor ``name`` of release ``version`` (built and cached on first use)."""
    if name not in NAMES:
        raise UnknownAssignor(f"kafka-java:{name}: the coordinator harness runs {', '.join(NAMES)}")
    version = version or builds.default_version("kafka-java")
    argv = builds.built(RECIPE, version)["assignors"][name]
    return CoordinatorAssignor(f"kafka-java:{name}@{version}", argv)


def resolve(rest: str) -> AssignorInfo:
    """``kafka-java:uniform[@VERSION]`` / ``kafka-java:consumer-range[@VERSION]`` as an ``AssignorInfo``
    whose ``consumer_group`` is the harness (``kafka_java.resolve`` routes these names here)."""
    name, version = builds.split_version(rest)
    fn = coordinator_assignor(name, version)
    return consumer_group_row(fn.name, name, fn, f"Kafka's own server-side {name} assignor ({fn.name}, group-coordinator jars)")
