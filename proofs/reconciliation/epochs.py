"""Two properties of a heartbeat step, for every group size: member epochs never go down, and a
member's epoch moves only once its client no longer holds a partition it was asked to revoke.

They are properties of a *step* (the state before and after), checked like an induction step:
``lemmas(s) ∧ guard ∧ ¬property(s, s')`` must be unsat for the ``Heartbeat`` action, the only one
that changes the epoch of a member that stays in the group (``Join`` starts a new record at 0,
``Leave`` and ``Expire`` remove it). The lemmas are the safety invariant and ``epoch_lemmas``, all
proved inductive by the same call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import z3

from ..logic import AND, IMP, NOT, Symbolic, to_z3
from ..protocol.state import ChoiceState, State, SymbolicState
from .engine import induct
from .lemmas import epoch_lemmas, lemmas_for
from .model import CHOICES, STATE, ReconciliationModel, Variant

__all__ = ["STEP_PROPERTIES", "EpochResult", "check_epochs"]

P = "P"

#: name -> property of (view, member, state before, state after)
STEP_PROPERTIES: dict[str, Callable[[Any, Any, State, State], Any]] = {
    "member-epoch-monotone": lambda v, m, s, t: IMP(s.inm(m), t.ep(m) >= s.ep(m)),
    "epoch-moves-after-revocation": lambda v, m, s, t: IMP(
        t.ep(m) > s.ep(m), v.forall((P,), lambda p: IMP(s.rev(m, p), NOT(s.own(m, p))))),
}


@dataclass(frozen=True)
class EpochResult:
    variant: Variant
    invariant_failures: tuple[tuple[str, str, str], ...]
    step_failures: tuple[tuple[str, str], ...]  # (property, z3 answer)
    seconds: float

    @property
    def proved(self) -> bool:
        return not self.invariant_failures and not self.step_failures


def check_epochs(variant: Variant, timeout_ms: int = 20000) -> EpochResult:
    """Both step properties for ``variant``'s heartbeat, under its proved invariant."""
    start = time.perf_counter()
    model = ReconciliationModel(variant)
    lemmas = lemmas_for(variant, model.no_double_ownership) + epoch_lemmas()
    inv = induct(variant, lemmas, timeout_ms=timeout_ms)
    v = Symbolic()
    s = SymbolicState(v, STATE, "s")
    action = model.action("Heartbeat")
    m = v.fresh("M", "m")
    effect = model.effect(action, v, s, (m,), ChoiceState(v, CHOICES, "c") if action.uses_choice else None)
    t = model.successor(s, effect)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    for _, fn in lemmas:
        solver.add(to_z3(fn(v, s)))
    solver.add(to_z3(AND(effect.guard, effect.assume)))
    failures = []
    for name, prop in STEP_PROPERTIES.items():
        solver.push()
        solver.add(to_z3(NOT(prop(v, m, s, t))))
        answer = solver.check()
        solver.pop()
        if answer != z3.unsat:
            failures.append((name, str(answer)))
    return EpochResult(variant, inv.failures, tuple(failures), time.perf_counter() - start)
