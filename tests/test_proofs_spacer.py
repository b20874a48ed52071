"""proofs/protocol/spacer.py: Spacer's invariant is a certificate only after the independent re-check.

The re-check must reject what is not an inductive invariant of the model's full step (``true``; the
found invariant minus a clause it needs; the found invariant of a safe variant checked against a
broken one), accept what Spacer found, and the broken variant must come back unsafe so the encoding
Spacer is given is not vacuous.
"""

from __future__ import annotations

import importlib
import os
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
def found(model, tmp_path_factory):
    """The deep statement ``protocol.spacer.cooperative`` run once (about 6-15 s here): its outcome,
    and the certificate it wrote to $STICKYPROOF_CERTIFICATES."""
    statements = _module("protocol.spacer_statements")
    where = tmp_path_factory.mktemp("certificates")
    stmt = next(s for s in statements.SPACER_STATEMENTS if s.name == "protocol.spacer.cooperative")
    saved = os.environ.get(statements.CERTIFICATES_ENV)
    os.environ[statements.CERTIFICATES_ENV] = str(where)
    try:
        outcome = stmt.run(True, None)
    finally:
        if saved is None:
            del os.environ[statements.CERTIFICATES_ENV]
        else:
            os.environ[statements.CERTIFICATES_ENV] = saved
    certificate = (where / "protocol.spacer.cooperative.smt2").read_text(encoding="utf-8")
    return statements.SPACER_VARIANTS["cooperative"], outcome, certificate


def _decls(certificate: str) -> str:
    return "".join(line + "\n" for line in certificate.splitlines() if line.startswith("(declare-const"))


def _clauses(certificate: str) -> list[z3.BoolRef]:
    def flat(f):
        return [c for a in f.children() for c in flat(a)] if z3.is_and(f) else [f]
    return flat(z3.And(*z3.parse_smt2_string(certificate)))


def test_spacer_statement_proves_the_cooperative_theorem_with_a_certificate_that_rechecks(found, spacer):
    variant, outcome, certificate = found
    assert outcome.verdict == "proved", outcome
    assert outcome.bound == "2 members x 1 partition, every run length (Spacer invariant, re-checked)"
    assert outcome.detail["rechecked"] and outcome.detail["certificate_chars"] == len(certificate)
    assert outcome.detail["certificate_sha256"] == spacer.certificate_digest(certificate)
    assert variant == _module("protocol.statements").VARIANTS["cooperative"]
    assert spacer.recheck_certificate(variant, SIZES, certificate)
    # exported over the model's own state constants (the relative generations are mapped back)
    assert "d.s." not in certificate and "(declare-const s.G Int)" in certificate


def test_spacer_statements_are_deep_only(found):
    statements = _module("protocol.spacer_statements")
    assert [s.name for s in statements.SPACER_STATEMENTS] == [
        "protocol.spacer.cooperative", "protocol.spacer.cooperative.trust-all",
        "protocol.spacer.failover.cooperative", "protocol.spacer.failover.unique-generation",
        "protocol.spacer.eager.no-failover"]
    assert all(s.deep_only for s in statements.SPACER_STATEMENTS)


def test_recheck_rejects_true_and_the_invariant_minus_a_needed_clause(found, spacer):
    variant, _, certificate = found
    decls = _decls(certificate)
    assert not spacer.recheck_certificate(variant, SIZES, decls + "(assert true)\n")
    # the property alone is not inductive either
    clauses = _clauses(certificate)
    rejected = 0
    for i in range(len(clauses)):
        weaker = z3.And(*[c for j, c in enumerate(clauses) if j != i])
        rejected += not spacer.recheck_certificate(variant, SIZES, decls + f"(assert {weaker.sexpr()})\n")
        if rejected >= 3:
            break
    assert rejected >= 3


def test_recheck_rejects_the_certificate_against_a_broken_variant(found, spacer, model):
    _, _, certificate = found
    assert not spacer.recheck_certificate(model.Variant("cooperative", "top", rounds=1, failover="persisted"),
                                          SIZES, certificate)


def test_recheck_rejects_an_invariant_that_excludes_the_initial_state(found, spacer):
    variant, _, certificate = found
    decls = _decls(certificate)
    body = z3.And(*_clauses(certificate), z3.Int("s.G") >= 1)
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
