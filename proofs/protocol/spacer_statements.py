"""--deep statements: fixed-size invariants found by Spacer (IC3/PDR), exported and re-checked.

Each statement asks Z3's Spacer (``spacer.py``) for an inductive invariant of "no partition is
consumed by two members at once" at 2 members x 1 partition, with no hand-written lemma, and is
PROVED only if the exported certificate passes the independent re-check (init, step, safety, with
fresh solvers against the model's full step). The bound is "every run length" at that size: an
inductive invariant covers every reachable state, unlike ``protocol.bounded``'s depth.

The eager theorem with stored fail-over (``statements.VARIANTS["eager"]``) is not among them: Spacer
did not converge on it within 520 s in any configuration tried (proofs/README.md); without fail-over
it does (about 40-100 s).

The certificate is written to ``$STICKYPROOF_CERTIFICATES/<statement>.smt2`` when that variable
names a directory; its size and SHA-256 prefix are always in the detail.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..outcome import COUNTEREXAMPLE, PROVED, UNKNOWN, Outcome, Statement
from .model import Variant
from .spacer import certificate_digest, spacer_invariant

__all__ = ["SPACER_STATEMENTS", "SPACER_VARIANTS", "SPACER_SIZES", "CERTIFICATES_ENV"]

SPACER_SIZES = {"M": 2, "P": 1}
CERTIFICATES_ENV = "STICKYPROOF_CERTIFICATES"
#: Spacer's time limit per statement (issue 13: each --deep item under 10 minutes).
TIMEOUT_MS = 540_000

SPACER_VARIANTS: dict[str, Variant] = {
    "cooperative": Variant("cooperative", "top", failover="persisted"),
    "cooperative-trust-all": Variant("cooperative", "all", failover="persisted"),
    "failover-cooperative": Variant("cooperative", "top", failover="lost"),
    "failover-unique": Variant("eager", "unique", failover="lost"),
    "eager.no-failover": Variant("eager", "top", failover="none"),
}


def _run(name: str, key: str) -> Outcome:
    variant = SPACER_VARIANTS[key]
    r = spacer_invariant(variant, SPACER_SIZES, "no-double-consumption", timeout_ms=TIMEOUT_MS)
    size = f"{SPACER_SIZES['M']} members x {SPACER_SIZES['P']} partition"
    detail: dict[str, Any] = {
        "variant": variant.to_dict(),
        "property": "no-double-consumption",
        "sizes": dict(SPACER_SIZES),
        "method": "Z3 Spacer (IC3/PDR), no hand-written lemma; certificate re-checked with fresh solvers",
        "answer": r.answer,
        "spacer_seconds": round(r.seconds, 1),
        "variables": r.variables,
        "transition_cases": r.cases,
        "spacer": r.stats,
    }
    if r.answer == "unsafe":
        return Outcome(COUNTEREXAMPLE, f"{size}: Spacer found a run that breaks it", detail=detail)
    if r.certificate is None:
        return Outcome(UNKNOWN, f"{size}: Spacer gave up ({r.answer})", detail=detail)
    detail.update(certificate_chars=r.size, certificate_sha256=certificate_digest(r.certificate),
                  recheck_seconds=round(r.recheck_seconds, 1), rechecked=r.rechecked)
    where = os.environ.get(CERTIFICATES_ENV)
    if where:
        path = Path(where) / f"{name}.smt2"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(r.certificate, encoding="utf-8")
        detail["certificate"] = str(path)
    if not r.rechecked:
        return Outcome(UNKNOWN, f"{size}: Spacer's invariant failed the re-check", detail=detail)
    return Outcome(PROVED, f"{size}, every run length (Spacer invariant, re-checked)", detail=detail)


def _stmt(name: str, key: str, claim: str) -> Statement:
    return Statement(name, claim, lambda deep, promise: _run(name, key), deep_only=True)


SPACER_STATEMENTS: tuple[Statement, ...] = (
    _stmt("protocol.spacer.cooperative", "cooperative",
          "at 2 members x 1 partition, an invariant found by IC3/PDR (no lemma given) proves the cooperative theorem"),
    _stmt("protocol.spacer.cooperative.trust-all", "cooperative-trust-all",
          "at 2 members x 1 partition, IC3/PDR proves cooperative rebalancing safe even when every claim is trusted"),
    _stmt("protocol.spacer.failover.cooperative", "failover-cooperative",
          "at 2 members x 1 partition, IC3/PDR proves cooperative rebalancing safe through fail-overs without state"),
    _stmt("protocol.spacer.failover.unique-generation", "failover-unique",
          "at 2 members x 1 partition, IC3/PDR proves eager rebalancing with the unique-top-generation rule safe "
          "through fail-overs without state"),
    _stmt("protocol.spacer.eager.no-failover", "eager.no-failover",
          "at 2 members x 1 partition without coordinator fail-over, IC3/PDR proves the eager theorem"),
)
