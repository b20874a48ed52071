"""``stickyproof simulate``: the table, the JSON trace, exit codes, and bad input (exit 2, one line)."""

from __future__ import annotations

import json

import pytest

from stickyproof.cli import main


def run_cli(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_kip341_holds_with_generations_exit_0(capsys):
    code, out, err = run_cli(["simulate", "--scenario", "kip341-stale-rejoin"], capsys)
    assert code == 0 and not err
    assert "simulation kip341-stale-rejoin" in out and "all monitors hold" in out
    assert "c1 stalls 12 ticks" in out and "UNKNOWN_MEMBER_ID" in out


@pytest.mark.parametrize("extra", [["--without", "generation-in-user-data"], ["--assignor", "sticky@2.2"]])
def test_kip341_reproduces_kafka_7026_exit_1(extra, capsys):
    code, out, err = run_cli(["simulate", "--scenario", "kip341-stale-rejoin", *extra], capsys)
    assert code == 1
    assert "VIOLATION no-double-consumption" in out and "MONITOR FAILED" in out
    assert "no-double-consumption   │ FAILED" in out


def test_json_trace(capsys):
    code, out, _ = run_cli(["simulate", "--scenario", "kip341-stale-rejoin", "--json", "--without", "generation-in-user-data"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["format"] == "stickyproof.trace/1" and doc["ok"] is False
    assert doc["without"] == ["generation-in-user-data"]
    assert {m["monitor"] for m in doc["monitors"]} >= {"no-double-consumption", "generations-increase"}
    first = next(m for m in doc["monitors"] if m["monitor"] == "no-double-consumption")["first"]
    assert first["tick"] > 0 and "consumed by" in first["message"]
    step = doc["steps"][-1]
    assert {"tick", "events", "notes", "group", "members", "violations"} <= set(step)
    assert {"name", "member_id", "state", "generation", "owned", "consuming"} <= set(step["members"][0])
    assert doc["simulation"]["format"] == "stickyproof.simulation/1"


def test_events_file_and_scenario_file(tmp_path, capsys):
    scenario = {
        "format": "stickyproof.scenario/1", "name": "two", "protocol": "cooperative", "topics": {"t": 4},
        "members": [{"id": "a", "topics": ["t"], "assignors": ["cooperative-sticky"]},
                    {"id": "b", "topics": ["t"], "assignors": ["cooperative-sticky"]}],
    }
    events = {"format": "stickyproof.events/1", "config": {"session_timeout": 4},
              "events": [{"at": 6, "event": "join", "member": "c", "topics": ["t"]}, {"at": 20, "event": "failover"}]}
    (tmp_path / "s.json").write_text(json.dumps(scenario))
    (tmp_path / "e.json").write_text(json.dumps(events))
    code, out, err = run_cli(["simulate", "--scenario", str(tmp_path / "s.json"), "--events", str(tmp_path / "e.json"), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["config"]["session_timeout"] == 4
    assert sorted(m["name"] for m in doc["steps"][-1]["members"]) == ["a", "b", "c"]


def test_simulation_document_runs_with_its_switches(capsys):
    path = "tests/regressions/simulations/sticky-without-user-data-generation-stale-rejoin-double-consumption.json"
    code, out, _ = run_cli(["simulate", "--scenario", path, "--brief"], capsys)
    assert code == 1 and "switched off: generation-in-user-data" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "--scenario", "no-such-scenario"], "no bundled scenario"),
        (["simulate", "--scenario", "kip341-stale-rejoin", "--assignor", "nope"], "unknown assignor"),
        (["simulate", "--scenario", "kip341-stale-rejoin", "--events", "/nonexistent/events.json"], "cannot read"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and message in err and err.count("\n") == 1 and not out


def test_bad_event_names_its_path(tmp_path, capsys):
    (tmp_path / "e.json").write_text(json.dumps([{"at": 3, "event": "stall", "member": "c1"}]))
    code, _, err = run_cli(["simulate", "--scenario", "kip341-stale-rejoin", "--events", str(tmp_path / "e.json")], capsys)
    assert code == 2 and err.startswith("InvalidScenario: events[0].ticks:")


def test_unknown_feature_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--scenario", "kip341-stale-rejoin", "--without", "generations"])
    assert info.value.code == 2


def test_simulate_is_listed_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "simulate" in capsys.readouterr().out


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_the_table_fits_the_terminal_and_the_verdict_comes_first(columns, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", str(columns))  # what shutil.get_terminal_size reads first
    code, out, _ = run_cli(["simulate", "kip341-stale-rejoin", "--assignor", "sticky@2.2"], capsys)
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("MONITOR FAILED: ") and "no-double-consumption" in lines[0]
    assert max(len(line) for line in lines) <= columns
    assert all(line.rstrip().endswith("│") for line in lines if line.startswith("│"))  # no member cropped
    assert out.index("monitors") < out.index("simulation kip341-stale-rejoin")  # the verdicts before the trace


def test_a_piped_simulate_renders_at_160_columns(monkeypatch, capsys):
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out, _ = run_cli(["simulate", "kip341-stale-rejoin"], capsys)
    assert code == 0 and out.splitlines()[0].startswith("all monitors hold; ended: settled")
    assert max(len(line) for line in out.splitlines()) <= 160


def test_protocol_reruns_a_bundled_scenario_cooperatively(capsys):
    code, out, _ = run_cli(["simulate", "kip341-stale-rejoin", "--assignor", "cooperative-sticky",
                            "--protocol", "cooperative", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["ok"]
    assert {s["group"]["protocol"] for s in doc["steps"] if s["group"]["protocol"]} == {"cooperative-sticky"}
    assert any(m["protocol"] == "cooperative" for s in doc["steps"] for m in s["members"])
    code, out, _ = run_cli(["simulate", "kip341-stale-rejoin", "--assignor", "cooperative-sticky", "--json"], capsys)
    assert code == 0 and not any(m["protocol"] == "cooperative" for s in json.loads(out)["steps"] for m in s["members"])


def test_protocol_cooperative_with_the_scenarios_eager_assignors_names_the_flag(capsys):
    code, out, err = run_cli(["simulate", "kip341-stale-rejoin", "--protocol", "cooperative"], capsys)
    assert code == 2 and not out and err.startswith("InvalidOption: --protocol: cooperative: c1's assignor sticky")


def test_an_exec_assignors_hello_name_is_in_the_verdict(monkeypatch, capsys):
    import shlex
    import sys
    from pathlib import Path

    child = str(Path(__file__).with_name("peer_children.py"))
    name = "exec:" + shlex.join([sys.executable, child, "good"])
    monkeypatch.setenv("COLUMNS", "1000")  # the command line is long: the verdict on one line
    code, out, _ = run_cli(["simulate", "kip429-new-member", "--assignor", name], capsys)
    # the child deals round robin, unaware of cooperative hand-overs: a monitor may fail (exit 1)
    assert code in (0, 1) and out.splitlines()[0].endswith(f"; assignor {name} (test-child)")
