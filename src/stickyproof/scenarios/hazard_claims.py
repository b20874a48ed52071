"""Step 5 of ``generate.build_scenario``: the hazards, each counted by its knob and exact.

At 0 a knob produces none of what it names, and no step here produces it for another knob: a stale
member's claims are held meanwhile by the partition's current owner (never by a second member of
the current generation: a same-generation double claim comes only from ``double_claims``), and a
cooperative member never claims outside its subscription here (it revokes such partitions before
it joins; the ``topics-unsubscribed`` ownership is the one explicit source, models/protocol.md §9.4).
An eager member subscribed to nothing that exists may still list other topics' partitions (its
sticky user data keeps its last assignment, docs/rules.md §10 K3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import DEFAULT_GENERATION, Member, TopicPartition

if TYPE_CHECKING:  # pragma: no cover - annotations only (generate imports this module)
    from .generate import Draw, _Claims, _Group

__all__ = [
    "apply_stale",
    "apply_double_claims",
    "apply_unknown_generation",
    "apply_deleted_topic_claims",
    "apply_past_count_claims",
]

DELETED_TOPIC_PREFIX = "gone"

def _pick_distinct(draw: Draw, pool: list[str], k: int) -> list[str]:
    pool = list(pool)
    picked = []
    for _ in range(min(k, len(pool))):
        picked.append(pool.pop(draw.integer(0, len(pool) - 1)))
    return picked


def _subscribed_partitions(member: Member, counts: dict[str, int], group: _Group) -> list[TopicPartition]:
    """The existing partitions ``member`` subscribes to; for an eager member subscribed to none,
    every partition (its sticky user data may still list a dropped topic's, §10 K3); for a
    cooperative one, none (it revokes them before it joins)."""
    pool = [TopicPartition(t, p) for t in member.topics for p in range(counts.get(t, 0))]
    if pool or group.protocol == "cooperative":
        return pool
    return [TopicPartition(t, p) for t in sorted(counts) for p in range(counts[t])]


def apply_stale(draw: Draw, group: _Group, members: list[Member], counts: dict[str, int], claims: _Claims) -> None:
    """KIP-341's stalled member: it rejoins from generation ``G - d`` with claims the group reassigned.

    Each stale member keeps its prior claims (or, owning nothing, claims up to three of its
    subscribed partitions that no other stale member claims); every one of them is also claimed
    at the current generation by a member that did not stall, the one the group handed it to
    meanwhile: the partition's current owner when it has one (a second current claimant would be
    a same-generation double claim, which only ``double_claims`` makes), else a subscriber.
    """
    if len(members) < 2:
        return
    cooperative = group.protocol == "cooperative"
    shared = {m.id: {t for t in m.topics if counts.get(t, 0) and any(t in o.topics for o in members if o is not m)} for m in members}
    # A cooperative member claims only what it subscribes to, and someone else must subscribe to take it over.
    candidates = [m.id for m in members if shared[m.id] or not cooperative]
    k = draw.count("stale", cap=min(len(members) - 1, len(candidates)))
    if k == 0:
        return
    stale = _pick_distinct(draw, candidates, k)
    by_id = {m.id: m for m in members}
    current = [m for m in members if m.id not in stale]
    for member_id in stale:
        claims.generation[member_id] = group.generation - draw.integer(1, min(group.generation, 3))
        claims.locked.add(member_id)
        if not claims.owned[member_id] or (cooperative and not any(tp.topic in shared[member_id] for tp in claims.owned[member_id])):
            taken = {tp for other in stale if other != member_id for tp in claims.owned[other]}
            pool = [tp for tp in _subscribed_partitions(by_id[member_id], counts, group) if tp not in taken]
            if cooperative:
                pool = [tp for tp in pool if tp.topic in shared[member_id] and tp not in claims.owned[member_id]]
            how_many = draw.integer(1, min(3, len(pool))) if pool else 0
            for _ in range(how_many):
                claims.add(member_id, pool.pop(draw.integer(0, len(pool) - 1)))
        for tp in list(claims.owned[member_id]):
            owners = [m for m in current if tp in claims.owned[m.id] and claims.generation[m.id] == group.generation]
            if owners:
                taker = owners[0]
            else:
                subscribers = [m for m in current if tp.topic in m.topics]
                if not subscribers and group.protocol == "cooperative":
                    continue  # nobody may hold it: a cooperative member never claims outside its subscription here
                subscribers = subscribers or current
                taker = subscribers[draw.integer(0, len(subscribers) - 1)]
            claims.add(taker.id, tp, group.generation)
            claims.locked.add(taker.id)


def apply_double_claims(
    draw: Draw, group: _Group, members: list[Member], counts: dict[str, int], claims: _Claims
) -> None:
    """A partition claimed by two members of the current generation (both lose it, R8)."""
    eligible = [m for m in members if claims.generation[m.id] in (group.generation, DEFAULT_GENERATION)]
    eligible = [m for m in eligible if m.id not in claims.locked or claims.generation[m.id] == group.generation]
    if len(eligible) < 2:
        return
    if group.protocol == "cooperative":
        # Both claimants subscribe to the partition's topic (a cooperative member revokes the rest before joining).
        eligible = [m for m in eligible if any(counts.get(t, 0) and any(t in o.topics for o in eligible if o is not m) for t in m.topics)]
        if len(eligible) < 2:
            return
    for _ in range(draw.count("double_claims")):
        first = eligible[draw.integer(0, len(eligible) - 1)]
        pool = _subscribed_partitions(first, counts, group)
        others = [m for m in eligible if m.id != first.id]
        if group.protocol == "cooperative":
            pool = [tp for tp in pool if any(tp.topic in m.topics for m in others)]
        if not pool:
            return
        tp = pool[draw.integer(0, len(pool) - 1)]
        rivals = [m for m in others if tp.topic in m.topics] or others
        second = rivals[draw.integer(0, len(rivals) - 1)]
        for m in (first, second):
            claims.add(m.id, tp, group.generation)
            claims.locked.add(m.id)


def apply_unknown_generation(
    draw: Draw, group: _Group, members: list[Member], counts: dict[str, int], claims: _Claims
) -> None:
    """Claimants with generation -1 (old clients, R4); chosen among members no other hazard relies on."""
    free = [m for m in members if m.id not in claims.locked]
    if group.protocol == "cooperative":  # a member subscribed to nothing that exists has nothing to claim
        free = [m for m in free if claims.owned[m.id] or _subscribed_partitions(m, counts, group)]
    k = draw.count("unknown_generation", cap=len(free))
    for member_id in _pick_distinct(draw, [m.id for m in free], k):
        claims.generation[member_id] = DEFAULT_GENERATION
        claims.locked.add(member_id)
        if not claims.owned[member_id]:
            pool = _subscribed_partitions(next(m for m in members if m.id == member_id), counts, group)
            if pool:
                claims.add(member_id, pool[draw.integer(0, len(pool) - 1)])


def _claimant_generation(group: _Group, claims: _Claims, member_id: str) -> int | None:
    """A member given a first claim reports the current generation, unless a hazard fixed its generation."""
    if claims.owned[member_id] or member_id in claims.locked:
        return None
    return group.generation


def apply_deleted_topic_claims(draw: Draw, group: _Group, members: list[Member], claims: _Claims) -> None:
    """Claims on topics absent from the leader's metadata (dropped silently by Kafka, R5)."""
    if not members:
        return
    for i in range(draw.count("deleted_topic_claims")):
        member = members[draw.integer(0, len(members) - 1)]
        tp = TopicPartition(f"{DELETED_TOPIC_PREFIX}{i}", draw.integer(0, 3))
        claims.add(member.id, tp, _claimant_generation(group, claims, member.id))


def apply_past_count_claims(
    draw: Draw, group: _Group, members: list[Member], counts: dict[str, int], claims: _Claims
) -> None:
    """Claims on partition numbers >= the topic's count (metadata lagging a partition increase, §10 K1)."""
    if not members or not counts:
        return
    for _ in range(draw.count("past_count_claims")):
        member = members[draw.integer(0, len(members) - 1)]
        topics = [t for t in member.topics if t in counts] or sorted(counts)
        topic = topics[draw.integer(0, len(topics) - 1)]
        tp = TopicPartition(topic, counts[topic] + draw.integer(0, 2))
        while any(tp in mine for other, mine in claims.owned.items() if other != member.id):
            tp = TopicPartition(topic, tp.partition + 1)  # another member's claim there would be a double claim
        claims.add(member.id, tp, _claimant_generation(group, claims, member.id))
