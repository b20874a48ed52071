"""Checking the reconciliation model: induction per (action, lemma), bounded search, runs.

The method is the classic model's (``protocol/engine.py``), over this model's variables:

* ``induct``: over the symbolic view, ``lemmas(s) ∧ guard ∧ contract ⇒ lemma(s')`` for every action
  and lemma, and ``init ⇒ lemma``. All unsat: the lemmas' conjunction is an inductive invariant, so
  it holds in every reachable state of every number of members and partitions.
* ``bmc``: the concrete model unrolled from its initial state, integers as bit-vectors wide enough
  for the depth; the first depth at which a property can fail is the shortest counterexample.
* ``Run``: a counterexample as steps (action, arguments, the target chosen) and the states between.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import z3

from ..logic import AND, NOT, OR, Concrete, Symbolic, to_z3
from ..protocol.state import ChoiceState, ConcreteState, State, SymbolicState
from .model import CHOICES, STATE, STATE_NAMES, ReconciliationModel, Variant

__all__ = ["Run", "RunStep", "BmcResult", "InductionResult", "bmc", "induct", "int_bits_for", "Unrolling"]

Lemma = tuple[str, Callable[[Any, State], Any]]


@dataclass(frozen=True)
class RunStep:
    action: str
    args: tuple[int, ...]
    target: tuple[tuple[bool, ...], ...] | None = None  # NewTarget: the assignor's answer, per member
    lost: bool = False  # Heartbeat: its response was lost

    def label(self, names: Sequence[str]) -> str:
        text = f"{self.action}({', '.join(names[a] for a in self.args)})" if self.args else self.action
        return text + (" lost" if self.lost else "")


@dataclass(frozen=True)
class Run:
    """A run of the concrete model: ``states[i]`` --``steps[i]``--> ``states[i+1]`` (dicts of values)."""

    variant: Variant
    sizes: dict[str, int]
    steps: tuple[RunStep, ...]
    states: tuple[dict[str, Any], ...]

    @property
    def length(self) -> int:
        return len(self.steps)

    def member_names(self) -> list[str]:
        return [f"c{i + 1}" for i in range(self.sizes["M"])]

    def describe(self) -> list[str]:
        names = self.member_names()
        states = STATE_NAMES[self.variant.builder]
        out = []
        for i, step in enumerate(self.steps):
            t = self.states[i + 1]
            members = "; ".join(
                f"{names[m]}:{states.get(t['cst'][m], '?')[:8]} e{t['ep'][m]} asg {_parts(t['asg'][m])}"
                f" rev {_parts(t['rev'][m])} holds {_parts(t['own'][m])}"
                for m in range(self.sizes["M"]) if t["inm"][m])
            pe = ",".join(str(x) for x in t["pe"])
            out.append(f"{i + 1:>3}. {step.label(names):<14} E{t['E']} pe[{pe}] | {members or '-'}")
        return out


def _parts(row: Sequence[bool]) -> str:
    return ",".join(f"t-{p}" for p, b in enumerate(row) if b) or "-"


@dataclass(frozen=True)
class BmcResult:
    violated: bool
    depth: int  # the counterexample's length, or the depth searched without one
    run: Run | None
    seconds: float


@dataclass(frozen=True)
class InductionResult:
    """Every (action, lemma) query's answer; ``failures`` lists the pairs that are not unsat."""

    queries: int
    failures: tuple[tuple[str, str, str], ...]
    seconds: float

    @property
    def proved(self) -> bool:
        return not self.failures


def int_bits_for(depth: int) -> int:
    """A width that cannot overflow in ``depth`` steps: epochs start at 0 or -1 and grow by one a step."""
    return max(4, (depth + 2).bit_length() + 2)


def induct(variant: Variant, lemmas: Sequence[Lemma], *, timeout_ms: int = 20000) -> InductionResult:
    """One query per (action, lemma) and one per lemma for the initial state; every lemma assumed."""
    start = time.perf_counter()
    v = Symbolic()
    model = ReconciliationModel(variant)
    s = SymbolicState(v, STATE, "s")
    failures: list[tuple[str, str, str]] = []
    queries = 0

    def ask(solver: z3.Solver, goal: Any) -> str:
        nonlocal queries
        queries += 1
        solver.push()
        solver.add(to_z3(NOT(goal)))
        r = solver.check()
        solver.pop()
        return "unsat" if r == z3.unsat else str(r)

    base = z3.Solver()
    base.set("timeout", timeout_ms)
    base.add(to_z3(model.init(v, s)))
    for name, fn in lemmas:
        r = ask(base, fn(v, s))
        if r != "unsat":
            failures.append(("init", name, r))
    for a in model.actions:
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        for _, fn in lemmas:
            solver.add(to_z3(fn(v, s)))
        args = tuple(v.fresh(d, "arg") for d in a.params)
        e = model.effect(a, v, s, args, ChoiceState(v, CHOICES, "c"))
        solver.add(to_z3(e.guard), to_z3(e.assume))
        nxt = model.successor(s, e)
        for name, fn in lemmas:
            r = ask(solver, fn(v, nxt))
            if r != "unsat":
                failures.append((a.name, name, r))
    return InductionResult(queries, tuple(failures), time.perf_counter() - start)


def _value(model: z3.ModelRef, e: z3.ExprRef) -> Any:
    val = model.eval(e, model_completion=True)
    if z3.is_true(val):
        return True
    if z3.is_false(val):
        return False
    if z3.is_bv_value(val):
        return val.as_signed_long()
    return val.as_long()


def _read(model: z3.ModelRef, v: Concrete, s: State, variables: Sequence[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for var in variables:
        if not var.dom:
            out[var.name] = _value(model, s.read(var.name, ()))
        elif len(var.dom) == 1:
            out[var.name] = [_value(model, s.read(var.name, (i,))) for i in v.elems(var.dom[0])]
        else:
            out[var.name] = [[_value(model, s.read(var.name, (i, j))) for j in v.elems(var.dom[1])]
                             for i in v.elems(var.dom[0])]
    return out


class Unrolling:
    """The concrete model unrolled ``depth`` steps from ``start`` (default: its initial state)."""

    def __init__(self, variant: Variant, sizes: dict[str, int], depth: int,
                 start: Callable[[Any, State], Any] | None = None, *, kafka_requests: bool = False):
        self.variant = variant
        self.kafka_requests = kafka_requests
        self.sizes = dict(sizes)
        self.v = Concrete(sizes, int_bits=int_bits_for(depth))
        self.model = ReconciliationModel(variant)
        self.inst = [(a, args) for a in self.model.actions for args in self.v.tuples(a.params)]
        self.states: list[ConcreteState] = [ConcreteState(self.v, STATE, "s0")]
        self.choices: list[ChoiceState] = []
        self.sels: list[z3.ExprRef] = []
        first = start if start is not None else self.model.init
        self.constraints: list[list[Any]] = [[to_z3(first(self.v, self.states[0]))]]
        for _ in range(depth):
            self.extend()

    def extend(self) -> None:
        k = len(self.states) - 1
        s, v = self.states[k], self.v
        t = ConcreteState(v, STATE, f"s{k + 1}")
        choice = ChoiceState(v, CHOICES, f"c{k}")
        effects = [self.model.effect(a, v, s, args, choice) for a, args in self.inst]
        sel = z3.BitVec(f"act{k}", max(1, len(self.inst).bit_length()))
        cons: list[Any] = [z3.ULT(sel, len(self.inst))]
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
                    if not z3.eq(new, old):
                        expr = z3.If(sel == i, new, expr)
                cons.append(t.read(var.name, idx) == expr)
        self.choices.append(choice)
        self.sels.append(sel)
        if self.kafka_requests:
            cons += self._requests(k)
        self.constraints.append(cons)
        self.states.append(t)

    def _is(self, k: int, action: str, args: tuple | None = None) -> z3.BoolRef:
        """Step ``k`` is ``action`` (with ``args``, if given)."""
        hits = [self.sels[k] == i for i, (a, a_args) in enumerate(self.inst)
                if a.name == action and (args is None or tuple(a_args) == args)]
        return z3.Or(*hits) if hits else z3.BoolVal(False)

    def _requests(self, k: int) -> list[z3.BoolRef]:
        """Step ``k`` as Kafka's requests group the model's steps (``kafka_requests``): a ``Join`` is
        followed by the ``NewTarget`` its request computes and then the joiner's ``Heartbeat`` (one
        ConsumerGroupHeartbeat at epoch 0: the group epoch bump, the target and the member's
        reconciliation), and a ``Leave`` by the ``NewTarget`` its epoch bump causes. The constraints
        look back from step ``k``, so a run cut at any length keeps every group whose steps it holds
        whole; ``stickyproof simulate`` replays only such runs (``group/consumer/history.py``)."""
        out: list[z3.BoolRef] = []
        if k >= 1:
            after = z3.Or(self._is(k - 1, "Join"), self._is(k - 1, "Leave"))
            out.append(z3.Implies(after, self._is(k, "NewTarget")))
        if k >= 2:
            for m in self.v.elems("M"):
                out.append(z3.Implies(self._is(k - 2, "Join", (m,)), self._is(k, "Heartbeat", (m,))))
        return out

    def step_is(self, k: int, action: str) -> Any:
        return OR(*[self.sels[k] == i for i, (a, _) in enumerate(self.inst) if a.name == action])

    def violation_within(self, prop: str, depth: int, extra: Sequence[Any] = ()) -> z3.ModelRef | None:
        """A run whose state at some index <= ``depth`` breaks ``prop``, or None."""
        bad = self.model.prop(prop)
        solver = z3.Then("simplify", "propagate-values", "solve-eqs", "bit-blast", "sat").solver()
        for cons in self.constraints[: depth + 1]:
            solver.add(*cons)
        solver.add(*extra)
        solver.add(to_z3(OR(*[NOT(bad(self.v, s)) for s in self.states[: depth + 1]])))
        answer = solver.check()
        if answer == z3.unsat:
            return None
        if answer != z3.sat:  # pragma: no cover - bit-blasted, decidable
            raise RuntimeError(f"bmc: z3 answered {answer}")
        return solver.model()

    def run(self, model: z3.ModelRef, prop: str) -> Run:
        """The run ``model`` describes, cut at its first state that breaks ``prop``."""
        bad = self.model.prop(prop)
        states = [_read(model, self.v, s, STATE) for s in self.states]
        steps = []
        for k, sel in enumerate(self.sels):
            a, args = self.inst[model.eval(sel, model_completion=True).as_long()]
            chosen = _read(model, self.v, self.choices[k], CHOICES)
            target = tuple(tuple(row) for row in chosen["a"]) if a.name == "NewTarget" else None
            lost = bool(a.name == "Heartbeat" and self.variant.lossy and chosen["lost"])
            steps.append(RunStep(a.name, tuple(args), target, lost))
        first = next(i for i, s in enumerate(self.states)
                     if z3.is_false(model.eval(to_z3(bad(self.v, s)), model_completion=True)))
        return Run(self.variant, dict(self.sizes), tuple(steps[:first]), tuple(states[: first + 1]))


def bmc(variant: Variant, sizes: dict[str, int], prop: str, depth: int, *, minimal: bool = True,
        kafka_requests: bool = False) -> BmcResult:
    """A run of at most ``depth`` steps breaking ``prop``; with ``minimal``, shortened until the query
    for one step fewer is unsat, so the length reported is the shortest. With ``kafka_requests`` only
    runs whose steps group into Kafka's requests (``Unrolling._requests``) are searched."""
    start = time.perf_counter()
    u = Unrolling(variant, sizes, depth, kafka_requests=kafka_requests)
    m = u.violation_within(prop, depth)
    if m is None:
        return BmcResult(False, depth, None, time.perf_counter() - start)
    run = u.run(m, prop)
    while minimal and run.length > 0:
        shorter = u.violation_within(prop, run.length - 1)
        if shorter is None:
            break
        run = u.run(shorter, prop)
    return BmcResult(True, run.length, run, time.perf_counter() - start)
