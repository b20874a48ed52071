"""``stickyproof solve``: the assignment document plus status, proven, kept, bound, seconds."""

from __future__ import annotations

import json

import pytest

from stickyproof.cli import main

GROUP = {
    "format": "stickyproof.scenario/1",
    "topics": {"t": 4, "u": 2},
    "members": [
        {"id": "a", "topics": ["t", "u"], "owned": {"t": [0, 1, 2]}, "generation": 3},
        {"id": "b", "topics": ["t"], "owned": {"t": [2]}, "generation": 2},
        {"id": "c", "topics": ["u"]},
    ],
}


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(GROUP))
    return str(path)


def run(capsys, *argv):
    code = main(["solve", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("engine", ["cpsat", "flow"])
def test_solve_prints_the_assignment_document_with_the_solve_record(capsys, scenario_file, engine):
    code, out, err = run(capsys, scenario_file, "--engine", engine)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["format"] == "stickyproof.assignment/1"
    assert set(doc["assignment"]) == {"a", "b", "c"}
    assert doc["status"] == "OPTIMAL" and doc["proven"] is True
    assert doc["kept"] == 2 and doc["bound"] == 2 and doc["seconds"] >= 0
    assert doc["objective"]["sum_squares"] == 12


def test_solve_both_reports_both_engines_and_their_agreement(capsys, scenario_file):
    code, out, _ = run(capsys, scenario_file, "--engine", "both")
    doc = json.loads(out)
    assert code == 0 and doc["agree"] is True
    assert doc["engines"]["cpsat"]["objective"] == doc["engines"]["flow"]["objective"]


def test_solve_both_exits_1_when_proven_engines_disagree(capsys, scenario_file, monkeypatch):
    from dataclasses import replace

    from stickyproof.oracle import flow

    real = flow.solve_flow

    def wrong(*args, **kwargs):
        r = real(*args, **kwargs)
        return replace(r, objective=replace(r.objective, kept=r.objective.kept - 1))

    monkeypatch.setattr(flow, "solve_flow", wrong)
    code, out, _ = run(capsys, scenario_file, "--engine", "both")
    assert code == 1 and json.loads(out)["agree"] is False


def test_solve_uniform_infeasible_is_a_result_not_an_error(capsys, tmp_path):
    doc = dict(GROUP, topics={"t": 5, "u": 1}, members=[{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}, {"id": "c", "topics": ["u"]}])
    path = tmp_path / "u.json"
    path.write_text(json.dumps(doc))
    code, out, _ = run(capsys, str(path), "--balance", "uniform", "--engine", "flow")
    assert code == 0 and json.loads(out)["status"] == "INFEASIBLE"


def test_solve_reads_standard_input_and_bundled_names(capsys, monkeypatch, scenario_file):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(GROUP).encode())))
    code, out, _ = run(capsys, "-", "--engine", "flow")
    assert code == 0 and json.loads(out)["kept"] == 2
    code, out, _ = run(capsys, "kip341-stale-rejoin", "--engine", "flow")
    assert code == 0 and json.loads(out)["proven"] is True


def test_solve_view_optimises_over_what_the_leader_decodes(capsys, tmp_path):
    # A v0 member's claims are invisible to the cooperative-sticky leader (R2): over the stated
    # claims a keeps both partitions, over the decoded view nothing is retainable.
    doc = {
        "format": "stickyproof.scenario/1",
        "protocol": "cooperative",
        "topics": {"t": 2},
        "members": [
            {"id": "a", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 4, "version": 0,
             "assignors": ["cooperative-sticky"]},
            {"id": "b", "topics": ["t"], "assignors": ["cooperative-sticky"]},
        ],
    }
    path = tmp_path / "v.json"
    path.write_text(json.dumps(doc))
    code, out, _ = run(capsys, str(path), "--engine", "flow")
    assert code == 0 and json.loads(out)["kept"] == 1
    code, out, _ = run(capsys, str(path), "--engine", "flow", "--view", "cooperative-sticky")
    assert code == 0 and json.loads(out)["kept"] == 0


def test_solve_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "stickyproof.scenario/1", "topics": {"t": -1}, "members": []}')
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == "" and err.count("\n") == 1 and "topics.t" in err
    code, _, err = run(capsys, "no-such-scenario")
    assert code == 2 and "no such file" in err


def test_solve_balance_kafka_is_r33s_own_optimum(capsys, tmp_path):
    # a holds every partition and b joins: R33 lets a keep all four (b holds nothing, so no pair of
    # holders differs by 2), where global balance splits 2/2 and keeps two (T10).
    path = tmp_path / "r33.json"
    path.write_text(json.dumps({"format": "stickyproof.scenario/1", "topics": {"t": 4}, "members": [
        {"id": "a", "topics": ["t"], "owned": {"t": [0, 1, 2, 3]}, "generation": 1}, {"id": "b", "topics": ["t"]}]}))
    code, out, _ = run(capsys, str(path), "--balance", "kafka")
    doc = json.loads(out)
    assert code == 0 and doc["proven"] and doc["kept"] == 4 and doc["engine"] == "cpsat-r33"
    code, out, _ = run(capsys, str(path), "--balance", "global")
    assert json.loads(out)["kept"] == 2


def test_solve_balance_kafka_with_the_flow_is_refused_in_one_line(capsys, scenario_file):
    code, out, err = run(capsys, scenario_file, "--balance", "kafka", "--engine", "flow")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "engine" in err


def test_solve_kafka_racks_ranks_alignment_above_kept(capsys, tmp_path):
    path = tmp_path / "racks.json"
    path.write_text(json.dumps({"format": "stickyproof.scenario/1",
                                "topics": {"t": {"partitions": 2, "racks": [["r0"], ["r1"]]}}, "members": [
        {"id": "a", "topics": ["t"], "owned": {"t": [0]}, "generation": 1, "rack": "r1"},
        {"id": "b", "topics": ["t"], "owned": {"t": [1]}, "generation": 1, "rack": "r0"}]}))
    code, out, _ = run(capsys, str(path), "--kafka-racks", "--engine", "both")
    doc = json.loads(out)
    assert code == 0 and doc["agree"] is True and doc["kept"] == 0 and doc["objective"]["rack_local"] == 2
    code, out, _ = run(capsys, str(path), "--racks")
    assert json.loads(out)["kept"] == 2
