"""The consumer-group oracle's classes as arrays: partitions of one topic with the same current holder
and the same subscribers' racks among their replica racks are interchangeable for every tier (K1-K4),
so the flow places class counts and partitions are handed out only at the end.

Partition ``p`` of the ``i``-th assignable topic (topics sorted by name) is flat index
``offset[i] + p``; flat order is ``TopicPartition`` order. Members are indexes into the sorted
subscribers. Per partition only array work happens here (holders from the current targets, replica
racks coded per distinct rack list, one stable sort into classes); the ``TopicPartition`` values of
the answer are built once, in ``assignment_of``.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import chain, count, repeat
from operator import itemgetter
from typing import Iterator, Mapping, Sequence

import numpy as np

from ..model import Assignment, Scenario, TopicPartition

__all__ = ["Classes", "build_classes", "first_seen", "class_partitions", "assignment_of", "hand_out", "positions"]

_new_partition = partial(tuple.__new__, TopicPartition)
"""``TopicPartition`` from a (topic, partition) pair without the Python-level ``__new__`` (C calls only)."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The objects that exist already (the scenario: every claim and replica rack list) out of the
    cyclic collector's sight while half a million small tuples are made: each 700 allocations start
    a collection, and the full ones would walk the whole scenario again and again (``gc.freeze``,
    undone after; left alone if the caller froze objects of its own or turned the collector off)."""
    mine = gc.isenabled() and gc.get_freeze_count() == 0
    if mine:
        gc.freeze()
    try:
        yield
    finally:
        if mine:
            gc.unfreeze()


@dataclass(frozen=True, eq=False)
class Classes:
    """The classes of one group, sorted by (topic, holder, then the sorted local racks); unheld first.

    ``parts[start[c]:start[c] + size[c]]`` are class ``c``'s flat partition indexes, ascending.
    ``holder[c]``: the member index holding them, or -1 (no holder among the topic's subscribers).
    ``local[c]``: an index into ``local_sets``, the subscribers' racks holding a replica (0: none);
    ``local_sets`` are sorted as their sorted rack lists, so codes order as the sets.
    ``member_rack[i]``: member ``i``'s rack as an index into ``racks`` (-1: none); ``in_local[l, r]``
    whether rack ``r`` is in ``local_sets[l]``. ``claimed[k]``: the current targets' own
    ``TopicPartition`` for flat index ``claimed_index[k]`` (the answer reuses them instead of making
    each partition again)."""

    topics: tuple[str, ...]
    offset: np.ndarray
    members: tuple[str, ...]
    topic: np.ndarray
    holder: np.ndarray
    local: np.ndarray
    size: np.ndarray
    start: np.ndarray
    parts: np.ndarray
    local_sets: tuple[frozenset[str], ...]
    racks: tuple[str, ...]
    member_rack: np.ndarray
    in_local: np.ndarray
    claimed_index: np.ndarray
    claimed: np.ndarray

    def gains_local(self, classes: np.ndarray, members: np.ndarray) -> np.ndarray:
        """Whether each (class, member) placement is rack local (K3)."""
        if not self.racks:
            return np.zeros(np.shape(members), dtype=bool)
        rack = self.member_rack[members]
        return (rack >= 0) & self.in_local[self.local[classes], np.maximum(rack, 0)]

    def rack_local(self, locals_: np.ndarray) -> np.ndarray:
        """Whether each member's rack is in each of the local sets ``locals_``: shape (len(locals_), members)."""
        if not self.racks:
            return np.zeros((np.size(locals_), len(self.members)), dtype=bool)
        rack = self.member_rack
        return (rack >= 0)[None, :] & self.in_local[locals_][:, np.maximum(rack, 0)]


_NONE = np.zeros(0, dtype=np.int64)


def _holders(scenario: Scenario, topic_index: Mapping[str, int], offset: np.ndarray, member_index: Mapping[str, int],
             subscribed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each flat partition's holder among its topic's subscribers (-1: none): the last claim on it in
    member order (the coordinator's targets never overlap), kept only when the claimant subscribes.
    Also the claimed flat indexes and their ``TopicPartition`` values, for the answer to reuse."""
    total = int(offset[-1])
    holder = np.full(total, -1, dtype=np.int64)
    owners = [m for m in scenario.members if m.owned]
    if not owners or not total:
        return holder, _NONE, np.zeros(0, dtype=object)
    flat = list(chain.from_iterable(m.owned for m in owners))
    codes = np.fromiter(map(topic_index.get, map(itemgetter(0), flat), repeat(-1)), dtype=np.int64, count=len(flat))
    parts = np.fromiter(map(itemgetter(1), flat), dtype=np.int64, count=len(flat))
    who = np.repeat(np.asarray([member_index.get(m.id, -1) for m in owners], dtype=np.int64),
                    np.asarray([len(m.owned) for m in owners], dtype=np.int64))
    sizes = np.diff(offset)
    safe = np.maximum(codes, 0)
    ok = (codes >= 0) & (parts >= 0) & (parts < sizes[safe])
    index, who, codes, claim = offset[codes[ok]] + parts[ok], who[ok], codes[ok], np.flatnonzero(ok)
    if index.size and np.bincount(index).max() > 1:
        index, at = np.unique(index[::-1], return_index=True)
        who, codes, claim = who[::-1][at], codes[::-1][at], claim[::-1][at]
    keep = (who >= 0) & subscribed[codes, np.maximum(who, 0)]
    holder[index[keep]] = who[keep]
    if set(map(type, flat)) != {TopicPartition}:
        return holder, _NONE, np.zeros(0, dtype=object)
    return holder, index, np.fromiter(flat, dtype=object, count=len(flat))[claim]


def first_seen(values: Sequence) -> np.ndarray:
    """For each value, the position of its first equal in ``values``: one hash per value (a distinct
    rack list per partition is the rule in real metadata, a handful of distinct lists the fact)."""
    first: dict = {}
    return np.fromiter(map(first.setdefault, values, count()), dtype=np.int64, count=len(values))


def build_classes(scenario: Scenario, subs: Mapping[str, tuple[str, ...]]) -> Classes:
    """The classes of ``scenario``'s assignable partitions (``subs``: each assignable topic's sorted subscribers)."""
    meta = {t.name: t for t in scenario.topics}
    topics = tuple(subs)
    topic_index = {t: i for i, t in enumerate(topics)}
    members = tuple(sorted({m for ms in subs.values() for m in ms}))
    member_index = {m: i for i, m in enumerate(members)}
    counts = np.asarray([meta[t].partitions for t in topics], dtype=np.int64)
    offset = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(counts)]).astype(np.int64)
    total = int(offset[-1])
    subscribed = np.zeros((len(topics), len(members)), dtype=bool)
    rows: dict[tuple[str, ...], np.ndarray] = {}  # topics with the same subscribers share one row
    for i, ms in enumerate(subs.values()):
        if ms not in rows:
            rows[ms] = np.zeros(len(members), dtype=bool)
            rows[ms][[member_index[m] for m in ms]] = True
        subscribed[i] = rows[ms]
    holder, claimed_index, claimed = _holders(scenario, topic_index, offset, member_index, subscribed)
    rack_of = {m.id: m.rack or None for m in scenario.members}
    racks = tuple(sorted({rack_of[m] for m in members if rack_of.get(m) is not None}))
    rack_index = {r: i for i, r in enumerate(racks)}
    member_rack = np.asarray([rack_index.get(rack_of.get(m), -1) for m in members], dtype=np.int64)
    # Each partition's local racks (its replica racks among its subscribers' racks), coded once per distinct rack list.
    local = np.zeros(total, dtype=np.int64)
    local_code: dict[frozenset[str], int] = {frozenset(): 0}
    for i, t in enumerate(topics):
        rr = meta[t].racks
        rows = member_rack[subscribed[i]]
        sub_racks = frozenset(racks[r] for r in np.unique(rows[rows >= 0]).tolist())
        if rr is None or not sub_racks:
            continue
        k = min(len(rr), int(counts[i]))
        first = first_seen(rr[:k])
        distinct = np.unique(first)
        code = np.zeros(k, dtype=np.int64)
        code[distinct] = [local_code.setdefault(frozenset(rr[j]) & sub_racks, len(local_code)) for j in distinct.tolist()]
        local[offset[i]:offset[i] + k] = code[first]
    # Classes sort by (topic, holder with "no holder" first, sorted local racks): renumber the local
    # sets in that order (the empty set stays 0), so codes compare as the sets do.
    coded = list(local_code)
    by_racks = sorted(range(len(coded)), key=lambda c: sorted(coded[c]))
    local_sets = tuple(coded[c] for c in by_racks)
    rank = np.empty(len(local_sets), dtype=np.int64)
    rank[by_racks] = np.arange(len(local_sets))
    local = rank[local]
    topic_of = np.repeat(np.arange(len(topics), dtype=np.int64), counts)
    key = (topic_of * (len(members) + 1) + holder + 1) * len(local_sets) + local
    parts = np.argsort(key, kind="stable")
    sorted_key = key[parts]
    start = np.flatnonzero(np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]])) if total else np.zeros(0, np.int64)
    size = np.diff(np.append(start, total))
    first = parts[start]
    in_local = np.asarray([[r in s for r in racks] for s in local_sets], dtype=bool).reshape(len(local_sets), len(racks))
    return Classes(topics, offset, members, topic_of[first], holder[first], local[first], size.astype(np.int64),
                   start.astype(np.int64), parts.astype(np.int64), local_sets, racks, member_rack, in_local,
                   claimed_index, claimed)


def _partitions(classes: Classes) -> np.ndarray:
    """Every assignable partition in flat order (an object array): the current targets' own values
    where they name it, the others made here, once."""
    total = int(classes.offset[-1])
    every = np.empty(total, dtype=object)
    every[classes.claimed_index] = classes.claimed
    have = np.zeros(total, dtype=bool)
    have[classes.claimed_index] = True
    sizes = np.diff(classes.offset)
    numbers = list(range(int(sizes.max()) if sizes.size else 0))  # one int object per number, shared by the topics
    with _collector_paused():
        for i, topic in enumerate(classes.topics):
            lo, hi = int(classes.offset[i]), int(classes.offset[i + 1])
            missing = np.flatnonzero(~have[lo:hi])
            if missing.size:
                which = numbers[:hi - lo] if missing.size == hi - lo else missing.tolist()
                every[lo + missing] = np.fromiter(map(_new_partition, zip(repeat(topic), which)), dtype=object, count=missing.size)
    return every


def class_partitions(classes: Classes) -> list[list[TopicPartition]]:
    """Each class's partitions (for the CP-SAT stages, which read classes as lists)."""
    every = _partitions(classes)
    return [every[classes.parts[s:s + n]].tolist() for s, n in zip(classes.start.tolist(), classes.size.tolist())]


def assignment_of(scenario: Scenario, classes: Classes, owner: np.ndarray) -> Assignment:
    """The assignment placing flat partition ``p`` on member ``owner[p]``: each member's partitions in
    ``TopicPartition`` order, every member of the scenario present (the unsubscribed with none)."""
    # Stable: each member's partitions stay in flat order. Under 2^16 members numpy sorts by radix.
    narrow = owner.astype(np.uint16) if len(classes.members) <= np.iinfo(np.uint16).max else owner
    ordered = _partitions(classes)[np.argsort(narrow, kind="stable")].tolist()
    bounds = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=len(classes.members)))]).tolist()
    out: dict[str, tuple[TopicPartition, ...]] = {m.id: () for m in scenario.members}
    with _collector_paused():
        for i, m in enumerate(classes.members):
            out[m] = tuple(ordered[bounds[i]:bounds[i + 1]])
    return Assignment(out)


def hand_out(pooled: np.ndarray, receivers: np.ndarray, amounts: np.ndarray, owner: np.ndarray) -> bool:
    """Give the partitions ``pooled`` (flat indexes, pool after pool) in order to ``receivers``, each
    taking ``amounts`` consecutive ones (arcs listed pool after pool); False when the amounts do not
    add up to the pool (the flow's read-back would be wrong: the caller refuses the answer)."""
    if int(amounts.sum()) != pooled.size:
        return False
    owner[pooled] = np.repeat(receivers, amounts)
    return True


def positions(classes: Classes) -> tuple[np.ndarray, np.ndarray]:
    """For every entry of ``classes.parts``: its class, and its position within the class."""
    cls = np.repeat(np.arange(classes.size.size, dtype=np.int64), classes.size)
    return cls, np.arange(classes.parts.size, dtype=np.int64) - classes.start[cls]
