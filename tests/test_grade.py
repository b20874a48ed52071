"""The grader: one verdict per scenario x assignor, failures recorded, run invariants judged."""

from __future__ import annotations

import itertools

import pytest

from stickyproof.model import Assignment, TopicPartition, scenario_from_dict
from stickyproof.oracle.grade import grade, next_generation

T = lambda p: TopicPartition("t", p)  # noqa: E731


def scenario(protocol="eager", owned=None, generation=1):
    owned = owned or {}
    return scenario_from_dict({
        "format": "stickyproof.scenario/1", "protocol": protocol, "topics": {"t": 4},
        "members": [{"id": m, "topics": ["t"], "owned": {"t": owned.get(m, [])}, "generation": generation}
                    for m in ("a", "b")] if owned else
                   [{"id": m, "topics": ["t"]} for m in ("a", "b")],
    })


def sticky_run(s):
    """A correct sticky assignor for one topic over a, b: keep what you own, fill to 2 each."""
    held = {m.id: [tp for tp in m.owned if tp.partition < 4][:2] for m in s.members}
    free = [T(p) for p in range(4) if all(T(p) not in v for v in held.values())]
    for m in ("a", "b"):
        while len(held[m]) < 2:
            held[m].append(free.pop(0))
    return Assignment({m: tuple(v) for m, v in held.items()})


def test_a_correct_sticky_run_is_valid_balanced_and_fully_sticky():
    s = scenario(owned={"a": [0, 1], "b": [2]})
    g = grade(s, run=sticky_run, assignor="toy")
    assert g.valid and g.violations == () and g.error is None
    assert g.balanced == {"uniform": True, "global": True, "kafka": True, "per-topic": True, "pairwise": True}
    assert (g.kept, g.optimal_kept, g.optimal_kept_global, g.stickiness, g.moved) == (3, 3, 3, 1.0, 0)
    assert g.proven and g.contract == "kafka" and g.contract_balanced is True and g.unnecessary == ()


def test_an_assignor_that_raises_is_recorded_not_raised():
    def boom(s):
        raise RuntimeError("java.lang.IllegalStateException: No more unfilled consumers")

    g = grade(scenario(), run=boom, assignor="boom")
    assert not g.valid and "IllegalStateException" in g.error
    assert g.kept is None and g.stickiness is None


def test_nondeterministic_run_is_caught_with_the_differing_partition():
    calls = itertools.count()

    def flaky(s):
        first = next(calls) % 2 == 0
        a, b = ((0, 1), (2, 3)) if first else ((2, 3), (0, 1))
        return Assignment({"a": tuple(map(T, a)), "b": tuple(map(T, b))})

    g = grade(scenario(), run=flaky)
    assert "nondeterministic" in g.violated()
    witness = next(v.witness for v in g.violations if v.invariant == "nondeterministic")
    assert witness["partition"] == ["t", 0] and witness["first"] != witness["second"]


def test_unstable_run_moves_its_own_output():
    def ignores_ownership_when_owned(s):
        if any(m.owned for m in s.members):  # swaps everything once it has an assignment to keep
            return Assignment({"a": (T(2), T(3)), "b": (T(0), T(1))})
        return Assignment({"a": (T(0), T(1)), "b": (T(2), T(3))})

    g = grade(scenario(), run=ignores_ownership_when_owned)
    assert g.violated() == ("unstable",)


def test_given_assignment_with_a_duplicate_is_invalid_and_kept_counts_distinct():
    s = scenario(owned={"a": [0, 1], "b": [2, 3]})
    dup = Assignment({"a": (T(0), T(1), T(2)), "b": (T(2), T(3))})
    g = grade(s, assignment=dup)
    assert "duplicate" in g.violated()
    assert g.kept == 4  # t-2 stays with b; a's extra listing of it is not a second keep


def test_cooperative_round_is_settled_before_balance_is_judged():
    s = scenario("cooperative", owned={"a": [0, 1, 2, 3]})

    def cooperative(sc):
        owned = {m.id: set(m.owned) for m in sc.members}
        if len(owned["a"]) == 4:  # round 1: a gives up t-2, t-3 and nobody gets them yet
            return Assignment({"a": (T(0), T(1)), "b": ()}, {"a": (T(2), T(3))})
        return Assignment({"a": (T(0), T(1)), "b": (T(2), T(3))})

    g = grade(s, run=cooperative)
    assert g.valid, g.violations
    assert g.follow_ups == 1 and g.balanced["global"] is True
    assert g.moved == 2 and g.kept == 2


def test_cooperative_round_that_never_converges_is_unstable():
    s = scenario("cooperative", owned={"a": [0, 1, 2, 3]})

    def stuck(sc):  # withholds t-3 in every round: the follow-up never hands it out
        return Assignment({"a": (T(0), T(1)), "b": (T(2),)}, {"a": (T(3),)})

    g = grade(s, run=stuck)
    assert "unstable" in g.violated()


def test_a_given_cooperative_round_that_withholds_is_not_unstable():
    # A legitimate round 1 (a gives up t-2, t-3 for the follow-up) graded as a given assignment:
    # there is no assignor to replay, so convergence is not judged, and balance stays undecided.
    s = scenario("cooperative", owned={"a": [0, 1, 2, 3]})
    g = grade(s, assignment=Assignment({"a": (T(0), T(1)), "b": ()}, {"a": (T(2), T(3))}))
    assert g.valid, g.violations
    assert g.balanced["global"] is None and "imbalance" in g.deferred


def test_next_generation_hands_everyone_its_assignment_one_generation_later():
    s = scenario(owned={"a": [0]}, generation=4)
    nxt = next_generation(s, Assignment({"a": (T(1),), "b": (T(0),)}))
    assert [(m.id, m.owned, m.generation) for m in nxt.members] == [("a", (T(1),), 5), ("b", (T(0),), 5)]


def test_exactly_one_of_run_or_assignment():
    with pytest.raises(TypeError):
        grade(scenario())


def test_stickiness_is_against_what_members_really_owned_the_view_is_for_information():
    # The view hides a's claims (as a v0 member's are hidden from cooperative-sticky): the view optimum
    # keeps nothing; stickiness is measured against the truth, where a's two partitions could stay.
    truth = scenario(owned={"a": [0, 1]})
    view = scenario()
    g = grade(truth, run=lambda s: Assignment({"a": (T(2), T(3)), "b": (T(0), T(1))}), view=view)
    assert (g.optimal_kept_view, g.optimal_kept, g.optimal_kept_global, g.kept) == (0, 2, 2, 0)
    assert g.stickiness == 0.0
    assert g.unnecessary == (T(0), T(1)), "both of a's partitions could have stayed with a"


def test_an_answer_that_is_not_an_assignment_is_recorded_as_an_error():
    g = grade(scenario(), run=lambda s: {"a": [T(0)]}, assignor="dict")
    assert not g.valid and g.error == "TypeError: the assignor returned dict, not an Assignment"


def test_the_follow_up_round_is_checked_too():
    s = scenario("cooperative", owned={"a": [0, 1, 2, 3]})

    def drops_in_round_two(sc):
        if len(sc.member("a").owned) == 4:  # round 1: withhold t-2, t-3 correctly
            return Assignment({"a": (T(0), T(1)), "b": ()}, {"a": (T(2), T(3))})
        return Assignment({"a": (T(0), T(1)), "b": (T(2),)})  # round 2 forgets t-3

    g = grade(s, run=drops_in_round_two)
    witnesses = [v.witness for v in g.violations if v.invariant == "unassigned"]
    assert witnesses == [{"partition": ["t", 3], "topic_unassigned": 1, "round": 2}]


def test_stability_is_asked_one_generation_after_the_settled_round():
    s = scenario("cooperative", owned={"a": [0, 1, 2, 3]}, generation=6)
    seen = []

    def cooperative(sc):
        seen.append(max(m.generation for m in sc.members))
        if len(sc.member("a").owned) == 4:
            return Assignment({"a": (T(0), T(1)), "b": ()}, {"a": (T(2), T(3))})
        return Assignment({"a": (T(0), T(1)), "b": (T(2), T(3))})

    g = grade(s, run=cooperative)
    assert g.valid, g.violations
    assert seen == [6, 7, 6, 8]  # round 1, its follow-up, round 1 again (determinism), stability


def test_the_oracles_own_cooperative_optimum_grades_fully_sticky():
    # a (generation 1) owns t-0; b (generation -1, stale) still lists it. The target keeps t-0 with a,
    # which lists it itself, so round 1 hands nobody anything new and need not withhold it (D5, R34).
    from stickyproof.oracle.flow import solve_flow

    s = scenario_from_dict({
        "format": "stickyproof.scenario/1", "protocol": "cooperative", "topics": {"t": 2},
        "members": [{"id": "a", "topics": ["t"], "owned": {"t": [0]}, "generation": 1},
                    {"id": "b", "topics": ["t"], "owned": {"t": [0]}, "generation": -1}],
    })
    best = solve_flow(s)
    assert T(0) in best.assignment.assignment["a"] and not any(best.assignment.revoking.values())
    g = grade(s, assignment=best.assignment)
    assert g.valid and g.kept == g.optimal_kept == 1 and g.stickiness == 1.0


# ------------------------------------------------------------------------------------------
# Issue 11: each assignor against its own contract; stickiness in its notion; false positives gone


def hetero(owned=None, generation=1):
    """a on t and u, b on t only (t: 4 partitions, u: 2)."""
    owned = owned or {}
    return scenario_from_dict({
        "format": "stickyproof.scenario/1", "topics": {"t": 4, "u": 2},
        "members": [{"id": "a", "topics": ["t", "u"], "owned": owned.get("a", {}), "generation": generation},
                    {"id": "b", "topics": ["t"], "owned": owned.get("b", {}), "generation": generation}],
    })


U = lambda p: TopicPartition("u", p)  # noqa: E731


def test_round_robin_promises_no_balance_on_unequal_subscriptions():
    # a: t-0, t-2, u-0, u-1 (4); b: t-1, t-3 (2): not globally balanced, but round robin promises
    # balance only when every member subscribes to the same topics (R42).
    rr = Assignment({"a": (T(0), T(2), U(0), U(1)), "b": (T(1), T(3))})
    g = grade(hetero(), assignment=rr)
    assert "imbalance" in g.violated(), "held to Kafka's sticky promise (the default), R33 breaks"
    g = grade(hetero(), assignment=rr, contract="uniform-if-equal")
    assert g.valid and g.contract_balanced is True and g.balanced["global"] is False  # no promise, none broken


def test_range_promises_balance_per_topic():
    uneven = Assignment({"a": (T(0), T(1), T(2), U(0), U(1)), "b": (T(3),)})
    g = grade(hetero(), assignment=uneven, contract="per-topic")
    witness = next(v.witness for v in g.violations if v.invariant == "imbalance")
    assert witness["mode"] == "per-topic" and witness["topic"] == "t" and witness["member"] == "b"
    fair = Assignment({"a": (T(0), T(1), U(0), U(1)), "b": (T(2), T(3))})
    assert grade(hetero(), assignment=fair, contract="per-topic").valid


def test_stickiness_is_measured_only_on_valid_rows():
    broken = Assignment({"a": (T(0), T(1), T(2)), "b": ()})  # t-3 unassigned
    g = grade(scenario(owned={"a": [0, 1]}), assignment=broken)
    assert not g.valid and g.stickiness is None and g.optimal_kept is None and g.kept == 2


def test_unnecessary_moves_name_what_an_optimum_in_the_notion_keeps():
    # a owns t-0, t-1; b owns t-2, t-3 (generation 1): balanced already. Swapping is needless.
    s = scenario(owned={"a": [0, 1], "b": [2, 3]})
    g = grade(s, assignment=Assignment({"a": (T(0), T(2)), "b": (T(1), T(3))}))
    assert g.valid and (g.kept, g.optimal_kept) == (2, 4) and g.stickiness == 0.5
    assert g.unnecessary == (T(1), T(2))


def test_a_partition_listed_twice_by_one_member_is_held_once():
    # A client reads its list as a set: no duplicate, one unit of load.
    s = scenario(owned={"a": [0, 1], "b": [2, 3]})
    g = grade(s, assignment=Assignment({"a": (T(0), T(1), T(1)), "b": (T(2), T(3))}))
    assert g.valid, g.violations


def test_assigned_to_one_member_while_another_revokes_its_stale_claim_is_one_holder():
    # a (generation 2) keeps t-0; b (generation 1, stale) still lists it and revokes it: one holder.
    s = scenario_from_dict({
        "format": "stickyproof.scenario/1", "protocol": "cooperative", "topics": {"t": 2},
        "members": [{"id": "a", "topics": ["t"], "owned": {"t": [0]}, "generation": 2},
                    {"id": "b", "topics": ["t"], "owned": {"t": [0]}, "generation": 1}],
    })
    g = grade(s, assignment=Assignment({"a": (T(0),), "b": (T(1),)}, {"b": (T(0),)}))
    assert "duplicate" not in g.violated(), g.violations


def test_stability_compares_holders_as_sets():
    def lists_twice_then_once(sc):
        if any(m.owned for m in sc.members):
            return Assignment({"a": (T(0), T(1)), "b": (T(2), T(3))})
        return Assignment({"a": (T(0), T(1), T(1)), "b": (T(2), T(3))})

    g = grade(scenario(), run=lists_twice_then_once)
    assert g.valid, g.violations


def test_stability_is_not_judged_for_an_assignor_that_cannot_see_its_history():
    def ignores_ownership_when_owned(s):
        if any(m.owned for m in s.members):
            return Assignment({"a": (T(2), T(3)), "b": (T(0), T(1))})
        return Assignment({"a": (T(0), T(1)), "b": (T(2), T(3))})

    g = grade(scenario(), run=ignores_ownership_when_owned, stability=False)
    assert g.valid and not g.stability_judged


def test_a_known_first_answer_is_graded_as_round_one_without_running_again():
    # A history's rebalance: the leader already answered; run= answers the later rounds only.
    calls = []

    def counted(sc):
        calls.append(sc)
        return sticky_run(sc)

    s = scenario(owned={"a": [0, 1], "b": [2]})
    g = grade(s, run=counted, answer=sticky_run(s), answer_seconds=0.25)
    assert g.valid and g.assign_seconds == 0.25
    assert len(calls) == 2, "determinism re-run and stability run only"
    with pytest.raises(TypeError):
        grade(s, assignment=sticky_run(s), answer=sticky_run(s))


def test_a_history_row_is_asked_on_the_leaders_input_and_judged_on_what_members_held():
    # Under EAGER the leader's input shows no owned partitions (R37), yet a and b held t-0..t-3:
    # the assignor is asked (round 1 and its re-run) on the input, kept is measured against the holdings.
    held = scenario(owned={"a": [0, 1], "b": [2, 3]})
    given = scenario()
    asked = []

    def run(sc):
        asked.append(sc)
        return Assignment({"a": (T(2), T(3)), "b": (T(0), T(1))})

    g = grade(held, run=run, leader_input=given, stability=False)
    assert asked == [given, given]
    assert g.valid and (g.kept, g.optimal_kept, g.stickiness) == (0, 4, 0.0)
    assert g.unnecessary == (T(0), T(1), T(2), T(3))
