"""``stickyproof assign`` on a consumer-group (KIP-848) scenario: the coordinator's assignor, no leader."""

from __future__ import annotations

import json

import pytest

from stickyproof.assignors.registry import BUILTIN_NAMES, list_assignors, list_consumer_group_assignors
from stickyproof.cli import main
from stickyproof.lookup import get_assignor

GROUP = {
    "format": "stickyproof.scenario/1",
    "group_protocol": "consumer",
    "topics": {"a": 7, "b": 3},
    "members": [
        {"id": "m0", "topics": ["a", "b"], "owned": {"a": [0, 1, 2, 3]}},
        {"id": "m1", "topics": ["a", "b"]},
        {"id": "m2", "topics": ["a"]},
    ],
}


def _assign(tmp_path, capsys, *flags):
    f = tmp_path / "group.json"
    f.write_text(json.dumps(GROUP))
    code = main(["assign", str(f), *flags])
    out, err = capsys.readouterr()
    return code, (json.loads(out)["assignment"] if code == 0 else err)


def test_a_consumer_group_gets_uniform_by_default(tmp_path, capsys):
    # Heterogeneous: m0 keeps its four partitions of a; topic a (7/3 per subscriber) is served
    # before b (3/2), then the balancing loop evens the totals out (worked out against Kafka's jar).
    assert _assign(tmp_path, capsys) == (0, {"m0": {"a": [0, 1, 2, 3]}, "m1": {"b": [0, 1, 2]}, "m2": {"a": [4, 5, 6]}})
    assert _assign(tmp_path, capsys, "--assignor", "uniform")[1] == _assign(tmp_path, capsys)[1]


def test_consumer_range_ignores_the_current_target(tmp_path, capsys):
    code, got = _assign(tmp_path, capsys, "--assignor", "consumer-range")
    assert code == 0 and got == {"m0": {"a": [0, 1, 2], "b": [0, 1]}, "m1": {"a": [3, 4], "b": [2]}, "m2": {"a": [5, 6]}}


def test_a_classic_assignor_on_a_consumer_group_is_one_line_and_exit_2(tmp_path, capsys):
    code, err = _assign(tmp_path, capsys, "--assignor", "sticky")
    assert code == 2 and err.count("\n") == 1 and "classic (leader-side) assignor" in err


def test_a_server_side_assignor_on_a_classic_group_is_one_line_and_exit_2(tmp_path, capsys):
    f = tmp_path / "classic.json"
    f.write_text(json.dumps({"format": "stickyproof.scenario/1", "topics": {"a": 2}, "members": [{"id": "c", "topics": ["a"]}]}))
    assert main(["assign", str(f), "--assignor", "uniform"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "server-side (KIP-848)" in err


@pytest.mark.parametrize("name", ["uniform", "uniform@4.0.0", "uniform@3.9.1", "consumer-range"])
def test_server_side_rows_are_found_by_name_but_not_listed_with_the_classic_ones(name):
    info = get_assignor(name)
    assert info.consumer_group is not None and info.protocols == ()
    assert name not in BUILTIN_NAMES and info not in list_assignors() and info in list_consumer_group_assignors()


@pytest.mark.parametrize("name", ["sticky", "range"])
def test_grade_refuses_a_classic_assignor_on_a_consumer_group_in_one_line(name, tmp_path, capsys):
    # A consumer group has no leader: a classic rebalance of it must not be graded as if it were one
    # (the server-side assignors are graded: tests/test_consumer_grading.py).
    f = tmp_path / "group.json"
    f.write_text(json.dumps(GROUP))
    assert main(["grade", str(f), "--assignor", name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "group_protocol" in err


def test_sweeps_skip_consumer_groups_with_classic_assignors_and_server_side_assignors_on_classic_groups():
    from stickyproof.grading import unsupported_reason
    from stickyproof.model import scenario_from_dict

    consumer = scenario_from_dict(GROUP)
    classic = scenario_from_dict({"format": "stickyproof.scenario/1", "topics": {"a": 2}, "members": [{"id": "c", "topics": ["a"]}]})
    assert "KIP-848" in unsupported_reason(consumer, get_assignor("range"))
    assert "server-side" in unsupported_reason(classic, get_assignor("uniform"))
    assert unsupported_reason(classic, get_assignor("range")) is None
