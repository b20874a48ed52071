"""The group protocol state machines, one rule per test (models/protocol.md §2-§4, §6-§7)."""

from __future__ import annotations

import json

import pytest

from stickyproof.errors import InvalidScenario
from stickyproof.group import GroupConfig, Simulation, events_from_doc, simulate, simulation_from_dict
from stickyproof.group.assignment import group_scenario, leader_assignor
from stickyproof.group.messages import JoinMetadata
from stickyproof.model import Member, Scenario, Topic, TopicPartition

T = lambda p: TopicPartition("t", p)  # noqa: E731


def group(members, topics=None, protocol="eager", assignor="range"):
    topics = topics or {"t": 6}
    out = []
    for m in members:
        if isinstance(m, str):
            m = {"id": m}
        out.append(
            Member(
                id=m["id"],
                topics=tuple(m.get("topics", ("t",))),
                owned=tuple(TopicPartition(t, p) for t, ps in m.get("owned", {}).items() for p in ps),
                generation=m.get("generation", -1),
                version=m.get("version", 3),
                instance_id=m.get("instance_id"),
                assignors=tuple(m.get("assignors", (assignor,))),
            )
        )
    return Scenario(tuple(Topic(n, c) for n, c in topics.items()), tuple(out), protocol, "test")


def run(scenario, events=(), **kw):
    return simulate(scenario, events_from_doc(list(events)), **kw)


def notes(result):
    return [n for s in result.steps for n in s.notes]


def final(result):
    return {m.name: m for m in result.steps[-1].members}


def stable3(assignor="range", protocol="eager", **extra):
    return group(
        [
            {"id": "c1", "owned": {"t": [0, 1]}, "generation": 1, **extra},
            {"id": "c2", "owned": {"t": [2, 3]}, "generation": 1, **extra},
            {"id": "c3", "owned": {"t": [4, 5]}, "generation": 1, **extra},
        ],
        protocol=protocol,
        assignor=assignor,
    )


# ------------------------------------------------------------------------------------------
# Start and the coordinator's join


def test_consistent_scenario_starts_as_a_stable_group():
    r = run(stable3())
    first = r.steps[0]
    assert first.group.state == "Stable" and first.group.generation == 1 and first.group.leader == "c1"
    assert r.ended == "settled" and r.ok
    assert {m.name: m.owned for m in first.members} == {"c1": (T(0), T(1)), "c2": (T(2), T(3)), "c3": (T(4), T(5))}


def test_stale_claims_start_cold_and_the_first_members_join_together():
    s = group([{"id": "a", "owned": {"t": [0]}, "generation": 1}, {"id": "b", "owned": {"t": [0]}, "generation": 2}, "c"])
    r = run(s)
    assert any("cold start" in e for e in r.steps[0].events)
    # the initial rebalance delay gathers every member into the first generation
    formed = [n for n in notes(r) if "formed" in n]
    assert formed[0].startswith("coordinator: generation 1 formed: a, b, c")
    assert r.ok and sorted(tp for m in final(r).values() for tp in m.owned) == [T(p) for p in range(6)]


def test_stable_start_with_unowned_partitions_makes_the_leader_rebalance():
    s = group([{"id": "c1", "owned": {"t": [0]}, "generation": 3}, {"id": "c2", "owned": {"t": [1]}, "generation": 3}])
    r = run(s)
    assert any("unowned" in e for e in r.steps[0].events)
    assert r.ok and r.steps[-1].group.generation == 4


def test_new_member_join_starts_a_rebalance_and_gets_a_share():
    r = run(stable3(), [{"at": 2, "event": "join", "member": "c4", "topics": ["t"]}])
    assert r.ok
    owned = {n: len(m.owned) for n, m in final(r).items()}
    assert sorted(owned.values()) == [1, 1, 2, 2]
    assert r.steps[-1].group.generation == 2


def test_member_that_does_not_rejoin_is_removed_at_the_rebalance_timeout():
    # c3's poll thread is stuck in its join prepare (no JoinGroup) but it was stalled too, so its
    # session also expires; with a long session the rebalance timeout removes it.
    cfg = GroupConfig(session_timeout=30, rebalance_timeout=5)
    r = run(stable3(), [{"at": 1, "event": "stall", "member": "c3", "ticks": 20, "at_join_prepare": True},
                        {"at": 2, "event": "join", "member": "c4", "topics": ["t"]}], config=cfg)
    assert any("removes c3 (did not rejoin within the rebalance timeout)" in n for n in notes(r))
    assert r.ok


def test_session_timeout_removes_a_crashed_member():
    r = run(stable3(), [{"at": 2, "event": "crash", "member": "c2"}])
    removal = next(s for s in r.steps if any("removes c2 (session timeout)" in n for n in s.notes))
    # its last heartbeat was at tick 1 (the crash comes before its turn at tick 2)
    assert removal.tick == 1 + GroupConfig().session_timeout
    assert r.ok and {m.name for m in final(r).values() if m.owned} == {"c1", "c3"}


def test_leave_group_rebalances_at_once():
    r = run(stable3(), [{"at": 2, "event": "leave", "member": "c2"}])
    removal = next(s for s in r.steps if any("removes c2 (LeaveGroup)" in n for n in s.notes))
    assert removal.tick == 2 and r.ok


def test_inconsistent_group_protocol_is_fatal_for_the_joiner():
    r = run(stable3(), [{"at": 2, "event": "join", "member": "x", "topics": ["t"], "assignors": ["roundrobin"]}])
    assert any("INCONSISTENT_GROUP_PROTOCOL" in n for n in notes(r))
    assert final(r)["x"].state == "STOPPED" and r.ok


def test_protocol_vote_follows_the_members_first_choices():
    s = group([{"id": "a", "assignors": ["roundrobin", "range"]}, {"id": "b", "assignors": ["range", "roundrobin"]},
               {"id": "c", "assignors": ["range"]}])
    r = run(s)
    assert r.steps[-1].group.protocol == "range"


# ------------------------------------------------------------------------------------------
# Member reactions (R37, R38)


def test_eager_members_revoke_everything_before_joining():
    r = run(stable3(), [{"at": 2, "event": "join", "member": "c4", "topics": ["t"]}])
    assert any(n.startswith("c1: revokes everything before joining (eager)") for n in notes(r))
    rebalance = [s for s in r.steps if s.group.state == "CompletingRebalance"][0]
    assert all(not m.owned for m in rebalance.members)


def test_cooperative_members_keep_what_they_own_and_consume_during_the_rebalance():
    r = run(stable3("cooperative-sticky", "cooperative"), [{"at": 2, "event": "join", "member": "c4", "topics": ["t"]}])
    rebalance = [s for s in r.steps if s.group.state == "CompletingRebalance"][0]
    assert {m.name: len(m.consuming) for m in rebalance.members if m.name != "c4"} == {"c1": 2, "c2": 2, "c3": 2}
    assert r.ok


def test_cooperative_follow_up_hands_out_the_revoked_partition_kip429():
    from stickyproof.scenarios import named

    r = simulate(named.get("kip429-new-member"))
    assert r.ok
    # a-0 stays with c1 throughout; b-0 is revoked in generation 2 and given to c2 in generation 3
    assert all(TopicPartition("a", 0) in {tp for m in s.members if m.name == "c1" for tp in m.consuming} for s in r.steps)
    assert any("c1: revokes b-0 and will rejoin (R38)" == n for n in notes(r))
    end = final(r)
    assert end["c2"].owned == (TopicPartition("b", 0),) and r.steps[-1].group.generation == 3


def test_cooperative_member_revokes_unsubscribed_topics_before_joining():
    s = group([{"id": "c1", "topics": ["t", "u"], "owned": {"t": [0], "u": [0]}, "generation": 1},
               {"id": "c2", "topics": ["t", "u"], "owned": {"t": [1], "u": [1]}, "generation": 1}],
              topics={"t": 2, "u": 2}, protocol="cooperative", assignor="cooperative-sticky")
    r = run(s, [{"at": 2, "event": "subscribe", "member": "c1", "topics": ["t"]}])
    assert any(n == "c1: revokes u-0 (topics no longer subscribed)" for n in notes(r))
    assert r.ok and all(tp.topic == "t" for tp in final(r)["c1"].owned)


def test_rebalance_in_progress_keeps_the_generation_and_owned_partitions():
    r = run(stable3("cooperative-sticky", "cooperative"), [{"at": 2, "event": "join", "member": "c4", "topics": ["t"]}])
    step = next(s for s in r.steps if any("c2: heartbeat -> REBALANCE_IN_PROGRESS" in n for n in s.notes))
    c2 = next(m for m in step.members if m.name == "c2")
    assert c2.generation == 1 and c2.owned == (T(2), T(3))


def test_unknown_member_id_resets_the_member_and_loses_its_partitions():
    r = run(stable3(), [{"at": 2, "event": "stall", "member": "c2", "ticks": 12}])
    assert "c2: heartbeat -> UNKNOWN_MEMBER_ID" in notes(r)
    assert any(n.startswith("c2: partitions lost (generation reset") for n in notes(r))
    assert final(r)["c2"].member_id == "c2#2" and r.ok


def test_returning_member_consumes_nothing_before_it_hears_from_the_coordinator():
    r = run(stable3(), [{"at": 2, "event": "stall", "member": "c2", "ticks": 12}])
    back = next(s for s in r.steps if s.tick == 14)
    assert next(m for m in back.members if m.name == "c2").consuming == ()


def test_late_sync_answer_rejoins_with_the_join_generation():
    # c2 stalls right after the join response arrives: the leader's sync completes, c2's SyncGroup
    # comes late but the group is Stable, so it gets its stored assignment (no reset).
    r = run(stable3(), [{"at": 2, "event": "join", "member": "c4", "topics": ["t"]},
                        {"at": 4, "event": "stall", "member": "c2", "ticks": 3}])
    assert r.ok and final(r)["c2"].generation == final(r)["c1"].generation


def test_assignment_naming_an_unsubscribed_topic_is_refused():
    s = group([{"id": "c1", "topics": ["t", "u"], "owned": {"t": [0], "u": [0]}, "generation": 1},
               {"id": "c2", "topics": ["t", "u"], "owned": {"t": [1], "u": [1]}, "generation": 1}],
              topics={"t": 2, "u": 2})
    # the subscription changes while the rebalance that assigns with the old one is under way
    r = run(s, [{"at": 2, "event": "join", "member": "c3", "topics": ["t", "u"]},
                {"at": 3, "event": "subscribe", "member": "c3", "topics": ["t"]}])
    assert any("which it does not subscribe to; it rejoins" in n for n in notes(r)) or r.ok
    assert r.ok and all(tp.topic == "t" for tp in final(r)["c3"].owned)


def test_refused_assignment_rearms_join_prepare_so_a_cooperative_member_revokes_dropped_topics():
    # c1 (the leader) drops u while the rebalance c3 started assigns with its old subscription: it
    # refuses the assignment naming u, and its next JoinGroup must not claim u-0 (joinGroupIfNeeded
    # sets needsJoinPrepare after onJoinComplete returns, refused or not; R37).
    s = group([{"id": "c1", "topics": ["t", "u"], "owned": {"t": [0], "u": [0]}, "generation": 1},
               {"id": "c2", "topics": ["t", "u"], "owned": {"t": [1], "u": [1]}, "generation": 1}],
              topics={"t": 2, "u": 2}, protocol="cooperative", assignor="cooperative-sticky")
    sim = Simulation(s, events_from_doc([{"at": 2, "event": "join", "member": "c3", "topics": ["t", "u"]},
                                         {"at": 4, "event": "subscribe", "member": "c1", "topics": ["t"]}]).events,
                     record_rebalances=True)
    r = sim.run()
    assert any("c1: assignment names u, which it does not subscribe to" in n for n in notes(r))
    assert len(r.rebalances) >= 2 and r.ok
    for record in r.rebalances:
        for m in record.scenario.members:
            assert {tp.topic for tp in m.owned} <= set(m.topics), (record.number, m)


# ------------------------------------------------------------------------------------------
# Static members (KIP-345) and fail-over


def test_static_member_restart_within_the_session_takes_over_without_a_rebalance():
    s = stable3(instance_id=None)
    s = group([{"id": "c1", "owned": {"t": [0, 1]}, "generation": 1},
               {"id": "c2", "owned": {"t": [2, 3]}, "generation": 1, "instance_id": "i2"},
               {"id": "c3", "owned": {"t": [4, 5]}, "generation": 1}])
    r = run(s, [{"at": 2, "event": "restart", "member": "c2"}])
    assert any("static member i2: c2#2 replaces c2" in n for n in notes(r))
    assert r.steps[-1].group.generation == 1, "no rebalance"
    assert final(r)["c2"].owned == (T(2), T(3)) and r.ok


def test_static_member_replacement_is_persisted_so_a_failover_keeps_the_new_member_id():
    # GroupCoordinator.updateStaticMemberAndRebalance stores the group after replacing the member id
    # in a Stable group; without that the new coordinator would fence the restarted process.
    s = group([{"id": "c1", "owned": {"t": [0, 1, 2]}, "generation": 1},
               {"id": "c2", "owned": {"t": [3, 4, 5]}, "generation": 1, "instance_id": "i2"}])
    r = run(s, [{"at": 2, "event": "restart", "member": "c2"}, {"at": 8, "event": "failover"}])
    assert final(r)["c2"].state == "STABLE" and final(r)["c2"].member_id == "c2#2"
    assert not any("FENCED_INSTANCE_ID" in n for n in notes(r)) and r.ok


def test_dynamic_member_restart_leaves_and_rejoins():
    r = run(stable3(), [{"at": 2, "event": "restart", "member": "c2"}])
    assert r.steps[-1].group.generation == 3 and final(r)["c2"].member_id == "c2#2" and r.ok


def test_persisted_failover_keeps_the_group():
    r = run(stable3(), [{"at": 2, "event": "failover"}])
    assert any("loads generation 1" in n for n in notes(r))
    assert r.steps[-1].group.generation == 1 and r.ok


def test_non_persisted_failover_makes_everyone_rejoin_and_lose_partitions():
    r = run(stable3(), [{"at": 2, "event": "failover", "persisted": False}])
    assert sum("partitions lost" in n for n in notes(r)) == 3
    last = r.steps[-1].group
    assert last.epoch == 2 and last.generation == 1 and r.ok


def test_failover_during_a_rebalance_answers_not_coordinator_and_members_rejoin():
    r = run(stable3(), [{"at": 2, "event": "join", "member": "c4", "topics": ["t"]}, {"at": 3, "event": "failover"}])
    assert any("JoinGroup failed: NOT_COORDINATOR" in n for n in notes(r))
    assert r.ok and len(final(r)) == 4


# ------------------------------------------------------------------------------------------
# Leader failures, listener errors, metadata


def test_leader_assignment_failure_loops_and_the_loop_monitor_stops_the_run():
    s = group([{"id": "c1"}, {"id": "c2"}], assignor="tests.test_group_assignors:always_fails")
    r = run(s)
    assert r.ended == "rebalance loop" and not r.verdict("no-rebalance-loop").ok
    assert any("assignment failed, raised to the caller" in n for n in notes(r))


def test_failed_revocation_callback_reaches_the_caller_and_the_partitions_are_dropped():
    r = run(stable3(), [{"at": 1, "event": "listener-error", "member": "c1", "callback": "revoked"},
                        {"at": 2, "event": "join", "member": "c4", "topics": ["t"]}])
    assert any(n.startswith("c1: onPartitionsRevoked(t-0, t-1) threw") for n in notes(r))
    assert r.ok


def test_failed_assignment_callback_leaves_its_partitions_unowned():
    r = run(stable3(), [{"at": 1, "event": "join", "member": "c4", "topics": ["t"]},
                        {"at": 1, "event": "listener-error", "member": "c4", "callback": "assigned"}])
    assert any(n.startswith("c4: onPartitionsAssigned(") for n in notes(r))
    verdict = r.verdict("stable-ownership")
    assert not verdict.ok and verdict.first.message.startswith("the group is settled but nobody owns")


def test_listener_error_for_a_member_added_later_needs_it_running():
    with pytest.raises(InvalidScenario, match=r"events\[0\]: listener-error: no running member named 'zz'"):
        run(stable3(), [{"at": 1, "event": "listener-error", "member": "zz", "callback": "assigned"}])


def test_added_partitions_make_the_leader_rebalance():
    r = run(stable3(), [{"at": 2, "event": "add-partitions", "topic": "t", "count": 3}])
    assert any("(leader) topic metadata changed; rejoin" in n for n in notes(r))
    assert sorted(tp for m in final(r).values() for tp in m.owned) == [T(p) for p in range(9)] and r.ok


def test_deleted_topic_partitions_are_given_up():
    s = group([{"id": "c1", "topics": ["t", "u"], "owned": {"t": [0], "u": [0]}, "generation": 1},
               {"id": "c2", "topics": ["t", "u"], "owned": {"t": [1], "u": [1]}, "generation": 1}],
              topics={"t": 2, "u": 2}, protocol="cooperative", assignor="cooperative-sticky")
    r = run(s, [{"at": 2, "event": "delete-topic", "topic": "u"}])
    assert r.ok and all(tp.topic == "t" for m in final(r).values() for tp in m.owned)


# ------------------------------------------------------------------------------------------
# What the leader hands the assignor (§4)


def meta(name, protocol, owned=(), generation=3, memory=(), memory_generation=3, version=3, assignors=("cooperative-sticky",)):
    from stickyproof.lookup import get_assignor

    return JoinMetadata(name, ("t",), assignors, tuple(get_assignor(a).kafka_name for a in assignors), protocol, version,
                        None, None, tuple(owned), generation, tuple(memory), memory_generation)


def test_leader_scenario_sends_eager_members_owned_nothing_and_cooperative_members_their_partitions():
    from stickyproof.lookup import get_assignor

    members = [("a", meta("a", "cooperative", owned=(T(0),))), ("b", meta("b", "eager", memory=(T(1),)))]
    s = group_scenario(members, get_assignor("cooperative-sticky"), (Topic("t", 2),))
    assert s.protocol == "cooperative"
    assert [m.owned for m in s.members] == [(T(0),), ()]


def test_leader_scenario_under_sticky_uses_the_user_data_memory():
    from stickyproof.lookup import get_assignor

    members = [("a", meta("a", "eager", memory=(T(0), T(1)), memory_generation=4, assignors=("sticky",)))]
    s = group_scenario(members, get_assignor("sticky"), (Topic("t", 2),))
    assert s.protocol == "eager" and s.members[0].owned == (T(0), T(1)) and s.members[0].generation == 4


def test_leader_scenario_without_generation_in_subscription_caps_versions():
    from stickyproof.lookup import get_assignor

    members = [("a", meta("a", "cooperative", version=3)), ("b", meta("b", "cooperative", version=0))]
    s = group_scenario(members, get_assignor("cooperative-sticky"), (Topic("t", 2),), max_version=1)
    assert [m.version for m in s.members] == [1, 0]


def test_leader_runs_its_own_variant_of_the_voted_protocol():
    assert leader_assignor(meta("a", "eager", assignors=("sticky@2.2",)), "sticky").name == "sticky@2.2"


# ------------------------------------------------------------------------------------------
# Events, documents, determinism


@pytest.mark.parametrize(
    "doc, path",
    [
        ([{"at": 0, "event": "explode"}], "events[0].event"),
        ([{"at": -1, "event": "crash", "member": "a"}], "events[0].at"),
        ([{"at": 0, "event": "stall", "member": "a"}], "events[0].ticks"),
        ([{"at": 0, "event": "stall", "member": "a", "ticks": 0}], "events[0].ticks"),
        ([{"at": 0, "event": "crash", "member": "a", "ticks": 3}], "events[0].ticks"),
        ([{"at": 0, "event": "join", "member": "a", "topics": "t"}], "events[0].topics"),
        ([{"at": 0, "event": "join", "member": "a", "topics": ["t"], "version": 4}], "events[0].version"),
        ([{"at": 0, "event": "listener-error", "member": "a", "callback": "done"}], "events[0].callback"),
        ({"format": "stickyproof.events/1", "config": {"session_timeout": 0}, "events": []}, "config.session_timeout"),
        ({"format": "stickyproof.events/1", "config": {"tick": 3}, "events": []}, "config.tick"),
        ({"format": "nope", "events": []}, "format"),
    ],
)
def test_bad_events_name_the_field(doc, path):
    with pytest.raises(InvalidScenario) as info:
        events_from_doc(doc)
    assert info.value.path == path


def test_events_run_in_tick_then_file_order():
    schedule = events_from_doc([{"at": 5, "event": "crash", "member": "b"}, {"at": 1, "event": "crash", "member": "a"},
                                {"at": 5, "event": "crash", "member": "c"}])
    assert [e.member for e in schedule.events] == ["a", "b", "c"]


def test_unknown_feature_is_refused():
    with pytest.raises(InvalidScenario, match="unknown feature"):
        Simulation(stable3(), without=["generations"])


def test_member_without_assignors_is_refused_naming_it():
    s = Scenario((Topic("t", 2),), (Member("a", ("t",)),), "eager", "")
    with pytest.raises(InvalidScenario) as info:
        simulate(s)
    assert info.value.path == "members[0].assignors"


def test_simulation_document_round_trips():
    r = run(stable3(), [{"at": 2, "event": "stall", "member": "c2", "ticks": 3}], without=["cooperative-validation"])
    doc = json.loads(json.dumps(r.to_dict()["simulation"]))
    again = simulation_from_dict(doc)
    assert again.without == frozenset({"cooperative-validation"})
    assert simulate(again.scenario, again.schedule, without=again.without).to_dict() == r.to_dict()


def test_same_input_same_trace():
    events = [{"at": 2, "event": "join", "member": "c4", "topics": ["t"]}, {"at": 3, "event": "stall", "member": "c1", "ticks": 9},
              {"at": 5, "event": "failover"}]
    a = run(stable3("cooperative-sticky", "cooperative"), events).to_dict()
    b = run(stable3("cooperative-sticky", "cooperative"), events).to_dict()
    assert a == b
