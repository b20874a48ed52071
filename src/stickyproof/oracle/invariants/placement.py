"""Placement: ``unassigned``, ``duplicate``, ``unsubscribed``, ``nonexistent`` (models/invariants.md).

Facts are grouped by exactly the attributes the rules read, so a valid assignment yields a few
facts per topic or per member rather than per partition: ``unassigned``/``duplicate`` see one
fact per (topic, multiplicity) (the counting is the Python aggregation; Datalog cannot count),
``unsubscribed`` one per (subscription class, topic held), ``nonexistent`` the smallest and
largest partition number held per topic (some number is out of range iff one of those is).
Each fact keeps a representative in Python (the first partition, the smallest member id),
which becomes the witness when Z3 reports its row.
"""

from __future__ import annotations

from typing import Any, Callable

from ...model import TopicPartition
from .facts import Facts, tp_json
from .verdict import Violation
from .z3_datalog import Program, num, query

__all__ = ["check_placement", "check_unsubscribed", "check_nonexistent"]


# ------------------------------------------------------------------------------------------
# unassigned, duplicate: one fact per (topic, multiplicity).


def check_placement(f: Facts, invariant: str, limit: int, timeout: float | None) -> list[Violation]:
    """C1, ``unassigned`` (lower half) or ``duplicate`` (upper half), over the multiplicity rows."""
    rows = f.multiplicity_rows
    prog = Program(invariant)
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
        prog.rule("(unassigned t g)", "(placed t k g)", "(assignable t)", f"(= k {num(0)})")
    else:
        prog.rel("duplicate", "id", "num", "id")
        # C1 upper half: an existing partition placed twice or more.
        prog.rule("(duplicate t k g)", "(placed t k g)", f"(bvsge k {num(2)})")
    out = []
    for tup in query(prog, invariant, limit=limit, timeout=timeout):
        t, _, first, size = rows[tup[-1]]
        tp = TopicPartition(t, first)
        if invariant == "unassigned":
            out.append(Violation(invariant, {"partition": tp_json(tp), "topic_unassigned": size}))
        else:
            out.append(Violation(invariant, {"partition": tp_json(tp), "holders": _holders(f, tp)}))
    return out


def _holders(f: Facts, tp: TopicPartition) -> list[dict[str, str]]:
    out = [{"member": m, "as": "assigned"} for m in sorted(f.assigned) if tp in f.assigned[m]]
    if f.cooperative and not out:
        out += [{"member": m, "as": "revoking"} for m in sorted(f.revoking) if tp in f.revoking[m]]
    return out


# ------------------------------------------------------------------------------------------
# unsubscribed: facts per (subscription class, topic); nonexistent: per topic.


def _classes(f: Facts, key: Callable[[str], Any]) -> tuple[dict[str, int], list[list[str]]]:
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


def check_unsubscribed(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """C2: a held partition of a topic its holder does not subscribe to (outsiders subscribe to nothing)."""
    # Members with the same subscription are interchangeable for C2: facts per class.
    of, members = _classes(f, lambda m: tuple(sorted(f.topics_of[m])))
    prog = Program("unsubscribed")
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
    names = f.index.topics
    out = []
    for c, t_id in query(prog, "unsubscribed", limit=limit, timeout=timeout):
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


def check_nonexistent(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """A held partition outside E: past the count, negative, or of a topic missing from the metadata."""
    # Some held partition number of t is outside [0, n(t)) iff the smallest or largest one is.
    extremes: dict[str, set[int]] = {}
    for m in f.ids:
        for t, ps in f.held[m].items():
            extremes.setdefault(t, set()).update((min(ps), max(ps)))
    prog = Program("nonexistent")
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
    prog.rule("(nonexistent t p)", "(held t p)", f"(bvslt p {num(0)})")
    prog.rule("(nonexistent t p)", "(held t p)", "(not (known t))")
    names = f.index.topics
    out = []
    for t_id, p in query(prog, "nonexistent", limit=limit, timeout=timeout):
        t = names[t_id]
        m = next(m for m in f.ids if p in f.held[m].get(t, ()))
        out.append(Violation("nonexistent", {"member": m, "partition": [t, p], "topic_partitions": f.counts.get(t)}))
    return out
