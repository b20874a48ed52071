"""A pytest suite for a consumer-group assignor, graded by stickyproof (docs/pytest.md)."""

from hypothesis import given, settings

from stickyproof.grading import grade_assignor
from stickyproof.grading.failure import verdict_of
from stickyproof.strategies import groups

#: The assignor under test: "mypkg.assignor:assign", "exec:./my-assignor", "kafka-java:sticky@3.9.1"...
ASSIGNOR = "sticky"

#: Groups of up to 5 members and 4 topics of up to 6 partitions, in the protocols ASSIGNOR supports.
GROUPS = groups(assignor=ASSIGNOR, max_members=5, max_partitions=6)


@settings(max_examples=50, deadline=None)
@given(GROUPS)
def test_keeps_every_promise(scenario):
    """Every partition once, only to subscribers, balanced as promised, stable, no exception."""
    verdict = verdict_of(grade_assignor(scenario, ASSIGNOR))
    assert verdict.failures == (), dict(verdict.witnesses)


@settings(max_examples=50, deadline=None)
@given(GROUPS)
def test_keeps_most_of_what_it_could(scenario):
    """At least half the partitions a proven optimal assignment keeps with their owners."""
    verdict = verdict_of(grade_assignor(scenario, ASSIGNOR), min_stickiness=0.5)
    assert "stickiness" not in verdict.failures, verdict.witnesses["stickiness"]
