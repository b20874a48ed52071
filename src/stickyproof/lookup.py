"""The one place a name becomes an assignor.

    get_assignor(name) -> AssignorInfo
    adapters() -> the client adapters, one row each (``stickyproof assignors --peers`` lists them)

A name is one of:

=============================  =========================================================================
``range``, ``sticky@2.6``, …    a built-in row (``assignors.registry``: Kafka's assignors and releases)
``CLIENT:NAME[@VERSION]``       another client's assignor through its adapter (the ``ADAPTERS`` table
                                below; ``exec:CMD`` for any program speaking models/assignor-protocol.md)
``package.module:callable``     a user's Python assignor, run in a worker process of its own
                                (``peers.isolated``; nothing it does can end or hang stickyproof)
=============================  =========================================================================

This module sits above ``assignors/`` and ``peers/``, which never import it nor each other's
lookup: the assignors know nothing of adapters, and an adapter builds its ``AssignorInfo`` from the
assignors' base types (``assignors.info``, ``registry.led_as``). Adding a client adapter is one new
module under ``peers/`` with a ``resolve(rest) -> AssignorInfo`` function, plus one row in
``ADAPTERS`` naming it (docs/adapters.md walks through it). The module is imported on first use of
its prefix, so ``stickyproof --help`` loads no adapter; the layer test sees that import.

Resolved adapters are kept per process: one child process per adapter name per worker process, so
a sweep resolving ``kafka-java:sticky`` on every task starts the JVM once per worker.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass

from .assignors.info import AssignorInfo
from .assignors.registry import builtin, unknown_builtin
from .errors import UnknownAssignor

__all__ = ["Adapter", "ADAPTERS", "adapters", "get_assignor"]


@dataclass(frozen=True)
class Adapter:
    """One client adapter: ``prefix`` before the colon (``kafka-java``); ``module``, the module of
    ``stickyproof.peers`` whose ``resolve(rest)`` takes what follows the colon (``sticky@3.9.1``),
    imported on first use; what the client is and where it comes from (for listings and errors)."""

    prefix: str
    module: str
    client: str
    source: str

    def resolve(self, rest: str) -> AssignorInfo:
        return importlib.import_module(f".peers.{self.module}", __package__).resolve(rest)


#: Every client adapter, one row each; the prefix is what a user writes before the colon.
ADAPTERS: tuple[Adapter, ...] = (
    Adapter("exec", "exec", "any program speaking models/assignor-protocol.md", "the command after the colon"),
    Adapter("kafka-python", "kafka_python", "kafka-python (Python)", "PyPI, installed with stickyproof[peers]"),
    Adapter("kafka-java", "kafka_java", "Apache Kafka's Java client (kafka-clients)",
            "built by Maven on first use; @local: peers/kafka-java/build.sh's build of a local tree"),
    Adapter("franz-go", "franz_go", "franz-go (Go)", "built from the Go module proxy on first use"),
    Adapter("sarama", "sarama", "IBM/sarama (Go)", "built from the Go module proxy on first use"),
    Adapter("kafka-go", "kafka_go", "segmentio/kafka-go (Go)", "built from the Go module proxy on first use"),
    Adapter("kafkajs", "kafkajs", "KafkaJS (Node)", "installed from npm on first use"),
)
_BY_PREFIX = {a.prefix: a for a in ADAPTERS}

_RESOLVED: dict[str, AssignorInfo] = {}
_LOCK = threading.Lock()


def adapters() -> tuple[Adapter, ...]:
    return ADAPTERS


def _cache_key(name: str) -> str:
    # a harness is the one the peers directory names at the time (tests point it elsewhere)
    from .peers import peers_dir

    return f"{name}\0{peers_dir()}"


def _misspelt_adapter(prefix: str) -> bool:
    """``prefix`` names no module a user assignor could live in (``kafka-jav``, or ``sarma`` when no
    such module is installed) and is close to an adapter's: a misspelt adapter, said so, rather than
    "cannot import module"."""
    import difflib
    import importlib.util

    if not difflib.get_close_matches(prefix, list(_BY_PREFIX), n=1):
        return False
    if not all(part.isidentifier() for part in prefix.split(".")):
        return True
    try:
        return importlib.util.find_spec(prefix.split(".")[0]) is None
    except (ImportError, ValueError):
        return True


def get_assignor(name: str) -> AssignorInfo:
    """The assignor ``name`` names (see the module docstring); ``UnknownAssignor`` saying why not."""
    if not isinstance(name, str) or not name:
        raise UnknownAssignor(f"assignor name must be a non-empty string, got {name!r}")
    info = builtin(name)
    if info is not None:
        return info
    prefix, colon, rest = name.partition(":")
    adapter = _BY_PREFIX.get(prefix) if colon else None
    if adapter is None and not colon:
        raise unknown_builtin(name)
    if adapter is None and _misspelt_adapter(prefix):
        import difflib

        close = difflib.get_close_matches(prefix, list(_BY_PREFIX), n=1)
        hint = f"did you mean {close[0]}:{rest}? " if close else ""
        raise UnknownAssignor(f"{name}: no adapter {prefix!r}; {hint}adapters: {', '.join(_BY_PREFIX)}")
    key = _cache_key(name)
    with _LOCK:
        info = _RESOLVED.get(key)
        if info is None:
            if adapter is not None:
                info = adapter.resolve(rest)
            else:  # module.path:callable
                from .peers.isolated import isolated_user_assignor

                info = isolated_user_assignor(name)
            _RESOLVED[key] = info
        return info
