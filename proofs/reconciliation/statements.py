"""The KIP-848 reconciliation statements: safety for every group size, KAFKA-16147, convergence.

A *theorem* is checked by induction over the symbolic view (``engine.induct``): every number of
members and partitions, every run length. It is checked for both clients: one that revokes and
takes partitions in its own time (``Revoke``/``Assign`` steps lagging behind its heartbeats) and one
that applies each answer within its heartbeat. The *counterexample* is the shortest run at 2
members x 1 partition (bounded search up to the promised length, then shortened until the query for
one step fewer is unsat), exported as a history (``export.py``).
"""

from __future__ import annotations

from typing import Any

import z3

from ..logic import AND, NOT, Symbolic, to_z3
from ..outcome import COUNTEREXAMPLE, PROVED, UNKNOWN, Outcome, Promise, Statement
from ..protocol.state import SymbolicState
from .convergence import check_rounds, invariant, prove_levels
from .engine import bmc, induct
from .epochs import STEP_PROPERTIES, check_epochs
from .export import history_document
from .lemmas import lemmas_for
from .model import STATE, ReconciliationModel, Variant

__all__ = ["STATEMENTS", "VARIANTS", "CLIENTS", "SEARCH_SIZES", "non_vacuous", "CONVERGENCE_ROUNDS"]

#: Where KAFKA-16147 is searched: two members for two owners, one partition suffices.
SEARCH_SIZES = {"M": 2, "P": 1}
#: The lemma-free bounded check of the safe variants.
BOUNDED_SIZES, BOUNDED_DEPTH, BOUNDED_DEEP_DEPTH = {"M": 2, "P": 2}, 10, 14
#: Rounds of heartbeats to converge (proved for every size); the size at which one round fewer is shown
#: not to suffice (and the bound re-checked by unrolling), and the sizes --deep re-checks it at too.
CONVERGENCE_ROUNDS = 3
CONVERGENCE_SIZES = ({"M": 2, "P": 2},)
CONVERGENCE_DEEP_SIZES = ({"M": 2, "P": 3}, {"M": 3, "P": 2})
#: The builders convergence is proved for: today's, before and with KAFKA-19449's fix.
CONVERGENCE_VARIANTS = ("today", "kafka-19449-fix")

VARIANTS: dict[str, Variant] = {
    "today": Variant("today", "fixed"),
    "pr-15212": Variant("2024", "fixed"),
    "today-old-bookkeeping": Variant("today", "kafka-16147"),
    "kafka-16147": Variant("2024", "kafka-16147"),
    "kafka-19449-fix": Variant("today", "fixed", kafka_19449_fix=True),
    "kafka-19449-fix-old-bookkeeping": Variant("today", "kafka-16147", kafka_19449_fix=True),
}


def CLIENTS(variant: Variant) -> dict[str, Variant]:
    """The three clients every theorem covers: ``lagging`` (revokes and takes partitions in its own time,
    between heartbeats), ``atomic`` (applies each response within its heartbeat), ``lossy`` (atomic,
    and a response may be lost: stale epochs, fencing, rejoining at epoch 0, timeouts of fenced members)."""
    return {"lagging": variant.but(atomic_client=False, lossy=False),
            "atomic": variant.but(atomic_client=True, lossy=False),
            "lossy": variant.but(atomic_client=True, lossy=True)}


def non_vacuous(variant: Variant) -> str:
    """Z3's answer to "the invariant holds and two members hold two different partitions" (``sat``
    shows the lemmas do not prove safety by being contradictory or by forbidding ownership)."""
    v = Symbolic()
    s = SymbolicState(v, STATE, "w")
    model = ReconciliationModel(variant)
    solver = z3.Solver()
    for _, fn in lemmas_for(variant, model.no_double_ownership):
        solver.add(to_z3(fn(v, s)))
    x, y, p, q = v.fresh("M", "x"), v.fresh("M", "y"), v.fresh("P", "p"), v.fresh("P", "q")
    solver.add(to_z3(AND(NOT(x == y), NOT(p == q), s.own(x, p), s.own(y, q))))
    return str(solver.check())


def _theorem(variant: Variant) -> Outcome:
    detail: dict[str, Any] = {"variant": variant.describe(), "property": "no-double-ownership", "clients": {}}
    failures = []
    for client, var in CLIENTS(variant).items():
        model = ReconciliationModel(var)
        lemmas = lemmas_for(var, model.no_double_ownership)
        r = induct(var, lemmas)
        detail["clients"][client] = {
            "lemmas": [n for n, _ in lemmas], "actions": [a.name for a in model.actions],
            "queries": r.queries, "seconds": round(r.seconds, 2)}
        failures += [{"client": client, "action": a, "lemma": lem, "z3": z} for a, lem, z in r.failures]
    detail["non_vacuous"] = non_vacuous(variant)
    if failures or detail["non_vacuous"] != "sat":
        detail["not_inductive"] = failures
        return Outcome(UNKNOWN, "induction failed" if failures else "invariant not shown satisfiable", detail=detail)
    return Outcome(PROVED, "all group sizes, all run lengths", detail=detail)


DEFAULT_SEARCH_DEPTH = 14


def _counterexample(key: str, statement: str, deep: bool, promise: Promise | None) -> Outcome:
    """The shortest run of ``VARIANTS[key]`` (atomic client) in which two clients hold one partition,
    exported as a history; and where the safety induction breaks on that variant."""
    depth = promise.length if promise is not None and promise.length else DEFAULT_SEARCH_DEPTH
    variant = VARIANTS[key].but(atomic_client=True)
    r = bmc(variant, SEARCH_SIZES, "no-double-ownership", depth + (4 if deep else 0), minimal=True, kafka_requests=True)
    why = induct(variant, lemmas_for(variant, ReconciliationModel(variant).no_double_ownership))
    detail: dict[str, Any] = {
        "variant": variant.describe(), "property": "no-double-ownership", "sizes": dict(SEARCH_SIZES),
        "not_inductive": [{"action": a, "lemma": lem, "z3": z} for a, lem, z in why.failures],
    }
    size = f"{SEARCH_SIZES['M']} members x {SEARCH_SIZES['P']} partition"
    if not r.violated or r.run is None:
        return Outcome(UNKNOWN, f"{size}: no counterexample within {r.depth} steps", detail=detail)
    detail["trace"] = r.run.describe()
    detail["steps"] = [s.label(r.run.member_names()) for s in r.run.steps]
    detail["history"] = history_document(r.run, statement)
    return Outcome(COUNTEREXAMPLE, f"{size}, shortest run: {r.run.length} steps", length=r.run.length, detail=detail)


def _epochs(deep: bool, promise: Promise | None) -> Outcome:
    """Member epochs monotone, and moved only after revocation: today's builder, with and without
    KAFKA-19449's fix, every client."""
    detail: dict[str, Any] = {"properties": list(STEP_PROPERTIES), "runs": {}}
    failures = []
    for key in ("today", "kafka-19449-fix"):
        for client, var in CLIENTS(VARIANTS[key]).items():
            r = check_epochs(var)
            detail["runs"][f"{key}/{client}"] = {"proved": r.proved, "seconds": round(r.seconds, 2)}
            failures += [{"variant": f"{key}/{client}", "action": a, "lemma": lem, "z3": z} for a, lem, z in r.invariant_failures]
            failures += [{"variant": f"{key}/{client}", "property": name, "z3": z} for name, z in r.step_failures]
    if failures:
        detail["failures"] = failures
        return Outcome(UNKNOWN, "a step property or its invariant failed", detail=detail)
    return Outcome(PROVED, "all group sizes, all run lengths", detail=detail)


def _bounded(deep: bool, promise: Promise | None) -> Outcome:
    """No run of up to BOUNDED_DEPTH steps at 2 x 2 breaks safety, without any lemma (the lagging client;
    --deep: deeper, and the lossy client too)."""
    depth = BOUNDED_DEEP_DEPTH if deep else BOUNDED_DEPTH
    detail: dict[str, Any] = {"sizes": dict(BOUNDED_SIZES), "depth": depth, "runs": {}}
    size = f"{BOUNDED_SIZES['M']} members x {BOUNDED_SIZES['P']} partitions"
    clients = ("lagging", "lossy") if deep else ("lagging",)
    for key in ("today", "pr-15212"):
        for client in clients:
            r = bmc(CLIENTS(VARIANTS[key])[client], BOUNDED_SIZES, "no-double-ownership", depth, minimal=False)
            detail["runs"][f"{key}/{client}"] = {"violated": r.violated, "seconds": round(r.seconds, 2)}
            if r.violated and r.run is not None:
                detail["trace"] = r.run.describe()
                return Outcome(COUNTEREXAMPLE, f"{size}: {key} ({client} client) broken", length=r.depth, detail=detail)
    return Outcome(PROVED, f"{size}, every run of up to {depth} steps", detail=detail)


def _convergence(deep: bool, promise: Promise | None) -> Outcome:
    """T8 for every group size: the start invariant proved inductive, then the level checks
    (``convergence.prove_levels``), for today's builder with and without KAFKA-19449's fix, for the
    atomic client and the lagging one that applies each answer before its next heartbeat. At 2 x 2,
    for the atomic client (a lagging client that applies each answer at once runs the same way, so
    its bound is no lower), 2 rounds do not suffice and 3 do, by unrolling (--deep: 3 rounds also at
    2 x 3 and 3 x 2, a cross-check of the parametric proof)."""
    detail: dict[str, Any] = {"rounds": CONVERGENCE_ROUNDS, "variants": {}, "sizes": []}
    for key, client in ((k, c) for k in CONVERGENCE_VARIANTS for c in ("atomic", "lagging")):
        variant, key = CLIENTS(VARIANTS[key])[client], f"{key}/{client}"
        lemmas = invariant(variant)
        ind = induct(variant, lemmas)
        levels = prove_levels(variant, lemmas)
        detail["variants"][key] = {"variant": variant.describe(), "lemmas": [n for n, _ in lemmas],
                                   "induction_queries": ind.queries, "levels": dict(levels.answers),
                                   "seconds": round(ind.seconds + levels.seconds, 2)}
        if not ind.proved:
            detail["not_inductive"] = [{"variant": key, "action": a, "lemma": lem, "z3": z} for a, lem, z in ind.failures]
            return Outcome(UNKNOWN, f"{key}: the start invariant is not inductive", detail=detail)
        if not levels.proved:
            detail["level_failures"] = [{"variant": key, "check": c, "z3": z} for c, z in levels.failures.items()]
            return Outcome(UNKNOWN, f"{key}: level checks failed: {', '.join(levels.failures)}", detail=detail)
    checks = [(key, sz, r) for key in CONVERGENCE_VARIANTS for sz in CONVERGENCE_SIZES
              for r in (CONVERGENCE_ROUNDS - 1, CONVERGENCE_ROUNDS)]
    if deep:
        checks += [(key, sz, CONVERGENCE_ROUNDS) for key in CONVERGENCE_VARIANTS for sz in CONVERGENCE_DEEP_SIZES]
    for key, sz, rounds in checks:
        r = check_rounds(VARIANTS[key].but(atomic_client=True), sz, rounds)
        detail["sizes"].append({"variant": key, "M": sz["M"], "P": sz["P"], "rounds": rounds, "converged": r.holds,
                                "stuck": r.witness or [], "seconds": round(r.seconds, 2)})
        size = f"{sz['M']} x {sz['P']} ({key})"
        if rounds == CONVERGENCE_ROUNDS and not r.holds:
            return Outcome(COUNTEREXAMPLE, f"{size}: not converged after {rounds} rounds ({', '.join(r.witness or [])})",
                           detail=detail)
        if rounds < CONVERGENCE_ROUNDS and r.holds:
            return Outcome(UNKNOWN, f"{size}: converged after {rounds} rounds already: the bound is not tight", detail=detail)
    tight = ", ".join(f"{sz['M']} x {sz['P']}" for sz in CONVERGENCE_SIZES)
    return Outcome(PROVED, f"every group size: {CONVERGENCE_ROUNDS} heartbeat rounds from every state of the invariant "
                   f"({CONVERGENCE_ROUNDS - 1} do not suffice at {tight})", detail=detail)


def _stmt(name: str, claim: str, run: Any, deep_only: bool = False) -> Statement:
    return Statement(name, claim, run, deep_only)


STATEMENTS: tuple[Statement, ...] = (
    _stmt("reconciliation.safe",
          "KIP-848 reconciliation (today's builder) never lets two members hold one partition, counting partitions being revoked",
          lambda deep, promise: _theorem(VARIANTS["today"])),
    _stmt("reconciliation.pr-15212.safe",
          "the January 2024 builder with PR #15212's partition-epoch bookkeeping is safe",
          lambda deep, promise: _theorem(VARIANTS["pr-15212"])),
    _stmt("reconciliation.today.old-bookkeeping.safe",
          "today's builder would be safe even with the bookkeeping of before PR #15212",
          lambda deep, promise: _theorem(VARIANTS["today-old-bookkeeping"])),
    _stmt("reconciliation.kafka-16147",
          "before PR #15212, a partition pending revocation given back to its member loses its epoch and goes to a second member",
          lambda deep, promise: _counterexample("kafka-16147", "reconciliation.kafka-16147", deep, promise)),
    _stmt("reconciliation.kafka-19449-fix.safe",
          "today's builder with KAFKA-19449's fix (a partition the member itself revokes counts as released) is safe",
          lambda deep, promise: _theorem(VARIANTS["kafka-19449-fix"])),
    _stmt("reconciliation.kafka-19449-fix.old-bookkeeping",
          "KAFKA-19449's fix on the bookkeeping before PR #15212 would reopen KAFKA-16147",
          lambda deep, promise: _counterexample("kafka-19449-fix-old-bookkeeping",
                                                "reconciliation.kafka-19449-fix.old-bookkeeping", deep, promise)),
    _stmt("reconciliation.epochs",
          "member epochs never go down, and move only once the client holds none of the partitions it was asked to revoke",
          _epochs),
    _stmt("reconciliation.bounded",
          f"at 2 members x 2 partitions, no run of up to {BOUNDED_DEPTH} steps (--deep: {BOUNDED_DEEP_DEPTH}) breaks safety (no lemma used)",
          _bounded),
    _stmt("reconciliation.convergence",
          f"once targets and membership stop changing, every member is STABLE at the group epoch within {CONVERGENCE_ROUNDS} "
          "heartbeat rounds, for every group size",
          _convergence),
)
