"""One shrinker for every failing group: deterministic delta debugging over a ``Scenario``.

The hunt shrinks the group Hypothesis found; the sweep's triage shrinks groups the seeded
sampler drew, which have no Hypothesis choice sequence to shrink. Delta debugging works on any
``Scenario``, spends a bounded number of evaluations, and its result is a pure function of the
group and the predicate. It removes members, topics, claims and subscriptions (halves first, then
quarters, down to single items), lowers partition counts, and simplifies fields (versions, racks,
instance ids, assignor lists, generations, member names).

    shrink_search(scenario, still_fails, *, max_evaluations, deadline, progress) -> Shrunk
    shrink(scenario, still_fails, ...) -> Scenario          the smallest group only
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..model import Member, Scenario, TopicPartition

__all__ = ["Shrunk", "Edit", "shrink_search", "shrink", "DEFAULT_SHRINK_EVALUATIONS", "scenario_size"]

DEFAULT_SHRINK_EVALUATIONS = 300


def scenario_size(s: Scenario) -> dict[str, int]:
    """Members, live topics, subscribed partitions and claims: how big a failing group is."""
    return {
        "members": len(s.members),
        "topics": sum(1 for t in s.topics if t.partitions > 0),
        "partitions": len(s.subscribed_partitions()),
        "claims": sum(len(m.owned) for m in s.members),
    }


@dataclass(frozen=True)
class Shrunk:
    """The result of ``shrink_search``: the smallest failing group found, the evaluations spent,
    and what stopped it (``done``: no candidate fails any more; ``evaluations`` or ``deadline``)."""

    scenario: Scenario
    evaluations: int
    stopped_by: str


def _chunks(items: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """Halves, quarters, ..., single items: delta debugging's coarse-to-fine removal sets."""
    n = len(items)
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            yield tuple(items[start : start + size])
        size //= 2


#: An edit maps the current group to a smaller or plainer one, or to None when it no longer
#: applies (its member or topic is gone). Edits name members, topics and claims, never
#: positions, so an edit planned at the start of a pass still means the same after others.
Edit = Callable[[Scenario], "Scenario | None"]


def _with_members(s: Scenario, members: Iterable[Member]) -> Scenario:
    return replace(s, members=tuple(members))


def _map_member(s: Scenario, member_id: str, change: Callable[[Member], Member]) -> Scenario | None:
    if not any(m.id == member_id for m in s.members):
        return None
    return _with_members(s, (change(m) if m.id == member_id else m for m in s.members))


def _drop_members(ids: frozenset[str]) -> Edit:
    def edit(s: Scenario) -> Scenario | None:
        kept = [m for m in s.members if m.id not in ids]
        return _with_members(s, kept) if kept and len(kept) < len(s.members) else None

    return edit


def _drop_topic(name: str) -> Edit:
    def edit(s: Scenario) -> Scenario | None:
        if s.topic(name) is None and not any(name in m.topics or any(tp.topic == name for tp in m.owned) for m in s.members):
            return None
        members = (
            replace(m, topics=tuple(t for t in m.topics if t != name), owned=tuple(tp for tp in m.owned if tp.topic != name))
            for m in s.members
        )
        return _with_members(replace(s, topics=tuple(t for t in s.topics if t.name != name)), members)

    return edit


def _drop_claims(member_id: str | None, claims: frozenset[TopicPartition] | None) -> Edit:
    """Drop ``claims`` (None: all) of ``member_id`` (None: of every member)."""

    def edit(s: Scenario) -> Scenario | None:
        members = []
        for m in s.members:
            if member_id is None or m.id == member_id:
                m = replace(m, owned=tuple(tp for tp in m.owned if claims is not None and tp not in claims))
            members.append(m)
        return _with_members(s, members)

    return edit


def _cut_partitions(name: str, how: str) -> Edit:
    """Topic ``name`` cut to one partition, half its partitions, or one fewer. Claims on the
    removed partitions go with them; claims already past the old count stay (they may be what
    fails, §10 K1)."""

    def edit(s: Scenario) -> Scenario | None:
        topic = s.topic(name)
        if topic is None or topic.partitions <= 1:
            return None
        old = topic.partitions
        count = {"one": 1, "half": old // 2, "one-fewer": old - 1}[how]
        topics = tuple(
            replace(t, partitions=count, racks=None if t.racks is None else t.racks[:count]) if t.name == name else t
            for t in s.topics
        )
        members = (
            replace(m, owned=tuple(tp for tp in m.owned if not (tp.topic == name and count <= tp.partition < old)))
            for m in s.members
        )
        return _with_members(replace(s, topics=topics), members)

    return edit


def _compact_claims(name: str) -> Edit:
    """Partitions of topic ``name`` renumbered so the claimed ones come first (in their order):
    the same group up to partition names, and the partition cuts that follow can keep the claims."""

    def edit(s: Scenario) -> Scenario | None:
        topic = s.topic(name)
        if topic is None:
            return None
        claimed = sorted({tp.partition for m in s.members for tp in m.owned if tp.topic == name and tp.partition < topic.partitions})
        order = claimed + [p for p in range(topic.partitions) if p not in set(claimed)]
        new_number = {old: new for new, old in enumerate(order)}
        if all(old == new for old, new in new_number.items()):
            return None
        racks = None if topic.racks is None else tuple(topic.racks[old] for old in order)
        topics = tuple(replace(t, racks=racks) if t.name == name else t for t in s.topics)
        members = (
            replace(
                m,
                owned=tuple(
                    TopicPartition(name, new_number[tp.partition]) if tp.topic == name and tp.partition in new_number else tp
                    for tp in m.owned
                ),
            )
            for m in s.members
        )
        return _with_members(replace(s, topics=topics), members)

    return edit


def _unsubscribe(member_id: str, name: str) -> Edit:
    return lambda s: _map_member(s, member_id, lambda m: replace(m, topics=tuple(t for t in m.topics if t != name)))


def _lower_past_count_claims(s: Scenario) -> Scenario | None:
    """Claims past a topic's partition count, renumbered to the first missing partition."""
    counts = {t.name: t.partitions for t in s.topics}
    members = []
    for m in s.members:
        owned: list[TopicPartition] = []
        for tp in m.owned:
            n = counts.get(tp.topic)
            lowered = TopicPartition(tp.topic, n) if n is not None and tp.partition > n else tp
            owned.append(lowered if lowered not in owned and lowered not in m.owned else tp)
        members.append(replace(m, owned=tuple(owned)))
    return _with_members(s, members)


def _set_all(attr: str, value: Any) -> Edit:
    return lambda s: _with_members(s, (replace(m, **{attr: value}) for m in s.members))


def _set_member(member_id: str, attr: str, value: Any) -> Edit:
    return lambda s: _map_member(s, member_id, lambda m: replace(m, **{attr: value}))


def _eager(s: Scenario) -> Scenario:
    return replace(s, protocol="eager")


def _no_replica_racks(s: Scenario) -> Scenario:
    return replace(s, topics=tuple(replace(t, racks=None) for t in s.topics))


def _generations_ranked(s: Scenario) -> Scenario:
    """Generations mapped to 1, 2, 3 ... in their order (-1 kept): the same comparisons, smaller numbers."""
    known = sorted({m.generation for m in s.members if m.generation >= 0})
    rank = {g: i + 1 for i, g in enumerate(known)}
    return _with_members(s, (replace(m, generation=rank.get(m.generation, m.generation)) for m in s.members))


def _members_in_id_order(s: Scenario) -> Scenario:
    return _with_members(s, sorted(s.members, key=lambda m: m.id))


def _short_names(n: int) -> list[str]:
    if n <= 26:
        return [chr(ord("a") + i) for i in range(n)]
    return [f"c{i}" for i in range(n)]


def _renamed(s: Scenario) -> Scenario:
    """Members renamed a, b, c ... keeping their sorted order (Kafka's hash order may change: a
    failure that depends on it rejects the rename)."""
    ranked = sorted(m.id for m in s.members)
    names = dict(zip(ranked, _short_names(len(ranked))))
    return _with_members(s, (replace(m, id=names[m.id]) for m in s.members))


def _edits(s: Scenario) -> list[Edit]:
    """One pass of edits for ``s``, the biggest reductions first."""
    ids = [m.id for m in s.members]
    edits: list[Edit] = []
    # Members: halves, quarters, ... single members.
    edits += [_drop_members(frozenset(chunk)) for chunk in _chunks(ids)]
    # Topics, whole: metadata, subscriptions and claims.
    names = list(dict.fromkeys([t.name for t in s.topics] + [t for m in s.members for t in m.topics]))
    edits += [_drop_topic(name) for name in names]
    # Claims: everybody's, each member's, then halves ... single claims of each member.
    if any(m.owned for m in s.members):
        edits.append(_drop_claims(None, None))
        edits += [_drop_claims(m.id, None) for m in s.members if len(m.owned) > 1]
        for m in s.members:
            edits += [_drop_claims(m.id, frozenset(chunk)) for chunk in _chunks(list(m.owned))]
    # Partition counts (claimed partitions renumbered first, so cuts can keep them).
    edits += [_compact_claims(t.name) for t in s.topics if t.partitions > 1]
    for how in ("one", "half", "one-fewer"):
        edits += [_cut_partitions(t.name, how) for t in s.topics if t.partitions > 1]
    # Subscriptions: one topic fewer for one member.
    edits += [_unsubscribe(m.id, name) for m in s.members for name in dict.fromkeys(m.topics)]
    # Plainer values: claims past a count lowered, eager, no racks, no static ids, no assignor
    # lists, version 3, generation -1 or smaller generations, id order, short names.
    edits += [_lower_past_count_claims, _eager, _no_replica_racks]
    edits += [_set_all("rack", None), _set_all("instance_id", None), _set_all("assignors", ())]
    edits += [_set_member(m.id, "version", 3) for m in s.members if m.version != 3]
    edits.append(_set_all("generation", -1))
    edits += [_set_member(m.id, "generation", -1) for m in s.members if m.generation != -1]
    edits += [_generations_ranked, _members_in_id_order, _renamed]
    return edits


def shrink_search(
    scenario: Scenario,
    still_fails: Callable[[Scenario], bool],
    *,
    max_evaluations: int = DEFAULT_SHRINK_EVALUATIONS,
    deadline: float | None = None,
    progress: Callable[[int, Scenario], None] | None = None,
) -> Shrunk:
    """Delta debugging in passes: each pass plans its edits (``_edits``) for the current group and
    applies them in order, keeping every edit whose result ``still_fails``; passes repeat until one
    keeps nothing, ``max_evaluations`` calls of ``still_fails`` are spent, or ``deadline`` (a
    ``time.monotonic()`` value) passes.

    A kept edit is not undone, and later edits of the pass apply to the smaller group (an edit
    naming a member that is gone is skipped without a call). ``scenario`` itself is assumed to
    fail and is not re-checked; no group is checked twice. The result is a pure function of
    ``scenario`` and ``still_fails`` unless the deadline stops it.
    """
    current, evaluations = scenario, 0
    seen: set[Scenario] = {scenario}
    progressed = True
    while progressed:
        progressed = False
        for edit in _edits(current):
            candidate = edit(current)
            if candidate is None or candidate in seen:
                continue
            if evaluations >= max_evaluations:
                return Shrunk(current, evaluations, "evaluations")
            if deadline is not None and time.monotonic() > deadline:
                return Shrunk(current, evaluations, "deadline")
            seen.add(candidate)
            evaluations += 1
            if still_fails(candidate):
                current, progressed = candidate, True
                if progress is not None:
                    progress(evaluations, current)
    return Shrunk(current, evaluations, "done")


def shrink(
    scenario: Scenario,
    still_fails: Callable[[Scenario], bool],
    *,
    max_evaluations: int = DEFAULT_SHRINK_EVALUATIONS,
    deadline: float | None = None,
) -> Scenario:
    """The smallest group ``shrink_search`` reaches from ``scenario`` that ``still_fails``.

    Deterministic delta debugging (not Hypothesis's shrinker, so it works on groups from any
    source): fewer members, topics, claims, partitions and subscribed topics, then plainer
    values (``shrink_search``). ``still_fails`` should be deterministic; it is never called on ``scenario`` itself.
    """
    return shrink_search(scenario, still_fails, max_evaluations=max_evaluations, deadline=deadline).scenario
