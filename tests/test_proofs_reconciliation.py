"""KIP-848 reconciliation proofs (proofs/reconciliation/): safety holds, is not vacuous, and breaks
where Kafka broke; KAFKA-16147's history replays on an independent reading of the rules."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
import z3

from stickyproof.cli import main
from stickyproof.prove import load_proofs, prove, read_promises

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _module(name: str):
    load_proofs(PROOFS)
    return importlib.import_module(f"stickyproof_proofs.{name}")


def _one(name: str):
    (record,) = prove([name], path=PROOFS).records
    return record


def _not_inductive(record) -> set[tuple[str, str]]:
    return {(f["action"], f["lemma"]) for f in record.detail.get("not_inductive", [])}


_RECORDS: dict = {}


def _unpatched(name: str):
    if name not in _RECORDS:
        _RECORDS[name] = _one(name)
    return _RECORDS[name]


# ------------------------------------------------------------------------------------------
# the theorems hold for every size, for every client, and not vacuously


def test_reconciliation_safety_is_proved_for_every_size_and_every_client():
    r = _unpatched("reconciliation.safe")
    assert r.ok and r.verdict == "proved" and r.bound == "all group sizes, all run lengths"
    assert set(r.detail["clients"]) == {"lagging", "atomic", "lossy"}
    assert "Expire" in r.detail["clients"]["lossy"]["actions"]
    assert "Assign" in r.detail["clients"]["lagging"]["actions"]
    assert r.detail["non_vacuous"] == "sat"


def test_invariant_admits_two_members_holding_different_partitions():
    stmts = _module("reconciliation.statements")
    for variant in stmts.VARIANTS.values():
        for client in stmts.CLIENTS(variant).values():
            assert stmts.non_vacuous(client) == "sat", client.describe()


def test_invariant_admits_no_partition_held_twice():
    """The converse of non-vacuity: the lemmas really exclude the bad state (``goal`` is one of them,
    so this checks the lemma list is what the theorem assumes, not a tautology)."""
    stmts = _module("reconciliation.statements")
    lemmas = _module("reconciliation.lemmas")
    logic = _module("logic")
    state = _module("protocol.state")
    model_mod = _module("reconciliation.model")
    variant = stmts.VARIANTS["today"]
    v = logic.Symbolic()
    s = state.SymbolicState(v, model_mod.STATE, "w")
    solver = z3.Solver()
    goal_free = [fn for name, fn in lemmas.lemmas_for(variant, lambda v, s: True) if name != "goal"]
    for fn in goal_free:
        solver.add(logic.to_z3(fn(v, s)))
    x, y, p = v.fresh("M", "x"), v.fresh("M", "y"), v.fresh("P", "p")
    solver.add(x != y, s.own(x, p), s.own(y, p))
    assert solver.check() == z3.unsat


def test_the_2024_builder_with_pr_15212_is_safe():
    r = _unpatched("reconciliation.pr-15212.safe")
    assert r.ok and r.verdict == "proved"


def test_todays_builder_is_safe_even_with_the_old_bookkeeping():
    r = _unpatched("reconciliation.today.old-bookkeeping.safe")
    assert r.ok and r.verdict == "proved"


def test_safety_does_not_rest_on_the_member_epoch_validation(monkeypatch):
    """proofs/README.md (T6): with every epoch accepted the lossy client is still safe."""
    model = _module("reconciliation.model")
    state = _module("protocol.state")
    engine = _module("reconciliation.engine")
    lemmas = _module("reconciliation.lemmas")
    original = model.ReconciliationModel._actions

    def accept_every_epoch(self):
        out = []
        for action in original(self):
            if action.name == "Heartbeat":
                def build(v, s, m, c=None, inner=action.build):
                    current = state.State(lambda name, idx: s.read("ep", idx) if name == "cep" else s.read(name, idx))
                    return inner(v, current, m, c) if c is not None else inner(v, current, m)
                action = model.Action(action.name, action.params, build, action.uses_choice, action.environment, action.doc)
            out.append(action)
        return tuple(out)

    monkeypatch.setattr(model.ReconciliationModel, "_actions", accept_every_epoch)
    variant = model.Variant("today", "fixed", atomic_client=True, lossy=True)
    assert model.ReconciliationModel(variant).action("Heartbeat").build.__name__ == "build"
    result = engine.induct(variant, lemmas.lemmas_for(variant, model.ReconciliationModel(variant).no_double_ownership))
    assert result.proved, result.failures


def test_member_epochs_are_monotone_and_move_only_after_revocation():
    r = _unpatched("reconciliation.epochs")
    assert r.ok and r.verdict == "proved"
    assert len(r.detail["runs"]) == 6 and all(run["proved"] for run in r.detail["runs"].values())


# ------------------------------------------------------------------------------------------
# weakened models must fail


def test_old_bookkeeping_breaks_the_2024_theorem_at_the_partition_epoch(monkeypatch):
    stmts = _module("reconciliation.statements")
    monkeypatch.setitem(stmts.VARIANTS, "pr-15212", stmts.VARIANTS["pr-15212"].but(bookkeeping="kafka-16147"))
    r = _one("reconciliation.pr-15212.safe")
    assert not r.ok and r.verdict == "unknown"
    assert _not_inductive(r) == {("Heartbeat", "listed-has-epoch")}


def test_a_builder_that_ignores_partition_epochs_is_unsafe(monkeypatch):
    model = _module("reconciliation.model")
    state = _module("protocol.state")
    engine = _module("reconciliation.engine")
    original = model.ReconciliationModel._today

    def blind(self, v, s, m):  # every partition looks released
        free = model._k(v, model.FREE)
        return original(self, v, state.State(lambda name, idx: free if name == "pe" else s.read(name, idx)), m)

    monkeypatch.setattr(model.ReconciliationModel, "_today", blind)
    r = _one("reconciliation.safe")
    assert not r.ok and ("Heartbeat", "listed-once") in _not_inductive(r)
    found = engine.bmc(model.Variant(atomic_client=True), {"M": 2, "P": 1}, "no-double-ownership", 8)
    assert found.violated and found.run is not None


def test_a_coordinator_that_ignores_the_reported_partitions_breaks_safety_and_epochs(monkeypatch):
    """Reading every member as holding nothing, the builder skips UNREVOKED_PARTITIONS and leaves it
    while the client still holds what it must revoke: both T6 and the epoch statement fail."""
    model = _module("reconciliation.model")
    state = _module("protocol.state")
    original = model.ReconciliationModel._today

    def deaf(self, v, s, m):
        return original(self, v, state.State(lambda name, idx: False if name == "own" else s.read(name, idx)), m)

    monkeypatch.setattr(model.ReconciliationModel, "_today", deaf)
    assert not _one("reconciliation.safe").ok
    epochs = _one("reconciliation.epochs")
    assert not epochs.ok
    assert {f.get("property") for f in epochs.detail["failures"]} >= {"epoch-moves-after-revocation"}


def test_fixed_bookkeeping_has_no_kafka_16147_counterexample(monkeypatch):
    stmts = _module("reconciliation.statements")
    monkeypatch.setitem(stmts.VARIANTS, "kafka-16147", stmts.VARIANTS["kafka-16147"].but(bookkeeping="fixed"))
    r = _one("reconciliation.kafka-16147")
    assert not r.ok and r.verdict == "unknown" and not _not_inductive(r)


# ------------------------------------------------------------------------------------------
# KAFKA-16147: the shortest run, and its history


def test_kafka_16147_is_a_counterexample_of_its_promised_length():
    r = _unpatched("reconciliation.kafka-16147")
    promise = read_promises(PROOFS)["reconciliation.kafka-16147"]
    assert r.ok and r.verdict == "counterexample" and r.length == promise.length == 10
    assert _not_inductive(r) == {("Heartbeat", "listed-has-epoch")}
    history = r.detail["history"]
    assert history["format"] == "stickyproof.kip848-history/1"
    assert history["coordinator"] == {"builder": "2024", "bookkeeping": "kafka-16147", "kafka_19449_fix": False}
    assert len(history["events"]) == 10
    assert history["expect"] == {"monitor": "no-double-ownership", "after_step": 10, "partition": "t-0",
                                 "members": ["c1", "c2"]}


def _heartbeat_2024(old: dict, owned: set, tgt: set, E: int, released) -> dict:
    """January 2024's CurrentAssignmentBuilder.build, over sets."""
    new = dict(old)
    if old["tep"] != E:
        both = old["asg"] | old["rev"]
        keep, revoke, pending = both & tgt, both - tgt, tgt - both
        take = {p for p in pending if released(p)}
        if revoke:
            new.update(asg=keep, rev=revoke, pnd=pending, tep=E)
        else:
            new.update(asg=keep | take, rev=set(), pnd=pending - take, ep=E, tep=E)
    elif old["rev"] and owned <= old["asg"] or not old["rev"] and {p for p in old["pnd"] if released(p)}:
        got = {p for p in old["pnd"] if released(p)}
        new.update(asg=old["asg"] | got, rev=set(), pnd=old["pnd"] - got, ep=old["tep"])
    new["state"] = "REVOKING" if new["rev"] else "ASSIGNING" if new["pnd"] else "STABLE"
    return new


def _heartbeat_today(old: dict, owned: set, tgt: set, E: int, released) -> dict:
    """Today's CurrentAssignmentBuilder.build (with maybeReconcile's short cut), over sets."""
    state, ep = old["state"], old["ep"]
    if state == "STABLE" and ep == E or state == "UNREVOKED_PARTITIONS" and owned & old["rev"]:
        return old
    base = ep + 1 if state == "UNREVOKED_PARTITIONS" else ep
    kept, revoke, pending = old["asg"] & tgt, old["asg"] - tgt, tgt - old["asg"]
    take = {p for p in pending if released(p)}
    waiting = bool(pending - take)
    if revoke and owned & revoke:
        return dict(old, state="UNREVOKED_PARTITIONS", ep=base, asg=kept, rev=revoke)
    return dict(old, state="UNRELEASED_PARTITIONS" if waiting else "STABLE", ep=E, asg=kept | take, rev=set())


def _replay(history: dict, bookkeeping: str) -> list[dict]:
    """The events of ``history`` run on the coordinator rules it names, written here from Kafka's
    CurrentAssignmentBuilder and ConsumerGroup (not from the model): the states after each event."""
    rules = history["coordinator"]
    step = _heartbeat_2024 if rules["builder"] == "2024" else _heartbeat_today
    E, target, records, holds, pe = 0, {}, {}, {}, {}
    out = []
    for ev in history["events"]:
        m = ev.get("member")
        if ev["event"] == "join":
            records[m] = {"state": "STABLE", "ep": 0, "asg": set(), "rev": set(), "pnd": set(), "tep": 0}
            holds[m] = set()
        elif ev["event"] == "leave":
            old = records.pop(m)
            for p in old["asg"] | old["rev"]:
                pe.pop(p, None)
            holds.pop(m)
            target.pop(m, None)
        elif ev["event"] == "new-target":
            assert ev["epoch"] == E + 1
            E = ev["epoch"]
            target = {k: set(v) for k, v in ev["assignment"].items()}
        else:
            old = records[m]
            own_revoking = old["rev"] if rules["kafka_19449_fix"] else set()
            new = step(old, holds[m], target.get(m, set()), E, lambda p: p not in pe or p in own_revoking)
            if bookkeeping == "fixed":
                for p in old["asg"] | old["rev"]:
                    pe.pop(p, None)
                for p in new["asg"] | new["rev"]:
                    pe[p] = new["ep"]
            else:  # before PR #15212: each set on its own, when it changed
                for key in ("asg", "rev"):
                    if old[key] != new[key]:
                        for p in old[key]:
                            pe.pop(p, None)
                        for p in new[key]:
                            pe[p] = new["ep"]
            records[m] = new
            holds[m] = set(new["asg"])
        out.append({"group_epoch": E, "partition_epochs": {f"t-{i}": pe.get(f"t-{i}", -1) for i in range(history["partitions"])},
                    "members": {k: {"state": r["state"], "epoch": r["ep"], "assigned": sorted(r["asg"]),
                                    "pending_revocation": sorted(r["rev"]), "holds": sorted(holds[k])}
                                for k, r in records.items()}})
    return out


def _doubled(state: dict) -> list[str]:
    seen: dict[str, int] = {}
    for member in state["members"].values():
        for p in member["holds"]:
            seen[p] = seen.get(p, 0) + 1
    return [p for p, n in seen.items() if n > 1]


def test_kafka_16147_history_replays_step_by_step_on_the_rules():
    history = _unpatched("reconciliation.kafka-16147").detail["history"]
    replayed = _replay(history, "kafka-16147")
    for step, (mine, theirs) in enumerate(zip(replayed, history["states"]), start=1):
        assert mine == theirs, f"step {step}: {history['events'][step - 1]}"
    assert _doubled(replayed[-1]) == ["t-0"] and not any(_doubled(s) for s in replayed[:-1])


def test_kafka_16147_history_is_safe_with_the_fixed_bookkeeping():
    history = _unpatched("reconciliation.kafka-16147").detail["history"]
    replayed = _replay(history, "fixed")
    assert not any(_doubled(s) for s in replayed)
    assert replayed != history["states"]  # the fixed bookkeeping keeps t-0's epoch where the old one lost it


def test_kafka_19449_fix_is_safe_on_the_fixed_bookkeeping():
    r = _unpatched("reconciliation.kafka-19449-fix.safe")
    assert r.ok and r.verdict == "proved" and r.detail["non_vacuous"] == "sat"


def test_kafka_19449_fix_on_the_old_bookkeeping_reopens_kafka_16147():
    r = _unpatched("reconciliation.kafka-19449-fix.old-bookkeeping")
    promise = read_promises(PROOFS)["reconciliation.kafka-19449-fix.old-bookkeeping"]
    assert r.ok and r.verdict == "counterexample" and r.length == promise.length
    assert _not_inductive(r) == {("Heartbeat", "listed-has-epoch")}
    history = r.detail["history"]
    assert history["coordinator"] == {"builder": "today", "bookkeeping": "kafka-16147", "kafka_19449_fix": True}
    replayed = _replay(history, "kafka-16147")
    for step, (mine, theirs) in enumerate(zip(replayed, history["states"]), start=1):
        assert mine == theirs, f"step {step}: {history['events'][step - 1]}"
    assert _doubled(replayed[-1]) == ["t-0"]
    assert not any(_doubled(s) for s in _replay(history, "fixed"))
    # without the fix, today's builder keeps the revoked partition's epoch until it is released
    unfixed = dict(history, coordinator=dict(history["coordinator"], kafka_19449_fix=False))
    assert not any(_doubled(s) for s in _replay(unfixed, "kafka-16147"))


def test_cli_json_carries_the_history(capsys):
    assert main(["prove", "reconciliation.kafka-16147", "--json", "--proofs", str(PROOFS)]) == 0
    doc = json.loads(capsys.readouterr()[0])
    (record,) = doc["statements"]
    assert record["ok"] and record["detail"]["history"]["events"][0] == {"step": 1, "event": "join", "member": "c1"}


# ------------------------------------------------------------------------------------------
# bounded check and convergence


def test_bounded_search_finds_no_run_breaking_safety():
    r = _unpatched("reconciliation.bounded")
    assert r.ok and r.verdict == "proved"
    assert not any(run["violated"] for run in r.detail["runs"].values())


def test_convergence_takes_three_rounds_for_every_size_and_two_do_not_suffice():
    r = _unpatched("reconciliation.convergence")
    assert r.ok and r.verdict == "proved" and r.bound.startswith("every group size: 3 heartbeat rounds")
    assert set(r.detail["variants"]) == {f"{b}/{c}" for b in ("today", "kafka-19449-fix") for c in ("atomic", "lagging")}
    for key, run in r.detail["variants"].items():  # every level check answered as the proof needs, none skipped
        levels = run["levels"]
        expected = {f"{c}-{k}" for c in ("raise", "keep", "needed") for k in (1, 2, 3)} | {"implies-2", "implies-3", "end"}
        if key.endswith("/lagging"):  # the client's own steps, and that it applies each answer
            expected |= {f"keep-{k}-{a}" for k in (1, 2, 3) for a in ("revoke", "assign")} | {"applies", "applied-kept"}
        assert expected <= set(levels), key
        assert all(a == ("sat" if c.startswith("needed-") else "unsat") for c, a in levels.items())
    by_rounds = {(s["variant"], s["rounds"]): s["converged"] for s in r.detail["sizes"] if (s["M"], s["P"]) == (2, 2)}
    assert by_rounds == {("today", 2): False, ("today", 3): True, ("kafka-19449-fix", 2): False, ("kafka-19449-fix", 3): True}


@pytest.mark.parametrize("missing, fails", [
    ("epoch-has-holder", {"raise-3"}),  # a partition epoch nobody's record lists would block its next owner forever
    ("target-unique", {"raise-3"}),
    ("revoking-only-when-unrevoked", {"raise-2"}),
    ("client-current", {"enabled", "raise-1", "raise-2", "raise-3"}),  # a member whose epoch is refused never moves
])
@pytest.mark.parametrize("atomic", [True, False])
def test_the_level_proof_fails_without_a_lemma_it_needs(missing, fails, atomic):
    conv = _module("reconciliation.convergence")
    model = _module("reconciliation.model")
    variant = model.Variant(atomic_client=atomic)
    lemmas = conv.invariant(variant)
    assert missing in {n for n, _ in lemmas}
    result = conv.prove_levels(variant, [lem for lem in lemmas if lem[0] != missing])
    assert not result.proved and set(result.failures) == fails
    assert all(result.failures[c] == "sat" for c in fails)


def test_the_lagging_client_needs_to_apply_each_answer_before_its_next_heartbeat(monkeypatch):
    """The round assumption is used: without it (``applied`` always true) a lagging member that still
    holds a partition it was asked to revoke is not raised, and holding the target is not implied.
    The atomic client applies within the heartbeat (a lemma), so nothing changes for it."""
    conv = _module("reconciliation.convergence")
    model = _module("reconciliation.model")
    monkeypatch.setattr(conv, "applied", lambda v, s, x: True)
    assert set(conv.prove_levels(model.Variant(atomic_client=False)).failures) == {"raise-1", "raise-2", "end"}
    assert conv.prove_levels(model.Variant(atomic_client=True)).proved


def test_the_level_proof_fails_for_a_builder_that_never_hands_out_a_partition(monkeypatch):
    """Non-vacuity of the parametric proof: the builder that keeps every partition epoch taken cannot
    raise a member to STABLE (round 3), and ``reconciliation.convergence`` says so."""
    model = _module("reconciliation.model")
    state = _module("protocol.state")
    conv = _module("reconciliation.convergence")
    original = model.ReconciliationModel._today

    def never_free(self, v, s, m):
        held = model._k(v, 7)
        return original(self, v, state.State(lambda name, idx: held if name == "pe" else s.read(name, idx)), m)

    monkeypatch.setattr(model.ReconciliationModel, "_today", never_free)
    for atomic in (True, False):
        assert set(conv.prove_levels(model.Variant(atomic_client=atomic)).failures) == {"raise-3"}
    r = _one("reconciliation.convergence")
    assert not r.ok and r.verdict == "unknown" and "raise-3" in r.bound


def test_convergence_fails_when_a_member_ignores_released_partitions(monkeypatch):
    """A builder that never hands out a pending partition never converges: the check can fail."""
    model = _module("reconciliation.model")
    conv = _module("reconciliation.convergence")
    state = _module("protocol.state")
    original = model.ReconciliationModel._today

    def never_free(self, v, s, m):
        held = model._k(v, 7)
        return original(self, v, state.State(lambda name, idx: held if name == "pe" else s.read(name, idx)), m)

    monkeypatch.setattr(model.ReconciliationModel, "_today", never_free)
    result = conv.check_rounds(model.Variant(atomic_client=True), {"M": 2, "P": 2}, 3)
    assert not result.holds


# ------------------------------------------------------------------------------------------
# state-based trace validation: a history is (or is not) a run of the model


def test_exported_histories_are_runs_of_their_model():
    validate = _module("reconciliation.validate")
    for name in ("reconciliation.kafka-16147", "reconciliation.kafka-19449-fix.old-bookkeeping"):
        history = _unpatched(name).detail["history"]
        verdict = validate.validate(history)
        assert verdict.ok and verdict.steps == len(history["events"]), (name, verdict)


def test_kafka_16147_history_is_not_a_run_of_the_fixed_coordinator():
    validate = _module("reconciliation.validate")
    model = _module("reconciliation.model")
    history = _unpatched("reconciliation.kafka-16147").detail["history"]
    verdict = validate.validate(history, model.Variant("2024", "fixed", atomic_client=True))
    assert not verdict.ok and any(m.startswith("partition_epochs[t-0]: history -1") for m in verdict.mismatches)


def test_a_history_with_a_changed_state_or_a_missing_event_is_rejected_at_that_step():
    validate = _module("reconciliation.validate")
    history = _unpatched("reconciliation.kafka-16147").detail["history"]
    edited = json.loads(json.dumps(history))
    member = next(iter(edited["states"][2]["members"]))
    edited["states"][2]["members"][member]["epoch"] += 5
    verdict = validate.validate(edited)
    assert not verdict.ok and verdict.step == 3 and verdict.mismatches == [
        f"{member}.epoch: history {history['states'][2]['members'][member]['epoch'] + 5}, "
        f"model {history['states'][2]['members'][member]['epoch']}"]
    heartbeat = next(i for i, e in enumerate(history["events"]) if e["event"] == "heartbeat")
    dropped = json.loads(json.dumps(history))
    del dropped["events"][heartbeat], dropped["states"][heartbeat]
    assert validate.validate(dropped).step == heartbeat + 1


def _state(epoch: int, pe: int, **members) -> dict:
    return {"group_epoch": epoch, "partition_epochs": {"t-0": pe},
            "members": {name: {"state": s, "epoch": e, "assigned": a, "pending_revocation": r, "holds": h}
                        for name, (s, e, a, r, h) in members.items()}}


# Written by hand from GroupMetadataManager's epoch validation and today's builder.
_LOSSY = {
    "format": "stickyproof.kip848-history/1", "coordinator": {"builder": "today", "bookkeeping": "fixed"},
    "topic": "t", "partitions": 1, "members": ["c1"],
    "events": [
        {"step": 1, "event": "join", "member": "c1"},
        {"step": 2, "event": "new-target", "epoch": 1, "assignment": {"c1": ["t-0"]}},
        {"step": 3, "event": "heartbeat", "member": "c1", "lost_response": True},
        # epoch 0 is the previous epoch and the client holds nothing: accepted, the answer arrives
        {"step": 4, "event": "heartbeat", "member": "c1"},
        {"step": 5, "event": "new-target", "epoch": 2, "assignment": {"c1": []}},
        {"step": 6, "event": "heartbeat", "member": "c1", "lost_response": True},
        # the client still holds t-0: UNREVOKED_PARTITIONS stays, the answer tells it to revoke
        {"step": 7, "event": "heartbeat", "member": "c1"},
        {"step": 8, "event": "heartbeat", "member": "c1"},
        {"step": 9, "event": "new-target", "epoch": 3, "assignment": {"c1": ["t-0"]}},
        {"step": 10, "event": "heartbeat", "member": "c1", "lost_response": True},
        {"step": 11, "event": "new-target", "epoch": 4, "assignment": {"c1": []}},
        {"step": 12, "event": "heartbeat", "member": "c1", "lost_response": True},
        # epoch 2 is neither 4 nor the previous 3: FENCED_MEMBER_EPOCH; the record stays
        {"step": 13, "event": "heartbeat", "member": "c1"},
        {"step": 14, "event": "join", "member": "c1"},
    ],
    "states": [
        _state(0, -1, c1=("STABLE", 0, [], [], [])),
        _state(1, -1, c1=("STABLE", 0, [], [], [])),
        _state(1, 1, c1=("STABLE", 1, ["t-0"], [], [])),
        _state(1, 1, c1=("STABLE", 1, ["t-0"], [], ["t-0"])),
        _state(2, 1, c1=("STABLE", 1, ["t-0"], [], ["t-0"])),
        _state(2, 1, c1=("UNREVOKED_PARTITIONS", 1, [], ["t-0"], ["t-0"])),
        _state(2, 1, c1=("UNREVOKED_PARTITIONS", 1, [], ["t-0"], [])),
        _state(2, -1, c1=("STABLE", 2, [], [], [])),
        _state(3, -1, c1=("STABLE", 2, [], [], [])),
        _state(3, 3, c1=("STABLE", 3, ["t-0"], [], [])),
        _state(4, 3, c1=("STABLE", 3, ["t-0"], [], [])),
        _state(4, -1, c1=("STABLE", 4, [], [], [])),
        _state(4, -1, c1=("STABLE", 4, [], [], [])),
        _state(4, -1, c1=("STABLE", 0, [], [], [])),
    ],
}


def test_a_hand_written_lossy_history_is_a_run_of_the_model():
    validate = _module("reconciliation.validate")
    assert validate.variant_of(_LOSSY).lossy
    verdict = validate.validate(_LOSSY)
    assert verdict.ok, verdict


def test_a_stale_epoch_accepted_is_rejected_by_the_model():
    """At step 13 the client sends epoch 2 against 4 (previous 3): fenced, so a history in which it
    got t-0 back there is not a run of the model; nor is a rejoin while the client is still in."""
    validate = _module("reconciliation.validate")
    accepted = json.loads(json.dumps(_LOSSY))
    accepted["states"][12]["members"]["c1"]["holds"] = ["t-0"]
    verdict = validate.validate(accepted)
    assert not verdict.ok and verdict.step == 13
    early = json.loads(json.dumps(_LOSSY))
    early["events"].insert(3, {"step": 0, "event": "join", "member": "c1"})
    assert validate.validate(early).reason == "join is not enabled here"
