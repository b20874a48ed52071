"""Checking the protocol model: bounded search (BMC), induction per (action, lemma), traces.

* ``bmc``: unroll the concrete model step by step from the initial state and ask, at every depth,
  whether a property can fail there. The first depth that fails is the shortest counterexample
  (its *length* is the number of steps); ``depth`` steps without one is a bounded proof.
* ``induct``: over the symbolic view, check ``lemmas(s) ∧ action(s, s') ⇒ lemma(s')`` for every
  action and lemma, one query each, plus ``init ⇒ lemma``. All unsat: the conjunction of the lemmas
  is an inductive invariant, so it holds in every reachable state of every size.
* ``Trace``: a counterexample as steps (action, arguments) and the states between them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import z3

from ..logic import AND, NOT, OR, Concrete, Symbolic, to_z3
from .model import CHOICES, GROUP_STATES, MEMBER_STATES, STATE, Action, ProtocolModel, Variant
from .state import ChoiceState, ConcreteState, State, SymbolicState

__all__ = ["Trace", "TraceStep", "BmcResult", "InductionResult", "bmc", "induct", "instances", "transition"]

Lemma = tuple[str, Callable[[Any, State], Any]]


@dataclass(frozen=True)
class TraceStep:
    action: str
    args: tuple[int, ...]
    environment: bool

    def label(self, names: Sequence[str]) -> str:
        return f"{self.action}({', '.join(names[a] for a in self.args)})" if self.args else self.action


@dataclass(frozen=True)
class Trace:
    """A run of the concrete model: ``states[i]`` --``steps[i]``--> ``states[i+1]``.

    Each state is a dict of variable name -> value (a scalar, a list per member, or a list of lists).
    """

    variant: Variant
    sizes: dict[str, int]
    steps: tuple[TraceStep, ...]
    states: tuple[dict[str, Any], ...]

    @property
    def length(self) -> int:
        return len(self.steps)

    def member_names(self) -> list[str]:
        return [f"c{i + 1}" for i in range(self.sizes["M"])]

    def describe(self) -> list[str]:
        names = self.member_names()
        out = []
        for i, step in enumerate(self.steps):
            after = self.states[i + 1]
            owned = "; ".join(
                f"{names[m]}:{MEMBER_STATES[after['st'][m]][:4]} g{after['g'][m]}"
                f"{' paused' if after['paused'][m] else ''} owns {_parts(after['own'][m])}"
                for m in range(self.sizes["M"])
            )
            out.append(f"{i + 1:>3}. {step.label(names):<20} group {GROUP_STATES[after['cs']]} G{after['G']} | {owned}")
        return out

    def to_dict(self) -> dict[str, Any]:
        names = self.member_names()
        return {
            "variant": self.variant.to_dict(),
            "sizes": dict(self.sizes),
            "length": self.length,
            "steps": [{"action": s.action, "args": [names[a] for a in s.args], "environment": s.environment}
                      for s in self.steps],
            "states": list(self.states),
        }


def _parts(row: Sequence[bool]) -> str:
    got = [f"t-{p}" for p, b in enumerate(row) if b]
    return ",".join(got) or "-"


@dataclass(frozen=True)
class BmcResult:
    violated: bool
    depth: int  # the counterexample's length, or the depth searched without one
    trace: Trace | None
    seconds: float


@dataclass(frozen=True)
class InductionResult:
    """Every (action, lemma) query's answer; ``failures`` lists the pairs that are not unsat."""

    queries: int
    failures: tuple[tuple[str, str, str], ...]  # (action or "init", lemma, z3 answer)
    seconds: float

    @property
    def proved(self) -> bool:
        return not self.failures


def instances(model: ProtocolModel, v: Concrete) -> list[tuple[Action, tuple[int, ...]]]:
    """Every action with every binding of its parameters at the concrete sizes."""
    return [(a, args) for a in model.actions for args in v.tuples(a.params)]


def transition(model: ProtocolModel, v: Concrete, s: ConcreteState, t: ConcreteState, tag: str,
               choice: ChoiceState | None = None) -> tuple[list[Any], z3.ArithRef, list]:
    """Constraints for one step ``s -> t`` (a multiplexer over the action instances).

    ``act`` selects the instance; every variable of ``t`` is the selected instance's update or
    the old value. Returns (constraints, selector, instances).
    """
    inst = instances(model, v)
    choice = choice if choice is not None else ChoiceState(v, CHOICES, f"c{tag}")
    effects = [model.effect(a, v, s, args, choice) for a, args in inst]
    if v.int_bits is None:
        sel = z3.Int(f"act{tag}")
        cons: list[Any] = [sel >= 0, sel < len(inst)]
    else:  # all bit-vectors: the formula can be bit-blasted
        sel = z3.BitVec(f"act{tag}", max(1, len(inst).bit_length()))
        cons = [z3.ULT(sel, len(inst))]
    for i, e in enumerate(effects):
        g = to_z3(AND(e.guard, e.assume))
        if not z3.is_true(g):
            cons.append(z3.Implies(sel == i, g))
    for var in STATE:
        for idx in v.tuples(var.dom):
            old = s.read(var.name, idx)
            expr = old
            for i in range(len(effects) - 1, -1, -1):
                upd = effects[i].updates.get(var.name)
                if upd is None:
                    continue
                new = v.value(upd(*idx), var.kind)
                if z3.eq(new, old):
                    continue
                expr = z3.If(sel == i, new, expr)
            cons.append(t.read(var.name, idx) == expr)
    return cons, sel, inst


def _value(model: z3.ModelRef, e: z3.ExprRef) -> Any:
    val = model.eval(e, model_completion=True)
    if z3.is_true(val):
        return True
    if z3.is_false(val):
        return False
    if z3.is_bv_value(val):
        return val.as_signed_long()
    return val.as_long()


def _read_state(model: z3.ModelRef, v: Concrete, s: ConcreteState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for var in STATE:
        if not var.dom:
            out[var.name] = _value(model, s.read(var.name, ()))
        elif len(var.dom) == 1:
            out[var.name] = [_value(model, s.read(var.name, (i,))) for i in v.elems(var.dom[0])]
        else:
            out[var.name] = [[_value(model, s.read(var.name, (i, j))) for j in v.elems(var.dom[1])]
                             for i in v.elems(var.dom[0])]
    return out


def int_bits_for(depth: int) -> int:
    """Bit-vector width that cannot overflow in ``depth`` steps: generations and epochs grow by at most one a step."""
    return max(4, (depth + 2).bit_length() + 2)


def _bitblast_solver() -> z3.Solver:
    """Everything is Boolean or a bit-vector: blast to SAT (much faster than the SMT core here)."""
    return z3.Then("simplify", "propagate-values", "solve-eqs", "bit-blast", "sat").solver()


class Unrolling:
    """The concrete model unrolled from its initial state; grows on demand."""

    def __init__(self, variant: Variant, sizes: dict[str, int], depth: int,
                 restrict: Callable[["Unrolling", int], Any] | None = None):
        self.variant = variant
        self.sizes = dict(sizes)
        self.v = Concrete(sizes, int_bits=int_bits_for(depth))
        self.model = ProtocolModel(variant)
        self.states = [ConcreteState(self.v, STATE, "s0")]
        self.constraints: list[Any] = [to_z3(self.model.init(self.v, self.states[0]))]
        self.sels: list[tuple[Any, list]] = []
        self.choices: list[ChoiceState] = []
        self.restrict = restrict
        for _ in range(depth):
            self.extend()

    def extend(self) -> None:
        k = len(self.states) - 1
        t = ConcreteState(self.v, STATE, f"s{k + 1}")
        choice = ChoiceState(self.v, CHOICES, f"c{k}")
        cons, sel, inst = transition(self.model, self.v, self.states[k], t, str(k), choice)
        self.constraints += cons
        self.choices.append(choice)
        self.sels.append((sel, inst))
        self.states.append(t)
        if self.restrict is not None and k >= 1:  # a restriction may look at the step before
            self.constraints.append(to_z3(self.restrict(self, k - 1)))

    def step_is(self, k: int, action: str, args: tuple | None = None) -> Any:
        """Step ``k`` is ``action`` (with ``args`` when given)."""
        sel, inst = self.sels[k]
        return OR(*[sel == i for i, (a, a_args) in enumerate(inst) if a.name == action and (args is None or a_args == args)])

    def violation_within(self, prop: str, depth: int) -> z3.ModelRef | None:
        """A run whose state at some index <= ``depth`` breaks ``prop``, or None (unsat)."""
        bad = self.model.prop(prop)
        solver = _bitblast_solver()
        solver.add(*self.constraints[: self._prefix(depth)])
        solver.add(to_z3(OR(*[NOT(bad(self.v, s)) for s in self.states[: depth + 1]])))
        answer = solver.check()
        if answer == z3.unsat:
            return None
        if answer != z3.sat:  # pragma: no cover - bit-blasted, decidable
            raise RuntimeError(f"bmc: z3 answered {answer}")
        return solver.model()

    def _prefix(self, depth: int) -> int:
        # constraints are init + per step (transition [+ restriction]); keep those of the first ``depth`` steps
        if depth >= len(self.sels):
            return len(self.constraints)
        count = 1
        for k in range(depth):
            count += self._step_sizes[k]
        return count

    def trace(self, model: z3.ModelRef, prop: str) -> Trace:
        """The run of ``model``, cut at its first state that breaks ``prop``."""
        bad = self.model.prop(prop)
        states = [_read_state(model, self.v, s) for s in self.states]
        steps = []
        for sel, inst in self.sels:
            a, args = inst[model.eval(sel, model_completion=True).as_long()]
            steps.append(TraceStep(a.name, tuple(args), a.environment))
        first = next(i for i, s in enumerate(self.states) if z3.is_false(model.eval(to_z3(bad(self.v, s)), model_completion=True)))
        return Trace(self.variant, dict(self.sizes), tuple(steps[:first]), tuple(states[: first + 1]))


def bmc(variant: Variant, sizes: dict[str, int], prop: str, depth: int, *, minimal: bool = False,
        restrict: Callable[[Unrolling, int], Any] | None = None) -> BmcResult:
    """Search for a run of at most ``depth`` steps that breaks ``prop``.

    One query over the whole unrolling ("some state within ``depth`` is bad"). With ``minimal``,
    a found counterexample of length L is followed by the query for L - 1 until that is unsat, so
    the reported length is the shortest. Integers are bit-vectors wide enough for ``depth`` steps
    (``int_bits_for``): every integer of the model starts in [-1, 0] and moves by at most one a step.
    """
    start = time.perf_counter()
    u = _StepCounted(variant, sizes, depth, restrict)
    m = u.violation_within(prop, depth)
    if m is None:
        return BmcResult(False, depth, None, time.perf_counter() - start)
    trace = u.trace(m, prop)
    while minimal and trace.length > 0:
        shorter = u.violation_within(prop, trace.length - 1)
        if shorter is None:
            break
        trace = u.trace(shorter, prop)
    return BmcResult(True, trace.length, trace, time.perf_counter() - start)


class _StepCounted(Unrolling):
    """``Unrolling`` that remembers how many constraints each step added (to cut prefixes)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self._step_sizes: list[int] = []
        super().__init__(*args, **kwargs)

    def extend(self) -> None:
        before = len(self.constraints)
        super().extend()
        self._step_sizes.append(len(self.constraints) - before)


def induct(variant: Variant, lemmas: Sequence[Lemma], *, actions: Iterable[str] | None = None,
           only: Iterable[str] | None = None, timeout_ms: int = 20000, stop_at_first: bool = False) -> InductionResult:
    """One query per (action, lemma): ``∧ lemmas(s) ∧ guard ∧ contract ∧ ¬lemma(s')`` must be unsat,
    and one per lemma for the initial state. ``only`` restricts the lemmas checked (all are assumed)."""
    start = time.perf_counter()
    v = Symbolic()
    model = ProtocolModel(variant)
    s = SymbolicState(v, STATE, "s")
    names = [n for n, _ in lemmas]
    check = list(only) if only is not None else names
    failures: list[tuple[str, str, str]] = []
    queries = 0

    def ask(solver: z3.Solver) -> str:
        nonlocal queries
        queries += 1
        r = solver.check()
        return "unsat" if r == z3.unsat else str(r)

    # init => lemma
    base = z3.Solver()
    base.set("timeout", timeout_ms)
    base.add(to_z3(model.init(v, s)))
    for name, fn in lemmas:
        if name not in check:
            continue
        base.push()
        base.add(to_z3(NOT(fn(v, s))))
        r = ask(base)
        base.pop()
        if r != "unsat":
            failures.append(("init", name, r))
            if stop_at_first:
                return InductionResult(queries, tuple(failures), time.perf_counter() - start)

    chosen = [a for a in model.actions if actions is None or a.name in set(actions)]
    for a in chosen:
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        for _, fn in lemmas:
            solver.add(to_z3(fn(v, s)))
        args = tuple(v.fresh(d, "arg") for d in a.params)
        choice = ChoiceState(v, CHOICES, "c")
        e = model.effect(a, v, s, args, choice)
        solver.add(to_z3(e.guard), to_z3(e.assume))
        nxt = model.successor(s, e)
        for name, fn in lemmas:
            if name not in check:
                continue
            solver.push()
            solver.add(to_z3(NOT(fn(v, nxt))))
            r = ask(solver)
            solver.pop()
            if r != "unsat":
                failures.append((a.name, name, r))
                if stop_at_first:
                    return InductionResult(queries, tuple(failures), time.perf_counter() - start)
    return InductionResult(queries, tuple(failures), time.perf_counter() - start)
