"""``stickyproof prove``: verdicts against proofs/README.md, and weakened models that must fail.

A proof that cannot fail proves nothing: every test here weakens (or fixes) one switch of a model
and checks that the statement it should break stops having its promised verdict, for the reason
the model gives (the lemma that stops being inductive, the missing counterexample).
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest

import stickyproof.prove as prove_module
from stickyproof.cli import main
from stickyproof.cli.prove import render_table
from stickyproof.prove import Promise, load_proofs, prove, read_promises, statement_names

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


_AS_PROMISED: dict = {}


def _unpatched(name: str):
    """``_one(name)`` on the unmodified model, run once per session (several tests read the same record)."""
    if name not in _AS_PROMISED:
        _AS_PROMISED[name] = _one(name)
    return _AS_PROMISED[name]


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
    r = _unpatched("protocol.eager.safe")
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
    r = _unpatched(name)
    assert r.ok and r.verdict == "counterexample"
    assert r.length == read_promises(PROOFS)[name].length == len(r.detail["steps"])


@pytest.mark.parametrize(
    "name, key, change",
    [
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
    r = _unpatched("protocol.eager.kafka-7026")
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
    """The real command line (``stickyproof prove ...``), as registered in ``cli.COMMANDS``."""
    return main(["prove", *argv])


def test_prove_is_a_registered_command(capsys):
    with pytest.raises(SystemExit) as done:
        main(["prove", "--help"])
    assert done.value.code == 0
    out, _ = capsys.readouterr()
    assert "--deep" in out and "--json" in out and "NAME" in out


def test_cli_exits_1_when_the_promise_is_changed(monkeypatch, capsys):
    """The README promise is the single source: promise a 4-step KAFKA-15106 and the run must fail."""
    real = prove_module.read_promises

    def promises(path=None):
        out = dict(real(path))
        out["constrained.resolution-3.5.1"] = Promise("counterexample", 4)
        return out

    monkeypatch.setattr(prove_module, "read_promises", promises)
    assert _run(["constrained.resolution-3.5.1", "--proofs", str(PROOFS)]) == 1
    out, _ = capsys.readouterr()
    assert "DIFFERS" in out and "1 differ from proofs/README.md: constrained.resolution-3.5.1" in out


def test_cli_exits_1_when_a_switch_fixes_kafka_7026(monkeypatch, capsys):
    """A fixed model (sticky 2.6's top-generation trust) stops finding KAFKA-7026: the run fails."""
    stmts = _module("protocol.statements")
    monkeypatch.setitem(stmts.VARIANTS, "kafka-7026", stmts.VARIANTS["kafka-7026"].but(trust="top"))
    assert _run(["protocol.eager.kafka-7026", "--proofs", str(PROOFS)]) == 1
    out, _ = capsys.readouterr()
    assert "unknown" in out and "DIFFERS" in out


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


# ------------------------------------------------------------------------------------------
# proofs/ reads models/, never the code it proves things about


def test_proofs_never_import_stickyproof():
    import ast

    found = []
    for path in sorted(PROOFS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.relative_to(PROOFS)}: {n}" for n in names if n.split(".")[0] == "stickyproof"]
    assert not found, found


# ------------------------------------------------------------------------------------------
# the fail-over finding (issue 13, item 4): pinned both ways


def _failover_trace(key: str, depth: int):
    engine = _module("protocol.engine")
    stmts = _module("protocol.statements")
    return engine.bmc(stmts.VARIANTS[key], stmts.SEARCH_SIZES, "no-double-consumption", depth)


def test_failover_without_state_breaks_top_generation_trust_on_two_equal_generations():
    r = _unpatched("protocol.failover.top-generation")
    assert r.ok and r.verdict == "counterexample" and r.length == read_promises(PROOFS)["protocol.failover.top-generation"].length
    assert any(step.startswith("FailoverLost") for step in r.detail["steps"])
    # the mechanism: at the fatal assignment both claimants report the same generation from different epochs
    found = _failover_trace("failover-top", r.length)
    assert found.violated and found.trace is not None
    trace = found.trace
    commits = [i for i, s in enumerate(trace.steps) if s.action == "Commit"]
    before = trace.states[commits[-1]]
    claimants = [m for m in range(2) if before["ing"][m] and before["claim"][m][0]]
    assert len(claimants) == 2
    assert before["cg"][0] == before["cg"][1]
    assert before["meme"][0] != before["meme"][1]
    # and with the coordinator's state persisted, the same trust rule is a theorem
    assert _unpatched("protocol.eager.safe").verdict == "proved"


def test_failover_without_state_keeps_unique_top_generation_safe_and_bounded_search_agrees():
    assert _unpatched("protocol.failover.unique-generation").verdict == "proved"
    promised = read_promises(PROOFS)["protocol.failover.top-generation"].length
    assert not _failover_trace("failover-unique", promised).violated  # nor at 2 x 1 in as many steps as top trust needs


# ------------------------------------------------------------------------------------------
# links to the code: the KAFKA-7026 counterexample replayed by the real simulator


def _exported_trace(key: str, depth: int, prop: str = "no-double-consumption", choice: str = "keep_with_trusted_choice"):
    """The shortest counterexample of ``key`` under the simulator's scheduling discipline, with the
    leader's choice fixed to what the simulator's assignor answers (export.py)."""
    engine = _module("protocol.engine")
    export = _module("protocol.export")
    stmts = _module("protocol.statements")
    logic = _module("logic")
    chosen = getattr(export, choice)

    def restrict(u, k):
        return logic.AND(export.simulator_discipline(u, k), export.joins_in_index_order(u, k), chosen(u, k))

    r = engine.bmc(stmts.VARIANTS[key], stmts.SEARCH_SIZES, prop, depth, restrict=restrict, minimal=True)
    assert r.violated and r.trace is not None
    return export, r.trace


def _simulate(tmp_path, doc, *flags: str) -> tuple[int, dict]:
    import contextlib
    import io

    path = tmp_path / f"{doc['name']}.json"
    path.write_text(json.dumps(doc))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["simulate", str(path), "--json", *flags])
    return code, json.loads(out.getvalue())


def _with_assignor(doc: dict, assignor: str) -> dict:
    members = [{**m, "assignors": [assignor]} for m in doc["scenario"]["members"]]
    return {**doc, "assignor": assignor, "scenario": {**doc["scenario"], "members": members}}


def _doubled_ticks(result: dict) -> list[int]:
    """Ticks at which two members are STABLE in one generation and both own t-0: the leader handed it to both."""
    out = []
    for step in result["steps"]:
        holders = [m for m in step["members"] if m["state"] == "STABLE" and 0 in m["owned"].get("t", [])]
        if len(holders) >= 2 and len({m["generation"] for m in holders}) == 1:
            out.append(step["tick"])
    return out


#: (statement, model key, property searched, simulator assignor, switches off, the fix to replay, mechanism)
#: The fix is what makes the same events safe: today's assignor, or (KAFKA-12983) today's client.
EXPORTS = [
    ("protocol.eager.kafka-7026", "kafka-7026", "no-double-consumption", "sticky@2.2", [], {"assignor": "sticky"},
     "sticky 2.2 trusts every claim: a member expelled while paused rejoins claiming its old partition "
     "and keeps it beside its new owner (KAFKA-7026)"),
    ("protocol.failover.top-generation", "failover-top", "no-double-consumption", "sticky@2.6", [], {"assignor": "sticky"},
     "after a fail-over without group state generations restart: a member paused through it claims its "
     "partition at generation 1 of the old epoch, its new owner at generation 1 of the new one; sticky 2.6 "
     "trusts both top-generation claims"),
    ("protocol.cooperative.kafka-12983", "kafka-12983", "no-double-consumption", "cooperative-sticky",
     ["join-prepare-after-reset"], {"without": []},
     "a pre-3.0 client stalled in its join prepare is expelled; its reset skips onJoinPrepare, so it keeps "
     "consuming its old partition, now its successor's, while it rejoins (KAFKA-12983)"),
    ("protocol.cooperative.kafka-12984", "kafka-12984", "assignment-unique", "cooperative-sticky@2.6",
     ["join-prepare-after-reset"], {"assignor": "cooperative-sticky"},
     "that client rejoins still claiming its old partition; cooperative-sticky 2.6 (no generation in its user "
     "data, duplicates undetected) leaves the partition with both claimants (KAFKA-12984)"),
]


@pytest.mark.parametrize("statement, key, prop, assignor, without, fix, mechanism", EXPORTS,
                         ids=[e[0] for e in EXPORTS])
def test_counterexample_exported_as_events_makes_the_simulator_report_double_consumption(
        tmp_path, statement, key, prop, assignor, without, fix, mechanism):
    promised = read_promises(PROOFS)[statement].length
    export, trace = _exported_trace(key, promised + 1, prop)
    assert trace.length >= promised  # the simulator's discipline only restricts the model: never shorter
    doc = export.simulation_document(trace, name=f"{key}-from-proof", mechanism=mechanism)
    assert doc["assignor"] == assignor and doc["events"] and doc.get("without", []) == without, doc
    code, result = _simulate(tmp_path, doc)
    monitors = {m["monitor"]: m for m in result["monitors"]}
    assert code == 1 and not monitors["no-double-consumption"]["ok"], doc["events"]
    assert monitors["no-double-consumption"]["first"]["witness"]["partition"] == "t-0"
    if prop == "assignment-unique":  # the leader itself handed t-0 to both (not only a stale owner consuming it)
        assert _doubled_ticks(result), result["steps"]
    # the same events with the fix are safe: the export is the bug, not the layout
    fixed = _with_assignor(doc, fix["assignor"]) if "assignor" in fix else dict(doc)
    if "without" in fix:
        fixed.pop("without", None)
    flags = ("--assignor", fix["assignor"]) if "assignor" in fix else ()
    code, result = _simulate(tmp_path, fixed, *flags)
    if prop == "assignment-unique":  # the client bug alone still double-consumes (KAFKA-12983); nobody is doubled
        assert not _doubled_ticks(result), result["steps"]
    else:
        assert code == 0 and all(m["ok"] for m in result["monitors"]), result["monitors"]


def test_one_round_export_with_a_user_assignor_that_moves_claimed_partitions(tmp_path):
    """No bundled assignor breaks the two-round rule: ``tests/proof_assignors.py: rotate_claimed`` does,
    and the model's choice is fixed to its answers. The old owner is named before the leader, so it
    sent its SyncGroup before the leader assigned and learns it lost the partition a tick after the
    leader started consuming it (the simulator's members act in name order within a tick)."""
    promised = read_promises(PROOFS)["protocol.cooperative.one-round"].length
    export, trace = _exported_trace("one-round", promised + 8, choice="rotate_claimed_choice")
    assert trace.length >= promised
    user = "tests.proof_assignors:rotate_claimed"
    names = ["c2", "c1"]  # model member 0 (the first to join, the leader) is c2; the later joiner c1 acts first
    doc = export.simulation_document(trace, name="one-round-from-proof", assignor=user, names=names,
                                     mechanism="a cooperative assignor moves a claimed partition in one round: "
                                               "the leader consumes it while its owner has not yet revoked it")
    assert doc["without"] == ["cooperative-validation"]
    code, result = _simulate(tmp_path, doc)
    monitors = {m["monitor"]: m for m in result["monitors"]}
    assert code == 1 and not monitors["no-double-consumption"]["ok"], result["monitors"]
    # with the client's validation (R39) the leader refuses the assignment: no double consumption (a rebalance loop)
    code, result = _simulate(tmp_path, {k: v for k, v in doc.items() if k != "without"})
    monitors = {m["monitor"]: m for m in result["monitors"]}
    assert monitors["no-double-consumption"]["ok"] and not monitors["no-rebalance-loop"]["ok"]
    # with today's cooperative-sticky (two rounds) the same events are safe
    code, result = _simulate(tmp_path, _with_assignor({k: v for k, v in doc.items() if k != "without"}, "cooperative-sticky"),
                             "--assignor", "cooperative-sticky")
    assert code == 0 and all(m["ok"] for m in result["monitors"]), result["monitors"]


def test_kafka_7026_export_has_the_proofs_own_length():
    promised = read_promises(PROOFS)["protocol.eager.kafka-7026"].length
    assert _exported_trace("kafka-7026", promised)[1].length == promised


# ------------------------------------------------------------------------------------------
# links to the code: the partition-level constrained model against the assignor, exhaustively


def _claim_patterns(M: int, P: int):
    """Every way ``M`` members (all at generation 1) can claim ``P`` partitions: a subset of members per partition."""
    import itertools

    return itertools.product(range(2 ** M), repeat=P)


@pytest.mark.parametrize("M, P", [(1, 3), (2, 5), (3, 3), (4, 2)])
def test_partition_level_model_equals_the_assignor_on_every_claim_pattern(M, P):
    from stickyproof.assignors.ownership import resolve_prior_owners
    from stickyproof.assignors.releases import STICKY
    from stickyproof.model import TopicPartition

    from .builders import input_of

    builder = _module("constrained.builder")
    ids = [f"m{i}" for i in range(M)]
    checked = 0
    for pattern in _claim_patterns(M, P):
        claims = {ids[m]: ([f"t-{p}" for p in range(P) if pattern[p] >> m & 1], 1) for m in range(M)}
        inp = input_of({"t": P}, claims, order=ids)  # map order = the model's index order
        prior = resolve_prior_owners(inp, STICKY)
        owner = [next((m for m in range(M) if TopicPartition("t", p) in prior.consumer_to_owned_partitions[ids[m]]), -1)
                 for p in range(P)]
        dup = [TopicPartition("t", p) in prior.partitions_with_multiple_previous_owners for p in range(P)]
        model = builder.build(owner, dup, M, P)
        real = STICKY.constrained_builder(inp, prior, STICKY)
        assert not model.error
        got = [[TopicPartition("t", p) in real.assignment[ids[m]] for p in range(P)] for m in range(M)]
        assert [[bool(b) for b in row] for row in model.assignment] == got, (pattern, owner, dup)
        assert list(model.loads) == [len(real.assignment[i]) for i in ids]
        checked += 1
    assert checked == 2 ** (M * P)
