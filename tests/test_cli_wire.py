"""`stickyproof decode` / `stickyproof encode`: JSON shapes, hex forms, and exit 2 with one stderr line on bad input."""

from __future__ import annotations

import io
import json

import pytest

from stickyproof.cli import main
from stickyproof.errors import DecodeError
from stickyproof.wire.cli_json import parse_hex

# §5.1 example v3: topics [foo, bar], user data null, owned foo-0, generation 1, rack r1.
SUB_V3_HEX = (
    "0003 00000002 0003626172 0003666f6f ffffffff"
    " 00000001 0003666f6f 00000001 00000000 00000001 00027231"
)
# §5.2 example v3: [foo-0, foo-1, bar-2], user data null.
ASG_V3_HEX = "0003 00000002 0003666f6f 00000002 00000000 00000001 0003626172 00000001 00000002 ffffffff"
# §5.3 example V1: [t-0, t-1], generation 5.
STICKY_V1_HEX = "00000001 000174 00000002 00000000 00000001 00000005"


def run(capsys, *argv: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def decoded(capsys, kind: str, hex_text: str) -> dict:
    code, out, err = run(capsys, "decode", kind, hex_text)
    assert (code, err) == (0, "")
    return json.loads(out)


def test_decode_subscription(capsys):
    assert decoded(capsys, "subscription", SUB_V3_HEX) == {
        "version": 3,
        "topics": ["bar", "foo"],
        "user_data": None,
        "owned": {"foo": [0]},
        "generation": 1,
        "rack": "r1",
    }


def test_decode_subscription_v0_shows_defaults_for_missing_fields(capsys):
    assert decoded(capsys, "subscription", "0000 00000001 000174 00000002 abcd") == {
        "version": 0,
        "topics": ["t"],
        "user_data": "abcd",
        "owned": {},
        "generation": -1,
        "rack": None,
    }


def test_decode_assignment(capsys):
    assert decoded(capsys, "assignment", ASG_V3_HEX) == {"version": 3, "assigned": {"foo": [0, 1], "bar": [2]}, "user_data": None}


def test_decode_sticky_user_data(capsys):
    assert decoded(capsys, "sticky-user-data", STICKY_V1_HEX) == {"version": 1, "previous_assignment": {"t": [0, 1]}, "generation": 5}
    assert decoded(capsys, "sticky-user-data", STICKY_V1_HEX[:-9]) == {"version": 0, "previous_assignment": {"t": [0, 1]}, "generation": -1}


def test_decode_cooperative_user_data(capsys):
    assert decoded(capsys, "cooperative-user-data", "00000005") == {"generation": 5}


@pytest.mark.parametrize("form", ["0x{h}", "{h_colons}", "{h_upper}", "  {h}  "])
def test_hex_forms(capsys, form):
    h = SUB_V3_HEX.replace(" ", "")
    text = form.format(h=h, h_colons=":".join(h[i : i + 2] for i in range(0, len(h), 2)), h_upper=h.upper())
    assert decoded(capsys, "subscription", text)["rack"] == "r1"


def test_hex_as_several_arguments_and_from_stdin(capsys, monkeypatch):
    code, out, _ = run(capsys, "decode", "cooperative-user-data", "00", "00", "00", "07")
    assert code == 0 and json.loads(out) == {"generation": 7}
    code, out, _ = run(capsys, "decode", "cooperative-user-data", "-", stdin="00 00 00 08\n", monkeypatch=monkeypatch)
    assert code == 0 and json.loads(out) == {"generation": 8}


def test_bad_hex_exits_2_naming_the_character(capsys):
    code, out, err = run(capsys, "decode", "assignment", "00 0g")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("DecodeError:") and "'g' at character 5" in err


def test_odd_hex_exits_2(capsys):
    code, _, err = run(capsys, "decode", "assignment", "000")
    assert code == 2 and "odd number of hex digits" in err


def test_truncated_bytes_exit_2_naming_field_and_offset(capsys):
    # Drop "r1": the rack's length prefix starts at 2 + 4 + 5 + 5 + 4 + 4 + 5 + 4 + 4 + 4 = 41.
    code, out, err = run(capsys, "decode", "subscription", SUB_V3_HEX[:-4])
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "field RackId" in err and "byte offset 41" in err


def test_truncated_nested_partition_names_the_element(capsys):
    code, _, err = run(capsys, "decode", "subscription", "0001 00000000 ffffffff 00000001 000161 00000002 00000000")
    assert code == 2 and "field OwnedPartitions[0].Partitions[1]" in err and "byte offset 25" in err


def encoded(capsys, kind: str, doc, *extra: str, monkeypatch) -> str:
    code, out, err = run(capsys, "encode", kind, *extra, "-", stdin=json.dumps(doc), monkeypatch=monkeypatch)
    assert (code, err) == (0, "")
    return out.strip()


def test_encode_subscription_orders_as_kafka(capsys, monkeypatch):
    doc = {"topics": ["foo", "bar"], "owned": {"foo": [0]}, "generation": 1, "rack": "r1"}
    assert encoded(capsys, "subscription", doc, monkeypatch=monkeypatch) == SUB_V3_HEX.replace(" ", "")


def test_encode_version_flag_overrides_the_document(capsys, monkeypatch):
    doc = {"version": 3, "topics": ["foo", "bar"], "owned": {"foo": [0]}, "generation": 1, "rack": "r1"}
    # §5.1 example v0: the v3 fields are dropped and the header says 0.
    v0 = "0000 00000002 0003626172 0003666f6f ffffffff".replace(" ", "")
    assert encoded(capsys, "subscription", doc, "--version", "0", monkeypatch=monkeypatch) == v0


def test_encode_assignment_sticky_cooperative(capsys, monkeypatch):
    assert encoded(capsys, "assignment", {"assigned": {"foo": [0, 1], "bar": [2]}}, monkeypatch=monkeypatch) == ASG_V3_HEX.replace(" ", "")
    assert encoded(capsys, "sticky-user-data", {"previous_assignment": {"t": [0, 1]}, "generation": 5}, monkeypatch=monkeypatch) == STICKY_V1_HEX.replace(" ", "")
    assert encoded(capsys, "cooperative-user-data", {"generation": -1}, monkeypatch=monkeypatch) == "ffffffff"


def test_decode_output_encodes_back_to_the_same_bytes(capsys, monkeypatch):
    for kind, hex_text in (("subscription", SUB_V3_HEX), ("assignment", ASG_V3_HEX), ("sticky-user-data", STICKY_V1_HEX)):
        doc = decoded(capsys, kind, hex_text)
        assert encoded(capsys, kind, doc, monkeypatch=monkeypatch) == hex_text.replace(" ", "")


@pytest.mark.parametrize(
    "kind, doc, message",
    [
        ("subscription", {"topics": [1]}, "topics[0]: expected a string, got integer"),
        ("subscription", {"topics": "foo"}, "topics: expected an array"),
        ("subscription", {"topics": [], "owned": {"t": ["0"]}}, "owned.t[0]: expected a partition number, got string"),
        ("subscription", {"topics": [], "owned": []}, "owned: expected an object"),
        ("subscription", {"topics": [], "generation": True}, "generation: expected an integer, got boolean"),
        ("subscription", {"topics": [], "user_data": "zz"}, "user_data: user_data: invalid hex character 'z'"),
        ("subscription", {"topics": [], "rack": 3}, "rack: expected a string or null"),
        ("subscription", {"topics": [], "extra": 1}, "extra: unknown field"),
        ("subscription", {}, "topics: required field is missing"),
        ("subscription", [], "expected a JSON object, got array"),
        ("assignment", {"assigned": {"t": [2**31]}}, "outside the int32 range"),
        ("sticky-user-data", {"previous_assignment": {}, "version": 2}, "version: sticky-user-data has versions 0-1; got 2"),
        ("subscription", {"topics": [], "version": 4}, "version: subscription has versions 0-3; got 4"),
        ("cooperative-user-data", {"generation": "5"}, "generation: expected an integer, got string"),
    ],
)
def test_encode_bad_input_exits_2_naming_the_field(capsys, monkeypatch, kind, doc, message):
    code, out, err = run(capsys, "encode", kind, "-", stdin=json.dumps(doc), monkeypatch=monkeypatch)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err


def test_encode_bad_json_exits_2(capsys, monkeypatch):
    code, out, err = run(capsys, "encode", "assignment", "-", stdin='{"assigned": ', monkeypatch=monkeypatch)
    assert (code, out) == (2, "") and err.startswith("InvalidScenario:") and "not valid JSON" in err


def test_encode_missing_file_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "encode", "assignment", str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read" in err


def test_unknown_message_kind_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["decode", "metadata", "00"])
    assert info.value.code == 2


def test_parse_hex_prefix_only_at_the_start():
    assert parse_hex(" 0x0a:0B ") == b"\x0a\x0b"
    with pytest.raises(DecodeError, match="character 4"):
        parse_hex("000x")
