"""Trace validation: a whole simulator run is a path through the protocol model (proofs/README.md,
"Links to the code").

The set of model states consistent with the run so far (the *frontier*) starts at the model's
initial state. After every simulator tick that changes anything, it is advanced by up to
``STEPS_PER_TICK`` model steps (``vector.reachable_within``: the explicit-state machinery, members
and generations taken as they are) and cut down to the states that agree with what the simulator
holds after the tick (``vector.restrict``), the hidden state included: the claims and claimed
generations of the JoinGroups the coordinator holds, each member's sticky user data and its
generation, the coordinator's stored and persisted assignment, leader and pending joins. An empty
frontier rejects the run at that tick. Checking each tick alone, from any state that matches the
tick before, would accept runs no path of the model makes (KAFKA-7026's below).
"""

from __future__ import annotations

import functools
import importlib
import json
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from stickyproof.prove import load_proofs

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _module(name: str):
    load_proofs(PROOFS)
    return importlib.import_module(f"stickyproof_proofs.{name}")


#: How many model steps one simulator tick may take (2 members: each can answer, sync and rejoin in a turn;
#: with a fail-over first, a SyncGroup to the new coordinator and a join completed in between, 7).
STEPS_PER_TICK = 7
#: The simulator's member states -> the model's (a member "joining" may not have sent, or not yet read the answer).
_MEMBER_STATES = {"UNJOINED": ("OUT",), "PREPARING_REBALANCE": ("OUT", "JOINING", "SYNCING"),
                  "COMPLETING_REBALANCE": ("SYNCING",), "STABLE": ("STABLE",)}
_GROUP_STATES = {"Empty": "EMPTY", "PreparingRebalance": "PREP", "CompletingRebalance": "COMPL", "Stable": "CSTABLE"}


def _observe(sim, names: tuple[str, ...], variant) -> dict[tuple[str, tuple[int, ...]], frozenset]:
    """The values each model variable may have after the simulator's last tick (the partition is t-0).

    Model member ``m`` is the process named ``names[m]``, known to the coordinator under its current
    id (``_current_id``). A variable the simulator cannot pin down at this moment is left out, never
    guessed: a member's ``ing``/``joined`` while its id is unknown; the claims except while they decide
    the next assignment (its JoinGroup is pending, or the group completes its join); the stored
    assignment except while the group is Stable (the simulator drops it when a join completes, the
    model when the next one is stored); the persisted state unless fail-overs keep it; a member's
    generation before it has read its JoinGroup answer.
    """
    from stickyproof.model import TopicPartition

    pm = _module("protocol.model")
    t0 = TopicPartition("t", 0)
    co = sim.coordinator
    out: dict[tuple[str, tuple[int, ...]], Any] = {
        ("cs", ()): {getattr(pm, _GROUP_STATES[co.state])}, ("G", ()): {co.generation}, ("E", ()): {co.epoch - 1}}
    current = {m: _current_id(co, sim.processes.get(name), name) for m, name in enumerate(names)}
    leader_known = all(known or co.leader is None or co.leader.split("#")[0] != names[m] for m, (known, _) in current.items())
    persisted = co.persisted if variant.failover == "persisted" else None
    if variant.failover == "persisted":
        out[("pG", ())] = {persisted.generation if persisted is not None else -1}
    for m, name in enumerate(names):
        known, cur = current[m]
        if leader_known:  # a leader id no process holds is no leader in the model (it left, or is stale)
            out[("lead", (m,))] = {cur is not None and co.leader == cur}
        if known:
            out[("ing", (m,))] = {cur is not None}
            out[("joined", (m,))] = {cur is not None and co.members[cur].awaiting_join}
        # the stored and persisted assignments keep a member's entry under whatever id it had (the model: per process)
        if co.state == "Stable":
            out[("asg", (m, 0))] = {any(t0 in a for i, a in co.assignments.items() if i.split("#")[0] == name)}
        if persisted is not None:
            out[("pasg", (m, 0))] = {any(t0 in a for i, a in persisted.assignments if i.split("#")[0] == name)}
        p = sim.processes.get(name)
        if p is None or not p.running:  # not started yet, or closed (it revoked everything and left): a fresh process
            out.update({("st", (m,)): {pm.OUT}, ("paused", (m,)): {False}, ("hasid", (m,)): {False}, ("g", (m,)): {-1},
                        ("own", (m, 0)): {False}, ("mem", (m, 0)): {False}, ("memg", (m,)): {-1}})
            continue
        out[("own", (m, 0))] = {t0 in p.owned}
        out[("mem", (m, 0))] = {t0 in p.memory}
        out[("memg", (m,))] = {p.memory_generation}
        if p.member_id is not None:
            out[("hasid", (m,))] = {True}
        if p.stalled(sim.now - 1):
            out[("paused", (m,))] = {True}
        else:
            out[("paused", (m,))] = {p.returning}
            out[("st", (m,))] = {getattr(pm, x) for x in _MEMBER_STATES[p.state]}
            if p.state in ("COMPLETING_REBALANCE", "STABLE"):
                out[("g", (m,))] = {p.generation}
        if cur is not None and (co.members[cur].awaiting_join or co.state == "CompletingRebalance"):
            md = co.members[cur].metadata  # what its JoinGroup reported (R1: eager user data; R2: ownedPartitions)
            if variant.coop:
                out[("claim", (m, 0))] = {t0 in md.owned}
                out[("cg", (m,))] = {md.generation if md.generation >= 0 else md.memory_generation}
            else:
                out[("claim", (m, 0))] = {t0 in md.memory}
                out[("cg", (m,))] = {md.memory_generation}
    return {k: frozenset(v) for k, v in out.items()}


def _current_id(co, p, name: str) -> tuple[bool, str | None]:
    """(known, the coordinator's id for process ``p``'s current membership, or None).

    The model knows one id per process, the one it believes it has (``ing``: the coordinator knows
    it). The simulator's coordinator may also hold ids no process believes in any more (a member
    reset while a fail-over restores its old id). The current id is the one the process holds; a
    process that has not read the answer to its first JoinGroup yet has the id that JoinGroup is
    pending under. Unknown when neither tells: it has no id and an id of its name has no join pending.
    """
    if p is None or not p.running:
        return True, None
    if p.member_id is not None:
        return True, (p.member_id if p.member_id in co.members else None)
    mine = [i for i in co.members if i.split("#")[0] == name]
    pending = [i for i in mine if co.members[i].awaiting_join and co.members[i].process == p.process]
    if len(pending) == 1:
        return True, pending[0]
    return not mine, None


@dataclass(frozen=True)
class Rejection:
    """The tick at which no path of the model agrees with the run, and what the simulator held then."""

    tick: int
    events: tuple[str, ...]
    notes: tuple[str, ...]
    observed: dict[str, tuple]

    def __str__(self) -> str:
        seen = ", ".join(f"{k}={'|'.join(map(str, v))}" for k, v in self.observed.items())
        return f"tick {self.tick} ({'; '.join(self.events + self.notes) or 'no event'}): no model state has {seen}"


@dataclass(frozen=True)
class Validation:
    ticks: int  # simulator ticks run
    advanced: int  # ticks that changed something (each advanced the frontier)
    widest: int  # most model states considered at one tick
    rejected: Rejection | None


@functools.lru_cache(maxsize=None)
def _vectorized(variant, drop: str | None = None):
    """The concrete 2 x 1 model over frontiers, ghosts (the coordinator epoch) kept, without action ``drop``."""
    explicit, vector = _module("protocol.explicit"), _module("protocol.vector")
    c = explicit.compile_model(variant, {"M": 2, "P": 1}, drop_ghosts=False, compress=False)
    vec = vector.vectorize(c)
    if drop is not None:
        vec = replace(vec, steps=tuple(s for (name, _, _), s in zip(c.steps, vec.steps) if name != drop))
    return vec


def _validate(tmp_path, doc: dict, variant, *, drop: str | None = None) -> Validation:
    """Run ``doc``'s simulation as ``simulate`` does, tick by tick, carrying the frontier across the whole run."""
    from stickyproof.group.runner import resolve_simulation
    from stickyproof.group.simulator import Simulation

    vector = _module("protocol.vector")
    path = tmp_path / f"{doc['name']}.json"
    path.write_text(json.dumps(doc))
    scenario, schedule, switched, assignor, name = resolve_simulation(str(path), None, (), None)
    sim = Simulation(scenario, schedule.events, config=schedule.config, without=switched, assignor=assignor, name=name)
    names = tuple(sorted({m.id for m in scenario.members} | {e.member for e in schedule.events if e.member}))
    assert len(names) == 2, names
    vec = _vectorized(variant, drop)
    seen = _observe(sim, names, variant)
    frontier = vector.restrict(vec, vec.array([vec.compiled.init]), seen)
    assert frontier.shape[1] == 1  # the simulator starts where the model does
    ticks = advanced = widest = 0
    while sim.end_reason() is None:
        step = sim.step()
        ticks += 1
        now = _observe(sim, names, variant)
        if step is None and now == seen:
            continue  # nothing changed, nothing the model sees: no model step
        seen, advanced = now, advanced + 1
        reachable = vector.reachable_within(vec, frontier, STEPS_PER_TICK)
        widest = max(widest, reachable.shape[1])
        frontier = vector.restrict(vec, reachable, seen)
        if frontier.shape[1] == 0:
            observed = {f"{n}{list(i) if i else ''}": tuple(sorted(v)) for (n, i), v in seen.items()}
            why = Rejection(sim.now - 1, step.events if step else (), step.notes if step else (), observed)
            return Validation(ticks, advanced, widest, why)
    return Validation(ticks, advanced, widest, None)


def _random_history(seed: int, protocol: str, assignor: str, persisted: bool) -> dict:
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


@pytest.mark.parametrize("protocol, assignor, trust", [("eager", "sticky", "unique"), ("cooperative", "cooperative-sticky", "top")])
@pytest.mark.parametrize("failover", ["persisted", "lost"])
def test_random_histories_of_todays_assignors_are_runs_of_the_model(tmp_path, protocol, assignor, trust, failover):
    pm = _module("protocol.model")
    variant = pm.Variant(protocol, trust, failover=failover)
    for seed in range(2):
        doc = _random_history(seed, protocol, assignor, persisted=failover == "persisted")
        r = _validate(tmp_path, doc, variant)
        assert r.rejected is None, (doc["events"], str(r.rejected))
        assert r.advanced > 5


def _kafka_7026(assignor: str) -> dict:
    """The events ``protocol/export.py`` lays out for the model's KAFKA-7026 counterexample (18 steps; tests/
    test_proofs.py replays them through ``stickyproof simulate``): c1 stalls past its session, c2 joins
    and takes t-0, c1 comes back still claiming t-0 in its user data."""
    return {"format": "stickyproof.simulation/1", "name": f"kafka-7026-{assignor}", "assignor": assignor,
            "events": [{"at": 7, "event": "stall", "member": "c1", "ticks": 15},
                       {"at": 8, "event": "join", "member": "c2", "topics": ["t"]}],
            "scenario": {"format": "stickyproof.scenario/1", "name": "kafka-7026", "protocol": "eager", "topics": {"t": 1},
                         "members": [{"id": "c1", "topics": ["t"], "assignors": [assignor]}]}}


def test_kafka_7026_run_of_sticky_2_2_is_no_run_of_the_safe_model(tmp_path):
    """The leader of sticky 2.2 stores t-0 for both members: no path of the safe model (the eager theorem's
    top-generation trust) gets there, and the run is rejected at that tick, before anyone consumes t-0
    twice. The model of 2.2 (trust every claim) has that path; with today's sticky the safe model has one."""
    from stickyproof.group.runner import run_simulation

    stmts = _module("protocol.statements")
    doc = _kafka_7026("sticky@2.2")
    path = tmp_path / "kafka-7026-run.json"
    path.write_text(json.dumps(doc))
    doubled = run_simulation(str(path)).verdict("no-double-consumption")
    assert not doubled.ok

    r = _validate(tmp_path, doc, stmts.VARIANTS["eager"])
    assert r.rejected is not None
    assert r.rejected.observed["asg[0, 0]"] == r.rejected.observed["asg[1, 0]"] == (True,), str(r.rejected)
    assert r.rejected.tick < doubled.first.tick, (str(r.rejected), doubled.first)
    assert _validate(tmp_path, doc, stmts.VARIANTS["kafka-7026"]).rejected is None
    fixed = _validate(tmp_path, _kafka_7026("sticky"), stmts.VARIANTS["eager"])
    assert fixed.rejected is None, str(fixed.rejected)


def test_trace_validation_fails_when_the_model_loses_an_action(tmp_path):
    """Not vacuous: without SyncReceive (or CompleteJoin) no path of the model follows the simulator."""
    pm = _module("protocol.model")
    doc = _random_history(0, "eager", "sticky", persisted=True)
    variant = pm.Variant("eager", "unique", failover="persisted")
    assert _validate(tmp_path, doc, variant, drop="SyncReceive").rejected is not None
    assert _validate(tmp_path, doc, variant, drop="CompleteJoin").rejected is not None
