"""Shared builders and checkers for the sticky tests (imported by test_sticky*.py, test_constrained.py, ...).

``wire_group`` is the leader's ``build_group``: each member's subscription is encoded at its version
with the assignor's user data and decoded again, so the assignor sees exactly what the wire carries
(R1-R3, R37: under EAGER the owned partitions field is empty). ``direct_group`` skips the wire.
``input_of`` builds a ``StickyInput`` from a compact description for step-level tests.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping, Sequence

from stickyproof.assignors.base import GroupSubscription, Subscription
from stickyproof.assignors.sticky import build_sticky_input, members_in_map_order
from stickyproof.assignors.sticky_types import MemberData, StickyInput
from stickyproof.model import Assignment, Member, Scenario, Topic, TopicPartition
from stickyproof.assignors.registry import get_assignor
from stickyproof.leader import build_group, rebalance_protocol


def tp(text: str) -> TopicPartition:
    """``"topic-3"`` -> TopicPartition("topic", 3) (the last dash splits, as Kafka's tests parse)."""
    topic, _, partition = text.rpartition("-")
    return TopicPartition(topic, int(partition))


def tps(*texts: str) -> tuple[TopicPartition, ...]:
    return tuple(tp(t) for t in texts)


def wire_group(scenario: Scenario, *, assignor: str) -> GroupSubscription:
    """What the leader hands the assignor (a registry name, ``sticky@2.2`` included) after decoding each
    member's JoinGroup metadata at its version."""
    info = get_assignor(assignor)
    if "eager" in info.protocols and "cooperative" not in info.protocols:
        scenario = replace(scenario, protocol="eager")  # R36: an eager-only assignor forces EAGER
    return build_group(scenario, info, rebalance_protocol(scenario, info))


def direct_group(scenario: Scenario) -> GroupSubscription:
    """The scenario's stated fields as the subscriptions, no wire (``--direct``)."""
    subs = tuple(
        Subscription(
            member_id=m.id,
            topics=m.topics,
            owned=m.owned,
            generation=m.generation if m.generation >= 0 else None,
            rack=m.rack,
            instance_id=m.instance_id,
            version=m.version,
        )
        for m in scenario.members
    )
    return GroupSubscription({t.name: t for t in scenario.topics}, subs, scenario.protocol, direct=True)


def scenario(
    topics: Mapping[str, int | tuple[tuple[str, ...], ...]],
    members: Sequence[Member],
    *,
    protocol: str = "cooperative",
) -> Scenario:
    """A scenario from ``{topic: count}`` (or ``{topic: racks per partition}``) and members in JoinGroup order."""
    ts = []
    for name, spec in topics.items():
        if isinstance(spec, int):
            ts.append(Topic(name, spec))
        else:
            ts.append(Topic(name, len(spec), tuple(tuple(r) for r in spec)))
    return Scenario(tuple(ts), tuple(members), protocol)


def member(
    member_id: str,
    topics: Iterable[str],
    owned: Iterable[str] = (),
    generation: int = -1,
    *,
    version: int = 3,
    rack: str | None = None,
) -> Member:
    return Member(member_id, tuple(topics), tps(*owned), generation, version, rack)


def input_of(
    ppt: Mapping[str, int],
    claims: Mapping[str, tuple[Sequence[str], int | None]],
    *,
    topics: Mapping[str, Sequence[str]] | None = None,
    wire_generation: Mapping[str, int] | None = None,
    order: Sequence[str] | None = None,
) -> StickyInput:
    """A StickyInput: ``claims[m] = (["t-0", ...], generation)``; members iterate in ``order`` if given, else map order."""
    ids = list(claims)
    members = tuple(order) if order is not None else members_in_map_order(ids)
    subscriptions = {m: tuple(topics[m]) if topics else tuple(ppt) for m in ids}
    data = {m: MemberData(tps(*c), g) for m, (c, g) in claims.items()}
    wire = {m: (g if g is not None else -1) for m, (_, g) in claims.items()}
    if wire_generation:
        wire.update(wire_generation)
    return StickyInput(
        partitions_per_topic=dict(ppt),
        members=members,
        subscriptions=subscriptions,
        member_data=data,
        wire_generation=wire,
        wire_owned={m: data[m].partitions for m in ids},
        member_rack={m: None for m in ids},
        partition_racks={},
        rack_aware=False,
    )


def flat(assignment: Assignment) -> list[TopicPartition]:
    return [p for ps in assignment.assignment.values() for p in ps]


def check_valid(scenario_: Scenario, assignment: Assignment) -> None:
    """No partition twice, only subscribed and existing partitions, every member present (R33's validity half)."""
    counts = scenario_.partition_counts
    seen: set[TopicPartition] = set()
    assert set(assignment.assignment) == {m.id for m in scenario_.members}
    for m in scenario_.members:
        for p in assignment.assignment[m.id]:
            assert p not in seen, f"{p} assigned twice"
            seen.add(p)
            assert p.topic in m.topics, f"{p} given to {m.id}, not subscribed"
            assert 0 <= p.partition < counts.get(p.topic, 0), f"{p} does not exist"


def check_balanced(assignment: Assignment, *, revoking_allowed: bool = True) -> None:
    """Every member within one partition of every other once the withheld partitions are counted out."""
    loads = [len(v) for v in assignment.assignment.values()]
    if loads:
        assert max(loads) - min(loads) <= 1 + (0 if not revoking_allowed else sum(map(len, assignment.revoking.values()))), loads


def sticky_input_for(scenario_: Scenario, *, assignor: str) -> StickyInput:
    group = wire_group(scenario_, assignor=assignor)
    return build_sticky_input(group, get_assignor(assignor).release)


def test_wire_group_carries_owned_only_under_cooperative():
    s = scenario({"t": 2}, [member("a", ["t"], ["t-0"], 3)], protocol="eager")
    assert wire_group(s, assignor="cooperative-sticky").members[0].owned == ()
    s = scenario({"t": 2}, [member("a", ["t"], ["t-0"], 3)], protocol="cooperative")
    assert wire_group(s, assignor="cooperative-sticky").members[0].owned == tps("t-0")


def test_wire_group_drops_generation_below_v2():
    s = scenario({"t": 2}, [member("a", ["t"], ["t-0"], 3, version=1)])
    sub = wire_group(s, assignor="cooperative-sticky").members[0]
    assert sub.generation is None and sub.owned == tps("t-0") and sub.user_data == b"\x00\x00\x00\x03"
