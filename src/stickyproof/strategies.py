"""Hypothesis strategies for stickyproof, the public API: ``from stickyproof.strategies import groups``.

``groups()`` draws consumer groups at one rebalance that a real leader can be handed: no stale or
duplicated claims, no claims on partitions or topics that do not exist, no v0 member in a
cooperative group, mostly several members. The hazard classes (``HAZARDS``, described in
``HAZARD_HELP``) are drawn only when named: ``groups(hazards={"duplicate-claims"})``. Given the
assignor under test, ``groups(assignor="sticky")`` draws only the rebalance protocols it supports.

The drawing is ``stickyproof.scenarios.hypothesis_driver`` over the scenario space, described once
(``scenarios.space`` and ``scenarios.generate``); the same description drives the seeded sampler
that sweeps use. ``from_space`` draws a ``Space`` exactly as it stands (the hunt's strategy).

    from hypothesis import given
    from stickyproof.grading import grade_assignor
    from stickyproof.strategies import groups

    @given(groups(assignor="mypkg.assignor:assign", max_members=4))
    def test_my_assignor(scenario):
        assert grade_assignor(scenario, "mypkg.assignor:assign").valid

``consumer_groups()`` draws KIP-848 consumer groups (``group_protocol`` ``consumer``) for the
server-side assignors. docs/pytest.md is the guide.
"""

from __future__ import annotations

import difflib
from typing import Any, Collection

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .model import Scenario
from .scenarios.consumer_strategy import consumer_groups
from .scenarios.hypothesis_driver import (
    InvalidStrategyArgument,
    _check_bounds,
    _check_strategy,
    _scenarios_from,
    from_space,
)
from .scenarios.space import (
    ASSIGNORS,
    CHOICE_KNOBS,
    IDS,
    OWNERSHIP,
    PROTOCOLS,
    RACKS,
    RANGE_KNOBS,
    STATIC,
    SUBSCRIPTIONS,
    VERSIONS,
    Space,
)

__all__ = ["groups", "consumer_groups", "from_space", "InvalidStrategyArgument", "HAZARDS", "HAZARD_HELP"]

#: What a hazard does to the group, by name. None of them is in a group ``groups()`` draws unless
#: named in ``hazards=``: each is a group no client of today sends its leader (models/protocol.md
#: §9.4), where a failure may be the protocol's or the client's rather than the assignor's, or, for
#: ``empty-subscriptions``, a group Kafka's own assignors are known to get wrong (docs/rules.md K2).
HAZARD_HELP: dict[str, str] = {
    "stale-claims": "members rejoin from an older generation still claiming partitions the group "
    "has since handed to others (KIP-341's stalled member; a client before 3.0 after a reset, KAFKA-12983)",
    "duplicate-claims": "two members claim one partition at the same generation (both lose it, R8)",
    "unknown-generation-claims": "members claim partitions at generation -1 (old clients, reset members; "
    "a v2+ member does not, R37)",
    "deleted-topic-claims": "members claim partitions of topics that no longer exist (dropped silently, R5), "
    "including the ``topics-deleted`` prior ownership's",
    "past-count-claims": "members claim partition numbers at or past their topic's count (metadata lagging "
    "a partition increase, K1), including the ``partitions-deleted`` prior ownership's",
    "v0-cooperative": "a member speaking subscription v0 in a cooperative group, whose claims never "
    "reach the leader (R2; a v0 client predates the cooperative protocol)",
    "empty-subscriptions": "the ``empty`` subscription kind: some members subscribe to nothing (a pattern "
    "that matches no topic); Kafka's sticky assignors can hand such a member partitions (R13, K2)",
}
#: The hazard names ``groups(hazards=...)`` accepts, in the order of ``HAZARD_HELP``.
HAZARDS: tuple[str, ...] = tuple(HAZARD_HELP)

#: The range knob each claim hazard sizes (``v0-cooperative`` is a version, not a count).
_HAZARD_KNOB = {
    "stale-claims": "stale",
    "duplicate-claims": "double_claims",
    "unknown-generation-claims": "unknown_generation",
    "deleted-topic-claims": "deleted_topic_claims",
    "past-count-claims": "past_count_claims",
}
_KNOB_HAZARD = {knob: name for name, knob in _HAZARD_KNOB.items()}


def _check_hazards(hazards: Any) -> frozenset[str]:
    if isinstance(hazards, str) or not isinstance(hazards, Collection):
        raise InvalidStrategyArgument(
            f"hazards={hazards!r} must be a set of hazard names, e.g. hazards={{'duplicate-claims'}} (names: {', '.join(HAZARDS)})"
        )
    for name in hazards:
        if name not in HAZARD_HELP:
            close = difflib.get_close_matches(str(name), HAZARDS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InvalidStrategyArgument(f"hazards= names {name!r}, no hazard: {hint}names: {', '.join(HAZARDS)}")
    return frozenset(hazards)


def _supported_protocols(assignor: Any) -> tuple[str, ...] | None:
    """The rebalance protocols ``assignor`` supports (R36), or None when no assignor is given."""
    if assignor is None:
        return None
    if isinstance(assignor, str):
        from .lookup import get_assignor

        assignor = get_assignor(assignor)
    protocols = getattr(assignor, "protocols", None)
    if not isinstance(protocols, tuple) or not protocols or not set(protocols) <= set(PROTOCOLS):
        raise InvalidStrategyArgument(
            f"assignor={assignor!r} must be an assignor name or an AssignorInfo (whose protocols are some of "
            f"{', '.join(PROTOCOLS)})"
        )
    return protocols


def _listed(strategy: SearchStrategy[Any]) -> tuple[Any, ...] | None:
    """The values a ``st.sampled_from``/``st.just`` strategy can draw, or None when not known up front."""
    elements = getattr(strategy, "elements", None)
    return tuple(elements) if isinstance(elements, (tuple, list, range)) else None


def groups(
    *,
    assignor: Any = None,
    hazards: Collection[str] = frozenset(),
    min_members: int = 1,
    max_members: int = 8,
    min_topics: int = 1,
    max_topics: int = 4,
    min_partitions: int = 1,
    max_partitions: int = 8,
    min_zero_partition_topics: int = 0,
    max_zero_partition_topics: int = 1,
    min_generation: int = 1,
    max_generation: int = 10,
    min_stale: int | None = None,
    max_stale: int | None = None,
    min_double_claims: int | None = None,
    max_double_claims: int | None = None,
    min_unknown_generation: int | None = None,
    max_unknown_generation: int | None = None,
    min_deleted_topic_claims: int | None = None,
    max_deleted_topic_claims: int | None = None,
    min_past_count_claims: int | None = None,
    max_past_count_claims: int | None = None,
    subscriptions: SearchStrategy[str] = st.sampled_from(SUBSCRIPTIONS),
    ownership: SearchStrategy[str] = st.sampled_from(OWNERSHIP),
    versions: SearchStrategy[int] = st.sampled_from(VERSIONS),
    protocols: SearchStrategy[str] = st.sampled_from(PROTOCOLS),
    racks: SearchStrategy[str] = st.sampled_from(RACKS),
    static: SearchStrategy[str] = st.sampled_from(STATIC),
    assignors: SearchStrategy[str] = st.sampled_from(ASSIGNORS),
    ids: SearchStrategy[str] = st.sampled_from(IDS),
) -> SearchStrategy[Scenario]:
    """Consumer groups at one rebalance, as ``Scenario`` values a real leader can be handed.

    ``assignor``: the assignor under test (a registry name such as ``"sticky"``, ``"module:callable"``
    or ``"exec:..."``, or an ``AssignorInfo``); only the rebalance protocols it supports are drawn
    (R36: an eager-only assignor never leads a cooperative group). Without it every protocol
    ``protocols`` draws is drawn.

    ``hazards``: the hazard classes to draw as well, by name (``HAZARDS``; what each does is
    ``HAZARD_HELP``); none by default. The claim hazards' counts are the ranges
    ``min_stale..max_stale`` (stale claimants, default 0..2), ``min_double_claims..max_double_claims``
    (0..2), ``min_unknown_generation..max_unknown_generation`` (0..1),
    ``min_deleted_topic_claims..max_deleted_topic_claims`` (0..1) and
    ``min_past_count_claims..max_past_count_claims`` (0..1), each capped by what the drawn group can
    hold; a count above 0 for a hazard not named is an error naming the hazard to add.
    ``"v0-cooperative"`` lets a cooperative group hold members ``versions`` draws at 0; otherwise
    such a member draws again among the other versions. ``"empty-subscriptions"`` lets
    ``subscriptions`` draw ``empty``; otherwise it draws again among the other kinds.

    Sizes: ``min_members..max_members`` members (JoinGroup order as drawn, ids unique; when the
    range allows one member and more, fewer than one group in ten has one),
    ``min_topics..max_topics`` topics of ``min_partitions..max_partitions`` partitions each, plus
    ``min_zero_partition_topics..max_zero_partition_topics`` topics with none; the group is at
    generation ``min_generation..max_generation``, the generation every claimant reports.

    Knobs drawn once per group are strategies: ``subscriptions`` (uniform, heterogeneous,
    nested, disjoint; empty as a hazard), ``ownership`` (none, balanced, skewed, members-left,
    members-joined, partitions-added, partitions-deleted, topics-added, topics-deleted,
    topics-unsubscribed), ``protocols``, ``racks``, ``static``, ``assignors``, ``ids``;
    ``versions`` is drawn once per member. Pass ``st.just(x)`` to fix a knob. Every argument is
    validated here, naming ``arg=value`` and the rule broken.

    Examples shrink toward two members (one when the failure needs a group of one) at version 3,
    subscribed to one topic of one partition, nothing owned, generation -1, the first protocol the
    assignor supports, no racks, no hazards.
    """
    chosen = _check_hazards(hazards)
    supported = _supported_protocols(assignor)
    given = {
        "members": (min_members, max_members),
        "topics": (min_topics, max_topics),
        "partitions": (min_partitions, max_partitions),
        "zero_partition_topics": (min_zero_partition_topics, max_zero_partition_topics),
        "generation": (min_generation, max_generation),
        "stale": (min_stale, max_stale),
        "double_claims": (min_double_claims, max_double_claims),
        "unknown_generation": (min_unknown_generation, max_unknown_generation),
        "deleted_topic_claims": (min_deleted_topic_claims, max_deleted_topic_claims),
        "past_count_claims": (min_past_count_claims, max_past_count_claims),
    }
    default = Space()
    ranges: dict[str, tuple[int, int]] = {}
    for knob in RANGE_KNOBS:
        low, high = given[knob]
        hazard = _KNOB_HAZARD.get(knob)
        if hazard is not None:
            if hazard not in chosen:
                for name, value in ((f"min_{knob}", low), (f"max_{knob}", high)):
                    if value not in (None, 0) or isinstance(value, bool):
                        raise InvalidStrategyArgument(
                            f"{name}={value!r} draws {hazard}, a hazard not asked for: add "
                            f"hazards={{{hazard!r}}} (or leave {name} out)"
                        )
                low = high = 0
            else:
                low = getattr(default, knob)[0] if low is None else low
                high = getattr(default, knob)[1] if high is None else high
        ranges[knob] = _check_bounds(knob, low, high)
    knobs = {
        "subscriptions": subscriptions,
        "ownership": ownership,
        "versions": versions,
        "protocols": protocols,
        "racks": racks,
        "static": static,
        "assignors": assignors,
        "ids": ids,
    }
    strategies = {knob: _check_strategy(knob, knobs[knob]) for knob in CHOICE_KNOBS}
    if supported is not None:
        listed = _listed(protocols)
        if listed is not None and not set(listed) & set(supported):
            raise InvalidStrategyArgument(
                f"protocols={protocols!r} draws only {', '.join(map(str, listed))}, which assignor={assignor!r} "
                f"does not support (it supports {', '.join(supported)}, R36)"
            )
        strategies["protocols"] = protocols.filter(supported.__contains__)
    if "empty-subscriptions" not in chosen:
        listed = _listed(subscriptions)
        if listed is not None and set(listed) == {"empty"}:
            raise InvalidStrategyArgument(
                f"subscriptions={subscriptions!r} draws only empty, a hazard not asked for: add "
                f"hazards={{'empty-subscriptions'}}"
            )
        strategies["subscriptions"] = subscriptions.filter(lambda kind: kind != "empty")
    cooperative_versions = None
    if "v0-cooperative" not in chosen:
        listed = _listed(versions)
        if listed is not None and set(listed) == {0}:
            drawable = _listed(strategies["protocols"]) if supported is None else supported
            if drawable is None or "cooperative" in drawable:
                raise InvalidStrategyArgument(
                    f"versions={versions!r} draws only 0, which no cooperative member speaks: pass "
                    f"protocols=st.just('eager') or hazards={{'v0-cooperative'}}"
                )
        cooperative_versions = versions.filter(lambda v: v != 0)
    return _scenarios_from(ranges, strategies, crowd=True, cooperative_versions=cooperative_versions)


for _name in ("groups", "from_space", "InvalidStrategyArgument"):
    globals()[_name].__module__ = __name__
del _name
