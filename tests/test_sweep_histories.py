"""History sweeps without Spark: rows carry provenance, states are reachable, the grader judges live claims.

What a history row is graded on is whatever the group protocol produced, so none of the input
classes real clients cannot produce may appear in one (issue 11, "Done when"). These tests draw
histories and check every leader input; ``test_sweep.py`` runs the Spark job itself.
"""

from __future__ import annotations

import pytest

from stickyproof.lookup import get_assignor
from stickyproof.group.stepper import run_history
from stickyproof.model import Assignment, Member, Scenario, Topic, TopicPartition
from stickyproof.oracle.grade import grade
from stickyproof.scenarios.histories import draw_history
from stickyproof.sweep.columns import HISTORY, REBALANCE, is_failing
from stickyproof.sweep.rows import MAIN, TaskParams, adversarial_task, history_task, preset_of
from stickyproof.sweep.run import DEFAULT_LIMITS

LIMITS = DEFAULT_LIMITS


def unreachable_classes(scenario: Scenario, joined_with: dict[str, set[str]] | None = None) -> list[str]:
    """Which input classes no real client produces this leader input shows (issue 11's list).

    One class of that list is reachable through a race of Kafka's client (models/protocol.md §9.4):
    a cooperative member whose subscription changed after its join prepare, and whose SyncGroup then
    failed with REBALANCE_IN_PROGRESS, joins again without a join prepare, listing the new topics and
    its old owned partitions. Such a claim is always on a topic the member joined with before
    (``joined_with``: member -> topics it listed at earlier rebalances of the history); any other is not.
    """
    found = []
    cooperative = scenario.protocol == "cooperative"
    counts = scenario.partition_counts
    if cooperative and any(m.version == 0 for m in scenario.members):
        found.append("v0 member in a cooperative group")
    claims: dict[TopicPartition, list[Member]] = {}
    for m in scenario.members:
        for tp in set(m.owned):
            claims.setdefault(tp, []).append(m)
        if any(tp.topic in counts and tp.partition >= counts[tp.topic] for tp in m.owned):
            found.append(f"{m.id}: claim past a partition count")
        before = (joined_with or {}).get(m.id, set())
        if cooperative and any(tp.topic not in m.topics and tp.topic not in before for tp in m.owned):
            found.append(f"{m.id}: cooperative member claims a topic it never joined with")
        if m.version >= 2 and m.generation == -1 and m.owned:
            found.append(f"{m.id}: v{m.version} member with generation -1 claims partitions")
    for tp, members in claims.items():
        generations = [m.generation for m in members if m.generation >= 0]
        if len(generations) != len(set(generations)):
            found.append(f"{tp}: two members claim it at the same generation")
    return found


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky", "range"])
def test_history_rows_contain_no_unreachable_input(assignor):
    info = get_assignor(assignor)
    seen = 0
    for index in range(60):
        history = draw_history(7, index, scale=preset_of(index, "small" if index % 10 else "medium"))
        run = run_history(history, info)
        joined_with: dict[str, set[str]] = {}
        for record in run.rebalances:
            if record.scenario is None:
                continue
            seen += 1
            assert unreachable_classes(record.scenario, joined_with) == [], (index, record.number, record.event)
            for m in record.scenario.members:
                joined_with.setdefault(m.id, set()).update(m.topics)
    assert seen > 200


def test_the_check_itself_sees_each_class():
    # The check above must be able to fail: one hand-made leader input per class.
    t = (Topic("t", 2),)
    def member(mid, owned=(), generation=3, version=3, topics=("t",)):
        return Member(mid, topics, owned=tuple(TopicPartition("t", p) for p in owned), generation=generation, version=version)
    cases = [
        Scenario(t, (member("a", version=0),), protocol="cooperative"),
        Scenario(t, (member("a", [5]),)),
        Scenario((*t, Topic("u", 1)), (member("a", [0], topics=("u",)),), protocol="cooperative"),
        Scenario(t, (member("a", [0], generation=-1),)),
        Scenario(t, (member("a", [0]), member("b", [0]))),
    ]
    assert [len(unreachable_classes(s)) for s in cases] == [1, 1, 1, 1, 1]


def test_an_eager_member_of_a_cooperative_generation_owes_no_revocation():
    """Mid-upgrade an eager-pinned member revoked everything before it joined (R37): the leader is
    told it owns nothing, and handing its partitions on at once is safe although it held them.
    The grader once judged cooperative safety on what it had held (history seed 0, index 35)."""
    t = (Topic("t", 2),)
    told = Scenario(t, (Member("a", ("t",), owned=(), generation=4),
                        Member("b", ("t",), owned=(TopicPartition("t", 1),), generation=4)), protocol="cooperative")
    held = Scenario(t, (Member("a", ("t",), owned=(TopicPartition("t", 0),), generation=4),
                        Member("b", ("t",), owned=(TopicPartition("t", 1),), generation=4)), protocol="cooperative")
    answer = Assignment({"a": (), "b": (TopicPartition("t", 0), TopicPartition("t", 1))})
    judged = grade(held, assignment=answer, leader_input=told)
    assert "cooperative-unsafe" not in {str(v.invariant) for v in judged.violations}
    assert "cooperative-unsafe" in {str(v.invariant) for v in grade(held, assignment=answer).violations}
    # ... while b, a cooperative member, still has to revoke t-1 before a gets it.
    unsafe = Assignment({"a": (TopicPartition("t", 1),), "b": (TopicPartition("t", 0),)})
    assert "cooperative-unsafe" in {str(v.invariant) for v in grade(held, assignment=unsafe, leader_input=told).violations}


def test_history_task_rows_carry_provenance_and_history_measures():
    rows = history_task(3, 9, "cooperative-sticky", TaskParams(scale=MAIN, limits=LIMITS))
    *rebalances, history = rows
    assert history["kind"] == HISTORY and history["scale"] == "medium"
    assert rebalances and all(r["kind"] == REBALANCE for r in rebalances)
    assert [r["rebalance"] for r in rebalances] == list(range(1, len(rebalances) + 1))
    assert all(r["event"] and r["trigger"] and r["generation"] is not None for r in rebalances)
    assert history["rebalances"] == len(rebalances)
    assert history["follow_ups"] == sum(1 for r in rebalances if r["follow_up"])
    valid = [r for r in rebalances if r["valid"]]
    assert valid and all(0.0 <= r["stickiness"] <= 1.0 for r in valid if r["stickiness"] is not None)
    assert history["moved_total"] == sum(r["moved"] for r in rebalances if r["moved"] is not None)
    assert history["monitor_no_double_consumption"] in (True, False)


def test_main_scale_puts_one_large_history_first():
    assert [preset_of(i, MAIN) for i in (0, 1, 9, 19, 20)] == ["large", "small", "medium", "medium", "small"]


@pytest.mark.parametrize("assignor", ["range", "roundrobin"])
def test_range_and_roundrobin_keep_their_contracts_on_histories(assignor):
    for index in range(12):
        rows = history_task(11, index, assignor, TaskParams(scale="small", limits=LIMITS))
        assert not [r for r in rows if is_failing(r)], index


def test_adversarial_knob_zero_means_none_and_hazards_are_labelled():
    params = TaskParams(source="adversarial", space=("past_count_claims=1", "protocols=eager", "versions=3",
                                                     "subscriptions=uniform", "members=2..4"), limits=LIMITS)
    labelled = 0
    for index in range(12):
        (row,) = adversarial_task(5, index, "sticky", params)
        assert row["past_count_claims"] >= 1
        if row["nonexistent"] or row["duplicate"] or row["unassigned"]:
            assert "K1" in (row["hazards"] or ""), row
            labelled += 1
    assert labelled > 0
    clean = TaskParams(source="adversarial", space=("past_count_claims=0", "double_claims=0", "stale=0",
                                                    "unknown_generation=0", "deleted_topic_claims=0"), limits=LIMITS)
    for index in range(20):
        (row,) = adversarial_task(5, index, "range", clean)
        assert (row["past_count_claims"], row["double_claims"], row["stale_claimants"],
                row["unknown_generation_claimants"], row["deleted_topic_claims"]) == (0, 0, 0, 0, 0)


@pytest.mark.parametrize("name, rule", [
    ("cooperative-sticky-empty-subscription-member-handed-a-claimed-partition", "K2"),
    ("cooperative-sticky-past-count-claim-hands-a-claimed-partition-over-unrevoked", "K1"),
    ("cooperative-sticky-v0-member-follow-up-round-hands-its-partition-over-unrevoked", "v0-invisible"),
])
def test_a_cooperative_unsafe_handover_caused_by_a_known_hazard_carries_its_label(name, rule):
    """The adversarial sweep once listed these as unexpected: Kafka's Java assignor does the same, and
    the hand-over is the hazard's own mechanism (models/invariants.md §6)."""
    import json
    from pathlib import Path

    from stickyproof.grading import grade_assignor
    from stickyproof.model import scenario_from_dict

    doc = json.loads((Path(__file__).parent / "regressions" / f"{name}.json").read_text())
    doc.pop("expect")
    graded = grade_assignor(scenario_from_dict(doc), "cooperative-sticky")
    assert ("cooperative-unsafe", rule) in {(label.failure, label.rule) for label in graded.labels}
    assert {str(v.invariant) for v in graded.violations} <= {label.failure for label in graded.labels}


def test_instability_a_v0_members_invisible_holdings_cause_carries_its_label():
    import json
    from pathlib import Path

    from stickyproof.grading import grade_assignor
    from stickyproof.model import scenario_from_dict

    name = "cooperative-sticky-v0-member-holdings-invisible-so-its-own-answer-moves"
    doc = json.loads((Path(__file__).parent / "regressions" / f"{name}.json").read_text())
    doc.pop("expect")
    graded = grade_assignor(scenario_from_dict(doc), "cooperative-sticky")
    assert ("unstable", "v0-invisible") in {(label.failure, label.rule) for label in graded.labels}
    assert {str(v.invariant) for v in graded.violations} <= {label.failure for label in graded.labels}
