"""Z3 checks of one assignment against every invariant of ``models/invariants.md``, with witnesses.

Each invariant is one Datalog program run by Z3's fixedpoint engine (muZ, ``engine=datalog``):
the facts of the assignment are relations over dense ids, the invariant's violation formula is a
rule set defining a relation ``V`` (joins, stratified negation, bit-vector comparisons), and the
query "is ``V`` non-empty?" is the check. ``sat`` is what reports a violation; the witness is read
from Z3's answer, the tuples of ``V`` (which row, which members, which loads, which level).
``unsat`` means the least fixpoint holds no violation: the invariant holds for these facts.

The package, by concern:

- ``facts``: one pass over the assignment; members, outsiders, topics and partitions interned
  once through ``model.Index``, in sorted order, so numbering never depends on input order.
- ``placement``: ``unassigned``, ``duplicate``, ``unsubscribed``, ``nonexistent``.
- ``balance``: ``imbalance`` in its modes ``uniform``, ``kafka`` and ``global`` (the improving
  chain as a reachability query, rebuilt and re-verified move by move), and the contract modes
  ``per-topic`` and ``pairwise`` (§5).
- ``cooperative``: ``cooperative-unsafe`` and ``revoking-unclaimed``.
- ``z3_datalog``: the Z3 boundary, the only module that imports z3, writes its text protocol and
  parses its answers; every z3 failure becomes ``SolverError``.
- ``verdict``/``check``: the identifiers, ``Violation``, ``CheckResult``, ``check_assignment``.

How 100,000 partitions are checked in well under 10 s (benchmarks/invariants.py prints the
figure): facts are aggregated by exactly the attributes each rule reads (a few per topic or per
member, not per partition), the improving chain is a reachability query over topics and
subscription classes, and the programs go to Z3 as text (see each module's docstring).
"""

from __future__ import annotations

from .balance import BALANCE_MODES, CHECK_MODES, default_balance, subscriptions_equal
from .check import check_assignment
from .verdict import ASSIGNMENT_INVARIANTS, INVARIANTS, RUN_INVARIANTS, CheckResult, Violation

__all__ = [
    "INVARIANTS",
    "ASSIGNMENT_INVARIANTS",
    "RUN_INVARIANTS",
    "BALANCE_MODES",
    "CHECK_MODES",
    "Violation",
    "CheckResult",
    "subscriptions_equal",
    "default_balance",
    "check_assignment",
]
