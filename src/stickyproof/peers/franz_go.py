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

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Callable

from ..errors import UnknownAssignor
from . import builds

__all__ = ["MODULE", "NAMES", "RECIPE", "build", "go_harness_build", "go_version", "resolve"]

MODULE = "github.com/twmb/franz-go"
NAMES = ("sticky", "cooperative-sticky", "range", "roundrobin")
BINARY = "stickyproof-franz-go-peer"


def go_version(version: str) -> str:
    """Go module versions start with ``v``; ``1.22.3`` is taken to mean ``v1.22.3``."""
    return version if version.startswith("v") or not version[:1].isdigit() else f"v{version}"


def go_harness_build(*, sources: str, module: str, binary: str, flag: str, names: Callable[[Path], tuple[str, ...]],
                     tags: Callable[[Path], tuple[str, ...]] = lambda _: (), version: str, out: Path, final: Path,
                     log: IO[str]) -> dict[str, list[str]]:
    """Build ``peers/<sources>`` against ``module@version`` into ``out/<binary>``; name -> argv
    (``[final/binary, flag, name]``) for each of ``names(module_dir)``.

    Every requirement of the harness's ``go.mod`` is dropped before ``module@version`` is required,
    so that ``go mod tidy`` takes the rest (kmsg for franz-go, compression, ...) at the versions that
    release itself requires: an older release is built with the dependencies it was released with
    (Go's minimal version selection would otherwise keep the default version's newer ones).
    ``names`` and ``tags`` (build tags) look at the downloaded module's source, for assignors a
    release may lack. ``GOTOOLCHAIN=local``: the machine's Go, never a downloaded one; a release
    needing a newer Go fails naming ``go``."""
    env = {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    with tempfile.TemporaryDirectory(prefix=f"stickyproof-{sources}-") as tmp:
        tree = Path(tmp) / sources
        shutil.copytree(builds.repo_peers_dir() / sources, tree, ignore=shutil.ignore_patterns("build.sh", "*.md", "go.sum"))
        _go_output(["go", "list", "-m", f"{module}@{version}"], tree, env, log)  # one clear line when the proxy lacks it
        required = json.loads(_go_output(["go", "mod", "edit", "-json"], tree, env, log)).get("Require") or []
        edit = ["go", "mod", "edit", *(f"-droprequire={r['Path']}" for r in required), f"-require={module}@{version}"]
        builds.run_tool("go", edit, log, cwd=tree, env=env)
        builds.run_tool("go", ["go", "mod", "tidy"], log, cwd=tree, env=env)
        builds.run_tool("go", ["go", "list", "-m", "all"], log, cwd=tree, env=env)
        module_dir = Path(_go_output(["go", "list", "-m", "-f", "{{.Dir}}", module], tree, env, log).strip())
        served, build_tags = names(module_dir), tags(module_dir)
        argv = ["go", "build", "-trimpath", *(["-tags", ",".join(build_tags)] if build_tags else []), "-o", str(out / binary), "."]
        builds.run_tool("go", argv, log, cwd=tree, env=env)
    path = str(final / binary)
    return {name: [path, flag, name] for name in served}


def _go_output(argv: list[str], cwd: Path, env: dict[str, str], log: IO[str]) -> str:
    """The standard output of a go command that reads the module (logged; ``BuildStep`` naming
    ``go`` with its last line of standard error when it fails)."""
    import subprocess

    log.write(f"$ {' '.join(argv)}\n")
    done = subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    log.write(done.stdout + done.stderr)
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()] or [f"exit status {done.returncode}"]
        raise builds.BuildStep("go", f"exit status {done.returncode}: {lines[-1][:300]}")
    return done.stdout


def build(version: str, out: Path, final: Path, log: IO[str]) -> dict[str, list[str]]:
    """``builds.Recipe.build`` for franz-go."""
    return go_harness_build(sources="franz-go", module=MODULE, binary=BINARY, flag="-balancer", names=lambda _: NAMES,
                            version=version, out=out, final=final, log=log)


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
