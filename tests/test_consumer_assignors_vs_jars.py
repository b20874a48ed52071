"""The server-side (KIP-848) ports against Kafka's own group-coordinator jars, on random groups.

``kafka-java:uniform@V`` / ``kafka-java:consumer-range@V`` run Kafka's ``UniformAssignor`` and
coordinator ``RangeAssignor`` from the jars (peers/kafka-java-coordinator, built by Maven once and
cached). Every group of ``consumer_groups.random_group`` must come back identical, member by member:
the ports reproduce the Java iteration orders that decide ties, so "balanced like Kafka" is not
enough. benchmarks/consumer_assignors_vs_jars.py runs the same diff on more groups and releases.
"""

from __future__ import annotations

import random
import shutil

import pytest

from .consumer_groups import random_group
from stickyproof.assignors.consumer import assign_consumer_group
from stickyproof.errors import AssignorFailure

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None, reason="needs Maven and Java")

GROUPS = 1000


def _outcome(call, scenario):
    try:
        return call(scenario)
    except AssignorFailure as exc:
        return ("raised", exc.kafka_exception)


@pytest.fixture(scope="module")
def groups():
    rng = random.Random(848)
    return [random_group(rng) for _ in range(GROUPS)]


def _jar(name: str, version: str):
    from stickyproof.peers.kafka_java_coordinator import coordinator_assignor

    return coordinator_assignor(name, version)


def _differences(port: str, jar, groups) -> list[int]:
    try:
        return [i for i, s in enumerate(groups) if _outcome(lambda g: assign_consumer_group(g, port), s) != _outcome(jar, s)]
    finally:
        jar.close()


@pytest.mark.parametrize("name", ["uniform", "consumer-range"])
def test_port_equals_kafka_4_4_0_on_random_groups(name, groups):
    assert _differences(name, _jar(name, "4.4.0"), groups) == []


def test_uniform_4_0_0_record_equals_the_4_0_0_jar(groups):
    # KAFKA-18688: 4.0.0's homogeneous builder let only members early in iteration order keep an
    # owned "+1" partition; the record keeps that code, the jar of that release proves it.
    assert _differences("uniform@4.0.0", _jar("uniform", "4.0.0"), groups[:300]) == []


def test_uniform_3_9_1_record_equals_the_3_9_1_jar(groups):
    # KAFKA-17710 rewrote the heterogeneous builder for 4.0.0; 3.9.1's also throws on some groups
    # (a partition moved twice trips its inverted movement-record check): the throws must match too.
    assert _differences("uniform@3.9.1", _jar("uniform", "3.9.1"), groups[:300]) == []


def test_kafka_18688_is_observable_between_the_releases(groups):
    # The fix changed results on random homogeneous groups, so the record is not the current code.
    changed = [s for s in groups[:300] if assign_consumer_group(s, "uniform") != assign_consumer_group(s, "uniform@4.0.0")]
    assert changed and all(s.members and len({frozenset(m.topics) for m in s.members}) == 1 for s in changed)


DELETION_HISTORY = 6
"""A consumer history of seed 0 with a topic deleted while members still subscribe to its name."""


@pytest.mark.parametrize("name", ["uniform", "consumer-range"])
def test_a_deleted_topics_partitions_in_the_targets_are_dropped_as_kafka_drops_them(name):
    """After a topic is deleted the coordinator still hands the assignor each member's previous
    target, the deleted topic's partitions included, and the name stays in the subscriptions; the
    port and Kafka's jar answer every step of the history alike, and neither keeps the deleted topic."""
    from stickyproof.grading import Limits, consumer_group_run
    from stickyproof.lookup import get_assignor
    from stickyproof.scenarios.consumer_histories import draw_consumer_history, run_consumer_history

    history = draw_consumer_history(0, DELETION_HISTORY)
    assert "topic-deleted" in history.episodes
    jar = consumer_group_run(get_assignor(f"kafka-java:{name}@4.4.0"), limits=Limits())
    steps = run_consumer_history(history, consumer_group_run(get_assignor(name), limits=Limits()))
    after = [s for s in steps if s.event.kind == "topic-deleted"]
    assert after
    gone = after[0].event.fields["topic"]
    assert any(tp.topic == gone for m in after[0].scenario.members for tp in m.owned)
    assert all(tp.topic != gone for tps in after[0].answer.assignment.values() for tp in tps)
    for step in steps:
        theirs = jar(step.scenario).assignment
        assert {m: sorted(t) for m, t in theirs.items()} == {m: sorted(t) for m, t in step.answer.assignment.items()}, step.number
