"""Which partitions must be assigned, who may take them, and who may keep them.

The definitions are those of ``models/optimal-assignment.md`` §1 (D1-D4); every oracle engine
and grader reads them from here so that "retainable" means one thing in the whole oracle.
They are written from the model, not from the assignors: Kafka's own resolution
(``AbstractStickyAssignor.allSubscriptionsEqual`` / ``prepopulateCurrentAssignments``,
docs/rules.md R5-R10) differs on purpose where it depends on iteration order (R9), reads
generations asymmetrically (R10), or honours claims on nonexistent partitions (R6, §10 K1).

The dense form (``claim_table``) works on numpy arrays per topic so that a group with a million
claimed partitions is resolved in one pass over the claims; the dict forms are views of it.
``assignable_partitions`` and ``subscribers_by_topic`` spell D1 and D2 out as plain collections for
the tests (no engine reads them), so they are not in ``__all__``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..model import Index, Scenario, TopicPartition

__all__ = [
    "NO_MEMBER",
    "ClaimTable",
    "assignable_topics",
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
    metadata gets nothing; a topic nobody subscribes to is not assigned (docs/rules.md 0.4, N3).
    """
    return dict(Index.of(scenario, only_subscribed=True).topic_count)


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
    """Claims resolved per assignable partition, in the dense ids of ``index``.

    ``index``: ``model.Index.of(scenario, only_subscribed=True)``: members sorted (dense id =
    position), the assignable topics sorted, dense partition ids over sorted (topic, partition).
    Arrays over dense partition ids: ``owner_pid``: D3 current owner (the unique
    highest-generation claimant), or NO_MEMBER when nobody claims it or the highest generation is
    shared; ``retainer_pid``: D4 retainable claimant (the owner, if it still subscribes), or
    NO_MEMBER; ``claims_pid``: how many members claim it (any generation). ``subscribed``:
    boolean matrix [topic, member] over the sorted topics. ``owner[t]``, ``retainer[t]``,
    ``claims[t]`` are per-topic views.
    """

    index: Index
    owner_pid: np.ndarray
    retainer_pid: np.ndarray
    claims_pid: np.ndarray
    subscribed_matrix: np.ndarray

    @property
    def members(self) -> tuple[str, ...]:
        return self.index.members

    @property
    def topics(self) -> Mapping[str, int]:
        """The assignable topics, sorted, to their partition counts."""
        return self.index.topic_count

    @property
    def offset(self) -> Mapping[str, int]:
        """The dense id of partition 0 of each assignable topic."""
        return self.index.topic_offset

    def _view(self, arr: np.ndarray) -> dict[str, np.ndarray]:
        return {t: arr[self.offset[t] : self.offset[t] + c] for t, c in self.topics.items()}

    @property
    def owner(self) -> dict[str, np.ndarray]:
        return self._view(self.owner_pid)

    @property
    def retainer(self) -> dict[str, np.ndarray]:
        return self._view(self.retainer_pid)

    @property
    def claims(self) -> dict[str, np.ndarray]:
        return self._view(self.claims_pid)

    @property
    def subscribed(self) -> dict[str, np.ndarray]:
        return {t: self.subscribed_matrix[i] for i, t in enumerate(self.topics)}


def claim_table(scenario: Scenario) -> ClaimTable:
    """Resolve every member's stated ``owned``/``generation`` into D3 owners and D4 retainers.

    Claims on a topic that is not assignable, or on a partition number at or past the topic's
    count, are void (D3): they neither own nor block anything. The result does not depend on
    the order of ``members`` or of their claims (unlike Kafka's R9). One Python pass collects
    the claims; the resolution itself is vectorised over all claims at once.
    """
    ix = Index.of(scenario, only_subscribed=True)
    topics, index, topic_ix = ix.topics, ix.member_ids, ix.topic_ids
    counts = np.fromiter((ix.topic_count[t] for t in topics), dtype=np.int64, count=len(topics))
    starts = np.fromiter((ix.topic_offset[t] for t in topics), dtype=np.int64, count=len(topics))
    total = ix.num_partitions
    subscribed = np.zeros((len(topics), ix.num_members), dtype=bool)
    claim_topic: list[int] = []
    claim_part: list[int] = []
    claim_member: list[int] = []
    claim_gen: list[int] = []
    for m in scenario.members:
        mid = index[m.id]
        for t in m.topics:
            ti = topic_ix.get(t)
            if ti is not None:
                subscribed[ti, mid] = True
        if m.owned:
            owned_topics, owned_parts = zip(*m.owned)
            claim_topic.extend([topic_ix.get(t, -1) for t in owned_topics])
            claim_part.extend(owned_parts)
            claim_member.extend([mid] * len(owned_parts))
            claim_gen.extend([m.generation] * len(owned_parts))
    ct = np.asarray(claim_topic, dtype=np.int64)
    cp = np.asarray(claim_part, dtype=np.int64)
    cm = np.asarray(claim_member, dtype=np.int64)
    cg = np.asarray(claim_gen, dtype=np.int64)
    # D3: claims on missing or unassignable topics, or outside [0, count), are void (a negative
    # number only comes from a Scenario built in Python; the format rejects it)
    valid = ct >= 0
    valid[valid] = (cp[valid] >= 0) & (cp[valid] < counts[ct[valid]])
    pid = starts[ct[valid]] + cp[valid]
    cm, cg = cm[valid], cg[valid]
    claims_pid = np.bincount(pid, minlength=total).astype(np.int64)
    best_gen = np.full(total, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(best_gen, pid, cg)
    at_best = cg == best_gen[pid]
    n_best = np.bincount(pid[at_best], minlength=total)
    owner_pid = np.full(total, NO_MEMBER, dtype=np.int64)
    unique_best = at_best & (n_best[pid] == 1)
    owner_pid[pid[unique_best]] = cm[unique_best]
    # D4: the owner keeps only a topic it still subscribes to
    topic_of_pid = np.repeat(np.arange(len(topics), dtype=np.int64), counts)
    keep = owner_pid >= 0
    keep[keep] = subscribed[topic_of_pid[keep], owner_pid[keep]]
    retainer_pid = np.where(keep, owner_pid, NO_MEMBER)
    return ClaimTable(ix, owner_pid, retainer_pid, claims_pid, subscribed)


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
            if tp.topic in topics and 0 <= tp.partition < topics[tp.topic]:
                out.setdefault(tp, []).append(m.id)
    return {tp: tuple(sorted(out[tp])) for tp in sorted(out)}
