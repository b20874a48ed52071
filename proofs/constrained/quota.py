"""The constrained path's quotas, for every M, P and ownership pattern (docs/rules.md R15-R22; seed 004).

The builder (``ConstrainedAssignmentBuilder``, rack awareness off) in two loops over counters:

* **Phase 1** (R16), one iteration per member in map order: the member owns ``o`` partitions
  (any number: every ownership pattern, after R17 strips the multiply-claimed ones); it keeps
  ``o`` (under ``minQuota``: joins ``underMin`` with deficit ``minQuota - o``), or ``maxQuota``
  (while ``currentOverMin < expectedOverMin``; reaching it clears ``atMin``), or ``minQuota``
  (joins ``atMin`` while over-min slots remain).
* **Phase 3** (R21), one iteration per unassigned partition: the next ``underMin`` member gets it
  (it moves to ``atMin`` when it reaches ``minQuota``), else the head of ``atMin`` gets one more
  (``currentOverMin += 1``), else ``IllegalStateException``. R22 checks the end.

Members are counted by class (under minQuota, listed in atMin, at minQuota but unlisted, at
maxQuota); each class fixes its members' loads, so a statement about the counts is a statement about
every member. Which under-min member finishes first is left free (the counts cannot tell), so the
proof covers every order.

Everything is linear: ``i * minQuota`` is carried as an accumulator ``acc``, and the only fact about
division is the one at the loop's exit, ``P = acc + r`` with ``0 <= r < M`` (``acc = M * minQuota``).
Each loop's invariant is checked inductively (init, step, exit) with Z3 over QF_LIA.

Switch ``cap_over_min`` (default True, Kafka since 3.0, KAFKA-12464): phase 1 keeps ``maxQuota``
only while over-min slots remain. Off (every member owning ``maxQuota`` or more keeps
``maxQuota``), the statement fails: more than ``P mod M`` members end at ``maxQuota`` and an
under-min member cannot be filled.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import z3

__all__ = ["QuotaResult", "prove_quota_loop"]


@dataclass(frozen=True)
class QuotaResult:
    proved: bool
    failures: tuple[str, ...]  # the checks that are not valid ("phase 3 step: ...")
    queries: int
    seconds: float
    witness: dict[str, int] | None = None


def _phase1_vars(tag: str) -> dict[str, z3.ArithRef]:
    return {n: z3.Int(f"{n}{tag}") for n in ("i", "acc", "kept", "D", "c", "nu", "na", "nz")}


def _phase3_vars(tag: str) -> dict[str, z3.ArithRef]:
    return {n: z3.Int(f"{n}{tag}") for n in ("R", "D", "c", "nu", "na", "nz", "ise")}


def prove_quota_loop(*, cap_over_min: bool = True) -> QuotaResult:
    start = time.perf_counter()
    M, minQ, r = z3.Ints("M minQuota r")
    delta = z3.If(r > 0, 1, 0)
    maxQ = minQ + delta
    params = [M >= 1, minQ >= 0, r >= 0, r < M]
    failures: list[str] = []
    queries = 0
    witness: dict[str, int] | None = None

    def valid(name: str, hyp: list[Any], goal: Any) -> None:
        nonlocal queries, witness
        queries += 1
        s = z3.Solver()
        s.add(*params, *hyp, z3.Not(goal))
        if s.check() != z3.unsat:
            failures.append(name)
            if witness is None and s.check() == z3.sat:
                m = s.model()
                witness = {str(d): m[d].as_long() for d in m.decls() if m[d].sort() == z3.IntSort()}

    # ---------------------------------------------------------------- phase 1
    def inv1(x: dict[str, Any]) -> Any:
        return z3.And(
            x["i"] >= 0, x["i"] <= M,
            x["kept"] + x["D"] == x["acc"] + x["c"],          # every processed member accounts for minQuota, +1 if over
            x["nu"] + x["na"] + x["nz"] + x["c"] == x["i"],   # each member in exactly one class
            x["nu"] >= 0, x["na"] >= 0, x["nz"] >= 0,
            x["c"] >= 0, x["c"] <= r,
            z3.Implies(x["c"] < r, x["nz"] == 0),             # nobody unlisted while over-min slots remain
            x["D"] >= x["nu"], z3.Implies(x["nu"] == 0, x["D"] == 0),  # each under-min member misses >= 1
            z3.Implies(delta == 0, x["c"] == 0),
        )

    a, b = _phase1_vars("0"), _phase1_vars("1")
    o = z3.Int("owned")  # what the member owns after R17: anything
    init1 = z3.And(a["i"] == 0, a["acc"] == 0, a["kept"] == 0, a["D"] == 0, a["c"] == 0, a["nu"] == 0, a["na"] == 0, a["nz"] == 0)
    under = o < minQ
    over = z3.And(o >= maxQ, a["c"] < r) if cap_over_min else z3.And(o >= maxQ, delta == 1)
    cleared = z3.And(over, a["c"] + 1 == r)
    step1 = z3.And(
        a["i"] < M, o >= 0,
        b["i"] == a["i"] + 1, b["acc"] == a["acc"] + minQ,
        b["kept"] == a["kept"] + z3.If(under, o, z3.If(over, maxQ, minQ)),
        b["D"] == a["D"] + z3.If(under, minQ - o, 0),
        b["c"] == a["c"] + z3.If(z3.And(z3.Not(under), over), 1, 0),
        b["nu"] == a["nu"] + z3.If(under, 1, 0),
        # atMin: the "else" members join while c < r; reaching r clears it (its members become unlisted)
        b["na"] == z3.If(under, a["na"], z3.If(over, z3.If(cleared, 0, a["na"]),
                                                z3.If(a["c"] < r, a["na"] + 1, a["na"]))),
        b["nz"] == z3.If(under, a["nz"], z3.If(over, z3.If(cleared, a["nz"] + a["na"], a["nz"]),
                                                z3.If(a["c"] < r, a["nz"], a["nz"] + 1))),
    )
    valid("phase 1: init", [init1], inv1(a))
    valid("phase 1: step", [inv1(a), step1], inv1(b))

    # ---------------------------------------------------------------- phase 3
    def inv3(x: dict[str, Any]) -> Any:
        return z3.And(
            x["ise"] == 0,
            x["R"] == x["D"] + r - x["c"],
            x["nu"] + x["na"] + x["nz"] + x["c"] == M,
            x["nu"] >= 0, x["na"] >= 0, x["nz"] >= 0,
            x["c"] >= 0, x["c"] <= r,
            z3.Implies(x["c"] < r, x["nz"] == 0),
            x["D"] >= x["nu"], z3.Implies(x["nu"] == 0, x["D"] == 0),
            z3.Implies(delta == 0, x["c"] == 0),
        )

    P, fin = z3.Ints("P finished")
    c3, d3 = _phase3_vars("2"), _phase3_vars("3")
    exit1 = z3.And(inv1(a), a["i"] == M, P == a["acc"] + r)  # P = M * minQuota + r, the one fact about division
    handoff = z3.And(c3["R"] == P - a["kept"], c3["D"] == a["D"], c3["c"] == a["c"], c3["nu"] == a["nu"],
                     c3["na"] == a["na"], c3["nz"] == a["nz"], c3["ise"] == 0)
    valid("phase 3: init (phase 1 exit)", [exit1, handoff], inv3(c3))
    # one unassigned partition: to an under-min member (which may reach minQuota), else the head of atMin
    to_under = c3["nu"] > 0
    to_atmin = z3.And(c3["nu"] == 0, c3["na"] > 0)
    step3 = z3.And(
        c3["R"] > 0, z3.Or(fin == 0, fin == 1),
        d3["R"] == c3["R"] - 1,
        d3["D"] == c3["D"] - z3.If(to_under, 1, 0),
        d3["nu"] == c3["nu"] - z3.If(to_under, fin, 0),
        # finishing needs the last missing partition; a member still under misses at least one more
        z3.Implies(to_under, z3.And(d3["D"] >= d3["nu"], z3.Implies(d3["nu"] == 0, d3["D"] == 0))),
        d3["na"] == c3["na"] + z3.If(to_under, fin, z3.If(to_atmin, -1, 0)),
        d3["nz"] == c3["nz"],
        # the polled member now holds minQuota + 1: counted over min iff that is maxQuota (else it is above)
        d3["c"] == c3["c"] + z3.If(to_atmin, 1, 0),
        d3["ise"] == z3.If(z3.Or(to_under, z3.And(to_atmin, delta == 1)), 0, 1),
    )
    valid("phase 3: step (no IllegalStateException, nobody above maxQuota)", [inv3(c3), step3], inv3(d3))
    # R22 and the result: nothing left, nobody under minQuota, exactly r members at maxQuota
    done = z3.And(inv3(c3), c3["R"] == 0)
    valid("end: every member at minQuota or maxQuota, exactly P mod M at maxQuota", [done],
          z3.And(c3["nu"] == 0, c3["D"] == 0, c3["c"] == r))
    return QuotaResult(not failures, tuple(failures), queries, time.perf_counter() - start, witness)
