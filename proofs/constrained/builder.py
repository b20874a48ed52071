"""The constrained builder at the level of partitions (docs/rules.md R15-R22, rack awareness off).

``build(owner, dup, M, P)`` runs phase 1 and phase 3 partition by partition, exactly as
``ConstrainedAssignmentBuilder`` does (map order = member index order, one topic, claims sorted
by partition number, ``underMin``/``atMin`` sorted by id = index, the round robin's list cursor,
``atMin``'s queue growing as members fill up). It is written once over values:

* with Python ints and bools it *runs* (``tests/test_proofs.py`` compares it with
  ``stickyproof.assignors`` on every ownership pattern of small groups);
* with Z3 terms for the ownership pattern it is *symbolic*: one query proves, for every pattern at
  a fixed size (6 members x 12 partitions with --deep), that the builder never throws, hands every
  partition to exactly one member, and leaves ``P mod M`` members at ``maxQuota``, the rest at
  ``minQuota``.

Input: ``owner[p]`` is the member keeping partition ``p`` after resolution (-1: nobody), ``dup[p]``
whether ``p`` is in ``partitionsWithMultiplePreviousOwners`` (R17 strips it before the quotas).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import z3

from ..logic import AND, ITE, NOT, OR, to_z3

__all__ = ["BuildResult", "build", "prove_builder"]


@dataclass(frozen=True)
class BuildResult:
    """``assignment[m][p]``; ``error``: an IllegalStateException was thrown (R21, R22)."""

    assignment: list[list[Any]]
    error: Any
    loads: list[Any]
    over_min: Any


def _count(bits: Sequence[Any], one: Any = 1, zero: Any = 0) -> Any:
    return sum((ITE(b, one, zero) for b in bits), zero)


def _first(cands: Sequence[tuple[Any, Any]], default: Any) -> Any:
    """The value of the first candidate whose condition holds (an ITE chain)."""
    out = default
    for cond, value in reversed(list(cands)):
        out = ITE(cond, value, out)
    return out


def build(owner: Sequence[Any], dup: Sequence[Any], M: int, P: int, *, one: Any = 1, zero: Any = 0) -> BuildResult:
    """``one``/``zero``: the integer constants of the view (Python ints, or bit-vectors for the symbolic proof)."""
    min_quota, max_quota, expected_over_min = P // M, -(-P // M), P % M
    members = range(M)

    def count(bits: Sequence[Any]) -> Any:
        return _count(bits, one, zero)

    def num(k: int) -> Any:  # a Python int as a value of the view
        return zero + k

    # ---- phase 1 (R16): keep owned partitions up to the quotas, members in map order
    over_min: Any = zero
    kept = [[False] * P for _ in members]
    under: list[Any] = [False] * M
    at_min: list[Any] = [False] * M  # phase-1 entries of atMin, in id order (R19)
    for m in members:
        claims = [AND(owner[p] == m, NOT(dup[p])) for p in range(P)]  # R17, sorted by partition (R16 step 2)
        n = count(claims)
        is_under = n < min_quota
        is_over = AND(NOT(is_under), n >= max_quota, over_min < expected_over_min)
        quota = ITE(is_under, n, ITE(is_over, num(max_quota), num(min_quota)))
        seen: Any = zero
        for p in range(P):
            kept[m][p] = AND(claims[p], seen < quota)
            seen = seen + ITE(claims[p], one, zero)
        under[m] = is_under
        new_over = over_min + ITE(is_over, one, zero)
        cleared = AND(is_over, new_over == expected_over_min)
        at_min = [AND(a, NOT(cleared)) for a in at_min]
        at_min[m] = AND(NOT(is_under), NOT(is_over), over_min < expected_over_min)
        over_min = new_over
    loads = [count(kept[m]) for m in members]
    unassigned = [NOT(OR(*[kept[m][p] for m in members])) for p in range(P)]
    # ---- phase 3 (R21): round robin over underMin (a list cursor), then the head of atMin
    queue: list[tuple[Any, Any]] = [(num(m), at_min[m]) for m in members]  # (member, still queued)
    cursor: Any = zero  # the member index the list cursor points at (members before it were passed)
    error: Any = False
    granted = [[False] * P for _ in members]
    for p in range(P):
        live = AND(unassigned[p], NOT(error))
        any_under = OR(*under)
        pick_under = _first([(AND(under[m], m >= cursor), num(m)) for m in members] + [(under[m], num(m)) for m in members], num(-1))
        head = _first([(active, q) for q, active in queue], num(-1))
        any_queued = OR(*[active for _, active in queue])
        to_under = AND(live, any_under)
        to_queue = AND(live, NOT(any_under), any_queued)
        error = OR(error, AND(live, NOT(any_under), NOT(any_queued)))  # "No more unfilled consumers"
        taker = ITE(to_under, pick_under, head)
        for m in members:
            got = AND(OR(to_under, to_queue), taker == m)
            granted[m][p] = got
            loads[m] = loads[m] + ITE(got, one, zero)
        # an under-min member reaching minQuota leaves underMin for atMin's tail; the cursor moves past it
        finished = AND(to_under, _first([(pick_under == m, loads[m] == min_quota) for m in members], False))
        under = [AND(under[m], NOT(AND(finished, pick_under == m))) for m in members]
        cursor = ITE(to_under, pick_under + 1, cursor)
        # the polled head leaves the queue; it now holds minQuota + 1 (iterator misuse if that were minQuota)
        queue = [(q, AND(active, NOT(AND(to_queue, head == q)))) for q, active in queue]
        queue.append((pick_under, finished))
        polled_load = _first([(head == m, loads[m]) for m in members], zero)
        error = OR(error, AND(to_queue, polled_load == min_quota))
        over_min = over_min + ITE(AND(to_queue, polled_load == max_quota), one, zero)
    # ---- R22 verifyUnfilledMembers
    left_under = OR(*under)
    error = OR(error, AND(left_under, over_min != expected_over_min),
               OR(*[AND(under[m], loads[m] != min_quota) for m in members]))
    assignment = [[OR(kept[m][p], granted[m][p]) for p in range(P)] for m in members]
    return BuildResult(assignment, error, loads, over_min)


def prove_builder(M: int, P: int, timeout_ms: int = 600000) -> tuple[str, float, dict[str, Any] | None]:
    """For every ownership pattern at M x P: no throw, every partition once, loads minQuota/maxQuota, P mod M at maxQuota.

    Returns (z3's answer for the negation: "unsat" = proved, seconds, a counterexample pattern if sat).

    Symmetry: the checked facts do not depend on partition names. Phase 1 keeps *the first*
    ``quota`` claims of a member, but how many depends only on how many it owns; phase 3 decides who
    takes the next unassigned partition from the lists and loads alone; so loads, throws and the
    number of holders of each partition are the same for every renaming of the partitions. The
    query therefore ranges over patterns sorted by owner (one per vector of claim counts), which
    is what makes 6 x 12 tractable. A partition in ``partitionsWithMultiplePreviousOwners`` behaves
    as an unowned one for these facts (R17 strips it before the quotas), so ``dup`` is left out
    here; the exhaustive comparison with the assignor (tests) covers it.
    """
    start = time.perf_counter()
    owner = [z3.Int(f"owner[{p}]") for p in range(P)]
    r = build(owner, [False] * P, M, P)
    min_quota, max_quota, expected = P // M, -(-P // M), P % M
    once = AND(*[_count([r.assignment[m][p] for m in range(M)]) == 1 for p in range(P)])
    quotas = AND(*[OR(r.loads[m] == min_quota, r.loads[m] == max_quota) for m in range(M)])
    at_max = _count([r.loads[m] == max_quota for m in range(M)]) == (expected if expected else M)
    loads_are_assignment = AND(*[r.loads[m] == _count(r.assignment[m]) for m in range(M)])
    claim = AND(NOT(r.error), once, quotas, at_max, loads_are_assignment)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*[AND(o >= -1, o < M) for o in owner])
    s.add(*[owner[p] <= owner[p + 1] for p in range(P - 1)])  # the symmetry above
    s.add(to_z3(NOT(claim)))
    answer = s.check()
    witness = None
    if answer == z3.sat:
        m = s.model()
        witness = {"owner": [m.eval(o, model_completion=True).as_long() for o in owner]}
    return str(answer), time.perf_counter() - start, witness
