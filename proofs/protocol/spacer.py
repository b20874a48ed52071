"""Fixed-size invariants by IC3/PDR (Z3's Spacer), exported as certificates and re-checked.

At a fixed size (2 members x 1 partition) the protocol is a transition system over a fixed set of
Boolean and (unbounded) integer variables. Spacer solves the Horn clauses

    Init(s) -> Inv(s);   Inv(s) & T(s, t) -> Inv(t);   Inv(s) & ~Safe(s) -> false

and, when the system is safe, returns ``Inv``: an inductive invariant found without any lemma
written by hand. The invariant is *exported* as SMT-LIB text (the certificate) and *re-checked* by
a fresh solver that parses that text and checks the three implications itself: the certificate is
trusted only after the check, not because Spacer produced it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import z3

from ..logic import NOT, Concrete, to_z3
from .engine import transition
from .model import CHOICES, STATE, ProtocolModel, Variant
from .state import ChoiceState, ConcreteState

__all__ = ["SpacerResult", "spacer_invariant", "recheck_certificate"]


@dataclass(frozen=True)
class SpacerResult:
    answer: str  # "safe" (an invariant was found), "unsafe", or z3's reason it gave up
    certificate: str | None  # the invariant as SMT-LIB: declarations and one (assert ...)
    rechecked: bool
    seconds: float
    size: int = 0  # the certificate's length in characters


def _state_consts(state: ConcreteState) -> list[z3.ExprRef]:
    return list(state.consts.values())


def _step(variant: Variant, sizes: dict[str, int]):
    """The concrete view at ``sizes``, the model, the pre- and post-states, the choices, and one
    transition's constraints and selector: what the query and its re-check both pose."""
    v = Concrete(sizes)
    model = ProtocolModel(variant)
    s = ConcreteState(v, STATE, "s")
    t = ConcreteState(v, STATE, "t")
    choice = ChoiceState(v, CHOICES, "c")
    cons, sel, _ = transition(model, v, s, t, "", choice)
    return v, model, s, t, choice, cons, sel


def spacer_invariant(variant: Variant, sizes: dict[str, int], prop: str = "no-double-consumption",
                     timeout_ms: int = 600000) -> SpacerResult:
    start = time.perf_counter()
    v, model, s, t, choice, cons, sel = _step(variant, sizes)
    xs, ys = _state_consts(s), _state_consts(t)
    extra = [sel] + list(choice.inner.consts.values())  # type: ignore[attr-defined]
    inv = z3.Function("Inv", *[x.sort() for x in xs], z3.BoolSort())
    solver = z3.SolverFor("HORN")
    solver.set("timeout", timeout_ms)
    solver.add(z3.ForAll(xs, z3.Implies(to_z3(model.init(v, s)), inv(*xs))))
    solver.add(z3.ForAll(xs + ys + extra, z3.Implies(z3.And(inv(*xs), *cons), inv(*ys))))
    solver.add(z3.ForAll(xs, z3.Implies(z3.And(inv(*xs), to_z3(NOT(model.prop(prop)(v, s)))), False)))
    answer = solver.check()
    if answer == z3.unsat:
        return SpacerResult("unsafe", None, False, time.perf_counter() - start)
    if answer != z3.sat:
        return SpacerResult(f"unknown ({solver.reason_unknown()})", None, False, time.perf_counter() - start)
    interp = solver.model()[inv]
    # the interpretation is a body over de Bruijn variables Var(0..n-1), one per argument
    body = interp.else_value() if isinstance(interp, z3.FuncInterp) else interp
    formula = z3.substitute_vars(body, *xs)
    decls = "\n".join(f"(declare-const {x.sexpr()} {x.sort().sexpr()})" for x in xs)
    certificate = f"{decls}\n(assert {formula.sexpr()})\n"
    ok = recheck_certificate(variant, sizes, certificate, prop)
    return SpacerResult("safe", certificate, ok, time.perf_counter() - start, len(certificate))


def recheck_certificate(variant: Variant, sizes: dict[str, int], certificate: str, prop: str = "no-double-consumption") -> bool:
    """Parse the exported invariant and check, with fresh solvers: init => Inv, Inv & T => Inv', Inv => safe."""
    v, model, s, t, _, cons, _ = _step(variant, sizes)
    parsed = z3.parse_smt2_string(certificate)
    inv_s = z3.And(*parsed)
    renaming = [(x, y) for x, y in zip(_state_consts(s), _state_consts(t))]
    inv_t = z3.substitute(inv_s, *renaming)

    def valid(*hyps_and_goal: Any) -> bool:
        *hyps, goal = hyps_and_goal
        solver = z3.Solver()
        solver.add(*hyps, z3.Not(goal))
        return solver.check() == z3.unsat

    return (valid(to_z3(model.init(v, s)), inv_s)
            and valid(inv_s, *cons, inv_t)
            and valid(inv_s, to_z3(model.prop(prop)(v, s))))
