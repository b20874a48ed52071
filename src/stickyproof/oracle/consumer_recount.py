"""K1-K4 recounted from an assignment and the scenario alone, with numpy (models/optimal-assignment.md §10).

The recount every consumer-group optimum is checked against, and what grading counts an assignor's
answer with. It reads the scenario on its own, apart from ``consumer_classes`` (which builds the
flow's classes): a mistake in reading holders or replica racks there would otherwise grade itself
as correct. Per partition it does array work only: the assignment's partitions are flattened once
into topic, partition and member codes, and every tier is a sum over those arrays. Partitions the
metadata does not know (a topic it lacks, a partition past the topic's count) are counted one by
one, by the same rules, as the plain loop did.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import itemgetter
from typing import Mapping, Sequence

import numpy as np

from ..model import Assignment, Scenario, TopicPartition

__all__ = ["recount", "recount_placed"]

_topic_of = itemgetter(0)
_partition_of = itemgetter(1)


def _flatten(groups: Sequence[Sequence[TopicPartition]], topic_code: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray, list]:
    """Every partition of ``groups`` in order: topic codes (-1: a topic the metadata lacks), partition
    numbers, and the flat list itself (for the few the arrays cannot place)."""
    flat = list(chain.from_iterable(groups))
    codes = np.fromiter(map(topic_code.get, map(_topic_of, flat), repeat(-1)), dtype=np.int64, count=len(flat))
    parts = np.fromiter(map(_partition_of, flat), dtype=np.int64, count=len(flat))
    return codes, parts, flat


class _Metadata:
    """The topics as arrays: partition ``p`` of topic ``i`` is flat index ``offset[i] + p``."""

    def __init__(self, scenario: Scenario) -> None:
        meta = {t.name: t for t in scenario.topics}
        self.topics = tuple(meta.values())
        self.code = {name: i for i, name in enumerate(meta)}
        self.count = np.asarray([t.partitions for t in self.topics], dtype=np.int64)
        self.offset = np.concatenate([[0], np.cumsum(self.count)]).astype(np.int64)

    def flat_index(self, codes: np.ndarray, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which entries name an existing partition, and the flat index of those."""
        known = codes >= 0
        safe = np.where(known, codes, 0)
        inside = known & (parts >= 0) & (parts < (self.count[safe] if self.topics else 0))
        return inside, self.offset[safe[inside]] + parts[inside]


def recount(scenario: Scenario, assignment: Assignment) -> tuple[int, int, int, int]:
    """(sum of squared loads, sum of squared per-topic counts, rack-local placements, kept placements)."""
    return recount_placed(scenario, assignment, None)[0]


def recount_placed(scenario: Scenario, assignment: Assignment, subscribers: Mapping[str, Sequence[str]] | None
                   ) -> tuple[tuple[int, int, int, int], list[str]]:
    """``recount``, and (given each assignable topic's subscribers) what keeps ``assignment`` from
    being a target: see ``_placement_failures``. One pass over the assignment's partitions for both."""
    meta = _Metadata(scenario)
    rack_of = {m.id: m.rack or None for m in scenario.members}
    items = list(assignment.assignment.items())
    sizes = np.asarray([len(tps) for _, tps in items], dtype=np.int64)
    sum_squares = int((sizes * sizes).sum())
    codes, parts, flat = _flatten([tps for _, tps in items], meta.code)
    member = np.repeat(np.arange(len(items), dtype=np.int64), sizes)
    # K2: per (member, topic) counts; a topic the metadata lacks gets a code of its own.
    topic_key = codes.copy()
    extra: dict[str, int] = {}
    for k in np.flatnonzero(codes < 0).tolist():
        topic_key[k] = len(meta.topics) + extra.setdefault(flat[k][0], len(extra))
    width = len(meta.topics) + len(extra) + 1
    cells = member * width + topic_key
    counts = np.bincount(cells) if len(items) * width <= 4 * cells.size + 2**20 else np.unique(cells, return_counts=True)[1]
    spread = int((counts * counts).sum())
    inside, index = meta.flat_index(codes, parts)
    outside = np.flatnonzero(~inside).tolist()
    # K4: who holds each partition in the current target (the last claim, as a dict would keep it).
    ids = {m: i for i, (m, _) in enumerate(items)}
    for m in scenario.members:
        ids.setdefault(m.id, len(ids))
    holder = np.full(int(meta.offset[-1]), -1, dtype=np.int64)
    owners = [m for m in scenario.members if m.owned]
    o_codes, o_parts, o_flat = _flatten([m.owned for m in owners], meta.code)
    o_member = np.repeat(np.asarray([ids[m.id] for m in owners], dtype=np.int64),
                         np.asarray([len(m.owned) for m in owners], dtype=np.int64))
    o_inside, o_index = meta.flat_index(o_codes, o_parts)
    o_member = o_member[o_inside]
    if o_index.size and np.bincount(o_index).max() > 1:
        last, at = np.unique(o_index[::-1], return_index=True)
        holder[last] = o_member[::-1][at]
    else:
        holder[o_index] = o_member
    kept = int((holder[index] == member[inside]).sum())
    stray_holders = {o_flat[k]: o_member_id for k, o_member_id in _strays(o_inside, o_flat, owners)}
    # K3: the member's rack among the partition's replica racks.
    rack_local = _rack_local(meta, rack_of, items, member[inside], index)
    for k in outside:
        tp = flat[k]
        m = items[member[k]][0]
        kept += stray_holders.get(tp) == m
        t = meta.topics[codes[k]] if codes[k] >= 0 else None
        rack = rack_of.get(m)
        if rack is not None and t is not None and t.racks is not None and tp.partition < len(t.racks):
            rack_local += rack in t.racks[tp.partition]
    failures = [] if subscribers is None else _placement_failures(meta, items, codes, flat, member, inside, index, subscribers)
    return (sum_squares, spread, rack_local, kept), failures


def _strays(inside: np.ndarray, flat: list, owners: list) -> list[tuple[int, str]]:
    """Claims on partitions the metadata lacks: (flat position, member id), in claim order."""
    outside = np.flatnonzero(~inside).tolist()
    if not outside:
        return []
    bounds = np.cumsum([len(m.owned) for m in owners])
    return [(k, owners[int(np.searchsorted(bounds, k, side="right"))].id) for k in outside]


def _rack_local(meta: _Metadata, rack_of: Mapping[str, str | None], items: list, member: np.ndarray,
                index: np.ndarray) -> int:
    """Placements (member, flat partition index) whose member's rack holds one of the partition's replicas."""
    racks = sorted({r for r in (rack_of.get(m) for m, _ in items) if r is not None})
    if not racks or not index.size:
        return 0
    rack_code = {r: i for i, r in enumerate(racks)}
    member_rack = np.asarray([rack_code.get(rack_of.get(m), -1) for m, _ in items], dtype=np.int64)
    # Each partition's replica racks as a code into ``local``: which of the members' racks hold a replica.
    replica = np.zeros(int(meta.offset[-1]), dtype=np.int64)
    local = [np.zeros(len(racks), dtype=bool)]
    for i, t in enumerate(meta.topics):
        if t.racks is None:
            continue
        k = min(len(t.racks), t.partitions)
        # Each rack list hashed once: its number is where it first appears among the topic's.
        where: dict = {}
        first = np.fromiter(map(where.setdefault, t.racks[:k], range(k)), dtype=np.int64, count=k)
        row = np.zeros(k, dtype=np.int64)
        for j in where.values():
            row[j] = len(local)
            local.append(np.asarray([x in t.racks[j] for x in racks], dtype=bool))
        start = int(meta.offset[i])
        replica[start:start + k] = row[first]
    table = np.stack(local)
    mr = member_rack[member]
    racked = mr >= 0
    return int(table[replica[index[racked]], mr[racked]].sum())


def _placement_failures(meta: _Metadata, items: list, codes: np.ndarray, flat: list, member: np.ndarray,
                        inside: np.ndarray, index: np.ndarray, subscribers: Mapping[str, Sequence[str]]) -> list[str]:
    """An assignable partition placed on no member or on several, or on a member that does not
    subscribe to its topic, or a partition placed that is not assignable (a count and one example each)."""
    placed = np.bincount(index, minlength=int(meta.offset[-1]))
    assignable = np.zeros(int(meta.offset[-1]), dtype=bool)
    subscribed = np.zeros((len(meta.topics), len(items)), dtype=bool)
    position = {m: i for i, (m, _) in enumerate(items)}
    columns: dict[tuple[str, ...], list[int]] = {}  # topics with the same subscribers: one lookup
    for topic, ms in subscribers.items():
        i = meta.code[topic]
        assignable[meta.offset[i]:meta.offset[i + 1]] = True
        key = tuple(ms)
        if key not in columns:
            columns[key] = [position[m] for m in ms if m in position]
        subscribed[i, columns[key]] = True
    out = []
    for what, where in (("placed on no member", np.flatnonzero(assignable & (placed == 0))),
                        ("placed more than once", np.flatnonzero(assignable & (placed > 1))),
                        ("placed but not assignable", np.flatnonzero(~assignable & (placed > 0)))):
        if where.size:
            i = int(np.searchsorted(meta.offset, where[0], side="right")) - 1
            out.append(f"{where.size} partitions {what} (e.g. {meta.topics[i].name}-{int(where[0] - meta.offset[i])})")
    strays = np.flatnonzero(~inside)
    if strays.size:
        out.append(f"{strays.size} partitions placed that the metadata lacks (e.g. {flat[int(strays[0])]})")
    off = np.flatnonzero(~subscribed[codes[inside], member[inside]]) if index.size else np.zeros(0, dtype=np.int64)
    if off.size:
        k = int(np.flatnonzero(inside)[off[0]])
        out.append(f"{off.size} partitions on a member not subscribed to their topic (e.g. {flat[k]} on {items[member[k]][0]})")
    return out
