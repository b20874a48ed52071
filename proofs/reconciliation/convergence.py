"""Convergence of reconciliation once the world is quiet: proved for every group size, and its
bound shown tight at a fixed size.

The claim (T8): from **any** state that satisfies the safety invariant (``lemmas.lemmas_for`` and
``progress_lemmas``, proved inductive: they hold in every reachable state), if the target stops
changing, nobody joins or leaves, no response is lost, each client applies every response before its
next heartbeat, and each member sends at least one heartbeat per *round* (in any order within the
round), then after 3 rounds every member is STABLE at the group epoch and holds exactly its target.
Starting from the invariant rather than from the initial state covers every reachable state
without enumerating runs.

**Every size** (``prove_levels``): a per-member progress measure with three levels of the
coordinator's record, each implying the one below (``LEVELS``): 1, the record lists no partition
outside the member's target; 2, and the member is at the group epoch with nothing pending
revocation; 3, STABLE there, listing exactly its target. Over the symbolic view (quantified members
and partitions), under the invariant, one transition each:

* ``raise-k``: if every member is at level k - 1 (nothing for k = 1), a member's own heartbeat, sent
  once its client has applied the last answer (``applied``), leaves it at level k;
* ``keep-k``: another member's heartbeat (and, for the lagging client, any ``Revoke``/``Assign``
  step, the member's own too) leaves a member's level k (and its membership) as it was;
* ``implies-k``: level k implies level k - 1; ``enabled``: every member of the group can heartbeat;
  ``end``: everyone at level 3 whose client has applied the last answer is ``converged``; for the
  lagging client, ``applies`` (``Revoke`` then ``Assign`` leave it holding what its record assigns)
  and ``applied-kept`` (no other member's step undoes that).

Then, by induction on rounds: at the start of round k every member is at level k - 1; every step
of the round keeps that (``keep-(k-1)`` for the others, ``raise-k`` and ``implies-k`` for the member
itself) and the invariant; so each member's (first) heartbeat of round k raises it to level k,
which the later steps of the round keep (``keep-k``, and ``raise-k`` for its own further
heartbeats). After round 3 every member is at level 3, and once each client has applied its last
answer (the atomic client has, within the heartbeat), every member is converged. ``needed-k`` asks for a state where every
member is at level k - 1 and one is not at level k (sat): no level is implied by the one below, so
each round does work.

**Tight** (``check_rounds``): at a fixed size, the invariant at the start, ``R`` rounds of exactly one
heartbeat per member in a free order (a permutation), and "someone not converged" at the end.
For ``R = 2`` it is sat at 2 x 2 (2 rounds do not suffice); ``R = 3`` (unsat) is a cross-check of the
parametric proof at fixed sizes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import z3

from ..logic import AND, IMP, NOT, OR, Concrete, Symbolic, to_z3
from ..protocol.state import ConcreteState, State, SymbolicState
from .lemmas import Lemma, epoch_lemmas, lemmas_for
from .model import FREE, STABLE, STATE, ReconciliationModel, Variant

__all__ = ["progress_lemmas", "converged", "check_rounds", "ConvergenceResult", "LEVELS", "LevelResult",
           "prove_levels", "invariant", "applied"]

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
    for _, fn in invariant(variant):
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


# ------------------------------------------------------------------------------------------------
# Every size: a per-member progress measure, one transition per check over the symbolic view


def invariant(variant: Variant) -> list[Lemma]:
    """The start invariant of convergence: the safety lemmas and ``progress_lemmas`` (``engine.induct``
    proves the list inductive for ``variant``). The lagging client holds what its record lists only
    once it has applied the answer, so ``client-holds-assigned`` is not a lemma for it; the round
    assumption gives it at each of its heartbeats instead (``applied``)."""
    progress = [lem for lem in progress_lemmas() if variant.atomic_client or lem[0] != "client-holds-assigned"]
    return lemmas_for(variant, ReconciliationModel(variant).no_double_ownership) + progress


def applied(v: Any, s: State, x: Any) -> Any:
    """``x``'s client holds exactly what its record assigns: it has applied the last answer."""
    return v.forall((P,), lambda p: s.own(x, p) == s.asg(x, p))


def _lists_only_target(v: Any, s: State, x: Any) -> Any:
    return v.forall((P,), lambda p: IMP(s.asg(x, p), s.tgt(x, p)))


def _at_epoch_nothing_to_revoke(v: Any, s: State, x: Any) -> Any:
    return AND(_lists_only_target(v, s, x), s.ep(x) == s.E(), v.forall((P,), lambda p: NOT(s.rev(x, p))))


def _stable_holding_target(v: Any, s: State, x: Any) -> Any:
    return AND(_at_epoch_nothing_to_revoke(v, s, x), s.cst(x) == STABLE,
               v.forall((P,), lambda p: s.asg(x, p) == s.tgt(x, p)))


#: Level k of member ``x`` (k = 1, 2, 3), for a member of the group; each implies the one below. The
#: levels are about the coordinator's record; with ``applied`` (the client holds what the record
#: assigns), level 3 is ``converged``'s per-member condition.
LEVELS: tuple[tuple[str, Any], ...] = (
    ("lists-only-target", _lists_only_target),
    ("at-group-epoch-nothing-to-revoke", _at_epoch_nothing_to_revoke),
    ("stable-listing-target", _stable_holding_target),
)


def _level(k: int, v: Any, s: State, x: Any) -> Any:
    """``x`` is at level ``k`` (level 0: anything), or is not in the group."""
    return True if k == 0 else IMP(s.inm(x), LEVELS[k - 1][1](v, s, x))


def _membership_kept(s: State, t: State, x: Any) -> Any:
    """A step neither adds ``x`` to the group nor removes it (the rounds quantify over one membership)."""
    return s.inm(x) == t.inm(x)


@dataclass(frozen=True)
class LevelResult:
    variant: Variant
    answers: dict[str, str]  # check -> Z3's answer
    seconds: float

    @property
    def failures(self) -> dict[str, str]:
        """The checks whose answer is not the one the proof needs (unsat; sat for ``needed-k``)."""
        return {name: a for name, a in self.answers.items() if a != ("sat" if name.startswith("needed-") else "unsat")}

    @property
    def proved(self) -> bool:
        return not self.failures


def prove_levels(variant: Variant, lemmas: list[Lemma] | None = None, *, timeout_ms: int = 20000) -> LevelResult:
    """The checks of the module docstring, for every number of members and partitions, under ``lemmas``
    (default: ``invariant(variant)``; the caller proves them inductive). In the quiet phase nobody
    joins, leaves or is given a new target, so the steps are heartbeats and, for the lagging client,
    its ``Revoke`` and ``Assign``; the round assumption is that a client applies each answer before
    its next heartbeat, so a member heartbeats only when ``applied``. For the lagging client three
    more checks: another member's ``Revoke``/``Assign`` (or its own) keeps every level
    (``keep-k-revoke``, ``keep-k-assign``), ``Assign`` is enabled once ``Revoke`` ran and then the
    client holds what its record assigns (``applies``), and no other member's step undoes that
    (``applied-kept``)."""
    assert not variant.lossy, "convergence assumes no lost response"
    assert variant.builder == "today", "the levels are written for today's builder"
    start = time.perf_counter()
    lemmas = invariant(variant) if lemmas is None else lemmas
    model = ReconciliationModel(variant)
    v = Symbolic()
    s = SymbolicState(v, STATE, "s")
    x, y = v.fresh(M, "x"), v.fresh(M, "y")

    def step(name: str, who: Any, st: State = s) -> tuple[Any, State]:
        e = model.effect(model.action(name), v, st, (who,), None)
        return e.guard, model.successor(st, e)

    own_guard, own_next = step("Heartbeat", x)
    others = {"": step("Heartbeat", y)}  # another member's heartbeat; x's own client steps below
    if not variant.atomic_client:
        others |= {"-revoke": step("Revoke", y), "-assign": step("Assign", y)}
    answers: dict[str, str] = {}

    def ask(name: str, *facts: Any) -> None:
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        for _, fn in lemmas:
            solver.add(to_z3(fn(v, s)))
        solver.add(*[to_z3(f) for f in facts])
        answers[name] = str(solver.check())

    def everyone(k: int, st: State) -> Any:
        return v.forall((M,), lambda z: _level(k, v, st, z))

    ask("enabled", s.inm(x), NOT(own_guard))
    for k in range(1, len(LEVELS) + 1):
        ask(f"raise-{k}", everyone(k - 1, s), applied(v, s, x), own_guard, NOT(_level(k, v, own_next, x)))
        for suffix, (guard, nxt) in others.items():
            distinct = NOT(v.same(x, y)) if suffix == "" else True  # a client's own Revoke/Assign too
            ask(f"keep-{k}{suffix}", distinct, _level(k, v, s, x), guard,
                NOT(AND(_membership_kept(s, nxt, x), _level(k, v, nxt, x))))
        if k > 1:
            ask(f"implies-{k}", _level(k, v, s, x), NOT(_level(k - 1, v, s, x)))
        ask(f"needed-{k}", everyone(k - 1, s), NOT(_level(k, v, s, x)))
    if not variant.atomic_client:
        revoke_guard, revoked = step("Revoke", x)
        assign_guard, assigned = step("Assign", x, revoked)
        ask("applies", s.inm(x), revoke_guard, NOT(AND(assign_guard, applied(v, assigned, x))))
        for suffix, (guard, nxt) in others.items():
            ask(f"applied-kept{suffix}", NOT(v.same(x, y)), applied(v, s, x), guard, NOT(applied(v, nxt, x)))
    ask("end", v.forall((M,), lambda z: AND(_level(len(LEVELS), v, s, z), applied(v, s, z))), NOT(converged(v, s)))
    return LevelResult(variant, answers, time.perf_counter() - start)
