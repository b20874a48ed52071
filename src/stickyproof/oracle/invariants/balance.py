"""``imbalance`` in its modes (models/invariants.md §2): ``uniform``, ``kafka``, ``global``, and the
contract modes ``per-topic`` (range's promise) and ``pairwise`` (Kafka's ``isBalanced``, R30).

``uniform`` (C3) sees one fact per distinct load, ``kafka`` (C5, R33) one per (topic, load of a
holder), ``per-topic`` one per (topic, count held by a subscriber), ``pairwise`` one per (topic,
load of a holder) and per (topic, load of a subscriber); each keeps its smallest member id as the
witness.

``global`` (T1) asks whether an *improving chain* exists, as a reachability query. Whether a
member can pass a partition on depends only on its subscription set and on which topics it
holds, so the graph has one node per topic and one per subscription class: topic -> class (the
class subscribes to it), class -> topic (a member of the class holds a partition of it). A
*shortest* improving chain from a member of load ``l`` passes only through members of load
``l - 1``: an intermediate at ``<= l - 2`` would end a shorter chain, one at ``>= l_end + 2``
would start one, and ``l_end <= l - 2``. So reachability is computed per source load ``l``
through the class -> topic arcs of members of load ``l - 1`` only, which keeps the fixpoint small
without losing any violation. The chain is rebuilt breadth-first through the nodes Z3 derived as
reached from the reported level, made concrete (members, partitions) and re-verified move by move.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ...errors import SolverError
from ...model import Scenario, TopicPartition
from ..result import BALANCE_MODES
from .facts import Facts, tp_json
from .verdict import Violation
from .z3_datalog import Program, num, query

__all__ = [
    "BALANCE_MODES",
    "CHECK_MODES",
    "subscriptions_equal",
    "default_balance",
    "check_uniform",
    "check_kafka",
    "check_global",
    "check_per_topic",
    "check_pairwise",
]

CHECK_MODES = BALANCE_MODES + ("per-topic", "pairwise")
"""Every balance an assignment can be checked against: the solvers' modes and the contracts' (§5)."""


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
# uniform, kafka


def _quotas(f: Facts) -> tuple[int, int]:
    total, n = sum(f.assignable.values()), len(f.members)
    return total // n, -(-total // n)


def check_uniform(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """C3: every load within [min_quota, max_quota] (R15's quotas over D1)."""
    if not f.members:
        return []
    by_load: dict[int, str] = {}
    for m in f.members:  # sorted: the representative of a load is its smallest member id
        by_load.setdefault(f.loads[m], m)
    loads = sorted(by_load)
    prog = Program("imbalance")
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
        f"(bvsgt l (bvadd (bvsdiv np nm) (ite (= (bvsrem np nm) {num(0)}) {num(0)} {num(1)})))",
    )
    lo, hi = _quotas(f)
    out = []
    for g, load in query(prog, "imbalance", limit=limit, timeout=timeout):
        out.append(
            Violation(
                "imbalance",
                {"mode": "uniform", "member": by_load[loads[g]], "load": load, "min_quota": lo, "max_quota": hi},
            )
        )
    return out


def check_kafka(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """C5 (Kafka's verifyValidityAndBalance, R33): two holders of one topic never differ by 2 or more."""
    # Facts per (topic, load): some member of that load holds a partition of the topic.
    reps: dict[tuple[str, int], str] = {}
    for m in f.members:
        for t in f.held[m]:
            reps.setdefault((t, f.loads[m]), m)  # members sorted: smallest id represents
    rows = sorted(reps.items())
    prog = Program("imbalance")
    prog.rel("holds", "id", "num", "id")  # topic t is held by a member of load l (row g)
    prog.rel("imbalance", "id", "id", "id")
    prog.var(t="id", la="num", lb="num", ga="id", gb="id")
    for g, ((t, load), _) in enumerate(rows):
        prog.fact("holds", f.tid[t], load, g)
    # C5 / R33 broken: two holders of one topic whose list sizes differ by 2 or more.
    prog.rule("(imbalance t ga gb)", "(holds t la ga)", "(holds t lb gb)", f"(bvsge la (bvadd lb {num(2)}))")
    out = []
    for _, ga, gb in query(prog, "imbalance", limit=limit, timeout=timeout):
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


def check_per_topic(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """RangeAssignor's promise (R43): each assignable topic's partitions split floor/ceil over the
    members subscribing to it: every subscriber holds q or q + 1 of them, q = n(t) div |S(t)|."""
    reps: dict[tuple[str, int], str] = {}
    quota: dict[str, tuple[int, int]] = {}
    for t, n in f.assignable.items():
        subscribers = [m for m in f.members if t in f.topics_of[m]]
        q, r = divmod(n, len(subscribers))
        quota[t] = (q, q + (1 if r else 0))
        for m in subscribers:  # sorted: the representative of a count is its smallest member id
            reps.setdefault((t, sum(1 for p in f.held[m].get(t, ()) if 0 <= p < n)), m)
    rows = sorted(reps.items())
    prog = Program("imbalance")
    prog.rel("count", "id", "num", "id")  # a subscriber of topic t holds c of its partitions (row g)
    prog.rel("quota", "id", "num", "num")  # topic t: q and its max quota
    prog.rel("imbalance", "id", "id")
    prog.var(t="id", c="num", g="id", lo="num", hi="num")
    for g, ((t, c), _) in enumerate(rows):
        prog.fact("count", f.tid[t], c, g)
    for t, (lo, hi) in sorted(quota.items()):
        prog.fact("quota", f.tid[t], lo, hi)
    # R43 broken: a subscriber below the topic's quota, or above its max quota.
    prog.rule("(imbalance t g)", "(count t c g)", "(quota t lo hi)", "(bvslt c lo)")
    prog.rule("(imbalance t g)", "(count t c g)", "(quota t lo hi)", "(bvsgt c hi)")
    out = []
    for _, g in query(prog, "imbalance", limit=limit, timeout=timeout):
        (t, c), m = rows[g]
        lo, hi = quota[t]
        out.append(Violation("imbalance", {"mode": "per-topic", "topic": t, "member": m, "count": c, "min_quota": lo, "max_quota": hi}))
    return out


def check_pairwise(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """Kafka's ``isBalanced`` (R30): no member holds a partition of a topic that another member
    subscribes to while having two or more partitions more than it (one move would even them out)."""
    holders: dict[tuple[str, int], str] = {}
    subscribers: dict[tuple[str, int], str] = {}
    for m in f.members:  # sorted: smallest id represents
        for t in f.held[m]:
            if t in f.assignable:
                holders.setdefault((t, f.loads[m]), m)
        for t in f.topics_of[m]:
            if t in f.assignable:
                subscribers.setdefault((t, f.loads[m]), m)
    hrows, srows = sorted(holders.items()), sorted(subscribers.items())
    prog = Program("imbalance")
    prog.rel("holds", "id", "num", "id")  # topic t held by a member of load l (row g)
    prog.rel("subscribes", "id", "num", "id")  # topic t subscribed by a member of load l (row g)
    prog.rel("imbalance", "id", "id", "id")
    prog.var(t="id", la="num", lb="num", ga="id", gb="id")
    for g, ((t, load), _) in enumerate(hrows):
        prog.fact("holds", f.tid[t], load, g)
    for g, ((t, load), _) in enumerate(srows):
        prog.fact("subscribes", f.tid[t], load, g)
    # R30 broken: a holder of t with at least two more partitions than a subscriber of t.
    prog.rule("(imbalance t ga gb)", "(holds t la ga)", "(subscribes t lb gb)", f"(bvsge la (bvadd lb {num(2)}))")
    out = []
    for _, ga, gb in query(prog, "imbalance", limit=limit, timeout=timeout):
        (t, la), a = hrows[ga]
        (_, lb), b = srows[gb]
        out.append(
            Violation(
                "imbalance",
                {"mode": "pairwise", "topic": t, "more_loaded": a, "more_load": la, "less_loaded": b, "less_load": lb,
                 "partition": [t, f.held[a][t][0]]},
            )
        )
    return out


# ------------------------------------------------------------------------------------------
# global: the improving chain


@dataclass
class _ChainGraph:
    """The improving-chain graph of ``global`` balance (module docstring): topics and
    subscription classes, with each member's load."""

    movable: dict[str, dict[str, list[int]]]  # member -> topic -> existing partitions held, sorted
    class_of: dict[str, int]
    class_topics: list[tuple[str, ...]]  # class -> subscribed existing topics
    class_members: list[list[str]]
    topics: list[str]  # the graph's topic nodes (held or subscribed existing topics), sorted


def _chain_graph(f: Facts) -> _ChainGraph:
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


def check_global(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """T1: no improving chain, as a reachability query (module docstring)."""
    gr = _chain_graph(f)
    prog = _global_program(f, gr)
    out = []
    for level, c_end, end_load in query(prog, "improving", limit=limit, timeout=timeout):
        reached = _reached(f, gr, level, timeout)
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
                    "chain": [{"partition": tp_json(tp), "from": a, "to": b} for a, b, tp in chain],
                    "sum_squares": before,
                    "sum_squares_after": before - 2 * f.loads[s] + 2 * f.loads[d] + 2,
                },
            )
        )
    return out


def _global_program(f: Facts, gr: _ChainGraph) -> Program:
    tnode = f.tid  # a topic node is the topic's dense id
    prog = Program("imbalance")
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
    prog.rule("(topic_reached l t)", "(class_reached l c)", "(passes c l1 t)", f"(= l1 (bvsub l {num(1)}))")
    # T1: the chain ends at a member at least 2 below the start.
    prog.rule("(improving l c l2)", "(class_reached l c)", "(sink c l2)", f"(bvsge l (bvadd l2 {num(2)}))")
    return prog


def _reached(f: Facts, gr: _ChainGraph, level: int, timeout: float | None) -> tuple[set[str], set[int]]:
    """The topics and classes Z3 derives as reached from the sources of load ``level``."""
    prog = _global_program(f, gr)
    prog.rel("reached", "num", "id")  # kind (0 topic, 1 class), node
    prog.rule("(reached l t)", "(topic_reached l1 t)", f"(= l1 {num(level)})", f"(= l {num(0)})")
    prog.rule("(reached l c)", "(class_reached l1 c)", f"(= l1 {num(level)})", f"(= l {num(1)})")
    size = len(gr.topics) + len(gr.class_topics)
    tuples = query(prog, "reached", limit=size, timeout=timeout)
    return {f.index.topics[n] for k, n in tuples if k == 0}, {n for k, n in tuples if k == 1}


def _chain(
    f: Facts,
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
