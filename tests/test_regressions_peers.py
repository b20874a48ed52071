"""Replay the regressions found in other clients' assignors (tests/regressions/peers/, format:
tests/regressions/README.md), each through its peer adapter (``stickyproof.lookup.get_assignor``).

A file whose peer cannot run here is skipped naming what is missing: kafka-python not installed,
or a franz-go / Kafka Java harness not built (the message says which script builds it). An
expectation that is not met fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyproof.errors import UnknownAssignor
from stickyproof.lookup import get_assignor as resolve
from stickyproof.peers.kafka_python import INSTALL, kafka_python_version

from .test_regressions import load_regression, replay_file

PEERS = Path(__file__).parent / "regressions" / "peers"
FILES = sorted(PEERS.glob("*.json"))


def peer_of(name: str):
    if name.startswith("kafka-python:") and kafka_python_version() is None:
        pytest.skip(f"kafka-python is not installed: {INSTALL}")
    try:
        info = resolve(name)
    except UnknownAssignor as exc:
        if name.startswith(("franz-go:", "kafka-java:")):
            pytest.skip(str(exc))
        raise
    assert info is not None, f"{name} names no peer (a peer regression's assignor has a peer prefix)"
    return info


def test_there_are_peer_regressions_to_replay():
    assert FILES, "tests/regressions/peers/ holds no scenario files"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_peer_regression(path):
    _, expect = load_regression(path)
    replay_file(path, peer_of(expect["assignor"]))
