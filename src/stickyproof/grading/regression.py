"""A failure as a regression file (tests/regressions/README.md): the group plus its ``expect`` block.

The one writer: ``hunt --save`` (``hunt.regression``), the sweep's failure files and its triage
(``sweep.rows``, ``sweep.triage``) all call ``regression_document``, handing it the failure record
(a ``failure.Verdict`` and the failure it is about), so every file is replayed the same way by the
one reader, ``tests/test_regressions.py``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from ..errors import StickyproofError
from ..model import Scenario, jsonable, scenario_to_dict
from .failure import ERROR_KINDS, Verdict

__all__ = ["regression_document", "regression_expect", "failure_sentence"]


def _witness_sentence(failure: str, witness: Mapping[str, Any]) -> str:
    if failure in ERROR_KINDS:
        return f"{witness.get('message', '')}".strip()
    return ", ".join(f"{k}={jsonable(v)}" for k, v in witness.items() if k != "message")


def failure_sentence(failure: str, witness: Mapping[str, Any]) -> str:
    """``duplicate (partition=['t', 1], ...)``, or for an error its message: the end of a mechanism."""
    return f"{failure} ({_witness_sentence(failure, witness)})"


def regression_expect(
    verdict: Verdict,
    *,
    assignor: str,
    mechanism: str,
    failure: str | None = None,
    contract: str | None = None,
    direct: bool = False,
) -> dict[str, Any]:
    """The ``expect`` block of ``failure`` (default: the verdict's first) as the replay reads it.

    ``error`` (the Java exception's simple name, else the error's type) when the assignor raised,
    otherwise ``grade`` with ``valid`` and the full set of violated invariants (and ``stickiness``,
    ``kept``, ``optimal_kept`` for a stickiness failure). A time-limit failure cannot be replayed
    as such (the replay has no time limit); it is written with ``error: AssignorFailure`` and a
    ``time limit`` message, which documents it but fails until the assignor gets faster.
    """
    failure = failure or verdict.first
    if failure is None:
        raise StickyproofError("the verdict has no failure: there is no regression to write")
    expect: dict[str, Any] = {"assignor": assignor, "mechanism": mechanism}
    if contract is not None:
        expect["balance"] = contract
    if direct:
        expect["direct"] = True
    if failure == "error":
        error = verdict.run_error
        java = error.kafka_exception if error is not None else None
        expect["error"] = java.rsplit(".", 1)[-1] if java else (error.type if error is not None else "AssignorFailure")
    elif failure == "time-limit":
        expect["error"] = "AssignorFailure"
        expect["error_message"] = "time limit"
    else:
        g = verdict.grade
        # the grade's own violations, as the replay reads them: a server-side contract's K1 violation is
        # spelled ``stickiness`` too, so the verdict's failure kinds cannot tell it from a demanded minimum
        violated = ({v.invariant for v in g.violations} if g is not None
                    else {f for f in verdict.failures if f not in (*ERROR_KINDS, "stickiness")})
        record: dict[str, Any] = {
            "valid": bool(g is not None and g.valid),
            "violations": sorted(violated),
        }
        if failure == "stickiness":
            record["stickiness"] = verdict.stickiness
            record["kept"] = None if g is None else g.kept
            record["optimal_kept"] = None if g is None else g.optimal_kept
        expect["grade"] = record
    return expect


def regression_document(
    scenario: Scenario,
    verdict: Verdict,
    *,
    name: str,
    assignor: str,
    found_by: str,
    failure: str | None = None,
    witness: Mapping[str, Any] | None = None,
    contract: str | None = None,
    direct: bool = False,
) -> dict[str, Any]:
    """``scenario`` named ``name`` (the file's stem) with the ``expect`` block of ``failure``.

    The mechanism reads ``<found_by>: <failure> (<its witness>).``; ``witness`` defaults to the
    verdict's witness of that failure."""
    failure = failure or verdict.first
    if failure is None:
        raise StickyproofError("the verdict has no failure: there is no regression to write")
    shown = verdict.witnesses.get(failure, {}) if witness is None else witness
    doc = scenario_to_dict(replace(scenario, name=name))
    doc["expect"] = regression_expect(
        verdict, assignor=assignor, mechanism=f"{found_by}: {failure_sentence(failure, shown)}.", failure=failure,
        contract=contract, direct=direct,
    )
    return doc
