"""Trace validation: every simulator tick on random histories, abstracted to the protocol model's
variables, is a run of a few model steps (proofs/README.md, "Links to the code")."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from stickyproof.prove import load_proofs

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _module(name: str):
    load_proofs(PROOFS)
    return importlib.import_module(f"stickyproof_proofs.{name}")


#: How many model steps one simulator tick may take (2 members: each can answer, sync and rejoin in a turn).
STEPS_PER_TICK = 6
#: The simulator's member states -> the model's (a member "joining" may not have sent, or not yet read the answer).
_MEMBER_STATES = {"UNJOINED": ("OUT",), "PREPARING_REBALANCE": ("OUT", "JOINING", "SYNCING"),
                  "COMPLETING_REBALANCE": ("SYNCING",), "STABLE": ("STABLE",)}
_GROUP_STATES = {"Empty": "EMPTY", "PreparingRebalance": "PREP", "CompletingRebalance": "COMPL", "Stable": "CSTABLE"}


def _abstract(step, s):
    """The model states a simulator tick's views allow: coordinator state and generation, who the
    coordinator knows, and per member its state, pause, generation (once it knows it) and owned partition."""
    pm, logic = _module("protocol.model"), _module("logic")
    g = step.group
    out = [s.cs() == getattr(pm, _GROUP_STATES[g.state]), s.G() == g.generation]
    for m, mv in enumerate(step.members):
        mine = [i for i in g.members if i.split("#")[0] == mv.name]  # the coordinator may know an id its process has not read yet
        out.append(s.ing(m) == (mv.member_id in g.members if mv.member_id is not None else bool(mine)))
        owned = any(tp.partition == 0 for tp in mv.owned)
        if mv.state == "STOPPED":  # closed: revoked everything and left; it starts again as a fresh process
            out += [s.st(m) == pm.OUT, logic.NOT(s.own(m, 0))]
            continue
        out.append(s.own(m, 0) == owned)
        if mv.state == "STALLED":
            out.append(s.paused(m))
            continue
        out.append(s.paused(m) == mv.returning)
        out.append(logic.OR(*[s.st(m) == getattr(pm, x) for x in _MEMBER_STATES[mv.state]]))
        if mv.state in ("COMPLETING_REBALANCE", "STABLE"):
            out.append(s.g(m) == mv.generation)
    return logic.to_z3(logic.AND(*out))


def _random_history(seed: int, protocol: str, assignor: str, persisted: bool) -> dict:
    import random

    rng = random.Random(seed)
    events, tick = [], 5
    for _ in range(4):
        tick += rng.randint(1, 12)
        kind, who = rng.choice(["stall", "stall", "restart", "failover"]), rng.choice(["c1", "c2"])
        if kind == "stall":
            events.append({"at": tick, "event": "stall", "member": who, "ticks": rng.choice([2, 8, 15])})
        elif kind == "restart":
            events.append({"at": tick, "event": "restart", "member": who})
        else:
            events.append({"at": tick, "event": "failover", "persisted": persisted})
    name = f"trace-validation-{protocol}-{seed}"
    return {"format": "stickyproof.simulation/1", "name": name, "assignor": assignor, "events": events,
            "scenario": {"format": "stickyproof.scenario/1", "name": name, "protocol": protocol, "topics": {"t": 1},
                         "members": [{"id": c, "topics": ["t"], "assignors": [assignor]} for c in ("c1", "c2")]}}


def _non_steps(tmp_path, doc: dict, variant, *, drop: str | None = None) -> tuple[int, list[int]]:
    """(ticks checked, ticks that are no run of at most STEPS_PER_TICK model steps) for ``doc``'s simulation."""
    import z3

    from stickyproof.group.runner import resolve_simulation
    from stickyproof.group.simulator import simulate

    pm, engine, state, logic = (_module(n) for n in ("protocol.model", "protocol.engine", "protocol.state", "logic"))
    path = tmp_path / f"{doc['name']}.json"
    path.write_text(json.dumps(doc))
    scenario, schedule, switched, assignor, name = resolve_simulation(str(path), None, (), None)
    result = simulate(scenario, schedule, without=switched, assignor=assignor, name=name)
    assert result.ok and len(result.steps) > 5
    model = pm.ProtocolModel(variant)
    if drop is not None:
        model.actions = tuple(a for a in model.actions if a.name != drop)
    v = logic.Concrete({"M": 2, "P": 1}, int_bits=10)
    states = [state.ConcreteState(v, pm.STATE, f"s{i}") for i in range(STEPS_PER_TICK + 1)]
    solver = engine._bitblast_solver()
    for i in range(STEPS_PER_TICK):
        solver.add(*engine.transition(model, v, states[i], states[i + 1], str(i))[0])
    bad = []
    for before, after in zip(result.steps, result.steps[1:]):
        solver.push()
        solver.add(_abstract(before, states[0]), z3.Or(*[_abstract(after, s) for s in states]))
        if solver.check() != z3.sat:
            bad.append(after.tick)
        solver.pop()
    return len(result.steps) - 1, bad


@pytest.mark.parametrize("protocol, assignor, trust", [("eager", "sticky", "unique"), ("cooperative", "cooperative-sticky", "top")])
@pytest.mark.parametrize("failover", ["persisted", "lost"])
def test_simulator_ticks_on_random_histories_are_steps_of_the_model(tmp_path, protocol, assignor, trust, failover):
    pm = _module("protocol.model")
    variant = pm.Variant(protocol, trust, failover=failover)
    for seed in range(2):
        doc = _random_history(seed, protocol, assignor, persisted=failover == "persisted")
        checked, bad = _non_steps(tmp_path, doc, variant)
        assert checked > 5 and not bad, (doc["events"], bad)


def test_trace_validation_fails_when_the_model_loses_an_action(tmp_path):
    """Not vacuous: without SyncReceive (or with one step a tick) the simulator's ticks are not model runs."""
    pm = _module("protocol.model")
    doc = _random_history(0, "eager", "sticky", persisted=True)
    variant = pm.Variant("eager", "unique", failover="persisted")
    assert _non_steps(tmp_path, doc, variant, drop="SyncReceive")[1]
    assert _non_steps(tmp_path, doc, variant, drop="CompleteJoin")[1]
