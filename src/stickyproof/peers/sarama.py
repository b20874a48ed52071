"""IBM/sarama's balance strategies, built from the Go module proxy: ``sarama:NAME`` or ``sarama:NAME@VERSION``.

    resolve("sticky@v1.61.1") -> AssignorInfo       (exec: with the cached harness)
    RECIPE                                          (how builds.built compiles the harness)

The harness is ``peers/sarama/`` (``main.go``, ``cooperative.go``, ``go.mod``), built as franz-go's
is (``franz_go.go_harness_build``): a temporary copy required to ``github.com/IBM/sarama@VERSION``,
one static binary in the cache, no network once cached. ``range``, ``roundrobin`` and ``sticky``
exist in every release the module path serves; ``cooperative-sticky`` only in releases that define
``NewBalanceStrategyCooperativeSticky`` (the build looks for it in the downloaded source and then
compiles ``cooperative.go``). What the harness reproduces of sarama's consumer-group leader is
listed in peers/README.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from ..errors import UnknownAssignor
from . import builds
from .franz_go import go_harness_build, go_version

__all__ = ["MODULE", "NAMES", "RECIPE", "build", "resolve"]

MODULE = "github.com/IBM/sarama"
NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")
BINARY = "stickyproof-sarama-peer"
COOPERATIVE_TAG = "stickyproof_cooperative"


def _has_cooperative_sticky(module_dir: Path) -> bool:
    return any("func NewBalanceStrategyCooperativeSticky(" in path.read_text(encoding="utf-8", errors="replace")
               for path in module_dir.glob("balance_strategy*.go"))


def _names(module_dir: Path) -> tuple[str, ...]:
    return NAMES if _has_cooperative_sticky(module_dir) else NAMES[:3]


def _tags(module_dir: Path) -> tuple[str, ...]:
    return (COOPERATIVE_TAG,) if _has_cooperative_sticky(module_dir) else ()


def build(version: str, out: Path, final: Path, log: IO[str]) -> dict[str, list[str]]:
    """``builds.Recipe.build`` for sarama."""
    return go_harness_build(sources="sarama", module=MODULE, binary=BINARY, flag="-strategy", names=_names, tags=_tags,
                            version=version, out=out, final=final, log=log)


RECIPE = builds.Recipe("sarama", "go", "sarama", build)


def resolve(rest: str):
    """``NAME`` or ``NAME@VERSION`` (default: peers/versions.lock) -> the adapter, built on first use."""
    from .exec import exec_assignor

    name, version = builds.split_version(rest)
    version = go_version(version) if version else builds.default_version(RECIPE.client)
    if name not in NAMES:
        raise UnknownAssignor(f"sarama:{rest}: sarama has no balance strategy {name!r} (it has: {', '.join(NAMES)})")
    assignors = builds.built(RECIPE, version)["assignors"]
    if name not in assignors:
        raise UnknownAssignor(f"sarama:{rest}: sarama {version} has no {name!r} strategy (it has: {', '.join(sorted(assignors))})")
    return exec_assignor(f"sarama:{rest}", assignors[name])
