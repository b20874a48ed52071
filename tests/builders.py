"""Builders shared by the tests: one group builder, a fluent member builder, the assignor's views of a group.

Every test that writes a consumer group by hand goes through ``group``: members as scenario
documents, ``Member`` values or ``member(...)`` builders, topics as partition counts (or racks
per partition). The fluent builder reads the way the group is described in prose, as franz-go's
tests build user data (``newUD().setGeneration(2).assign("t", 0)``)::

    member("c1").topics("t", "u").owns("t", 0, 1).owns("u", 2).generation(3).version(1)

``wire_group`` is what the leader hands an assignor (each member encoded at its version with the
assignor's user data, and decoded again: R1-R3, R37, under EAGER the owned field is empty);
``direct_group`` skips the wire (``--direct``, Kafka's unit tests calling ``assign`` directly).
``input_of`` and ``literal_prior_owners`` build the sticky core's own inputs for step-level tests.
The checkers that grade what comes back are in ``tests/checks.py``. The assignors and the leader
are imported inside the builders that need them, so the oracle's tests, which build groups only,
do not load the code the oracle grades.
"""

from __future__ import annotations

import sys
import textwrap
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence, Union

from stickyproof.model import SCENARIO_FORMAT, Assignment, Member, Scenario, Topic, TopicPartition, scenario_from_dict, topics_from_dict

if TYPE_CHECKING:
    from stickyproof.assignors.base import GroupSubscription
    from stickyproof.assignors.sticky_types import PriorOwners, StickyInput

__all__ = [
    "TP",
    "tp",
    "tps",
    "strs",
    "MemberBuilder",
    "member",
    "group",
    "wire_group",
    "direct_group",
    "input_of",
    "literal_prior_owners",
    "importable_module",
]

TP = TopicPartition


def tp(text: str) -> TopicPartition:
    """``"topic-3"`` -> TopicPartition("topic", 3) (the last dash splits, as Kafka's tests parse)."""
    topic, _, partition = text.rpartition("-")
    return TopicPartition(topic, int(partition))


def tps(*texts: str) -> tuple[TopicPartition, ...]:
    return tuple(tp(t) for t in texts)


def strs(assignment: Assignment | Mapping[str, Iterable[TopicPartition]]) -> dict[str, list[str]]:
    """Each member's partitions as ``"topic-p"`` strings, in the assignor's order."""
    lists = assignment.assignment if isinstance(assignment, Assignment) else assignment
    return {m: [str(p) for p in v] for m, v in lists.items()}


# ------------------------------------------------------------------------------------------
# Members and groups


@dataclass(frozen=True)
class MemberBuilder:
    """A ``Member`` under construction; every step returns a new builder (``build()`` gives the value).

    ``owns`` appends, so claims keep the order they are written in (claim order matters to Kafka,
    R16 before 3.7.1); ``topics`` sets the subscription in the order given (R12 compares raw lists).
    """

    value: Member

    def topics(self, *names: str) -> MemberBuilder:
        return MemberBuilder(replace(self.value, topics=tuple(names)))

    def owns(self, topic: str, *partitions: int) -> MemberBuilder:
        claims = tuple(TopicPartition(topic, p) for p in partitions)
        return MemberBuilder(replace(self.value, owned=self.value.owned + claims))

    def generation(self, generation: int) -> MemberBuilder:
        return MemberBuilder(replace(self.value, generation=generation))

    def version(self, version: int) -> MemberBuilder:
        return MemberBuilder(replace(self.value, version=version))

    def rack(self, rack: str | None) -> MemberBuilder:
        return MemberBuilder(replace(self.value, rack=rack))

    def instance(self, instance_id: str | None) -> MemberBuilder:
        return MemberBuilder(replace(self.value, instance_id=instance_id))

    def assignors(self, *names: str) -> MemberBuilder:
        return MemberBuilder(replace(self.value, assignors=tuple(names)))

    def build(self) -> Member:
        return self.value


def member(member_id: str) -> MemberBuilder:
    """A member subscribing to nothing, owning nothing, generation -1 (absent), subscription version 3."""
    return MemberBuilder(Member(member_id, ()))


TopicSpec = Union[int, Mapping[str, Any], Sequence[Sequence[str]]]
MemberSpec = Union[Mapping[str, Any], Member, MemberBuilder]


def group(
    topics: Mapping[str, TopicSpec],
    members: Iterable[MemberSpec],
    protocol: str = "eager",
    *,
    name: str = "",
) -> Scenario:
    """A scenario: the leader's metadata and the members in JoinGroup order.

    ``topics`` maps a name to its partition count, to the document's ``{"partitions", "racks"}``,
    or to the replica racks of each partition (their number is the count). ``members`` are scenario
    documents (``{"id", "topics", "owned": {topic: [partitions]}, ...}``), ``Member`` values or
    ``member(...)`` builders. A group written wholly in document form is read by
    ``scenario_from_dict``, so every rule of docs/scenario-format.md applies; otherwise the values are
    taken as given (claims in the written order, repeats and all).
    """
    members = list(members)
    if all(isinstance(m, Mapping) for m in members) and all(isinstance(s, (int, Mapping)) for s in topics.values()):
        doc = {"format": SCENARIO_FORMAT, "name": name, "protocol": protocol, "topics": dict(topics), "members": members}
        return scenario_from_dict(doc)
    return Scenario(tuple(_topic(n, s) for n, s in topics.items()), tuple(_member(m) for m in members), protocol, name)


def _topic(name: str, spec: TopicSpec) -> Topic:
    if isinstance(spec, int):
        return Topic(name, spec)
    if isinstance(spec, Mapping):
        return topics_from_dict({name: dict(spec)})[0]
    return Topic(name, len(spec), tuple(tuple(r) for r in spec))


def _member(spec: MemberSpec) -> Member:
    if isinstance(spec, MemberBuilder):
        return spec.build()
    if isinstance(spec, Member):
        return spec
    return group({}, [spec]).members[0]


# ------------------------------------------------------------------------------------------
# What the assignor sees


def wire_group(scenario: Scenario, *, assignor: str) -> GroupSubscription:
    """What the leader hands the assignor (a registry name, ``sticky@2.2`` included) after decoding each
    member's JoinGroup metadata at its version."""
    from stickyproof.lookup import get_assignor
    from stickyproof.leader import build_group, rebalance_protocol

    info = get_assignor(assignor)
    if "eager" in info.protocols and "cooperative" not in info.protocols:
        scenario = replace(scenario, protocol="eager")  # R36: an eager-only assignor forces EAGER
    return build_group(scenario, info, rebalance_protocol(scenario, info))


def direct_group(scenario: Scenario) -> GroupSubscription:
    """The scenario's stated fields as the subscriptions, no wire (``--direct``; what Kafka's unit tests
    hand ``assign``). Range and roundrobin read only topics, racks and instance ids from it."""
    from stickyproof.assignors.base import GroupSubscription, Subscription

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


# ------------------------------------------------------------------------------------------
# The sticky core's inputs, for step-level tests


def input_of(
    ppt: Mapping[str, int],
    claims: Mapping[str, tuple[Sequence[str], int | None]],
    *,
    topics: Mapping[str, Sequence[str]] | None = None,
    wire_generation: Mapping[str, int] | None = None,
    order: Sequence[str] | None = None,
) -> StickyInput:
    """A StickyInput: ``claims[m] = (["t-0", ...], generation)``; members iterate in ``order`` if given, else map order."""
    from stickyproof.assignors.sticky import members_in_map_order
    from stickyproof.assignors.sticky_types import MemberData, StickyInput

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


def literal_prior_owners(inp: StickyInput) -> PriorOwners:
    """R5-R8 (the current rule) claim by claim, as ``allSubscriptionsEqual``'s ownership loop writes it:
    members in map order, claims in claim order. Written apart from ``ownership.py`` so the tests of
    the paths do not depend on it, and so ``ownership.py``'s bulk resolution has something to equal."""
    from stickyproof.assignors.sticky_types import PriorOwners

    owner: dict[TopicPartition, str] = {}
    kept: dict[str, list[TopicPartition]] = {m: [] for m in inp.members}
    dup: set[TopicPartition] = set()
    max_generation = -1
    for m in inp.members:
        md = inp.member_data[m]
        g = -1 if md.generation is None else md.generation
        max_generation = max(max_generation, g)
        for p in md.partitions:
            if p.topic not in inp.partitions_per_topic:
                continue  # R5
            other = owner.get(p)
            if other is None:
                kept[m].append(p)  # R7
                owner[p] = m
                continue
            og = inp.wire_generation[other]
            if g == og:
                dup.add(p)
                if p in kept[other]:
                    kept[other].remove(p)
                owner[p] = m
            elif g > og:
                kept[m].append(p)
                if p in kept[other]:
                    kept[other].remove(p)
                owner[p] = m
    return PriorOwners({m: tuple(v) for m, v in kept.items()}, frozenset(dup), max_generation)


# ------------------------------------------------------------------------------------------
# User assignor modules


@contextmanager
def importable_module(directory: Path, monkeypatch, prefix: str, source: str) -> Iterator[str]:
    """Write ``source`` as a module named ``prefix_<random>`` in ``directory``, importable for the
    duration (a fresh name each time, so no test sees another's cached module)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    (directory / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(directory))
    try:
        yield name
    finally:
        sys.modules.pop(name, None)
