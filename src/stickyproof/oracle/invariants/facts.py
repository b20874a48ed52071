"""The facts of one assignment: one pass over it, every id interned once through ``model.Index``.

Members are numbered in sorted order, then the outsiders (ids the assignment names that are not
in the group), sorted; topics are every name the scenario or the assignment mentions, sorted
(a held topic may be missing from the metadata: ``nonexistent`` needs an id for it too); the
partitions of existing topics get the Index's bounds-checked partition ids. So numbering never
depends on input order, and the facts each invariant writes are a function of the sorted ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping

import numpy as np

from ...model import Assignment, Index, Scenario, TopicPartition

__all__ = ["Facts", "facts", "tp_json"]


def tp_json(tp: TopicPartition) -> list[Any]:
    """A partition as it appears in a witness: ``[topic, partition]``."""
    return [tp.topic, tp.partition]


@dataclass(frozen=True, eq=False)
class Facts:
    """One assignment against its scenario, keyed by the dense ids of ``index``.

    ``counts``: metadata partition counts (0 kept: a topic listed with no partitions);
    ``existing``: n(t) > 0 (E); ``assignable``: D1; ``assigned``/``revoking``/``held`` cover
    members and outsiders, ``held`` as member -> topic -> partitions in list order; ``loads``:
    members only; ``pending``: partitions withheld for revocation in a cooperative round (R40).
    """

    scenario: Scenario
    cooperative: bool
    index: Index
    counts: Mapping[str, int]
    existing: Mapping[str, int]
    assignable: Mapping[str, int]
    topics_of: Mapping[str, frozenset[str]]
    assigned: Mapping[str, tuple[TopicPartition, ...]]
    revoking: Mapping[str, tuple[TopicPartition, ...]]
    loads: Mapping[str, int]
    held: Mapping[str, Mapping[str, list[int]]]
    pending: int = 0

    @property
    def members(self) -> tuple[str, ...]:
        """The group's members, sorted (dense ids 0..M-1)."""
        return self.index.members

    @property
    def outsiders(self) -> tuple[str, ...]:
        return self.index.outsiders

    @cached_property
    def ids(self) -> tuple[str, ...]:
        """Members then outsiders: every id in dense-id order."""
        return self.index.members + self.index.outsiders

    @property
    def mid(self) -> Mapping[str, int]:
        return self.index.member_ids

    @property
    def tid(self) -> Mapping[str, int]:
        return self.index.topic_ids

    def member_name(self, i: int) -> str:
        return self.index.member(i)

    @cached_property
    def multiplicity_rows(self) -> list[tuple[str, int, int, int]]:
        """Rows (topic, k, first partition, how many) over E: k = how often the partition is placed
        (assignment, plus revoking in a cooperative round). Shared by ``unassigned`` and ``duplicate``."""
        ix = self.index
        # A partition withheld from several former claimants is revoked by each of them (D5, N4): it
        # counts once, and not at all when a member is assigned it (the revokers give up a stale
        # belief while its holder keeps or takes it: one holder, models/invariants.md §1).
        given = {tp for tps in self.assigned.values() for tp in tps}
        withheld = sorted({tp for tps in self.revoking.values() for tp in tps} - given) if self.cooperative else []
        pid = ix.partition_id
        placed = [p for tps in (*self.assigned.values(), withheld) for tp in tps if (p := pid(tp.topic, tp.partition)) is not None]
        times = np.bincount(np.asarray(placed, dtype=np.int64), minlength=ix.num_partitions)
        rows = []
        for t in sorted(self.existing):
            start = ix.topic_offset[t]
            ks, first, size = np.unique(times[start : start + self.existing[t]], return_index=True, return_counts=True)
            rows += [(t, k, f, n) for k, f, n in zip(ks.tolist(), first.tolist(), size.tolist())]
        return rows


def facts(scenario: Scenario, assignment: Assignment, cooperative: bool) -> Facts:
    """Everything the invariants read, from one pass over ``assignment``."""
    group = tuple(m.id for m in scenario.members)
    members = sorted(group)
    in_group = set(group)
    # A client reads its partition list as a set: a partition listed twice by one member is held
    # once (not a duplicate, and one unit of load).
    assigned = {m: tuple(dict.fromkeys(assignment.assignment.get(m, ()))) for m in members}
    revoking = {m: tuple(dict.fromkeys(assignment.revoking.get(m, ()))) for m in members}
    extra = sorted((set(assignment.assignment) | set(assignment.revoking)) - in_group)
    for o in extra:
        assigned[o] = tuple(dict.fromkeys(assignment.assignment.get(o, ())))
        revoking[o] = tuple(dict.fromkeys(assignment.revoking.get(o, ())))
    counts = {t.name: t.partitions for t in scenario.topics}
    existing = {t: n for t, n in counts.items() if n > 0}
    subscribed = {t for m in scenario.members for t in m.topics}
    assignable = {t: n for t, n in existing.items() if t in subscribed}
    names = set(counts) | subscribed
    held: dict[str, dict[str, list[int]]] = {}
    for m, tps in assigned.items():
        per: dict[str, list[int]] = {}
        for tp in tps:
            per.setdefault(tp.topic, []).append(tp.partition)
        held[m] = per
        names.update(per)
    for tps in revoking.values():
        names.update(tp.topic for tp in tps)
    for m in scenario.members:
        names.update(tp.topic for tp in m.owned)
    index = Index(group, {t: existing.get(t, 0) for t in names}, outsiders=tuple(extra))
    topics_of = {m.id: frozenset(m.topics) for m in scenario.members}
    for o in extra:
        topics_of[o] = frozenset()
    pending = 0
    if cooperative:
        pending = len({tp for tps in revoking.values() for tp in tps if 0 <= tp.partition < assignable.get(tp.topic, 0)})
    return Facts(
        scenario=scenario,
        cooperative=cooperative,
        index=index,
        counts=counts,
        existing=existing,
        assignable=assignable,
        topics_of=topics_of,
        assigned=assigned,
        revoking=revoking,
        loads={m: len(assigned[m]) for m in index.members},
        held=held,
        pending=pending,
    )
