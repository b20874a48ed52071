"""Harnesses built from their clients' registries on first use, and kept in the user's cache.

    split_version("sticky@3.9.1") -> ("sticky", "3.9.1")
    default_version("kafka-java") -> the version ``peers/versions.lock`` pins
    built(recipe, version) -> the manifest of that client at that version, built when absent
    cache_dir() -> where built harnesses are kept

A harness adapter (``kafka-java:``, ``franz-go:``, ...) names a client *and a version*: its harness
is compiled against that version of the client as the client's own registry serves it (Maven for
Kafka's jars, the Go module proxy for Go modules, npm for JavaScript), by that registry's ordinary
tool. The first use builds it into ``cache_dir()/<client>/<version>-<harness hash>/``; every later
use, in any process, reuses it without the network. The harness hash is a digest of the harness's
own sources under ``peers/<client>/``, so an edited harness is rebuilt and an unchanged one never is.

A build is the recipe's ``build(version, out)``: it writes everything into ``out`` (a fresh
temporary directory beside the final one) and returns the ``assignors`` map of the manifest (name
-> argv, absolute paths into the final directory, which it is told as ``final``). This module writes
``manifest.json`` (peers/README.md) and moves the directory into place atomically, under a file lock
so two processes never build one version twice. A failed build leaves nothing in the cache and
raises ``PeerBuildFailed``: one line naming the client, the version and the tool, and where the
full log was kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Mapping

from ..errors import UnknownAssignor

__all__ = [
    "PeerBuildFailed",
    "Recipe",
    "BuildStep",
    "built",
    "cache_dir",
    "default_version",
    "locked_versions",
    "repo_peers_dir",
    "failure_line",
    "run_tool",
    "split_version",
]


class PeerBuildFailed(UnknownAssignor):
    """A harness could not be built from its registry (the tool failed, or the version does not exist there)."""


class BuildStep(Exception):
    """Raised by a recipe's build: ``tool`` failed; ``detail`` is its last meaningful line."""

    def __init__(self, tool: str, detail: str):
        super().__init__(f"{tool}: {detail}")
        self.tool = tool
        self.detail = detail


@dataclass(frozen=True)
class Recipe:
    """How one client's harness is built.

    ``client``: the adapter prefix (``kafka-java``); ``tool``: the registry's tool that builds it
    (``maven``, ``go``, ``npm``), named in failures; ``sources``: the harness folder under
    ``peers/`` whose files are hashed into the cache key; ``build(version, out, final, log)``
    builds into ``out`` and returns name -> argv (paths under ``final``), writing its tools' output
    to ``log`` (an open text file), and raises ``BuildStep`` (``run_tool`` does) when a tool fails."""

    client: str
    tool: str
    sources: str
    build: Callable[[str, Path, Path, IO[str]], Mapping[str, list[str]]]


def repo_peers_dir() -> Path:
    """The repository's ``peers/`` folder (harness sources and ``versions.lock``)."""
    return Path(__file__).resolve().parents[3] / "peers"


def cache_dir() -> Path:
    """``$STICKYPROOF_CACHE_DIR/peers``, else the user's cache directory (``platformdirs``)."""
    env = os.environ.get("STICKYPROOF_CACHE_DIR")
    if env:
        return Path(env) / "peers"
    import platformdirs

    return Path(platformdirs.user_cache_dir("stickyproof")) / "peers"


def locked_versions() -> dict[str, str]:
    """``peers/versions.lock``: the default version of each client (TOML, ``[defaults]``)."""
    path = repo_peers_dir() / "versions.lock"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UnknownAssignor(f"{path} is missing: the default client versions are pinned there") from None
    except tomllib.TOMLDecodeError as exc:
        raise UnknownAssignor(f"{path}: not TOML ({exc})") from None
    defaults = doc.get("defaults")
    if not isinstance(defaults, dict) or not all(isinstance(v, str) for v in defaults.values()):
        raise UnknownAssignor(f"{path}: [defaults] must map each client to a version string")
    return dict(defaults)


def default_version(client: str) -> str:
    versions = locked_versions()
    if client not in versions:
        raise UnknownAssignor(f"{client}: no default version in peers/versions.lock (pinned: {', '.join(sorted(versions))})")
    return versions[client]


def split_version(rest: str) -> tuple[str, str | None]:
    """``"sticky@3.9.1"`` -> ``("sticky", "3.9.1")``; ``"sticky"`` -> ``("sticky", None)``."""
    name, at, version = rest.partition("@")
    if at and not version:
        raise UnknownAssignor(f"{rest!r}: a version follows '@' (e.g. {name}@{'3.9.1'})")
    return name, (version or None)


def _sources_hash(recipe: Recipe) -> str:
    root = repo_peers_dir() / recipe.sources
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


def _check_version(client: str, version: str) -> None:
    # a version becomes a directory name and a build argument: nothing that could escape either
    if not version or not all(c.isalnum() or c in ".-+_" for c in version) or version.startswith((".", "-")):
        raise UnknownAssignor(f"{client}@{version}: not a version (letters, digits, '.', '-', '+', '_')")


def built(recipe: Recipe, version: str | None = None) -> dict:
    """The manifest of ``recipe.client`` at ``version`` (default: the locked one), building it first
    when the cache does not hold it. ``PeerBuildFailed`` names the client, version and tool."""
    version = version or default_version(recipe.client)
    _check_version(recipe.client, version)
    home = cache_dir() / recipe.client
    final = home / f"{version}-{_sources_hash(recipe)}"
    manifest_path = final / "manifest.json"
    if manifest_path.is_file():
        return _read_manifest(recipe, version, manifest_path)
    from filelock import FileLock

    home.mkdir(parents=True, exist_ok=True)
    with FileLock(str(final) + ".lock"):
        if manifest_path.is_file():  # another process built it while we waited
            return _read_manifest(recipe, version, manifest_path)
        return _build(recipe, version, final)


def _read_manifest(recipe: Recipe, version: str, path: Path) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnknownAssignor(f"{recipe.client}@{version}: cannot read {path} ({exc}); delete {path.parent} to rebuild") from None
    return doc


def _build(recipe: Recipe, version: str, final: Path) -> dict:
    log_path = final.parent / f"{final.name}.build.log"
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    started = time.monotonic()
    try:
        with open(log_path, "w", encoding="utf-8") as log:
            try:
                assignors = recipe.build(version, work, final, log)
            except BuildStep as exc:
                raise PeerBuildFailed(
                    f"{recipe.client}@{version}: build failed ({exc.tool}): {exc.detail} (log: {log_path})"
                ) from None
            except FileNotFoundError as exc:  # the tool itself is missing
                raise PeerBuildFailed(
                    f"{recipe.client}@{version}: build failed ({recipe.tool}): {exc.filename or exc} not found (log: {log_path})"
                ) from None
        manifest = {
            "format": "stickyproof.peer-manifest/1",
            "peer": recipe.client,
            "protocol": "assignor/1",
            "version": version,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_seconds": round(time.monotonic() - started, 1),
            "source": {"kind": "registry", "tool": recipe.tool, "version": version},
            "assignors": {name: list(argv) for name, argv in sorted(assignors.items())},
        }
        (work / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if final.exists():  # a half-written directory of a killed build: never reused
            shutil.rmtree(final)
        os.replace(work, final)
        return manifest
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def run_tool(tool: str, argv: list[str], log: IO[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
             timeout: float = 1800) -> None:
    """Run one build command, its output into ``log``; ``BuildStep`` naming ``tool`` and the last
    non-empty output line when it fails."""
    import subprocess

    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    try:
        proc = subprocess.run(argv, cwd=cwd, env=None if env is None else {**os.environ, **env},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BuildStep(tool, f"ran past {timeout:.0f} s") from None
    log.write(proc.stdout)
    log.flush()
    if proc.returncode != 0:
        raise BuildStep(tool, f"exit status {proc.returncode}: {failure_line(proc.stdout)[:300]}")


def failure_line(output: str) -> str:
    """The line of a failed build's output that says what failed: Maven's first ``[ERROR]`` line
    (its last ones are advice: "[Help 1]", "re-run with -e"), else the last line mentioning an
    error (go, npm), else the last line."""
    import re

    output = re.sub(r"\x1b\[[0-9;]*m", "", output)  # Maven 3.8 colours some lines even in batch mode
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    maven = [ln for ln in lines if ln.startswith("[ERROR]") and ln.removeprefix("[ERROR]").strip()
             and "-> [Help" not in ln and "re-run maven" not in ln.lower()]
    if maven:
        return maven[0]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or ["no output"])[-1]
