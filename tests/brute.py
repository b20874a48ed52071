"""Exhaustive enumeration for small groups: the ground truth the solver engines are tested against.

Every assignment of every partition to one of its subscribers (C1, C2) is considered; the
lexicographic optimum of (O1, -O2, -O3) under the mode's constraint (C3 ``uniform``, none for
``global``) is returned; for ``kafka`` it is (-O2, O1, -O3) under C5 (T10: R33 is a constraint). Written without the solver engines' code paths:
it recomputes D3/D4 with plain dicts and never aggregates.

``brute_optimum`` enumerates by dynamic programming over partitions: assignments that reach
the same *state* (load vector, and which topics each member holds, the only facts C3/C5/O1
depend on) are merged keeping the best (kept, rack_local) so far, which is exact because the
rest of the objective is additive. ``enumerate_assignments`` is the plain product, used by the
tests to check the DP on tiny groups. Test-only (it lives in tests/, not in the package):
exponential in the group size.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

from stickyproof.model import Scenario, TopicPartition
from stickyproof.oracle.result import Objective, check_balance_mode

__all__ = ["BruteResult", "admissible", "brute_key", "brute_optimum", "enumerate_assignments", "evaluate_choice", "problem", "simple_retainable"]


def simple_retainable(scenario: Scenario) -> dict[TopicPartition, str]:
    """D3/D4 restated with dicts (independent of claims.claim_table)."""
    subscribed = {t for m in scenario.members for t in m.topics}
    counts = {t.name: t.partitions for t in scenario.topics if t.partitions > 0 and t.name in subscribed}
    best: dict[TopicPartition, list] = {}
    for m in scenario.members:
        for tp in m.owned:
            if tp.topic not in counts or tp.partition >= counts[tp.topic]:
                continue  # D3: void claim
            entry = best.get(tp)
            if entry is None or m.generation > entry[0]:
                best[tp] = [m.generation, [m.id]]
            elif m.generation == entry[0]:
                entry[1].append(m.id)
    topics_of = {m.id: set(m.topics) for m in scenario.members}
    out = {}
    for tp, (_, who) in best.items():
        if len(who) == 1 and tp.topic in topics_of[who[0]]:
            out[tp] = who[0]
    return out


def problem(scenario: Scenario):
    subscribed = {t for m in scenario.members for t in m.topics}
    parts = [
        TopicPartition(t.name, p)
        for t in sorted(scenario.topics, key=lambda t: t.name)
        if t.partitions > 0 and t.name in subscribed
        for p in range(t.partitions)
    ]
    members = sorted(m.id for m in scenario.members)
    choices = [[i for i, mid in enumerate(members) if tp.topic in scenario.member(mid).topics] for tp in parts]
    return parts, members, choices


def enumerate_assignments(scenario: Scenario) -> Iterator[dict[TopicPartition, str]]:
    """Every assignment satisfying C1 and C2, as partition -> member id (plain product)."""
    parts, members, choices = problem(scenario)
    for combo in itertools.product(*choices):
        yield {tp: members[i] for tp, i in zip(parts, combo)}


def kafka_alignment(scenario: Scenario) -> dict[str, str | None] | None:
    """R48 restated for the tests (members' racks from v3 subscriptions; the path is on when racks meet
    and some assignable partition's replica racks differ from their union), or None when off."""
    subscribed = {t for m in scenario.members for t in m.topics}
    seen = {m.id: (m.rack or None) if m.version >= 3 else None for m in scenario.members}
    per = [frozenset(r) for t in scenario.topics if t.partitions > 0 and t.name in subscribed
           for r in (t.racks if t.racks is not None else [()] * t.partitions)]
    union = frozenset().union(*per) if per else frozenset()
    members = {r for r in seen.values() if r}
    if not members or not (members & union) or all(r == union for r in per):
        return None
    return seen


def _aligned(seen: dict[str, str | None], scenario: Scenario, tp: TopicPartition, m: str) -> bool:
    """D7: a member without a rack matches; a racked one needs a replica on its rack."""
    racks = {t.name: t.racks for t in scenario.topics}[tp.topic]
    return seen[m] is None or (racks is not None and seen[m] in racks[tp.partition])


def evaluate_choice(scenario: Scenario, owner: dict[TopicPartition, str], *, racks: bool | str = False) -> Objective:
    """O1-O3 of one assignment given as partition -> member id (``racks="kafka"``: D7 where R48 applies)."""
    loads = {m.id: 0 for m in scenario.members}
    for m in owner.values():
        loads[m] += 1
    keep = simple_retainable(scenario)
    kept = sum(1 for tp, m in owner.items() if keep.get(tp) == m)
    rack_local = None
    seen = kafka_alignment(scenario) if racks == "kafka" else None
    if seen is not None:
        rack_local = sum(1 for tp, m in owner.items() if _aligned(seen, scenario, tp, m))
    elif racks and racks != "kafka":
        rack_of = {m.id: m.rack for m in scenario.members}
        meta = {t.name: t for t in scenario.topics}
        rack_local = 0
        for tp, m in owner.items():
            rl = meta[tp.topic].racks
            if rl is not None and rack_of[m] is not None and rack_of[m] in rl[tp.partition]:
                rack_local += 1
    values = list(loads.values())
    return Objective(sum(v * v for v in values), max(values, default=0), kept, rack_local)


def admissible(balance: str, loads: tuple[int, ...], held: tuple[frozenset[str], ...], P: int) -> bool:
    N = len(loads)
    if balance == "uniform":
        lo, hi = (P // N, -(-P // N)) if N else (0, 0)
        return all(lo <= x <= hi for x in loads)  # C3
    if balance == "kafka":
        for a in range(N):
            for b in range(a + 1, N):
                if abs(loads[a] - loads[b]) >= 2 and held[a] & held[b]:
                    return False  # C5
    return True


def brute_key(balance: str, obj: Objective) -> tuple[int, int, int]:
    """Lexicographic key, smaller is better: (O1, -O2, -O3); for ``kafka`` (R33 is a constraint,
    T10) the most kept first, then O1, then O3."""
    if balance == "kafka":
        return (-obj.kept, obj.sum_squares, -(obj.rack_local or 0))
    return obj.key()


def _better(val: tuple[int, int], old: tuple[int, int], rack_first: bool) -> bool:
    """(kept, local) pairs: more kept first, or in Kafka's rack order more local first."""
    return (val[1], val[0]) > (old[1], old[0]) if rack_first else val > old


@dataclass(frozen=True)
class BruteResult:
    """The optimum value (None when the mode is infeasible) and how many states reached it."""

    balance: str
    objective: Objective | None
    feasible: bool


def brute_optimum(scenario: Scenario, *, balance: str = "global", racks: bool | str = False) -> BruteResult:
    """The lexicographic optimum over all assignments (exact; exponential; for tests). ``racks="kafka"``:
    Kafka's rack-aware order (O1, D7 alignment, then kept) where R48 applies, no rack tier elsewhere."""
    check_balance_mode(balance)
    seen = kafka_alignment(scenario) if racks == "kafka" else None
    rack_first = seen is not None
    if racks == "kafka" and not rack_first:
        racks = False
    parts, members, choices = problem(scenario)
    keep = simple_retainable(scenario)
    rack_of = [scenario.member(m).rack for m in members]
    meta = {t.name: t for t in scenario.topics}
    N = len(members)
    # state -> best (kept, rack_local); state = (loads, topics held per member)
    states: dict[tuple, tuple[int, int]] = {(tuple([0] * N), tuple([frozenset()] * N)): (0, 0)}
    for tp, opts in zip(parts, choices):
        rl = meta[tp.topic].racks
        nxt: dict[tuple, tuple[int, int]] = {}
        for (loads, held), (kept, local) in states.items():
            for i in opts:
                nl = loads[:i] + (loads[i] + 1,) + loads[i + 1 :]
                nh = held[:i] + (held[i] | {tp.topic},) + held[i + 1 :]
                gain_k = 1 if keep.get(tp) == members[i] else 0
                if rack_first:
                    gain_r = 1 if _aligned(seen, scenario, tp, members[i]) else 0
                else:
                    gain_r = 1 if racks and rl is not None and rack_of[i] is not None and rack_of[i] in rl[tp.partition] else 0
                val = (kept + gain_k, local + gain_r)
                key = (nl, nh)
                if key not in nxt or _better(val, nxt[key], rack_first):
                    nxt[key] = val
        states = nxt
    best: tuple | None = None
    for (loads, held), (kept, local) in states.items():
        if not admissible(balance, loads, held, len(parts)):
            continue
        obj = Objective(sum(x * x for x in loads), max(loads, default=0), kept, local if racks else None)
        key = (obj.sum_squares, -local, -kept) if rack_first else brute_key(balance, obj)
        if best is None or key < best[0]:
            best = (key, obj)
    if best is None:
        return BruteResult(balance, None, False)
    return BruteResult(balance, best[1], True)
