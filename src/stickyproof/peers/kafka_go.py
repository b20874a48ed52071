"""segmentio/kafka-go's group balancers (``kafka-go:range|roundrobin|rack-affinity[+java][@VERSION]``).

The harness (``peers/kafka-go/``, peers/README.md) is a Go program built against the kafka-go module
at ``VERSION`` (default: ``peers/versions.lock``) as the Go module proxy serves it, on first use,
into the cache of ``builds``: the harness folder is copied to a temporary directory, its ``go.mod``
is pointed at that version with ``go mod edit -require``, and ``go build`` (``GOFLAGS=-mod=mod``,
the machine's Go, no cgo) writes one self-contained binary. Once built, no network is needed.

Each name is one of kafka-go's ``GroupBalancer`` implementations run as kafka-go's group leader runs
it (``ConsumerGroup.assignTopicPartitions``). ``kafka-go:NAME`` leads a group of kafka-go clients
(each member's metadata as a kafka-go member writes it); ``kafka-go:range+java`` and
``kafka-go:roundrobin+java`` a kafka-go leader among Java members, reading their bytes as sent.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import IO

from ..assignors.info import AssignorInfo
from ..errors import UnknownAssignor
from . import builds

__all__ = ["NAMES", "MODULE", "RECIPE", "build", "resolve"]

NAMES = ("range", "roundrobin", "rack-affinity")
"""kafka-go's balancers by protocol name: RangeGroupBalancer, RoundRobinGroupBalancer, RackAffinityGroupBalancer."""
JAVA_MEMBERS = ("range", "roundrobin")
"""The protocols a Java member can share with a kafka-go leader (``+java``)."""
MODULE = "github.com/segmentio/kafka-go"
BINARY = "stickyproof-kafka-go-peer"


def build(version: str, out: Path, final: Path, log: IO[str]) -> dict[str, list[str]]:
    """Compile the harness against kafka-go ``version`` into ``out``; name -> argv under ``final``."""
    go = shutil.which("go")
    if go is None:
        raise builds.BuildStep("go", "the go command is not on PATH (Go 1.23 or later builds kafka-go)")
    env = {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    with tempfile.TemporaryDirectory(prefix="stickyproof-kafka-go-") as tmp:
        work = Path(tmp) / "harness"
        shutil.copytree(builds.repo_peers_dir() / RECIPE.sources, work)
        builds.run_tool("go", [go, "mod", "edit", f"-require={MODULE}@{version}"], log, cwd=work, env=env)
        builds.run_tool("go", [go, "build", "-trimpath", "-o", str(out / BINARY), "."], log, cwd=work, env=env)
    binary = str(final / BINARY)
    argvs = {name: [binary, "-balancer", name] for name in NAMES}
    argvs.update({f"{name}+java": [binary, "-balancer", name, "-members", "java"] for name in JAVA_MEMBERS})
    return argvs


RECIPE = builds.Recipe("kafka-go", "go", "kafka-go", build)


def resolve(rest: str) -> AssignorInfo:
    """``NAME[+java][@VERSION]`` -> the adapter (building the harness first when the cache lacks it)."""
    from .exec import exec_assignor

    name, version = builds.split_version(rest)
    known = list(NAMES) + [f"{n}+java" for n in JAVA_MEMBERS]
    if name not in known:
        raise UnknownAssignor(f"kafka-go:{rest}: kafka-go has no balancer {name!r} (known: {', '.join(known)})")
    manifest = builds.built(RECIPE, version)
    argv = manifest.get("assignors", {}).get(name)
    if not argv:
        raise UnknownAssignor(f"kafka-go:{rest}: the harness built for {manifest.get('version')} lists no {name!r}")
    return exec_assignor(f"kafka-go:{rest}", argv)
