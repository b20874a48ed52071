"""franz-go's group balancers, built from the Go module proxy: ``franz-go:NAME`` or ``franz-go:NAME@VERSION``.

    resolve("sticky@v1.22.3") -> AssignorInfo       (exec: with the cached harness)
    RECIPE                                          (how builds.built compiles the harness)

The harness is ``peers/franz-go/`` (a ``main.go`` and its ``go.mod``). A build copies it to a
temporary directory, points its ``go.mod`` at ``github.com/twmb/franz-go@VERSION`` and lets the
machine's Go fetch that release and its own requirements (kmsg, compression) through the module
proxy, then links one static binary into the cache (``builds.cache_dir()/franz-go/<version>-<hash>/``).
The binary needs nothing else, so a cached version runs without the network. What the harness
reproduces of franz-go's group leader is listed in peers/README.md.

``go_harness_build`` is the whole recipe for any Go client whose harness is one ``main`` package
selecting the assignor with a flag (sarama uses it too).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import IO

from ..errors import UnknownAssignor
from . import builds

__all__ = ["MODULE", "NAMES", "RECIPE", "build", "go_harness_build", "go_version", "resolve"]

MODULE = "github.com/twmb/franz-go"
NAMES = ("sticky", "cooperative-sticky", "range", "roundrobin")
BINARY = "stickyproof-franz-go-peer"


def go_version(version: str) -> str:
    """Go module versions start with ``v``; ``1.22.3`` is taken to mean ``v1.22.3``."""
    return version if version.startswith("v") or not version[:1].isdigit() else f"v{version}"


def go_harness_build(*, sources: str, module: str, drop: tuple[str, ...] = (), binary: str, flag: str,
                     names: tuple[str, ...], version: str, out: Path, final: Path, log: IO[str]) -> dict[str, list[str]]:
    """Build ``peers/<sources>`` against ``module@version`` into ``out/<binary>``.

    ``drop``: modules the harness's ``go.mod`` requires at the default version's level (kmsg for
    franz-go) and that must instead follow what ``module@version`` itself requires, so that an
    older release is built with the dependencies it was released with (Go's minimal version
    selection would otherwise keep the newer one). ``GOTOOLCHAIN=local``: the machine's Go, never a
    downloaded one; a release needing a newer Go fails naming ``go``."""
    env = {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    with tempfile.TemporaryDirectory(prefix=f"stickyproof-{sources}-") as tmp:
        tree = Path(tmp) / sources
        shutil.copytree(builds.repo_peers_dir() / sources, tree, ignore=shutil.ignore_patterns("build.sh", "*.md"))
        edit = ["go", "mod", "edit", *(f"-droprequire={m}" for m in drop), f"-require={module}@{version}"]
        builds.run_tool("go", edit, log, cwd=tree, env=env)
        builds.run_tool("go", ["go", "mod", "tidy"], log, cwd=tree, env=env)
        builds.run_tool("go", ["go", "list", "-m", module, *drop], log, cwd=tree, env=env)
        builds.run_tool("go", ["go", "build", "-trimpath", "-o", str(out / binary), "."], log, cwd=tree, env=env)
    path = str(final / binary)
    return {name: [path, flag, name] for name in names}


def build(version: str, out: Path, final: Path, log: IO[str]) -> dict[str, list[str]]:
    """``builds.Recipe.build`` for franz-go."""
    return go_harness_build(sources="franz-go", module=MODULE, drop=(f"{MODULE}/pkg/kmsg",), binary=BINARY,
                            flag="-balancer", names=NAMES, version=version, out=out, final=final, log=log)


RECIPE = builds.Recipe("franz-go", "go", "franz-go", build)


def resolve(rest: str):
    """``NAME`` or ``NAME@VERSION`` (default: peers/versions.lock) -> the adapter, built on first use."""
    from .exec import exec_assignor

    name, version = builds.split_version(rest)
    version = go_version(version) if version else builds.default_version(RECIPE.client)
    if name not in NAMES:
        raise UnknownAssignor(f"franz-go:{rest}: franz-go has no balancer {name!r} (it has: {', '.join(NAMES)})")
    assignors = builds.built(RECIPE, version)["assignors"]
    return exec_assignor(f"franz-go:{rest}", assignors[name])
