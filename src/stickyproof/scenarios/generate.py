"""One generator for the scenario space, written against a tiny ``Draw`` interface.

``build_scenario(draw)`` is the only description of how a group is drawn. It is run by two
drivers: ``strategies.groups()`` implements ``Draw`` over Hypothesis' ``data.draw`` (so
examples shrink), and ``sampler.sample(seed, index)`` implements it over a
``random.Random`` seeded from ``(seed, index)`` (so Spark tasks need no Hypothesis).

The order of steps, each a named function below:

1. group-level choices (protocol, subscription kind, prior ownership, racks, ...);
2. topics and partition counts (``_draw_topics``), replica racks;
3. members, each member's id, subscription, version, rack, instance id and assignor list drawn
   together (``_member``), as a list unique by id whose order is the JoinGroup order;
4. prior ownership (``_apply_ownership``): a balanced or skewed assignment of a *previous*
   world (members that have since left, partitions or topics since added or deleted), whose
   claims the members now report at the group's current generation;
5. hazards (``hazard_claims``), each counted by its knob: stale members, same-generation double
   claims, generation -1 claimants, claims on deleted topics and past the partition count.

Counts that the drawn group cannot hold are capped (a one-member group has no stale member).
Each knob is exact (``hazard_claims``): at 0 it produces none of what it names, and a cooperative
member claims outside its subscription only under the ``topics-unsubscribed`` ownership.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Hashable, Protocol, Sequence, TypeVar

from ..model import DEFAULT_GENERATION, Member, Scenario, Topic, TopicPartition
from .hazard_claims import (
    DELETED_TOPIC_PREFIX,
    apply_deleted_topic_claims,
    apply_double_claims,
    apply_past_count_claims,
    apply_stale,
    apply_unknown_generation,
)

__all__ = ["Draw", "build_scenario", "ASSIGNOR_POOL", "DELETED_TOPIC_PREFIX", "OLD_TOPIC_PREFIX"]

T = TypeVar("T")

#: Kafka's built-in client assignors, the names members advertise.
ASSIGNOR_POOL = ("range", "roundrobin", "sticky", "cooperative-sticky")
#: Topic name prefixes: ``t`` for live topics, ``old`` for the topic deleted by the
#: ``topics-deleted`` prior ownership, ``gone`` for the ``deleted_topic_claims`` hazard.
TOPIC_PREFIX = "t"
OLD_TOPIC_PREFIX = "old"


class Draw(Protocol):
    """What the generator may ask of a driver; every method is a single random choice.

    Drivers implement it twice: over Hypothesis (``integer`` is ``st.integers``, ``lists`` is
    ``st.lists(..., unique_by=...)``) and over a seeded ``random.Random``. Shrinking goes
    toward ``low``, ``False``, the first choice and the shortest list.
    """

    def integer(self, low: int, high: int) -> int: ...

    def boolean(self) -> bool: ...

    def choice(self, values: Sequence[T]) -> T: ...

    def count(self, knob: str, cap: int | None = None) -> int:
        """A value of a range knob, at most ``cap`` (when the knob's low bound exceeds ``cap``: ``cap``).

        Written once here from ``bounds`` and ``integer``; drivers subclass ``Draw`` to inherit it.
        """
        low, high = self.bounds(knob)
        if cap is not None:
            high = min(high, cap)
            low = min(low, high)
        return self.integer(low, high)

    def knob(self, knob: str) -> Any:
        """One value of a choice knob (``versions`` -> 3, 2, 1 or 0)."""
        ...

    def group_of_one(self) -> bool:
        """Whether to keep only the first of the members drawn. The seeded sampler never does (its
        member count is the ``members`` range as given); ``groups()`` does in a few groups, where
        its ``bounds("members")`` asks for two or more (``hypothesis_driver._Config.crowd``)."""
        return False

    def bounds(self, knob: str) -> tuple[int, int]:
        """The ``(low, high)`` of a range knob, for sizes drawn as list lengths (no random choice)."""
        ...

    def lists(
        self,
        element: Callable[["Draw"], T],
        *,
        min_size: int,
        max_size: int,
        unique_by: Callable[[T], Hashable] | None = None,
    ) -> list[T]: ...


@dataclass(frozen=True)
class _Group:
    """Group-level choices, drawn first so each member's fields can be drawn together."""

    protocol: str
    subscriptions: str
    ownership: str
    racks: str
    static: str
    assignors: str
    ids: str
    generation: int
    topic_names: tuple[str, ...]
    rack_pool: tuple[str, ...]
    assignor_list: tuple[str, ...]
    upgrade_to: str
    id_space: int
    dropped: str | None = None


@dataclass
class _Claims:
    """Mutable working state of steps 4-5: each member's claims (claim order) and generation."""

    owned: dict[str, list[TopicPartition]]
    generation: dict[str, int]
    locked: set[str] = field(default_factory=set)

    def add(self, member: str, tp: TopicPartition, generation: int | None = None) -> None:
        if tp not in self.owned[member]:
            self.owned[member].append(tp)
        if generation is not None:
            self.generation[member] = generation


def build_scenario(draw: Draw, *, name: str = "", max_members: int = 8) -> Scenario:
    """Draw one scenario; ``max_members`` sizes the id space (ids stay short and rarely collide)."""
    protocol = draw.knob("protocols")
    subscriptions = draw.knob("subscriptions")
    ownership = draw.knob("ownership")
    racks = draw.knob("racks")
    static = draw.knob("static")
    assignors = draw.knob("assignors")
    ids = draw.knob("ids")
    generation = draw.count("generation")

    topics = _draw_topics(draw)
    rack_pool: tuple[str, ...] = ()
    if racks != "none":
        rack_pool = tuple(f"r{i}" for i in range(draw.integer(1, 3)))
        if racks in ("replicas", "both"):
            topics = [_with_replica_racks(draw, t, rack_pool) for t in topics]
    assignor_list, upgrade_to = _draw_assignor_lists(draw, protocol, assignors)

    live = [t.name for t in topics if t.partitions > 0]
    # ``topics-unsubscribed`` in a group whose members will all list the same topics: the last topic with
    # partitions is one some members read before and nobody lists now (other kinds leave some topic unread).
    dropped = live[-1] if ownership == "topics-unsubscribed" and subscriptions == "uniform" and len(live) >= 2 else None
    group = _Group(
        protocol=protocol,
        subscriptions=subscriptions,
        ownership=ownership,
        racks=racks,
        static=static,
        assignors=assignors,
        ids=ids,
        generation=generation,
        topic_names=tuple(t.name for t in topics if t.name != dropped),
        dropped=dropped,
        rack_pool=rack_pool,
        assignor_list=assignor_list,
        upgrade_to=upgrade_to,
        id_space=max(10, 4 * max_members),
    )
    lo, hi = draw.bounds("members")
    members = draw.lists(lambda d: _member(d, group), min_size=lo, max_size=hi, unique_by=lambda m: m.id)
    if draw.group_of_one():
        members = members[:1]
    if subscriptions == "empty" and members and all(m.topics for m in members):
        # The kind promises at least one member subscribed to nothing (R13); the last one, so
        # the first members (the ones shrinking keeps) stay ordinary.
        members[-1] = replace(members[-1], topics=())

    claims = _Claims({m.id: [] for m in members}, {m.id: DEFAULT_GENERATION for m in members})
    counts = {t.name: t.partitions for t in topics}
    _apply_ownership(draw, group, members, counts, claims)
    apply_stale(draw, group, members, counts, claims)
    apply_double_claims(draw, group, members, counts, claims)
    apply_unknown_generation(draw, group, members, counts, claims)
    apply_deleted_topic_claims(draw, group, members, claims)
    apply_past_count_claims(draw, group, members, counts, claims)

    final = tuple(
        replace(m, owned=_grouped_by_topic(claims.owned[m.id]), generation=claims.generation[m.id]) for m in members
    )
    return Scenario(topics=tuple(topics), members=final, protocol=protocol, name=name)


def _grouped_by_topic(owned: list[TopicPartition]) -> tuple[TopicPartition, ...]:
    """Claim order as the document can write it: topics in first-claim order, each topic's claims in order."""
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in owned:
        by_topic.setdefault(tp.topic, []).append(tp)
    return tuple(tp for tps in by_topic.values() for tp in tps)


# ------------------------------------------------------------------------------------------
# Step 2: topics


def _draw_topics(draw: Draw) -> list[Topic]:
    lo, hi = draw.bounds("topics")
    counts = draw.lists(lambda d: d.count("partitions"), min_size=lo, max_size=hi)
    zero = draw.count("zero_partition_topics")
    topics = [Topic(f"{TOPIC_PREFIX}{i}", n) for i, n in enumerate(counts)]
    topics += [Topic(f"{TOPIC_PREFIX}{len(counts) + i}", 0) for i in range(zero)]
    return topics


def _with_replica_racks(draw: Draw, topic: Topic, pool: tuple[str, ...]) -> Topic:
    """Each partition's replicas sit on ``rf`` consecutive racks of the pool, starting at a drawn rack."""
    if topic.partitions == 0:
        return topic
    racks = []
    for _ in range(topic.partitions):
        start = draw.integer(0, len(pool) - 1)
        rf = draw.integer(1, len(pool))
        racks.append(tuple(pool[(start + j) % len(pool)] for j in range(rf)))
    return Topic(topic.name, topic.partitions, tuple(racks))


def _draw_assignor_lists(draw: Draw, protocol: str, kind: str) -> tuple[tuple[str, ...], str]:
    """The group's common assignor list and, for ``mixed``, the name upgraded members put first.

    Under COOPERATIVE every configured assignor must support it (R36), so the common list is
    ``cooperative-sticky`` alone.
    """
    if kind == "none":
        return (), ""
    if protocol == "cooperative":
        common: tuple[str, ...] = ("cooperative-sticky",)
    else:
        first = draw.choice(ASSIGNOR_POOL)
        common = (first,)
        if draw.boolean():
            common += (draw.choice([a for a in ASSIGNOR_POOL if a != first]),)
    upgrade_to = draw.choice([a for a in ASSIGNOR_POOL if a != common[0]]) if kind == "mixed" else ""
    return common, upgrade_to


# ------------------------------------------------------------------------------------------
# Step 3: members


def _member(draw: Draw, group: _Group) -> Member:
    """One member with every field drawn together (id, topics, version, rack, instance id, assignors)."""
    number = draw.integer(0, group.id_space - 1)
    if group.ids == "plain":
        member_id, suffix = f"c{number}", ""
    else:
        uuid = _uuid(draw.integer(0, 2**128 - 1))
        member_id, suffix = f"consumer-g-{number}-{uuid}", f"-{uuid}"
    topics = _subscription(draw, group)
    version = draw.knob("versions")
    rack = None
    if group.racks in ("members", "both"):
        rack = draw.choice(group.rack_pool + (None,))
    instance_id = None
    if group.static == "all" or (group.static == "some" and draw.boolean()):
        # Unique as member ids are (kafka-style ids share numbers): two members of a group never share a
        # group.instance.id (the broker fences the older one, KIP-345).
        instance_id = f"instance-{number}{suffix}"
    assignors = group.assignor_list
    if group.assignors == "mixed" and draw.boolean():
        assignors = (group.upgrade_to,) + tuple(a for a in group.assignor_list if a != group.upgrade_to)
    return Member(
        id=member_id, topics=topics, version=version, rack=rack, instance_id=instance_id, assignors=assignors
    )


def _uuid(value: int) -> str:
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _subscription(draw: Draw, group: _Group) -> tuple[str, ...]:
    names = group.topic_names
    kind = group.subscriptions
    if kind == "uniform":
        return names
    if kind == "empty":
        return () if draw.boolean() else names
    if kind == "nested":
        return names[: draw.integer(1, len(names))]
    if kind == "disjoint":
        half = (len(names) + 1) // 2
        second = names[half:]
        return second if second and draw.boolean() else names[:half]
    # heterogeneous: a non-empty subset, drawn topic by topic (shrinks toward the first topic).
    chosen = tuple(t for t in names if draw.boolean())
    return chosen or (names[draw.integer(0, len(names) - 1)],)


# ------------------------------------------------------------------------------------------
# Step 4: prior ownership


def _apply_ownership(
    draw: Draw, group: _Group, members: list[Member], counts: dict[str, int], claims: _Claims
) -> None:
    """Claims from an assignment of a previous world, reported at the current generation.

    ``members-left``: the previous group had extra members (copies of drawn members'
    subscriptions) whose shares are now unowned. ``members-joined``: the last drawn members
    are new (generation -1, nothing owned). ``partitions-added``/``-deleted``: some topic had
    fewer/more partitions then (more: claims past today's count, §10 K1). ``topics-added``:
    a topic did not exist then. ``topics-deleted``: a topic ``old0`` existed then and is gone
    now; its subscribers may still list it. ``topics-unsubscribed``: some members read the last
    topic then (it still exists; nobody lists it now) and still claim its partitions (§10 K3/K4
    inputs; the only way a cooperative member here claims outside its subscription).
    """
    kind = group.ownership
    if kind == "none" or not members:
        return
    subs = {m.id: set(m.topics) for m in members}
    previous_members = [m.id for m in members]
    previous_counts = {t: n for t, n in counts.items() if n > 0}
    live = [t for t in group.topic_names if counts[t] > 0]

    if kind == "members-left":
        for i in range(draw.integer(1, 3)):
            ghost = f"left-{i}"
            subs[ghost] = set(members[draw.integer(0, len(members) - 1)].topics)
            previous_members.append(ghost)
    elif kind == "members-joined":
        joined = draw.integer(1, len(members))
        previous_members = previous_members[: len(members) - joined]
    elif kind == "partitions-added" and live:
        for t in live:
            if draw.boolean() or t == live[-1]:
                previous_counts[t] = counts[t] - draw.integer(1, counts[t])
    elif kind == "partitions-deleted" and live:
        for t in live:
            if draw.boolean() or t == live[-1]:
                previous_counts[t] = counts[t] + draw.integer(1, 3)
    elif kind == "topics-added" and live:
        del previous_counts[live[draw.integer(0, len(live) - 1)]]
    elif kind == "topics-unsubscribed":
        # Some members that do not list a topic now read it then (nobody, or others, still do).
        readers = [m for m in members if m.topics]
        unread = [t for t, n in counts.items() if n > 0 and any(t not in m.topics for m in readers)]
        if unread:
            topic = group.dropped or unread[draw.integer(0, len(unread) - 1)]
            droppers = [m for m in readers if topic not in m.topics]
            for i, m in enumerate(droppers):
                if i == 0 or draw.boolean():
                    subs[m.id].add(topic)
    elif kind == "topics-deleted":
        old = f"{OLD_TOPIC_PREFIX}0"
        previous_counts[old] = draw.integer(1, 4)
        still_listed = draw.boolean()
        for i in _old_topic_subscribers(draw, group, members):
            subs[members[i].id].add(old)
            if still_listed:
                members[i] = replace(members[i], topics=members[i].topics + (old,))

    partitions = [TopicPartition(t, p) for t in sorted(previous_counts) for p in range(previous_counts[t])]
    rotation = draw.integer(0, max(0, len(previous_members) - 1))
    order = previous_members[rotation:] + previous_members[:rotation]
    if kind == "skewed":
        heavy = set(order[: draw.integer(1, max(1, len(order) // 2))])
        plan = _least_loaded_assignment(partitions, order, subs, prefer=heavy)
    else:
        plan = _least_loaded_assignment(partitions, order, subs)
    # A hazard knob at 0 means none of its claims, whatever world the ownership drew (issue 11): the
    # previous world's shares of partitions or topics that are gone are then simply not claimed.
    no_past_count = draw.bounds("past_count_claims")[1] == 0
    no_missing_topic = draw.bounds("deleted_topic_claims")[1] == 0
    present = set(claims.owned)
    for member_id in previous_members:
        if member_id not in present:
            continue  # a member that has left: its claims leave with it
        claims.generation[member_id] = group.generation
        for tp in plan.get(member_id, []):
            if tp.topic not in counts and no_missing_topic:
                continue
            if tp.topic in counts and tp.partition >= counts[tp.topic] and no_past_count:
                continue
            claims.add(member_id, tp)


def _old_topic_subscribers(draw: Draw, group: _Group, members: list[Member]) -> list[int]:
    """Who subscribed to the since-deleted topic: chosen so the subscription kind still holds when
    they keep listing it (uniform and nested: every non-empty member; disjoint: one half)."""
    nonempty = [i for i, m in enumerate(members) if m.topics]
    if not nonempty:
        return []
    if group.subscriptions == "disjoint":
        first = set(members[nonempty[0]].topics)
        return [i for i in nonempty if set(members[i].topics) == first]
    if group.subscriptions == "heterogeneous":
        return [i for i in nonempty if i == nonempty[0] or draw.boolean()]
    return nonempty


def _least_loaded_assignment(
    partitions: list[TopicPartition],
    order: list[str],
    subs: dict[str, set[str]],
    prefer: set[str] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Each partition to the least-loaded subscriber (first in ``order`` on ties); ``prefer``ed members first."""
    load = {m: 0 for m in order}
    plan: dict[str, list[TopicPartition]] = {m: [] for m in order}
    subscribers: dict[str, list[str]] = {}
    for m in order:
        for t in subs[m]:
            subscribers.setdefault(t, []).append(m)
    for tp in partitions:
        candidates = subscribers.get(tp.topic, [])
        if prefer:
            candidates = [m for m in candidates if m in prefer] or candidates
        if not candidates:
            continue
        best = min(candidates, key=lambda m: load[m])
        load[best] += 1
        plan[best].append(tp)
    return plan
