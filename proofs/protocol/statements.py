"""The protocol statements: the safety theorems, the historical counterexamples, the fail-over finding.

A *theorem* is checked by induction over the symbolic view (every group size, every run length).
A *counterexample* is found by bounded search at 2 members x 1 partition; its length is the
number of steps, and always the shortest: the search goes to the promised length (``deep``: four steps
past it) and then proves no shorter run exists. For every counterexample the
induction of the corresponding safe theorem is run on the broken variant too, and the (action,
lemma) pairs that stop being inductive are reported: they say *why* the variant breaks.
"""

from __future__ import annotations

from typing import Any

from ..outcome import COUNTEREXAMPLE, PROVED, UNKNOWN, Outcome, Promise, Statement
from .engine import bmc, induct
from .explicit import compile_model
from .lemmas import lemmas_for
from .model import ProtocolModel, Variant
from .vector import search_frontiers, vectorize

__all__ = ["STATEMENTS", "VARIANTS", "SEARCH_SIZES", "BOUNDED_DEPTH"]

#: Where counterexamples are searched: two members are needed for double consumption, one partition suffices.
SEARCH_SIZES = {"M": 2, "P": 1}

VARIANTS: dict[str, Variant] = {
    "eager": Variant("eager", "top", failover="persisted"),
    "cooperative": Variant("cooperative", "top", failover="persisted"),
    "cooperative-trust-all": Variant("cooperative", "all", failover="persisted"),
    "kafka-7026": Variant("eager", "all", failover="persisted"),
    "one-round": Variant("cooperative", "top", rounds=1, failover="persisted"),
    "kafka-12983": Variant("cooperative", "top", reset_bug=True, failover="persisted"),
    "kafka-12984": Variant("cooperative", "all", reset_bug=True, failover="persisted"),
    "failover-top": Variant("eager", "top", failover="lost"),
    "failover-unique": Variant("eager", "unique", failover="lost"),
    "failover-cooperative": Variant("cooperative", "top", failover="lost"),
}


def _theorem(variant: Variant, prop: str = "no-double-consumption") -> Outcome:
    model = ProtocolModel(variant)
    lemmas = lemmas_for(variant, model.prop(prop))
    r = induct(variant, lemmas)
    detail: dict[str, Any] = {
        "variant": variant.to_dict(),
        "property": prop,
        "lemmas": [n for n, _ in lemmas],
        "queries": r.queries,
        "actions": [a.name for a in model.actions],
    }
    if r.proved:
        return Outcome(PROVED, "all group sizes, all run lengths", detail=detail)
    detail["not_inductive"] = [{"action": a, "lemma": lem, "z3": z} for a, lem, z in r.failures]
    return Outcome(UNKNOWN, "induction failed", detail=detail)


DEFAULT_SEARCH_DEPTH = 24


def _counterexample(variant: Variant, prop: str, promise: Promise | None, deep: bool) -> Outcome:
    """Bounded search to the promised length (deep: a few steps further, then down to the shortest),
    plus the (action, lemma) pairs where the safe theorem's induction breaks on this variant."""
    depth = promise.length if promise is not None and promise.length else DEFAULT_SEARCH_DEPTH
    # Always minimal: a run found within the promised length is shortened until the next shorter
    # query is unsat, so the reported length is the shortest one and a wrong promise (19 instead of
    # 18) cannot be confirmed by a solver that happened to return a longer run. --deep searches past
    # the promise, so a promise that is too *short* is caught as well as one that is too long.
    r = bmc(variant, SEARCH_SIZES, prop, depth + (4 if deep else 0), minimal=True)
    model = ProtocolModel(variant)
    why = induct(variant, lemmas_for(variant, model.prop(prop)))
    detail: dict[str, Any] = {
        "variant": variant.to_dict(),
        "property": prop,
        "sizes": dict(SEARCH_SIZES),
        "minimal": r.violated,
        "not_inductive": [{"action": a, "lemma": lem, "z3": z} for a, lem, z in why.failures],
    }
    size = f"{SEARCH_SIZES['M']} members x {SEARCH_SIZES['P']} partition"
    if not r.violated:
        return Outcome(UNKNOWN, f"{size}: no counterexample within {r.depth} steps", detail=detail)
    assert r.trace is not None
    detail["trace"] = r.trace.describe()
    detail["steps"] = [s.label(r.trace.member_names()) for s in r.trace.steps]
    bound = f"{size}, shortest run: {r.trace.length} steps"
    return Outcome(COUNTEREXAMPLE, bound, length=r.trace.length, detail=detail)


#: --deep: how far the bounded search of the safe theorems goes (2 members x 1 partition). Explicit-state
#: breadth-first search over whole frontiers (vector.py, the model explicit.py compiles); BMC with Z3
#: did not get past depth 30 here (proofs/README.md).
BOUNDED_DEPTH = 100
#: The theorems the bounded search re-checks without the hand-written lemmas.
FIXED_SIZE_THEOREMS = ("eager", "cooperative")


def _bounded(deep: bool, promise: Promise | None) -> Outcome:
    """No run of up to ``BOUNDED_DEPTH`` steps breaks the eager or the cooperative theorem (a check on
    the induction that does not depend on the lemmas: a wrong lemma cannot hide a short trace).
    Every state reachable within the bound is enumerated (up to member renaming and the generation
    renumbering explicit.py justifies); if no new state appears at some depth, every depth is covered."""
    detail: dict[str, Any] = {"sizes": dict(SEARCH_SIZES), "depth": BOUNDED_DEPTH, "method": "explicit-state BFS (frontiers as arrays)", "runs": {}}
    size = f"{SEARCH_SIZES['M']} members x {SEARCH_SIZES['P']} partition"
    saturated = True
    for key in FIXED_SIZE_THEOREMS:
        r = search_frontiers(vectorize(compile_model(VARIANTS[key], SEARCH_SIZES)), "no-double-consumption", BOUNDED_DEPTH)
        detail["runs"][key] = {"violated": r.violated, "depth": r.depth, "saturated": r.saturated,
                               "states": r.states, "seconds": round(r.seconds, 1)}
        if r.violated:
            detail["bad_state"] = r.bad_state
            return Outcome(COUNTEREXAMPLE, f"{size}: {key} broken", length=r.depth, detail=detail)
        saturated = saturated and r.saturated
    if saturated:
        return Outcome(PROVED, f"{size}, every run length (the search saturated)", detail=detail)
    return Outcome(PROVED, f"{size}, every run of up to {BOUNDED_DEPTH} steps", detail=detail)


def _stmt(name: str, claim: str, run: Any, deep_only: bool = False) -> Statement:
    return Statement(name, claim, run, deep_only)


STATEMENTS: tuple[Statement, ...] = (
    _stmt("protocol.eager.safe",
          "eager rebalancing with a generation-aware assignor never lets two members consume one partition",
          lambda deep, promise: _theorem(VARIANTS["eager"])),
    _stmt("protocol.cooperative.safe",
          "cooperative rebalancing with the two-round rule never lets two members consume one partition",
          lambda deep, promise: _theorem(VARIANTS["cooperative"])),
    _stmt("protocol.cooperative.trust-all.safe",
          "with today's client, cooperative rebalancing stays safe even if the assignor trusts every claim",
          lambda deep, promise: _theorem(VARIANTS["cooperative-trust-all"])),
    _stmt("protocol.eager.kafka-7026",
          "an eager assignor that trusts every claim (sticky 2.2) lets two members consume one partition",
          lambda deep, promise: _counterexample(VARIANTS["kafka-7026"], "no-double-consumption", promise, deep)),
    _stmt("protocol.cooperative.one-round",
          "a cooperative assignor that moves a claimed partition in one round lets two members consume it",
          lambda deep, promise: _counterexample(VARIANTS["one-round"], "no-double-consumption", promise, deep)),
    _stmt("protocol.cooperative.kafka-12983",
          "a client that keeps its partitions after a reset in a join round (before 3.0) consumes them twice",
          lambda deep, promise: _counterexample(VARIANTS["kafka-12983"], "no-double-consumption", promise, deep)),
    _stmt("protocol.cooperative.kafka-12984",
          "with that client, an assignor that trusts every claim hands one partition to two members",
          lambda deep, promise: _counterexample(VARIANTS["kafka-12984"], "assignment-unique", promise, deep)),
    _stmt("protocol.failover.top-generation",
          "after a fail-over without persisted state, trusting every top-generation claim lets two members consume one partition",
          lambda deep, promise: _counterexample(VARIANTS["failover-top"], "no-double-consumption", promise, deep)),
    _stmt("protocol.failover.unique-generation",
          "after a fail-over without persisted state, the unique-top-generation rule stays safe (eager)",
          lambda deep, promise: _theorem(VARIANTS["failover-unique"])),
    _stmt("protocol.failover.cooperative",
          "after a fail-over without persisted state, cooperative rebalancing stays safe",
          lambda deep, promise: _theorem(VARIANTS["failover-cooperative"])),
    _stmt("protocol.bounded",
          f"at 2 members x 1 partition, no run of up to {BOUNDED_DEPTH} steps breaks the eager or cooperative theorem",
          _bounded, deep_only=True),
)
