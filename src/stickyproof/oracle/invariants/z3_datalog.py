"""The Z3 boundary: an invariant's Datalog program in, the tuples of one relation out.

The only module of the oracle that imports z3, writes Z3's text protocol (declarations, facts,
the query) and reads its answers. The invariant modules state their violation formulas as
Horn rules over the relations they declare here, with ``num`` for numeric literals; everything
about how Z3 is asked and answered stays on this side.

- **Program text, not the Python API.** Facts are written as Datalog text and parsed by Z3 in
  C++, and muZ's rule transformations (designed for recursive programs with few facts) are
  switched off; answers are read from their text. Building the same facts through the Python
  API, or asking the SMT solver to search a disjunction of rows, takes tens of seconds.
- **Answers read three ways.** A datalog answer is a disjunction of ground tuples: up to
  ``_TEXT_PARSE_MAX`` tuples it is read from its SMT-LIB text in one regular-expression pass,
  checked against its shape; otherwise (or if the text has another shape) from the AST; an answer
  that is not a disjunction of ground tuples at all is enumerated model by model.

z3 is imported inside ``query`` only, so importing the oracle does not load it. Every z3
exception becomes ``SolverError``, and so does a query that Z3 cannot decide (``timeout``).
Determinism: the program is a function of the sorted facts, and the reported tuples are sorted
(past 5,000 tuples, taken in Z3's own deterministic order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...errors import SolverError

__all__ = ["NUM_BITS", "Program", "num", "query"]

NUM_BITS = 34
"""Width of numeric columns (partition numbers, counts, loads): signed, so an int32 value, a
negative number from a hand-built Assignment, and sums of two loads all fit."""

_ENGINE_OFF = (
    # muZ's rule transformations are meant for recursive programs with few facts; on tens of
    # thousands of ground facts they cost seconds and change no answer (the facts stay as given).
    "xform.slice",
    "xform.inline_linear",
    "xform.inline_eager",
    "xform.subsumption_checker",
    "xform.coi",
    "xform.compress_unbound",
    "datalog.subsumption",
)


def _bv(value: int, width: int) -> str:
    return f"(_ bv{value % (1 << width)} {width})"


def num(value: int) -> str:
    """A literal of a ``num`` column (NUM_BITS wide, two's complement), for the rules' filters."""
    return _bv(value, NUM_BITS)


@dataclass
class Program:
    """An invariant as a Datalog program over bit-vector columns.

    Column kinds: ``id`` (a dense id: member, topic, class, row group; unsigned, as wide as the
    largest id needs) and ``num`` (NUM_BITS, signed). Facts are ground tuples; rules are Horn
    clauses with stratified negation and interpreted filters (bit-vector comparisons).
    """

    invariant: str
    relations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    facts: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)
    largest_id: int = 1

    def rel(self, name: str, *kinds: str) -> None:
        self.relations[name] = kinds
        self.facts[name] = []

    def var(self, **kinds: str) -> None:
        self.variables.update(kinds)

    def fact(self, name: str, *values: int) -> None:
        for kind, v in zip(self.relations[name], values):
            if kind == "id" and v > self.largest_id:
                self.largest_id = v
        self.facts[name].append(values)

    def rule(self, head: str, *body: str) -> None:
        self.rules.append(f"(rule (=> (and {' '.join(body)}) {head}))" if body else f"(rule {head})")

    def id_width(self) -> int:
        return self.largest_id.bit_length() + 1

    def width(self, kind: str, id_width: int) -> int:
        return NUM_BITS if kind == "num" else id_width

    def text(self, relation: str) -> str:
        """The program as Z3 fixedpoint text, ending with the query "is ``relation`` non-empty?"."""
        w = self.id_width()
        sort = {"id": f"(_ BitVec {w})", "num": f"(_ BitVec {NUM_BITS})"}
        lines = [f"(declare-rel {n} ({' '.join(sort[k] for k in kinds)}))" for n, kinds in self.relations.items()]
        lines += [f"(declare-var {n} {sort[k]})" for n, k in self.variables.items()]
        cache: dict[str, dict[int, str]] = {"id": {}, "num": {}}
        width = {"id": w, "num": NUM_BITS}
        for name, rows in self.facts.items():
            kinds = self.relations[name]
            lits = [cache[k] for k in kinds]
            widths = [width[k] for k in kinds]
            for values in rows:
                parts = []
                for lit, wd, v in zip(lits, widths, values):
                    text = lit.get(v)
                    if text is None:
                        text = lit[v] = _bv(v, wd)
                    parts.append(text)
                lines.append(f"(rule ({name} {' '.join(parts)}))")
        lines += self.rules
        lines.append(f"(query {relation})")
        return "\n".join(lines)


def query(prog: Program, relation: str, *, limit: int, timeout: float | None) -> list[tuple[int, ...]]:
    """Up to ``limit`` tuples of ``relation``, the least fixpoint of ``prog`` (Z3 muZ datalog).

    ``sat`` means the relation is non-empty (for an invariant's violation relation: it is broken).
    Tuples are read from Z3's answer, a formula over the relation's columns (module docstring).
    """
    import z3

    kinds = prog.relations[relation]
    try:
        fp = z3.Fixedpoint()
        fp.set(engine="datalog")
        for option in _ENGINE_OFF:
            fp.set(option, False)
        if timeout is not None:
            fp.set("timeout", max(1, int(timeout * 1000)))
        queries = fp.parse_string(prog.text(relation))
        verdict = fp.query(queries[0])
        if verdict == z3.unsat:
            return []
        if verdict != z3.sat:
            reason = fp.reason_unknown()
            if timeout is not None:
                # The timer can stop the engine between its own checks: the query then answers
                # unknown (reason "canceled", "timeout", even "ok") instead of raising. Over
                # finite facts nothing else makes this engine answer unknown.
                raise SolverError(f"z3 gave up on invariant {prog.invariant!r} at the {timeout} s limit ({reason})")
            raise SolverError(f"z3 could not decide invariant {prog.invariant!r}: {reason}")
        answer = fp.get_answer()
        found = _answer_tuples(z3, answer, kinds, limit)
        if found is None:  # not a disjunction of ground tuples: enumerate its models instead
            found = _model_tuples(z3, answer, kinds, [prog.width(k, prog.id_width()) for k in kinds], limit)
        found = sorted(found)[:limit]
        if not found:
            raise SolverError(f"z3 reported invariant {prog.invariant!r} violated but gave no tuple (internal error)")
        return found
    except z3.Z3Exception as exc:
        if timeout is not None and "canceled" in str(exc):
            raise SolverError(f"z3 gave up on invariant {prog.invariant!r} at the {timeout} s limit") from exc
        raise SolverError(f"z3 failed on invariant {prog.invariant!r}: {exc}") from exc


_EQUALITY = re.compile(r"\(= \(:var (\d+)\) (#b[01]+|#x[0-9a-fA-F]+)\)")


_TEXT_PARSE_MAX = 5000
"""Answers up to this many tuples are read whole from their text; larger ones (a heavily broken
assignment) only up to ``limit`` tuples, in Z3's order, through the AST: printing a 100,000-tuple
answer takes seconds."""


def _answer_tuples(z3: Any, answer: Any, kinds: Sequence[str], limit: int) -> list[tuple[int, ...]] | None:
    """The tuples of a datalog answer of the form Or(And(Var(i) == value, ...), ...), or None.

    The answer names column i as Var(arity - 1 - i). Read from the answer's SMT-LIB text (one
    pass of a regular expression; walking thousands of AST nodes through the Python API is
    slow), checked against its shape, else from the AST.
    """
    arity = len(kinds)
    size = answer.num_args() if z3.is_or(answer) else 1
    if size > _TEXT_PARSE_MAX and limit < size:
        first = z3.Or([answer.arg(i) for i in range(limit)]) if limit > 1 else answer.arg(0)
        return _answer_ast_tuples(z3, first, kinds)
    text = answer.sexpr()
    pairs = _EQUALITY.findall(text)
    if pairs and len(pairs) % arity == 0 and text.count("(= ") == len(pairs) and text.count("(:var ") == len(pairs):
        rows: list[tuple[int, ...]] = []
        ok = True
        for i in range(0, len(pairs), arity):
            row: dict[int, int] = {}
            for var, lit in pairs[i : i + arity]:
                col = arity - 1 - int(var)
                if col < 0 or col in row:
                    ok = False
                    break
                digits = lit[2:]
                width = len(digits) * (1 if lit[1] == "b" else 4)
                value = int(digits, 2 if lit[1] == "b" else 16)
                if kinds[col] == "num" and value >> (width - 1):
                    value -= 1 << width
                row[col] = value
            if not ok or len(row) != arity:
                ok = False
                break
            rows.append(tuple(row[c] for c in range(arity)))
        if ok:
            return rows
    return _answer_ast_tuples(z3, answer, kinds)


def _answer_ast_tuples(z3: Any, answer: Any, kinds: Sequence[str]) -> list[tuple[int, ...]] | None:
    arity = len(kinds)
    disjuncts = answer.children() if z3.is_or(answer) else [answer]
    out = []
    for d in disjuncts:
        equalities = d.children() if z3.is_and(d) else [d]
        row: dict[int, int] = {}
        for e in equalities:
            if not z3.is_eq(e):
                return None
            a, b = e.children()
            if z3.is_var(b):
                a, b = b, a
            if not (z3.is_var(a) and z3.is_bv_value(b)):
                return None
            col = arity - 1 - z3.get_var_index(a)
            row[col] = b.as_signed_long() if kinds[col] == "num" else b.as_long()
        if len(row) != arity:
            return None
        out.append(tuple(row[i] for i in range(arity)))
    return out


def _model_tuples(z3: Any, answer: Any, kinds: Sequence[str], widths: Sequence[int], limit: int) -> list[tuple[int, ...]]:
    """Up to ``limit`` tuples satisfying a datalog answer, each found tuple blocked."""
    cols = [z3.BitVec(f"col{i}", w) for i, w in enumerate(widths)]
    solver = z3.Solver()
    solver.add(z3.substitute_vars(answer, *reversed(cols)))
    found: list[tuple[int, ...]] = []
    while len(found) < limit and solver.check() == z3.sat:
        model = solver.model()
        raw = [model.eval(c, model_completion=True) for c in cols]
        found.append(tuple(v.as_signed_long() if k == "num" else v.as_long() for v, k in zip(raw, kinds)))
        solver.add(z3.Or([c != v for c, v in zip(cols, raw)]))
    return found
