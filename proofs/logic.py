"""The two views every model in proofs/ is written over, and Boolean helpers that work in both.

A model (the group protocol, the constrained builder) is written **once**, as Python functions that
build formulas through a *view*:

* ``Concrete(sizes)``: members and partitions are Python ints ``0..n-1``; ``forall`` is a
  conjunction over them, ``same(a, b)`` a Python bool. Used for bounded search (BMC), for
  fixed-size IC3/PDR (Spacer), and for checking simulator ticks against the model.
* ``Symbolic()``: members and partitions are constants of the uninterpreted sorts ``Member`` and
  ``Partition``; ``forall`` is a Z3 quantifier. A proof over this view holds for every number of
  members and partitions.

The helpers fold Python bools away (``AND(True, x)`` is ``x``), so the concrete view produces
small formulas without asking Z3 to simplify them.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable

import z3

__all__ = ["AND", "OR", "NOT", "IMP", "ITE", "EQ", "is_true", "is_false", "Concrete", "Symbolic"]


def is_true(x: Any) -> bool:
    return x is True or (isinstance(x, z3.BoolRef) and z3.is_true(x))


def is_false(x: Any) -> bool:
    return x is False or (isinstance(x, z3.BoolRef) and z3.is_false(x))


def AND(*xs: Any) -> Any:
    out = []
    for x in xs:
        if is_false(x):
            return False
        if not is_true(x):
            out.append(x)
    if not out:
        return True
    return out[0] if len(out) == 1 else z3.And(*out)


def OR(*xs: Any) -> Any:
    out = []
    for x in xs:
        if is_true(x):
            return True
        if not is_false(x):
            out.append(x)
    if not out:
        return False
    return out[0] if len(out) == 1 else z3.Or(*out)


def NOT(x: Any) -> Any:
    if is_true(x):
        return False
    if is_false(x):
        return True
    return z3.Not(x)


def IMP(a: Any, b: Any) -> Any:
    return OR(NOT(a), b)


def ITE(c: Any, a: Any, b: Any) -> Any:
    if is_true(c):
        return a
    if is_false(c):
        return b
    if a is b:
        return a
    return z3.If(c, a, b)


def EQ(a: Any, b: Any) -> Any:
    if isinstance(a, (bool, int)) and isinstance(b, (bool, int)):
        return a == b
    return a == b


def to_z3(x: Any) -> z3.ExprRef:
    """A Python bool or int as a Z3 value (for asserting folded formulas)."""
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, int):
        return z3.IntVal(x)
    return x


class Concrete:
    """Fixed sizes: ``sizes = {"M": members, "P": partitions}``; elements are Python ints."""

    symbolic = False

    def __init__(self, sizes: dict[str, int], int_bits: int | None = None):
        self.sizes = dict(sizes)
        self.int_bits = int_bits  # Int variables as signed bit-vectors of this width (bounded search)

    def int_sort(self) -> z3.SortRef:
        return z3.IntSort() if self.int_bits is None else z3.BitVecSort(self.int_bits)

    def value(self, x: Any, kind: str) -> z3.ExprRef:
        """A folded value (Python bool/int or Z3 term) as a term of the variable's sort."""
        if kind == "bool":
            return z3.BoolVal(x) if isinstance(x, bool) else x
        if isinstance(x, int):
            return z3.IntVal(x) if self.int_bits is None else z3.BitVecVal(x, self.int_bits)
        return x

    def elems(self, dom: str) -> range:
        return range(self.sizes[dom])

    def tuples(self, doms: Iterable[str]) -> Iterable[tuple[int, ...]]:
        return itertools.product(*(self.elems(d) for d in doms))

    def forall(self, doms: tuple[str, ...], f: Callable[..., Any]) -> Any:
        return AND(*(f(*idx) for idx in self.tuples(doms)))

    def exists(self, doms: tuple[str, ...], f: Callable[..., Any]) -> Any:
        return OR(*(f(*idx) for idx in self.tuples(doms)))

    def same(self, a: int, b: int) -> bool:
        return a == b


class Symbolic:
    """Every size at once: elements are constants of the uninterpreted sorts ``Member`` and ``Partition``."""

    symbolic = True
    SORT_NAMES = {"M": "Member", "P": "Partition"}

    def __init__(self) -> None:
        self.sorts = {d: z3.DeclareSort(n) for d, n in self.SORT_NAMES.items()}
        self._count = itertools.count()

    def fresh(self, dom: str, hint: str = "x") -> z3.ExprRef:
        return z3.Const(f"{hint}!{next(self._count)}", self.sorts[dom])

    def forall(self, doms: tuple[str, ...], f: Callable[..., Any]) -> Any:
        xs = [self.fresh(d, d.lower()) for d in doms]
        body = f(*xs)
        if isinstance(body, bool) or not xs:
            return body
        return z3.ForAll(xs, body)

    def exists(self, doms: tuple[str, ...], f: Callable[..., Any]) -> Any:
        xs = [self.fresh(d, d.lower()) for d in doms]
        body = f(*xs)
        if isinstance(body, bool) or not xs:
            return body
        return z3.Exists(xs, body)

    def same(self, a: z3.ExprRef, b: z3.ExprRef) -> Any:
        return a == b
