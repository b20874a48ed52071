"""KafkaJS's RoundRobinAssigner (``kafkajs:roundrobin[@VERSION]``), run as a KafkaJS group leader runs it.

The harness (``peers/kafkajs/harness.js``, peers/README.md) runs on the machine's Node against the
``kafkajs`` package at ``VERSION`` (default: ``peers/versions.lock``), installed by npm on first use
into the cache of ``builds`` (``npm install kafkajs@VERSION --no-audit --no-fund`` in the cache
directory, beside a copy of the harness). Once installed, no network is needed.

KafkaJS registers the assigner under its own protocol name, ``RoundRobinAssigner`` (its hello's
``kafka_name``), which no Java member offers: the group it leads is a group of KafkaJS consumers,
and stickyproof leads it as a user assignor's group (no user data; R39 applies).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import IO

from ..assignors.info import AssignorInfo
from ..errors import UnknownAssignor
from . import builds

__all__ = ["NAMES", "PACKAGE", "RECIPE", "build", "resolve"]

NAMES = ("roundrobin",)
"""KafkaJS's built-in assigners (``PartitionAssigners``): only the round robin one."""
PACKAGE = "kafkajs"
HARNESS_FILES = ("harness.js", "package.json")


def build(version: str, out: Path, final: Path, log: IO[str]) -> dict[str, list[str]]:
    """Install kafkajs ``version`` with npm into ``out`` beside the harness; name -> argv under ``final``."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise builds.BuildStep("npm", "node and npm must be on PATH (Node 14 or later runs KafkaJS 2.x)")
    for name in HARNESS_FILES:
        shutil.copy2(builds.repo_peers_dir() / RECIPE.sources / name, out / name)
    builds.run_tool("npm", [npm, "install", f"{PACKAGE}@{version}", "--save-exact", "--no-audit", "--no-fund",
                            "--no-package-lock", "--loglevel=error"], log, cwd=out)
    if not (out / "node_modules" / PACKAGE / "package.json").is_file():
        raise builds.BuildStep("npm", f"{PACKAGE}@{version} is not in node_modules after npm install")
    return {name: [node, str(final / "harness.js"), name] for name in NAMES}


RECIPE = builds.Recipe("kafkajs", "npm", "kafkajs", build)


def resolve(rest: str) -> AssignorInfo:
    """``NAME[@VERSION]`` -> the adapter (installing KafkaJS first when the cache lacks that version)."""
    from .exec import exec_assignor

    name, version = builds.split_version(rest)
    if name not in NAMES:
        raise UnknownAssignor(f"kafkajs:{rest}: KafkaJS has no assigner {name!r} (known: {', '.join(NAMES)})")
    manifest = builds.built(RECIPE, version)
    argv = manifest.get("assignors", {}).get(name)
    if not argv:
        raise UnknownAssignor(f"kafkajs:{rest}: the harness installed for {manifest.get('version')} lists no {name!r}")
    return exec_assignor(f"kafkajs:{rest}", argv)
