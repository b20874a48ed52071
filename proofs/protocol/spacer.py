"""Fixed-size invariants by IC3/PDR (Z3's Spacer), exported as certificates and re-checked.

At a fixed size (2 members x 1 partition) the protocol is a transition system over a fixed set of
Boolean and (unbounded) integer variables. Spacer solves the Horn clauses

    Init(s) -> Inv(s);   Inv(s) & T(s, t) -> Inv(t);   Inv(s) & ~Safe(s) -> false

and, when the system is safe, returns ``Inv``: an inductive invariant found without any lemma
written by hand (``lemmas.py`` is not read here). The invariant is *exported* as SMT-LIB text (the
certificate) and *re-checked* by fresh solvers that parse that text and check, against the model's
own unreduced step (``engine.transition``: every action instance behind a selector, the leader's
choices free), ``init => Inv``, ``Inv & T => Inv'`` and ``Inv => safe``: the certificate is
trusted only after that check, not because Spacer produced it.

**What Spacer is given** (``reduced_system``) is the same system with three changes, none of which
the re-check relies on:

* *ghosts dropped*: ``E`` and ``meme`` are read by no guard, contract, update of another variable
  or property (checked here, as ``explicit.py`` does), so the other variables' runs do not depend
  on them and an invariant over the others is an invariant of the whole system;
* *constants eliminated*: a variable whose every update, in every action enabled once the other
  constants are fixed, gives back its initial value keeps that value in every reachable state (a
  fixpoint; e.g. the persisted generation without fail-over); it is replaced by that value and the
  certificate states it (``pG = -1``...), so the re-check sees a full invariant;
* *generations relative to the group's* (``relative``): each generation variable ``x`` (``g``,
  ``memg``, ``cg``, ``pG``) is replaced by ``x - G``, an invertible linear change of variables, so
  the same invariants exist; Spacer's lemmas then bound one variable where they related two
  (measured: the eager theorem without fail-over 41 s instead of 105-124 s). The invariant is mapped
  back (``d = x - G``) before it is exported;
* *choices enumerated and the selector folded*: ``T`` is one disjunction with one case per action
  instance and value of the leader's free choices (``a``, ``nl``) that the contract allows, instead
  of a selector and free choice variables (one clause, as the measurements in proofs/README.md
  found fastest).

Exactness does not have to be taken on trust: the certificate is re-checked against the full step.

**Measured** (2 x 1, this 2-core machine, the other core busy; Spacer's time varies by about 2x
between runs of the same query): the cooperative theorem 5.6 s (certificate 5-7 k characters, e.g. 56
clauses, re-check 0.1 s), cooperative trusting every claim 7.7 s, cooperative through
fail-overs without state 6.9 s, eager with the unique-top-generation rule through fail-overs without
state 2.6 s, eager without fail-over 41-99 s; the broken variants come back unsafe (one round 2-12 s,
KAFKA-12983 17 s, fail-over with top-generation trust 54 s; KAFKA-7026's 18 steps not within 90 s).
**Not achieved**: the eager theorem with stored fail-over: ``unknown (timeout)`` after 450-520 s in
every configuration tried (one clause; ground_pobs off; generations relative to ``G`` or to ``pG``),
Spacer at level 18-19 with about 1700 lemmas. Tried and slower on the eager theorem without
fail-over: one clause per action instance (level 11 after 120 s), the coordinator state as the
phase of four predicates (132 s), ``st``/``cs`` as Booleans (no answer in 200 s), member symmetry
folded into the head (no answer in 150 s), ``use_euf_gen`` (none in 130 s), global guidance,
``use_iuc=false``, ``arith.solver=6``.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import z3

from ..logic import AND, NOT, Concrete, to_z3
from .engine import transition
from .explicit import GHOSTS, _no_ghost, _subterms
from .model import CHOICES, STATE, ProtocolModel, Variant
from .state import ChoiceState, ConcreteState

__all__ = ["SpacerResult", "ReducedSystem", "reduced_system", "spacer_invariant", "recheck_certificate",
           "certificate_digest"]

#: Spacer options (Z3 fixedpoint parameters) used unless the caller gives others. Proof obligations
#: kept symbolic rather than grounded to one model's values: the eager theorem without fail-over in
#: 105 s instead of 124 s (one run each; other options measured in proofs/README.md were no faster).
DEFAULT_OPTIONS: dict[str, Any] = {"fp.spacer.ground_pobs": False}


@dataclass(frozen=True)
class SpacerResult:
    answer: str  # "safe" (an invariant was found), "unsafe", or z3's reason it gave up
    certificate: str | None  # the invariant as SMT-LIB: declarations and one (assert ...)
    rechecked: bool
    seconds: float  # Spacer's time (building the clauses and solving)
    size: int = 0  # the certificate's length in characters
    recheck_seconds: float = 0.0
    variables: int = 0  # the invariant's arguments (state variables left after the reductions)
    cases: int = 0  # disjuncts of the transition Spacer was given
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReducedSystem:
    """The system Spacer is given: ``xs`` (constants of the concrete state ``s``), their initial
    values, the cases of one step (guard, successor value of each of ``xs``), the bad states, and
    the eliminated constants with their values."""

    xs: tuple[z3.ExprRef, ...]
    init: tuple[z3.ExprRef, ...]
    cases: tuple[tuple[str, z3.ExprRef, tuple[z3.ExprRef, ...]], ...]
    bad: z3.ExprRef
    fixed: tuple[tuple[z3.ExprRef, z3.ExprRef], ...]


def reduced_system(variant: Variant, sizes: dict[str, int], prop: str = "no-double-consumption") -> ReducedSystem:
    """The concrete model at ``sizes`` with ghosts dropped, constants eliminated and choices enumerated."""
    model = ProtocolModel(variant)
    v = Concrete(sizes)
    s = ConcreteState(v, STATE, "s")
    choice = ChoiceState(v, CHOICES, "c")
    kinds = {var.name: var.kind for var in STATE}
    inits = {var.name: var.init for var in STATE}
    slots = [(var.name, idx) for var in STATE if var.name not in GHOSTS for idx in v.tuples(var.dom)]
    xs = [s.consts[slot] for slot in slots]
    ghost_ids = {c.get_id() for (n, _), c in s.consts.items() if n in GHOSTS}
    choice_consts = list(choice.inner.consts.values())  # type: ignore[attr-defined]

    cases: list[tuple[str, z3.ExprRef, list[z3.ExprRef]]] = []
    for a in model.actions:
        for args in v.tuples(a.params):
            e = model.effect(a, v, s, args, choice)
            guard = to_z3(AND(e.guard, e.assume))
            outs = [s.consts[(n, idx)] if e.updates.get(n) is None else v.value(e.updates[n](*idx), kinds[n])
                    for n, idx in slots]
            _no_ghost(ghost_ids, [guard] + outs, a.name)
            read = {x.get_id() for e in [guard] + outs for x in _subterms(e)}
            used = [c for c in choice_consts if c.get_id() in read]
            for bits in itertools.product((False, True), repeat=len(used)):
                sub = [(c, z3.BoolVal(b)) for c, b in zip(used, bits)]
                g = z3.simplify(z3.substitute(guard, *sub)) if sub else guard
                if z3.is_false(g):
                    continue
                label = f"{a.name}({','.join(map(str, args))})" + (f"{list(map(int, bits))}" if used else "")
                cases.append((label, g, [z3.substitute(o, *sub) if sub else o for o in outs]))
    bad = to_z3(NOT(model.prop(prop)(v, s)))
    _no_ghost(ghost_ids, [bad], prop)
    init = [v.value(inits[n], kinds[n]) for n, _ in slots]
    return _eliminate_constants(xs, init, cases, bad)


def _eliminate_constants(xs: list, init: list, cases: list, bad: z3.ExprRef) -> ReducedSystem:
    """Variables that keep their initial value in every step (a fixpoint over the set) become constants."""
    fixed: dict[int, z3.ExprRef] = {}
    changed = True
    while changed:
        changed = False
        sub = [(xs[i], val) for i, val in fixed.items()]
        live = [(g, outs) for _, g, outs in cases if not z3.is_false(z3.simplify(z3.substitute(g, *sub)) if sub else g)]
        for i, x in enumerate(xs):
            if i in fixed:
                continue
            here = sub + [(x, init[i])]
            if all(z3.eq(z3.simplify(z3.substitute(outs[i], *here)), z3.simplify(init[i])) for _, outs in live):
                fixed[i] = init[i]
                changed = True
    sub = [(xs[i], val) for i, val in fixed.items()]
    keep = [i for i in range(len(xs)) if i not in fixed]

    def simp(e: z3.ExprRef) -> z3.ExprRef:
        return z3.simplify(z3.substitute(e, *sub)) if sub else z3.simplify(e)

    out = []
    for label, g, outs in cases:
        g2 = simp(g)
        if not z3.is_false(g2):
            out.append((label, g2, tuple(simp(outs[i]) for i in keep)))
    return ReducedSystem(tuple(xs[i] for i in keep), tuple(init[i] for i in keep), tuple(out), simp(bad),
                         tuple((xs[i], val) for i, val in fixed.items()))


#: Generation variables (made relative to ``G`` by ``relative``).
GENERATIONS = ("g", "memg", "cg", "pG")


def relative(sysm: ReducedSystem) -> tuple[ReducedSystem, list[tuple[z3.ExprRef, z3.ExprRef]]]:
    """``x -> d.x = x - G`` for the generation variables; also returns ``d.x -> x - G`` to map back."""
    names = [str(x) for x in sysm.xs]
    if "s.G" not in names:
        return sysm, []
    gi = names.index("s.G")
    G = sysm.xs[gi]
    rel = [i for i, n in enumerate(names) if n.split("[")[0][2:] in GENERATIONS]
    ds = {i: z3.Int(f"d.{names[i]}") for i in rel}
    into = [(sysm.xs[i], ds[i] + G) for i in rel]
    xs = tuple(ds.get(i, x) for i, x in enumerate(sysm.xs))
    init = tuple(z3.simplify(v - sysm.init[gi]) if i in ds else v for i, v in enumerate(sysm.init))
    cases = []
    for label, g, outs in sysm.cases:
        o = [z3.substitute(x, *into) for x in outs]
        cases.append((label, z3.simplify(z3.substitute(g, *into)),
                      tuple(z3.simplify(o[i] - o[gi]) if i in ds else z3.simplify(o[i]) for i in range(len(o)))))
    back = [(ds[i], sysm.xs[i] - G) for i in rel]
    return ReducedSystem(xs, init, tuple(cases), z3.simplify(z3.substitute(sysm.bad, *into)), sysm.fixed), back


def spacer_invariant(variant: Variant, sizes: dict[str, int], prop: str = "no-double-consumption",
                     timeout_ms: int = 600000, options: dict[str, Any] | None = None,
                     recheck: bool = True, relative_generations: bool = True) -> SpacerResult:
    """Ask Spacer for an inductive invariant of ``prop`` at ``sizes``; export it and re-check it."""
    start = time.perf_counter()
    original = reduced_system(variant, sizes, prop)
    sysm, back = relative(original) if relative_generations else (original, [])
    xs = list(sysm.xs)
    ys = [z3.Const(f"t!{x}", x.sort()) for x in xs]
    inv = z3.Function("Inv", *[x.sort() for x in xs], z3.BoolSort())
    solver = z3.SolverFor("HORN")
    for key, value in {**DEFAULT_OPTIONS, **(options or {})}.items():
        solver.set(key, value)
    solver.set("timeout", timeout_ms)
    solver.add(z3.ForAll(xs, z3.Implies(z3.And(*[x == i for x, i in zip(xs, sysm.init)]), inv(*xs))))
    step = z3.Or(*[z3.And(g, *[y == o for y, o in zip(ys, outs)]) for _, g, outs in sysm.cases])
    solver.add(z3.ForAll(xs + ys, z3.Implies(z3.And(inv(*xs), step), inv(*ys))))
    solver.add(z3.ForAll(xs, z3.Implies(z3.And(inv(*xs), sysm.bad), False)))
    answer = solver.check()
    seconds = time.perf_counter() - start
    stats = _stats(solver)
    common = dict(variables=len(xs), cases=len(sysm.cases), stats=stats)
    if answer == z3.unsat:
        return SpacerResult("unsafe", None, False, seconds, **common)
    if answer != z3.sat:
        return SpacerResult(f"unknown ({solver.reason_unknown()})", None, False, seconds, **common)
    interp = solver.model()[inv]
    # the interpretation is a body over de Bruijn variables Var(0..n-1), one per argument
    body = interp.else_value() if isinstance(interp, z3.FuncInterp) else interp
    found = z3.substitute_vars(body, *xs)
    if back:
        found = z3.substitute(found, *back)
    formula = z3.And(found, *[x == val for x, val in sysm.fixed])
    certificate = export_certificate(list(original.xs) + [x for x, _ in sysm.fixed], formula)
    ok, recheck_seconds = False, 0.0
    if recheck:
        t0 = time.perf_counter()
        ok = recheck_certificate(variant, sizes, certificate, prop)
        recheck_seconds = time.perf_counter() - t0
    return SpacerResult("safe", certificate, ok, seconds, len(certificate), recheck_seconds, **common)


def export_certificate(consts: list[z3.ExprRef], formula: z3.ExprRef) -> str:
    """SMT-LIB text: one declaration per state constant the invariant may mention, one assertion."""
    decls = "\n".join(f"(declare-const {x.sexpr()} {x.sort().sexpr()})" for x in consts)
    return f"{decls}\n(assert {formula.sexpr()})\n"


def certificate_digest(certificate: str) -> str:
    return hashlib.sha256(certificate.encode()).hexdigest()[:16]


def _stats(solver: z3.Solver) -> dict[str, Any]:
    st = solver.statistics()
    keep = ("SPACER max depth", "SPACER num lemmas", "SPACER num invariants")
    return {k: st.get_key_value(k) for k in st.keys() if k in keep}


def _step(variant: Variant, sizes: dict[str, int]):
    """The concrete view at ``sizes``, the model, the pre- and post-states, the choices, and one
    transition's constraints and selector: the full, unreduced step the re-check poses."""
    v = Concrete(sizes)
    model = ProtocolModel(variant)
    s = ConcreteState(v, STATE, "s")
    t = ConcreteState(v, STATE, "t")
    choice = ChoiceState(v, CHOICES, "c")
    cons, sel, _ = transition(model, v, s, t, "", choice)
    return v, model, s, t, choice, cons, sel


def recheck_certificate(variant: Variant, sizes: dict[str, int], certificate: str, prop: str = "no-double-consumption") -> bool:
    """Parse the exported invariant and check, with fresh solvers and the model's full step
    (``engine.transition``, ghosts and all): init => Inv, Inv & T => Inv', Inv => safe."""
    v, model, s, t, _, cons, _ = _step(variant, sizes)
    parsed = z3.parse_smt2_string(certificate)
    inv_s = z3.And(*parsed)
    renaming = [(x, y) for x, y in zip(s.consts.values(), t.consts.values())]
    inv_t = z3.substitute(inv_s, *renaming)

    def valid(*hyps_and_goal: Any) -> bool:
        *hyps, goal = hyps_and_goal
        solver = z3.Solver()
        solver.add(*hyps, z3.Not(goal))
        return solver.check() == z3.unsat

    return (valid(to_z3(model.init(v, s)), inv_s)
            and valid(inv_s, *cons, inv_t)
            and valid(inv_s, to_z3(model.prop(prop)(v, s))))
