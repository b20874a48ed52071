"""Replay tests/kafka_cases_consumer/*.json: Kafka's own server-side assignor assertions.

Each case must come out of the port exactly as Kafka's test asserts (with the test's fixture
reproduced where it differs from the coordinator's input, ``expect.kafka_fixture``), and the port
must equal Kafka's 4.4.0 jar on the coordinator's input (tests/kafka_cases_consumer/README.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stickyproof.assignors.consumer import assign_consumer_group
from stickyproof.model import TopicPartition, scenario_from_dict

CASES = sorted((Path(__file__).parent / "kafka_cases_consumer").glob("*.json"))


def _load(path: Path):
    doc = json.loads(path.read_text())
    return scenario_from_dict(doc), doc["expect"]


def _want(expect) -> dict:
    return {m: tuple(sorted(TopicPartition(t, p) for t, ps in topics.items() for p in ps)) for m, topics in expect["assignment"].items()}


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_port_gives_kafkas_assertion(path: Path):
    scenario, expect = _load(path)
    fixture = expect.get("kafka_fixture", {})
    got = assign_consumer_group(scenario, expect["assignor"], linked_targets=fixture.get("linked_targets", False),
                                subscription_type=fixture.get("subscription_type"))
    assert dict(got.assignment) == _want(expect)


def test_every_kafka_test_class_has_cases():
    classes = {_load(p)[1]["kafka_test"].split(".")[0] for p in CASES}
    assert classes == {"UniformHomogeneousAssignmentBuilderTest", "UniformHeterogeneousAssignmentBuilderTest", "RangeAssignorTest"}


@pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None, reason="needs Maven and Java")
def test_port_equals_the_4_4_0_jar_on_every_case():
    from stickyproof.peers.kafka_java_coordinator import coordinator_assignor

    jars = {name: coordinator_assignor(name, "4.4.0") for name in ("uniform", "consumer-range")}
    try:
        differ = []
        for path in CASES:
            scenario, expect = _load(path)
            if assign_consumer_group(scenario, expect["assignor"]) != jars[expect["assignor"]](scenario):
                differ.append(path.stem)
    finally:
        for jar in jars.values():
            jar.close()
    assert differ == []
