"""kafka-python's four assignors as peers (``kafka-python:NAME``), graded through kafka-python's own
leader path: its ClusterMetadata, its ConsumerProtocol codecs at each member's version, its
``assign(cluster, members)``. Skipped, naming the install command, when kafka-python is absent.
"""

from __future__ import annotations

import pytest

from stickyproof.assignors.base import COOPERATIVE, EAGER
from stickyproof.errors import AssignorFailure, DecodeError, UnknownAssignor
from stickyproof.grading import grade_assignor
from stickyproof.leader import lead
from stickyproof.model import TopicPartition
from stickyproof.peers import kafka_python as adapter
from stickyproof.lookup import get_assignor as resolve

from .builders import group

if adapter.kafka_python_version() is None:
    pytest.skip(f"kafka-python is not installed: {adapter.INSTALL}", allow_module_level=True)


UNIFORM = group({"t": 6, "u": 3}, [{"id": f"c{i}", "topics": ["t", "u"]} for i in range(3)])
HETEROGENEOUS = group({"t": 4, "u": 2}, [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t", "u"]}])
# Round 2 of a sticky group: c0 and c1 own what a balanced round 1 gave them; c2 is new.
REJOIN = [
    {"id": "c0", "topics": ["t"], "owned": {"t": [0, 1, 2]}, "generation": 4},
    {"id": "c1", "topics": ["t"], "owned": {"t": [3, 4, 5]}, "generation": 4},
    {"id": "c2", "topics": ["t"]},
]


def test_the_four_assignors_are_named_as_kafka_python_registers_them():
    for name, protocols in (("range", (EAGER,)), ("roundrobin", (EAGER,)), ("sticky", (EAGER,)),
                            ("cooperative-sticky", (COOPERATIVE,))):
        info = resolve(f"kafka-python:{name}")
        assert (info.name, info.kafka_name, info.protocols) == (f"kafka-python:{name}", name, protocols)
        assert not info.user and info.variant == "current"  # led as Java members of that assignor
        assert info.description.startswith("kafka-python 3.")


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky"])
def test_eager_assignors_are_valid_on_a_uniform_group(name):
    grade = grade_assignor(UNIFORM, resolve(f"kafka-python:{name}"))
    assert grade.run_error is None and grade.valid, grade.violations
    assert sorted(grade_loads(name).values()) == [3, 3, 3]


def grade_loads(name):
    return lead(UNIFORM, resolve(f"kafka-python:{name}")).assignment.loads()


@pytest.mark.parametrize("direct", [False, True])
def test_sticky_sees_its_history_through_its_own_user_data(direct):
    # Wire mode: the leader hands over Java's user data, the adapter writes kafka-python's own from it;
    # direct mode: the scenario's owned partitions. Either way kafka-python's sticky keeps 4 of 6.
    grade = grade_assignor(group({"t": 6}, REJOIN), resolve("kafka-python:sticky"), direct=direct)
    assert grade.valid and grade.kept == grade.optimal_kept == 4


def test_cooperative_sticky_withholds_what_changes_owner_and_keeps_the_rest():
    rejoined = group({"t": 6}, REJOIN, COOPERATIVE)
    result = lead(rejoined, resolve("kafka-python:cooperative-sticky"))
    assert result.assignment.loads() == {"c0": 2, "c1": 2, "c2": 0}
    assert sum(len(v) for v in result.assignment.revoking.values()) == 2
    grade = grade_assignor(rejoined, resolve("kafka-python:cooperative-sticky"))
    assert grade.valid and grade.run_error is None and grade.kept == grade.optimal_kept


def test_roundrobin_raises_keyerror_on_a_heterogeneous_group():
    # Pinned as tests/regressions/peers/kafka-python-roundrobin-heterogeneous-group-raises-keyerror.json.
    info = resolve("kafka-python:roundrobin")
    with pytest.raises(AssignorFailure) as caught:
        info.fn(lead_group(HETEROGENEOUS, info))
    assert caught.value.kafka_exception == "KeyError" and isinstance(caught.value.__cause__, KeyError)
    assert "(None, 'b')" in str(caught.value)
    grade = grade_assignor(HETEROGENEOUS, info)
    assert not grade.valid and grade.run_error.kind == "error" and grade.run_error.kafka_exception == "KeyError"
    for name in ("range", "sticky"):  # the others run the same group
        assert grade_assignor(HETEROGENEOUS, resolve(f"kafka-python:{name}")).run_error is None


def lead_group(group, info):
    from stickyproof.leader import build_group, rebalance_protocol

    return build_group(group, info, rebalance_protocol(group, info))


def test_kafka_pythons_sticky_user_data_and_javas_do_not_read_each_other():
    """Why a mixed group loses stickiness (issue 12, raw wire mode): kafka-python writes
    StickyAssignorUserData with a 2-byte version header (an ApiData), Java writes KIP-341's V1
    without one (docs/rules.md §5.3); each side's reader fails on the other's bytes and falls
    back to "no previous assignment"."""
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.structs import TopicPartition as KafkaTopicPartition

    from stickyproof.wire import decode_sticky_user_data, encode_sticky_user_data

    theirs = StickyPartitionAssignor._metadata(["t"], [KafkaTopicPartition("t", 0)], 5).user_data.encode()
    assert theirs[:2] == b"\x00\x01"
    with pytest.raises(DecodeError):
        decode_sticky_user_data(theirs)
    ours = encode_sticky_user_data((TopicPartition("t", 0),), 5, version=1)
    member = type("Metadata", (), {"user_data": ours, "topics": ["t"]})()
    parsed = StickyPartitionAssignor.parse_member_metadata(member)
    assert parsed.partitions == [] and parsed.generation == -1


def test_names_and_installs_are_checked(monkeypatch):
    with pytest.raises(UnknownAssignor, match="kafka-python has range, roundrobin, sticky, cooperative-sticky"):
        adapter.kafka_python_assignor("uniform")
    monkeypatch.setattr(adapter, "kafka_python_version", lambda: None)
    with pytest.raises(UnknownAssignor, match=r"pip install 'stickyproof\[peers\]'"):
        adapter.kafka_python_assignor("range")
    monkeypatch.setattr(adapter, "kafka_python_version", lambda: (2, 2, 0))
    with pytest.raises(UnknownAssignor, match="kafka-python 2.2.0 is installed"):
        adapter.kafka_python_assignor("range")


def test_java_members_mode_decodes_the_java_bytes_and_grades_what_kafka_python_cannot_read():
    # kafka-python:NAME+java: a kafka-python leader handed the bytes Java members send (raw wire mode).
    fresh = group({"t": 6}, [{"id": f"c{i}", "topics": ["t"]} for i in range(3)])
    for name in ("range", "roundrobin"):
        grade = grade_assignor(fresh, resolve(f"kafka-python:{name}+java"))
        assert grade.valid and grade.run_error is None, (name, grade.error)
    # sticky's first round reads no user data (nobody has any yet) and is right; the stability re-run
    # one generation later carries Java's user data, which kafka-python cannot read.
    grade = grade_assignor(fresh, resolve("kafka-python:sticky+java"))
    assert grade.run_error is None and grade.violated() == ("unstable",)
    assert "Could not parse member data" in str(grade.violations[0].witness)
    # With history, Java's KIP-341 user data is unreadable to kafka-python (pinned in
    # tests/regressions/peers/kafka-python-sticky-leader-cannot-read-java-members-user-data.json).
    grade = grade_assignor(group({"t": 6}, REJOIN), resolve("kafka-python:sticky+java"))
    assert grade.run_error is not None and grade.run_error.kafka_exception == "ValueError"
    assert "Could not parse member data" in grade.run_error.message
    assert grade_assignor(group({"t": 6}, REJOIN), resolve("kafka-python:range+java")).valid
