"""The optimisation model's statements (models/optimal-assignment.md §4 and T3), up to small sizes."""

from __future__ import annotations

from ..outcome import COUNTEREXAMPLE, PROVED, UNKNOWN, Outcome, Promise, Statement
from .flows import FlowResult, prove_flow_exactness, prove_windows

__all__ = ["STATEMENTS", "SIZES"]

#: (members, topics, partitions per topic) in the quick run and with --deep.
SIZES = {
    "flow-exactness": {"quick": (2, 2, 2), "deep": (4, 2, 4)},
    "windows": {"quick": (3, 2, 2), "deep": (4, 2, 4)},
}


def _outcome(r: FlowResult, size: tuple[int, int, int], what: str) -> Outcome:
    N, T, K = size
    bound = f"every instance up to {N} members x {T} topics x {K} partitions per topic ({r.cases} cases)"
    detail = {"cases": r.cases, "z3_seconds": round(r.seconds, 3)}
    if r.answer == "unsat":
        return Outcome(PROVED, bound, detail=detail)
    if r.answer == "sat":
        return Outcome(COUNTEREXAMPLE, bound, detail={**detail, "witness": r.witness, "what": what})
    return Outcome(UNKNOWN, f"{bound}: z3 answered {r.answer}", detail={**detail, "witness": r.witness})


def _exactness(deep: bool, promise: Promise | None) -> Outcome:
    size = SIZES["flow-exactness"]["deep" if deep else "quick"]
    return _outcome(prove_flow_exactness(*size), size, "certified optima of the two flows differ in cost")


def _windows(deep: bool, promise: Promise | None) -> Outcome:
    size = SIZES["windows"]["deep" if deep else "quick"]
    return _outcome(prove_windows(*size), size, "two certified O1 optima put a member two apart")


STATEMENTS: tuple[Statement, ...] = (
    Statement("optimal.flow-exactness",
              "the aggregated flow's optimum equals the per-partition 0/1 model's (models/optimal-assignment.md §4)",
              _exactness),
    Statement("optimal.windows",
              "any two balance optima differ by at most one partition per member (T3, the CP-SAT windows)", _windows),
)
