"""``stickyproof hunt``: search the scenario space for a group an assignor gets wrong, shrink it,
and write it as a regression file.

    search      ``hunt(assignor, ...)``: Hypothesis search, then the shared shrinker (scenarios.shrink)
    verdict     ``judge``: one group graded (``grading.grade_assignor``) and read as failures
    regression  ``regression_document``: a finding as a tests/regressions file
    report      the text the CLI prints for a result
"""

from .regression import regression_document, regression_name
from .report import render_result
from .search import DEFAULT_EXAMPLES, DEFAULT_LIMITS, Finding, HuntProgress, HuntResult, hunt, hunting_space
from .verdict import FAILURE_KINDS, Verdict, judge, verdict_of

__all__ = [
    "DEFAULT_EXAMPLES",
    "DEFAULT_LIMITS",
    "FAILURE_KINDS",
    "Finding",
    "HuntProgress",
    "HuntResult",
    "Verdict",
    "hunt",
    "hunting_space",
    "judge",
    "regression_document",
    "regression_name",
    "render_result",
    "verdict_of",
]
