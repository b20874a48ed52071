"""Member epochs step by step, the broker's against the simulator's (``live.epochs``), on hand-made
sequences: no broker. The broker's states are the admin's looks every 100 ms, so they are a
subsequence of the simulator's member's states when the two agree; a look that missed a state is not
a disagreement, a state the simulator's member never had is, unless timing explains it."""

from __future__ import annotations

from types import SimpleNamespace

from stickyproof.group.consumer.trace import GroupState, MemberState
from stickyproof.live.epochs import (
    EpochsComparison,
    MemberStep,
    explain_step,
    match_steps,
    member_states_seen,
    render_epochs,
    sim_member_steps,
)
from stickyproof.live.java_member import Report
from stickyproof.model import TopicPartition


def tps(*ps: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition("t", p) for p in ps)


# c1 alone at epoch 1 with everything; c2 joins: c1 revokes 2,3 (still epoch 1), then moves to epoch 2
C1 = [(1, tps(0, 1, 2, 3)), (1, tps(0, 1)), (2, tps(0, 1))]


def verdicts(c) -> list[str]:
    return [v for v, *_ in c.steps]


def test_every_state_seen_in_order_agrees():
    c = match_steps("c1", 1, C1, C1)
    assert verdicts(c) == ["agree"] * 3 and c.verdict == "agree"


def test_a_state_between_two_looks_is_missed_not_a_disagreement():
    c = match_steps("c1", 1, C1, [C1[0], C1[2]])
    assert verdicts(c) == ["agree", "missed", "agree"] and c.verdict == "agree"
    assert c.steps[1][1] == C1[1]


def test_a_state_the_simulator_never_had_disagrees():
    c = match_steps("c1", 1, C1, [C1[0], (2, tps(0, 2)), C1[2]])
    assert verdicts(c) == ["agree", "disagree", "disagree", "agree"] and c.verdict == "disagree"


def test_states_in_another_order_disagree():
    c = match_steps("c1", 1, C1, [C1[0], C1[2], C1[1]])
    assert c.verdict == "disagree"


def test_different_last_states_disagree_unless_timing_chose_the_targets():
    live = [C1[0], (2, tps(2, 3))]
    assert match_steps("c1", 1, C1, live, lambda i, s: None).verdict == "disagree"
    timed = match_steps("c1", 1, C1, live, lambda i, s: "targets chosen by timing", "targets chosen by timing")
    assert timed.verdict == "timing" and timed.count("disagree") == 0


def test_a_member_the_admin_never_saw_disagrees():
    assert match_steps("c1", 1, C1, []).verdict == "disagree"


def _sim_step(member: str, epoch, assigned, target=(), target_epoch=2) -> MemberStep:
    return MemberStep(member, 1, epoch, assigned, 0, target_epoch, target)


def test_an_epoch_the_simulators_member_reconciled_past_is_timing():
    sim = [_sim_step("c1", 1, tps(0, 1, 2, 3)), _sim_step("c1", 3, tps(0))]
    assert explain_step((2, tps(0, 1)), sim, [1, 2, 3]) is not None
    # an epoch the simulator's coordinator never computed is no timing: the epochs are numbered apart
    assert explain_step((2, tps(0, 1)), sim, [1, 3]) is None
    # nor one past every epoch the simulator's member had
    assert explain_step((4, tps(0)), sim, [1, 2, 3, 4]) is None


def test_part_of_what_the_simulators_member_held_at_that_epoch_is_timing():
    sim = [_sim_step("c1", 2, tps(0), target=tps(0, 1, 2)), _sim_step("c1", 2, tps(0, 1, 2), target=tps(0, 1, 2))]
    assert explain_step((2, tps(0, 2)), sim, [1, 2]) is not None  # partition 1's revoker had not released it yet
    assert explain_step((2, tps(0, 3)), sim, [1, 2]) is None  # partition 3 was never this member's at epoch 2
    assert explain_step((None, ()), sim, [1, 2]) is None  # a member the simulator kept, gone from the broker


def _report(ev: str, ms: int, **fields) -> Report:
    return Report(ev, "admin", ms * 1_000_000, 0, tuple(sorted(fields.items())))


def test_the_admins_reports_become_member_states_numbered_by_incarnation():
    reports = [
        _report("member-state", 10, member="c1", member_id="A", member_epoch=1, assigned=[["p-t", 0]], target=[["p-t", 0]],
                group_epoch=1, target_epoch=1),
        _report("member-gone", 20, member_id="A", group_epoch=2),
        _report("member-state", 30, member="c1", member_id="B", member_epoch=3, assigned=[], target=[], group_epoch=3,
                target_epoch=3),
    ]
    seen = member_states_seen(reports, lambda t: t.removeprefix("p-"), 0)
    assert [(s.member, s.incarnation, s.state, s.at) for s in seen] == [
        ("c1", 1, (1, tps(0)), 10), ("c1", 1, (None, ()), 20), ("c1", 2, (3, ()), 30)]


def _member(name, member_id, epoch, assigned, status="MEMBER"):
    return MemberState(name, member_id, status, epoch or 0, assigned, None if epoch is None else "STABLE", epoch, assigned,
                       (), assigned)


def test_the_simulators_member_states_one_per_change_and_its_old_id_leaving():
    """The simulator names its members by the real first member ids (``names`` maps them back); a
    restarted process's old id leaving the coordinator's member ids is the old incarnation's last state."""
    steps = [
        SimpleNamespace(tick=0, group=GroupState(1, 1, ("X",)), members=(_member("X", "X", 1, tps(0)),)),
        SimpleNamespace(tick=1, group=GroupState(1, 1, ("X",)), members=(_member("X", "X", 1, tps(0)),)),
        SimpleNamespace(tick=2, group=GroupState(2, 2, ("X", "X~2")), members=(_member("X", "X~2", 2, ()),)),
        SimpleNamespace(tick=3, group=GroupState(3, 3, ("X~2",)), members=(_member("X", "X~2", 3, tps(0)),)),
    ]
    out = sim_member_steps(SimpleNamespace(steps=steps), {"X": "c1"})
    assert [(s.member, s.incarnation, s.state, s.at) for s in out] == [
        ("c1", 1, (1, tps(0)), 0), ("c1", 2, (2, ()), 2), ("c1", 1, (None, ()), 3), ("c1", 2, (3, tps(0)), 3)]


def test_the_history_disagrees_when_one_member_does_and_renders_every_verdict():
    ok = match_steps("c1", 1, C1, [C1[0], C1[2]])
    bad = match_steps("c2", 1, [(2, tps(2, 3))], [(2, tps(1))])
    both = EpochsComparison((ok, bad))
    assert EpochsComparison((ok,)).agrees and not both.agrees and both.verdict == "disagree"
    text = render_epochs(both)
    assert "[missed]" in text and "[disagree]" in text and "EPOCHS DISAGREE" in text
    assert both.to_dict()["counts"] == {"agree": 2, "missed": 1, "timing": 0, "disagree": 2}


def test_a_member_that_joined_before_its_target_was_computed_is_timing():
    """Kafka 4.4 computes a target at most once per group.consumer.assignment.interval.ms: a member
    joining within it takes the current target's epoch with nothing; the simulator's, a heartbeat
    later, gets the new target at once. Only an empty assignment at an epoch below its first is that."""
    sim = [_sim_step("c1", 3, ()), _sim_step("c1", 3, tps(1))]
    assert explain_step((2, ()), sim, [1, 2, 3]) is not None
    assert explain_step((2, tps(1)), sim, [1, 2, 3]) is None


def test_a_static_members_record_replaced_by_its_next_process_passed_epoch_minus_2():
    """A static member's restart: its leave keeps its record at epoch -2 with its assignment until the
    new process takes its place (the only way a record is replaced); the simulator's trace shows each
    process its own record, so that state is put back from the replacement."""
    steps = [
        SimpleNamespace(tick=0, group=GroupState(2, 2, ("X",)), members=(_member("X", "X", 2, tps(0)),)),
        SimpleNamespace(tick=1, group=GroupState(2, 2, ("X~2",)), members=(_member("X", "X~2", 2, tps(0)),)),
    ]
    out = sim_member_steps(SimpleNamespace(steps=steps), {"X": "c1"})
    assert [(s.incarnation, s.state) for s in out] == [(1, (2, tps(0))), (1, (-2, tps(0))), (1, (None, ())), (2, (2, tps(0)))]


def _lagging_run(first_target_empty: bool):
    """A one-member group: the simulator's c1 at epoch 2 with t-0,1; the broker's first target
    (epoch 2) either empty (a KIP-1263 broker's batched first target) or not, then epoch 3."""
    from stickyproof.live.compare import StepComparison

    sim = SimpleNamespace(steps=[SimpleNamespace(tick=0, group=GroupState(2, 2, ("c1",)),
                                                 members=(_member("c1", "c1", 2, tps(0, 1)),))])
    scenario = SimpleNamespace(members=(SimpleNamespace(topics=("t",)),), topics=(SimpleNamespace(name="t", partitions=2),))
    grades = (SimpleNamespace(epoch=2, at_ms=100, assignment=(("c1", () if first_target_empty else tps(0, 1)),),
                              scenario=scenario),
              SimpleNamespace(epoch=3, at_ms=1100, assignment=(("c1", tps(0, 1)),), scenario=scenario))
    live = SimpleNamespace(member_states=(MemberStep("c1", 1, 2, (), 100, 2), MemberStep("c1", 1, 3, tps(0, 1), 1100, 3)),
                           grades=grades)
    steps = [StepComparison(0, "end", "agree", "", (), (), (("c1", tps(0, 1)),), (("c1", tps(0, 1)),))]
    return sim, live, steps


def test_an_extra_bump_after_an_empty_first_target_is_timing_else_it_disagrees():
    """A broker on Kafka 4.3+'s defaults batches a forming group's joins and computes its first target
    off the coordinator thread (KIP-1263): every member is given nothing at first, and the group epoch
    runs one ahead of the simulator's, which computes each target at once. Seen in the admin's target
    reports, or (when the watch missed that target) in the members' states with the scenario beside.
    Without such a target, a member epoch past the simulator's group epoch is a disagreement."""
    from stickyproof.live.compare_consumer import compare_epochs

    lagged = compare_epochs(*_lagging_run(True)[:2], {}, [(None, None)], _lagging_run(True)[2])
    assert lagged.agrees and lagged.count("timing") >= 1 and any("KIP-1263" in n for n in lagged.notes)
    plain = compare_epochs(*_lagging_run(False)[:2], {}, [(None, None)], _lagging_run(False)[2])
    assert not plain.agrees
    # the target report missed: the members' states at the first target epoch say it, given the scenario
    sim, live, steps = _lagging_run(True)
    unseen = SimpleNamespace(member_states=live.member_states, grades=live.grades[1:])
    assert not compare_epochs(sim, unseen, {}, [(None, None)], steps).agrees
    scenario = live.grades[0].scenario
    seen = compare_epochs(sim, unseen, {}, [(None, None)], steps, scenario)
    assert seen.agrees and any("KIP-1263" in n for n in seen.notes)


def test_a_member_that_heartbeat_before_a_newer_target_holds_what_the_simulators_was_revoking():
    """history-0-51 on the broker: c3 reached epoch 7 with its whole epoch-7 target before three members
    joined; the simulator's c3 heartbeat only after the newer target and stood at epoch 7 already
    revoking t-2. Its partition pending revocation was still held at that epoch, so the broker's state is
    timing; a partition the simulator's member never held at that epoch is not."""
    sim = [MemberStep("c3", 1, 6, tps(0, 1, 2), 0, 6, tps(0, 1, 2)),
           MemberStep("c3", 1, 7, tps(0, 1), 1, 11, tps(0, 1), revoking=tps(2))]
    assert explain_step((7, tps(0, 1, 2)), sim, [6, 7, 8, 9, 10, 11]) is not None
    assert explain_step((7, tps(0, 1, 3)), sim, [6, 7, 8, 9, 10, 11]) is None
    without = [sim[0], MemberStep("c3", 1, 7, tps(0, 1), 1, 11, tps(0, 1))]
    assert explain_step((7, tps(0, 1, 2)), without, [6, 7, 8, 9, 10, 11]) is None
