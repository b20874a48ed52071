"""Hazard labels (models/invariants.md §6): every pinned Kafka hazard in tests/regressions/ is named by
its rule, historical releases by their incident, and nothing else is labelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyproof.grading import grade_assignor
from stickyproof.grading.hazards import RULES

from .test_regressions import load_regression

REGRESSIONS = Path(__file__).parent / "regressions"

#: file stem -> the rule ids its grade must carry (from the file's own mechanism sentence).
EXPECTED = {
    "cooperative-sticky-empty-subscription-member-gets-partition": {"K2"},
    "sticky-empty-subscription-member-gets-partitions": {"K2"},
    "sticky-general-k1-nonexistent-partition-claim-assigns-twice": {"K1"},
    "sticky-nonexistent-partition-claim-throws": {"K1"},
    "sticky-general-k3-fixed-prev-owner-throws-npe": {"K3"},
    "sticky-general-k3-prev-owner-gets-unsubscribed-partition": {"K3"},
    "cooperative-sticky-v0-claims-invisible": {"v0-invisible"},
    "cooperative-sticky-v0-claims-invisible-handed-out-at-once": {"v0-invisible"},
    "sticky-2.2-stalled-member-keeps-reassigned-partitions": {"sticky@2.2"},
    "sticky-2.6-nonexistent-partition-claim-handed-out": {"sticky@2.6"},
    "cooperative-sticky-2.6-same-generation-double-claim-assigned-twice": {"cooperative-sticky@2.6"},
    "cooperative-sticky-3.5.1-partition-kept-by-two-members": {"cooperative-sticky@3.5.1"},
}


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_a_pinned_hazard_is_labelled_by_its_rule(stem):
    scenario, expect = load_regression(REGRESSIONS / f"{stem}.json")
    g = grade_assignor(scenario, expect["assignor"], direct=expect.get("direct") is True)
    assert not g.valid
    rules = {label.rule for label in g.labels}
    assert rules == EXPECTED[stem], (stem, [label.to_dict() for label in g.labels])
    failures = set(g.violated()) | ({"error"} if g.run_error else set())
    assert {label.failure for label in g.labels} == failures, "every failure of a pinned hazard is explained"


def test_rules_have_a_category_and_a_reason():
    for rule, (category, text) in RULES.items():
        assert category in ("kafka-bug", "hazard") and len(text) > 40, rule


def test_user_and_peer_assignors_are_never_labelled():
    scenario, _ = load_regression(REGRESSIONS / "sticky-empty-subscription-member-gets-partitions.json")
    g = grade_assignor(scenario, "tests.faulty_assignors:assigns_an_unsubscribed_topic")
    assert not g.valid and g.violated() == ("unsubscribed",) and g.labels == ()


def test_a_valid_grade_has_no_label():
    scenario, _ = load_regression(REGRESSIONS / "sticky-empty-subscription-member-iterated-last-gets-nothing.json")
    assert grade_assignor(scenario, "sticky").labels == ()
