"""Convergence of reconciliation once the world is quiet, checked at fixed sizes.

The claim: from **any** state that satisfies the safety invariant (``lemmas.lemmas_for`` and
``progress_lemmas``, proved inductive: they hold in every reachable state), if the target stops changing, nobody joins
or leaves, each client applies every response before its next heartbeat, and each member sends one
heartbeat per *round* (in any order within the round), then after ``R`` rounds every member is
STABLE at the group epoch and holds exactly its target. Starting from the invariant rather than
from the initial state covers every reachable state without enumerating runs.

Checked by one query per size: the invariant at the start, ``R`` rounds of heartbeats whose order
within each round is a free choice (a permutation of the members), and "someone not converged" at
the end; unsat means the bound holds at that size. The same query for ``R - 1`` rounds must be sat,
so the bound is the least one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import z3

from ..logic import AND, IMP, NOT, OR, Concrete, to_z3
from ..protocol.state import ConcreteState, State
from .lemmas import epoch_lemmas, lemmas_for
from .model import FREE, STABLE, STATE, ReconciliationModel, Variant

__all__ = ["progress_lemmas", "converged", "check_rounds", "ConvergenceResult"]

M, P = "M", "P"


def progress_lemmas() -> list[tuple[str, Any]]:
    """Facts of every reachable state (today's builder, atomic client, no lost response) that convergence
    needs beyond safety; ``engine.induct`` proves them inductive together with the safety lemmas."""
    def held(s: State, x: Any, p: Any) -> Any:
        return OR(s.asg(x, p), s.rev(x, p))

    return epoch_lemmas() + [
        # A partition epoch belongs to some member's record: nothing leaks, so every wait ends.
        ("epoch-has-holder", lambda v, s: v.forall((P,), lambda p: IMP(
            s.pe(p) != FREE, v.exists((M,), lambda x: AND(s.inm(x), held(s, x, p)))))),
        ("target-unique", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(AND(s.tgt(x, p), s.tgt(y, p)), v.same(x, y)))),
        # No response is lost: the client holds exactly its record's assignment, at its epoch.
        ("client-holds-assigned", lambda v, s: v.forall((M, P), lambda x, p: s.own(x, p) == s.asg(x, p))),
        ("client-current", lambda v, s: v.forall((M,), lambda x: IMP(s.inm(x), AND(s.cin(x), s.cep(x) == s.ep(x))))),
    ]


def converged(v: Any, s: State) -> Any:
    """Every member STABLE at the group epoch, holding exactly its target."""
    return v.forall((M,), lambda x: IMP(s.inm(x), AND(
        s.cst(x) == STABLE, s.ep(x) == s.E(), v.forall((P,), lambda p: s.own(x, p) == s.tgt(x, p)))))


@dataclass(frozen=True)
class ConvergenceResult:
    sizes: dict[str, int]
    rounds: int
    holds: bool  # no state of the invariant fails to converge within ``rounds``
    seconds: float
    witness: list[str] | None = None  # when it fails: who is not converged


def check_rounds(variant: Variant, sizes: dict[str, int], rounds: int) -> ConvergenceResult:
    """Is every member converged after ``rounds`` rounds of heartbeats, from every invariant state?"""
    start = time.perf_counter()
    assert variant.atomic_client, "convergence assumes the client applies each response before its next heartbeat"
    v = Concrete(sizes)
    model = ReconciliationModel(variant)
    hb = model.action("Heartbeat")
    s0 = ConcreteState(v, STATE, "q0")
    solver = z3.Solver()
    for _, fn in lemmas_for(variant, model.no_double_ownership) + progress_lemmas():
        solver.add(to_z3(fn(v, s0)))
    members = list(v.elems(M))
    s: State = s0
    k = 0
    for r in range(rounds):
        picks = [z3.Int(f"pick{r}_{i}") for i in members]
        solver.add(z3.Distinct(*picks), *[AND(p >= 0, p < len(members)) for p in picks])
        for pick in picks:
            nxt = ConcreteState(v, STATE, f"q{k + 1}")
            for m in members:  # the heartbeat of member ``m`` when picked
                e = model.effect(hb, v, s, (m,), None)
                for var in STATE:
                    for idx in v.tuples(var.dom):
                        upd = e.updates.get(var.name)
                        val = upd(*idx) if upd is not None else s.read(var.name, idx)
                        solver.add(z3.Implies(pick == m, to_z3(nxt.read(var.name, idx) == val)))
            s, k = nxt, k + 1
    solver.add(to_z3(NOT(converged(v, s))))
    answer = solver.check()
    seconds = time.perf_counter() - start
    if answer == z3.unsat:
        return ConvergenceResult(dict(sizes), rounds, True, seconds)
    if answer != z3.sat:  # pragma: no cover - quantifier-free at fixed sizes
        raise RuntimeError(f"convergence: z3 answered {answer}")
    mdl = solver.model()
    stuck = [f"c{m + 1}" for m in members
             if z3.is_false(mdl.eval(to_z3(IMP(s.inm(m), AND(s.cst(m) == STABLE, s.ep(m) == s.E()))), model_completion=True))]
    return ConvergenceResult(dict(sizes), rounds, False, seconds, stuck)
