"""Consumer-protocol (KIP-848) scenarios: the ``group_protocol`` field, its rules, and topic ids."""

from __future__ import annotations

import copy
import json

import pytest

from stickyproof.cli import main
from stickyproof.errors import InvalidScenario
from stickyproof.model import CONSUMER, TopicPartition, scenario_from_dict, scenario_to_dict
from stickyproof.model.topic_ids import java_uuid_hash, topic_id, uuid_bits, uuid_order_key

GROUP = {
    "format": "stickyproof.scenario/1",
    "name": "kip848",
    "group_protocol": "consumer",
    "topics": {"orders": 6, "audit": {"partitions": 2, "racks": [["r1"], ["r2"]]}},
    "members": [
        {"id": "m0", "topics": ["orders", "audit"], "owned": {"orders": [0, 1], "audit": [1]}, "rack": "r1", "instance_id": None},
        {"id": "m1", "topics": ["orders"], "owned": {"orders": [5]}, "rack": None, "instance_id": "i1"},
    ],
}


def _with(mutate):
    doc = copy.deepcopy(GROUP)
    mutate(doc)
    return doc


def test_group_protocol_defaults_to_classic():
    doc = _with(lambda d: (d.pop("group_protocol"), [m.pop("rack") for m in d["members"]]))
    assert scenario_from_dict(doc).group_protocol == "classic"


def test_consumer_group_round_trips_without_classic_fields():
    scenario = scenario_from_dict(GROUP)
    assert scenario.is_consumer_group and scenario.group_protocol == CONSUMER
    assert scenario.member("m0").owned == (TopicPartition("orders", 0), TopicPartition("orders", 1), TopicPartition("audit", 1))
    doc = scenario_to_dict(scenario)
    assert doc == GROUP
    assert scenario_from_dict(doc) == scenario


def test_a_target_naming_an_unsubscribed_or_deleted_topic_is_legal():
    # TargetAssignmentBuilder hands the previous target whatever the new subscription; the
    # uniform builders drop such topics themselves, so the scenario must be able to say it.
    doc = _with(lambda d: d["members"][1]["owned"].update({"audit": [0], "gone": [7]}))
    assert TopicPartition("gone", 7) in scenario_from_dict(doc).member("m1").owned


RULES = [
    ("unknown group protocol", lambda d: d.update(group_protocol="kip848"), "group_protocol", "unknown group protocol"),
    ("no eager/cooperative protocol", lambda d: d.update(protocol="eager"), "protocol", "no eager/cooperative"),
    ("no generation", lambda d: d["members"][0].update(generation=3), "members[0].generation", "no generation"),
    ("no version", lambda d: d["members"][1].update(version=3), "members[1].version", "no generation"),
    ("no assignor list", lambda d: d["members"][1].update(assignors=[]), "members[1].assignors", "assignor list"),
    ("partition in two targets", lambda d: d["members"][1]["owned"].update(orders=[1]), "members[1].owned.orders", "already in the target"),
    ("partition beyond the count", lambda d: d["members"][0]["owned"].update(audit=[2]), "members[0].owned.audit", "with 2 partitions"),
    ("partition twice in one target", lambda d: d["members"][0]["owned"].update(orders=[0, 0]), "members[0].owned.orders[1]", "listed twice"),
]


@pytest.mark.parametrize("rule, mutate, path, words", RULES, ids=[r[0] for r in RULES])
def test_what_the_coordinator_never_hands_an_assignor_is_refused(rule, mutate, path, words):
    with pytest.raises(InvalidScenario) as err:
        scenario_from_dict(_with(mutate))
    assert err.value.path == path
    assert words in str(err.value)


def test_validate_exits_2_on_a_consumer_group_rule(tmp_path, capsys):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(_with(lambda d: d["members"][1]["owned"].update(orders=[1]))))
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "members[1].owned.orders" in err


def test_topic_id_is_java_name_uuid_from_bytes():
    # Values printed by Java 17: UUID.nameUUIDFromBytes("orders".getBytes(UTF_8)), its two longs,
    # and Kafka's Uuid.hashCode() over them.
    u = topic_id("orders")
    assert str(u) == "12c500ed-0b78-3910-9fb4-6af0f246be87"
    assert uuid_bits(u) == (1352488281194379536, -6938803542781673849)
    assert java_uuid_hash(u) == 1951395210


def test_topic_ids_order_as_signed_longs():
    ids = [topic_id(f"t{i}") for i in range(20)]
    assert any(u.int >> 127 for u in ids)  # some ids have the sign bit set: signed order differs from unsigned
    signed = sorted(ids, key=uuid_order_key)
    assert signed != sorted(ids, key=lambda u: u.int)


def test_a_stated_topic_id_is_kept_and_read_as_kafka_prints_it():
    from stickyproof.model.topic_ids import kafka_uuid_string, parse_kafka_uuid, topic_ids_of

    doc = _with(lambda d: d["topics"].update(orders={"partitions": 6, "id": "T1-A4s3VTwiI5CTbEp6POw"}))
    scenario = scenario_from_dict(doc)
    assert scenario_to_dict(scenario) == doc
    ids = topic_ids_of(scenario.topics)
    assert kafka_uuid_string(ids["orders"]) == "T1-A4s3VTwiI5CTbEp6POw" and ids["audit"] == topic_id("audit")
    assert parse_kafka_uuid(kafka_uuid_string(topic_id("x"))) == topic_id("x")


@pytest.mark.parametrize("bad, words", [("short", "22 base64url"), ("AAAAAAAAAAAAAAAAAAAAAA", "reserved"), ("T1-A4s3VTwiI5CTbEp6PO!", "22 base64url")])
def test_a_bad_topic_id_is_refused(bad, words):
    with pytest.raises(InvalidScenario) as err:
        scenario_from_dict(_with(lambda d: d["topics"].update(orders={"partitions": 6, "id": bad})))
    assert err.value.path == "topics.orders.id" and words in str(err.value)


def test_two_topics_with_one_id_and_an_id_in_a_classic_group_are_refused():
    same = {"partitions": 2, "id": "T1-A4s3VTwiI5CTbEp6POw"}
    with pytest.raises(InvalidScenario, match="a topic id names one topic"):
        scenario_from_dict(_with(lambda d: d["topics"].update(orders=dict(same, partitions=6), audit=same)))
    classic = {"format": "stickyproof.scenario/1", "topics": {"t": same}, "members": [{"id": "c", "topics": ["t"]}]}
    with pytest.raises(InvalidScenario) as err:
        scenario_from_dict(classic)
    assert err.value.path == "topics.t.id"
