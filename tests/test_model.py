"""The interchange format: every rule of docs/scenario-format.md, read and written both ways."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stickyproof.cli import main
from stickyproof.errors import InvalidScenario
from stickyproof.model import (
    Assignment,
    Index,
    TopicPartition,
    assignment_from_dict,
    assignment_to_dict,
    scenario_from_dict,
    scenario_to_dict,
)

EXAMPLE = {
    "format": "stickyproof.scenario/1",
    "name": "kip341-stale-rejoin",
    "protocol": "eager",
    "topics": {"orders": 6, "audit": {"partitions": 2, "racks": [["r1", "r2"], ["r2", "r3"]]}},
    "members": [
        {
            "id": "c0",
            "topics": ["orders", "audit"],
            "owned": {"orders": [0, 1]},
            "generation": 7,
            "version": 2,
            "rack": "r1",
            "instance_id": None,
            "assignors": ["cooperative-sticky", "range"],
        },
        {"id": "c1", "topics": ["orders"]},
    ],
}


def test_example_of_the_format_reads_with_defaults():
    s = scenario_from_dict(EXAMPLE)
    assert s.name == "kip341-stale-rejoin" and s.protocol == "eager"
    assert s.topic("audit").racks == (("r1", "r2"), ("r2", "r3"))
    c0, c1 = s.members
    assert c0.owned == (TopicPartition("orders", 0), TopicPartition("orders", 1))
    assert (c0.generation, c0.version, c0.rack) == (7, 2, "r1")
    assert (c1.owned, c1.generation, c1.version, c1.rack, c1.instance_id, c1.assignors) == ((), -1, 3, None, None, ())


def test_round_trip_is_identity_on_canonical_documents():
    s = scenario_from_dict(EXAMPLE)
    doc = scenario_to_dict(s)
    assert scenario_from_dict(doc) == s
    assert scenario_to_dict(scenario_from_dict(json.loads(json.dumps(doc)))) == doc


def test_non_ascii_names_and_racks_read_as_written():
    doc = copy.deepcopy(EXAMPLE)
    doc["topics"] = {"commandes-é": 2, "audit": {"partitions": 2, "racks": [["", "ré"], []]}}
    doc["members"][0].update(topics=["commandes-é", "audit"], owned={})
    scenario = scenario_from_dict(doc)
    assert scenario.members[0].topics == ("commandes-é", "audit")
    assert scenario.topics[1].racks == (("", "ré"), ())


def test_claim_order_is_kept_as_written():
    doc = copy.deepcopy(EXAMPLE)
    doc["members"][0]["owned"] = {"orders": [3, 1], "audit": [0]}
    s = scenario_from_dict(doc)
    assert [str(tp) for tp in s.members[0].owned] == ["orders-3", "orders-1", "audit-0"]


def test_subscribed_partitions_exclude_unsubscribed_and_missing_topics():
    doc = {"format": "stickyproof.scenario/1", "topics": {"a": 2, "b": 1, "z": 0},
           "members": [{"id": "m", "topics": ["b", "ghost", "z"]}]}
    assert scenario_from_dict(doc).subscribed_partitions() == [TopicPartition("b", 0)]


def _broken(mutate):
    doc = copy.deepcopy(EXAMPLE)
    mutate(doc)
    return doc


# Each rule of docs/scenario-format.md: (rule, mutation, the path the error must name, a word of the message)
RULES = [
    ("unknown format", lambda d: d.update(format="stickyproof.scenario/2"), "format", "unknown format"),
    ("missing format", lambda d: d.pop("format"), "format", "missing"),
    ("member id twice", lambda d: d["members"][1].update(id="c0"), "members[1].id", "already used"),
    ("partition twice in owned", lambda d: d["members"][0]["owned"].update(orders=[0, 0]), "members[0].owned.orders[1]", "twice"),
    ("negative partition", lambda d: d["members"][0]["owned"].update(orders=[1, -3]), "members[0].owned.orders[1]", "negative partition -3"),
    ("negative partition count", lambda d: d["topics"].update(orders=-1), "topics.orders", "negative partition count"),
    ("negative count in object", lambda d: d["topics"].update(audit={"partitions": -2}), "topics.audit.partitions", "negative"),
    ("version above 3", lambda d: d["members"][0].update(version=4), "members[0].version", "outside 0..3"),
    ("version below 0", lambda d: d["members"][1].update(version=-1), "members[1].version", "outside 0..3"),
    ("racks length", lambda d: d["topics"]["audit"].update(racks=[["r1"]]), "topics.audit.racks", "has 1 entries"),
    ("non-integer partition", lambda d: d["members"][0]["owned"].update(orders=[1.5]), "members[0].owned.orders[0]", "non-integer"),
    ("string partition", lambda d: d["members"][0]["owned"].update(orders=["1"]), "members[0].owned.orders[0]", "expected a partition number"),
    ("boolean generation", lambda d: d["members"][0].update(generation=True), "members[0].generation", "boolean"),
    ("float generation", lambda d: d["members"][0].update(generation=2.0), "members[0].generation", "non-integer"),
    ("non-integer count", lambda d: d["topics"].update(orders="6"), "topics.orders", "expected a partition count"),
    ("unknown protocol", lambda d: d.update(protocol="incremental"), "protocol", "unknown protocol"),
    ("topics not an array", lambda d: d["members"][0].update(topics="orders"), "members[0].topics", "expected an array"),
    ("missing member id", lambda d: d["members"][1].pop("id"), "members[1].id", "missing"),
    ("unknown member field", lambda d: d["members"][1].update(owner=[]), "members[1].owner", "unknown field"),
    ("rack not a string", lambda d: d["members"][0].update(rack=3), "members[0].rack", "expected a rack"),
    ("members not a list", lambda d: d.update(members={}), "members", "expected an array"),
    ("notes not an array", lambda d: d.update(notes="generations unknown"), "notes", "expected an array of strings"),
    ("note not a string", lambda d: d.update(notes=["ok", 3]), "notes[1]", "expected a string"),
    ("empty member id", lambda d: d["members"][1].update(id=""), "members[1].id", "got the empty string"),
    ("empty subscribed topic", lambda d: d["members"][1].update(topics=[""]), "members[1].topics[0]", "got the empty string"),
    ("empty topic name", lambda d: d["topics"].update({"": 3}), "topics.", "got the empty string"),
    ("empty owned topic", lambda d: d["members"][0]["owned"].update({"": [0]}), "members[0].owned.", "got the empty string"),
    ("no members", lambda d: d.update(members=[]), "members", "at least one member"),
    # Names and racks are checked together while all are ASCII strings, one by one otherwise: the path
    # still names the first element at fault, wherever it is.
    ("later topic not a string", lambda d: d["members"][0].update(topics=["orders", "audit", 7]), "members[0].topics[2]", "expected a topic name"),
    ("later topic empty", lambda d: d["members"][0].update(topics=["orders", "é", ""]), "members[0].topics[2]", "got the empty string"),
    ("topic with a lone surrogate", lambda d: d["members"][1].update(topics=["orders", "ok\ud800"]), "members[1].topics[1]", "surrogate"),
    ("rack not a string in racks", lambda d: d["topics"]["audit"].update(racks=[["r1"], ["r2", None]]), "topics.audit.racks[1][1]", "expected a rack name"),
    ("rack with a lone surrogate", lambda d: d["topics"]["audit"].update(racks=[["r\udc00"], []]), "topics.audit.racks[0][0]", "surrogate"),
    ("rack list not an array", lambda d: d["topics"]["audit"].update(racks=[["r1"], "r2"]), "topics.audit.racks[1]", "expected an array of rack names"),
    ("count past int32 in object", lambda d: d["topics"].update(audit={"partitions": 2**31}), "topics.audit.partitions", "exceeds int32"),
]


@pytest.mark.parametrize("rule, mutate, path, words", RULES, ids=[r[0] for r in RULES])
def test_every_format_rule_names_the_path(rule, mutate, path, words):
    with pytest.raises(InvalidScenario) as err:
        scenario_from_dict(_broken(mutate))
    assert err.value.path == path
    assert words in str(err.value)


@pytest.mark.parametrize("rule, mutate, path, words", RULES, ids=[r[0] for r in RULES])
def test_validate_exits_2_naming_the_field(rule, mutate, path, words, tmp_path, capsys):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(_broken(mutate)))
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("InvalidScenario: ")
    assert path in err


@pytest.mark.parametrize(
    "text, words",
    [("{", "not valid JSON"), ('{"format": "stickyproof.scenario/1", "topics": {}, "members": [', "not valid JSON"),
     ("", "not valid JSON"), ("[1, 2]", "expected a JSON object"), (b"\xff\xfe\x00", "")],
)
def test_not_json_and_truncated_json_exit_2(text, words, tmp_path, capsys):
    f = tmp_path / "bad.json"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_missing_file_exits_2(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_validate_prints_one_line_summary(tmp_path, capsys):
    f = tmp_path / "ok.json"
    f.write_text(json.dumps(EXAMPLE))
    assert main(["validate", str(f)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "2 members" in out and "8 subscribed partitions" in out


def test_validate_reads_standard_input():
    proc = subprocess.run(
        [sys.executable, "-m", "stickyproof.cli", "validate", "-"], input=json.dumps(EXAMPLE).encode(),
        capture_output=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""


def test_usage_error_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["validate"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_assignment_document_round_trip_and_rules():
    doc = {"format": "stickyproof.assignment/1",
           "assignment": {"c1": {"orders": [3, 4, 5]}, "c0": {"orders": [0, 1, 2], "audit": [0]}},
           "revoking": {"c0": {"audit": [1]}}}
    a = assignment_from_dict(doc)
    assert a.revoking == {"c0": (TopicPartition("audit", 1),)}
    out = assignment_to_dict(a)
    assert list(out["assignment"]) == ["c0", "c1"]
    assert out["assignment"]["c0"] == {"audit": [0], "orders": [0, 1, 2]}
    assert assignment_from_dict(out) == Assignment(
        {"c0": (TopicPartition("audit", 0), *[TopicPartition("orders", p) for p in range(3)]),
         "c1": tuple(TopicPartition("orders", p) for p in (3, 4, 5))},
        {"c0": (TopicPartition("audit", 1),)},
    )
    with pytest.raises(InvalidScenario) as err:
        assignment_from_dict({**doc, "assignment": {"c0": {"orders": [0, -1]}}})
    assert err.value.path == "assignment.c0.orders[1]"


def test_index_interns_sorted_and_bounds_checks_claims():
    s = scenario_from_dict(EXAMPLE)
    ix = Index.of(s)
    assert ix.members == ("c0", "c1")
    assert ix.topics == ("audit", "orders") and ix.num_partitions == 8
    assert ix.partition_id("audit", 1) == 1 and ix.partition_id("orders", 0) == 2
    assert ix.partition_id("orders", 6) is None and ix.partition_id("ghost", 0) is None
    assert all(ix.topic_partition(ix.partition_id(tp.topic, tp.partition)) == tp for tp in ix.topic_partitions())


names = st.text(alphabet="abcxyz-_.0123456789", min_size=1, max_size=6)


@st.composite
def documents(draw):
    topics = draw(st.dictionaries(names, st.integers(0, 6), max_size=4))
    ids = draw(st.lists(names, unique=True, min_size=1, max_size=5))
    members = []
    for mid in ids:
        subs = draw(st.lists(st.sampled_from(sorted(topics) + ["ghost"]), unique=True, max_size=4))
        owned = {t: draw(st.lists(st.integers(0, 8), unique=True, min_size=1, max_size=3)) for t in subs if draw(st.booleans())}
        members.append({"id": mid, "topics": subs, "owned": owned, "generation": draw(st.integers(-1, 9)),
                        "version": draw(st.integers(0, 3)), "rack": draw(st.none() | st.sampled_from(["r1", "r2"])),
                        "instance_id": draw(st.none() | names), "assignors": draw(st.lists(st.sampled_from(["range", "sticky"]), unique=True))})
    return {"format": "stickyproof.scenario/1", "name": draw(names), "protocol": draw(st.sampled_from(["eager", "cooperative"])),
            "topics": topics, "members": members}


@given(documents())
def test_any_valid_document_round_trips(doc):
    s = scenario_from_dict(doc)
    assert scenario_from_dict(scenario_to_dict(s)) == s
    assert scenario_to_dict(s) == doc


def test_dump_json_is_valid_json_with_scalar_lists_on_one_line():
    from stickyproof.model import dump_json

    doc = {"assignment": {"c0": {"t": [0, 1, 2]}, "c1": {}}, "nested": [{"x": [1]}], "s": 'q"uote', "n": None}
    text = dump_json(doc)
    assert json.loads(text) == doc
    assert '"t": [0, 1, 2]' in text


def test_expect_key_of_regression_files_is_read_and_ignored():
    doc = {**copy.deepcopy(EXAMPLE), "expect": {"assignor": "sticky", "mechanism": "..."}}
    assert scenario_from_dict(doc) == scenario_from_dict(EXAMPLE)
    assert "expect" not in scenario_to_dict(scenario_from_dict(doc))


def test_notes_key_written_by_import_is_read_and_ignored():
    doc = {**copy.deepcopy(EXAMPLE), "notes": ["generation -1 for every member: the describe output shows none"]}
    assert scenario_from_dict(doc) == scenario_from_dict(EXAMPLE)
    assert "notes" not in scenario_to_dict(scenario_from_dict(doc))


def test_assignment_may_list_a_partition_twice_so_the_check_can_report_it():
    doc = {"format": "stickyproof.assignment/1", "assignment": {"c1": {"t": [1, 1]}}}
    assert assignment_from_dict(doc).assignment["c1"] == (TopicPartition("t", 1), TopicPartition("t", 1))
