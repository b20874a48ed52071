"""The constrained-path statements (seed 004, docs/rules.md R7-R9 and R15-R22)."""

from __future__ import annotations

from ..outcome import COUNTEREXAMPLE, PROVED, UNKNOWN, Outcome, Promise, Statement
from .builder import prove_builder
from .quota import prove_quota_loop
from .resolution import find_resolution_counterexample, prove_resolution

__all__ = ["STATEMENTS", "BUILDER_SIZES"]

#: The partition-level builder: (members, partitions) in the quick run and with --deep.
BUILDER_SIZES = {"quick": (4, 8), "deep": (6, 12)}


def _quota(deep: bool, promise: Promise | None) -> Outcome:
    r = prove_quota_loop()
    detail = {"queries": r.queries, "checks": ["phase 1: init", "phase 1: step", "phase 3: init (phase 1 exit)",
                                                "phase 3: step", "end"]}
    if r.proved:
        return Outcome(PROVED, "every M >= 1, P >= 0 and ownership pattern", detail=detail)
    return Outcome(UNKNOWN, "a check failed", detail={**detail, "failures": list(r.failures), "witness": r.witness})


def _resolution(deep: bool, promise: Promise | None) -> Outcome:
    r = prove_resolution("current")
    detail = {"queries": r.queries}
    if r.verdict:
        return Outcome(PROVED, "every number of members, partitions and claims, every generation", detail=detail)
    return Outcome(UNKNOWN, "a check failed", detail={**detail, "failures": list(r.failures)})


def _resolution_351(deep: bool, promise: Promise | None) -> Outcome:
    found = find_resolution_counterexample("3.5.1", max_members=(promise.length if promise and promise.length else 4))
    why = prove_resolution("3.5.1")
    detail = {"not_inductive": list(why.failures)}
    if not found.verdict:
        return Outcome(UNKNOWN, "no counterexample within the bound", detail=detail)
    w = found.witness or {}
    detail["witness"] = w
    return Outcome(COUNTEREXAMPLE, f"1 partition, claims of {w.get('members')} members in map order",
                   length=w.get("members"), detail=detail)


def _builder(deep: bool, promise: Promise | None) -> Outcome:
    M, P = BUILDER_SIZES["deep" if deep else "quick"]
    answer, seconds, witness = prove_builder(M, P)
    bound = f"{M} members x {P} partitions, every ownership pattern"
    if answer == "unsat":
        return Outcome(PROVED, bound, detail={"z3_seconds": round(seconds, 3)})
    if answer == "sat":
        return Outcome(COUNTEREXAMPLE, bound, detail={"witness": witness})
    return Outcome(UNKNOWN, f"{bound}: z3 answered {answer}")


STATEMENTS: tuple[Statement, ...] = (
    Statement("constrained.quota-loop",
              "the constrained path never throws, ends with exactly P mod M members at maxQuota and nobody above, "
              "for every M, P and ownership pattern", _quota),
    Statement("constrained.resolution",
              "ownership resolution leaves a partition with its unique top-generation claimant, or with nobody", _resolution),
    Statement("constrained.resolution-3.5.1",
              "3.5.1's owner-map overwrite lets two members keep one partition (KAFKA-15106)", _resolution_351),
    Statement("constrained.partition-level",
              "the partition-level builder hands every partition to exactly one member, at minQuota or maxQuota, "
              "never throwing, for every ownership pattern", _builder),
)
