"""Assignors that are not stickyproof's: other clients' and languages', and user code kept at arm's length.

    resolve(name) -> AssignorInfo | None          exec:CMD ARGS, kafka-python:NAME, franz-go:NAME, kafka-java:NAME[@VERSION]
    isolated_user_assignor(ref) -> AssignorInfo   module:callable in a worker process (isolated.py)

``exec:`` runs any program speaking models/assignor-protocol.md (``exec.py``); ``franz-go:`` is
that protocol with a harness built by ``peers/franz-go/build.sh``, found through the manifest the
build writes; ``kafka-java:`` the Kafka Java harness built by Maven against the kafka-clients
release named (``kafka_java.py``; ``@local`` for ``peers/kafka-java/build.sh``'s manifest); ``kafka-python:`` runs kafka-python's own assignors in process,
through its own leader code path (``kafka_python.py``).

How a peer is led (its ``AssignorInfo``): the name is what the user wrote (``franz-go:sticky``),
so reports and regression files replay it; ``kafka_name`` and ``protocols`` are what the peer
says it is (its hello). A peer registering under one of Kafka's own names (``sticky``...) gets
``variant="current"`` and ``user=False``: the leader then treats its members as Java members running
that Kafka assignor — the user data they send (KAFKA_SEMANTICS.md §5.3, §5.4), the claims the oracle
attributes to them (R1, R2), ``cooperative-sticky``'s exemption from R39 — which is what a peer
implementing that protocol name must interoperate with. Any other name is led like a user assignor.

Resolved assignors are kept per process (one child per assignor per worker process).
"""

from __future__ import annotations

import json
import os
import shlex
import threading
from pathlib import Path
from typing import Any

from ..assignors.registry import AssignorInfo
from ..errors import UnknownAssignor

__all__ = [
    "PREFIXES",
    "BUILD_SCRIPTS",
    "resolve",
    "isolated_user_assignor",
    "peers_dir",
    "manifest",
]

BUILD_SCRIPTS = {"franz-go": "peers/franz-go/build.sh", "kafka-java": "peers/kafka-java/build.sh"}
PREFIXES = ("exec:", "kafka-python:") + tuple(f"{peer}:" for peer in BUILD_SCRIPTS)

_RESOLVED: dict[Any, AssignorInfo] = {}
_LOCK = threading.Lock()


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


def _resolve_new(name: str) -> AssignorInfo | None:
    from .exec import exec_assignor

    prefix, _, rest = name.partition(":")
    if prefix == "exec":
        try:
            argv = shlex.split(rest)
        except ValueError as exc:
            raise UnknownAssignor(f"{name}: cannot split the command ({exc})") from None
        if not argv:
            raise UnknownAssignor(f"{name!r}: exec: needs a command, e.g. exec:'python my_assignor.py'")
        return exec_assignor(name, argv)
    if prefix == "kafka-python":
        from .kafka_python import kafka_python_assignor

        return kafka_python_assignor(rest)
    if prefix == "kafka-java":  # built from Maven on first use, cached (kafka_java.py); NAME@local: build.sh's
        from .kafka_java import resolve as resolve_kafka_java

        return resolve_kafka_java(rest)
    if prefix in BUILD_SCRIPTS:
        assignors = manifest(prefix)
        if rest not in assignors:
            raise UnknownAssignor(f"{name}: the {prefix} harness has no assignor {rest!r} (built: {', '.join(sorted(assignors))})")
        return exec_assignor(name, assignors[rest])
    return None


def resolve(name: str) -> AssignorInfo | None:
    """The peer assignor ``name`` names, or None when no peer prefix (``PREFIXES``) starts it.
    ``UnknownAssignor`` when the prefix is a peer's but the assignor cannot be had (not built,
    cannot start, no valid hello, kafka-python not installed)."""
    if not isinstance(name, str) or not name.startswith(PREFIXES):
        return None
    key = (name, str(peers_dir()))  # a harness is the one its manifest names at the time
    with _LOCK:
        info = _RESOLVED.get(key)
        if info is None:
            info = _resolve_new(name)
            if info is not None:
                _RESOLVED[key] = info
        return info


def isolated_user_assignor(ref: str, **options: Any) -> AssignorInfo:
    """``module:callable`` served by a worker process (``isolated.isolated_user_assignor``, whose
    keyword options pass through); kept per process for the default options."""
    from .isolated import isolated_user_assignor as build

    if options:
        return build(ref, **options)
    with _LOCK:
        info = _RESOLVED.get(("isolated", ref))
        if info is None:
            info = _RESOLVED[("isolated", ref)] = build(ref)
        return info
