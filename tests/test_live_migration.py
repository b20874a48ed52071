"""Migration histories on a real broker (issue 23): members restarted from group.protocol=classic to
consumer and back, the broker's group.consumer.migration.policy per run, the group's type as the
admin describes it, and the migration simulator beside the broker.

The two broker tests run the smallest history of the upgrade-policy finding
(tests/regressions/consumer-migrations/upgrade-policy-last-consumer-member-leaves-two-members.json),
each on a broker of its own (the policy is a broker setting): under ``upgrade`` the broker leaves
the last consumer member's partitions unowned, as the simulator says; under ``bidirectional`` (the
control) the group turns classic and the classic member takes everything. The rest is pure: the
parsing and the comparison on hand-made reports.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stickyproof.cli import main as cli_main
from stickyproof.errors import InvalidOption, InvalidScenario
from stickyproof.group.consumer.events import ConsumerEvent
from stickyproof.live import processes
from stickyproof.live.broker import broker_settings
from stickyproof.live.described import described, group_types
from stickyproof.live.java_member import Report
from stickyproof.live.migration import MigrationPoint, migration_history, owned_before
from stickyproof.live.reports import LiveEntry
from stickyproof.live.run import LiveSettings, _protocol_of, check_live
from stickyproof.model import TopicPartition

FOLDER = Path(__file__).parent / "regressions" / "consumer-migrations"
SMALLEST = FOLDER / "upgrade-policy-last-consumer-member-leaves-two-members.json"
UP_DOWN = FOLDER / "cooperative-sticky-three-members-upgraded-one-by-one-then-downgraded.json"


def tp(t: str, *ps: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(t, p) for p in ps)


# ------------------------------------------------------------------------------------------
# Reading a migration history


def test_a_migration_history_is_read_by_the_migration_simulators_parser():
    scenario, schedule, policy, assignor, name = migration_history(str(UP_DOWN))
    assert not scenario.is_consumer_group and policy == "bidirectional" and assignor == "uniform"
    assert name == "cooperative-sticky-three-members-upgraded-one-by-one-then-downgraded"
    assert [(e.member, e.group_protocol) for e in schedule.events] == [
        ("A", "consumer"), ("B", "consumer"), ("C", "consumer"), ("A", "classic"), ("B", "classic"), ("C", "classic")]


def test_a_file_that_is_not_a_migration_history_is_left_to_the_classic_runner(tmp_path):
    classic = tmp_path / "classic.json"
    classic.write_text(json.dumps({"format": "stickyproof.simulation/1", "scenario": {
        "format": "stickyproof.scenario/1", "topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"]}]},
        "events": [{"at": 1, "event": "leave", "member": "a"}]}))
    assert migration_history(str(classic)) is None
    assert migration_history("kip341-stale-rejoin") is None  # a bundled name, not a file


def test_a_join_or_restart_speaks_the_protocol_it_names_else_the_runs():
    settings = LiveSettings(migration=True)
    assert _protocol_of(ConsumerEvent(2, "restart", member="A", group_protocol="consumer"), settings) == "consumer"
    assert _protocol_of(ConsumerEvent(2, "restart", member="A"), settings) == "classic"
    assert _protocol_of(ConsumerEvent(2, "join", member="D", topics=("t",)), LiveSettings(group_protocol="consumer")) == "consumer"


def test_the_started_broker_takes_the_runs_migration_policy(tmp_path):
    assert "group.consumer.migration.policy" not in broker_settings(1, 2, tmp_path)  # Kafka's default
    assert broker_settings(1, 2, tmp_path, "upgrade")["group.consumer.migration.policy"] == "upgrade"


def test_a_migration_run_refuses_what_it_cannot_apply_naming_it():
    scenario, schedule, *_ = migration_history(str(SMALLEST))
    with pytest.raises(InvalidOption, match="--clients"):  # a kafka-python member speaks only classic
        check_live(scenario, schedule, LiveSettings(migration=True, clients=("kafka-python",)))
    with pytest.raises(InvalidOption, match="^assignor"):  # the document's broker assignor
        check_live(scenario, schedule, LiveSettings(migration=True, remote_assignor="cooperative-sticky"))
    lost = type(schedule)((*schedule.events, ConsumerEvent(20, "heartbeat-loss", member="B", ticks=2, path="events[2]")),
                          schedule.config)
    with pytest.raises(InvalidScenario, match=r"events\[2\]\.event"):
        check_live(scenario, lost, LiveSettings(migration=True))


@pytest.mark.parametrize("argv, needle", [
    (["live", str(SMALLEST), "--migration-policy", "upgrade", "--bootstrap", "127.0.0.1:1"], "--migration-policy"),
    (["live", str(SMALLEST), "--events", str(SMALLEST)], "--events"),
    (["live", str(SMALLEST), "--clients", "kafka-python"], "--clients"),
    (["live", str(SMALLEST), "--group-protocol", "consumer"], "--group-protocol"),
])
def test_bad_migration_input_is_exit_2_and_one_line_before_any_broker_starts(argv, needle, capsys):
    before = processes.running_children()
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    assert processes.running_children() == before


# ------------------------------------------------------------------------------------------
# The admin's descriptions and the comparison, on hand-made reports


def _described(ms: int, kind: str, state: str = "Stable", epoch: int = -1, target: int = -1, **members) -> Report:
    return Report("described", "admin", ms * 1_000_000, 0, (
        ("group_epoch", epoch), ("members", {n: {"member_epoch": e, "upgraded": u, "assignment": [["p-t", p] for p in ps]}
                                             for n, (e, u, ps) in members.items()}),
        ("state", state), ("target_epoch", target), ("type", kind)))


def test_the_admins_descriptions_become_the_groups_type_over_time():
    reports = [_described(5, "NONE"), _described(10, "CLASSIC", A=(-1, "unknown", [0]), B=(-1, "unknown", [1])),
               _described(20, "CONSUMER", "Reconciling", 4, 4, A=(4, "true", []), B=(4, "false", [1])),
               _described(30, "NONE"), _described(40, "CONSUMER", "Assigning", 5, 4, B=(4, "false", [1]))]
    seen = described(reports, 0, "p-")
    assert [g.group_type for g in seen] == ["none", "classic", "consumer", "none", "consumer"]
    assert seen[2].members[1].assignment == tp("t", 1) and seen[2].members[1].upgraded == "false"
    assert group_types(seen) == ((10, "classic"), (20, "consumer"))  # a lookup that found nothing is no switch
    assert seen[4].line() == "consumer assigning; group epoch 5, target epoch 4; members: B e4 (classic)"


def test_who_owned_what_is_replayed_off_the_members_callbacks():
    timeline = (LiveEntry(1, "A", "started"), LiveEntry(2, "A", "assigned", tp("t", 0, 1)),
                LiveEntry(3, "B", "assigned", tp("t", 2)), LiveEntry(4, "A", "revoked", tp("t", 1)),
                LiveEntry(5, "history", "leave"), LiveEntry(6, "A", "closed"), LiveEntry(7, "B", "assigned", tp("t", 0)))
    assert owned_before(timeline, 5) == (("A", tp("t", 0)), ("B", tp("t", 2)))
    assert owned_before(timeline, 8) == (("B", tp("t", 0, 2)),)  # a closed member owns nothing


def _point(sim_type="consumer", live_type="consumer", sim=(("A", tp("t", 0, 1)), ("B", tp("t", 2, 3))),
           live=(("A", tp("t", 0, 1)), ("B", tp("t", 2, 3))), epochs_agree=True) -> MigrationPoint:
    return MigrationPoint("before tick 2", sim_type, live_type, sim, live, 5, 3, epochs_agree)


def test_a_point_agrees_on_the_same_owners_or_the_same_shape_and_not_otherwise():
    assert _point().verdict == "same"
    # the same counts over the same partitions, dealt another way: join timing or member-id order
    assert _point(live=(("A", tp("t", 0, 2)), ("B", tp("t", 1, 3)))).verdict == "shape"
    # who has one more is uniform's tie-break by member id: as many members own as many partitions
    three = (("A", tp("t", 0, 1)), ("B", tp("t", 2)), ("C", tp("t", 3, 4)))
    assert _point(sim=three, live=(("A", tp("t", 0)), ("B", tp("t", 1, 2)), ("C", tp("t", 3, 4)))).verdict == "shape"
    assert _point(live=(("A", tp("t", 0, 1, 2)), ("B", tp("t", 3)))).verdict == "DIFF"  # another balance
    assert _point(live=(("A", tp("t", 0, 1)),)).verdict == "DIFF"  # partitions unowned on one side only
    # owners apart while the broker described the group mid-rebalance: the event came before it settled
    assert MigrationPoint("x", "consumer", "consumer", (("A", tp("t", 0, 1)),), (("A", tp("t", 0)),), 5, 3, True,
                          "Reconciling").verdict == "unsettled"
    assert MigrationPoint("x", "consumer", "consumer", (("A", tp("t", 0, 1)),), (("A", tp("t", 0)),), 5, 3, True,
                          "Stable").verdict == "DIFF"
    # a process the history started that had no assignment yet: the real group was not there yet
    assert MigrationPoint("x", "consumer", "consumer", (("A", tp("t", 0, 1)), ("B", tp("t", 2))), (("A", tp("t", 0, 1, 2)),),
                          5, 3, True, "Stable", ("B",)).verdict == "unsettled"
    assert _point(live_type="classic").verdict == "DIFF"
    assert MigrationPoint("x", "consumer", "classic", (), (), 5, 3, True, "Stable", ("A",)).verdict == "unsettled"
    assert _point(epochs_agree=False).verdict == "same"  # epochs are shown, not judged


def test_moved_counts_the_partitions_owned_at_both_points_under_another_owner():
    from stickyproof.live.migration import moved

    before = (("A", tp("t", 0, 1)), ("B", tp("t", 2, 3)))
    assert moved(before, before) == 0
    assert moved(before, (("A", tp("t", 0)), ("B", tp("t", 1, 2, 3)))) == 1
    assert moved(before, (("B", tp("t", 2, 3)),)) == 0  # A's partitions unowned now: not moved, gone


def test_a_started_process_is_pending_until_its_first_assignment():
    from stickyproof.live.migration import pending_members

    timeline = (LiveEntry(10, "history", "restart"), LiveEntry(20, "A", "closed"), LiveEntry(900, "A", "started"),
                LiveEntry(1500, "A", "assigned"), LiveEntry(2000, "history", "join"))
    assert pending_members(timeline, [("A", 10)], 1200) == ("A",)
    assert pending_members(timeline, [("A", 10)], 1600) == ()
    assert pending_members(timeline, [("A", 10), ("D", 2000)], 2500) == ("D",)


# ------------------------------------------------------------------------------------------
# On the broker: the upgrade-policy finding and its control


def _run_smallest(policy: str):
    from stickyproof.live.broker import running_broker
    from stickyproof.live.migration import compare_migration
    from stickyproof.live.run import run_live

    scenario, schedule, _, remote, name = migration_history(str(SMALLEST))
    settings = LiveSettings(migration=True, remote_assignor=remote, migration_policy=policy)
    before = processes.running_children()
    with running_broker(migration_policy=policy) as broker:
        result = run_live(scenario, schedule, broker=broker, name=name, settings=settings)
    assert processes.running_children() == before, "a JVM outlived the run"
    return result, compare_migration(scenario, schedule, result, settings)


def test_under_the_upgrade_policy_the_broker_leaves_the_last_consumer_members_partitions_unowned():
    """The simulator's finding, on Kafka's broker: A's leave bumps the group epoch past the target
    epoch, the group stays a consumer group (ASSIGNING), B is never told to rejoin."""
    result, compared = _run_smallest("upgrade")
    ownership = next(v for v in result.verdicts if v.monitor == "stable-ownership")
    assert not ownership.ok and "nobody owns" in ownership.first.message
    assert group_types(result.described)[-1][1] == "consumer"
    last = result.described[-1]
    assert last.group_epoch == last.target_epoch + 1 and [m.name for m in last.members] == ["B"]
    assert dict(result.settled)["B"] and len(dict(result.settled)["B"]) == 2  # B kept its own half only
    assert compared.sim_types == compared.live_types == ("classic", "consumer")
    assert not compared.sim_settled and not compared.live_settled
    assert compared.points[-1].agrees, compared.points[-1]


def test_under_the_bidirectional_policy_the_leave_turns_the_group_classic_and_b_takes_everything():
    result, compared = _run_smallest("bidirectional")
    assert result.ok, [(v.monitor, v.first) for v in result.verdicts if not v.ok]
    assert dict(result.settled) == {"B": tp("t", 0, 1, 2, 3)}
    assert compared.live_types == compared.sim_types == ("classic", "consumer", "classic")
    assert compared.sim_settled and compared.live_settled and compared.points[-1].verdict == "same"
