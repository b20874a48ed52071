"""proofs/protocol/spacer.py: Spacer's invariant is a certificate only after the independent re-check.

The re-check must reject what is not an inductive invariant of the model's full step (``true``; the
found invariant minus a clause it needs; the found invariant of a safe variant checked against a
broken one), accept what Spacer found, and the broken variant must come back unsafe so the encoding
Spacer is given is not vacuous.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import z3

from stickyproof.prove import load_proofs

PROOFS = Path(__file__).resolve().parents[1] / "proofs"
SIZES = {"M": 2, "P": 1}


def _module(name: str):
    load_proofs(PROOFS)
    return importlib.import_module(f"stickyproof_proofs.{name}")


@pytest.fixture(scope="module")
def spacer():
    return _module("protocol.spacer")


@pytest.fixture(scope="module")
def model():
    return _module("protocol.model")


@pytest.fixture(scope="module")
def found(spacer, model):
    """Spacer on the cooperative theorem at 2 x 1 (about 15 s here)."""
    variant = model.Variant("cooperative", "top", failover="persisted")
    return variant, spacer.spacer_invariant(variant, SIZES, timeout_ms=120_000)


def _decls(certificate: str) -> str:
    return "".join(line + "\n" for line in certificate.splitlines() if line.startswith("(declare-const"))


def _clauses(certificate: str) -> list[z3.BoolRef]:
    def flat(f):
        return [c for a in f.children() for c in flat(a)] if z3.is_and(f) else [f]
    return flat(z3.And(*z3.parse_smt2_string(certificate)))


def test_spacer_finds_a_certificate_that_rechecks(found, spacer):
    variant, r = found
    assert r.answer == "safe" and r.rechecked
    assert r.certificate is not None and r.size == len(r.certificate) > 0
    assert spacer.recheck_certificate(variant, SIZES, r.certificate)


def test_recheck_rejects_true_and_the_invariant_minus_a_needed_clause(found, spacer):
    variant, r = found
    decls = _decls(r.certificate)
    assert not spacer.recheck_certificate(variant, SIZES, decls + "(assert true)\n")
    # the property alone is not inductive either
    clauses = _clauses(r.certificate)
    rejected = 0
    for i in range(len(clauses)):
        weaker = z3.And(*[c for j, c in enumerate(clauses) if j != i])
        rejected += not spacer.recheck_certificate(variant, SIZES, decls + f"(assert {weaker.sexpr()})\n")
        if rejected >= 3:
            break
    assert rejected >= 3


def test_recheck_rejects_the_certificate_against_a_broken_variant(found, spacer, model):
    _, r = found
    assert not spacer.recheck_certificate(model.Variant("cooperative", "top", rounds=1, failover="persisted"),
                                          SIZES, r.certificate)


def test_recheck_rejects_an_invariant_that_excludes_the_initial_state(found, spacer):
    variant, r = found
    decls = _decls(r.certificate)
    body = z3.And(*_clauses(r.certificate), z3.Int("s.G") >= 1)
    assert not spacer.recheck_certificate(variant, SIZES, decls + f"(assert {body.sexpr()})\n")


def test_the_broken_one_round_variant_is_unsafe(spacer, model):
    r = spacer.spacer_invariant(model.Variant("cooperative", "top", rounds=1, failover="persisted"), SIZES,
                                timeout_ms=60_000)
    assert r.answer == "unsafe" and r.certificate is None


def test_reduction_drops_ghosts_and_fixes_what_never_changes(spacer, model):
    without = spacer.reduced_system(model.Variant("cooperative", "top", failover="none"), SIZES)
    names = {str(x) for x in without.xs}
    assert not any(n.startswith(("s.E", "s.meme")) for n in names)
    assert {str(x) for x, _ in without.fixed} == {"s.pG", "s.pin[0]", "s.pin[1]", "s.pasg[0,0]", "s.pasg[1,0]",
                                                   "s.plead[0]", "s.plead[1]"}
    stored = spacer.reduced_system(model.Variant("cooperative", "top", failover="persisted"), SIZES)
    assert not stored.fixed and "s.pG" in {str(x) for x in stored.xs}
