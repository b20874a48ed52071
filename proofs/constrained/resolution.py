"""Prior-ownership resolution (docs/rules.md R7-R9), as a loop over members with arrays of partitions.

Members are processed in map order; each processes all its claims (one generation per member, as
sent in a v2+ subscription). Per partition ``p`` the loop keeps ``owner[p]`` (the recorded owner,
-1 for none), ``keep[j][p]`` (member ``j`` keeps ``p``) and ``dup[p]`` (R8's multiply-claimed set):

* R7: no recorded owner: the claimant keeps ``p`` and is recorded;
* R8: same generation as the recorded owner: both lose it, ``p`` enters ``dup``, the newcomer is
  recorded; higher: the newcomer keeps it, the owner loses it, the newcomer is recorded; lower:
  ignored. In **3.5.1** the lower claimant was recorded all the same (KAFKA-15106), so a third
  claimant was compared against it.

Theorem (every number of members, partitions and claims, every generation): after the loop a
partition is kept by its unique highest-generation claimant when there is one, and by nobody
otherwise; in particular by at most one member. Proved with a loop invariant quantified over
partitions and member indices (Z3 arrays as functions over Int and an uninterpreted sort).
3.5.1's rule breaks it: bounded search finds three claimants whose partition two members keep.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import z3

__all__ = ["ResolutionResult", "prove_resolution", "find_resolution_counterexample", "resolve_model"]

RULES = ("current", "3.5.1")


@dataclass(frozen=True)
class ResolutionResult:
    verdict: bool  # proved (theorem) / found (counterexample search)
    failures: tuple[str, ...] = ()
    queries: int = 0
    seconds: float = 0.0
    witness: dict[str, Any] | None = None


class _Inputs:
    def __init__(self, P: z3.SortRef, tag: str = ""):
        self.claim = z3.Function(f"claim{tag}", z3.IntSort(), P, z3.BoolSort())
        self.gen = z3.Function(f"gen{tag}", z3.IntSort(), z3.IntSort())


class _State:
    """owner(p), keep(j, p), dup(p) as Python callables (Z3 functions, or the successor's terms)."""

    def __init__(self, owner: Callable, keep: Callable, dup: Callable):
        self.owner, self.keep, self.dup = owner, keep, dup


def _fresh_state(P: z3.SortRef, tag: str) -> _State:
    owner = z3.Function(f"owner{tag}", P, z3.IntSort())
    keep = z3.Function(f"keep{tag}", z3.IntSort(), P, z3.BoolSort())
    dup = z3.Function(f"dup{tag}", P, z3.BoolSort())
    return _State(owner, keep, dup)


def resolve_step(s: _State, inp: _Inputs, i: Any, rule: str) -> _State:
    """Member ``i`` processes its claims (R7-R8); the successor state as terms over ``s``."""
    g = inp.gen(i)

    def og(p):
        return inp.gen(s.owner(p))

    def owner(p):
        o = s.owner(p)
        lost = o if rule == "current" else i  # 3.5.1: the loser is recorded anyway
        return z3.If(inp.claim(i, p), z3.If(o == -1, i, z3.If(g >= og(p), i, lost)), o)

    def keep(j, p):
        o, k = s.owner(p), s.keep(j, p)
        contested = z3.If(g == og(p), z3.If(j == o, False, k),
                          z3.If(g > og(p), z3.If(j == i, True, z3.If(j == o, False, k)), k))
        return z3.If(inp.claim(i, p), z3.If(o == -1, z3.If(j == i, True, k), contested), k)

    def dup(p):
        return z3.Or(s.dup(p), z3.And(inp.claim(i, p), s.owner(p) != -1, g == og(p)))

    return _State(owner, keep, dup)


def _unique_top_keeps(s: _State, inp: _Inputs, n: Any, P: z3.SortRef) -> Any:
    """The property after ``n`` members: a partition is kept by its unique top-generation claimant, else by nobody."""
    p = z3.Const("p", P)
    j, k = z3.Ints("j k")
    member = lambda x: z3.And(x >= 0, x < n)  # noqa: E731
    unique_top = lambda x: z3.And(member(x), inp.claim(x, p), z3.ForAll([k], z3.Implies(  # noqa: E731
        z3.And(member(k), k != x, inp.claim(k, p)), inp.gen(k) < inp.gen(x))))
    return z3.ForAll([p, j], z3.And(
        z3.Implies(s.keep(j, p), unique_top(j)),
        z3.Implies(unique_top(j), s.keep(j, p)),
    ))


def _invariant(s: _State, inp: _Inputs, i: Any, P: z3.SortRef) -> list[tuple[str, Any]]:
    p = z3.Const("p", P)
    j = z3.Int("j")
    member = lambda x: z3.And(x >= 0, x < i)  # noqa: E731
    return [
        ("loop-counter", i >= 0),
        ("owner-is-an-earlier-claimant", z3.ForAll([p], z3.Or(s.owner(p) == -1, z3.And(member(s.owner(p)), inp.claim(s.owner(p), p))))),
        ("claimed-partitions-have-an-owner", z3.ForAll([p, j], z3.Implies(z3.And(member(j), inp.claim(j, p)), s.owner(p) != -1))),
        ("owner-has-the-top-generation", z3.ForAll([p, j], z3.Implies(
            z3.And(member(j), inp.claim(j, p), s.owner(p) != -1), inp.gen(j) <= inp.gen(s.owner(p))))),
        ("only-the-owner-keeps", z3.ForAll([p, j], z3.Implies(s.keep(j, p), j == s.owner(p)))),
        ("unique-top-claimant-keeps-it-else-nobody", _unique_top_keeps(s, inp, i, P)),
    ]


def prove_resolution(rule: str = "current") -> ResolutionResult:
    """Induction over the member loop: init, step (per invariant conjunct), exit."""
    start = time.perf_counter()
    P = z3.DeclareSort("Partition")
    inp = _Inputs(P)
    s = _fresh_state(P, "")
    i = z3.Int("i")
    failures: list[str] = []
    queries = 0

    def valid(name: str, hyp: list[Any], goal: Any) -> None:
        nonlocal queries
        queries += 1
        solver = z3.Solver()
        solver.set("timeout", 30000)
        solver.add(*hyp, z3.Not(goal))
        if solver.check() != z3.unsat:
            failures.append(name)

    p = z3.Const("p", P)
    j = z3.Int("j")
    init = [z3.ForAll([p], s.owner(p) == -1), z3.ForAll([p, j], z3.Not(s.keep(j, p))), z3.ForAll([p], z3.Not(s.dup(p)))]
    inv = _invariant(s, inp, i, P)
    for name, f in _invariant(s, inp, z3.IntVal(0), P):
        valid(f"init: {name}", init, f)
    t = resolve_step(s, inp, i, rule)
    hyp = [f for _, f in inv]
    for name, f in _invariant(t, inp, i + 1, P):
        valid(f"step: {name}", hyp, f)
    return ResolutionResult(not failures, tuple(failures), queries, time.perf_counter() - start)


def find_resolution_counterexample(rule: str = "3.5.1", max_members: int = 4) -> ResolutionResult:
    """Bounded search: the fewest members (one partition) after which two members keep one partition."""
    start = time.perf_counter()
    P = z3.DeclareSort("Partition")
    queries = 0
    for n in range(1, max_members + 1):
        inp = _Inputs(P)
        s = _fresh_state(P, "0")
        p0 = z3.Const("p0", P)
        solver = z3.Solver()
        p = z3.Const("p", P)
        j = z3.Int("j")
        solver.add(z3.ForAll([p], s.owner(p) == -1), z3.ForAll([p, j], z3.Not(s.keep(j, p))), z3.ForAll([p], z3.Not(s.dup(p))))
        state = s
        for i in range(n):
            state = resolve_step(state, inp, z3.IntVal(i), rule)
        a, b = z3.Ints("a b")
        solver.add(a >= 0, a < n, b >= 0, b < n, a != b, state.keep(a, p0), state.keep(b, p0))
        queries += 1
        if solver.check() == z3.sat:
            m = solver.model()
            gens = [m.eval(inp.gen(z3.IntVal(x)), model_completion=True).as_long() for x in range(n)]
            claims = [z3.is_true(m.eval(inp.claim(z3.IntVal(x), p0), model_completion=True)) for x in range(n)]
            keepers = sorted({m.eval(a).as_long(), m.eval(b).as_long()})
            witness = {"members": n, "generations": gens, "claims": claims, "kept_by": keepers}
            return ResolutionResult(True, (), queries, time.perf_counter() - start, witness)
    return ResolutionResult(False, (), queries, time.perf_counter() - start)


def resolve_model(claims: list[list[bool]], gens: list[int], rule: str = "current") -> tuple[list[list[bool]], list[bool]]:
    """The same loop run on concrete values (for tests against the assignor): (keep, dup)."""
    n_parts = len(claims[0]) if claims else 0
    owner = [-1] * n_parts
    keep = [[False] * n_parts for _ in claims]
    dup = [False] * n_parts
    for i, row in enumerate(claims):
        for p in range(n_parts):
            if not row[p]:
                continue
            o = owner[p]
            if o == -1:
                keep[i][p], owner[p] = True, i
            elif gens[i] == gens[o]:
                keep[o][p], dup[p], owner[p] = False, True, i
            elif gens[i] > gens[o]:
                keep[i][p], keep[o][p], owner[p] = True, False, i
            elif rule == "3.5.1":
                owner[p] = i
    return keep, dup


