"""The public Hypothesis API: ``stickyproof.strategies`` (façade, validation, knobs, shrinking)."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

import stickyproof.strategies as strategies
from stickyproof.errors import StickyproofError
from stickyproof.model import scenario_from_dict, scenario_to_dict
from stickyproof.scenarios import Space, scenario_features
from stickyproof.scenarios.space import OWNERSHIP, PROTOCOLS, SUBSCRIPTIONS, VERSIONS
from stickyproof.scenarios.space import claims_invisible
from stickyproof.strategies import HAZARD_HELP, HAZARDS, InvalidStrategyArgument, from_space, groups

SMALL = settings(deadline=None)  # example counts come from the profile (tests/conftest.py)


# ------------------------------------------------------------------------------------------
# Façade


def _public_strategies(module):
    return {
        name
        for name, obj in vars(module).items()
        if not name.startswith("_") and inspect.isfunction(obj) and "SearchStrategy" in str(inspect.signature(obj))
    }


def test_every_public_strategy_is_exported_and_documented():
    from stickyproof.scenarios import hypothesis_driver

    public = _public_strategies(hypothesis_driver) | _public_strategies(strategies)
    assert public == {"groups", "consumer_groups", "from_space"}
    assert public <= set(strategies.__all__)
    for name in strategies.__all__:
        obj = getattr(strategies, name)
        if not callable(obj):
            continue  # HAZARDS, HAZARD_HELP: constants, documented in the module docstring
        assert obj.__doc__, name
        # defined in the facade, or (consumer groups) in their own scenarios module and re-exported
        assert obj.__module__ in ("stickyproof.strategies", "stickyproof.scenarios.consumer_strategy"), name
        if name in public:
            assert obj.__doc__.strip().split("\n\n")[-1].lstrip().startswith("Examples shrink toward"), name


def test_options_are_keyword_only():
    for fn in (groups, from_space):
        params = inspect.signature(fn).parameters.values()
        if fn is groups:
            assert all(p.kind is p.KEYWORD_ONLY for p in params)


def test_plain_case_comes_first_in_every_choice():
    assert SUBSCRIPTIONS[0] == "uniform"
    assert OWNERSHIP[0] == "none"
    assert VERSIONS[0] == 3
    assert PROTOCOLS[0] == "eager"


# ------------------------------------------------------------------------------------------
# Generated groups


@SMALL
@given(groups())
def test_groups_are_valid_scenarios(scenario):
    assert scenario_from_dict(scenario_to_dict(scenario)) == scenario


@SMALL
@given(groups(min_members=2, max_members=3, min_topics=2, max_topics=2, min_partitions=3, max_partitions=3,
              max_zero_partition_topics=0))
def test_groups_respect_sizes(scenario):
    assert 2 <= len(scenario.members) <= 3
    assert [t.partitions for t in scenario.topics] == [3, 3]


@SMALL
@given(groups(hazards={"v0-cooperative"}, versions=st.just(0), protocols=st.just("cooperative"),
              subscriptions=st.just("uniform"), static=st.just("all"), racks=st.just("none")))
def test_knob_strategies_take_effect(scenario):
    assert {m.version for m in scenario.members} == {0}
    assert scenario.protocol == "cooperative"
    assert len({m.topics for m in scenario.members}) == 1
    assert all(m.instance_id for m in scenario.members)
    assert scenario_features(scenario)["racks"] == "none"


@SMALL
@given(groups(hazards={"stale-claims"}, min_members=2, min_stale=1, max_stale=1))
def test_min_stale_forces_a_stale_member(scenario):
    counts = scenario.partition_counts
    shared = any(counts.get(t, 0) and any(t in o.topics for o in scenario.members if o is not m)
                 for m in scenario.members for t in m.topics)
    if scenario.protocol == "eager" or shared:  # a cooperative member claims only what it subscribes to
        assert scenario_features(scenario)["stale_claimants"] >= 1


@SMALL
@given(from_space(Space.from_overrides(["members=3", "versions=1,2", "ownership=balanced", "subscriptions=uniform"])))
def test_from_space_follows_the_space(scenario):
    assert len(scenario.members) == 3
    assert {m.version for m in scenario.members} <= {1, 2}


# ------------------------------------------------------------------------------------------
# Shrinking


def test_examples_shrink_to_the_plain_group():
    s = find(groups(), lambda s: True, settings=settings(database=None))
    assert len(s.members) == 2 and len(s.topics) == 1 and s.topics[0].partitions == 1
    for m in s.members:
        assert (m.version, m.owned, m.generation, m.rack, m.instance_id, m.assignors) == (3, (), -1, None, None, ())
    assert s.protocol == "eager"


def test_a_failure_that_needs_one_member_shrinks_to_one_member():
    s = find(groups(), lambda s: len(s.members) == 1, settings=settings(database=None))
    assert len(s.members) == 1 and s.members[0].owned == ()


def test_failures_shrink_to_small_stale_groups():
    space = groups(hazards={"stale-claims"}, max_members=4, max_topics=2, max_partitions=4)
    s = find(space, lambda s: scenario_features(s)["stale_claimants"] > 0, settings=settings(database=None))
    assert len(s.members) == 2
    assert sum(len(m.owned) for m in s.members) == 2


# ------------------------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"min_members": 0}, "min_members=0"),
        ({"min_members": 5, "max_members": 2}, "max_members=2 < min_members=5"),
        ({"min_partitions": -1}, "min_partitions=-1"),
        ({"max_topics": "3"}, "max_topics='3'"),
        ({"min_generation": 0}, "min_generation=0"),
        ({"max_stale": True}, "max_stale=True"),
        ({"max_members": 10**7}, "max_members=10000000"),
        ({"versions": 3}, "versions=3"),
        ({"protocols": ["eager"]}, "protocols=['eager']"),
    ],
)
def test_groups_validation_names_arg_and_value(kwargs, needle):
    with pytest.raises(InvalidStrategyArgument) as info:
        groups(**kwargs)
    assert needle in str(info.value)
    assert isinstance(info.value, StickyproofError) and isinstance(info.value, InvalidArgument)


def test_from_space_rejects_non_space():
    with pytest.raises(InvalidStrategyArgument, match="space="):
        from_space({"members": (1, 2)})


def test_a_knob_strategy_drawing_a_bad_value_names_the_knob():
    @settings(max_examples=1, database=None)
    @given(groups(versions=st.just(7)))
    def draw_one(scenario):
        pass

    with pytest.raises(InvalidStrategyArgument, match="versions= drew 7"):
        draw_one()


def test_groups_returns_a_strategy():
    assert isinstance(groups(), SearchStrategy)


# ------------------------------------------------------------------------------------------
# Reachable by default; hazards by name; the assignor's protocols


def _hazards_in(scenario) -> set[str]:
    """The hazard classes a scenario shows, read off the document (``scenario_features``)."""
    f = scenario_features(scenario)
    shown = {
        "stale-claims": f["stale_claimants"] > 0,
        "duplicate-claims": f["double_claims"] > 0,
        "unknown-generation-claims": f["unknown_generation_claimants"] > 0,
        "deleted-topic-claims": f["deleted_topic_claims"] > 0,
        "past-count-claims": f["past_count_claims"] > 0,
        "v0-cooperative": claims_invisible(scenario),
        "empty-subscriptions": f["empty_subscriptions"] > 0,
    }
    assert set(shown) == set(HAZARDS)
    return {name for name, present in shown.items() if present}


def test_every_hazard_is_documented():
    assert HAZARDS == tuple(HAZARD_HELP) and all(HAZARD_HELP[h] for h in HAZARDS)


@SMALL
@given(groups())
def test_default_groups_show_no_hazard(scenario):
    assert _hazards_in(scenario) == set()


@pytest.mark.parametrize("hazard", HAZARDS)
def test_each_hazard_is_drawn_when_named_and_alone(hazard):
    s = find(groups(hazards={hazard}), lambda s: hazard in _hazards_in(s), settings=settings(database=None, max_examples=2000))
    assert _hazards_in(s) == {hazard}


def test_most_default_groups_have_several_members():
    from hypothesis import HealthCheck, Phase, seed

    sizes = []

    @seed(20)
    @settings(max_examples=300, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(groups())
    def draw(scenario):
        sizes.append(len(scenario.members))

    draw()
    assert len(sizes) == 300
    assert sum(n == 1 for n in sizes) / len(sizes) <= 0.15  # 9.6 % of 2,000 draws at seed 0 (docs/pytest.md)


@SMALL
@given(groups(assignor="sticky"))
def test_an_eager_only_assignor_is_never_drawn_into_a_cooperative_group(scenario):
    assert scenario.protocol == "eager"


@SMALL
@given(groups(assignor="cooperative-sticky", protocols=st.just("cooperative"), versions=st.sampled_from((0, 3))))
def test_a_cooperative_group_holds_no_v0_member_unless_asked(scenario):
    assert {m.version for m in scenario.members} == {3}


def test_the_assignor_may_be_an_assignor_info():
    from stickyproof.lookup import get_assignor

    s = find(groups(assignor=get_assignor("range")), lambda s: True, settings=settings(database=None))
    assert s.protocol == "eager"


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"hazards": {"duplicate-claim"}}, "did you mean 'duplicate-claims'?"),
        ({"hazards": "stale-claims"}, "must be a set of hazard names"),
        ({"max_stale": 1}, "add hazards={'stale-claims'}"),
        ({"min_double_claims": 1, "max_double_claims": 1}, "min_double_claims=1 draws duplicate-claims"),
        ({"assignor": "sticky", "protocols": st.just("cooperative")}, "does not support (it supports eager"),
        ({"versions": st.just(0)}, "hazards={'v0-cooperative'}"),
        ({"subscriptions": st.just("empty")}, "hazards={'empty-subscriptions'}"),
        ({"assignor": 3}, "assignor=3"),
    ],
)
def test_hazard_and_assignor_arguments_are_checked(kwargs, needle):
    with pytest.raises(InvalidStrategyArgument) as info:
        groups(**kwargs)
    assert needle in str(info.value)


def test_an_unknown_assignor_name_is_named():
    from stickyproof.errors import UnknownAssignor

    with pytest.raises(UnknownAssignor, match="stiky"):
        groups(assignor="stiky")


def test_explicit_zero_hazard_counts_and_v0_in_eager_groups_are_fine():
    groups(max_stale=0, max_past_count_claims=0)
    groups(versions=st.just(0), protocols=st.just("eager"))


def test_from_space_still_draws_the_spaces_hazards():
    s = find(from_space(Space()), lambda s: "duplicate-claims" in _hazards_in(s), settings=settings(database=None))
    assert scenario_features(s)["double_claims"] >= 1
