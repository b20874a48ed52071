"""Cooperative rounds: ``cooperative-unsafe`` (R39) and ``revoking-unclaimed`` (models/invariants.md).

``cooperative-unsafe`` sees one fact per (holder, claimant set): partitions with the same holder
and the same claimants are interchangeable for the rule, and the first one is the witness.
``revoking-unclaimed`` sees one fact per revoking entry and per claim on a revoked topic.
"""

from __future__ import annotations

from ...model import TopicPartition
from ..claims import claimants
from .facts import Facts, tp_json
from .verdict import Violation
from .z3_datalog import Program, query

__all__ = ["check_cooperative_unsafe", "check_revoking_unclaimed"]


def check_cooperative_unsafe(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """R39: a partition somebody claims is handed to a non-claimant in the same round."""
    claims = claimants(f.scenario)
    # Partitions are interchangeable here when they have the same holder and claimants.
    groups: dict[tuple[str, tuple[str, ...]], TopicPartition] = {}
    for m in f.ids:
        for tp in f.assigned[m]:
            who = claims.get(tp)
            if who and (m, who) not in groups:
                groups[(m, who)] = tp
    rows = sorted(groups.items())
    prog = Program("cooperative-unsafe")
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
    for g, _ in query(prog, "unsafe", limit=limit, timeout=timeout):
        (m, who), tp = rows[g]
        out.append(
            Violation(
                "cooperative-unsafe",
                {"partition": tp_json(tp), "assigned_to": m, "claimants": [{"member": c, "generation": gens[c]} for c in who]},
            )
        )
    return out


def check_revoking_unclaimed(f: Facts, limit: int, timeout: float | None) -> list[Violation]:
    """A member is told to revoke a partition it does not list in ``owned``."""
    rows = [(m, tp) for m in f.ids for tp in f.revoking[m]]
    if not rows:
        return []
    owned = {m.id: m.owned for m in f.scenario.members}
    wanted = {(m, tp.topic) for m, tp in rows}
    claims = [(m, tp) for m in f.ids for tp in owned.get(m, ()) if (m, tp.topic) in wanted]
    pid = {tp: i for i, tp in enumerate(sorted({tp for _, tp in rows} | {tp for _, tp in claims}))}
    prog = Program("revoking-unclaimed")
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
    for m, q in query(prog, "unclaimed", limit=limit, timeout=timeout):
        out.append(Violation("revoking-unclaimed", {"member": f.member_name(m), "partition": tp_json(by_id[q])}))
    return out
