"""Which partitions must be assigned, who may take them, and who may keep them.

The definitions are those of ``models/optimal-assignment.md`` §1 (D1-D4); every oracle engine
and grader reads them from here so that "retainable" means one thing in the whole oracle.
They are written from the model, not from the assignors: Kafka's own resolution
(``AbstractStickyAssignor.allSubscriptionsEqual`` / ``prepopulateCurrentAssignments``,
KAFKA_SEMANTICS.md R5-R10) differs on purpose where it depends on iteration order (R9), reads
generations asymmetrically (R10), or honours claims on nonexistent partitions (R6, K1).

The dense form (``claim_table``) works on numpy arrays per topic so that a group with a million
claimed partitions is resolved in one pass over the claims; the dict forms are views of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..model import Scenario, TopicPartition

__all__ = [
    "NO_MEMBER",
    "ClaimTable",
    "assignable_topics",
    "assignable_partitions",
    "subscribers_by_topic",
    "claim_table",
    "current_owners",
    "retainable_claims",
    "claimants",
]

NO_MEMBER = -1
"""Dense member id meaning "nobody" in ``ClaimTable`` arrays."""


def assignable_topics(scenario: Scenario) -> dict[str, int]:
    """D1: topics that exist with at least one partition and that at least one member subscribes to.

    Sorted by name, to their partition count. A subscription to a topic absent from the
    metadata gets nothing; a topic nobody subscribes to is not assigned (KAFKA_SEMANTICS 0.4, N3).
    """
    subscribed = {t for m in scenario.members for t in m.topics}
    counts = {t.name: t.partitions for t in scenario.topics if t.partitions > 0 and t.name in subscribed}
    return {name: counts[name] for name in sorted(counts)}


def assignable_partitions(scenario: Scenario) -> list[TopicPartition]:
    """D1: every partition that must go to exactly one subscriber, sorted by (topic, partition)."""
    return [TopicPartition(t, p) for t, n in assignable_topics(scenario).items() for p in range(n)]


def subscribers_by_topic(scenario: Scenario) -> dict[str, tuple[str, ...]]:
    """D2: each assignable topic to the sorted ids of the members that subscribe to it."""
    topics = assignable_topics(scenario)
    subs: dict[str, list[str]] = {t: [] for t in topics}
    for m in scenario.members:
        for t in set(m.topics):
            if t in subs:
                subs[t].append(m.id)
    return {t: tuple(sorted(subs[t])) for t in topics}


@dataclass(frozen=True, eq=False)
class ClaimTable:
    """Claims resolved per assignable partition, in dense ids.

    ``members``: member ids sorted (dense id = position). ``topics``: assignable topics sorted,
    to their partition count. Per topic, arrays indexed by partition number:
    ``owner[t][p]``: D3 current owner (the unique highest-generation claimant), or NO_MEMBER when
    nobody claims p or the highest generation is shared; ``retainer[t][p]``: D4 retainable claimant
    (the owner, if it still subscribes to t), or NO_MEMBER; ``claims[t][p]``: how many members
    claim p (any generation). ``subscribed[t]``: boolean mask over members.
    """

    members: tuple[str, ...]
    topics: Mapping[str, int]
    owner: Mapping[str, np.ndarray]
    retainer: Mapping[str, np.ndarray]
    claims: Mapping[str, np.ndarray]
    subscribed: Mapping[str, np.ndarray]

    def member_index(self) -> dict[str, int]:
        return {m: i for i, m in enumerate(self.members)}


def claim_table(scenario: Scenario) -> ClaimTable:
    """Resolve every member's stated ``owned``/``generation`` into D3 owners and D4 retainers.

    Claims on a topic that is not assignable, or on a partition number at or past the topic's
    count, are void (D3): they neither own nor block anything. The result does not depend on
    the order of ``members`` or of their claims (unlike Kafka's R9).
    """
    topics = assignable_topics(scenario)
    members = tuple(sorted(m.id for m in scenario.members))
    index = {m: i for i, m in enumerate(members)}
    n = len(members)
    best_gen = {t: np.full(c, np.iinfo(np.int64).min, dtype=np.int64) for t, c in topics.items()}
    best = {t: np.full(c, NO_MEMBER, dtype=np.int64) for t, c in topics.items()}
    tie = {t: np.zeros(c, dtype=bool) for t, c in topics.items()}
    count = {t: np.zeros(c, dtype=np.int64) for t, c in topics.items()}
    subscribed = {t: np.zeros(n, dtype=bool) for t in topics}
    for m in scenario.members:
        mid = index[m.id]
        for t in m.topics:
            if t in subscribed:
                subscribed[t][mid] = True
        by_topic: dict[str, list[int]] = {}
        for tp in m.owned:
            if tp.topic in topics:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
        g = m.generation
        for t, plist in by_topic.items():
            parts = np.asarray(plist, dtype=np.int64)
            parts = parts[parts < topics[t]]  # D3: claims past the partition count are void
            if parts.size == 0:
                continue
            count[t][parts] += 1  # a member lists a partition at most once (the reader enforces it)
            cur = best_gen[t][parts]
            higher = parts[g > cur]
            equal = parts[g == cur]
            best_gen[t][higher] = g
            best[t][higher] = mid
            tie[t][higher] = False
            tie[t][equal] = True
    owner = {t: np.where(tie[t], NO_MEMBER, best[t]) for t in topics}
    retainer = {}
    for t in topics:
        o = owner[t]
        keep = o >= 0
        keep[keep] = subscribed[t][o[keep]]  # D4: the owner keeps only a topic it still subscribes to
        retainer[t] = np.where(keep, o, NO_MEMBER)
    return ClaimTable(members, topics, owner, retainer, count, subscribed)


def _as_dict(table: ClaimTable, arrays: Mapping[str, np.ndarray]) -> dict[TopicPartition, str]:
    out: dict[TopicPartition, str] = {}
    for t in table.topics:
        arr = arrays[t]
        for p in np.flatnonzero(arr >= 0).tolist():
            out[TopicPartition(t, p)] = table.members[int(arr[p])]
    return out


def current_owners(scenario: Scenario) -> dict[TopicPartition, str]:
    """D3: assignable partition -> its unique highest-generation claimant (whether or not it still subscribes)."""
    table = claim_table(scenario)
    return _as_dict(table, table.owner)


def retainable_claims(scenario: Scenario) -> dict[TopicPartition, str]:
    """D4: assignable partition -> the member that may keep it (sorted by partition).

    The unique highest-generation claimant of an existing partition is its current owner; the
    others hold stale beliefs. It may keep the partition only if it still subscribes to the
    topic. A shared highest generation means nobody may keep it. Claims on nonexistent
    partitions or topics are void.
    """
    table = claim_table(scenario)
    return _as_dict(table, table.retainer)


def claimants(scenario: Scenario) -> dict[TopicPartition, tuple[str, ...]]:
    """Assignable partition -> every member that lists it in ``owned`` (any generation), sorted.

    Used for cooperative rounds (O4): a partition whose target owner is not its only claimant
    must first be revoked by the others.
    """
    topics = assignable_topics(scenario)
    out: dict[TopicPartition, list[str]] = {}
    for m in scenario.members:
        for tp in m.owned:
            if tp.topic in topics and tp.partition < topics[tp.topic]:
                out.setdefault(tp, []).append(m.id)
    return {tp: tuple(sorted(out[tp])) for tp in sorted(out)}
