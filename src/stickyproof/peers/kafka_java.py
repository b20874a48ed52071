"""``kafka-java:NAME[@VERSION]``: Kafka's own client assignors, from ``org.apache.kafka:kafka-clients``.

    resolve("sticky@3.9.1") -> AssignorInfo     built on first use, reused from the cache after
    resolve("sticky")       -> the version peers/versions.lock pins
    resolve("sticky@local") -> the harness peers/kafka-java/build.sh built from a source tree or jar
    RECIPE                  -> how builds.built builds one version

The harness (``peers/kafka-java/src``, stickyproof's own Java) is compiled by Maven
(``peers/kafka-java/pom.xml``) against the kafka-clients release Maven Central serves; the build
copies that jar, its runtime dependencies and slf4j-nop beside the classes, so a cached version runs
with no network and no local Maven repository. The assignor interface changed in 2.4 (KIP-429), so
the build compiles one of two small source sets (``v24`` from 2.4, ``v20`` before) and asks the built
harness which assignors the jar holds (``--list``): ``cooperative-sticky`` exists from 2.4 only, and a
name the release lacks is refused naming those it has.

``@local`` keeps unreleased code reachable: it runs the harness listed in
``$STICKYPROOF_PEERS_DIR/kafka-java/manifest.json`` (default ``<repo>/.peers``), which
``peers/kafka-java/build.sh`` writes from a Kafka source tree or any kafka-clients jar.

``STICKYPROOF_JAVA_OPTS`` (default ``-XX:+UseParallelGC``, the throughput collector: the harness is a
batch job) is read when an adapter is resolved and goes on its ``java`` command line; add e.g.
``-Xmx12g`` for the largest groups. It is not part of the cached build, so changing it needs no rebuild.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import IO, Mapping

from ..assignors.info import AssignorInfo
from ..errors import UnknownAssignor
from . import builds

__all__ = ["RECIPE", "MAIN_CLASS", "DEFAULT_JAVA_OPTS", "resolve", "api_of", "build"]

MAIN_CLASS = "stickyproof.peers.KafkaJavaPeer"
DEFAULT_JAVA_OPTS = "-XX:+UseParallelGC"
LOCAL = "local"
"""The version that names the ``build.sh`` harness (``kafka-java:sticky@local``) instead of a release."""

API_SOURCES = {"v24": "stickyproof/peers/v24/**", "v20": "stickyproof/peers/v20/**"}
"""Each version-specific source set, as the pattern pom.xml's ``harness.api`` leaves out."""


def api_of(version: str) -> str:
    """``v24`` for kafka-clients 2.4 and later (``ConsumerPartitionAssignor``), ``v20`` before (the
    internal ``PartitionAssignor``). A version whose major.minor cannot be read is taken as current."""
    parts = version.split(".")
    try:
        major, minor = int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return "v24"
    return "v20" if (major, minor) < (2, 4) else "v24"


def _maven(argv: list[str], log: IO[str], cwd: Path) -> None:
    """Run Maven, its output into ``log``; ``BuildStep`` with Maven's first ``[ERROR]`` line (the
    failed goal and why: a missing version says "Could not resolve dependencies ... kafka-clients");
    the lines after it are Maven's advice on how to get more."""
    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    try:
        proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        raise builds.BuildStep("maven", "ran past 1800 s") from None
    log.write(proc.stdout)
    log.flush()
    if proc.returncode != 0:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout)  # Maven 3.8 colours some lines even in batch mode
        lines = [ln.strip() for ln in plain.splitlines() if ln.strip()]
        errors = [ln.removeprefix("[ERROR]").split(" -> [Help")[0].strip() for ln in lines if ln.startswith("[ERROR]")]
        detail = next((e for e in errors if e), None) or (lines[-1] if lines else f"exit status {proc.returncode}")
        raise builds.BuildStep("maven", detail.split(". ")[0][:400])


def build(version: str, out: Path, final: Path, log: IO[str]) -> Mapping[str, list[str]]:
    """``recipe.build``: Maven compiles the harness against kafka-clients ``version`` into ``out``
    (``classes/``, ``lib/``), and the built harness names the assignors that release has."""
    mvn, java = shutil.which("mvn"), shutil.which("java")
    if mvn is None:
        raise builds.BuildStep("maven", "mvn not found on PATH (Debian: apt-get install maven)")
    if java is None:
        raise builds.BuildStep("maven", "java not found on PATH (Debian: apt-get install openjdk-17-jdk-headless)")
    api = api_of(version)
    left_out = next(pattern for key, pattern in API_SOURCES.items() if key != api)
    sources = builds.repo_peers_dir() / RECIPE.sources
    maven_out = out / "maven"
    _maven([mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(sources / "pom.xml"),
            f"-Dkafka.version={version}", f"-Dharness.api={left_out}", f"-Dharness.out={maven_out}",
            "process-classes"], log, cwd=sources)
    os.replace(maven_out / "classes", out / "classes")
    os.replace(maven_out / "lib", out / "lib")
    shutil.rmtree(maven_out)
    jars = sorted(p.name for p in (out / "lib").glob("*.jar"))
    log.write(f"runtime jars: {' '.join(jars)}\n")

    def classpath(root: Path) -> str:
        return os.pathsep.join([str(root / "classes"), *(str(root / "lib" / j) for j in jars)])

    listed = subprocess.run([java, "-cp", classpath(out), MAIN_CLASS, "--list"], capture_output=True, text=True, timeout=120)
    log.write(f"$ java ... {MAIN_CLASS} --list\n{listed.stdout}{listed.stderr}")
    names = listed.stdout.split()
    if listed.returncode != 0 or not names:
        tail = (listed.stderr.strip().splitlines() or [f"exit status {listed.returncode}"])[-1]
        raise builds.BuildStep("java", f"the built harness could not list its assignors: {tail[:300]}")
    return {name: [java, "-cp", classpath(final), MAIN_CLASS, name] for name in names}


RECIPE = builds.Recipe("kafka-java", "maven", "kafka-java", build)


def _java_opts() -> list[str]:
    return shlex.split(os.environ.get("STICKYPROOF_JAVA_OPTS", DEFAULT_JAVA_OPTS))


def _local_assignors() -> dict[str, list[str]]:
    from . import manifest

    return manifest("kafka-java")


def resolve(rest: str) -> AssignorInfo:
    """``kafka-java:<rest>`` where ``rest`` is ``NAME``, ``NAME@VERSION`` or ``NAME@local``: the
    harness of that kafka-clients release (built and cached on first use) serving ``NAME``.
    ``UnknownAssignor`` (``builds.PeerBuildFailed`` for a failed build) when it cannot be had."""
    from .exec import exec_assignor

    name, version = builds.split_version(rest)
    if not name:
        raise UnknownAssignor(f"kafka-java:{rest}: name an assignor, e.g. kafka-java:sticky@3.9.1")
    from . import kafka_java_coordinator

    if name in kafka_java_coordinator.NAMES and version != LOCAL:
        return kafka_java_coordinator.resolve(rest)  # server-side (KIP-848): the group-coordinator jars
    if version == LOCAL:
        assignors = _local_assignors()
        argv_of = assignors.get(name)
        where = "the build.sh harness"
    else:
        version = version or builds.default_version(RECIPE.client)
        assignors = builds.built(RECIPE, version)["assignors"]
        argv_of = assignors.get(name)
        if argv_of is not None:  # the JVM's options are the user's at resolve time, not the build's
            argv_of = [argv_of[0], *_java_opts(), *argv_of[1:]]
        where = f"kafka-clients {version}"
    if argv_of is None:
        raise UnknownAssignor(f"kafka-java:{rest}: {where} has no assignor {name!r} (it has: {', '.join(sorted(assignors))})")
    return exec_assignor(f"kafka-java:{rest}", argv_of)
