"""``stickyproof prove``: verdicts against proofs/README.md, and weakened models that must fail.

A proof that cannot fail proves nothing: every test here weakens (or fixes) one switch of a model
and checks that the statement it should break stops having its promised verdict, for the reason
the model gives (the lemma that stops being inductive, the missing counterexample).
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import time
from pathlib import Path

import pytest

from stickyproof.prove import load_proofs, prove, read_promises, statement_names
from stickyproof.prove_cli import add_parser, render_table

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


@pytest.fixture(scope="module")
def proofs():
    return load_proofs(PROOFS)


def _module(name: str):
    load_proofs(PROOFS)
    return importlib.import_module(f"stickyproof_proofs.{name}")


def _one(name: str):
    report = prove([name], path=PROOFS)
    assert len(report.records) == 1
    return report.records[0]


def _not_inductive(record) -> set[tuple[str, str]]:
    return {(f["action"], f["lemma"]) for f in record.detail.get("not_inductive", [])}


# ------------------------------------------------------------------------------------------
# the README's table


def test_every_statement_has_a_promise_and_every_promise_a_statement(proofs):
    promises = read_promises(PROOFS)
    names = [s.name for s in proofs.statements()]
    assert sorted(promises) == sorted(names)
    assert len(set(names)) == len(names)


def test_counterexample_promises_carry_their_length():
    promises = read_promises(PROOFS)
    for name, promise in promises.items():
        if promise.verdict == "counterexample":
            assert promise.length is not None, name


def test_quick_run_leaves_out_the_deep_statements(proofs):
    quick = statement_names(PROOFS)
    deep = statement_names(PROOFS, deep=True)
    assert set(quick) < set(deep)
    assert all(not s.deep_only for s in proofs.statements() if s.name in quick)


# ------------------------------------------------------------------------------------------
# the theorems hold, and each fails when its safeguard is weakened


def test_eager_theorem_is_proved_for_every_size():
    r = _one("protocol.eager.safe")
    assert r.ok and r.verdict == "proved" and r.bound.startswith("all group sizes")


def test_eager_theorem_fails_when_the_assignor_trusts_every_claim(monkeypatch):
    stmts = _module("protocol.statements")
    monkeypatch.setitem(stmts.VARIANTS, "eager", stmts.VARIANTS["eager"].but(trust="all"))
    r = _one("protocol.eager.safe")
    assert not r.ok and r.verdict == "unknown"
    assert ("Commit", "assignment-unique") in _not_inductive(r)


def test_eager_theorem_fails_after_a_stateless_failover_with_top_generation_trust(monkeypatch):
    stmts = _module("protocol.statements")
    monkeypatch.setitem(stmts.VARIANTS, "eager", stmts.VARIANTS["eager"].but(failover="lost"))
    r = _one("protocol.eager.safe")
    assert not r.ok
    assert ("Commit", "assignment-unique") in _not_inductive(r)


def test_cooperative_theorem_fails_with_one_round(monkeypatch):
    stmts = _module("protocol.statements")
    monkeypatch.setitem(stmts.VARIANTS, "cooperative", stmts.VARIANTS["cooperative"].but(rounds=1))
    r = _one("protocol.cooperative.safe")
    assert not r.ok
    assert ("Commit", "assignment-respects-owners") in _not_inductive(r)


def test_cooperative_theorem_fails_with_the_reset_bug(monkeypatch):
    stmts = _module("protocol.statements")
    monkeypatch.setitem(stmts.VARIANTS, "cooperative", stmts.VARIANTS["cooperative"].but(reset_bug=True))
    r = _one("protocol.cooperative.safe")
    assert not r.ok
    assert ("ResumeExpelled", "owner-has-id") in _not_inductive(r)


def test_unique_generation_failover_theorem_fails_with_top_generation_trust(monkeypatch):
    stmts = _module("protocol.statements")
    monkeypatch.setitem(stmts.VARIANTS, "failover-unique", stmts.VARIANTS["failover-unique"].but(trust="top"))
    r = _one("protocol.failover.unique-generation")
    assert not r.ok and ("Commit", "assignment-unique") in _not_inductive(r)


def test_without_the_contract_no_safety_theorem_holds(monkeypatch):
    model = _module("protocol.model")
    monkeypatch.setattr(model.ProtocolModel, "contract", lambda self, v, s, a: True)
    for name in ("protocol.eager.safe", "protocol.cooperative.safe", "protocol.failover.unique-generation"):
        r = _one(name)
        assert not r.ok, name


# ------------------------------------------------------------------------------------------
# the historical bugs are found, and a fixed model stops finding them


@pytest.mark.parametrize("name", ["protocol.eager.kafka-7026", "protocol.cooperative.kafka-12983"])
def test_historical_counterexample_has_its_promised_length(name):
    r = _one(name)
    assert r.ok and r.verdict == "counterexample"
    assert r.length == read_promises(PROOFS)[name].length == len(r.detail["steps"])


@pytest.mark.parametrize(
    "name, key, change",
    [
        ("protocol.eager.kafka-7026", "kafka-7026", {"trust": "top"}),
        ("protocol.cooperative.one-round", "one-round", {"rounds": 2}),
        ("protocol.cooperative.kafka-12983", "kafka-12983", {"reset_bug": False}),
        ("protocol.cooperative.kafka-12984", "kafka-12984", {"reset_bug": False}),
        ("protocol.failover.top-generation", "failover-top", {"trust": "unique"}),
    ],
)
def test_a_fixed_model_stops_finding_the_bug(monkeypatch, name, key, change):
    stmts = _module("protocol.statements")
    monkeypatch.setitem(stmts.VARIANTS, key, stmts.VARIANTS[key].but(**change))
    r = _one(name)
    assert not r.ok and r.verdict == "unknown"


def test_kafka_7026_breaks_the_eager_proof_at_the_duplicate_assignment():
    r = _one("protocol.eager.kafka-7026")
    assert ("Commit", "assignment-unique") in _not_inductive(r)


# ------------------------------------------------------------------------------------------
# constrained path and optimisation model


def test_quota_loop_fails_without_the_over_min_cap(monkeypatch):
    stmts = _module("constrained.statements")
    quota = _module("constrained.quota")
    monkeypatch.setattr(stmts, "prove_quota_loop", lambda: quota.prove_quota_loop(cap_over_min=False))
    r = _one("constrained.quota-loop")
    assert not r.ok and "phase 1: step" in r.detail["failures"]


def test_resolution_theorem_fails_with_the_3_5_1_rule(monkeypatch):
    stmts = _module("constrained.statements")
    res = _module("constrained.resolution")
    monkeypatch.setattr(stmts, "prove_resolution", lambda rule="current": res.prove_resolution("3.5.1"))
    r = _one("constrained.resolution")
    assert not r.ok and "step: only-the-owner-keeps" in r.detail["failures"]


def test_resolution_counterexample_disappears_with_the_fix(monkeypatch):
    stmts = _module("constrained.statements")
    res = _module("constrained.resolution")
    monkeypatch.setattr(stmts, "find_resolution_counterexample",
                        lambda rule="3.5.1", max_members=4: res.find_resolution_counterexample("current", max_members))
    r = _one("constrained.resolution-3.5.1")
    assert not r.ok and r.verdict == "unknown"


def test_flow_certificates_are_satisfiable_so_the_exactness_query_is_not_vacuous():
    import z3

    flows = _module("optimal.flows")
    inst = flows._Instance(2, 2, 2, ((True, True), (True, False)), (2, 1))
    a, cost_a, _, _ = flows._per_partition(inst, "pp.", 1, 3)
    b, cost_b, _ = flows._aggregated(inst, "ag.", 1, 3)
    s = z3.Solver()
    s.add(*inst.well_formed(), *a, *b)
    assert s.check() == z3.sat  # certified optima exist, and (the statement) never disagree


def test_flow_exactness_fails_when_the_aggregated_flow_ignores_claims(monkeypatch):
    flows = _module("optimal.flows")
    original = flows._aggregated
    monkeypatch.setattr(flows, "_aggregated", lambda inst, tag, w_K, w_B: original(inst, tag, 0, w_B))
    assert flows.prove_flow_exactness(2, 1, 2).answer == "sat"


def test_windows_are_tight_two_optima_can_differ_by_one(monkeypatch):
    import z3

    flows = _module("optimal.flows")
    inst = flows._Instance(2, 1, 1, ((True,), (True,)), (1,))
    first, _, l1 = flows._aggregated(inst, "one.", 0, 1)
    second, _, l2 = flows._aggregated(inst, "two.", 0, 1)
    s = z3.Solver()
    s.add(*inst.well_formed(), *first, *second, l1[0] != l2[0])
    assert s.check() == z3.sat  # one partition, two subscribers: loads (1, 0) or (0, 1)


# ------------------------------------------------------------------------------------------
# the command


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="stickyproof")
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["prove", *argv])
    return args.func(args)


def test_cli_exits_0_when_every_verdict_is_as_promised(capsys):
    assert _run(["constrained.quota-loop", "constrained.resolution", "--proofs", str(PROOFS)]) == 0
    out, err = capsys.readouterr()
    assert "constrained.quota-loop" in out and "every verdict as promised" in out
    assert err.count("\n") == 2 and "[ 1/2] constrained.quota-loop: proved" in err


def test_cli_exits_1_when_a_verdict_differs_from_the_readme(tmp_path, capsys):
    copy = tmp_path / "proofs"
    shutil.copytree(PROOFS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    readme = copy / "README.md"
    text = readme.read_text()
    readme.write_text(text.replace("| `constrained.resolution-3.5.1` | counterexample, 3 steps |",
                                   "| `constrained.resolution-3.5.1` | proved |"))
    try:
        assert _run(["constrained.resolution-3.5.1", "--proofs", str(copy)]) == 1
    finally:
        load_proofs(PROOFS)  # leave the real folder loaded for the other tests
    out, _ = capsys.readouterr()
    assert "DIFFERS" in out


def test_cli_exits_2_with_one_line_on_an_unknown_statement(capsys):
    assert _run(["no.such.statement", "--proofs", str(PROOFS)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "no.such.statement" in err


def test_cli_json_is_the_report(capsys):
    assert _run(["constrained.resolution-3.5.1", "--json", "--proofs", str(PROOFS)]) == 0
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    assert doc["format"] == "stickyproof.prove/1" and doc["ok"] is True
    (record,) = doc["statements"]
    assert record["verdict"] == "counterexample" and record["length"] == 3
    assert record["detail"]["witness"]["members"] == 3


def test_table_names_the_differing_statements():
    report = prove(["constrained.quota-loop"], path=PROOFS)
    text = render_table(report)
    assert text.splitlines()[0].split()[:5] == ["statement", "verdict", "promised", "bound", "seconds"]


@pytest.mark.slow
def test_the_quick_set_is_as_promised_in_under_a_minute():
    start = time.perf_counter()
    report = prove(path=PROOFS)
    assert report.ok, [r.name for r in report.records if not r.ok]
    assert time.perf_counter() - start < 60
