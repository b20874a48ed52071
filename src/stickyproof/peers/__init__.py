"""Assignors that are not stickyproof's: other clients' and languages', and user code kept at arm's length.

One module per adapter, each with a ``resolve(rest) -> AssignorInfo`` that ``stickyproof.lookup``
calls for names ``PREFIX:REST`` (its ``ADAPTERS`` table: one row per adapter):

    exec.py           exec:CMD ARGS      any program speaking models/assignor-protocol.md
    kafka_python.py   kafka-python:NAME  kafka-python's own assignors in process, through its leader code path
    kafka_java.py     kafka-java:NAME[@VERSION] Kafka's own assignors, a Java harness built by Maven
                      against that kafka-clients release (``builds``); ``@local``: the harness
                      ``peers/kafka-java/build.sh`` built from a local tree (``built_harness``)
    franz_go.py       franz-go:NAME[@VERSION]   a Go harness built from the module proxy (``builds``)
    sarama.py         sarama:NAME[@VERSION]     the same, against IBM/sarama
    kafka_go.py       kafka-go:NAME[@VERSION]   the same, against segmentio/kafka-go
    kafkajs.py        kafkajs:NAME[@VERSION]    a Node harness installed with npm (``builds``)
    isolated.py       module:callable    a user's Python assignor in a worker process

How a peer is led (its ``AssignorInfo``): the name is what the user wrote (``franz-go:sticky``),
so reports and regression files replay it; ``kafka_name`` and ``protocols`` are what the peer
says it is (its hello). A peer registering under one of Kafka's own names (``sticky``...) gets
``variant="current"`` and ``user=False``: the leader then treats its members as Java members running
that Kafka assignor — the user data they send (docs/rules.md, wire formats), the claims the
oracle attributes to them (R1, R2), ``cooperative-sticky``'s exemption from R39 — which is what a peer
implementing that protocol name must interoperate with. Any other name is led like a user assignor.

This package builds on ``assignors`` (``AssignorInfo``, ``led_as``) and never on ``lookup``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..assignors.info import AssignorInfo
from ..errors import UnknownAssignor

__all__ = [
    "BUILD_SCRIPTS",
    "built_harness",
    "peers_dir",
    "manifest",
]

BUILD_SCRIPTS = {"kafka-java": "peers/kafka-java/build.sh"}
"""Peers whose harness can be built from a local tree by a script (unreleased code)."""


def peers_dir() -> Path:
    """Where built harnesses are listed: ``$STICKYPROOF_PEERS_DIR``, else ``.peers`` under the
    repository root (the checkout holding this package's ``src/``), else under the current directory."""
    env = os.environ.get("STICKYPROOF_PEERS_DIR")
    if env:
        return Path(env)
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").is_file():
        return root / ".peers"
    return Path.cwd() / ".peers"


def manifest(peer: str) -> dict[str, list[str]]:
    """The ``assignors`` map of ``.peers/<peer>/manifest.json`` (name -> argv); ``UnknownAssignor``
    saying how to build it when absent or malformed."""
    path = peers_dir() / peer / "manifest.json"
    how = f"build it with {BUILD_SCRIPTS[peer]} (see its header), or point STICKYPROOF_PEERS_DIR at a built one"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UnknownAssignor(f"{peer}: no harness built ({path} does not exist); {how}") from None
    except (OSError, ValueError) as exc:
        raise UnknownAssignor(f"{peer}: cannot read {path} ({exc}); {how}") from None
    assignors = doc.get("assignors") if isinstance(doc, dict) else None
    if not isinstance(assignors, dict) or not all(
        isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv) for argv in assignors.values()
    ):
        raise UnknownAssignor(f'{peer}: {path} has no "assignors" object of name -> command array; {how}')
    return assignors


def built_harness(peer: str, rest: str) -> AssignorInfo:
    """``<peer>:<rest>`` served by the harness ``peers/<peer>/build.sh`` built (its manifest's argv)."""
    from .exec import exec_assignor

    assignors = manifest(peer)
    if rest not in assignors:
        raise UnknownAssignor(f"{peer}:{rest}: the {peer} harness has no assignor {rest!r} (built: {', '.join(sorted(assignors))})")
    return exec_assignor(f"{peer}:{rest}", assignors[rest])
