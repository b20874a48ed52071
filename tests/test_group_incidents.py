"""The incidents the simulator must reproduce with the historical faults switched on, and hold without
(models/protocol.md §5), and KIP-429's two-bounce upgrade of a 10-member group."""

from __future__ import annotations

import pytest

from stickyproof.group import events_from_doc, simulate
from stickyproof.group.runner import run_simulation, schedule_for
from stickyproof.model import Member, Scenario, Topic
from stickyproof.scenarios import named

from .checks import doubles


# ------------------------------------------------------------------------------------------
# KAFKA-7026 / KIP-341 with the bundled kip341-stale-rejoin schedule


def test_kip341_scenario_carries_its_schedule():
    schedule = schedule_for("kip341-stale-rejoin")
    assert [(e.event, e.member) for e in schedule.events] == [("stall", "c1")]
    assert schedule.events[0].ticks > 6, "the stall outlasts the session timeout"


def test_kafka_7026_holds_with_generations():
    r = run_simulation("kip341-stale-rejoin")
    assert r.ok and r.ended == "settled"
    notes = [n for s in r.steps for n in s.notes]
    # the stalled member really returned with its stale state and was refused its old partitions
    assert "c1: heartbeat -> UNKNOWN_MEMBER_ID" in notes
    assert any(n.startswith("coordinator: generation 3 formed") for n in notes)


@pytest.mark.parametrize("how", [{"assignor": "sticky@2.2"}, {"without": ["generation-in-user-data"]}])
def test_kafka_7026_reproduced_without_generations(how):
    r = run_simulation("kip341-stale-rejoin", **how)
    verdict = r.verdict("no-double-consumption")
    assert not verdict.ok
    # the duplicate starts once the stale member's claims were trusted, after it came back
    assert verdict.first.tick > 8 + 6
    assert doubles(r), "the group settles with partitions assigned twice"
    assert all(r.verdict(m).ok for m in ("generations-increase", "no-rebalance-loop"))


def test_kafka_7026_needs_the_stall_past_the_session_timeout():
    scenario = named.get("kip341-stale-rejoin")
    short = events_from_doc([{"at": 8, "event": "stall", "member": "c1", "ticks": 3}])
    assert simulate(scenario, short, assignor="sticky@2.2").ok


# ------------------------------------------------------------------------------------------
# KAFKA-12983 / KAFKA-12984: stale owned partitions in a cooperative group


STALE = Scenario(
    (Topic("t", 6),),
    tuple(
        Member(f"c{i}", ("t",), owned=(("t", 2 * i - 2), ("t", 2 * i - 1)), generation=1, assignors=("cooperative-sticky",))
        for i in (1, 2, 3)
    ),
    "cooperative",
    "stale",
)
STALE_EVENTS = events_from_doc(
    [{"at": 1, "event": "stall", "member": "c2", "ticks": 14, "at_join_prepare": True},
     {"at": 2, "event": "join", "member": "c4", "topics": ["t"]}]
)


def _stale(**kw):
    from stickyproof.model import TopicPartition

    members = tuple(Member(m.id, m.topics, tuple(TopicPartition(*tp) for tp in m.owned), m.generation,
                           assignors=m.assignors) for m in STALE.members)
    return simulate(Scenario(STALE.topics, members, "cooperative", "stale"), STALE_EVENTS, **kw)


def test_stale_owned_partitions_never_reach_the_leader_with_todays_client():
    assert _stale().ok


def test_stale_owned_partitions_are_consumed_twice_with_the_pre_3_0_client():
    r = _stale(without=["join-prepare-after-reset"])
    verdict = r.verdict("no-double-consumption")
    assert not verdict.ok and verdict.first.message in ("t-2 consumed by c2 and c4", "t-3 consumed by c2 and c4")
    assert not doubles(r), "the generations still let the leader take the stale claims away"


def test_stale_owned_partitions_stay_doubled_without_any_generation():
    r = _stale(without=["join-prepare-after-reset", "generation-in-user-data", "generation-in-subscription"])
    assert doubles(r) == {"t-2": ["c2", "c4"], "t-3": ["c2", "c4"]}


# ------------------------------------------------------------------------------------------
# KIP-429's upgrade path: two rolling bounces of a 10-member group


def upgrade(old: str):
    members = tuple(Member(f"c{i}", ("t", "u"), assignors=(old,)) for i in range(10))
    scenario = Scenario((Topic("t", 12), Topic("u", 7)), members, "cooperative", f"upgrade-from-{old}")
    events = events_from_doc(
        [
            {"at": 10, "event": "rolling-restart", "gap": 15, "assignors": [old, "cooperative-sticky"]},
            {"at": 200, "event": "rolling-restart", "gap": 15, "assignors": ["cooperative-sticky"]},
        ]
    )
    return simulate(scenario, events)


@pytest.mark.parametrize("old", ["range", "sticky"])
def test_two_bounce_upgrade_of_ten_members_never_consumes_twice_and_converges(old):
    r = upgrade(old)
    assert r.ok, [v.first.message for v in r.verdicts if not v.ok]
    assert r.ended == "settled"
    end = r.steps[-1]
    assert {m.protocol for m in end.members} == {"cooperative"} and end.group.protocol == "cooperative-sticky"
    owned = sorted(tp for m in end.members for tp in m.owned)
    assert len(owned) == 19 == len(set(owned))
    # between the bounces the group still runs the old assignor, eager
    middle = next(s for s in r.steps if s.tick >= 190)
    assert middle.group.protocol == old and {m.protocol for m in middle.members} == {"eager"}


def test_mixed_group_during_the_second_bounce_selects_cooperative_sticky():
    r = upgrade("range")
    mixed = [s for s in r.steps if {m.protocol for m in s.members if m.state != "STOPPED"} == {"eager", "cooperative"}]
    assert mixed and all(s.group.protocol in ("range", "cooperative-sticky") for s in mixed)
    assert any(s.group.protocol == "cooperative-sticky" for s in mixed)


def test_one_bounce_straight_to_cooperative_is_refused_by_the_broker():
    members = tuple(Member(f"c{i}", ("t",), assignors=("range",)) for i in range(3))
    scenario = Scenario((Topic("t", 6),), members, "cooperative", "one-bounce")
    r = simulate(scenario, events_from_doc([{"at": 10, "event": "rolling-restart", "gap": 15, "assignors": ["cooperative-sticky"]}]))
    notes = [n for s in r.steps for n in s.notes]
    assert any("INCONSISTENT_GROUP_PROTOCOL" in n for n in notes)
