"""Live groups on a real broker (issue 24): Kafka's own broker, started once for the module from the
jars Maven resolved into the user's cache (the first run on a machine resolves them, about 20 s;
every later run reuses them), and real Java members driven through a small history.

What they establish: the broker stickyproof starts answers and is gone, with its directory, when the
block ends; attaching to a named broker starts nothing; a bad ``--bootstrap`` is one line.
"""

from __future__ import annotations

import os

import pytest

from stickyproof.live import processes
from stickyproof.live.broker import BrokerUnavailable, _api_versions, parse_bootstrap, running_broker


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def broker():
    with running_broker() as b:
        yield b
    assert not _alive(b.pid), "the broker outlived its block"
    assert not b.directory.exists(), "the broker's directory outlived its block"
    assert processes.running_children() == []


def test_the_started_broker_answers_api_versions(broker):
    host, port = parse_bootstrap(broker.bootstrap)
    assert host == "127.0.0.1"
    assert _api_versions(host, port, timeout=5.0)
    assert broker.started_here and _alive(broker.pid)


def test_attaching_to_a_named_broker_starts_nothing(broker):
    before = processes.running_children()
    with running_broker(bootstrap=broker.bootstrap) as attached:
        assert attached.bootstrap == broker.bootstrap
        assert not attached.started_here
        assert processes.running_children() == before


@pytest.mark.parametrize("text", ["localhost", "host:", ":9092", "host:99999", "host:port"])
def test_a_bootstrap_that_is_not_host_port_is_refused(text):
    with pytest.raises(BrokerUnavailable, match="--bootstrap"):
        parse_bootstrap(text)


def test_a_bootstrap_where_no_broker_answers_is_one_line():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BrokerUnavailable, match="no Kafka broker answers"):
        with running_broker(bootstrap=f"127.0.0.1:{port}"):
            pass
