"""State of the protocol model: the variables, and accessors over either view.

Every variable is a function of members (``M``) and/or partitions (``P``) to a Bool or an Int.
A *state* is read through an accessor, ``s.own(m, p)``, whatever backs it: Z3 functions over the
uninterpreted sorts (symbolic view), one Z3 constant per element (concrete view), or the update
expressions of an action applied to another state (``NextState``: the successor as a term over its
predecessor, which is how an inductive step is checked without quantified frame axioms).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import z3

from ..logic import Concrete, Symbolic

__all__ = ["Var", "State", "ConcreteState", "SymbolicState", "NextState", "ChoiceState"]


@dataclass(frozen=True)
class Var:
    """One state variable: its name, its domain (a tuple of ``"M"``/``"P"``), Bool or Int, and its initial value."""

    name: str
    dom: tuple[str, ...]
    kind: str  # "bool" | "int"
    init: Any
    doc: str = ""


class State:
    """``s.name(*idx)`` reads variable ``name`` at ``idx``."""

    def __init__(self, read: Callable[[str, tuple], Any]):
        object.__setattr__(self, "_read", read)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        read = object.__getattribute__(self, "_read")
        return lambda *idx: read(name, idx)

    def read(self, name: str, idx: tuple) -> Any:
        return object.__getattribute__(self, "_read")(name, idx)


def _z3_sort(kind: str, view: object = None) -> z3.SortRef:
    if kind == "bool":
        return z3.BoolSort()
    return view.int_sort() if isinstance(view, Concrete) else z3.IntSort()


class ConcreteState(State):
    """One fresh Z3 constant per variable and element, named ``<prefix>.<var>[<idx>]``."""

    def __init__(self, view: Concrete, variables: tuple[Var, ...], prefix: str):
        consts: dict[tuple[str, tuple], z3.ExprRef] = {}
        for var in variables:
            for idx in view.tuples(var.dom):
                label = f"{prefix}.{var.name}" + (f"[{','.join(map(str, idx))}]" if idx else "")
                consts[(var.name, idx)] = z3.Const(label, _z3_sort(var.kind, view))
        self.consts = consts
        self.variables = variables
        super().__init__(lambda name, idx: consts[(name, tuple(idx))])


class SymbolicState(State):
    """One Z3 function per variable over the uninterpreted sorts."""

    def __init__(self, view: Symbolic, variables: tuple[Var, ...], prefix: str):
        funcs: dict[str, Any] = {}
        for var in variables:
            if var.dom:
                funcs[var.name] = z3.Function(f"{prefix}.{var.name}", *[view.sorts[d] for d in var.dom], _z3_sort(var.kind))
            else:
                funcs[var.name] = z3.Const(f"{prefix}.{var.name}", _z3_sort(var.kind))
        self.funcs = funcs
        self.variables = variables
        super().__init__(lambda name, idx: funcs[name](*idx) if idx else funcs[name])


class NextState(State):
    """The successor of ``current`` under ``updates`` (variable name -> function of the indices)."""

    def __init__(self, current: State, updates: Mapping[str, Callable[..., Any]]):
        self.current = current
        self.updates = dict(updates)
        super().__init__(lambda name, idx: self.updates[name](*idx) if name in self.updates else current.read(name, idx))


class ChoiceState(State):
    """Free choices of one step (the assignor's answer): fresh, unconstrained until the action's assumption."""

    def __init__(self, view: Concrete | Symbolic, variables: tuple[Var, ...], prefix: str):
        if view.symbolic:
            inner: State = SymbolicState(view, variables, prefix)  # type: ignore[arg-type]
        else:
            inner = ConcreteState(view, variables, prefix)  # type: ignore[arg-type]
        self.inner = inner
        super().__init__(inner.read)
