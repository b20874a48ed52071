"""The consumer-protocol codecs (docs/rules.md §5): specs, golden bytes, round trips, version matrix, Kafka's tests.

Golden vectors are derived by hand from the layouts of §5 (each with its derivation), never by
running the encoder, so a codec bug cannot agree with itself.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stickyproof.errors import DecodeError, EncodeError, StickyproofError
from stickyproof.javaorder import java_string_key
from stickyproof.model import TopicPartition as TP
from stickyproof.wire import (
    SpecError,
    StickyUserData,
    WireAssignment,
    WireSubscription,
    decode,
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
    load_spec,
    spec_names,
)
from stickyproof.wire._spec import parse_spec

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = (0, 1, 2, 3)


def h(text: str) -> bytes:
    """Hex with spaces and '|' separators (as the derivations are written) to bytes."""
    return bytes.fromhex(text.replace("|", " "))


# ------------------------------------------------------------------------------------------
# the specs


def test_bundled_specs_are_byte_identical_to_models():
    canonical = {p.name: p.read_bytes() for p in (ROOT / "models" / "messages").glob("*.json")}
    bundled = {p.name: p.read_bytes() for p in (ROOT / "src" / "stickyproof" / "data" / "messages").glob("*.json")}
    assert canonical, "models/messages/ holds no specs"
    assert sorted(canonical) == sorted(bundled)
    for name in canonical:
        assert canonical[name] == bundled[name], f"{name} differs between models/messages and the package copy"


def test_every_spec_loads_with_its_versions():
    assert spec_names() == (
        "ConsumerProtocolAssignment",
        "ConsumerProtocolSubscription",
        "CooperativeStickyAssignorUserData",
        "StickyAssignorUserData",
    )
    got = {n: (load_spec(n).lowest, load_spec(n).highest, load_spec(n).version_header) for n in spec_names()}
    assert got == {
        "ConsumerProtocolAssignment": (0, 3, True),
        "ConsumerProtocolSubscription": (0, 3, True),
        "CooperativeStickyAssignorUserData": (0, 0, False),
        "StickyAssignorUserData": (0, 1, False),
    }


def test_subscription_spec_field_versions_and_defaults():
    fields = {f.name: f for f in load_spec("ConsumerProtocolSubscription").fields}
    assert [f for f in fields] == ["Topics", "UserData", "OwnedPartitions", "GenerationId", "RackId"]
    assert (fields["OwnedPartitions"].versions.low, fields["GenerationId"].versions.low, fields["RackId"].versions.low) == (1, 2, 3)
    assert fields["GenerationId"].default == -1
    assert fields["RackId"].default is None and fields["UserData"].default is None
    assert fields["OwnedPartitions"].default == ()


def test_unknown_spec_name_is_an_error():
    with pytest.raises(SpecError, match="no message spec named 'Nope'"):
        load_spec("Nope")


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"name": "X", "validVersions": "0-1", "flexibleVersions": "0+", "fields": []}, "flexible"),
        ({"name": "X", "validVersions": "0+", "fields": []}, "closed"),
        ({"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "float", "versions": "0+"}]}, "unsupported type"),
        ({"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "[]S", "versions": "0+"}]}, "needs nested fields"),
        ({"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "int32", "versions": "x"}]}, "bad version range"),
        ({"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "int32", "versions": "0+", "nullableVersions": "0+"}]}, "cannot be nullable"),
        ({"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "string", "versions": "0+", "default": "null"}]}, "never nullable"),
        ({"name": "X", "validVersions": "0", "fields": [{"name": "A", "type": "int32", "versions": "0+", "typo": 1}]}, "unknown keys"),
    ],
)
def test_malformed_specs_are_rejected(doc, message):
    with pytest.raises(SpecError, match=message):
        parse_spec(doc)


# ------------------------------------------------------------------------------------------
# golden bytes, derived by hand from §5

FOO_BAR_SUB = WireSubscription(version=3, topics=("foo", "bar"), user_data=None, owned=(TP("foo", 0),), generation=1, rack="r1")

# §5.1 example. v0: version 0 | 2 topics | "bar" (sorted first) | "foo" | user data null (-1).
SUB_V0 = h("00 00 | 00 00 00 02 | 00 03 62 61 72 | 00 03 66 6f 6f | ff ff ff ff")
# §5.1 example. v3 = v0 body with header 3, then 1 owned entry: "foo", 1 partition, 0 | generation 1 | rack "r1".
SUB_V3 = h(
    "00 03 | 00 00 00 02 | 00 03 62 61 72 | 00 03 66 6f 6f | ff ff ff ff"
    "| 00 00 00 01 | 00 03 66 6f 6f | 00 00 00 01 | 00 00 00 00 | 00 00 00 01 | 00 02 72 31"
)
# v1: topics [foo, bar] -> bar, foo; user data 01 02 (length 2); owned [foo-1, foo-0, bar-3] sorted by
# (topic, partition) -> bar-3, foo-0, foo-1 -> 2 entries: ("bar", [3]), ("foo", [0, 1]).
SUB_V1 = h(
    "00 01 | 00 00 00 02 | 00 03 62 61 72 | 00 03 66 6f 6f | 00 00 00 02 01 02"
    "| 00 00 00 02 | 00 03 62 61 72 | 00 00 00 01 | 00 00 00 03"
    "| 00 03 66 6f 6f | 00 00 00 02 | 00 00 00 00 | 00 00 00 01"
)
# v2: topics [t]; user data empty (length 0, not null); owned nothing (count 0); generation 7.
SUB_V2 = h("00 02 | 00 00 00 01 | 00 01 74 | 00 00 00 00 | 00 00 00 00 | 00 00 00 07")

# §5.2 example. v3 [foo-0, foo-1, bar-2]: 2 entries in order of first appearance: ("foo", [0, 1]), ("bar", [2]); null user data.
ASG_V3 = h(
    "00 03 | 00 00 00 02 | 00 03 66 6f 6f | 00 00 00 02 | 00 00 00 00 | 00 00 00 01"
    "| 00 03 62 61 72 | 00 00 00 01 | 00 00 00 02 | ff ff ff ff"
)
# v0 [t-2] with user data ab: 1 entry ("t", [2]), user data length 1.
ASG_V0 = h("00 00 | 00 00 00 01 | 00 01 74 | 00 00 00 01 | 00 00 00 02 | 00 00 00 01 ab")
# v1: nothing assigned (count 0), user data null.
ASG_V1 = h("00 01 | 00 00 00 00 | ff ff ff ff")
# v2 [b-1, a-0, b-0]: first appearance b then a, partitions unsorted: ("b", [1, 0]), ("a", [0]); user data empty.
ASG_V2 = h(
    "00 02 | 00 00 00 02 | 00 01 62 | 00 00 00 02 | 00 00 00 01 | 00 00 00 00"
    "| 00 01 61 | 00 00 00 01 | 00 00 00 00 | 00 00 00 00"
)

# §5.3 example. V1 [t-0, t-1] generation 5: 1 topic entry ("t", [0, 1]) then int32 5; no version prefix.
STICKY_V1 = h("00 00 00 01 | 00 01 74 | 00 00 00 02 | 00 00 00 00 | 00 00 00 01 | 00 00 00 05")
# V0 = V1 without the trailing generation.
STICKY_V0 = h("00 00 00 01 | 00 01 74 | 00 00 00 02 | 00 00 00 00 | 00 00 00 01")

# §5.4: a bare int32.
COOP_5 = h("00 00 00 05")
COOP_MINUS_1 = h("ff ff ff ff")


@pytest.mark.parametrize(
    "sub, version, golden",
    [
        (FOO_BAR_SUB, 0, SUB_V0),
        (WireSubscription(1, ("foo", "bar"), b"\x01\x02", (TP("foo", 1), TP("foo", 0), TP("bar", 3)), 9, "rack"), 1, SUB_V1),
        (WireSubscription(2, ("t",), b"", (), 7, None), 2, SUB_V2),
        (FOO_BAR_SUB, 3, SUB_V3),
    ],
    ids=["v0", "v1", "v2", "v3"],
)
def test_subscription_golden_bytes(sub, version, golden):
    assert encode_subscription(sub, version) == golden


def test_subscription_golden_bytes_decode():
    assert decode_subscription(SUB_V0) == WireSubscription(0, ("bar", "foo"), None, (), -1, None)
    assert decode_subscription(SUB_V1) == WireSubscription(1, ("bar", "foo"), b"\x01\x02", (TP("bar", 3), TP("foo", 0), TP("foo", 1)))
    assert decode_subscription(SUB_V2) == WireSubscription(2, ("t",), b"", (), 7, None)
    assert decode_subscription(SUB_V3) == WireSubscription(3, ("bar", "foo"), None, (TP("foo", 0),), 1, "r1")


@pytest.mark.parametrize(
    "a, golden",
    [
        (WireAssignment(0, (TP("t", 2),), b"\xab"), ASG_V0),
        (WireAssignment(1, ()), ASG_V1),
        (WireAssignment(2, (TP("b", 1), TP("a", 0), TP("b", 0)), b""), ASG_V2),
        (WireAssignment(3, (TP("foo", 0), TP("foo", 1), TP("bar", 2))), ASG_V3),
    ],
    ids=["v0", "v1", "v2", "v3"],
)
def test_assignment_golden_bytes(a, golden):
    assert encode_assignment(a) == golden
    # Decoding gives the grouped order: a topic's later partitions move up to its first entry.
    grouped = tuple(sorted(a.assigned, key=lambda tp: [t.topic for t in a.assigned].index(tp.topic)))
    assert decode_assignment(golden) == WireAssignment(a.version, grouped, a.user_data)


def test_sticky_user_data_golden_bytes():
    assert encode_sticky_user_data([TP("t", 0), TP("t", 1)], 5) == STICKY_V1
    assert encode_sticky_user_data([TP("t", 0), TP("t", 1)], 5, version=0) == STICKY_V0
    assert decode_sticky_user_data(STICKY_V1) == StickyUserData(1, (TP("t", 0), TP("t", 1)), 5)
    assert decode_sticky_user_data(STICKY_V0) == StickyUserData(0, (TP("t", 0), TP("t", 1)), -1)


def test_cooperative_user_data_golden_bytes():
    assert encode_cooperative_user_data(5) == COOP_5
    assert encode_cooperative_user_data(-1) == COOP_MINUS_1
    assert decode_cooperative_user_data(COOP_5) == 5
    assert decode_cooperative_user_data(COOP_MINUS_1) == -1


# ------------------------------------------------------------------------------------------
# round trips (Hypothesis)

topics_st = st.text(max_size=8)
partitions_st = st.integers(-(2**31), 2**31 - 1)
int32_st = st.integers(-(2**31), 2**31 - 1)
user_data_st = st.none() | st.binary(max_size=16)
tps_st = st.lists(st.tuples(topics_st, partitions_st).map(lambda t: TP(*t)), max_size=8)


@st.composite
def subscriptions(draw, version=st.sampled_from(VERSIONS)):
    return WireSubscription(
        version=draw(version),
        topics=tuple(draw(st.lists(topics_st, max_size=6))),
        user_data=draw(user_data_st),
        owned=tuple(draw(tps_st)),
        generation=draw(int32_st),
        rack=draw(st.none() | st.text(min_size=1, max_size=6)),
    )


def java_sorted_tps(tps):
    return tuple(sorted(tps, key=lambda tp: (java_string_key(tp.topic), tp.partition)))


def as_read_at(sub: WireSubscription, written: int, layout: int) -> WireSubscription:
    """What a reader using ``layout`` sees of ``sub`` written at ``written``: the header version, then fields up to the layout."""
    return WireSubscription(
        version=written,
        topics=tuple(sorted(sub.topics, key=java_string_key)),
        user_data=sub.user_data,
        owned=java_sorted_tps(sub.owned) if layout >= 1 else (),
        generation=sub.generation if layout >= 2 else -1,
        rack=sub.rack if layout >= 3 else None,
    )


@settings(max_examples=150)
@given(subscriptions())
def test_subscription_round_trip_every_version(sub):
    assert decode_subscription(encode_subscription(sub)) == as_read_at(sub, sub.version, sub.version)


@settings(max_examples=150)
@given(st.sampled_from(VERSIONS), tps_st, user_data_st)
def test_assignment_round_trip_every_version(version, tps, user_data):
    a = WireAssignment(version, tuple(tps), user_data)
    got = decode_assignment(encode_assignment(a))
    # Grouping by first appearance keeps every partition but moves later runs of a topic up to its first entry.
    by_topic: dict[str, list[TP]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp)
    assert got == WireAssignment(version, tuple(tp for group in by_topic.values() for tp in group), user_data)


@settings(max_examples=150)
@given(tps_st, int32_st, st.sampled_from((0, 1)))
def test_sticky_user_data_round_trip_every_version(tps, generation, version):
    got = decode_sticky_user_data(encode_sticky_user_data(tps, generation, version=version))
    assert got.version == version
    assert got.generation == (generation if version == 1 else -1)
    assert sorted(got.previous_assignment) == sorted(tps)
    # Within a topic the given order survives.
    for topic in {tp.topic for tp in tps}:
        assert [tp for tp in got.previous_assignment if tp.topic == topic] == [tp for tp in tps if tp.topic == topic]


@settings(max_examples=100)
@given(int32_st)
def test_cooperative_user_data_round_trip(generation):
    assert decode_cooperative_user_data(encode_cooperative_user_data(generation)) == generation


# ------------------------------------------------------------------------------------------
# cross-version matrix: writer version i, reader that knows versions up to j

FULL_SUB = WireSubscription(3, ("b", "a"), b"\x00", (TP("a", 1), TP("b", 0), TP("a", 0)), 4, "rack-1")


@pytest.mark.parametrize("written", VERSIONS)
@pytest.mark.parametrize("reader", VERSIONS)
def test_subscription_cross_version_matrix(written, reader):
    data = encode_subscription(FULL_SUB, written)
    assert decode_subscription(data, max_version=reader) == as_read_at(FULL_SUB, written, min(written, reader))


@pytest.mark.parametrize("written", VERSIONS)
@pytest.mark.parametrize("reader", VERSIONS)
def test_assignment_cross_version_matrix(written, reader):
    a = WireAssignment(written, (TP("x", 3), TP("y", 1), TP("x", 2)), b"ud")
    got = decode_assignment(encode_assignment(a), max_version=reader)
    assert got == WireAssignment(written, (TP("x", 3), TP("x", 2), TP("y", 1)), b"ud")


def future_subscription_v9() -> bytes:
    """Version 9: the v3 layout of FULL_SUB followed by two fields a future version might add (an int32 and a string)."""
    body = encode_subscription(FULL_SUB, 3)[2:]
    return struct.pack(">h", 9) + body + struct.pack(">i", 42) + struct.pack(">h", 3) + b"new"


@pytest.mark.parametrize("reader", VERSIONS)
def test_future_subscription_version_9_is_read_with_the_newest_known_layout(reader):
    got = decode_subscription(future_subscription_v9(), max_version=reader)
    assert got == as_read_at(FULL_SUB, 9, reader)


def test_future_version_reports_where_the_known_layout_ended():
    data = future_subscription_v9()
    d = decode("ConsumerProtocolSubscription", data)
    assert (d.version, d.layout_version) == (9, 3)
    assert data[d.end :] == struct.pack(">i", 42) + b"\x00\x03new"


def test_reader_cap_outside_the_spec_is_an_error():
    with pytest.raises(DecodeError, match="capped at version 4"):
        decode_subscription(SUB_V0, max_version=4)


# ------------------------------------------------------------------------------------------
# Kafka's ConsumerProtocolTest, the cases that concern a codec (docs/rules.md §7)


def test_serializeDeserializeSubscriptionAllVersions():
    # Owned only from v1, generation from v2, rack from v3.
    for v in VERSIONS:
        got = decode_subscription(encode_subscription(FULL_SUB, v))
        assert (bool(got.owned), got.generation != -1, got.rack is not None) == (v >= 1, v >= 2, v >= 3)


def test_serializeDeserializeMetadata_empty_user_data_survives():
    got = decode_subscription(encode_subscription(WireSubscription(3, ("foo", "bar"), b"")))
    assert got.user_data == b"" and got.generation == -1 and got.rack is None


def test_serializeDeserializeNullSubscriptionUserData():
    assert decode_subscription(encode_subscription(WireSubscription(3, ("foo",), None))).user_data is None


def test_serializeSubscriptionShouldOrderTopics():
    a = WireSubscription(3, ("foo", "bar", "baz"), None, (TP("foo", 0),), 1, "r")
    b = WireSubscription(3, ("baz", "foo", "bar"), None, (TP("foo", 0),), 1, "r")
    assert encode_subscription(a) == encode_subscription(b)


def test_serializeSubscriptionShouldOrderOwnedPartitions():
    a = WireSubscription(3, ("foo", "bar"), None, (TP("foo", 0), TP("bar", 0), TP("foo", 1)))
    b = WireSubscription(3, ("foo", "bar"), None, (TP("foo", 1), TP("foo", 0), TP("bar", 0)))
    assert encode_subscription(a) == encode_subscription(b)


def test_subscription_topics_sort_in_java_string_order():
    # U+10000 is the surrogate pair D800 DC00 in UTF-16, so Java's compareTo puts it before U+FFFF
    # while Python's code-point order puts it after (docs/rules.md N2).
    data = encode_subscription(WireSubscription(0, ("\uffff", "\U00010000")))
    assert decode_subscription(data).topics == ("\U00010000", "\uffff")


def test_deserializeOldSubscriptionVersion():
    got = decode_subscription(encode_subscription(FULL_SUB, 0))
    assert (got.owned, got.generation, got.rack) == ((), -1, None)


@pytest.mark.parametrize("has_generation_and_rack", [True, False])
def test_deserializeNewSubscriptionWithOldVersion(has_generation_and_rack):
    sub = WireSubscription(3, ("foo", "bar"), None, (TP("bar", 2),), *((5, "r") if has_generation_and_rack else (-1, None)))
    got = decode_subscription(encode_subscription(sub), max_version=0)
    assert got == WireSubscription(3, ("bar", "foo"), None, (), -1, None)


def test_deserializeFutureSubscriptionVersion():
    # Version 100: v3 fields for topic "topic", owned topic-1, generation 5, rack "r", then an extra string field.
    data = (
        struct.pack(">h", 100)
        + h("00 00 00 01 | 00 05") + b"topic" + h("ff ff ff ff")
        + h("00 00 00 01 | 00 05") + b"topic" + h("00 00 00 01 | 00 00 00 01")
        + h("00 00 00 05 | 00 01") + b"r"
        + h("00 03") + b"bar"
    )
    assert decode_subscription(data) == WireSubscription(100, ("topic",), None, (TP("topic", 1),), 5, "r")


def test_serializeDeserializeAssignmentAllVersions():
    a = (TP("foo", 0), TP("bar", 2))
    for v in VERSIONS:
        assert decode_assignment(encode_assignment(WireAssignment(v, a, b"x"))) == WireAssignment(v, a, b"x")


def test_serializeDeserializeAssignment_empty_user_data_survives():
    assert decode_assignment(encode_assignment(WireAssignment(3, (TP("foo", 0),), b""))).user_data == b""


def test_deserializeNullAssignmentUserData():
    assert decode_assignment(encode_assignment(WireAssignment(3, (TP("foo", 0),), None))).user_data is None


def test_deserializeFutureAssignmentVersion():
    # Version 100: one entry ("foo", [1]), empty user data, then an extra string field "bar".
    data = h("00 64 | 00 00 00 01 | 00 03 66 6f 6f | 00 00 00 01 | 00 00 00 01 | 00 00 00 00 | 00 03 62 61 72")
    assert decode_assignment(data) == WireAssignment(100, (TP("foo", 1),), b"")


def test_serializeDeserializeConsumerProtocolSubscriptionAllVersions_absent_fields_read_as_defaults():
    for v in VERSIONS:
        d = decode("ConsumerProtocolSubscription", encode("ConsumerProtocolSubscription", {"Topics": ["t"]}, v))
        assert d.value == {"Topics": ["t"], "UserData": None, "OwnedPartitions": [], "GenerationId": -1, "RackId": None}


# ------------------------------------------------------------------------------------------
# writer conventions and encode errors


def test_subscription_version_above_highest_is_written_as_highest():
    # ConsumerProtocol.checkSubscriptionVersion clamps; the header says 3.
    assert encode_subscription(FOO_BAR_SUB, 9) == SUB_V3


def test_writing_at_a_lower_version_drops_newer_fields_silently():
    assert encode_subscription(FOO_BAR_SUB, 0) == SUB_V0


def test_assignment_groups_partitions_by_first_appearance_not_sorted():
    data = encode_assignment(WireAssignment(0, (TP("z", 5), TP("a", 1), TP("z", 0))))
    assert decode_assignment(data).assigned == (TP("z", 5), TP("z", 0), TP("a", 1))


def test_sticky_user_data_topics_in_java_hashmap_order():
    # String.hashCode: "a" = 97, "b" = 98, "q" = 113; below 2^16 the spread is the hash itself; a 16-bucket
    # table gives buckets a -> 97 & 15 = 1, b -> 2, q -> 113 & 15 = 1. Bucket 1 keeps insertion order (q before a),
    # so inserting b, q, a iterates q, a, b: neither insertion nor sorted order.
    data = encode_sticky_user_data([TP("b", 0), TP("q", 0), TP("a", 0), TP("q", 1)], 3)
    assert decode_sticky_user_data(data).previous_assignment == (TP("q", 0), TP("q", 1), TP("a", 0), TP("b", 0))


def test_sticky_user_data_without_generation_writes_default():
    assert decode_sticky_user_data(encode_sticky_user_data([TP("t", 0)], None)).generation == -1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: encode_subscription(WireSubscription(3, ("x" * 32768,))), "32768 UTF-8 bytes exceeds"),
        (lambda: encode_subscription(WireSubscription(3, ("\u00e9" * 16384,))), "32768 UTF-8 bytes exceeds"),
        (lambda: encode_subscription(WireSubscription(3, ("t",), owned=(TP("t", 2**31),))), "outside the int32 range"),
        (lambda: encode_subscription(WireSubscription(3, ("t",), generation=-(2**31) - 1)), "outside the int32 range"),
        (lambda: encode_subscription(WireSubscription(3, ("t",), rack="\ud800")), "not encodable as UTF-8"),
        (lambda: encode_subscription(WireSubscription(-1, ("t",))), "unsupported version -1"),
        (lambda: encode_subscription(WireSubscription(3, "topic")), "expected a sequence of topic names"),
        (lambda: encode_subscription(WireSubscription(3, (1,))), r"Topics\[0\]: expected a string"),
        (lambda: encode_subscription(WireSubscription(3, (), owned=(("t",),))), r"owned\[0\]: expected a \(topic, partition\)"),
        (lambda: encode_subscription(WireSubscription(3, (), user_data="text")), "expected bytes"),
        (lambda: encode_subscription(WireSubscription(3, (), generation=True)), "expected an int32"),
        (lambda: encode_assignment(WireAssignment(0, (TP("t", -(2**31) - 1),))), "outside the int32 range"),
        (lambda: encode_sticky_user_data([TP("t", 0)], 2**31), "outside the int32 range"),
        (lambda: encode_sticky_user_data([TP("t", 0)], 1, version=2), "cannot write version 2"),
        (lambda: encode_cooperative_user_data(2**31), "outside the int32 range"),
        (lambda: encode("ConsumerProtocolSubscription", {"Topics": [], "Nope": 1}, 3), "Nope: unknown field"),
        (lambda: encode("ConsumerProtocolSubscription", {"Topics": None}, 3), "non-nullable"),
        (lambda: encode("ConsumerProtocolSubscription", {"Topics": []}, 4), "cannot write version 4"),
    ],
)
def test_unencodable_values_raise_encode_error(call, message):
    with pytest.raises(EncodeError, match=message):
        call()


def test_string_of_exactly_32767_bytes_is_written():
    data = encode_subscription(WireSubscription(0, ("x" * 32767,)))
    assert data[6:8] == b"\x7f\xff" and decode_subscription(data).topics == ("x" * 32767,)


_STRICT = parse_spec(
    {
        "name": "Strict",
        "validVersions": "0-1",
        "versionHeader": False,
        "fields": [
            {"name": "A", "type": "int16", "versions": "0+"},
            {"name": "B", "type": "int64", "versions": "1+", "default": "7"},
            {"name": "C", "type": "[]string", "versions": "0+", "nullableVersions": "1+"},
        ],
    }
)


def test_generic_codec_refuses_a_non_default_non_ignorable_field_at_a_version_lacking_it():
    assert encode(_STRICT, {"A": 1, "B": 7, "C": []}, 0) == h("00 01 | 00 00 00 00")
    with pytest.raises(EncodeError, match="B: cannot be written at version 0"):
        encode(_STRICT, {"A": 1, "B": 8, "C": []}, 0)


def test_generic_codec_nullable_versions_of_an_array():
    assert decode(_STRICT, h("00 01 | 00 00 00 00 00 00 00 02 | ff ff ff ff"), version=1).value == {"A": 1, "B": 2, "C": None}
    with pytest.raises(DecodeError, match="serialized as null"):
        decode(_STRICT, h("00 01 | ff ff ff ff"), version=0)
    with pytest.raises(EncodeError, match="non-nullable"):
        encode(_STRICT, {"A": 1, "C": None}, 0)


# ------------------------------------------------------------------------------------------
# decode errors: field path, byte offset, no other exception


def decode_error(fn, data) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        fn(data)
    return info.value


def test_truncated_owned_partition_names_the_nested_field_and_offset():
    # v1: header (0-1) | 0 topics (2-5) | user data null (6-9) | 3 owned entries (10-13);
    # entry 0 = "a" [0] at 14-24, entry 1 = "b" [0] at 25-35, entry 2 = "c" at 36-38 with count 1 at 39-42
    # and no partition after it: the missing element is OwnedPartitions[2].Partitions[0] at offset 43.
    data = h(
        "00 01 | 00 00 00 00 | ff ff ff ff | 00 00 00 03"
        "| 00 01 61 | 00 00 00 01 | 00 00 00 00"
        "| 00 01 62 | 00 00 00 01 | 00 00 00 00"
        "| 00 01 63 | 00 00 00 01"
    )
    err = decode_error(decode_subscription, data)
    assert (err.field, err.offset) == ("OwnedPartitions[2].Partitions[0]", 43)
    assert "OwnedPartitions[2].Partitions[0]" in str(err) and "byte offset 43" in str(err)


def test_truncated_int32_array_names_the_first_missing_element():
    # Assignment v0, entry ("t", 3 partitions) with 9 bytes left: elements 0 and 1 fit, element 2 starts at 21.
    data = h("00 00 | 00 00 00 01 | 00 01 74 | 00 00 00 03 | 00 00 00 00 | 00 00 00 01 | 00")
    err = decode_error(decode_assignment, data)
    assert (err.field, err.offset) == ("AssignedPartitions[0].Partitions[2]", 21)


def test_truncated_struct_array_is_named_before_reading_its_entries():
    # 2 entries need at least 2 x (2 + 4) = 12 bytes; 9 remain after the count at offset 2.
    err = decode_error(decode_assignment, h("00 00 | 00 00 00 02 | 00 01 74 | 00 00 00 00 | 00 01"))
    assert (err.field, err.offset) == ("AssignedPartitions", 2)
    # 14 bytes remain, enough for the bound; entry 0 = ("t", []) ends at 13, entry 1's topic claims 16 bytes, 5 remain.
    err = decode_error(decode_assignment, h("00 00 | 00 00 00 02 | 00 01 74 | 00 00 00 00 | 00 10 61 | 00 00 00 00"))
    assert (err.field, err.offset) == ("AssignedPartitions[1].Topic", 13)


def test_fewer_than_two_bytes_is_a_header_error():
    for data in (b"", b"\x00"):
        assert decode_error(decode_subscription, data).field == "Version"
        assert decode_error(decode_assignment, data).field == "Version"


def test_negative_version_fails():
    err = decode_error(decode_subscription, h("ff ff | 00 00 00 00 | ff ff ff ff"))
    assert "unsupported version -1" in str(err) and err.offset == 0


def test_null_topics_array_is_rejected():
    err = decode_error(decode_subscription, h("00 00 | ff ff ff ff | ff ff ff ff"))
    assert "serialized as null" in str(err) and (err.field, err.offset) == ("Topics", 2)


def test_null_topic_string_is_rejected():
    err = decode_error(decode_subscription, h("00 00 | 00 00 00 01 | ff ff | ff ff ff ff"))
    assert (err.field, err.offset) == ("Topics[0]", 6)


def test_any_negative_length_is_null_for_nullable_fields():
    # Kafka's generated readers test length < 0, not length == -1.
    assert decode_subscription(h("00 00 | 00 00 00 00 | ff ff ff fe")).user_data is None
    assert decode_subscription(h("00 03 | 00 00 00 00 | ff ff ff ff | 00 00 00 00 | 00 00 00 01 | 80 00")).rack is None


def test_empty_rack_decodes_as_none():
    assert decode_subscription(h("00 03 | 00 00 00 00 | ff ff ff ff | 00 00 00 00 | 00 00 00 01 | 00 00")).rack is None


def test_huge_array_count_fails_before_allocating():
    err = decode_error(decode_subscription, h("00 01 | 00 00 00 00 | ff ff ff ff | 7f ff ff ff"))
    assert (err.field, err.offset) == ("OwnedPartitions", 10) and "2147483647 elements" in str(err)


def test_huge_bytes_length_fails_before_allocating():
    err = decode_error(decode_assignment, h("00 00 | 00 00 00 00 | 7f ff ff ff | 00"))
    assert (err.field, err.offset) == ("UserData", 6)


def test_invalid_utf8_is_a_decode_error_at_the_bad_byte():
    err = decode_error(decode_subscription, h("00 00 | 00 00 00 01 | 00 03 61 ff 62 | ff ff ff ff"))
    assert (err.field, err.offset) == ("Topics[0]", 9) and "UTF-8" in str(err)


def test_decode_accepts_bytearray_and_memoryview_and_rejects_text():
    assert decode_subscription(bytearray(SUB_V0)) == decode_subscription(memoryview(SUB_V0)) == decode_subscription(SUB_V0)
    with pytest.raises(DecodeError, match="expected bytes"):
        decode_subscription(SUB_V0.hex())  # type: ignore[arg-type]


def test_sticky_user_data_falls_back_to_v0_and_fails_when_neither_decodes():
    assert decode_sticky_user_data(STICKY_V0).version == 0
    # Trailing bytes after V1 are ignored, as Schema.read does.
    assert decode_sticky_user_data(STICKY_V1 + b"\x99").generation == 5
    for garbage in (b"", b"\x00\x00", h("00 00 00 01 | 00 05 61")):
        err = decode_error(decode_sticky_user_data, garbage)
        assert "neither V1" in str(err) and err.offset is not None


def test_cooperative_user_data_needs_four_bytes_and_ignores_the_rest():
    for short in (b"", b"\x00", b"\x00\x00\x00"):
        err = decode_error(decode_cooperative_user_data, short)
        assert (err.field, err.offset) == ("Generation", 0)
    assert decode_cooperative_user_data(COOP_5 + b"\x01\x02") == 5


def test_decode_errors_belong_to_the_family():
    assert issubclass(DecodeError, StickyproofError) and issubclass(EncodeError, StickyproofError)


def test_sticky_user_data_cross_version():
    # A V1 buffer read by a V0-only reader (Kafka before KIP-341's generation): the trailing generation is ignored.
    assert decode("StickyAssignorUserData", STICKY_V1, version=0).value == {
        "PreviousAssignment": [{"Topic": "t", "Partitions": [0, 1]}],
        "Generation": -1,
    }
    # A V0 buffer read by today's reader: V1 underflows at the generation (offset 19), V0 succeeds.
    with pytest.raises(DecodeError) as info:
        decode("StickyAssignorUserData", STICKY_V0, version=1)
    assert (info.value.field, info.value.offset) == ("Generation", 19)
    assert decode_sticky_user_data(STICKY_V0) == StickyUserData(0, (TP("t", 0), TP("t", 1)), -1)
