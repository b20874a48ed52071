"""A hunt's finding as a regression file (tests/regressions/README.md): the shrunk group plus ``expect``."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

from ..errors import StickyproofError
from ..model import jsonable, scenario_to_dict
from ..scenarios.shrink import scenario_size
from .search import Finding, HuntResult

__all__ = ["regression_name", "regression_document"]



def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9@]+", "-", text).strip("-").lower()


def regression_name(result: HuntResult, finding: Finding | None = None) -> str:
    """``<assignor>-<failure>-hunt-seed<S>`` (with ``--keep-going``, ``<failure>`` is the finding's
    signature, e.g. ``error-KeyError``): the file stem and the scenario's name."""
    finding = finding or result.finding
    assert finding is not None
    what = finding.failure
    if result.keep_going and finding.verdict.run_error is not None and finding.failure in ("error", "time-limit"):
        what = f"{finding.failure}-{finding.verdict.run_error.type}"
    return f"{_slug(result.assignor)}-{_slug(what)}-hunt-seed{result.seed}"


def _witness_sentence(failure: str, witness: Mapping[str, Any]) -> str:
    shown = ", ".join(f"{k}={jsonable(v)}" for k, v in witness.items() if k != "message")
    if failure in ("error", "time-limit"):
        return f"{witness.get('message', '')}".strip()
    return shown


def regression_document(result: HuntResult, finding: Finding | None = None) -> dict[str, Any]:
    """The finding as a regression file: the shrunk scenario plus an ``expect`` object.

    The expectation is what ``tests/test_regressions.py`` replays: ``error`` (the Java exception's
    simple name, or ``AssignorFailure``) when the assignor raised, otherwise ``grade`` with
    ``valid`` and the full set of violated invariants (and ``stickiness``, ``kept``,
    ``optimal_kept`` for a stickiness finding). A time-limit finding cannot be replayed as such
    (the replay has no time limit); it is written with ``error: AssignorFailure`` and a
    ``time limit`` message, which documents it but fails until the assignor gets faster.
    """
    finding = finding or result.finding
    if finding is None:
        raise StickyproofError("the hunt found nothing: there is no regression to write")
    name = regression_name(result, finding)
    doc = scenario_to_dict(replace(finding.scenario, name=name))
    size = scenario_size(finding.original)
    mechanism = (
        f"Found by `{result.command()}` and shrunk from {size['members']} members and {size['partitions']} "
        f"partitions: {finding.failure} ({_witness_sentence(finding.failure, finding.witness)})."
    )
    expect: dict[str, Any] = {"assignor": result.assignor, "mechanism": mechanism}
    if result.contract is not None:
        expect["balance"] = result.contract
    if result.direct:
        expect["direct"] = True
    if finding.failure == "error":
        error = finding.verdict.run_error
        java = error.kafka_exception if error is not None else None
        expect["error"] = java.rsplit(".", 1)[-1] if java else (error.type if error is not None else "AssignorFailure")
    elif finding.failure == "time-limit":
        expect["error"] = "AssignorFailure"
        expect["error_message"] = "time limit"
    else:
        g = finding.verdict.grade
        record: dict[str, Any] = {
            "valid": bool(g is not None and g.valid),
            "violations": sorted(f for f in finding.failures if f not in ("error", "time-limit", "stickiness")),
        }
        if finding.failure == "stickiness":
            record["stickiness"] = finding.verdict.stickiness
            record["kept"] = None if g is None else g.kept
            record["optimal_kept"] = None if g is None else g.optimal_kept
        expect["grade"] = record
    doc["expect"] = expect
    return doc
