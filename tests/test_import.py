"""`stickyproof import`: scenarios from kafka-consumer-groups.sh / kafka-topics.sh output and from captured bytes.

Fixtures: tests/data/import (README.md there names the Kafka release and source of each layout).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stickyproof.cli import importing as import_cli
from stickyproof.lookup import get_assignor
from stickyproof.errors import AssignorFailure, DecodeError, InvalidScenario, StickyproofError
from stickyproof.importers import (
    DescribeOptions,
    import_capture,
    import_describe,
    read_capture,
    scenario_document,
)
from stickyproof.leader import build_group, decoded_view, lead, rebalance_protocol, subscription_bytes
from stickyproof.model import (
    TopicPartition,
    load_assignment,
    load_scenario,
    scenario_from_dict,
    scenario_to_dict,
)
from stickyproof.oracle.invariants import check_assignment
from stickyproof.strategies import HAZARDS, groups

DATA = Path(__file__).resolve().parent / "data" / "import"
_spec = importlib.util.spec_from_file_location("make_fixtures", DATA / "make_fixtures.py")
fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixtures)

TP = TopicPartition
ORDERS_IDS = [r["id"] for r in fixtures.ORDERS]


def text(name: str) -> str:
    return (DATA / name).read_text()


def describe(name: str, topics: str | None = "topics-3.9.txt", **options) -> object:
    return import_describe(text(name), None if topics is None else text(topics), DescribeOptions(**options))


def owned(result, member_id):
    return result.scenario.member(member_id).owned


# ------------------------------------------------------------------------------------------
# the describe layouts of every release


@pytest.mark.parametrize("name", ["members-2.2.txt", "members-2.5.txt", "members-3.7-static.txt"])
def test_classic_layouts_read_the_same_group(name):
    r = describe(name)
    assert [m.id for m in r.scenario.members] == ORDERS_IDS
    assert owned(r, ORDERS_IDS[0]) == (TP("audit.log", 0), TP("orders", 0), TP("orders", 1), TP("orders", 2))
    assert owned(r, ORDERS_IDS[1]) == (TP("audit.log", 1), TP("orders", 3), TP("orders", 4), TP("orders", 5))
    assert owned(r, ORDERS_IDS[2]) == ()
    assert r.scenario.partition_counts == {"audit.log": 2, "orders": 6}
    assert dict(r.assignment.assignment) == {m.id: m.owned for m in r.scenario.members}


def test_group_instance_id_column_with_a_blank_cell():
    r = describe("members-3.7-static.txt")
    assert [m.instance_id for m in r.scenario.members] == ["orders-0", "orders-1", None]


def test_group_column_absent_before_2_3_leaves_the_group_unnamed():
    assert describe("members-2.2.txt").group is None
    assert describe("members-2.5.txt").group == "orders-app"


def test_state_table_gives_the_assignor_even_when_the_coordinator_overflows_its_column():
    r = describe("members-3.7-static.txt")
    assert all(m.assignors == ("cooperative-sticky",) for m in r.scenario.members)
    assert r.scenario.protocol == "cooperative"
    assert any("ASSIGNMENT-STRATEGY" in n for n in r.notes)


def test_topicless_3_9_cells_take_the_only_known_topic_and_keep_string_sorted_partitions():
    r = describe("members-3.9-topicless.txt", "topics-2.3.txt")
    first = fixtures.PAYMENTS[0]["id"]
    assert owned(r, first) == tuple(TP("payments.v2-events", p) for p in (0, 1, 2, 10))
    assert any("3.8 and 3.9" in n for n in r.notes)


def test_topicless_3_9_cells_take_topics_from_the_offsets_table():
    # topics-3.9.txt lists three topics, none of them the group's: only the offsets table can tell.
    r = describe("members-3.9-with-offsets.txt", "topics-3.9.txt", partitions={"payments.v2-events": 12})
    assert owned(r, fixtures.PAYMENTS[1]["id"]) == tuple(TP("payments.v2-events", p) for p in (3, 4, 5, 11))


def test_offsets_table_alone_or_beside_a_members_table_without_verbose():
    out = text("members-3.9-with-offsets.txt")
    offsets_only = out[out.index("\nGROUP           TOPIC"):]
    quiet = fixtures.members_table("2.6", "payments", fixtures.PAYMENTS, verbose=False) + offsets_only
    for source in (offsets_only, quiet):
        r = import_describe(source, text("topics-2.3.txt"))
        assert [m.id for m in r.scenario.members] == [m["id"] for m in fixtures.PAYMENTS]
        assert owned(r, fixtures.PAYMENTS[2]["id"]) == tuple(TP("payments.v2-events", p) for p in (6, 7, 8, 9))
    assert any("read from the offsets table" in n for n in import_describe(offsets_only, text("topics-2.3.txt")).notes)
    with pytest.raises(InvalidScenario, match=r"^describe line 3: the members table has no ASSIGNMENT column: run .* --verbose"):
        import_describe(fixtures.members_table("2.6", "payments", fixtures.PAYMENTS, verbose=False), text("topics-2.3.txt"))


def test_topicless_cells_with_several_candidate_topics_are_refused_naming_the_line():
    with pytest.raises(InvalidScenario, match=r"^describe line 3: ASSIGNMENT names no topics .* 3 topics are candidates"):
        describe("members-3.9-topicless.txt", "topics-3.9.txt")


def test_kip848_current_assignment_and_target():
    now = describe("members-4.0-kip848.txt", "topics-4.0.txt", subscribe_all=True)
    target = describe("members-4.0-kip848.txt", "topics-4.0.txt", subscribe_all=True, target=True)
    ids = [m.id for m in now.scenario.members]
    assert owned(now, ids[0]) == (TP("inventory", 0), TP("inventory", 1), TP("inventory", 2))
    assert now.assignment.assignment[ids[2]] == ()
    assert target.assignment.assignment[ids[2]] == (TP("inventory", 2), TP("inventory", 5))
    assert owned(target, ids[0]) == owned(now, ids[0])  # owned stays what members hold
    assert now.scenario.protocol == "eager" and all(m.assignors == () for m in now.scenario.members)
    assert any("KIP-848" in n for n in now.notes) and any("Reconciling" in n for n in now.notes)
    assert check_assignment(target.scenario, target.assignment).valid


def test_target_without_the_column_names_the_option():
    with pytest.raises(InvalidScenario, match=r"^--target: the output has no TARGET-ASSIGNMENT column"):
        describe("members-3.7-static.txt", target=True)


def test_two_groups_need_group():
    out = text("members-two-groups.txt")
    counts = {"orders": 6, "audit.log": 2, "invoices": 2}
    with pytest.raises(InvalidScenario, match=r"describes 2 groups \('orders-app', 'billing'\): choose one with --group"):
        import_describe(out, None, DescribeOptions(partitions=counts))
    billing = import_describe(out, None, DescribeOptions(partitions=counts, group="billing"))
    assert [m.id for m in billing.scenario.members] == ["billing-0-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"]
    with pytest.raises(InvalidScenario, match=r"no group 'nope' in the output"):
        import_describe(out, None, DescribeOptions(partitions=counts, group="nope"))


# ------------------------------------------------------------------------------------------
# what is not shown: assumed, and said


def test_every_gap_is_stated_in_the_notes_and_in_the_written_scenario():
    r = describe("members-2.5.txt")
    joined = "\n".join(r.notes)
    for words in ("generation: not shown", "protocol version: not shown", "subscriptions: not shown",
                  "assignor: not shown", "member order", "member racks", "replica racks: unknown"):
        assert words in joined
    doc = scenario_document(r)
    assert doc["notes"] == list(r.notes)
    assert scenario_from_dict(doc) == r.scenario


def test_default_subscriptions_are_the_topics_held_and_idle_members_are_named():
    r = describe("members-2.5.txt")
    assert r.scenario.member(ORDERS_IDS[0]).topics == ("audit.log", "orders")
    assert r.scenario.member(ORDERS_IDS[2]).topics == ()
    assert any(ORDERS_IDS[2] in n and "--subscribe-all" in n for n in r.notes)


def test_subscribe_all_and_subscribe_set_every_member():
    every = describe("members-2.5.txt", subscribe_all=True)
    assert {m.topics for m in every.scenario.members} == {("audit.log", "orders")}
    given_ = describe("members-2.5.txt", subscribe=("orders",))
    assert {m.topics for m in given_.scenario.members} == {("orders",)}


def test_options_fill_generation_version_protocol_and_member_racks():
    r = describe("members-2.5.txt", generation=12, version=1, protocol="eager", assignor="cooperative-sticky",
                 member_racks={"consumer-orders-app-3": "az3", ORDERS_IDS[0]: "az1"})
    assert {(m.generation, m.version) for m in r.scenario.members} == {(12, 1)}
    assert r.scenario.protocol == "eager"
    assert [m.rack for m in r.scenario.members] == ["az1", None, "az3"]


def test_replica_racks_from_the_replicas_column_and_broker_racks():
    r = describe("members-2.5.txt", broker_racks={1: "az1", 2: "az2", 3: "az3"})
    orders = r.scenario.topic("orders")
    assert orders.racks[0] == ("az1", "az2", "az3")
    assert orders.racks[1] == ("az2", "az3")  # broker 4 has no rack: it contributes none
    assert any("broker 4 has no rack given" in n for n in r.notes)


def test_broker_racks_need_every_partition_line():
    doc = "\n".join(line for line in text("topics-3.9.txt").splitlines() if "Partition: 3" not in line)
    with pytest.raises(InvalidScenario, match=r"topic 'orders': no partition line for partition 3"):
        import_describe(text("members-2.5.txt"), doc, DescribeOptions(broker_racks={1: "az1"}))


def test_a_topic_without_a_partition_count_names_the_options():
    with pytest.raises(InvalidScenario, match=r"^topics: no partition count for 'audit.log', 'orders': .*--partitions audit.log=N"):
        describe("members-2.5.txt", topics=None)
    r = describe("members-2.5.txt", topics=None, partitions={"orders": 6, "audit.log": 2})
    assert r.scenario.partition_counts == {"audit.log": 2, "orders": 6}


# ------------------------------------------------------------------------------------------
# describe -> scenario + assignment that the oracle judges


def test_described_group_is_accepted_by_the_invariant_check():
    r = describe("members-3.9-topicless.txt", "topics-2.3.txt", subscribe_all=True)
    result = check_assignment(r.scenario, r.assignment)
    assert result.valid, result.to_dict()


def test_described_imbalance_is_found_with_its_witness():
    # orders-app with every member subscribed: 4, 4 and 0 of 8 partitions, so the idle member is under quota.
    r = describe("members-2.5.txt", subscribe_all=True)
    result = check_assignment(r.scenario, r.assignment)
    assert result.violated() == ("imbalance",)
    assert result.violations[0].witness["member"] == ORDERS_IDS[2]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=groups(hazards=HAZARDS, max_members=5, max_topics=3, max_partitions=6), layout=st.sampled_from(["1.1", "2.3", "2.6", "3.8", "4.0"]))
def test_describe_round_trip_of_an_assignment(scenario, layout):
    """A group's assignment printed as Kafka prints it reads back exactly, in every layout."""
    assignment = lead(replace(scenario, protocol="eager"), get_assignor("roundrobin"), direct=True).assignment
    rows = [
        {"id": m.id, "host": "/10.0.0.1", "client": "c", "instance": m.instance_id or "",
         "assignment": {t: [tp.partition for tp in assignment.assignment[m.id] if tp.topic == t]
                        for t in dict.fromkeys(tp.topic for tp in assignment.assignment[m.id])}}
        for m in scenario.members
    ]
    out = fixtures.members_table(layout, "g", rows)
    if layout == "3.8":  # topic names come from the offsets table
        out += fixtures.offsets_table("g", [(tp.topic, str(tp.partition), "0", "0", mid, "/10.0.0.1")
                                            for mid, tps in assignment.assignment.items() for tp in tps]
                                      + [("-", "-", "-", "-", mid, "/10.0.0.1")
                                         for mid, tps in assignment.assignment.items() if not tps])
    r = import_describe(out, None, DescribeOptions(partitions=scenario.partition_counts))
    assert [m.id for m in r.scenario.members] == [m.id for m in scenario.members]
    assert {k: tuple(sorted(v)) for k, v in r.assignment.assignment.items()} == \
        {k: tuple(sorted(v)) for k, v in assignment.assignment.items()}
    if layout in ("2.6", "3.8", "4.0"):
        assert [m.instance_id for m in r.scenario.members] == [m.instance_id for m in scenario.members]
    assert check_assignment(r.scenario, r.assignment, only=["duplicate", "nonexistent", "unsubscribed"]).valid


# ------------------------------------------------------------------------------------------
# describe errors name the line and the column


def members_block(cells: list[str], header: str = "ASSIGNMENT") -> str:
    rows = [{"id": f"m{i}", "host": "/h", "client": "c", "assignment": {}} for i in range(len(cells))]
    out = fixtures.members_table("2.3", "g", rows)
    lines = out.split("\n")
    start = lines[1].index("ASSIGNMENT")
    lines[1] = lines[1][:start] + header
    for i, cell in enumerate(cells):
        count = "0" if cell == "-" else str(len([p for p in cell.replace(";", ",").split(",")]))
        row = lines[2 + i]
        lines[2 + i] = row[: lines[1].index("#PARTITIONS")] + count.ljust(15) + " " + cell
    return "\n".join(lines)


@pytest.mark.parametrize("cell, words", [
    ("t(1,x)", 'describe line 3: ASSIGNMENT "t(1,x)" at column 85: partition "x" is not a number'),
    ("t(1,2", "'(' is never closed"),
    ("t(1,1)", "partition 1 listed twice"),
    ("t(1), t(2)", "topic 't' appears twice"),
    ("t$x(1)", "expected '(' or ':' after topic 't', found '$'"),
    ("t(1),", "nothing after the last ','"),
    ("t(1) u(2)", "expected ',' between topics, found ' '"),
    ("t()", "empty partition"),
    ("t(99999999999)", 'partition "99999999999" is not a number'),
])
def test_bad_assignment_cells_are_refused_naming_line_and_column(cell, words):
    with pytest.raises(InvalidScenario) as err:
        import_describe(members_block([cell]), None, DescribeOptions(partitions={"t": 3}))
    assert words in str(err.value) and str(err.value).startswith("describe line 3:")


def test_partition_count_column_must_agree_with_the_assignment():
    out = members_block(["t(0,1)"]).replace("2               t(0,1)", "3               t(0,1)")
    with pytest.raises(InvalidScenario, match=r"^describe line 3: #PARTITIONS says 3 but ASSIGNMENT lists 2"):
        import_describe(out, None, DescribeOptions(partitions={"t": 3}))


@pytest.mark.parametrize("edit, words", [
    (lambda s: s.replace("CLIENT-ID", "CLIENT-NAME"), "describe line 2: unknown column 'CLIENT-NAME' at column"),
    (lambda s: s + "\nthis line is not from the tool\n", "describe line 6: not a table header, table row or message"),
    (lambda s: s + "\nError: Consumer group 'g' does not exist.\n", "kafka-consumer-groups.sh reported: Error: Consumer group 'g' does not exist."),
    (lambda s: s.replace("m1 ", "m0 "), "describe line 4: member 'm0' is listed twice (first at line 3)"),
    (lambda s: "\n".join(s.split("\n")[:2]), "describe: the group has no active members: nothing to import"),
    (lambda s: "", "no members or offsets table found"),
])
def test_describe_structure_errors(edit, words):
    with pytest.raises(InvalidScenario) as err:
        import_describe(edit(members_block(["t(0)", "t(1)"])), None, DescribeOptions(partitions={"t": 3}))
    assert words in str(err.value)


def test_collapsed_spaces_are_read_when_unambiguous_and_refused_when_not():
    squeezed = " ".join(members_block(["t(0), u(1)", "t(2)"]).split(" "))
    squeezed = "\n".join(" ".join(line.split()) for line in squeezed.split("\n"))
    r = import_describe(squeezed, None, DescribeOptions(partitions={"t": 3, "u": 2}))
    assert r.assignment.assignment["m0"] == (TP("t", 0), TP("u", 1))
    static = fixtures.members_table("2.6", "g", [
        {"id": "a", "host": "/h", "client": "c", "instance": "i-a", "assignment": {"t": [0]}},
        {"id": "b", "host": "/h", "client": "c", "assignment": {"t": [1]}},
    ])
    collapsed = "\n".join(" ".join(line.split()) for line in static.split("\n"))
    with pytest.raises(InvalidScenario, match=r"^describe line 4: row does not line up with the header of line 2"):
        import_describe(collapsed, None, DescribeOptions(partitions={"t": 2}))


# ------------------------------------------------------------------------------------------
# kafka-topics.sh errors


@pytest.mark.parametrize("edit, words", [
    (lambda s: s.replace("PartitionCount: 6", "PartitionCount: six"), "topics line 1: PartitionCount 'six' is not a number"),
    (lambda s: s.replace("Partition: 5", "Partition: 9"), "topics line 7: partition 9 of topic 'orders' is past its PartitionCount 6"),
    (lambda s: s.replace("Partition: 5", "Partition: 4"), "topics line 7: partition 4 of topic 'orders' is listed twice"),
    (lambda s: s + s.split("\n")[0] + "\n", "topic 'orders' is listed twice (first at line 1)"),
    (lambda s: "\n".join(s.split("\n")[1:]), "topic 'orders' has partition lines but no summary line"),
    (lambda s: s.replace("Topic: audit.log\tTopicId", "Topic: audit log\tTopicId"), "is not a legal Kafka topic name"),
    (lambda s: s + "Error while executing topic command : Topic 'x' does not exist as expected\n", "kafka-topics.sh reported an error"),
])
def test_topics_errors_name_the_line(edit, words):
    with pytest.raises(InvalidScenario) as err:
        import_describe(text("members-2.5.txt"), edit(text("topics-3.9.txt")))
    assert words in str(err.value)


def test_topics_lines_read_without_their_tabs():
    spaced = text("topics-3.9.txt").replace("\t", "  ")
    r = import_describe(text("members-2.5.txt"), spaced, DescribeOptions(broker_racks={1: "a", 2: "b", 3: "c", 4: "d"}))
    assert r.scenario.topic("orders").racks[2] == ("c", "d", "a")


def test_option_values_are_checked_naming_the_option():
    for options, words in [
        (DescribeOptions(version=4), "--subscription-version: version 4 outside 0..3"),
        (DescribeOptions(protocol="incremental"), "--protocol: unknown protocol"),
        (DescribeOptions(subscribe=("t",), subscribe_all=True), "--subscribe: give either"),
        (DescribeOptions(member_racks={"nobody": "r"}, partitions={"orders": 6, "audit.log": 2}), "--member-rack: nobody=r"),
    ]:
        with pytest.raises(InvalidScenario, match="^" + words.replace("(", r"\(")):
            import_describe(text("members-2.5.txt"), None, options)


# ------------------------------------------------------------------------------------------
# captures


def test_cooperative_capture_yields_what_the_leader_decoded():
    r = import_capture(read_capture((DATA / "capture-cooperative.json").read_bytes()))
    a, b, c = r.scenario.members
    assert (a.version, a.generation, a.rack, a.instance_id) == (3, 7, "az1", "orders-0")
    assert (b.version, b.generation, b.rack) == (1, 7, None)  # a v1 member's generation is in its user data (R2)
    assert (c.owned, c.generation) == ((), -1)
    assert a.topics == ("audit.log", "orders")  # the wire order: the writer sorts topics
    assert r.scenario.topic("audit.log").racks == (("az1", "az2"), ("az2", "az3"))
    assert dict(r.assignment.revoking) == {a.id: (TP("audit.log", 0),)}
    assert check_assignment(r.scenario, r.assignment).valid


def test_sticky_capture_takes_claims_from_the_user_data():
    r = import_capture(read_capture((DATA / "capture-sticky.json").read_bytes()))
    one, two, three = r.scenario.members
    assert (one.owned, one.generation) == ((TP("invoices", 0), TP("invoices", 1)), 4)
    assert (two.owned, two.generation, two.version) == ((TP("invoices", 2), TP("invoices", 3)), -1, 0)
    assert (three.owned, three.generation) == ((), -1)
    assert any("billing-2: sticky user data V0" in n for n in r.notes)
    assert r.scenario.protocol == "eager" and r.assignment.revoking == {}


ASSIGNORS = ["sticky", "cooperative-sticky", "range", "roundrobin"]


def capture_of(scenario, info) -> tuple[dict, object]:
    """What a capture of this group's rebalance holds: the bytes each member sent and received."""
    result = lead(scenario, info)
    topics = scenario_to_dict(scenario)["topics"]
    members = [{"id": m.id, "instance_id": m.instance_id, "subscription": result.subscriptions[m.id].hex(),
                "assignment": result.assignments[m.id].hex()} for m in scenario.members]
    return {"format": "stickyproof.capture/1", "assignor": info.kafka_name, "protocol": result.protocol,
            "topics": topics, "members": members}, result


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=groups(hazards=HAZARDS, max_members=5, max_topics=3, max_partitions=6), name=st.sampled_from(ASSIGNORS))
def test_capture_round_trip_gives_the_same_group(scenario, name):
    """scenario -> the bytes its leader path sends and receives -> capture -> import -> the same group:
    every member re-encodes to the captured bytes, the leader decodes the same view, the round's
    assignment (with what it withholds) comes back."""
    info = get_assignor(name)
    try:
        rebalance_protocol(scenario, info)
        cap, result = capture_of(scenario, info)
    except (InvalidScenario, AssignorFailure):  # a protocol the assignor refuses, or Kafka's own throw
        scenario = replace(scenario, protocol="eager")
        try:
            cap, result = capture_of(scenario, info)
        except AssignorFailure:
            return
    r = import_capture(json.loads(json.dumps(cap)))
    for m in r.scenario.members:
        assert subscription_bytes(m, info, r.scenario.protocol) == result.subscriptions[m.id]
    protocol = r.scenario.protocol
    assert build_group(r.scenario, info, protocol).members == build_group(scenario, info, protocol).members
    claims = lambda s: [(m.owned, m.generation) for m in decoded_view(s, info).members]  # noqa: E731
    assert claims(r.scenario) == claims(scenario)
    assert {k: sorted(v) for k, v in r.assignment.assignment.items()} == \
        {k: sorted(v) for k, v in result.assignment.assignment.items()}
    # Revoking is what each member must give up: owned, not given back, given to nobody. The leader
    # path also lists claims on partitions that do not exist, except when cooperative-sticky fills
    # revoking itself (it lists only what it withholds); on existing partitions the two agree.
    # cooperative-sticky's revoking also lists a stale claimant's copy of a partition its current owner
    # keeps this round (a transferring partition nobody was stripped of); the capture, read by
    # docs/scenario-format.md, lists only partitions given to nobody, so the two agree on those.
    given = {tp for tps in result.assignment.assignment.values() for tp in tps}
    exists = lambda tp: 0 <= tp.partition < scenario.partition_counts.get(tp.topic, 0) and tp not in given  # noqa: E731
    existing = lambda rev: {k: {tp for tp in v if exists(tp)} for k, v in rev.items() if any(map(exists, v))}  # noqa: E731
    assert existing(r.assignment.revoking) == existing(result.assignment.revoking)


def capture_doc(**changes) -> dict:
    doc = json.loads((DATA / "capture-cooperative.json").read_text())
    for path, value in changes.items():
        *keys, last = path.split("__")
        target = doc
        for k in keys:
            target = target[int(k)] if k.isdigit() else target[k]
        if value is KeyError:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return doc


@pytest.mark.parametrize("changes, error, words", [
    ({"format": "stickyproof.capture/2"}, InvalidScenario, "format: expected 'stickyproof.capture/1'"),
    ({"members__1__subscription": "00zz"}, InvalidScenario, "members[1].subscription: hex: invalid hex character 'z' at character 3"),
    ({"members__1__subscription": "0003000000"}, DecodeError, "members[1].subscription: ConsumerProtocolSubscription"),
    ({"members__0__assignment": "00"}, DecodeError, "members[0].assignment: ConsumerProtocolAssignment"),
    ({"members__2__assignment": KeyError}, InvalidScenario, "members[2].assignment: missing while members[0] has one"),
    ({"members__1__assignor": "range"}, InvalidScenario, "members[1].assignor: 'range' differs from 'cooperative-sticky'"),
    ({"members__0__owner": "x"}, InvalidScenario, "members[0].owner: unknown field"),
    ({"assignor": KeyError}, InvalidScenario, "members[0].assignor: required"),
    ({"members__1__id": "consumer-orders-app-1-5e2c9b7a"}, InvalidScenario, "members[1].id: member id 'consumer-orders-app-1-5e2c9b7a' already used"),
    ({"topics__orders": -1}, InvalidScenario, "topics.orders: negative partition count"),
    ({"topics": KeyError}, InvalidScenario, "topics: required field is missing"),
    ({"members": []}, InvalidScenario, "members: expected a non-empty array"),
    ({"protocol": "incremental"}, InvalidScenario, "protocol: unknown protocol 'incremental'"),
])
def test_capture_errors_name_the_field(changes, error, words):
    with pytest.raises(error) as err:
        import_capture(capture_doc(**changes))
    assert words in str(err.value)


def test_truncated_subscription_names_the_field_and_byte_offset():
    whole = capture_doc()["members"][0]["subscription"]
    with pytest.raises(DecodeError) as err:
        import_capture(capture_doc(members__0__subscription=whole[:40]))
    assert err.value.offset is not None and err.value.field
    assert f"byte offset {err.value.offset}" in str(err.value)


def test_lone_surrogates_are_refused_where_they_are():
    with pytest.raises(InvalidScenario, match=r"^members\[0\]\.id: lone surrogate U\+DC80 at character 2"):
        import_capture(capture_doc(members__0__id="c\udc80"))
    with pytest.raises(InvalidScenario, match=r"^topics\.t\\udc80 \(the key\): lone surrogate"):
        import_capture(capture_doc(**{"topics": {"t\udc80": 1}}))


def test_capture_text_errors():
    with pytest.raises(InvalidScenario, match="line 1 column"):
        read_capture(b'{"format": ')
    with pytest.raises(InvalidScenario):
        read_capture(b'{"format": 1' + b"0" * 5000 + b"}")


def test_future_version_and_trailing_bytes_are_read_as_kafka_reads_them_and_noted():
    doc = capture_doc()
    sub = doc["members"][2]["subscription"]
    doc["members"][2]["subscription"] = "0005" + sub[4:] + "cafe"
    r = import_capture(doc)
    assert r.scenario.members[2].version == 3
    assert any("subscription v5 read with the v3 layout" in n for n in r.notes)
    assert any("2 byte(s) after its subscription were ignored" in n for n in r.notes)


# ------------------------------------------------------------------------------------------
# the command (handler driven as the CLI's main drives it: StickyproofError -> one line, exit 2)


def run(argv: list[str], stdin: bytes = b"", capsys=None) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="stickyproof")
    import_cli.add_import(parser.add_subparsers())
    args = parser.parse_args(argv)
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        code = args.func(args)
    except StickyproofError as exc:
        sys.stderr.write(f"{type(exc).__name__}: {' '.join(str(exc).split())}\n")
        code = 2
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    return code, out, err


def test_import_describe_writes_scenario_and_assignment_that_check_accepts(tmp_path, capsys):
    s, a = tmp_path / "s.json", tmp_path / "a.json"
    code, out, err = run(["import", "describe", str(DATA / "members-3.9-topicless.txt"), "--topics",
                          str(DATA / "topics-2.3.txt"), "--assignor", "range", "-o", str(s), "--assignment-out", str(a)],
                         capsys=capsys)
    assert (code, err) == (0, "")
    assert out.startswith("imported group 'payments' from the kafka-consumer-groups.sh output: 3 members, 1 topic, "
                          "12 partitions, 12 assigned\n")
    assert "assumed (also in the scenario's \"notes\"):\n  - " in out
    scenario, assignment = load_scenario(s), load_assignment(a)
    assert json.loads(s.read_text())["notes"]
    assert check_assignment(scenario, assignment).valid


def test_import_reads_standard_input_and_writes_the_scenario_to_standard_output(capsys):
    code, out, err = run(["import", "describe", "-", "--partitions", "orders=6,audit.log=2"],
                         stdin=text("members-2.5.txt").encode(), capsys=capsys)
    assert code == 0
    assert scenario_from_dict(json.loads(out)).partition_counts == {"audit.log": 2, "orders": 6}
    assert err.startswith("imported group 'orders-app'") and "not written (--assignment-out FILE" in err


def test_import_json_output(capsys):
    code, out, _ = run(["import", "capture", str(DATA / "capture-cooperative.json"), "--json"], capsys=capsys)
    doc = json.loads(out)
    assert code == 0 and doc["group"] == "orders-app" and (doc["members"], doc["assigned"]) == (3, 5)
    assert doc["scenario"]["format"] == "stickyproof.scenario/1" and doc["assignment"]["revoking"]
    assert doc["notes"] == doc["scenario"]["notes"]


@pytest.mark.parametrize("argv, words", [
    (["import", "describe", "nope.txt"], "InvalidScenario: OUTPUT: nope.txt: no such file"),
    (["import", "describe", str(DATA / "members-2.5.txt"), "--partitions", "orders"], "--partitions: 'orders' is not TOPIC=N"),
    (["import", "describe", str(DATA / "members-2.5.txt"), "--broker-rack", "one=az1"], "--broker-rack: one: 'one' is not a number"),
    (["import", "describe", "-", "--topics", "-"], "standard input can hold only one of OUTPUT and --topics"),
    (["import", "describe", str(DATA / "members-2.5.txt"), "--topics", str(DATA / "topics-3.9.txt"), "-o", "/nonexistent-dir/s.json"],
     "--out: /nonexistent-dir/s.json: cannot write"),
    (["import", "capture", str(DATA / "capture-cooperative.json"), "-o", "x.json", "--assignment-out", "x.json"],
     "--assignment-out: is the same file as --out"),
    (["import", "describe", str(DATA / "topics-3.9.txt")], "no members or offsets table found"),
])
def test_bad_input_is_one_stderr_line_and_exit_2(argv, words, capsys):
    code, out, err = run(argv, capsys=capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


def test_capture_without_assignments_refuses_assignment_out(tmp_path, capsys):
    doc = json.loads((DATA / "capture-sticky.json").read_text())
    for m in doc["members"]:
        del m["assignment"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(["import", "capture", str(path), "--assignment-out", str(tmp_path / "a.json")], capsys=capsys)
    assert code == 2 and "--assignment-out: the capture shows no assignment to write" in err
    assert not (tmp_path / "a.json").exists()


def test_non_utf8_input_names_the_byte(capsys):
    code, _, err = run(["import", "describe", "-"], stdin=b"GROUP \xff", capsys=capsys)
    assert code == 2 and "is not UTF-8 text: byte offset 6" in err


def test_non_utf8_argument_names_the_option(capsys):
    arg = b"\xff".decode("utf-8", "surrogateescape")  # what Python makes of such a byte in argv
    code, _, err = run(["import", "describe", str(DATA / "members-2.5.txt"), "--assignor", arg], capsys=capsys)
    assert code == 2 and err == "InvalidScenario: --assignor: b'\\xff' is not UTF-8 text\n"


@pytest.mark.parametrize("argv", [["import", "--help"], ["import", "describe", "--help"], ["import", "capture", "--help"]])
def test_help_explains_and_shows_an_example(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        run(argv, capsys=capsys)
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and "example" in out and "stickyproof import" in out


def test_registered_in_the_cli_main(monkeypatch, capsys, tmp_path):
    """Through ``stickyproof.cli.main``, where ``import`` is registered: exit codes and one-line errors."""
    from stickyproof import cli

    assert import_cli.add_import in cli.COMMANDS
    s, a = tmp_path / "s.json", tmp_path / "a.json"
    assert cli.main(["import", "capture", str(DATA / "capture-cooperative.json"), "-o", str(s), "--assignment-out", str(a)]) == 0
    capsys.readouterr()
    assert cli.main(["check", str(s), str(a)]) == 0
    capsys.readouterr()
    assert cli.main(["import", "describe", str(DATA / "members-3.9-topicless.txt"), "--topics", str(DATA / "topics-3.9.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("InvalidScenario: describe line 3:")
