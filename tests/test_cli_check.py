"""`stickyproof check` (and `grade --assignment`) on hand-made files: witnesses, modes, exit codes."""

from __future__ import annotations

import io
import json

import pytest

from stickyproof.cli import main

# a subscribes to x, b to x and y, c to y: a -> b -> c is the only way to relieve a.
CHAIN = {
    "format": "stickyproof.scenario/1",
    "name": "chain",
    "topics": {"x": 2, "y": 1},
    "members": [{"id": "a", "topics": ["x"]}, {"id": "b", "topics": ["x", "y"]}, {"id": "c", "topics": ["y"]}],
}
PILED = {"format": "stickyproof.assignment/1", "assignment": {"a": {"x": [0, 1]}, "b": {"y": [0]}, "c": {}}}


def files(tmp_path, scenario=CHAIN, assignment=PILED):
    s, a = tmp_path / "s.json", tmp_path / "a.json"
    s.write_text(json.dumps(scenario))
    a.write_text(json.dumps(assignment))
    return str(s), str(a)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_prints_the_improving_chain_and_exits_1(tmp_path, capsys):
    code, out, err = run(capsys, "check", *files(tmp_path))
    doc = json.loads(out)
    assert code == 1 and err == ""
    assert doc["valid"] is False and doc["balance"] == "global"
    assert doc["violations"] == [
        {
            "invariant": "imbalance",
            "witness": {
                "mode": "global",
                "from": "a",
                "from_load": 2,
                "to": "c",
                "to_load": 0,
                "chain": [{"partition": ["x", 0], "from": "a", "to": "b"}, {"partition": ["y", 0], "from": "b", "to": "c"}],
                "sum_squares": 5,
                "sum_squares_after": 3,
            },
        }
    ]


def test_check_in_kafka_mode_accepts_what_kafka_accepts(tmp_path, capsys):
    code, out, _ = run(capsys, "check", *files(tmp_path), "--balance", "kafka")
    assert code == 0 and json.loads(out)["valid"] is True


def test_check_reads_the_scenario_from_standard_input(tmp_path, capsys, monkeypatch):
    _, a = files(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(CHAIN).encode())))
    code, out, _ = run(capsys, "check", "-", a, "--balance", "kafka")
    assert code == 0 and json.loads(out)["balance"] == "kafka"


def test_check_reports_every_broken_invariant_in_order(tmp_path, capsys):
    bad = {"format": "stickyproof.assignment/1", "assignment": {"a": {"x": [0, 5], "y": [0]}, "b": {"x": [0]}, "c": {}}}
    code, out, _ = run(capsys, "check", *files(tmp_path, assignment=bad))
    names = [v["invariant"] for v in json.loads(out)["violations"]]
    assert code == 1
    assert names == ["unassigned", "duplicate", "unsubscribed", "nonexistent", "imbalance"]


def test_uniform_on_unequal_subscriptions_exits_2_with_one_line(tmp_path, capsys):
    code, out, err = run(capsys, "check", *files(tmp_path), "--balance", "uniform")
    assert code == 2 and out == "" and err.count("\n") == 1 and "balance" in err


def test_unknown_balance_mode_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", *files(tmp_path), "--balance", "even"])
    assert exc.value.code == 2


def test_missing_assignment_file_exits_2(tmp_path, capsys):
    s, _ = files(tmp_path)
    code, _, err = run(capsys, "check", s, str(tmp_path / "nope.json"))
    assert code == 2 and "nope.json" in err


def test_grade_of_a_given_assignment_is_held_to_kafkas_promise_and_reports_global_balance_as_quality(tmp_path, capsys):
    owned = dict(CHAIN, members=[dict(CHAIN["members"][0], owned={"x": [0, 1]}, generation=3)] + CHAIN["members"][1:])
    s, a = files(tmp_path, scenario=owned)
    # Kafka's promise on unequal subscriptions (R33) holds: no two holders of one topic differ by 2.
    # The improving chain a -x-> b -y-> c makes it globally unbalanced: a quality column, not a failure.
    code, out, _ = run(capsys, "grade", s, "--assignment", a)
    doc = json.loads(out)
    assert code == 0 and doc["valid"] and doc["contract"] == "kafka" and doc["contract_balanced"] is True
    assert doc["balanced"] == {"uniform": None, "global": False, "kafka": True, "per-topic": False, "pairwise": True}
    # a kept both x partitions: as many as any pairwise-balanced assignment (Kafka's notion, R30) keeps.
    assert (doc["kept"], doc["optimal_kept"], doc["proven"], doc["stickiness"]) == (2, 2, True, 1.0)
    assert doc["optimal_kept_global"] == 1  # a globally balanced one (loads 1, 1, 1) keeps one
    # Judged by global balance instead, the chain is the violation and stickiness is not measured.
    code, out, _ = run(capsys, "grade", s, "--assignment", a, "--balance", "global")
    doc = json.loads(out)
    assert code == 1 and [v["invariant"] for v in doc["violations"]] == ["imbalance"] and doc["stickiness"] is None
