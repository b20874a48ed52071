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
from .convergence import check_rounds, progress_lemmas
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
#: Rounds of heartbeats to converge, and the sizes it is checked at (default, --deep).
CONVERGENCE_ROUNDS = 3
CONVERGENCE_SIZES = ({"M": 2, "P": 2},)
CONVERGENCE_DEEP_SIZES = ({"M": 2, "P": 3}, {"M": 3, "P": 2})

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
    r = bmc(variant, SEARCH_SIZES, "no-double-ownership", depth + (4 if deep else 0), minimal=True)
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
    """Every member converged within CONVERGENCE_ROUNDS rounds, and not within one fewer."""
    variant = VARIANTS["today"].but(atomic_client=True)
    model = ReconciliationModel(variant)
    lemmas = lemmas_for(variant, model.no_double_ownership) + progress_lemmas()
    ind = induct(variant, lemmas)
    detail: dict[str, Any] = {"variant": variant.describe(), "rounds": CONVERGENCE_ROUNDS,
                              "lemmas": [n for n, _ in lemmas], "queries": ind.queries, "sizes": []}
    if not ind.proved:
        detail["not_inductive"] = [{"action": a, "lemma": lem, "z3": z} for a, lem, z in ind.failures]
        return Outcome(UNKNOWN, "the start invariant is not inductive", detail=detail)
    sizes = CONVERGENCE_SIZES + (CONVERGENCE_DEEP_SIZES if deep else ())
    checks = [(variant, sz) for sz in sizes]
    if deep:  # KAFKA-19449's fix saves a heartbeat in some runs, not in the worst one
        fixed = VARIANTS["kafka-19449-fix"].but(atomic_client=True)
        ind = induct(fixed, lemmas_for(fixed, model.no_double_ownership) + progress_lemmas())
        if not ind.proved:
            detail["not_inductive"] = [{"action": a, "lemma": lem, "z3": z} for a, lem, z in ind.failures]
            return Outcome(UNKNOWN, "the start invariant is not inductive with KAFKA-19449's fix", detail=detail)
        checks.append((fixed, CONVERGENCE_SIZES[0]))
    for var, sz in checks:
        enough = check_rounds(var, sz, CONVERGENCE_ROUNDS)
        fewer = check_rounds(var, sz, CONVERGENCE_ROUNDS - 1)
        detail["sizes"].append({"M": sz["M"], "P": sz["P"], "kafka_19449_fix": var.kafka_19449_fix, "holds": enough.holds,
                                "tight": not fewer.holds, "seconds": round(enough.seconds + fewer.seconds, 2)})
        if not enough.holds:
            return Outcome(COUNTEREXAMPLE, f"{sz['M']} x {sz['P']}: not converged after {CONVERGENCE_ROUNDS} rounds "
                           f"({', '.join(enough.witness or [])})", detail=detail)
    shown = ", ".join(f"{sz['M']} x {sz['P']}" for sz in sizes)
    shown += ", and 2 x 2 with KAFKA-19449's fix" if deep else ""
    return Outcome(PROVED, f"{CONVERGENCE_ROUNDS} rounds of heartbeats at {shown}, from every state of the invariant",
                   detail=detail)


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
          f"once targets and membership stop changing, every member is STABLE at the group epoch within {CONVERGENCE_ROUNDS} heartbeat rounds",
          _convergence),
)
