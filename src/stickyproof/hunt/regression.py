"""A hunt's finding as a regression file (tests/regressions/README.md): the shrunk group plus ``expect``.

The file is written by the one writer, ``grading.regression.regression_document`` (the sweep's
triage writes its findings with it too); this module names the file and says how it was found.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import StickyproofError
from ..grading.regression import regression_document as _document
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


def regression_document(result: HuntResult, finding: Finding | None = None) -> dict[str, Any]:
    """The finding as a regression file: the shrunk scenario plus an ``expect`` object
    (``grading.regression.regression_expect`` says what it expects)."""
    finding = finding or result.finding
    if finding is None:
        raise StickyproofError("the hunt found nothing: there is no regression to write")
    size = scenario_size(finding.original)
    found_by = (
        f"Found by `{result.command()}` and shrunk from {size['members']} members and {size['partitions']} partitions"
    )
    return _document(
        finding.scenario, finding.verdict, name=regression_name(result, finding), assignor=result.assignor,
        found_by=found_by, failure=finding.failure, witness=finding.witness, contract=result.contract,
        direct=result.direct,
    )
