"""``stickyproof simulate`` on a consumer group (KIP-848): the release and assignor flags, the exit
codes, the JSON trace, and bad input (exit 2, one line naming the field or flag)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stickyproof.cli import main

FOLDER = Path(__file__).parent / "regressions" / "consumer-simulations"
KAFKA_16147 = str(FOLDER / "coordinator-3.7-kafka-16147-revoked-partition-given-back-loses-its-epoch.json")
GROUP = {"format": "stickyproof.scenario/1", "group_protocol": "consumer", "topics": {"t": 2},
         "members": [{"id": "A", "topics": ["t"], "owned": {"t": [0, 1]}}]}


def run_cli(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_todays_coordinator_holds_exit_0(capsys):
    code, out, err = run_cli(["simulate", KAFKA_16147], capsys)
    assert code == 0 and not err
    assert out.startswith("all monitors hold; ended: settled at tick 7; coordinator current; assignor uniform")


def test_kafka_16147_on_3_7_exit_1(capsys):
    code, out, _ = run_cli(["simulate", KAFKA_16147, "--coordinator", "3.7"], capsys)
    assert code == 1
    assert "MONITOR FAILED: no-double-ownership, assign-only-released" in out
    assert "VIOLATION no-double-ownership: t-1 owned by A and D" in out


def test_json_trace(capsys):
    code, out, _ = run_cli(["simulate", KAFKA_16147, "--coordinator", "3.7", "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["format"] == "stickyproof.consumer-trace/1" and doc["coordinator"] == "3.7"
    assert [m["monitor"] for m in doc["monitors"] if not m["ok"]] == ["no-double-ownership", "assign-only-released"]
    d = next(m for m in doc["steps"][-1]["members"] if m["name"] == "D")
    assert d["owned"] == {"t": [1]} and d["state"] == "STABLE"


def test_scenario_file_with_an_events_file_and_consumer_range(tmp_path, capsys):
    scenario, events = tmp_path / "g.json", tmp_path / "e.json"
    scenario.write_text(json.dumps(GROUP))
    events.write_text(json.dumps([{"at": 1, "event": "join", "member": "B", "topics": ["t"]}]))
    code, out, err = run_cli(["simulate", str(scenario), "--events", str(events), "--assignor", "consumer-range",
                              "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and not err and doc["assignor"] == "consumer-range"
    owned = {m["name"]: m["owned"] for m in doc["steps"][-1]["members"]}
    assert owned == {"A": {"t": [0]}, "B": {"t": [1]}}


def test_standard_input(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(GROUP).encode())))
    code, out, _ = run_cli(["simulate", "-", "--brief"], capsys)
    assert code == 0 and "all monitors hold" in out


def _doc(tmp_path, events, **extra) -> str:
    path = tmp_path / "sim.json"
    path.write_text(json.dumps({"format": "stickyproof.simulation/1", "scenario": GROUP, "events": events, **extra}))
    return str(path)


@pytest.mark.parametrize("events, field", [
    ([{"at": 1, "event": "upgrade", "member": "A"}], "events[0].event: 'upgrade' is a classic-protocol event"),
    ([{"at": 1, "event": "heartbeat-loss", "member": "A", "ticks": 2, "direction": "sideways"}], "events[0].direction"),
    ([{"at": 1, "event": "slow-revocation", "member": "A"}], "events[0].ticks: a slow-revocation event needs it"),
    ([{"at": 1, "event": "join", "member": "B", "topics": ["t"], "assignors": ["range"]}], "events[0].assignors"),
    ([{"at": 1, "event": "stall", "member": "Z", "ticks": 2}], "events[0].member: Z is not a member of the group"),
    ([{"at": 900, "event": "leave", "member": "A"}], "events[0].at"),
])
def test_bad_events_exit_2_naming_the_field(tmp_path, capsys, events, field):
    code, out, err = run_cli(["simulate", _doc(tmp_path, events)], capsys)
    assert code == 2 and not out and field in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, flag", [
    (["--coordinator", "3.8"], "--coordinator: unknown coordinator release '3.8'"),
    (["--assignor", "sticky"], "--assignor: sticky is not a server-side (KIP-848) assignor"),
    (["--without", "cooperative-validation"], "--without: a classic-protocol switch"),
])
def test_bad_flags_exit_2_naming_the_flag(tmp_path, capsys, argv, flag):
    code, out, err = run_cli(["simulate", _doc(tmp_path, []), *argv], capsys)
    assert code == 2 and not out and flag in err and len(err.strip().splitlines()) == 1


def test_document_fields_are_named_when_bad(tmp_path, capsys):
    code, _, err = run_cli(["simulate", _doc(tmp_path, [], coordinator="2.0")], capsys)
    assert code == 2 and err.startswith("InvalidOption: coordinator: unknown coordinator release '2.0'")


def test_coordinator_flag_on_a_classic_group_exit_2(capsys):
    code, _, err = run_cli(["simulate", "kip341-stale-rejoin", "--coordinator", "current"], capsys)
    assert code == 2 and "--coordinator: applies to consumer groups" in err
