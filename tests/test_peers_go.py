"""franz-go's balancers and sarama's strategies, built from the Go module proxy, graded like any assignor.

Each adapter (``franz-go:NAME``, ``sarama:NAME``) is the default version pinned in
peers/versions.lock, built on first use into the user's cache (``stickyproof.peers.builds``;
``STICKYPROOF_CACHE_DIR`` moves it), so nothing here is skipped for want of a harness: a machine
without Go or the module proxy fails the build fixture, naming the client, version and tool.

What is asserted is that every adapter *answers*: on every bundled scenario and on sampler groups
(``STICKYPROOF_PEER_GROUPS``, default 100), ``grading.grade_assignor`` gets a plan from it (no crash,
no garbage, no time limit, no error) that names only existing partitions, each once, and only
members of the group. The one error allowed is one the client's leader really raises:
sarama's leader fails a rebalance in which some member subscribes to a topic the metadata lacks
(tests/regressions/peers/sarama-range-leader-fails-the-rebalance-on-a-topic-missing-from-metadata.json).
What the grader says beyond that (valid, balanced, kept, the invariants each broke and which
of those a hazard of Kafka's own explains) is printed per adapter, not asserted: those are the
clients' findings, each pinned as a regression file under tests/regressions/peers/.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from typing import Any

import pytest

from stickyproof.assignors.info import AssignorInfo
from stickyproof.lookup import get_assignor
from stickyproof.grading import Limits, grade_assignor, unsupported_reason
from stickyproof.model import Scenario
from stickyproof.peers import builds
from stickyproof.peers import franz_go as franz_go_peer
from stickyproof.peers import sarama as sarama_peer
from stickyproof.peers.protocol import parse_hello
from stickyproof.scenarios import named
from stickyproof.scenarios.sampler import sample

RANDOM_GROUPS = int(os.environ.get("STICKYPROOF_PEER_GROUPS", "100"))
SEED = 12
LIMITS = Limits(assignor_seconds=120.0)
STRUCTURAL = {"duplicate", "nonexistent", "unknown-member"}
"""What a plan breaks by naming a partition twice, one that does not exist, or a stranger."""
RECIPES = {"franz-go": franz_go_peer.RECIPE, "sarama": sarama_peer.RECIPE}


@pytest.fixture(scope="module")
def manifests() -> dict[str, dict[str, Any]]:
    """The default version of each Go client, built when the cache lacks it (timed, printed)."""
    out = {}
    for client, recipe in RECIPES.items():
        started = time.monotonic()
        out[client] = builds.built(recipe)
        seconds = time.monotonic() - started
        print(f"{client} {out[client]['version']}: {'built' if seconds > 1 else 'cached'}, {seconds:.1f} s")
    return out


@pytest.fixture(scope="module")
def adapters(manifests) -> dict[str, AssignorInfo]:
    return {f"{client}:{name}": get_assignor(f"{client}:{name}") for client, m in manifests.items() for name in m["assignors"]}


def test_the_default_versions_serve_every_assignor_the_clients_have(manifests):
    assert set(manifests["franz-go"]["assignors"]) == {"range", "roundrobin", "sticky", "cooperative-sticky"}
    assert set(manifests["sarama"]["assignors"]) == {"range", "roundrobin", "sticky", "cooperative-sticky"}
    for client, manifest in manifests.items():
        assert manifest["version"] == builds.default_version(client)
        assert manifest["source"] == {"kind": "registry", "tool": "go", "version": manifest["version"]}


def test_each_adapter_says_who_it_is(adapters, manifests):
    for name, info in adapters.items():
        hello = info.fn.client.hello
        client, _, kafka_name = name.partition(":")
        assert hello.wire is True and hello.kafka_name == kafka_name and info.name == name, hello
        assert not info.user, info
    # franz-go runs cooperative-sticky in cooperative groups only; sarama's takes part in both
    assert adapters["franz-go:cooperative-sticky"].protocols == ("cooperative",)
    assert set(adapters["sarama:cooperative-sticky"].protocols) == {"cooperative", "eager"}
    assert adapters["sarama:sticky"].protocols == ("eager",)
    for client, manifest in manifests.items():
        for name, argv in manifest["assignors"].items():
            done = subprocess.run(argv, input=b"", capture_output=True, timeout=60)
            assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
            assert parse_hello(done.stdout.splitlines()[0], " ".join(argv)).name == f"{client}:{name}"


def test_a_version_the_registry_does_not_serve_fails_in_one_line_naming_client_version_and_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("STICKYPROOF_CACHE_DIR", str(tmp_path))
    with pytest.raises(builds.PeerBuildFailed) as caught:
        builds.built(sarama_peer.RECIPE, "v1.0.999")
    message = str(caught.value)
    assert message.startswith("sarama@v1.0.999: build failed (go): ") and "\n" not in message, message
    assert not [p for p in (tmp_path / "peers" / "sarama").iterdir() if p.is_dir()], "a failed build left a directory"


# ------------------------------------------------------------------------------------------------
# every adapter answers


def missing_topic(scenario: Scenario) -> bool:
    """Some member subscribes to a topic the leader's metadata lacks."""
    return any(t not in scenario.topics for m in scenario.members for t in m.topics)


def nobody_subscribes(scenario: Scenario) -> bool:
    """No member subscribes to anything: a sarama member always does (Consume refuses an empty
    topic list), so no sarama leader meets such a group."""
    return not any(m.topics for m in scenario.members)


def expected_error(adapter: str, scenario: Scenario, message: str) -> bool:
    """The errors the client's own leader raises on this group (pinned in tests/regressions/peers/)."""
    return adapter.startswith("sarama:") and missing_topic(scenario) and "does not exist" in message


def answers(adapters: dict[str, AssignorInfo], groups: list[Scenario]) -> dict[str, Counter]:
    """Grade every adapter on every group it can lead; return what the grader said per adapter,
    and fail on any group it did not answer with a plan (bar ``expected_error``)."""
    problems: list[str] = []
    seen: dict[str, Counter] = {}
    for adapter, info in sorted(adapters.items()):
        stats = seen[adapter] = Counter()
        started = time.monotonic()
        for scenario in groups:
            if unsupported_reason(scenario, info) or (adapter.startswith("sarama:") and nobody_subscribes(scenario)):
                continue
            grade = grade_assignor(scenario, info, limits=LIMITS)
            stats["groups"] += 1
            if grade.run_error is not None:
                if expected_error(adapter, scenario, grade.run_error.message):
                    stats["leader-error"] += 1
                else:
                    problems.append(f"{adapter} on {scenario.name}: {grade.run_error.kind} {grade.run_error.message[:300]}")
                continue
            stats["valid"] += grade.valid
            stats["balanced"] += bool(grade.contract_balanced)
            explained = {label.failure for label in grade.labels}
            for invariant in grade.violated():
                stats[invariant if invariant not in explained else f"{invariant} (Kafka hazard)"] += 1
            problems += [f"{adapter} on {scenario.name}: {v}" for v in STRUCTURAL & set(grade.violated())]
        stats["seconds"] = round(time.monotonic() - started)
        print(f"{adapter}: {dict(stats)}")
    assert not problems, "\n".join(problems[:10])
    return seen


def test_each_adapter_answers_every_bundled_scenario(adapters):
    seen = answers(adapters, [named.get(name) for name in named.names()])
    for adapter, stats in seen.items():
        assert stats["groups"] >= 3, (adapter, stats)  # every adapter leads some bundled scenario


def test_each_adapter_answers_sampler_groups(adapters):
    seen = answers(adapters, [sample(SEED, i) for i in range(RANDOM_GROUPS)])
    for adapter, stats in seen.items():
        assert stats["groups"] >= RANDOM_GROUPS // 3, (adapter, stats)
