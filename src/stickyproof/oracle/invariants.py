"""Z3 checks of one assignment against every invariant of ``models/invariants.md``, with witnesses.

Each invariant is one small Z3 query whose satisfiability *is* the violation: the query asserts
"some instance of this invariant is broken" over the facts of the assignment, a ``sat`` answer
is what reports the violation, and the witness (partition, members, loads, chain of moves) is
read from the model. ``unsat`` is the proof that the invariant holds for these facts.

How 100,000 partitions are checked in well under 10 s:

- **Aggregated facts over dense ids.** Members, topics and fact rows are numbered densely (sorted
  ids, so numbering never depends on input order). The facts Z3 sees are grouped by exactly the
  attributes the invariant's formula reads, so a valid assignment yields a handful of rows per
  topic or per member, not one per partition: ``unassigned``/``duplicate`` see one row per
  (topic, multiplicity), ``unsubscribed``/``nonexistent`` one per (member, topic held) with the
  smallest and largest partition number held, ``cooperative-unsafe`` one per (holder, claimant
  set), ``kafka`` balance one per (topic, holder load), ``uniform`` one per member. Subscription,
  metadata and claim facts are pruned to the members and topics the rows mention. Each row keeps
  a representative partition in Python, so the witness partition is the one of the row Z3 picked.
- **A bounded path formulation for the improving chain** (``global`` balance, T1): a chain of
  moves visits members, but whether member ``m`` can take the next move depends only on ``m``'s
  subscription set and on which topics it holds. The reachability graph therefore has one node
  per topic and one per distinct subscription set ("class"), with arcs topic -> class (the class
  subscribes to it) and class -> topic (some member of the class holds a partition of it). Z3
  chooses a start (a topic and the load of a member holding it), an end (a class and the load of
  one of its members) with a load gap of at least 2, and a reach flag with an integer rank per
  node, where every reached node needs a reached predecessor of lower rank (so no cycle supports
  itself). The model's flags and ranks give the path back, which is then made concrete
  (members, partitions) and cut at repeated members.
- **SMT-LIB text, not the Python API.** Row disjunctions are written as SMT-LIB2 text and parsed
  by Z3 in C++ (100,000 rows parse in about half a second, where building them through the Python
  API takes many seconds); witnesses are enumerated by blocking the rows already reported.

z3 is imported only here; every z3 exception becomes ``SolverError``. Determinism: the text is a
function of the sorted facts, and Z3 is deterministic for the same text and default seeds.
"""

from __future__ import annotations

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
    """One broken invariant and the witness read from the Z3 model (JSON-ready values)."""

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
# The Z3 boundary: SMT-LIB text in, witnesses out.


def _n(v: int) -> str:
    """An SMT-LIB integer literal (negative numbers are written as a negation)."""
    return str(v) if v >= 0 else f"(- {-v})"


def _or(terms: Sequence[str]) -> str:
    if not terms:
        return "false"
    return terms[0] if len(terms) == 1 else "(or " + " ".join(terms) + ")"


def _and(terms: Sequence[str]) -> str:
    if not terms:
        return "true"
    return terms[0] if len(terms) == 1 else "(and " + " ".join(terms) + ")"


def _eq(name: str, value: int) -> str:
    return f"(= {name} {_n(value)})"


@dataclass
class _Query:
    """One invariant's SMT-LIB problem: integer and Boolean constants, assertions, and the
    constants whose values make one witness distinct from another (blocked after each)."""

    invariant: str
    ints: list[str] = field(default_factory=list)
    bools: list[str] = field(default_factory=list)
    asserts: list[str] = field(default_factory=list)
    key: tuple[str, ...] = ()

    def text(self) -> str:
        decls = [f"(declare-const {n} Int)" for n in self.ints] + [f"(declare-const {n} Bool)" for n in self.bools]
        return "\n".join(decls + [f"(assert {a})" for a in self.asserts])


def _solve(query: _Query, *, limit: int, timeout: float | None) -> list[Callable[[str], Any]]:
    """Models of ``query``, up to ``limit``, each as an evaluator ``name -> int | bool``."""
    import z3

    try:
        solver = z3.Solver()
        if timeout is not None:
            solver.set("timeout", max(1, int(timeout * 1000)))
        solver.from_string(query.text())
        found: list[Callable[[str], Any]] = []
        bools = set(query.bools)
        while len(found) < limit:
            verdict = solver.check()
            if verdict == z3.unsat:
                break
            if verdict != z3.sat:
                raise SolverError(f"z3 could not decide invariant {query.invariant!r}: {solver.reason_unknown()}")
            model = solver.model()
            values: dict[str, Any] = {}

            def value(name: str, model: Any = model, values: dict[str, Any] = values) -> Any:
                if name not in values:
                    if name in bools:
                        values[name] = z3.is_true(model.eval(z3.Bool(name), model_completion=True))
                    else:
                        values[name] = model.eval(z3.Int(name), model_completion=True).as_long()
                return values[name]

            found.append(value)
            if not query.key:
                break
            solver.add(z3.Not(z3.And([z3.Int(k) == value(k) for k in query.key])))
        return found
    except z3.Z3Exception as exc:
        raise SolverError(f"z3 failed on invariant {query.invariant!r}: {exc}") from exc


# ------------------------------------------------------------------------------------------
# unassigned, duplicate: one row per (topic, multiplicity).


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
    q = _Query(invariant, ints=["g", "t", "k"], key=("g",))
    # The table: row g says "k partitions-worth of topic t are placed k times".
    q.asserts.append(_or([_and([_eq("g", i), _eq("t", f.tid[t]), _eq("k", k)]) for i, (t, k, _, _) in enumerate(rows)]))
    if invariant == "unassigned":
        # C1 lower half: an assignable partition (its topic has a subscriber, D1) placed nowhere.
        q.asserts.append(_or([_eq("t", f.tid[t]) for t in sorted(f.assignable)]))
        q.asserts.append("(= k 0)")
    else:
        # C1 upper half: an existing partition placed twice or more.
        q.asserts.append("(>= k 2)")
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        t, k, first, size = rows[value("g")]
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
# unsubscribed, nonexistent: one row per (member, topic held).


def _held_rows(f: _Facts) -> list[tuple[str, str, list[int]]]:
    return [(m, t, f.held[m][t]) for m in f.ids for t in sorted(f.held[m])]


def _check_unsubscribed(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    rows = _held_rows(f)
    q = _Query("unsubscribed", ints=["g", "m", "t"], key=("g",))
    # Row g: member m holds at least one partition of topic t.
    q.asserts.append(_or([_and([_eq("g", i), _eq("m", f.mid[m]), _eq("t", f.tid[t])]) for i, (m, t, _) in enumerate(rows)]))
    # Subscription facts of the members that hold something: m subscribes to t.
    holders = {m for m, _, _ in rows}
    subs = [
        _and([_eq("m", f.mid[m]), _eq("t", f.tid[t])])
        for m in f.ids
        if m in holders
        for t in sorted(f.topics_of[m])
    ]
    # C2 broken: a held topic that is not among the holder's subscriptions.
    q.asserts.append(f"(not {_or(subs)})")
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        m, t, parts = rows[value("g")]
        out.append(
            Violation(
                "unsubscribed",
                {
                    "member": m,
                    "partition": [t, parts[0]],
                    "topics": sorted(f.topics_of[m]),
                    "in_group": m not in f.outsiders,
                },
            )
        )
    return out


def _check_nonexistent(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    rows = _held_rows(f)
    q = _Query("nonexistent", ints=["g", "m", "t", "p", "c"], key=("g",))
    # Row g: member m holds partitions of t, the smallest and largest numbers being candidates for p
    # (some held number is outside [0, c) iff the smallest or the largest is).
    q.asserts.append(
        _or(
            [
                _and([_eq("g", i), _eq("m", f.mid[m]), _eq("t", f.tid[t]), f"(or {_eq('p', min(ps))} {_eq('p', max(ps))})"])
                for i, (m, t, ps) in enumerate(rows)
            ]
        )
    )
    # Metadata facts for the topics held: t has c partitions (0 when the metadata lacks it).
    held_topics = sorted({t for _, t, _ in rows})
    q.asserts.append(_or([_and([_eq("t", f.tid[t]), _eq("c", f.counts.get(t, 0))]) for t in held_topics]))
    q.asserts.append("(not (and (<= 0 p) (< p c)))")
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        m, t, _ = rows[value("g")]
        out.append(
            Violation(
                "nonexistent",
                {"member": m, "partition": [t, value("p")], "topic_partitions": f.counts.get(t)},
            )
        )
    return out


# ------------------------------------------------------------------------------------------
# imbalance


def _check_uniform(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    if not f.members:
        return []
    q = _Query("imbalance", ints=["m", "l", "np", "nm", "lo", "hi"], key=("m",))
    q.asserts.append(_eq("np", sum(f.assignable.values())))
    q.asserts.append(_eq("nm", len(f.members)))
    # C3 quotas: min_quota = floor(P/N), max_quota = ceil(P/N).
    q.asserts.append("(= lo (div np nm))")
    q.asserts.append("(= hi (+ lo (ite (= (mod np nm) 0) 0 1)))")
    q.asserts.append(_or([_and([_eq("m", f.mid[m]), _eq("l", f.loads[m])]) for m in f.members]))
    q.asserts.append("(or (< l lo) (> l hi))")
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        m = f.member_name(value("m"))
        out.append(
            Violation(
                "imbalance",
                {"mode": "uniform", "member": m, "load": value("l"), "min_quota": value("lo"), "max_quota": value("hi")},
            )
        )
    return out


def _check_kafka(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    # Rows (topic, load, representative): some member of that load holds a partition of topic.
    reps: dict[tuple[str, int], str] = {}
    for m in f.members:
        for t in f.held[m]:
            key = (t, f.loads[m])
            if key not in reps:  # members are sorted: the representative is the smallest id
                reps[key] = m
    rows = sorted(reps.items())
    q = _Query("imbalance", ints=["ga", "ta", "la", "gb", "tb", "lb"], key=("ga", "gb"))
    for side in ("a", "b"):
        q.asserts.append(
            _or(
                [
                    _and([_eq(f"g{side}", i), _eq(f"t{side}", f.tid[t]), _eq(f"l{side}", load)])
                    for i, ((t, load), _) in enumerate(rows)
                ]
            )
        )
    # C5 / R33 broken: two holders of one topic whose list sizes differ by 2 or more.
    q.asserts.append("(= ta tb)")
    q.asserts.append("(>= la (+ lb 2))")
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        (t, la), a = rows[value("ga")]
        (_, lb), b = rows[value("gb")]
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


def _check_global(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    """T1: no improving chain. See the module docstring for the topic/class reachability graph."""
    existing = f.existing
    # Movable holdings: existing partitions only (the chain moves real partitions).
    movable: dict[str, dict[str, list[int]]] = {}
    for m in f.members:
        per = {}
        for t, ps in f.held[m].items():
            n = existing.get(t)
            if n is not None:
                ok = sorted(p for p in ps if 0 <= p < n)
                if ok:
                    per[t] = ok
        movable[m] = per
    class_sets = sorted({tuple(sorted(t for t in f.topics_of[m] if t in existing)) for m in f.members})
    cid = {s: i for i, s in enumerate(class_sets)}
    class_of = {m: cid[tuple(sorted(t for t in f.topics_of[m] if t in existing))] for m in f.members}
    class_members: dict[int, list[str]] = defaultdict(list)
    for m in f.members:
        class_members[class_of[m]].append(m)
    # Arcs topic -> class (the class subscribes to the topic) and class -> topic (a member of the
    # class holds a partition of the topic).
    into_class = {c: list(class_sets[c]) for c in range(len(class_sets))}
    into_topic: dict[str, list[int]] = defaultdict(list)
    for c in range(len(class_sets)):
        held = sorted({t for m in class_members[c] for t in movable[m]})
        for t in held:
            into_topic[t].append(c)
    topic_nodes = sorted(set(into_topic) | {t for s in class_sets for t in s})
    tnode = {t: i for i, t in enumerate(topic_nodes)}
    # Start rows (topic held, load of a holder) and end rows (class, load of a member).
    src_rep: dict[tuple[str, int], str] = {}
    for m in f.members:
        for t in movable[m]:
            src_rep.setdefault((t, f.loads[m]), m)
    dst_rep: dict[tuple[int, int], str] = {}
    for m in f.members:
        dst_rep.setdefault((class_of[m], f.loads[m]), m)
    srcs, dsts = sorted(src_rep.items()), sorted(dst_rep.items())
    if not srcs or not dsts:
        return []
    # Witnesses differ by their (from, to) members: sm, dm are the rows' representatives.
    q = _Query("imbalance", ints=["src", "dst", "ts", "cd", "hi", "lo", "sm", "dm"], key=("sm", "dm"))
    q.asserts.append(
        _or([_and([_eq("src", i), _eq("ts", tnode[t]), _eq("hi", load), _eq("sm", f.mid[m])]) for i, ((t, load), m) in enumerate(srcs)])
    )
    q.asserts.append(
        _or([_and([_eq("dst", i), _eq("cd", c), _eq("lo", load), _eq("dm", f.mid[m])]) for i, ((c, load), m) in enumerate(dsts)])
    )
    # The chain lowers sum load^2: load(m_0) >= load(m_k) + 2.
    q.asserts.append("(>= hi (+ lo 2))")
    for t in topic_nodes:
        i = tnode[t]
        q.bools.append(f"rt{i}")
        q.ints.append(f"kt{i}")
        # A reached topic is the start, or a reached class of lower rank holds it.
        support = [_eq("ts", i)] + [f"(and rc{c} (< kc{c} kt{i}))" for c in into_topic.get(t, ())]
        q.asserts.append(f"(=> rt{i} {_or(support)})")
    for c, topics in into_class.items():
        q.bools.append(f"rc{c}")
        q.ints.append(f"kc{c}")
        # A reached class subscribes to a reached topic of lower rank.
        support = [f"(and rt{tnode[t]} (< kt{tnode[t]} kc{c}))" for t in topics]
        q.asserts.append(f"(=> rc{c} {_or(support)})")
        q.asserts.append(f"(=> {_eq('cd', c)} rc{c})")
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        (t_start, hi), s = srcs[value("src")]
        (c_end, lo), d = dsts[value("dst")]
        path = _read_path(value, t_start, c_end, tnode, into_topic, into_class)
        chain = _concrete_chain(f, movable, class_members, s, d, path)
        before = sum(v * v for v in f.loads.values())
        out.append(
            Violation(
                "imbalance",
                {
                    "mode": "global",
                    "from": s,
                    "from_load": hi,
                    "to": d,
                    "to_load": lo,
                    "chain": chain,
                    "sum_squares": before,
                    "sum_squares_after": before - 2 * hi + 2 * lo + 2,
                },
            )
        )
    return out


def _read_path(
    value: Callable[[str], Any],
    t_start: str,
    c_end: int,
    tnode: Mapping[str, int],
    into_topic: Mapping[str, list[int]],
    into_class: Mapping[int, list[str]],
) -> list[tuple[str, int]]:
    """Walk the model's reach flags and ranks back from the end class to the start topic.

    Returns the (topic, class) steps in order: move a partition of ``topic`` into ``class``.
    """
    steps: list[tuple[str, int]] = []
    c = c_end
    for _ in range(len(tnode) + len(into_class) + 1):
        if t_start in into_class[c]:  # the start topic feeds this class directly
            steps.append((t_start, c))
            return steps[::-1]
        rank = value(f"kc{c}")
        t = next(
            (t for t in into_class[c] if value(f"rt{tnode[t]}") and value(f"kt{tnode[t]}") < rank),
            None,
        )
        if t is None:
            break
        steps.append((t, c))
        rank_t = value(f"kt{tnode[t]}")
        c_prev = next((c2 for c2 in into_topic.get(t, ()) if value(f"rc{c2}") and value(f"kc{c2}") < rank_t), None)
        if c_prev is None:
            break
        c = c_prev
    raise SolverError("z3 model of invariant 'imbalance' does not contain a path (internal error)")


def _concrete_chain(
    f: _Facts,
    movable: Mapping[str, Mapping[str, list[int]]],
    class_members: Mapping[int, list[str]],
    s: str,
    d: str,
    path: list[tuple[str, int]],
) -> list[dict[str, Any]]:
    """Members and partitions for a topic/class path, cut at repeated members, and re-verified."""
    members = [s]
    parts: list[TopicPartition] = []
    for i, (t, c) in enumerate(path):
        parts.append(TopicPartition(t, movable[members[-1]][t][0]))
        if i + 1 < len(path):
            nxt = path[i + 1][0]
            members.append(next(m for m in class_members[c] if nxt in movable[m]))
        else:
            members.append(d)
    chain_members: list[str] = []
    moves: list[tuple[str, str, TopicPartition]] = []
    for i, m in enumerate(members):
        if m in chain_members:  # a repeated member closes a cycle: drop the cycle's moves
            j = chain_members.index(m)
            del chain_members[j + 1 :]
            del moves[j:]
            continue
        if i > 0:
            moves.append((chain_members[-1], m, parts[i - 1]))
        chain_members.append(m)
    for a, b, tp in moves:  # every move must be a real move of this assignment
        if tp not in f.assigned[a] or tp.topic not in f.topics_of[b] or a == b:
            raise SolverError(f"improving chain read from z3 is not a valid move: {tp} {a} -> {b} (internal error)")
    return [{"partition": _tp(tp), "from": a, "to": b} for a, b, tp in moves]


# ------------------------------------------------------------------------------------------
# cooperative-unsafe, revoking-unclaimed


def _check_cooperative_unsafe(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    from .claims import claimants

    claims = claimants(f.scenario)
    groups: dict[tuple[str, tuple[str, ...]], TopicPartition] = {}
    for m in f.ids:
        for tp in f.assigned[m]:
            who = claims.get(tp)
            if who and (m, who) not in groups:
                groups[(m, who)] = tp
    rows = sorted(groups.items())
    q = _Query("cooperative-unsafe", ints=["g", "h", "k"], bools=["claimant"], key=("g",))
    # Row g: member h is assigned a partition that k members claim; `claimant` = h is one of them.
    q.asserts.append(
        _or(
            [
                _and(
                    [
                        _eq("g", i),
                        _eq("h", f.mid[m]),
                        _eq("k", len(who)),
                        f"(= claimant {_or([_eq('h', f.mid[c]) for c in who])})",
                    ]
                )
                for i, ((m, who), _) in enumerate(rows)
            ]
        )
    )
    # R39: a claimed partition handed to a non-claimant in the same round.
    q.asserts.append("(>= k 1)")
    q.asserts.append("(not claimant)")
    gens = {m.id: m.generation for m in f.scenario.members}
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        (m, who), tp = rows[value("g")]
        out.append(
            Violation(
                "cooperative-unsafe",
                {
                    "partition": _tp(tp),
                    "assigned_to": m,
                    "claimants": [{"member": c, "generation": gens[c]} for c in who],
                },
            )
        )
    return out


def _check_revoking_unclaimed(f: _Facts, limit: int, timeout: float | None) -> list[Violation]:
    rows = [(m, tp) for m in f.ids for tp in f.revoking[m]]
    if not rows:
        return []
    owned = {m.id: m.owned for m in f.scenario.members}
    q = _Query("revoking-unclaimed", ints=["g", "m", "t", "p"], key=("g",))
    # Row g: member m lists (t, p) in revoking.
    q.asserts.append(
        _or([_and([_eq("g", i), _eq("m", f.mid[m]), _eq("t", f.tid[tp.topic]), _eq("p", tp.partition)]) for i, (m, tp) in enumerate(rows)])
    )
    # Claim facts of the revoking members on the topics they revoke: m claims (t, p).
    wanted = {(m, tp.topic) for m, tp in rows}
    facts = [
        _and([_eq("m", f.mid[m]), _eq("t", f.tid[tp.topic]), _eq("p", tp.partition)])
        for m in f.ids
        for tp in owned.get(m, ())
        if (m, tp.topic) in wanted
    ]
    q.asserts.append(f"(not {_or(facts)})")
    out = []
    for value in _solve(q, limit=limit, timeout=timeout):
        m, tp = rows[value("g")]
        out.append(Violation("revoking-unclaimed", {"member": m, "partition": _tp(tp)}))
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
