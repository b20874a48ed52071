"""franz-go as a live member: ``peers/franz-go-member`` (Go), built against the franz-go release
``peers/versions.lock`` pins for ``franz-go`` and cached by ``peers.builds``, as the franz-go
assignor harness is (``peers.franz_go``).

The program speaks the Java member's JSON-lines protocol (``stickyproof.live.members``) and stamps its
reports with CLOCK_MONOTONIC, the clock the other members read. Its balancers are kgo's, chosen by
the protocol names the group matches across libraries (``range``, ``roundrobin``, ``sticky``,
``cooperative-sticky``); the generation and member id are kgo's ``Client.GroupMetadata``. How its
group management differs from a Java poll loop (kgo has no ``max.poll.interval.ms``; a stall holds a
rebalance's callbacks, through ``BlockRebalanceOnPoll``) is said in ``peers/franz-go-member/main.go``
and docs/live.md. It speaks only the classic group protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from ...peers import builds
from ...peers.franz_go import MODULE, go_harness_build
from ..java_member import MemberFailed

__all__ = ["RECIPE", "BINARY", "member_program"]

BINARY = "stickyproof-franz-go-member"


def _build(version: str, out: Path, final: Path, log: IO[str]) -> dict[str, list[str]]:
    """``builds.Recipe.build``: the member program, its one entry named ``member``."""
    return go_harness_build(sources="franz-go-member", module=MODULE, binary=BINARY, flag="-mode",
                            names=lambda _: ("member",), version=version, out=out, final=final, log=log)


RECIPE = builds.Recipe("franz-go-member", "go", "franz-go-member", _build)


def member_program(version: str | None = None) -> list[str]:
    """The argv that starts one franz-go member, built on first use (default: franz-go's pinned version)."""
    version = version or builds.default_version("franz-go")
    try:
        return list(builds.built(RECIPE, version)["assignors"]["member"])
    except builds.PeerBuildFailed as exc:
        raise MemberFailed(f"the franz-go live member could not be built: {exc}") from None
