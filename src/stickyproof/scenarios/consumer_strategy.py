"""``consumer_groups()``: Hypothesis strategy for KIP-848 consumer groups as the coordinator hands them over.

A consumer group's assignor input has no generations and no conflicting claims (docs/scenario-format.md,
"Consumer groups"): each member's ``owned`` is its current target, and the targets never overlap. What
the coordinator can still hand over, and so what is drawn here: targets on topics a member no longer
subscribes to (a subscription change), targets holding only part of a topic (partitions added, or a
member that left), members with nothing (joined), subscriptions to a topic not in the metadata,
static members, and racks on members and replicas.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ..model import Scenario, scenario_from_dict
from .hypothesis_driver import InvalidStrategyArgument

__all__ = ["consumer_groups", "CONSUMER_SUBSCRIPTIONS", "CONSUMER_RACKS"]

CONSUMER_SUBSCRIPTIONS = ("homogeneous", "heterogeneous")
"""Plain first: every member subscribed to the same topics (the coordinator's homogeneous type)."""

CONSUMER_RACKS = ("none", "members-and-replicas")
"""Plain first: no racks anywhere."""

_RACK_NAMES = ("r0", "r1", "r2")


def _check(name: str, value: Any, floor: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidStrategyArgument(f"{name}={value!r} must be an integer")
    if value < floor:
        raise InvalidStrategyArgument(f"{name}={value!r} must be at least {floor}")
    return value


def _check_knob(name: str, value: Any) -> SearchStrategy[Any]:
    if not isinstance(value, SearchStrategy):
        raise InvalidStrategyArgument(f"{name}={value!r} must be a Hypothesis strategy (use st.just(x) to fix it)")
    return value


def consumer_groups(
    *,
    min_members: int = 1,
    max_members: int = 6,
    min_topics: int = 1,
    max_topics: int = 3,
    max_partitions: int = 8,
    subscriptions: SearchStrategy[str] = st.sampled_from(CONSUMER_SUBSCRIPTIONS),
    racks: SearchStrategy[str] = st.sampled_from(CONSUMER_RACKS),
) -> SearchStrategy[Scenario]:
    """KIP-848 consumer groups (``group_protocol`` ``consumer``) as ``Scenario`` values.

    ``min_members..max_members`` members with unique ids (drawn, so Java's ``HashMap`` order varies),
    some static; ``min_topics..max_topics`` topics of ``0..max_partitions`` partitions. Knobs drawn
    once per group are strategies: ``subscriptions`` (homogeneous, heterogeneous: each member its own
    subset, sometimes naming a topic not in the metadata) and ``racks`` (none, members-and-replicas).
    Each partition's current holder is drawn among nobody and the members (subscribers or not), so
    targets never overlap. Every argument is validated here, naming ``arg=value`` and the rule broken.

    Examples shrink toward one member subscribed to one topic of no partitions, nothing held, no racks.
    """
    lo_m = _check("min_members", min_members, 1)
    hi_m = _check("max_members", max_members, 1)
    lo_t = _check("min_topics", min_topics, 1)
    hi_t = _check("max_topics", max_topics, 1)
    hi_p = _check("max_partitions", max_partitions, 0)
    if hi_m < lo_m:
        raise InvalidStrategyArgument(f"Cannot have max_members={hi_m!r} < min_members={lo_m!r}")
    if hi_t < lo_t:
        raise InvalidStrategyArgument(f"Cannot have max_topics={hi_t!r} < min_topics={lo_t!r}")
    subscriptions = _check_knob("subscriptions", subscriptions)
    racks = _check_knob("racks", racks)

    @st.composite
    def draw_group(draw: Any) -> Scenario:
        kind = draw(subscriptions)
        if kind not in CONSUMER_SUBSCRIPTIONS:
            raise InvalidStrategyArgument(f"subscriptions drew {kind!r}; expected one of {', '.join(CONSUMER_SUBSCRIPTIONS)}")
        rack_kind = draw(racks)
        if rack_kind not in CONSUMER_RACKS:
            raise InvalidStrategyArgument(f"racks drew {rack_kind!r}; expected one of {', '.join(CONSUMER_RACKS)}")
        counts = draw(st.lists(st.integers(0, hi_p), min_size=lo_t, max_size=hi_t))
        names = [f"t{i}" for i in range(len(counts))]
        ids = draw(st.lists(st.integers(0, 10**6).map(lambda n: f"m{n}"), min_size=lo_m, max_size=hi_m, unique=True))
        topic_choice = st.lists(st.sampled_from(names + ["missing"]), min_size=1, max_size=len(names) + 1, unique=True)
        common = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
        members = []
        for mid in ids:
            members.append({
                "id": mid,
                "topics": common if kind == "homogeneous" else draw(topic_choice),
                "owned": {},
                "rack": draw(st.sampled_from(_RACK_NAMES)) if rack_kind != "none" else None,
                "instance_id": draw(st.one_of(st.none(), st.just(f"i-{mid}"))),
            })
        topics: dict[str, Any] = {}
        for name, n in zip(names, counts):
            replica_racks = [draw(st.lists(st.sampled_from(_RACK_NAMES), max_size=2, unique=True)) for _ in range(n)] \
                if rack_kind != "none" else None
            topics[name] = {"partitions": n, "racks": replica_racks} if replica_racks is not None else n
            for p in range(n):
                # Nobody first, so held partitions shrink away; any member may hold it (a subscription change).
                holder = draw(st.integers(-1, len(members) - 1))
                if holder >= 0:
                    members[holder]["owned"].setdefault(name, []).append(p)
        return scenario_from_dict({"format": "stickyproof.scenario/1", "group_protocol": "consumer",
                                   "topics": topics, "members": members})

    return draw_group()
