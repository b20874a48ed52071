"""``stickyproof hunt``: it finds every fault of the faulty assignors, shrinks each small, names the
right invariant, passes a correct assignor, repeats itself for a seed, and its shrinker and CLI
behave (issue 5, item 4).

The faulty assignors (tests/faulty_assignors.py) each break one rule on some groups only and are
the oracle's proven optimum everywhere else. Hunts are bounded by ``EXAMPLES`` (the ci profile's
example budget, capped) so the file stays fast.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest
from hypothesis import settings

from stickyproof.cli import main
from stickyproof.grading import Limits
from stickyproof.hunt import FAILURE_KINDS, HuntProgress, hunt, regression_document
from stickyproof.scenarios.shrink import shrink, shrink_search
from stickyproof.model import Member, Scenario, Topic, TopicPartition, scenario_from_dict
from stickyproof.scenarios.space import InvalidSpace, Space, space_admits

from .test_regressions import replay, runs_of

EXAMPLES = min(60, settings.default.max_examples)
FAULTY = "tests.faulty_assignors:"


def _small(result) -> dict[str, int]:
    size = result.finding.to_dict()["size"]
    assert size["members"] <= 4 and size["partitions"] <= 8, size
    return size


# ------------------------------------------------------------------------------------------
# The acceptance test: every fault found, shrunk small, named right


@pytest.mark.parametrize(
    "fault,invariant,options",
    [
        ("drops_a_partition_with_three_members", "unassigned", {}),
        ("double_assigns_a_multiple_claim", "duplicate", {}),
        ("assigns_an_unsubscribed_topic", "unsubscribed", {}),
        ("unbalanced_with_five_partitions", "imbalance", {}),
        ("nondeterministic_swap", "nondeterministic", {}),
        ("ignores_ownership", "stickiness", {"min_stickiness": 0.9}),
        ("raises_on_two_topics", "error", {}),
    ],
)
def test_hunt_finds_the_fault_shrinks_it_and_names_the_invariant(fault, invariant, options):
    result = hunt(FAULTY + fault, examples=EXAMPLES, seed=0, **options)
    assert result.found, f"{fault}: no failure in {result.tried} examples"
    assert result.finding.failure == invariant, (result.finding.failures, dict(result.finding.witness))
    assert result.finding.witness, "the oracle's witness is reported"
    _small(result)


def test_the_faults_really_are_conditional():
    # Each faulty assignor is right on most groups: on a plain two-member, one-topic group with
    # two partitions and no claims, every one of them gives what the correct one gives.
    from stickyproof.leader import lead

    plain = Scenario((Topic("t", 2),), (Member("a", ("t",)), Member("b", ("t",))))
    expected = lead(plain, FAULTY + "optimal").assignment.assignment
    for fault in ("drops_a_partition_with_three_members", "double_assigns_a_multiple_claim",
                  "unbalanced_with_five_partitions", "ignores_ownership", "raises_on_two_topics"):
        assert lead(plain, FAULTY + fault).assignment.assignment == expected, fault


def test_a_correct_assignor_passes_and_reports_the_worst_stickiness():
    result = hunt(FAULTY + "optimal", examples=EXAMPLES, seed=0)
    assert not result.found, result.finding and result.finding.to_dict()
    assert result.tried == EXAMPLES
    assert result.worst_stickiness is not None


def test_time_limit_is_a_failure_of_its_own():
    result = hunt(FAULTY + "slow_with_four_members", examples=EXAMPLES, seed=0, limits=Limits(assignor_seconds=0.5))
    assert result.found and result.finding.failure == "time-limit"
    assert result.finding.to_dict()["size"]["members"] == 4  # fewer members would be fast


def test_hunt_names_sticky_K1_hazard_on_claims_past_the_partition_count():
    # A Kafka-exact built-in on the §10 K1 knob: the hunt finds it and names what breaks.
    space = ["past_count_claims=1", "zero_partition_topics=0", "subscriptions=uniform", "members=2..4"]
    result = hunt("sticky", examples=EXAMPLES, seed=0, space=space)
    assert result.found
    assert result.finding.failure in ("error", "duplicate", "nonexistent")
    counts = {t.name: t.partitions for t in result.finding.scenario.topics}
    assert any(tp.partition >= counts.get(tp.topic, 0) for m in result.finding.scenario.members for tp in m.owned)


# ------------------------------------------------------------------------------------------
# Reproducibility, progress, the saved regression file


def test_same_seed_same_hunt():
    first = hunt(FAULTY + "raises_on_two_topics", examples=EXAMPLES, seed=7)
    second = hunt(FAULTY + "raises_on_two_topics", examples=EXAMPLES, seed=7)
    assert first.found and second.found
    assert first.tried == second.tried
    assert first.finding.original == second.finding.original
    assert first.finding.scenario == second.finding.scenario


def test_progress_reports_search_then_shrink():
    seen: list[HuntProgress] = []
    result = hunt(FAULTY + "assigns_an_unsubscribed_topic", examples=EXAMPLES, seed=0, progress=seen.append)
    assert result.found
    phases = [p.phase for p in seen]
    assert phases[0] == "search" and "shrink" in phases
    assert phases.index("shrink") > max(i for i, p in enumerate(phases) if p == "search")
    searched = [p.done for p in seen if p.phase == "search"]
    assert searched == list(range(1, result.tried + 1))


@pytest.mark.parametrize("fault,options", [("unbalanced_with_five_partitions", {}), ("raises_on_two_topics", {})])
def test_saved_regression_file_replays(fault, options):
    result = hunt(FAULTY + fault, examples=EXAMPLES, seed=0, **options)
    doc = regression_document(result)
    expect = doc.pop("expect")
    assert doc["name"] == f"tests-faulty-assignors-{fault.replace('_', '-')}-{result.finding.failure}-hunt-seed0"
    assert expect["assignor"] == FAULTY + fault and "--seed 0" in expect["mechanism"]
    scenario = scenario_from_dict(doc)
    from stickyproof import leader

    for direct, outcome in runs_of(expect):
        problems = replay(leader, scenario, expect["assignor"], direct, outcome)
        assert not problems, problems


# ------------------------------------------------------------------------------------------
# The shrinker on its own (no grading): deterministic, minimal, in the space


def _group(n_members: int, partitions: int, claims_of_first: int) -> Scenario:
    members = [Member(f"m{i}", ("t", "u"), generation=3, version=i % 4, rack="r1") for i in range(n_members)]
    members[0] = replace(members[0], owned=tuple(TopicPartition("t", p) for p in range(claims_of_first)))
    return Scenario((Topic("t", partitions), Topic("u", 3)), tuple(members), protocol="cooperative")


def _needs_three_members_and_two_claims(s: Scenario) -> bool:
    return len(s.members) >= 3 and any(len(m.owned) >= 2 for m in s.members)


def test_shrink_reaches_a_one_minimal_group():
    small = shrink(_group(8, 8, 6), _needs_three_members_and_two_claims)
    assert len(small.members) == 3
    assert sorted(len(m.owned) for m in small.members) == [0, 0, 2]
    assert [t.name for t in small.topics] == ["t"] and small.topics[0].partitions == 2
    assert [m.id for m in small.members] == ["a", "b", "c"]
    assert all(m.version == 3 and m.rack is None and m.generation == -1 for m in small.members)
    assert small.protocol == "eager"


def test_shrink_is_deterministic_and_never_rechecks_a_group():
    calls: list[Scenario] = []

    def still_fails(s: Scenario) -> bool:
        calls.append(s)
        return _needs_three_members_and_two_claims(s)

    a = shrink_search(_group(7, 6, 4), still_fails)
    first_calls = list(calls)
    calls.clear()
    b = shrink_search(_group(7, 6, 4), still_fails)
    assert a == b and calls == first_calls
    assert len(set(calls)) == len(calls)
    assert a.stopped_by == "done" and a.evaluations == len(calls)


def test_shrink_stops_at_its_budget():
    result = shrink_search(_group(8, 8, 6), _needs_three_members_and_two_claims, max_evaluations=3)
    assert result.stopped_by == "evaluations" and result.evaluations == 3


def test_shrink_keeps_claims_past_the_partition_count():
    # A K1-style failure needs a claim at or past the count: cutting partitions must not remove it.
    s = Scenario((Topic("t", 6),), (Member("a", ("t",), owned=(TopicPartition("t", 9),), generation=1), Member("b", ("t",))))

    def past_count(c: Scenario) -> bool:
        n = {t.name: t.partitions for t in c.topics}
        return any(tp.partition >= n.get(tp.topic, 0) for m in c.members for tp in m.owned)

    small = shrink(s, past_count)
    assert small.topics[0].partitions == 1 and small.members[0].owned == (TopicPartition("t", 1),)


def test_space_admits_keeps_a_shrunk_group_inside_the_space():
    space = Space.from_overrides(["subscriptions=uniform,nested", "past_count_claims=0", "ownership=none,balanced", "versions=3,2"])
    base = _group(3, 4, 2)
    base = replace(base, protocol="eager", members=tuple(replace(m, version=3, rack=None) for m in base.members))
    assert space_admits(space, base)
    emptied = replace(base, members=(replace(base.members[0], topics=()),) + base.members[1:])
    assert not space_admits(space, emptied), "an empty subscription is R13's hazard, not in this space"
    past = replace(base, members=(replace(base.members[0], owned=(TopicPartition("t", 4),)),) + base.members[1:])
    assert not space_admits(space, past), "a claim past the count is K1's hazard, not in this space"
    v0 = replace(base, members=(replace(base.members[0], version=0),) + base.members[1:])
    assert not space_admits(space, v0)
    invisible = replace(base, protocol="cooperative", members=(replace(base.members[0], version=0),) + base.members[1:])
    assert not space_admits(Space(), invisible), "v0 claims under COOPERATIVE are left out of every hunt"


# ------------------------------------------------------------------------------------------
# Input errors and the CLI


def test_bad_arguments_raise_the_error_family():
    with pytest.raises(InvalidSpace, match="protocols"):
        hunt("range", space=["protocols=cooperative"])
    with pytest.raises(InvalidSpace, match="min_stickiness"):
        hunt("range", min_stickiness=1.5)
    with pytest.raises(InvalidSpace, match="examples"):
        hunt("range", examples=0)


def test_failure_kinds_cover_every_invariant():
    from stickyproof.oracle.invariants import INVARIANTS

    assert set(INVARIANTS) <= set(FAILURE_KINDS)


def test_cli_hunt_finds_saves_and_exits_1(tmp_path, capsys):
    code = main(["hunt", "--assignor", FAULTY + "raises_on_two_topics", "--examples", str(EXAMPLES), "--save", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("FAILED error:") and "minimal scenario:" in out and "witness:" in out
    saved = list(tmp_path.glob("*.json"))
    assert len(saved) == 1 and saved[0].stem == json.loads(saved[0].read_text())["name"]
    # The user callable runs in a worker process (issue 14), which reports the exception it raised by type.
    assert json.loads(saved[0].read_text())["expect"]["error"] == "KeyError"


# ------------------------------------------------------------------------------------------
# Triage: --keep-going, --skip, --reference (issue 12, item 4)


def test_keep_going_keeps_one_minimal_group_per_failure_signature():
    result = hunt(FAULTY + "two_faults", examples=EXAMPLES, seed=0, keep_going=True)
    signatures = [f.signature for f in result.findings]
    assert len(signatures) == len(set(signatures)), signatures
    kinds = {f.failure for f in result.findings}
    assert {"error", "unassigned"} <= kinds, signatures
    error = next(f for f in result.findings if f.failure == "error")
    assert error.signature.startswith("error:AssignorFailure:"), error.signature
    assert result.tried == EXAMPLES, "keep-going searches every example"
    for f in result.findings:
        size = f.to_dict()["size"]
        assert size["members"] <= 4 and size["partitions"] <= 8, (f.signature, size)


def test_first_failure_only_without_keep_going():
    result = hunt(FAULTY + "two_faults", examples=EXAMPLES, seed=0)
    assert len(result.findings) == 1 and result.finding is result.findings[0]


def test_skip_leaves_a_class_already_understood():
    result = hunt(FAULTY + "two_faults", examples=EXAMPLES, seed=0, keep_going=True, skip=("error",))
    assert result.findings and all(f.failure != "error" for f in result.findings)
    assert "--skip error" in result.command()


def test_skip_names_an_error_type_or_a_kind():
    with pytest.raises(InvalidSpace, match="skip"):
        hunt(FAULTY + "optimal", examples=1, skip=("no-such-kind",))
    with pytest.raises(InvalidSpace, match="skip"):
        hunt(FAULTY + "optimal", examples=1, skip=("unstable:KeyError",))


def test_reference_counts_only_failures_the_reference_does_not_share():
    # Against itself nothing is left: every failure is shared.
    same = hunt(FAULTY + "two_faults", examples=EXAMPLES, seed=0, keep_going=True, reference=FAULTY + "two_faults")
    assert not same.found
    # Against a reference that raises on the same groups, only the dropped partition remains.
    result = hunt(FAULTY + "two_faults", examples=EXAMPLES, seed=0, keep_going=True, reference=FAULTY + "raises_on_two_topics")
    assert [f.failure for f in result.findings] == ["unassigned"]
    finding = result.findings[0]
    assert finding.verdict.reference is not None and "unassigned" not in finding.verdict.reference.failures
    assert result.reference == FAULTY + "raises_on_two_topics" and "--reference" in result.command()


def test_reference_reports_the_kept_partition_shortfall():
    result = hunt(FAULTY + "ignores_ownership", examples=EXAMPLES, seed=0, reference=FAULTY + "optimal")
    assert result.worst_kept_delta is not None and result.worst_kept_delta < 0
    assert result.worst_kept_delta_scenario is not None


def test_cli_hunt_keep_going_saves_every_signature(tmp_path, capsys):
    code = main(["hunt", "--assignor", FAULTY + "two_faults", "--examples", str(EXAMPLES), "--keep-going",
                 "--save", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "failure signature(s)" in out
    names = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert len(names) >= 2 and len(names) == len(set(names)), names


def test_cli_hunt_prints_the_finding_when_save_fails(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = main(["hunt", "--assignor", FAULTY + "raises_on_two_topics", "--examples", str(EXAMPLES), "--save", str(blocker)])
    captured = capsys.readouterr()
    assert code == 1 and "minimal scenario:" in captured.out
    assert "cannot write the regression file" in captured.err


def test_cli_hunt_passes_a_correct_assignor_with_exit_0(capsys):
    code = main(["hunt", "--assignor", FAULTY + "optimal", "--examples", "10", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["found"] is False and doc["tried"] == 10


@pytest.mark.parametrize(
    "argv",
    [
        ["hunt", "--assignor", "range", "--space", "protocols=cooperative"],
        ["hunt", "--assignor", "range", "--space", "nonsense=1"],
        ["hunt", "--assignor", "no.such.module:fn"],
        ["hunt", "--assignor", "range", "--min-stickiness", "2"],
    ],
)
def test_cli_hunt_bad_input_is_one_line_and_exit_2(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # a flag argparse checks itself (--min-stickiness 2) exits there
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1



def test_a_v0_member_in_a_cooperative_group_is_left_out_even_before_it_owns_anything():
    # issue 12, item 6: a v0 member handed partitions in round 1 owns them invisibly in the follow-up.
    from stickyproof.scenarios.space import claims_invisible

    group = Scenario((Topic("t", 2),), (Member("a", ("t",), version=0), Member("b", ("t",))), protocol="cooperative")
    assert claims_invisible(group)
    assert not claims_invisible(replace(group, protocol="eager"))
    assert not claims_invisible(replace(group, members=tuple(replace(m, version=1) for m in group.members)))


def test_the_repeat_command_is_shell_quoted_and_carries_every_limit_in_force():
    """An ``exec:`` assignor's command is one argument when pasted, and a limit that differs from the
    hunt's default is on the line (the repeat once dropped --z3-query-seconds)."""
    import shlex
    from dataclasses import replace

    from stickyproof.hunt import DEFAULT_LIMITS

    result = hunt("roundrobin", examples=3, seed=0, limits=replace(DEFAULT_LIMITS, z3_query_seconds=5.0))
    exec_name = f"exec:{sys.executable} -c 'print(1)'"
    argv = shlex.split(replace(result, assignor=exec_name).command())
    assert argv[argv.index("--assignor") + 1] == exec_name
    assert argv[argv.index("--z3-query-seconds") + 1] == "5"
