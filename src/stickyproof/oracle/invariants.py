"""Z3 checks of one assignment against every invariant of ``models/invariants.md``, with witnesses.

Each invariant is one Datalog program run by Z3's fixedpoint engine (muZ, ``engine=datalog``):
the facts of the assignment are relations over dense ids, the invariant's violation formula is a
rule set defining a relation ``V`` (joins, stratified negation, bit-vector comparisons), and the
query "is ``V`` non-empty?" is the check. ``sat`` is what reports a violation; the witness is read
from Z3's answer, the tuples of ``V`` (which row, which members, which loads, which level).
``unsat`` means the least fixpoint holds no violation: the invariant holds for these facts.

How 100,000 partitions are checked in well under 10 s (benchmarks/invariants.py prints the figure):

- **Aggregated facts over dense ids.** Members, topics, subscription classes and row groups are
  numbered densely in sorted order, so numbering never depends on input order. Facts are
  grouped by exactly the attributes the rules read, so a valid assignment yields a few facts per
  topic or per member rather than per partition: ``unassigned``/``duplicate`` see one fact per
  (topic, multiplicity) (the counting is the Python aggregation; Datalog cannot count),
  ``unsubscribed`` one per (subscription class, topic held), ``nonexistent`` the smallest and
  largest partition number held per topic (some number is out of range iff one of those is),
  ``uniform`` one per distinct load, ``kafka`` one per (topic, load of a holder),
  ``cooperative-unsafe`` one per (holder, claimant set). Each fact keeps a representative in
  Python (the smallest member id, the first partition), which becomes the witness when Z3 picks it.
- **A reachability query for the improving chain** (``global``, T1). Whether a member can pass a
  partition on depends only on its subscription set and on which topics it holds, so the graph
  has one node per topic and one per subscription class: topic -> class (the class subscribes
  to it), class -> topic (a member of the class holds a partition of it). A *shortest* improving
  chain from a member of load ``l`` passes only through members of load ``l - 1``: an
  intermediate at ``<= l - 2`` would end a shorter chain, one at ``>= l_end + 2`` would start one,
  and ``l_end <= l - 2``. So reachability is computed per source load ``l`` through the class ->
  topic arcs of members of load ``l - 1`` only, which keeps the fixpoint small without losing any
  violation. The chain is rebuilt breadth-first through the nodes Z3 derived as reached from the
  reported level, made concrete (members, partitions) and re-verified move by move.
- **Program text, not the Python API.** Facts are written as Datalog text and parsed by Z3 in
  C++, and muZ's rule transformations (designed for recursive programs with few facts) are
  switched off; answers are read from their text. Building the same facts through the Python
  API, or asking the SMT solver to search a disjunction of rows, takes tens of seconds.

z3 is imported only here; every z3 exception becomes ``SolverError``, and so does a query that
Z3 cannot decide (``timeout``). Determinism: the program is a function of the sorted facts, and
the reported tuples are sorted (past 5,000 tuples, taken in Z3's own deterministic order).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..errors import InvalidScenario, SolverError
from ..model import Assignment, Scenario, TopicPartition

__all__ = [
    "INVARIANTS",
    "ASSIGNMENT_INVARIANTS",
    "RUN_INVARIANTS",
    "BALANCE_MODES",
    "Violation",
    "CheckResult",
    "subscriptions_equal",
    "default_balance",
    "check_assignment",
]

INVARIANTS = (
    "unassigned",
    "duplicate",
    "unsubscribed",
    "nonexistent",
    "imbalance",
    "cooperative-unsafe",
    "revoking-unclaimed",
    "nondeterministic",
    "unstable",
)
ASSIGNMENT_INVARIANTS = INVARIANTS[:7]
"""The invariants of one assignment (``check_assignment``)."""
RUN_INVARIANTS = INVARIANTS[7:]
"""The invariants that need the assignor itself (``grade`` with ``run``)."""
BALANCE_MODES = ("uniform", "global", "kafka")


@dataclass(frozen=True, eq=True)
class Violation:
    """One broken invariant and the witness read from Z3's answer (JSON-ready values)."""

    invariant: str
    witness: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "witness": dict(self.witness)}


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one assignment.

    ``valid`` is True when no invariant was violated. ``deferred`` lists invariants that were
    not judged (``imbalance`` in a cooperative round with partitions pending revocation, R40).
    """

    valid: bool
    violations: tuple[Violation, ...]
    balance: str = "global"
    cooperative: bool = False
    deferred: tuple[str, ...] = ()

    def violated(self) -> tuple[str, ...]:
        """The identifiers of the broken invariants, in INVARIANTS order, each once."""
        names = {v.invariant for v in self.violations}
        return tuple(n for n in INVARIANTS if n in names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "violations": [v.to_dict() for v in self.violations],
            "balance": self.balance,
            "cooperative": self.cooperative,
            "deferred": list(self.deferred),
        }


def _existing_topics(scenario: Scenario) -> dict[str, int]:
    return {t.name: t.partitions for t in scenario.topics if t.partitions > 0}


def subscriptions_equal(scenario: Scenario) -> bool:
    """Whether every member subscribes to the same set of existing, non-empty topics."""
    existing = _existing_topics(scenario)
    return len({frozenset(t for t in m.topics if t in existing) for m in scenario.members}) <= 1


def default_balance(scenario: Scenario) -> str:
    """``uniform`` when subscriptions are equal, else ``global`` (models/invariants.md §2)."""
    return "uniform" if subscriptions_equal(scenario) else "global"


# ------------------------------------------------------------------------------------------
# Facts: one pass over the assignment, everything keyed by sorted dense ids.


def _tp(tp: TopicPartition) -> list[Any]:
    return [tp.topic, tp.partition]


@dataclass
class _Facts:
    scenario: Scenario
    cooperative: bool
    members: tuple[str, ...]  # scenario members, sorted
    mid: dict[str, int]  # members first, then outsiders (ids only in the assignment), each sorted
    outsiders: tuple[str, ...]
    tid: dict[str, int]
    counts: dict[str, int]  # metadata partition counts (0 kept: a topic listed with no partitions)
    existing: dict[str, int]  # n(t) > 0
    assignable: dict[str, int]  # D1
    topics_of: dict[str, frozenset[str]]
    assigned: dict[str, tuple[TopicPartition, ...]]
    revoking: dict[str, tuple[TopicPartition, ...]]
    loads: dict[str, int]
    held: dict[str, dict[str, list[int]]]  # member -> topic -> partitions in list order
    pending: int = 0
    ids: list[str] = field(default_factory=list)  # dense member id -> name

    def member_name(self, i: int) -> str:
        return self.ids[i]


def _facts(scenario: Scenario, assignment: Assignment, cooperative: bool) -> _Facts:
    members = tuple(sorted(m.id for m in scenario.members))
    in_group = set(members)
    assigned = {m: tuple(assignment.assignment.get(m, ())) for m in members}
    revoking = {m: tuple(assignment.revoking.get(m, ())) for m in members}
    extra = sorted((set(assignment.assignment) | set(assignment.revoking)) - in_group)
    for o in extra:
        assigned[o] = tuple(assignment.assignment.get(o, ()))
        revoking[o] = tuple(assignment.revoking.get(o, ()))
    ids = list(members) + extra
    mid = {m: i for i, m in enumerate(ids)}
    counts = {t.name: t.partitions for t in scenario.topics}
    existing = {t: n for t, n in counts.items() if n > 0}
    subscribed = {t for m in scenario.members for t in m.topics}
    assignable = {t: n for t, n in existing.items() if t in subscribed}
    names = set(counts) | subscribed
    held: dict[str, dict[str, list[int]]] = {}
    for m, tps in assigned.items():
        per: dict[str, list[int]] = {}
        for tp in tps:
            per.setdefault(tp.topic, []).append(tp.partition)
        held[m] = per
        names.update(per)
    for tps in revoking.values():
        names.update(tp.topic for tp in tps)
    for m in scenario.members:
        names.update(tp.topic for tp in m.owned)
    tid = {t: i for i, t in enumerate(sorted(names))}
    topics_of = {m.id: frozenset(m.topics) for m in scenario.members}
    for o in extra:
        topics_of[o] = frozenset()
    pending = 0
    if cooperative:
        pending = len({tp for tps in revoking.values() for tp in tps if 0 <= tp.partition < assignable.get(tp.topic, 0)})
    return _Facts(
        scenario=scenario,
        cooperative=cooperative,
        members=members,
        mid=mid,
        outsiders=tuple(extra),
        tid=tid,
        counts=counts,
        existing=existing,
        assignable=assignable,
        topics_of=topics_of,
        assigned=assigned,
        revoking=revoking,
        loads={m: len(assigned[m]) for m in members},
        held=held,
        pending=pending,
        ids=ids,
    )


# ------------------------------------------------------------------------------------------
# The Z3 boundary: one Datalog program per invariant in, the violation relation's tuples out.

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


def _num(value: int) -> str:
    return _bv(value, NUM_BITS)


@dataclass
class _Program:
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

    def text(self, query: str) -> str:
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
        lines.append(f"(query {query})")
        return "\n".join(lines)


def _violations(prog: _Program, relation: str, *, limit: int, timeout: float | None) -> list[tuple[int, ...]]:
    """Up to ``limit`` tuples of ``relation``, the least fixpoint of ``prog`` (Z3 muZ datalog).

    ``sat`` means the relation is non-empty: that is the violation. Tuples are read from Z3's
    answer (a formula over the relation's columns) by solving it, each found tuple blocked.
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
            raise SolverError(f"z3 could not decide invariant {prog.invariant!r}: {fp.reason_unknown()}")
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


# ------------------------------------------------------------------------------------------
# unassigned, duplicate: one fact per (topic, multiplicity).


def _multiplicity_rows(f: _Facts) -> list[tuple[str, int, int, int]]:
    """Rows (topic, k, first partition, how many) over E: k = how often the partition is placed
    (assignment, plus revoking in a cooperative round)."""
    placed: dict[str, Counter[int]] = {t: Counter() for t in f.existing}
    # A partition withheld from several former claimants is revoked by each of them (D5, N4):
    # it counts once, so it is a duplicate only when it is also assigned (or assigned twice).
    withheld = sorted({tp for tps in f.revoking.values() for tp in tps}) if f.cooperative else []
    lists = list(f.assigned.values()) + [withheld]
    for tps in lists:
        for tp in tps:
            n = f.existing.get(tp.topic)
            if n is not None and 0 <= tp.partition < n:
                placed[tp.topic][tp.partition] += 1
    rows = []
    for t in sorted(f.existing):
        counter, n = placed[t], f.existing[t]
        if len(counter) < n:
            first = 0
            while first in counter:
                first += 1
            rows.append((t, 0, first, n - len(counter)))
        by_k: dict[int, list[int]] = {}
        for p, k in counter.items():
            by_k.setdefault(k, []).append(p)
        for k in sorted(by_k):
            rows.append((t, k, min(by_k[k]), len(by_k[k])))
    return rows


def _check_placement(f: _Facts, invariant: str, limit: int, timeout: float | None) -> list[Violation]:
    rows = _multiplicity_rows(f)
    prog = _Program(invariant)
    prog.rel("placed", "id", "num", "id")  # topic t has partitions placed k times (row g)
    prog.var(t="id", k="num", g="id")
    for g, (t, k, _, _) in enumerate(rows):
        prog.fact("placed", f.tid[t], k, g)
    if invariant == "unassigned":
        prog.rel("assignable", "id")  # D1: an existing topic with a subscriber
        for t in sorted(f.assignable):
            prog.fact("assignable", f.tid[t])
        prog.rel("unassigned", "id", "id")
        # C1 lower half: an assignable partition placed nowhere.
        prog.rule("(unassigned t g)", "(placed t k g)", "(assignable t)", f"(= k {_num(0)})")
    else:
        prog.rel("duplicate", "id", "num", "id")
        # C1 upper half: an existing partition placed twice or more.
        prog.rule("(duplicate t k g)", "(placed t k g)", f"(bvsge k {_num(2)})")
    out = []
    for tup in _violations(prog, invariant, limit=limit, timeout=timeout):
        t, _, first, size = rows[tup[-1]]
        tp = TopicPartition(t, first)
        if invariant == "unassigned":
            out.append(Violation(invariant, {"partition": _tp(tp), "topic_unassigned": size}))
        else:
            out.append(Violation(invariant, {"partition": _tp(tp), "holders": _holders(f, tp)}))
    return out


def _holders(f: _Facts, tp: TopicPartition) -> list[dict[str, str]]:
    out = [{"member": m, "as": "assigned"} for m in sorted(f.assigned) for x in f.assigned[m] if x == tp]
    if f.cooperative:
        out += [{"member": m, "as": "revoking"} for m in sorted(f.revoking) for x in f.revoking[m] if x == tp]
    return out


# ------------------------------------------------------------------------------------------
# unsubscribed: facts per (subscription class, topic); nonexistent: per topic.


def _classes(f: _Facts, key: Callable[[str], Any]) -> tuple[dict[str, int], list[list[str]]]:
    """Group members (and outsiders) by ``key``, classes numbered in sorted key order."""
    keys = sorted({key(m) for m in f.ids})
    cid = {k: i for i, k in enumerate(keys)}
    of = {m: cid[key(m)] for m in f.ids}
    members: list[list[str]] = [[] for _ in keys]
    for m in f.ids:
        members[of[m]].append(m)
    for ms in members:
        ms.sort()
    return of, members


def _check_unsubscribed(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    # Members with the same subscription are interchangeable for C2: facts per class.
    of, members = _classes(f, lambda m: tuple(sorted(f.topics_of[m])))
    prog = _Program("unsubscribed")
    prog.rel("holds", "id", "id")  # some member of class c holds a partition of topic t
    prog.rel("subscribes", "id", "id")  # class c subscribes to topic t
    prog.rel("unsubscribed", "id", "id")
    prog.var(c="id", t="id")
    holds = sorted({(of[m], f.tid[t]) for m in f.ids for t in f.held[m]})
    for c, t in holds:
        prog.fact("holds", c, t)
    held_classes = {c for c, _ in holds}
    for c, ms in enumerate(members):
        if c in held_classes:
            for t in sorted(f.topics_of[ms[0]]):
                prog.fact("subscribes", c, f.tid[t])
    # C2 broken: a held topic that is not among the holder's subscriptions.
    prog.rule("(unsubscribed c t)", "(holds c t)", "(not (subscribes c t))")
    names = sorted(f.tid, key=f.tid.__getitem__)
    out = []
    for c, t_id in _violations(prog, "unsubscribed", limit=limit, timeout=timeout):
        t = names[t_id]
        m = next(m for m in members[c] if t in f.held[m])
        out.append(
            Violation(
                "unsubscribed",
                {
                    "member": m,
                    "partition": [t, f.held[m][t][0]],
                    "topics": sorted(f.topics_of[m]),
                    "in_group": m not in f.outsiders,
                },
            )
        )
    return out


def _check_nonexistent(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    # Some held partition number of t is outside [0, n(t)) iff the smallest or largest one is.
    extremes: dict[str, set[int]] = {}
    for m in f.ids:
        for t, ps in f.held[m].items():
            extremes.setdefault(t, set()).update((min(ps), max(ps)))
    prog = _Program("nonexistent")
    prog.rel("held", "id", "num")  # partition p of topic t is assigned (extremes per topic)
    prog.rel("partitions", "id", "num")  # the metadata gives topic t n partitions
    prog.rel("known", "id")
    prog.rel("nonexistent", "id", "num")
    prog.var(t="id", p="num", n="num")
    for t in sorted(extremes):
        for p in sorted(extremes[t]):
            prog.fact("held", f.tid[t], p)
        if t in f.counts:
            prog.fact("partitions", f.tid[t], f.counts[t])
    prog.rule("(known t)", "(partitions t n)")
    prog.rule("(nonexistent t p)", "(held t p)", "(partitions t n)", "(bvsge p n)")
    prog.rule("(nonexistent t p)", "(held t p)", f"(bvslt p {_num(0)})")
    prog.rule("(nonexistent t p)", "(held t p)", "(not (known t))")
    names = sorted(f.tid, key=f.tid.__getitem__)
    out = []
    for t_id, p in _violations(prog, "nonexistent", limit=limit, timeout=timeout):
        t = names[t_id]
        m = next(m for m in f.ids if p in f.held[m].get(t, ()))
        out.append(Violation("nonexistent", {"member": m, "partition": [t, p], "topic_partitions": f.counts.get(t)}))
    return out


# ------------------------------------------------------------------------------------------
# imbalance


def _quotas(f: _Facts) -> tuple[int, int]:
    total, n = sum(f.assignable.values()), len(f.members)
    return total // n, -(-total // n)


def _check_uniform(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    if not f.members:
        return []
    by_load: dict[int, str] = {}
    for m in f.members:  # sorted: the representative of a load is its smallest member id
        by_load.setdefault(f.loads[m], m)
    loads = sorted(by_load)
    prog = _Program("imbalance")
    prog.rel("load", "id", "num")  # row g: some member has load l
    prog.rel("group", "num", "num")  # |P| partitions, N members
    prog.rel("imbalance", "id", "num")
    prog.var(g="id", l="num", np="num", nm="num")
    for g, load in enumerate(loads):
        prog.fact("load", g, load)
    prog.fact("group", sum(f.assignable.values()), len(f.members))
    # C3: min_quota = floor(P/N) <= load <= ceil(P/N) = max_quota.
    prog.rule("(imbalance g l)", "(load g l)", "(group np nm)", "(bvslt l (bvsdiv np nm))")
    prog.rule(
        "(imbalance g l)",
        "(load g l)",
        "(group np nm)",
        f"(bvsgt l (bvadd (bvsdiv np nm) (ite (= (bvsrem np nm) {_num(0)}) {_num(0)} {_num(1)})))",
    )
    lo, hi = _quotas(f)
    out = []
    for g, load in _violations(prog, "imbalance", limit=limit, timeout=timeout):
        out.append(
            Violation(
                "imbalance",
                {"mode": "uniform", "member": by_load[loads[g]], "load": load, "min_quota": lo, "max_quota": hi},
            )
        )
    return out


def _check_kafka(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    # Facts per (topic, load): some member of that load holds a partition of the topic.
    reps: dict[tuple[str, int], str] = {}
    for m in f.members:
        for t in f.held[m]:
            reps.setdefault((t, f.loads[m]), m)  # members sorted: smallest id represents
    rows = sorted(reps.items())
    prog = _Program("imbalance")
    prog.rel("holds", "id", "num", "id")  # topic t is held by a member of load l (row g)
    prog.rel("imbalance", "id", "id", "id")
    prog.var(t="id", la="num", lb="num", ga="id", gb="id")
    for g, ((t, load), _) in enumerate(rows):
        prog.fact("holds", f.tid[t], load, g)
    # C5 / R33 broken: two holders of one topic whose list sizes differ by 2 or more.
    prog.rule("(imbalance t ga gb)", "(holds t la ga)", "(holds t lb gb)", f"(bvsge la (bvadd lb {_num(2)}))")
    out = []
    for _, ga, gb in _violations(prog, "imbalance", limit=limit, timeout=timeout):
        (t, la), a = rows[ga]
        (_, lb), b = rows[gb]
        out.append(
            Violation(
                "imbalance",
                {
                    "mode": "kafka",
                    "topic": t,
                    "more_loaded": a,
                    "more_load": la,
                    "less_loaded": b,
                    "less_load": lb,
                    "partition": [t, f.held[a][t][0]],
                },
            )
        )
    return out


@dataclass
class _ChainGraph:
    """The improving-chain graph of ``global`` balance (module docstring): topics and
    subscription classes, with each member's load."""

    movable: dict[str, dict[str, list[int]]]  # member -> topic -> existing partitions held, sorted
    class_of: dict[str, int]
    class_topics: list[tuple[str, ...]]  # class -> subscribed existing topics
    class_members: list[list[str]]
    topics: list[str]  # topic node id -> name


def _chain_graph(f: _Facts) -> _ChainGraph:
    movable: dict[str, dict[str, list[int]]] = {}
    for m in f.members:
        per = {}
        for t, ps in f.held[m].items():
            n = f.existing.get(t)
            if n is not None:
                ok = sorted(p for p in ps if 0 <= p < n)
                if ok:
                    per[t] = ok
        movable[m] = per
    key = {m: tuple(sorted(t for t in f.topics_of[m] if t in f.existing)) for m in f.members}
    class_topics = sorted(set(key.values()))
    cid = {k: i for i, k in enumerate(class_topics)}
    class_of = {m: cid[key[m]] for m in f.members}
    class_members: list[list[str]] = [[] for _ in class_topics]
    for m in f.members:
        class_members[class_of[m]].append(m)
    topics = sorted({t for per in movable.values() for t in per} | {t for k in class_topics for t in k})
    return _ChainGraph(movable, class_of, class_topics, class_members, topics)


def _check_global(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    """T1: no improving chain, as a reachability query (module docstring)."""
    gr = _chain_graph(f)
    tnode = {t: i for i, t in enumerate(gr.topics)}
    prog = _global_program(f, gr, tnode)
    out = []
    for level, c_end, end_load in _violations(prog, "improving", limit=limit, timeout=timeout):
        reached = _reached(f, gr, tnode, level, timeout)
        chain = _chain(f, gr, reached, level, c_end, end_load)
        s, d = chain[0][0], chain[-1][1]
        before = sum(v * v for v in f.loads.values())
        out.append(
            Violation(
                "imbalance",
                {
                    "mode": "global",
                    "from": s,
                    "from_load": f.loads[s],
                    "to": d,
                    "to_load": f.loads[d],
                    "chain": [{"partition": _tp(tp), "from": a, "to": b} for a, b, tp in chain],
                    "sum_squares": before,
                    "sum_squares_after": before - 2 * f.loads[s] + 2 * f.loads[d] + 2,
                },
            )
        )
    return out


def _global_program(f: _Facts, gr: _ChainGraph, tnode: Mapping[str, int]) -> _Program:
    prog = _Program("imbalance")
    prog.rel("source", "id", "num")  # a member of load l holds a partition of topic t
    prog.rel("sink", "id", "num")  # class c has a member of load l
    prog.rel("feeds", "id", "id")  # class c subscribes to topic t: a partition of t may move into c
    prog.rel("passes", "id", "num", "id")  # a member of class c with load l holds a partition of t
    prog.rel("topic_reached", "num", "id")  # from a source of load l, a partition of t can be moved
    prog.rel("class_reached", "num", "id")  # from a source of load l, a member of class c can receive
    prog.rel("improving", "num", "id", "num")
    prog.var(t="id", c="id", l="num", l1="num", l2="num")
    for fact in sorted({(tnode[t], f.loads[m]) for m in f.members for t in gr.movable[m]}):
        prog.fact("source", *fact)
    for fact in sorted({(gr.class_of[m], f.loads[m]) for m in f.members}):
        prog.fact("sink", *fact)
    for c, topics in enumerate(gr.class_topics):
        for t in topics:
            prog.fact("feeds", tnode[t], c)
    for fact in sorted({(gr.class_of[m], f.loads[m], tnode[t]) for m in f.members for t in gr.movable[m]}):
        prog.fact("passes", *fact)
    prog.rule("(topic_reached l t)", "(source t l)")
    prog.rule("(class_reached l c)", "(topic_reached l t)", "(feeds t c)")
    # A shortest improving chain passes only through members of load l - 1 (lemma in the
    # module docstring), so the next move starts from a member of that load.
    prog.rule("(topic_reached l t)", "(class_reached l c)", "(passes c l1 t)", f"(= l1 (bvsub l {_num(1)}))")
    # T1: the chain ends at a member at least 2 below the start.
    prog.rule("(improving l c l2)", "(class_reached l c)", "(sink c l2)", f"(bvsge l (bvadd l2 {_num(2)}))")
    return prog


def _reached(f: _Facts, gr: _ChainGraph, tnode: Mapping[str, int], level: int, timeout: float | None) -> tuple[set[str], set[int]]:
    """The topics and classes Z3 derives as reached from the sources of load ``level``."""
    prog = _global_program(f, gr, tnode)
    prog.rel("reached", "num", "id")  # kind (0 topic, 1 class), node
    prog.rule("(reached l t)", "(topic_reached l1 t)", f"(= l1 {_num(level)})", f"(= l {_num(0)})")
    prog.rule("(reached l c)", "(class_reached l1 c)", f"(= l1 {_num(level)})", f"(= l {_num(1)})")
    size = len(gr.topics) + len(gr.class_topics)
    tuples = _violations(prog, "reached", limit=size, timeout=timeout)
    return {gr.topics[n] for k, n in tuples if k == 0}, {n for k, n in tuples if k == 1}


def _chain(
    f: _Facts,
    gr: _ChainGraph,
    reached: tuple[set[str], set[int]],
    level: int,
    c_end: int,
    end_load: int,
) -> list[tuple[str, str, TopicPartition]]:
    """The shortest chain through the reached nodes, as moves (from, to, partition), verified."""
    topics, classes = reached
    # Breadth-first over (topic reached) -> (class reached) -> (topic held by a member of load
    # level - 1 of that class), from the topics held by members of load ``level``.
    start = [t for t in gr.topics if t in topics and any(f.loads[m] == level and t in gr.movable[m] for m in f.members)]
    parent: dict[Any, Any] = {("t", t): None for t in start}
    frontier = [("t", t) for t in start]
    feeds: dict[str, list[int]] = defaultdict(list)
    for c, ts in enumerate(gr.class_topics):
        for t in ts:
            feeds[t].append(c)
    goal = None
    while frontier and goal is None:
        nxt = []
        for node in frontier:
            kind, x = node
            if kind == "t":
                succ = [("c", c) for c in feeds[x] if c in classes]
            else:
                succ = [
                    ("t", t)
                    for t in sorted({t for m in gr.class_members[x] if f.loads[m] == level - 1 for t in gr.movable[m]})
                    if t in topics
                ]
            for s in succ:
                if s not in parent:
                    parent[s] = node
                    nxt.append(s)
                    if s == ("c", c_end):
                        goal = s
        frontier = nxt
    if goal is None:
        raise SolverError("z3 derived an improving chain that cannot be rebuilt (internal error)")
    path = []
    node = goal
    while node is not None:
        path.append(node)
        node = parent[node]
    path.reverse()  # t1, c1, t2, c2, ..., tk, c_end
    steps = [(path[i][1], path[i + 1][1]) for i in range(0, len(path) - 1, 2)]
    t1 = steps[0][0]
    member = next(m for m in f.members if f.loads[m] == level and t1 in gr.movable[m])
    moves: list[tuple[str, str, TopicPartition]] = []
    for i, (t, c) in enumerate(steps):
        tp = TopicPartition(t, gr.movable[member][t][0])
        if i + 1 < len(steps):
            nt = steps[i + 1][0]
            receiver = next(m for m in gr.class_members[c] if f.loads[m] == level - 1 and nt in gr.movable[m])
        else:
            receiver = next(m for m in gr.class_members[c] if f.loads[m] == end_load)
        moves.append((member, receiver, tp))
        member = receiver
    for a, b, tp in moves:  # every move must be a real move of this assignment
        if tp not in f.assigned[a] or tp.topic not in f.topics_of[b] or a == b:
            raise SolverError(f"improving chain read from z3 is not a valid move: {tp} {a} -> {b} (internal error)")
    return moves


# ------------------------------------------------------------------------------------------
# cooperative-unsafe, revoking-unclaimed


def _check_cooperative_unsafe(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    from .claims import claimants

    claims = claimants(f.scenario)
    # Partitions are interchangeable here when they have the same holder and claimants.
    groups: dict[tuple[str, tuple[str, ...]], TopicPartition] = {}
    for m in f.ids:
        for tp in f.assigned[m]:
            who = claims.get(tp)
            if who and (m, who) not in groups:
                groups[(m, who)] = tp
    rows = sorted(groups.items())
    prog = _Program("cooperative-unsafe")
    prog.rel("assigned", "id", "id")  # group g's partitions are assigned to member h
    prog.rel("claims", "id", "id")  # member x claims group g's partitions
    prog.rel("claimed", "id")
    prog.rel("unsafe", "id", "id")
    prog.var(g="id", h="id", x="id")
    for g, ((m, who), _) in enumerate(rows):
        prog.fact("assigned", g, f.mid[m])
        for x in who:
            prog.fact("claims", g, f.mid[x])
    prog.rule("(claimed g)", "(claims g x)")
    # R39: a claimed partition handed to a non-claimant in the same round.
    prog.rule("(unsafe g h)", "(assigned g h)", "(claimed g)", "(not (claims g h))")
    gens = {m.id: m.generation for m in f.scenario.members}
    out = []
    for g, _ in _violations(prog, "unsafe", limit=limit, timeout=timeout):
        (m, who), tp = rows[g]
        out.append(
            Violation(
                "cooperative-unsafe",
                {"partition": _tp(tp), "assigned_to": m, "claimants": [{"member": c, "generation": gens[c]} for c in who]},
            )
        )
    return out


def _check_revoking_unclaimed(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    rows = [(m, tp) for m in f.ids for tp in f.revoking[m]]
    if not rows:
        return []
    owned = {m.id: m.owned for m in f.scenario.members}
    wanted = {(m, tp.topic) for m, tp in rows}
    claims = [(m, tp) for m in f.ids for tp in owned.get(m, ()) if (m, tp.topic) in wanted]
    pid = {tp: i for i, tp in enumerate(sorted({tp for _, tp in rows} | {tp for _, tp in claims}))}
    prog = _Program("revoking-unclaimed")
    prog.rel("revokes", "id", "id")  # member m lists partition q in revoking
    prog.rel("owns", "id", "id")  # member m claims partition q (owned)
    prog.rel("unclaimed", "id", "id")
    prog.var(m="id", q="id")
    for m, tp in rows:
        prog.fact("revokes", f.mid[m], pid[tp])
    for m, tp in claims:
        prog.fact("owns", f.mid[m], pid[tp])
    prog.rule("(unclaimed m q)", "(revokes m q)", "(not (owns m q))")
    by_id = sorted(pid, key=pid.__getitem__)
    out = []
    for m, q in _violations(prog, "unclaimed", limit=limit, timeout=timeout):
        out.append(Violation("revoking-unclaimed", {"member": f.member_name(m), "partition": _tp(by_id[q])}))
    return out


# ------------------------------------------------------------------------------------------


def check_assignment(
    scenario: Scenario,
    assignment: Assignment,
    *,
    balance: str | None = None,
    cooperative: bool | None = None,
    only: Iterable[str] | None = None,
    max_witnesses: int = 1,
    timeout: float | None = None,
) -> CheckResult:
    """Check ``assignment`` against every invariant of one assignment (models/invariants.md §2).

    ``balance``: ``uniform``, ``global``, ``kafka``, or None (uniform if all subscriptions are
    equal, else global); ``uniform`` on unequal subscriptions raises ``InvalidScenario``.
    ``cooperative``: None means ``scenario.protocol == "cooperative"``. ``only`` restricts the
    check to some invariants. Each broken invariant yields up to ``max_witnesses`` violations,
    each with a witness from its own Z3 model. ``timeout`` (seconds) bounds each Z3 query; a
    query that runs out raises ``SolverError`` rather than passing.
    """
    if balance is None:
        balance = default_balance(scenario)
    elif balance not in BALANCE_MODES:
        raise InvalidScenario("balance", f"unknown balance mode {balance!r} (expected one of {', '.join(BALANCE_MODES)})")
    elif balance == "uniform" and not subscriptions_equal(scenario):
        raise InvalidScenario(
            "balance", "uniform balance is defined only when every member subscribes to the same topics; use global or kafka"
        )
    if max_witnesses < 1:
        raise InvalidScenario("max_witnesses", f"must be at least 1, got {max_witnesses}")
    coop = scenario.protocol == "cooperative" if cooperative is None else bool(cooperative)
    wanted = set(ASSIGNMENT_INVARIANTS if only is None else only)
    unknown = wanted - set(ASSIGNMENT_INVARIANTS)
    if unknown:
        raise InvalidScenario("only", f"not an invariant of one assignment: {', '.join(sorted(unknown))}")
    f = _facts(scenario, assignment, coop)
    lim = max_witnesses
    violations: list[Violation] = []
    deferred: list[str] = []
    if "unassigned" in wanted:
        violations += _check_placement(f, "unassigned", lim, timeout)
    if "duplicate" in wanted:
        violations += _check_placement(f, "duplicate", lim, timeout)
    if "unsubscribed" in wanted:
        violations += _check_unsubscribed(f, lim, timeout)
    if "nonexistent" in wanted:
        violations += _check_nonexistent(f, lim, timeout)
    if "imbalance" in wanted:
        if f.pending:  # R40: a cooperative round's balance is judged after its follow-up
            deferred.append("imbalance")
        elif balance == "uniform":
            violations += _check_uniform(f, lim, timeout)
        elif balance == "kafka":
            violations += _check_kafka(f, lim, timeout)
        else:
            violations += _check_global(f, lim, timeout)
    if "cooperative-unsafe" in wanted and coop:
        violations += _check_cooperative_unsafe(f, lim, timeout)
    if "revoking-unclaimed" in wanted:
        violations += _check_revoking_unclaimed(f, lim, timeout)
    return CheckResult(
        valid=not violations,
        violations=tuple(violations),
        balance=balance,
        cooperative=coop,
        deferred=tuple(deferred),
    )
