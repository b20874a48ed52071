"""Drawn group histories and the stepper (models/protocol.md §9).

The stepper must visit the tick simulator's states: both engines give the same rebalance records,
verdicts and ending on drawn histories. History rows must hold no input a real client cannot
produce, and the historical variants must still reproduce their incidents somewhere in a modest
number of drawn lives.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict

import pytest

from stickyproof.group import simulation_from_dict
from stickyproof.group.rebalances import record_to_dict
from stickyproof.group.runner import run_simulation
from stickyproof.group.stepper import HistoryRun, run_history
from stickyproof.model import Scenario, Topic, TopicPartition
from stickyproof.scenarios.histories import History, draw_history, scale_of

CURRENT = ("range", "roundrobin", "sticky", "cooperative-sticky")


def _same_run(a: HistoryRun, b: HistoryRun) -> None:
    assert len(a.rebalances) == len(b.rebalances), (a.name, a.assignor)
    for x, y in zip(a.rebalances, b.rebalances):
        assert x == y, (a.name, a.assignor, x.number)
    assert a.monitors == b.monitors and (a.ticks, a.ended) == (b.ticks, b.ended), (a.name, a.assignor)
    assert (a.follow_ups, a.unowned) == (b.follow_ups, b.unowned)
    assert (a.unowned_ticks, a.unsettled) == (b.unowned_ticks, b.unsettled), (a.name, a.assignor)


# ------------------------------------------------------------------------------------------
# Drawing


def test_a_draw_is_a_function_of_seed_and_index():
    a, b = draw_history(11, 4), draw_history(11, 4)
    assert a == b and a.events == b.events and a.document("range") == b.document("range")
    assert draw_history(11, 5).events != a.events and draw_history(12, 4).events != a.events


def test_scales_have_their_sizes():
    assert [scale_of(i) for i in (0, 9, 99, 100)] == ["small", "medium", "large", "small"]
    small = [draw_history(1, i, scale="small") for i in range(30)]
    assert all(1 <= h.members <= 6 for h in small) and max(h.members for h in small) > 2
    large = draw_history(1, 0, scale="large")
    assert large.members >= 500 and large.partitions >= 50_000
    production = draw_history(1, 0, scale="production")
    assert production.members == 2000 and production.partitions == 1_000_000


def test_the_plan_keeps_to_what_clients_can_do():
    """Versions only go up; a v0 client is eager; nobody runs unpinned (possibly cooperative) while a v0 member runs."""
    for i in range(200):
        h = draw_history(3, i, scale="small")
        alive: dict[str, tuple[int, str | None]] = {}
        for e in h.events:
            kind = e["event"]
            if kind in ("leave", "crash"):
                del alive[e["member"]]
            names = (e["member"],) if kind in ("join", "restart") else e.get("members", ()) if kind == "rolling-restart" else ()
            for name in names:
                version, pin = alive.get(name, (0, "eager"))
                if "version" in e:
                    assert e["version"] >= version or kind == "join", (h.name, e)
                    version = e["version"]
                if "protocol" in e or kind == "join":
                    pin = e.get("protocol")
                alive[name] = (version, pin)
            assert all(v > 0 or pin == "eager" for v, pin in alive.values()), (h.name, e)
            if any(pin is None for _, pin in alive.values()):
                assert all(v > 0 for v, _ in alive.values()), (h.name, e)


def _pins_after(h, events) -> dict[str, str | None]:
    """Each running member's pin once ``events`` (a prefix of ``h.events``) have happened."""
    pins: dict[str, str | None] = {}
    for e in events:
        if e["event"] in ("leave", "crash"):
            pins.pop(e["member"], None)
        elif e["event"] == "join":
            pins[e["member"]] = e.get("protocol")
        elif e["event"] == "rolling-restart" and "protocol" in e:
            pins.update({m: e["protocol"] for m in e["members"]})
    return pins


@pytest.mark.parametrize("scale", ["medium", "large"])
def test_a_large_group_drawn_eager_takes_kip429s_two_bounces_not_an_eager_pin_for_life(scale):
    """At scales whose episodes touch a few members, a group drawn eager is upgraded the way Kafka
    documents: every member bounced listing both assignors (still eager), then bounced again without
    the eager one; each bounce a quarter of the group at a time."""
    drawn = [draw_history(0, i, scale=scale) for i in range(12 if scale == "medium" else 4)]
    eager = [h for h in drawn if any(e.get("protocol") == "eager" for e in h.events)]
    assert eager, "no history drawn eager: the test sees nothing"
    for h in eager:
        assert h.episodes[:2] == ("cooperative-upgrade", "cooperative-upgrade"), h.name
        bounces = [e for e in h.events if e["event"] == "rolling-restart"]
        first = [e for e in bounces if e.get("protocol") == "compatible"]
        second = [e for e in bounces if "protocol" in e and e["protocol"] is None]
        running = _pins_after(h, [e for e in h.events if e["at"] < first[0]["at"]])
        assert set(running.values()) == {"eager"}
        assert sorted(m for e in first for m in e["members"]) == sorted(running)  # every member, once
        assert sorted(m for e in second for m in e["members"]) == sorted(running)
        assert first[-1]["at"] < second[0]["at"]
        assert len(first) == -(-len(running) // 4) if len(running) > 10 else len(first) == 1
        # after the second bounce nobody is pinned: the group runs the protocol its assignors give (R36)
        assert set(_pins_after(h, [e for e in h.events if e["at"] <= second[0]["at"]]).values()) == {None}


def test_a_history_document_replays_with_stickyproof_simulate(tmp_path):
    h = draw_history(5, 3, scale="small")
    run = run_history(h, "cooperative-sticky", engine="simulator")
    path = tmp_path / "history.json"
    path.write_text(json.dumps(run.document))
    replay = run_simulation(str(path))
    assert (replay.ticks, replay.ended) == (run.ticks, run.ended) and replay.verdicts == run.monitors
    doc = simulation_from_dict(json.loads(path.read_text()))
    assert doc.assignor == "cooperative-sticky" and doc.scenario.name == h.name


# ------------------------------------------------------------------------------------------
# Records


def _tiny_history(events, topics=None) -> History:
    scenario = Scenario(tuple(Topic(n, c) for n, c in (topics or {"t": 6}).items()), (), "cooperative", "tiny")
    return History(0, 0, "small", scenario, tuple(events), {}, ())


def test_records_carry_provenance_follow_ups_and_what_members_held():
    h = _tiny_history([{"at": 0, "event": "join", "member": m, "topics": ["t"]} for m in ("c1", "c2")]
                      + [{"at": 10, "event": "join", "member": "c3", "topics": ["t"]}])
    run = run_history(h, "cooperative-sticky")
    first, moved, follow = run.rebalances
    assert first.event == "c2 joins (t)" and not first.follow_up and first.committed
    assert moved.event == "c3 joins (t)" and moved.trigger == "c3 joined" and moved.cooperative
    assert follow.follow_up and follow.event == moved.event and run.follow_ups == 1
    # the second round withholds what moves; its prior is what members held, its scenario what they claimed
    assert {m.id: set(m.owned) for m in moved.scenario.members} == {k: set(v) for k, v in moved.prior.items()}
    withheld = {tp for tps in moved.revoking.values() for tp in tps}
    assert withheld and run.unowned == len(withheld)
    assert moved.provenance == {"seed": 0, "index": 0, "rebalance": 2, "event": "c3 joins (t)", "event_tick": 10,
                                "trigger": "c3 joined", "follow_up": False}
    assert json.dumps(record_to_dict(follow))  # JSON-ready


def test_unowned_counts_the_subscribed_partitions_cooperative_leaders_gave_nobody():
    from stickyproof.group.monitors import partitions_of

    seen = 0
    for i in range(20):
        run = run_history(draw_history(9, i, scale="small"), "cooperative-sticky@2.6")
        expected = 0
        for r in run.rebalances:
            if r.cooperative and r.assignment is not None:
                subscribed = {t for m in r.scenario.members for t in m.topics}
                counts = {t.name: t.partitions for t in r.scenario.topics if t.name in subscribed}
                expected += len(partitions_of(counts, counts) - set().union(*r.assignment.values()))
        assert run.unowned == expected
        seen += expected
    assert seen > 0
    # partitions past a count, of a topic nobody subscribes to, or given twice count as nothing
    from dataclasses import replace

    from stickyproof.group.stepper import _unassigned
    from stickyproof.model import Member

    t, u = (lambda p: TopicPartition("t", p)), (lambda p: TopicPartition("u", p))
    record = replace(run.rebalances[0], scenario=Scenario((Topic("t", 4), Topic("u", 2)), (Member("a", ("t",)), Member("b", ("t",))),
                                                          "cooperative"),
                     assignment={"a": (t(0), t(5), u(0)), "b": (t(0), t(2))})
    assert _unassigned(record) == 2  # t-1 and t-3


def test_eager_prior_is_the_last_assignment_unless_the_member_was_reset():
    h = _tiny_history([{"at": 0, "event": "join", "member": m, "topics": ["t"], "protocol": "eager"} for m in ("c1", "c2", "c3")]
                      + [{"at": 10, "event": "stall", "member": "c1", "ticks": 12}])
    run = run_history(h, "range")
    back = run.rebalances[-1]
    assert back.event == "c1 resumes after its pause" and not back.cooperative
    assert all(not m.owned for m in back.scenario.members), "range gets no claims under EAGER (R37)"
    assert back.prior["c1#2"] == () and sum(len(v) for v in back.prior.values()) == 6


# ------------------------------------------------------------------------------------------
# Both engines, the same states


@pytest.mark.parametrize("assignor", ["range", "sticky", "cooperative-sticky", "cooperative-sticky@2.4"])
def test_stepper_and_tick_simulator_give_the_same_rebalances(assignor):
    seen = defaultdict(int)
    for i in range(50):
        h = draw_history(21, i, scale="small")
        stepper, simulator = run_history(h, assignor), run_history(h, assignor, engine="simulator")
        _same_run(stepper, simulator)
        seen["rows"] += len(stepper.rebalances)
        seen["cooperative"] += sum(r.cooperative for r in stepper.rebalances)
        seen["skipped"] += stepper.ticks_run < simulator.ticks_run
        seen["failed monitors"] += not stepper.ok
    assert seen["rows"] > 300 and seen["skipped"] > 40
    if assignor.startswith("cooperative"):
        assert seen["cooperative"] > 100
    if assignor == "cooperative-sticky@2.4":
        assert seen["failed monitors"] > 0, "the comparison covers runs whose monitors fail"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("STICKYPROOF_SLOW") != "1", reason="about 40 s: runs with STICKYPROOF_SLOW=1")
@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky", "cooperative-sticky@2.6", "cooperative-sticky@3.5.1"])
def test_stepper_and_tick_simulator_agree_on_medium_groups(assignor):
    for i in range(15):
        h = draw_history(22, i, scale="medium")
        _same_run(run_history(h, assignor), run_history(h, assignor, engine="simulator"))


# ------------------------------------------------------------------------------------------
# What rows must not hold


def _assigned_twice(record) -> set[TopicPartition]:
    seen: set[TopicPartition] = set()
    twice: set[TopicPartition] = set()
    for tps in (record.assignment or {}).values():
        twice |= seen & set(tps)
        seen |= set(tps)
    return twice


def unreachable_inputs(run: HistoryRun) -> list[tuple]:
    """The input classes real clients cannot produce (issue 11), found in a run's rows."""
    out = []
    doubled: dict[tuple[int, int], set] = defaultdict(set)  # (epoch, generation) -> partitions its leader gave two members
    joined: dict[str, set[str]] = defaultdict(set)  # member id -> every topic it joined with so far
    for r in run.rebalances:
        if r.scenario is None:
            continue
        cooperative = r.scenario.protocol == "cooperative"
        claims = defaultdict(list)
        for m in r.scenario.members:
            if cooperative and m.version == 0:
                out.append(("v0 member in a cooperative group", r.number, m.id))
            if m.version >= 2 and m.generation < 0 and m.owned:
                out.append(("v2+ member at generation -1 still claiming", r.number, m.id))
            dropped = {tp.topic for tp in m.owned} - set(m.topics)
            # one race makes this reachable (models/protocol.md §9): the subscription changed after the
            # member's onJoinPrepare and its SyncGroup then failed (REBALANCE_IN_PROGRESS), so it rejoins
            # without a new join prepare; the claim is then on a topic it joined with before
            if cooperative and dropped and not dropped <= joined[m.id]:
                out.append(("cooperative member claims a topic it never joined with", r.number, m.id, sorted(dropped)))
            for tp in set(m.owned):
                claims[(tp, m.generation)].append(m.id)
        for (tp, generation), ids in claims.items():
            if len(ids) > 1 and generation >= 0 and tp not in doubled[(r.epoch, generation)]:
                out.append(("two members claim one partition at one generation", r.number, str(tp), generation, ids))
        doubled[(r.epoch, r.generation)] |= _assigned_twice(r)
        for m in r.scenario.members:
            joined[m.id].update(m.topics)
    return out


def test_history_rows_hold_no_input_real_clients_cannot_produce():
    rows = 0
    for i in range(200):
        h = draw_history(31, i, scale="small" if i % 10 else "medium")
        for assignor in CURRENT:
            run = run_history(h, assignor)
            assert unreachable_inputs(run) == [], (h.name, assignor)
            rows += len(run.rebalances)
    assert rows > 5000


def test_the_audit_sees_the_classes_it_looks_for():
    """Fed rows holding each class, the audit reports each (so the test above can fail)."""
    from dataclasses import replace

    from stickyproof.model import Member

    run = run_history(_tiny_history([{"at": 0, "event": "join", "member": m, "topics": ["t"]} for m in ("c1", "c2")]),
                      "cooperative-sticky")
    r = run.rebalances[0]
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    members = (Member("a", ("t",), (t0,), 3, 0), Member("b", ("t",), (t1,), -1, 2), Member("c", ("u",), (t1,), 3, 3),
               Member("d", ("t",), (t0,), 3, 3))
    bad = replace(run, rebalances=(replace(r, scenario=replace(r.scenario, members=members)),))
    assert {c[0] for c in unreachable_inputs(bad)} == {
        "v0 member in a cooperative group", "v2+ member at generation -1 still claiming",
        "cooperative member claims a topic it never joined with", "two members claim one partition at one generation"}


# ------------------------------------------------------------------------------------------
# Historical variants reproduce their incidents


def test_historical_variants_reproduce_their_incidents_in_drawn_histories():
    found = defaultdict(int)
    for i in range(40):
        h = draw_history(41, i, scale="small")
        for assignor in ("sticky", "sticky@2.2", "cooperative-sticky", "cooperative-sticky@2.4"):
            run = run_history(h, assignor)
            found[(assignor, "double consumption")] += not run.verdict("no-double-consumption").ok
            found[(assignor, "assigned twice")] += any(_assigned_twice(r) for r in run.rebalances)
    # KAFKA-7026: a stalled member comes back with its old assignment in V0 user data, which 2.2
    # trusts: the partitions go to it and to their new owner alike
    assert found[("sticky@2.2", "double consumption")] >= 5 and found[("sticky@2.2", "assigned twice")] >= 5
    # KAFKA-12984 with 2.4 clients (no onJoinPrepare after a reset in a join round, KAFKA-12983): a
    # member removed during a slow rebalance callback rejoins still claiming its partitions, 2.4 (no
    # generation at all) may hand them back to it while their new owner still fetches them
    assert found[("cooperative-sticky@2.4", "double consumption")] >= 1
    # today's assignors with today's clients do neither on the same lives
    for assignor in ("sticky", "cooperative-sticky"):
        assert found[(assignor, "double consumption")] == 0 and found[(assignor, "assigned twice")] == 0


# ------------------------------------------------------------------------------------------
# An assignor without eager support (R36)


def test_a_cooperative_only_assignor_lives_the_history_without_eager_pins_or_v0_clients():
    # found by a history sweep of kafka-python:cooperative-sticky (cooperative only): the drawn
    # KIP-429 upgrade pinned its members eager at v0, a configuration its clients refuse, and every
    # rebalance failed into a rebalance loop. Such clients start cooperative at v1.
    history = draw_history(0, 1, scale="small")
    assert any(e.get("protocol") in ("eager", "compatible") or e.get("version") == 0 for e in history.events)
    adapted = history.for_protocols(("cooperative",))
    assert not any(e.get("protocol") in ("eager", "compatible") or e.get("version") == 0 for e in adapted.events)
    assert [(e["at"], e["event"]) for e in adapted.events] == [(e["at"], e["event"]) for e in history.events]
    assert history.for_protocols(("cooperative", "eager")) is history


def test_kafka_pythons_cooperative_sticky_runs_drawn_histories_without_a_rebalance_loop():
    from stickyproof.peers import kafka_python

    if kafka_python.kafka_python_version() is None:
        pytest.skip("kafka-python is not installed (pip install 'stickyproof[peers]')")
    for i in range(4):
        run = run_history(draw_history(0, i, scale="small"), "kafka-python:cooperative-sticky")
        assert "loop" not in (run.ended or ""), (i, run.ended)
        assert run.rebalances and all(r.error is None for r in run.rebalances), i


def test_added_partitions_get_replica_racks_like_their_topics_on_a_racked_cluster():
    """Issue 20: on a cluster whose brokers have racks, partitions added by ``add-partitions`` (to an
    existing topic or a new one) get replica racks as the first ones did; before, they got none, and a
    partition with no replica rack matches no racked member, so Kafka's rack-aware path moved it for
    nothing (the one 'Kafka bug on reachable states' of the default sweep)."""
    seen = 0
    for i in range(40):
        h = draw_history(0, i, scale="small")
        if not any(t.racks for t in h.scenario.topics):
            assert all("racks" not in e for e in h.events)
            continue
        # the first partition of each topic that must have racks: all of a racked one, the added ones of another
        first = {t.name: 0 if t.racks else t.partitions for t in h.scenario.topics}
        for e in h.events:
            if e["event"] == "add-partitions":
                seen += 1
                first.setdefault(e["topic"], 0)
                assert len(e["racks"]) == e["count"] and all(len(r) == 2 for r in e["racks"]), e
        run = run_history(h, "cooperative-sticky", engine="simulator")
        for record in run.rebalances:
            for t in record.scenario.topics if record.scenario is not None else ():
                if t.partitions > first[t.name]:
                    assert t.racks is not None and all(t.racks[first[t.name]:]), (h.name, record.number, t)
    assert seen >= 3


def test_an_add_partitions_event_without_racks_adds_partitions_with_no_known_rack():
    doc = {"format": "stickyproof.simulation/1", "name": "x",
           "scenario": {"format": "stickyproof.scenario/1", "topics": {"t": {"partitions": 1, "racks": [["r0"]]}},
                        "members": []},
           "events": [{"at": 0, "event": "join", "member": "a", "topics": ["t"], "rack": "r0"},
                      {"at": 30, "event": "add-partitions", "topic": "t", "count": 1},
                      {"at": 60, "event": "add-partitions", "topic": "t", "count": 1, "racks": [["r1"]]}]}
    sim = simulation_from_dict(doc)
    assert [e.racks for e in sim.schedule.events if e.event == "add-partitions"] == [None, (("r1",),)]
    with pytest.raises(Exception, match="racks"):
        simulation_from_dict({**doc, "events": [{"at": 0, "event": "add-partitions", "topic": "t", "count": 2,
                                                 "racks": [["r1"]]}]})
