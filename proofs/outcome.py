"""What running a statement returns (``stickyproof prove`` turns it into a record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Outcome", "Statement", "Promise", "PROVED", "COUNTEREXAMPLE", "UNKNOWN"]

PROVED = "proved"
COUNTEREXAMPLE = "counterexample"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Outcome:
    """``verdict``: proved / counterexample / unknown. ``bound``: what was covered, in words
    ("all sizes", "2 members x 1 partition, runs of up to 18 steps"). ``length``: a counterexample's
    number of steps. ``detail``: statement-specific facts (lemmas, queries, the failing lemma, the trace)."""

    verdict: str
    bound: str
    length: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Promise:
    """What proofs/README.md promises for a statement: its verdict and, for a counterexample, its length."""

    verdict: str
    length: int | None = None


@dataclass(frozen=True)
class Statement:
    """One statement of proofs/README.md.

    ``run(deep, promise)`` checks it; a counterexample search goes to the promised length (the
    README is the single place that number lives). ``deep_only`` statements run only with --deep
    (or when named).
    """

    name: str
    claim: str
    run: Callable[[bool, "Promise | None"], Outcome]
    deep_only: bool = False
