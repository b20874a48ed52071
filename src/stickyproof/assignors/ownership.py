"""Prior-ownership resolution and path selection: who keeps which claimed partition (docs/rules.md §1.2-§1.3, §2.1).

Kafka fuses all of this into ``AbstractStickyAssignor.allSubscriptionsEqual``, which fills two
out-parameters and an instance field while it answers a yes/no question. Here it is split:

* ``resolve_prior_owners(inp, release)`` returns a frozen ``PriorOwners`` (R5-R11), by the
  release's ``OwnershipRule``;
* ``all_subscriptions_equal(inp)`` is a pure predicate (R12-R13), ``takes_constrained_path``
  adds the release's answer to "had it a constrained path at all".

Releases (§1.3) differ in how claims are resolved; each rule is one named ``OwnershipRule`` (one
resolver per path) whose functions say exactly which release did what:

    PER_PARTITION           current (3.5.2 / 3.6.0 on): per partition, rival read from the wire (R7-R10)
    PER_PARTITION_3_5_1     3.4.1-3.5.1: the same, but losers overwrite the owner map (fixed by KAFKA-15106)
    HIGHEST_GENERATION_3_0  3.0-3.3: highest generation only, on both paths, claims made twice in it
                            dropped by both (KAFKA-12984)
    HIGHEST_GENERATION_ONLY 2.6-2.8: highest generation only on the constrained path,
                            per-partition TreeMap by generation on the general path
    HIGHEST_GENERATION_2_8  2.8.1-2.8.2: the same, and partitions claimed twice within the highest
                            generation dropped from every claimant (KAFKA-13081)
    TREEMAP_BY_GENERATION   2.4-2.5: the TreeMap rule (the 2.4 cooperative assignor: no generation)
    TRUST_EVERY_CLAIM       2.2: every claim trusted, duplicates kept by every claimant (KAFKA-7026)

The current rule is computed in bulk: claims are interned into integer keys with numpy, only the
partitions claimed more than once are replayed one by one, in Kafka's order (members in map order,
claims in claim order). Each contested partition's fate depends only on its own claimants, so the
replay per partition is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from ..javaorder import hashmap_order, topic_partition_hash
from ..model import DEFAULT_GENERATION, TopicPartition
from .sticky_types import MemberData, PriorOwners, StickyInput

if TYPE_CHECKING:
    from .releases import Release

__all__ = [
    "OwnershipRule",
    "PER_PARTITION",
    "PER_PARTITION_3_5_1",
    "HIGHEST_GENERATION_ONLY",
    "HIGHEST_GENERATION_2_8",
    "HIGHEST_GENERATION_3_0",
    "TREEMAP_BY_GENERATION",
    "TRUST_EVERY_CLAIM",
    "resolve_prior_owners",
    "resolve_per_partition",
    "resolve_per_partition_3_5_1",
    "resolve_highest_generation_only",
    "resolve_highest_generation_3_0",
    "resolve_highest_generation_2_8",
    "resolve_treemap_by_generation",
    "resolve_trust_every_claim",
    "all_subscriptions_equal",
    "members_read_by_all_subscriptions_equal",
    "takes_constrained_path",
    "member_generation",
    "intern_claims",
    "topic_layout",
    "replay_contested",
    "owner_after_lost_claim_current",
    "owner_after_lost_claim_3_5_1",
]


# ------------------------------------------------------------------------------------------
# Path selection (R12-R13)


def _seed_topics(seed: frozenset[str], topics: Sequence[str]) -> frozenset[str]:
    """R13 seeding bug: ``subscribedTopics`` is (re)filled from every member while it is still empty.

    ``allSubscriptionsEqual`` tests ``subscribedTopics.isEmpty()`` before comparing, so members with
    an empty subscription that iterate before the first non-empty one are never compared: the
    group ``{a: [], b: [t], c: [t]}`` is "all equal" when ``a`` comes first in map order.
    """
    return frozenset(topics) if not seed else seed


def all_subscriptions_equal(inp: StickyInput) -> bool:
    """``allSubscriptionsEqual``'s answer alone (R12): same size as, and contained in, the seeded topic set.

    Members are visited in Java ``HashMap`` order (``inp.members``); raw topic lists are compared,
    so a subscription to a topic that does not exist still makes a member different (R12). The
    seed comes from the first member with a non-empty list (R13, ``_seed_topics``).
    """
    seed: frozenset[str] = frozenset()
    for member in inp.members:
        topics = inp.subscriptions[member]
        if not seed:
            seed = _seed_topics(seed, topics)
            continue
        # Java compares List.size() with the seed set's size: duplicates in a raw list count.
        if not (len(topics) == len(seed) and seed.issuperset(topics)):
            return False
    return True


def members_read_by_all_subscriptions_equal(inp: StickyInput) -> tuple[str, ...]:
    """The members whose ``memberData`` ``allSubscriptionsEqual`` called: those before the first whose
    subscription differs (every member when none does), in map order.

    It matters where a second ``memberData`` call sees something else (``UserData.read_again``):
    the 2.5-2.8 general path reads each member again after the scan.
    """
    seed: frozenset[str] = frozenset()
    for i, member in enumerate(inp.members):
        topics = inp.subscriptions[member]
        if not seed:
            seed = _seed_topics(seed, topics)
        elif not (len(topics) == len(seed) and seed.issuperset(topics)):
            return inp.members[:i]
    return inp.members


def takes_constrained_path(inp: StickyInput, release: Release) -> bool:
    """R12: equal subscriptions take the constrained path, in releases that have one (2.6 on, KAFKA-9987)."""
    return release.constrained_path and all_subscriptions_equal(inp)


# ------------------------------------------------------------------------------------------
# Generations (R4, R10)


def member_generation(data: MemberData) -> int:
    """``memberData.generation.orElse(DEFAULT_GENERATION)``: absent and -1 compare alike (R4)."""
    return DEFAULT_GENERATION if data.generation is None else data.generation


def _rival_generation(inp: StickyInput, rival: str) -> int:
    """R10 asymmetry: the recorded owner's generation is read from its *wire* subscription.

    ``subscriptions.get(otherConsumer).generationId()``, not the rival's member data. For v0/v1
    members (and eager members whose wire generation was reset) this is -1 even when their user
    data carries a real generation, so a later claimant with any generation >= 0 beats them.
    """
    return inp.wire_generation.get(rival, DEFAULT_GENERATION)


# ------------------------------------------------------------------------------------------
# Current rule (3.5.2 / 3.6.0 on): per-partition resolution R7-R8


def owner_after_lost_claim_current(owner: str, loser: str) -> str:
    """R8, ``g < og``: the recorded owner stays (fixed by KAFKA-15106 in 3.5.2 / 3.6.0)."""
    return owner


def owner_after_lost_claim_3_5_1(owner: str, loser: str) -> str:
    """3.5.1's quirk: ``allPreviousPartitionsToOwner.put(tp, consumer)`` ran before the comparison.

    The owner map is overwritten even when the newcomer loses, so a third claimant compares
    against the loser's generation instead of the keeper's. Claims in generations 2, 1, 3 (in
    map order) leave the partition kept by both the gen-2 and the gen-3 member.
    """
    return loser


def replay_contested(
    inp: StickyInput,
    claimants: Sequence[tuple[str, int, int]],
    lost_claim_owner: Callable[[str, str], str],
) -> tuple[dict[tuple[str, int], None], bool]:
    """Replay R7-R8 for one partition over its claims ``(member, generation, claim position)`` in Kafka order.

    Returns the surviving (member, claim position) occurrences and whether the partition entered
    ``partitionsWithMultiplePreviousOwners``. ``List.remove`` removes the first occurrence, so a
    member's kept occurrences are popped from the front.
    """
    kept: dict[str, list[int]] = {}
    owner: str | None = None
    dup = False
    for member, generation, position in claimants:
        if owner is None:
            # R7: a lone claim is always honoured, whatever its generation.
            kept.setdefault(member, []).append(position)
            owner = member
            continue
        rival_generation = _rival_generation(inp, owner)
        if generation == rival_generation:
            # R8: same generation, both lose it; the newcomer becomes the recorded owner.
            dup = True
            if kept.get(owner):
                kept[owner].pop(0)
            owner = member
        elif generation > rival_generation:
            kept.setdefault(member, []).append(position)
            if kept.get(owner):
                kept[owner].pop(0)
            owner = member
        else:
            owner = lost_claim_owner(owner, member)
    survivors = {(m, p): None for m, positions in kept.items() for p in positions}
    return survivors, dup


def intern_claims(
    claims_per_member: Sequence[Sequence[TopicPartition]], topic_index: Mapping[str, int], counts: np.ndarray, offsets: np.ndarray
) -> tuple[list[TopicPartition], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flatten claims (members in the given order, claims in claim order) into integer arrays.

    Returns the flat claim list, claims per member, topic index (-1: topic not in
    ``topic_index``), partition number, and partition id (``offsets[topic] + partition``; -1 when
    the topic is unknown or the number is outside the topic's count, §10 K1).
    """
    lengths = np.fromiter(map(len, claims_per_member), dtype=np.int64, count=len(claims_per_member))
    total = int(lengths.sum())
    flat = list(chain.from_iterable(claims_per_member))
    tidx = np.fromiter(map(topic_index.get, map(itemgetter(0), flat), repeat(-1)), dtype=np.int64, count=total)
    part = np.fromiter(map(itemgetter(1), flat), dtype=np.int64, count=total)
    pid = np.full(total, -1, dtype=np.int64)
    known = tidx >= 0
    if total and len(counts):
        t = np.where(known, tidx, 0)
        in_range = known & (part >= 0) & (part < counts[t])
        pid[in_range] = offsets[t[in_range]] + part[in_range]
    return flat, lengths, tidx, part, pid


def topic_layout(topics: Sequence[str], ppt: Mapping[str, int]) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    counts = np.fromiter((ppt[t] for t in topics), dtype=np.int64, count=len(topics))
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if len(topics) else np.zeros(0, np.int64)
    return {t: i for i, t in enumerate(topics)}, counts, offsets


def _resolve_per_partition(inp: StickyInput, lost_claim_owner: Callable[[str, str], str]) -> PriorOwners:
    """R5-R11 in bulk: uncontested claims are kept as they are, contested ones are replayed (``replay_contested``)."""
    members = inp.members
    topic_index, counts, offsets = topic_layout(list(inp.partitions_per_topic), inp.partitions_per_topic)
    claims_per_member = [tuple(inp.member_data[m].partitions) for m in members]
    max_generation = max([DEFAULT_GENERATION, *(member_generation(inp.member_data[m]) for m in members)])
    flat, lengths, tidx, part, pid = intern_claims(claims_per_member, topic_index, counts, offsets)
    total = len(flat)
    if total == 0:
        return PriorOwners({m: () for m in members}, frozenset(), max_generation)

    valid = tidx >= 0  # R5: claims on topics outside partitionsPerTopic are dropped silently
    # R6: partition numbers are not checked: t-5 of a 3-partition topic is a claim like any other.
    in_range = pid >= 0
    contested = np.zeros(total, dtype=bool)
    if in_range.any():
        claim_count = np.bincount(pid[in_range], minlength=int(counts.sum()))
        contested[in_range] = claim_count[pid[in_range]] > 1
    out_of_range = np.flatnonzero(valid & ~in_range)
    if len(out_of_range):
        seen: dict[tuple[int, int], list[int]] = {}
        for pos in out_of_range.tolist():
            seen.setdefault((int(tidx[pos]), int(part[pos])), []).append(pos)
        for positions in seen.values():
            if len(positions) > 1:
                contested[positions] = True

    if not contested.any():
        if valid.all():
            owned = dict(zip(members, claims_per_member))
        else:
            owned = _filter_claims(members, claims_per_member, lengths, keep=valid)
        return PriorOwners(owned, frozenset(), max_generation)

    # Contested partitions, replayed in Kafka order: member map order, then claim order.
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    member_of = np.repeat(np.arange(len(members)), lengths)
    by_key: dict[tuple[int, int], list[tuple[str, int, int]]] = {}
    for pos in np.flatnonzero(contested).tolist():
        mi = int(member_of[pos])
        m = members[mi]
        key = (int(tidx[pos]), int(part[pos]))
        by_key.setdefault(key, []).append((m, member_generation(inp.member_data[m]), pos - int(starts[mi])))

    keep = valid & ~contested
    dup: set[TopicPartition] = set()
    member_index = {m: i for i, m in enumerate(members)}
    for claimants in by_key.values():
        survivors, is_dup = replay_contested(inp, claimants, lost_claim_owner)
        for m, p in survivors:
            keep[int(starts[member_index[m]]) + p] = True
        if is_dup:
            m0, _, p0 = claimants[0]
            claim = claims_per_member[member_index[m0]][p0]
            dup.add(TopicPartition(claim[0], claim[1]))
    owned = _filter_claims(members, claims_per_member, lengths, keep=keep)
    return PriorOwners(owned, frozenset(dup), max_generation)


def _filter_claims(
    members: Sequence[str], claims: Sequence[tuple[TopicPartition, ...]], lengths: np.ndarray, *, keep: np.ndarray
) -> dict[str, tuple[TopicPartition, ...]]:
    """Each member's claims where ``keep`` is set (a flat mask over all claims), in claim order."""
    out: dict[str, tuple[TopicPartition, ...]] = {}
    start = 0
    for m, c, n in zip(members, claims, lengths.tolist()):
        mask = keep[start : start + n]
        out[m] = c if mask.all() else tuple(tp for tp, k in zip(c, mask.tolist()) if k)
        start += n
    return out


# ------------------------------------------------------------------------------------------
# Historical rules (§1.3)


def resolve_trust_every_claim(inp: StickyInput) -> PriorOwners:
    """2.2 (``StickyAssignor.prepopulateCurrentAssignments``): every claim in user data is trusted.

    User data V0 carried no generation, so a member that stalled, lost its partitions and came back
    still reports them, and both it and the new owner keep them: KAFKA-7026's duplicate ownership,
    the reason for KIP-341. No partition is recorded as multiply claimed.
    """
    all_topics = inp.partitions_per_topic
    owned = {m: tuple(tp for tp in inp.member_data[m].partitions if tp[0] in all_topics) for m in inp.members}
    return PriorOwners(owned, frozenset(), DEFAULT_GENERATION)


def resolve_treemap_by_generation(inp: StickyInput) -> PriorOwners:
    """2.4-2.8 general path (``prepopulateCurrentAssignments``): per partition a ``TreeMap<generation, member>``.

    The highest generation keeps the partition. A later claim with a *present* generation already
    in the map is skipped (first claimant wins); a claim without a generation is put under -1 and
    overwrites the previous -1 claimant (last claimant wins). The 2.4 cooperative assignor had no
    generation at all, so contested partitions silently went to the last claimant in map order:
    no duplicate detection, and the loser keeps consuming until it revokes. Each member's list
    comes out in ``HashMap<TopicPartition, ...>`` iteration order, as Kafka builds it.
    """
    all_topics = inp.partitions_per_topic
    by_partition: dict[TopicPartition, dict[int, str]] = {}
    for m in inp.members:
        data = inp.member_data[m]
        for tp in data.partitions:
            tp = TopicPartition(tp[0], tp[1])
            if tp.topic not in all_topics:
                continue
            consumers = by_partition.get(tp)
            if consumers is None:
                by_partition[tp] = {member_generation(data): m}
            elif data.generation is not None and data.generation in consumers:
                continue  # same partition twice in one generation: Kafka logs and skips
            else:
                consumers[member_generation(data)] = m
    owned: dict[str, list[TopicPartition]] = {m: [] for m in inp.members}
    for tp in hashmap_order(by_partition, lambda tp: topic_partition_hash(tp.topic, tp.partition)):
        consumers = by_partition[tp]
        owned[consumers[max(consumers)]].append(tp)
    max_generation = max([DEFAULT_GENERATION, *(member_generation(inp.member_data[m]) for m in inp.members)])
    return PriorOwners({m: tuple(v) for m, v in owned.items()}, frozenset(), max_generation)


def resolve_highest_generation_only(inp: StickyInput) -> PriorOwners:
    """2.6-3.5.0 constrained path: only members of the highest generation keep claims, all of them.

    A member below the running maximum keeps nothing, even uncontested partitions; a member
    without a generation counts only while no member with a generation has been seen. Duplicate
    claims within the highest generation are not detected. Up to 2.8 the scan returned at the
    first member whose subscription differed, leaving later members' claims uncollected; that
    only ever happened on the way to the general path, which re-read every claim itself
    (``resolve_treemap_by_generation``), so ``resolve_prior_owners`` models it by choosing that rule.
    """
    all_topics = inp.partitions_per_topic
    max_generation = DEFAULT_GENERATION
    current: list[str] = []
    old: list[str] = []
    owned: dict[str, tuple[TopicPartition, ...]] = {}
    for m in inp.members:
        data = inp.member_data[m]
        owned[m] = ()
        present = data.generation is not None
        if (present and data.generation >= max_generation) or (not present and max_generation == DEFAULT_GENERATION):
            if present and data.generation > max_generation:
                old.extend(current)
                current = []
                max_generation = data.generation
            current.append(m)
            owned[m] = tuple(tp for tp in data.partitions if tp[0] in all_topics)
    for m in old:
        owned[m] = ()
    return PriorOwners(owned, frozenset(), max_generation)


def resolve_highest_generation_2_8(inp: StickyInput) -> PriorOwners:
    """2.8.1-2.8.2 constrained path (KAFKA-13081): highest generation only, and a partition claimed twice
    within it is taken from every claimant and recorded in ``partitions_with_multiple_previous_owners``.

    The first claimant keeps it until the second claim, which removes it from the first (once, from
    the first claimant's list even when that is the same member listing it twice) and marks it; a
    rise in generation forgets the marks along with the lower generation's claims.
    """
    all_topics = inp.partitions_per_topic
    max_generation = DEFAULT_GENERATION
    current: list[str] = []
    owned: dict[str, list[TopicPartition]] = {}
    first_owner: dict[TopicPartition, str] = {}
    multiple: set[TopicPartition] = set()
    for m in inp.members:
        data = inp.member_data[m]
        owned[m] = []
        present = data.generation is not None
        if (present and data.generation >= max_generation) or (not present and max_generation == DEFAULT_GENERATION):
            if present and data.generation > max_generation:
                first_owner.clear()
                multiple.clear()
                for dropped in current:
                    owned[dropped].clear()
                current = []
                max_generation = data.generation
            current.append(m)
            for tp in data.partitions:
                if tp[0] not in all_topics:
                    continue
                tp = TopicPartition(tp[0], tp[1])
                other = first_owner.get(tp)
                if other is None:
                    first_owner[tp] = m
                    owned[m].append(tp)
                else:
                    if tp in owned[other]:
                        owned[other].remove(tp)
                    multiple.add(tp)
    return PriorOwners({m: tuple(v) for m, v in owned.items()}, frozenset(multiple), max_generation)


def resolve_highest_generation_3_0(inp: StickyInput) -> PriorOwners:
    """3.0-3.3 (``allSubscriptionsEqual`` after KAFKA-12984), on both paths: the highest generation only,
    with duplicates in it invalidated.

    A member counts while its generation is at least the running maximum (a member without one only
    while no member with one has been seen); a higher generation clears what the members before it
    kept and the duplicate set. Within the highest generation a partition claimed twice is dropped by
    every claimant (``List.remove``: the first occurrence) and enters the DUP set (R8); the rival is
    the last claimant recorded, not read from the wire (the wire had no generation before KIP-792).
    Up to 3.0 the recorded claimant stayed the first one (``containsKey``), from 3.1 the last
    (``put``): either way every claimant has dropped the partition, so both read the same here.
    """
    all_topics = inp.partitions_per_topic
    max_generation = DEFAULT_GENERATION
    current: list[str] = []
    owner_of: dict[tuple[str, int], str] = {}
    dup: set[TopicPartition] = set()
    owned: dict[str, list] = {}
    for m in inp.members:
        data = inp.member_data[m]
        owned[m] = []
        present = data.generation is not None
        if not ((present and data.generation >= max_generation) or (not present and max_generation == DEFAULT_GENERATION)):
            continue
        if present and data.generation > max_generation:
            owner_of.clear()
            dup.clear()
            for dropped in current:
                owned[dropped].clear()
            current = []
            max_generation = data.generation
        current.append(m)
        for tp in data.partitions:
            if tp[0] not in all_topics:
                continue
            key = (tp[0], tp[1])
            other = owner_of.get(key)
            owner_of[key] = m
            if other is None:
                owned[m].append(tp)
            else:
                rival = owned[other]
                for i, claimed in enumerate(rival):
                    if (claimed[0], claimed[1]) == key:
                        del rival[i]
                        break
                dup.add(TopicPartition(tp[0], tp[1]))
    return PriorOwners({m: tuple(v) for m, v in owned.items()}, frozenset(dup), max_generation)


# ------------------------------------------------------------------------------------------
# The rules, named


def resolve_per_partition(inp: StickyInput) -> PriorOwners:
    """R5-R11, the current rule (3.5.2 / 3.6.0 on, KAFKA-14639 + KAFKA-15106)."""
    return _resolve_per_partition(inp, owner_after_lost_claim_current)


def resolve_per_partition_3_5_1(inp: StickyInput) -> PriorOwners:
    """3.5.1's per-partition rule with the owner-map overwrite (``owner_after_lost_claim_3_5_1``)."""
    return _resolve_per_partition(inp, owner_after_lost_claim_3_5_1)


@dataclass(frozen=True)
class OwnershipRule:
    """How a release decides which claims each member keeps, one resolver per path.

    From 2.6 to 3.5.0 the constrained path collected claims itself (highest generation only) while
    the general path kept its own ``prepopulateCurrentAssignments``; from 3.5.1 one resolution
    serves both. A release without a constrained path only ever uses ``on_general_path``.
    """

    name: str
    on_constrained_path: Callable[[StickyInput], PriorOwners]
    on_general_path: Callable[[StickyInput], PriorOwners]

    def resolve(self, inp: StickyInput, *, constrained: bool) -> PriorOwners:
        return (self.on_constrained_path if constrained else self.on_general_path)(inp)


PER_PARTITION = OwnershipRule("per partition, rival generation from the wire (R7-R10)", resolve_per_partition, resolve_per_partition)
PER_PARTITION_3_5_1 = OwnershipRule(
    "per partition, owner map overwritten by losers (3.5.1)", resolve_per_partition_3_5_1, resolve_per_partition_3_5_1
)
HIGHEST_GENERATION_ONLY = OwnershipRule(
    "highest generation only (constrained path), TreeMap by generation (general path)",
    resolve_highest_generation_only,
    resolve_treemap_by_generation,
)
HIGHEST_GENERATION_2_8 = OwnershipRule(
    "highest generation only, double claims dropped (constrained path, KAFKA-13081), TreeMap by generation "
    "(general path)",
    resolve_highest_generation_2_8,
    resolve_treemap_by_generation,
)
HIGHEST_GENERATION_3_0 = OwnershipRule(
    "highest generation only, duplicates in it dropped (3.0-3.3)", resolve_highest_generation_3_0, resolve_highest_generation_3_0
)
TREEMAP_BY_GENERATION = OwnershipRule(
    "per-partition TreeMap by generation", resolve_treemap_by_generation, resolve_treemap_by_generation
)
TRUST_EVERY_CLAIM = OwnershipRule("every claim trusted (KAFKA-7026)", resolve_trust_every_claim, resolve_trust_every_claim)


def resolve_prior_owners(inp: StickyInput, release: Release) -> PriorOwners:
    """Which claimed partitions each member keeps before assignment (R5-R11, and §1.3's older rules).

    ``release.ownership_rule`` decides, on the path ``release`` takes for ``inp``.
    ``max_generation`` is computed afresh (Kafka's instance field never resets, R11; equal
    whenever generations do not go backwards).
    """
    return release.ownership_rule.resolve(inp, constrained=takes_constrained_path(inp, release))
