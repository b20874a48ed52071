"""Explicit-state breadth-first search of the concrete protocol model (``protocol.bounded``).

Bounded model checking with Z3 stalls near depth 30 at 2 members x 1 partition (proofs/README.md),
but the *reachable states* of that size within ``D`` steps can be enumerated. The transition
relation searched here is the one BMC unrolls: for every action instance the model's guard,
contract and updates are built over ``logic.Concrete`` with one Z3 constant per state variable
(``engine.transition`` does the same), the leader's free choices (``a``, ``nl``) are substituted by
each of their 2^k values, and each resulting Z3 expression is translated, operator by operator, into
a Python function of a state tuple (``_to_python``: Boolean connectives, ``If``, comparisons, ``+``,
``-``; anything else is refused). Integers are Python integers, so nothing can overflow.

Breadth-first order with a visited set: every state reachable in at most ``D`` steps is visited,
first at its shortest distance, so the first bad state gives the shortest counterexample, and an
empty frontier (saturation) proves the property for every run length at that size.

Two reductions, each an exact bisimulation:

* **Member symmetry**: the model mentions members only through quantifiers over all members,
  action parameters ranging over all members, and ``same`` (equality), so renaming members maps
  runs to runs and preserves both properties; a state is stored as the least of its renamings.
* **Ghosts dropped**: ``E`` and ``meme`` (coordinator epochs, there for the lemmas) are read by no
  guard, no contract, no update of another variable and no property (checked when compiling), so
  forgetting them changes no run of the other variables.

``tests/test_proofs.py`` checks both on sampled states, and that the successors computed here are
exactly the ones Z3 finds for ``engine.transition`` with the state fixed.
"""

from __future__ import annotations

import itertools
import operator
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import z3

from ..logic import AND, Concrete, to_z3
from .model import CHOICES, STATE, ProtocolModel, Variant
from .state import ChoiceState, ConcreteState

__all__ = ["GHOSTS", "Compiled", "SearchResult", "compile_model", "search"]

#: Ghost variables: only the lemmas read them (checked by ``compile_model``).
GHOSTS = ("E", "meme")
#: Generation variables other than ``pG`` (renumbered below ``pG`` by ``Compiled.compress``).
GENERATIONS = ("g", "memg", "cg", "G")

_BIN = {z3.Z3_OP_EQ: "==", z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">",
        z3.Z3_OP_ADD: "+", z3.Z3_OP_SUB: "-"}


class _Emitter:
    """Z3 terms over the state constants -> Python statements over ``s`` (a tuple), shared subterms once."""

    def __init__(self, slot_of: dict[int, int]):
        self.slot_of = slot_of  # Z3 ast id of a state constant -> its position in the tuple
        self.names: dict[int, str] = {}
        self.lines: list[str] = []
        self.read: set[int] = set()

    #: How each connective is written; ``vector.py`` writes the same terms over arrays by changing these.
    TRUE, FALSE, AND, OR = "True", "False", " and ", " or "
    NOT, IMPLIES, ITE = "(not {0})", "((not {0}) or {1})", "({1} if {0} else {2})"
    WHERE = "explicit search"

    def const(self, e: z3.ExprRef, slot: int) -> str:
        self.read.add(slot)
        return f"s[{slot}]"

    def term(self, e: z3.ExprRef) -> str:
        key = e.get_id()
        if key in self.names:
            return self.names[key]
        if z3.is_true(e):
            return self.TRUE
        if z3.is_false(e):
            return self.FALSE
        if z3.is_int_value(e):
            return str(e.as_long())
        if z3.is_const(e):
            if key not in self.slot_of:
                raise ValueError(f"{self.WHERE}: free constant {e} (an unsubstituted choice?)")
            return self.const(e, self.slot_of[key])
        k = e.decl().kind()
        kids = [self.term(c) for c in e.children()]
        if k == z3.Z3_OP_AND:
            code = "(" + self.AND.join(kids) + ")"
        elif k == z3.Z3_OP_OR:
            code = "(" + self.OR.join(kids) + ")"
        elif k == z3.Z3_OP_NOT:
            code = self.NOT.format(*kids)
        elif k == z3.Z3_OP_IMPLIES:
            code = self.IMPLIES.format(*kids)
        elif k == z3.Z3_OP_ITE:
            code = self.ITE.format(*kids)
        elif k == z3.Z3_OP_DISTINCT and len(kids) == 2:
            code = f"({kids[0]} != {kids[1]})"
        elif k == z3.Z3_OP_UMINUS:
            code = f"(-{kids[0]})"
        elif k in _BIN and (len(kids) == 2 or k == z3.Z3_OP_ADD):
            code = "(" + f" {_BIN[k]} ".join(kids) + ")"
        else:
            raise ValueError(f"{self.WHERE}: cannot evaluate {e.decl()}")
        name = f"t{len(self.names)}"
        self.names[key] = name
        self.lines.append(f"    {name} = {code}")
        return name


@dataclass(frozen=True)
class Compiled:
    """The concrete model as Python: ``steps`` are (action, args, function state -> successor or None)."""

    variant: Variant
    sizes: dict[str, int]
    slots: tuple[tuple[str, tuple[int, ...]], ...]
    init: tuple
    steps: tuple[tuple[str, tuple[int, ...], Callable[[tuple], tuple | None]], ...]
    props: dict[str, Callable[[tuple], bool]]
    perms: tuple[tuple[int, ...], ...]
    gens: tuple[int, ...] = ()  # positions of the generation variables, pG last (empty: no compression)
    #: The Z3 terms the functions were translated from (``vector.py`` translates them again, for arrays):
    #: per step (guard, one output per slot), per property its term, and the state constants' positions.
    terms: tuple[tuple[z3.ExprRef, tuple[z3.ExprRef, ...]], ...] = ()
    prop_terms: tuple[tuple[str, z3.ExprRef], ...] = ()
    slot_of: tuple[tuple[int, int], ...] = ()

    def successors(self, s: tuple) -> Iterator[tuple[str, tuple[int, ...], tuple]]:
        for name, args, f in self.steps:
            t = f(s)
            if t is not None:
                yield name, args, t

    def canonical(self, s: tuple) -> tuple:
        s = self.compress(s)
        return min([s] + [g(s) for g in self._getters])

    @property
    def _getters(self) -> list[Callable[[tuple], tuple]]:
        """The member renamings other than the identity, as fast tuple permutations."""
        got = self.__dict__.get("_getters_cache")
        if got is None:
            ident = tuple(range(len(self.slots)))
            got = [operator.itemgetter(*p) for p in self.perms if p != ident]
            object.__setattr__(self, "_getters_cache", got)
        return got

    def compress(self, s: tuple) -> tuple:
        """Generations strictly between 0 and ``pG`` renumbered 1, 2, ... in order; those from ``pG``
        up shifted down together (differences kept). Only with ``failover`` persisted or none."""
        if not self.gens:
            return s
        pg = s[self.gens[-1]]
        if pg < 1:
            return s
        low = sorted({s[i] for i in self.gens if 0 < s[i] < pg})
        shift = pg - (len(low) + 1)
        if shift == 0:
            return s
        rank = {x: r + 1 for r, x in enumerate(low)}
        out = list(s)
        for i in self.gens:
            x = s[i]
            out[i] = x if x <= 0 else (rank[x] if x < pg else x - shift)
        return tuple(out)

    def to_dict(self, s: tuple) -> dict[str, Any]:
        return {f"{n}{list(idx) if idx else ''}": s[i] for i, (n, idx) in enumerate(self.slots)}


def _function(emit: _Emitter, guard: z3.ExprRef, outputs: list[z3.ExprRef]) -> Callable[[tuple], Any]:
    emit.names, emit.lines = {}, []
    g = emit.term(guard)
    head = list(emit.lines) + [f"    if not {g}:", "        return None"]
    emit.lines = []
    outs = [emit.term(o) for o in outputs]
    src = "def f(s):\n" + "\n".join(head + emit.lines) + f"\n    return ({', '.join(outs)},)\n"
    scope: dict[str, Any] = {}
    exec(compile(src, "<explicit>", "exec"), scope)  # noqa: S102 - our own translation of Z3 terms
    return scope["f"]


def compile_model(variant: Variant, sizes: dict[str, int], drop_ghosts: bool = True, compress: bool = True) -> Compiled:
    """Every action instance and every value of its free choices as a Python function of a state."""
    model = ProtocolModel(variant)
    v = Concrete(sizes)
    s = ConcreteState(v, STATE, "s")
    choice = ChoiceState(v, CHOICES, "c")
    kept = [var for var in STATE if not (drop_ghosts and var.name in GHOSTS)]
    slots = tuple((var.name, idx) for var in kept for idx in v.tuples(var.dom))
    pos = {slot: i for i, slot in enumerate(slots)}
    slot_of = {s.consts[slot].get_id(): i for slot, i in pos.items()}
    ghost_ids = {c.get_id() for (n, _), c in s.consts.items() if n not in {var.name for var in kept}}
    emit = _Emitter(slot_of)
    choice_consts = list(choice.inner.consts.values())
    steps, terms = [], []
    for a in model.actions:
        for args in v.tuples(a.params):
            e = model.effect(a, v, s, args, choice)
            guard = to_z3(AND(e.guard, e.assume))
            outs = []
            for name, idx in slots:
                upd = e.updates.get(name)
                kind = next(var.kind for var in STATE if var.name == name)
                outs.append(s.consts[(name, idx)] if upd is None else v.value(upd(*idx), kind))
            _no_ghost(ghost_ids, [guard] + outs, a.name)
            used = [c for c in choice_consts if any(_mentions(x, c) for x in [guard] + outs)] if a.uses_choice else []
            for bits in itertools.product((False, True), repeat=len(used)):
                sub = [(c, z3.BoolVal(b)) for c, b in zip(used, bits)]
                g = z3.simplify(z3.substitute(guard, *sub)) if sub else guard
                if z3.is_false(g):
                    continue
                o = [z3.substitute(x, *sub) if sub else x for x in outs]
                steps.append((a.name, tuple(args), _function(emit, g, o)))
                terms.append((g, tuple(o)))
    props, prop_terms = {}, []
    for prop in model.PROPERTIES:
        p = to_z3(model.prop(prop)(v, s))
        _no_ghost(ghost_ids, [p], prop)
        props[prop] = _function(emit, z3.BoolVal(True), [p])
        prop_terms.append((prop, p))
    init = tuple(next(var.init for var in STATE if var.name == n) for n, _ in slots)
    perms = tuple(_perm(slots, pos, sigma) for sigma in itertools.permutations(range(sizes["M"])))
    gens: tuple[int, ...] = ()
    if variant.failover == "persisted" and compress:
        gens = tuple(i for i, (n, _) in enumerate(slots) if n in GENERATIONS) + (pos[("pG", ())],)
    return Compiled(variant, dict(sizes), slots, init, tuple(steps),
                    {k: (lambda st, f=f: f(st)[0]) for k, f in props.items()}, perms, gens,
                    tuple(terms), tuple(prop_terms), tuple(slot_of.items()))


def _subterms(e: z3.ExprRef):
    """Every subterm of ``e`` once (Z3 terms are DAGs: a shared subterm is visited once)."""
    todo, seen = [e], set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        yield x
        todo.extend(x.children())


def _mentions(e: z3.ExprRef, c: z3.ExprRef) -> bool:
    return any(x.eq(c) for x in _subterms(e))


def _no_ghost(ghost_ids: set[int], exprs: list[z3.ExprRef], where: str) -> None:
    for e in exprs:
        for x in _subterms(e):
            if x.get_id() in ghost_ids:
                raise ValueError(f"explicit search: {where} reads a ghost variable ({x}); it cannot be dropped")


def _perm(slots, pos, sigma: tuple[int, ...]) -> tuple[int, ...]:
    """Source position of each slot after renaming member ``m`` to ``sigma[m]``."""
    doms = {var.name: var.dom for var in STATE}
    inverse = {sigma[m]: m for m in range(len(sigma))}
    return tuple(pos[(name, tuple(inverse[i] if d == "M" else i for d, i in zip(doms[name], idx)))]
                 for name, idx in slots)


@dataclass(frozen=True)
class SearchResult:
    violated: bool
    depth: int  # the shortest counterexample's length, the depth searched, or where the search saturated
    saturated: bool  # no new state at some depth: every reachable state was visited (all run lengths)
    states: int  # distinct states (up to member renaming) visited
    per_depth: tuple[int, ...]  # new states at each depth
    seconds: float
    bad_state: dict[str, Any] | None = None


def search(variant: Variant, sizes: dict[str, int], prop: str, depth: int,
           time_limit: float | None = None, compiled: Compiled | None = None) -> SearchResult:
    """Breadth-first search of every state reachable in at most ``depth`` steps; stops at the first
    state that breaks ``prop`` (its distance is the shortest counterexample's length). With a
    ``time_limit`` the search may stop early: ``depth`` then says how far it got."""
    start = time.perf_counter()
    c = compiled if compiled is not None else compile_model(variant, sizes)
    ok = c.props[prop]
    steps = [f for _, _, f in c.steps]
    canonical = c.canonical
    init = c.canonical(c.init)
    seen = {init}
    frontier = [init]
    per_depth = [1]
    if not ok(init):
        return SearchResult(True, 0, False, 1, (1,), time.perf_counter() - start, c.to_dict(init))
    for d in range(1, depth + 1):
        nxt = []
        for st in frontier:
            for f in steps:
                t = f(st)
                if t is None:
                    continue
                t = canonical(t)
                if t in seen:
                    continue
                seen.add(t)
                if not ok(t):
                    return SearchResult(True, d, False, len(seen), tuple(per_depth + [len(nxt) + 1]),
                                        time.perf_counter() - start, c.to_dict(t))
                nxt.append(t)
        per_depth.append(len(nxt))
        frontier = nxt
        if not frontier:
            return SearchResult(False, d, True, len(seen), tuple(per_depth), time.perf_counter() - start)
        if time_limit is not None and time.perf_counter() - start > time_limit and d < depth:
            return SearchResult(False, d, False, len(seen), tuple(per_depth), time.perf_counter() - start)
    return SearchResult(False, depth, False, len(seen), tuple(per_depth), time.perf_counter() - start)
