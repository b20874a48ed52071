"""Checkers shared by the tests: validity, Kafka's balance (R33), full balance, stickiness, cooperative rounds.

Each is plain set arithmetic over the scenario and the answer, written apart from the oracle
(``oracle/invariants``) and the assignors, so a test that grades one with these does not let the
thing graded grade itself. They return the problems found (``[]``: none) or a bool, never assert,
so a test states its own assertion:

- ``violations``/``validity``: the validity invariants of models/invariants.md §2 (``unassigned``,
  ``duplicate``, ``unsubscribed``, ``nonexistent``, and ``cooperative-unsafe`` when asked) plus
  the answer's member set (``missing-member``, ``unknown-member``); ``placed_twice`` is the bare
  "listed more than once" Kafka's tests assert.
- ``verify_validity_and_balance``: ``AbstractStickyAssignorTest.verifyValidityAndBalance`` (R33),
  exactly Kafka's notion: subscribed partitions only, no partition shared by two members, and
  two members whose sizes differ by more than one hold no common topic (``r33_balanced``).
- ``fully_balanced``: Kafka's ``isFullyBalanced``, max - min <= 1.
- stickiness: ``moves_never_ping_pong`` (``isSticky`` from before/after owners) and ``kept_claims``.
- ``settle``: the follow-up rebalances ``CooperativeStickyAssignorTest.verifyValidityAndBalance``
  replays (R40): every member rejoins owning what the round gave it until nothing is revoked, and
  no round hands a partition over while its owner revokes it.
- ``doubles``: partitions still consumed by several members at the end of a simulation.

A group is a ``Scenario``, the sticky core's ``StickyInput`` or an assignor's ``GroupSubscription``;
an assignment is an ``Assignment`` or a plain ``{member: partitions}`` mapping. Only ``stickyproof.model``
is imported: nothing here runs the code it grades.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Union

from stickyproof.model import Assignment, Scenario, TopicPartition

if TYPE_CHECKING:
    from stickyproof.assignors.base import GroupSubscription
    from stickyproof.assignors.sticky_types import PriorOwners, StickyInput

__all__ = [
    "VALIDITY",
    "violations",
    "validity",
    "placed_twice",
    "verify_validity_and_balance",
    "r33_problems",
    "r33_balanced",
    "fully_balanced",
    "moves_never_ping_pong",
    "kept_claims",
    "rack_mismatches",
    "added_and_revoked",
    "rejoin",
    "settle",
    "doubles",
]

Group = Union[Scenario, "StickyInput", "GroupSubscription"]
Answer = Union[Assignment, Mapping[str, Iterable[TopicPartition]]]

#: Every kind ``violations`` may report, in the order it reports them.
VALIDITY = ("missing-member", "unknown-member", "unassigned", "duplicate", "unsubscribed", "nonexistent", "cooperative-unsafe")


def _lists(answer: Answer) -> dict[str, tuple[TopicPartition, ...]]:
    lists = answer.assignment if isinstance(answer, Assignment) else answer
    return {m: tuple(v) for m, v in lists.items()}


def _shape(group: Group) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]], dict[str, int]]:
    """(members in order, member -> subscribed topics, topic -> partition count in the metadata)."""
    if isinstance(group, Scenario):
        return tuple(m.id for m in group.members), {m.id: tuple(m.topics) for m in group.members}, group.partition_counts
    if hasattr(group, "partitions_per_topic"):  # the sticky core's StickyInput
        return tuple(group.members), {m: tuple(group.subscriptions[m]) for m in group.members}, dict(group.partitions_per_topic)
    if hasattr(group, "metadata"):  # an assignor's GroupSubscription
        counts = {name: t.partitions for name, t in group.metadata.items()}
        return tuple(s.member_id for s in group.members), {s.member_id: tuple(s.topics) for s in group.members}, counts
    raise TypeError(f"not a group: {type(group).__name__}")


# ------------------------------------------------------------------------------------------
# Validity


def placed_twice(answer: Answer) -> list[TopicPartition]:
    """Partitions listed more than once over all members' lists (within one member's list too)."""
    counts = Counter(p for ps in _lists(answer).values() for p in ps)
    return sorted(p for p, k in counts.items() if k > 1)


def violations(group: Group, answer: Answer, *, cooperative: bool = False) -> dict[str, list[str]]:
    """The validity invariants ``answer`` breaks, each with its problems, in ``VALIDITY`` order.

    As models/invariants.md §2 states them: the assignable partitions are the existing partitions
    of topics someone subscribes to; ``duplicate`` counts only existing partitions (one past the
    count is ``nonexistent``). With ``cooperative`` (a ``Scenario`` and an ``Assignment``), a
    partition in some ``revoking`` list counts once as placed, and a partition a member claimed
    may go only to one of its claimants in this round (``cooperative-unsafe``, R34).
    """
    members, subscribed, counts = _shape(group)
    lists = _lists(answer)
    assignable = {TopicPartition(t, p) for t in {t for ts in subscribed.values() for t in ts} if t in counts for p in range(counts[t])}

    def exists(p: TopicPartition) -> bool:
        return 0 <= p.partition < counts.get(p.topic, 0)

    # a member's list is read as a set (models/invariants.md §1): a partition it lists twice is held once
    placed = Counter(p for ps in lists.values() for p in set(ps))
    if cooperative and isinstance(answer, Assignment):
        for p in {p for ps in answer.revoking.values() for p in ps}:
            placed[p] += 1
    out: dict[str, list[str]] = {}
    out["missing-member"] = [f"{m} has no entry in the answer" for m in members if m not in lists]
    out["unknown-member"] = [f"{m} is not a member of the group" for m in lists if m not in subscribed]
    out["unassigned"] = [f"{p} is assigned to nobody" for p in sorted(assignable - set(placed))]
    out["duplicate"] = [f"{p} is placed {k} times" for p, k in sorted(placed.items()) if k > 1 and exists(p)]
    out["unsubscribed"] = [
        f"{p} given to {m}, which does not subscribe to {p.topic}" for m, ps in lists.items() for p in ps if p.topic not in subscribed.get(m, ())
    ]
    out["nonexistent"] = [f"{p} given to {m} does not exist" for m, ps in lists.items() for p in ps if not exists(p)]
    if cooperative:
        if not isinstance(group, Scenario):
            raise TypeError("cooperative safety needs a Scenario (the members' claims)")
        claimants: dict[TopicPartition, set[str]] = {}
        for m in group.members:
            for p in m.owned:
                if p in assignable:
                    claimants.setdefault(p, set()).add(m.id)
        out["cooperative-unsafe"] = [
            f"{p} given to {m} while {sorted(claimants[p])} own it" for m, ps in lists.items() for p in ps if p in claimants and m not in claimants[p]
        ]
    return {kind: problems for kind, problems in out.items() if problems}


def validity(group: Group, answer: Answer, *, only: Iterable[str] | None = None) -> list[str]:
    """Every problem of ``violations`` (of the kinds in ``only``, if given): ``[]`` for a valid answer
    that lists every member, each assignable partition exactly once, to a subscriber."""
    kinds = set(VALIDITY if only is None else only)
    unknown = kinds - set(VALIDITY)
    if unknown:
        raise ValueError(f"unknown validity kinds {sorted(unknown)} (known: {', '.join(VALIDITY)})")
    return [p for kind, problems in violations(group, answer).items() if kind in kinds for p in problems]


# ------------------------------------------------------------------------------------------
# Balance


def r33_problems(answer: Answer) -> list[str]:
    """R33's balance half: two members whose sizes differ by more than one share no topic among the
    partitions they hold (not those they subscribe to: an empty member passes)."""
    lists = _lists(answer)
    members = sorted(lists)
    topics = {m: {p.topic for p in lists[m]} for m in members}
    problems = []
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            if abs(len(lists[a]) - len(lists[b])) > 1 and topics[a] & topics[b]:
                problems.append(f"{a} ({len(lists[a])}) and {b} ({len(lists[b])}) differ by more than one but share a topic")
    return problems


def r33_balanced(answer: Answer) -> bool:
    return not r33_problems(answer)


def verify_validity_and_balance(scenario: Scenario, answer: Answer) -> list[str]:
    """R33, ``AbstractStickyAssignorTest.verifyValidityAndBalance``: subscribed partitions only, no partition
    shared by two members, and ``r33_problems``. Nothing more: Kafka checks neither existence nor
    completeness there."""
    lists = _lists(answer)
    topics = {m.id: set(m.topics) for m in scenario.members}
    members = sorted(lists)
    problems = []
    for i, a in enumerate(members):
        mine = lists[a]
        problems += [f"{p} given to {a}, which does not subscribe to {p.topic}" for p in mine if p.topic not in topics.get(a, ())]
        for b in members[i + 1 :]:
            common = set(mine) & set(lists[b])
            if common:
                problems.append(f"{a} and {b} share {sorted(map(str, common))}")
    return problems + r33_problems(lists)


def fully_balanced(answer: Answer) -> bool:
    """Kafka's ``isFullyBalanced``: every member within one partition of every other."""
    sizes = [len(v) for v in _lists(answer).values()]
    return not sizes or max(sizes) - min(sizes) <= 1


def rack_mismatches(scenario: Scenario, answer: Answer) -> int:
    """Partitions given to a member with a rack that holds no replica of them (a topic without racks
    counts as a mismatch for a member with a rack), as Kafka's rack-aware tests count them."""
    lists = _lists(answer)
    mismatched = 0
    for m in scenario.members:
        if m.rack:
            for p in lists.get(m.id, ()):
                racks = scenario.topic(p.topic).racks
                mismatched += not racks or m.rack not in racks[p.partition]
    return mismatched


# ------------------------------------------------------------------------------------------
# Stickiness


def moves_never_ping_pong(prior: PriorOwners | Mapping[str, Iterable[TopicPartition]], answer: Answer) -> bool:
    """Kafka's ``isSticky`` computed from outside: within a topic, no two members each took a previously
    owned partition from the other. ``prior`` is each member's partitions before the round, or the
    sticky core's ``PriorOwners`` (its ``consumer_to_owned_partitions``)."""
    lists = _lists(answer)
    prior = getattr(prior, "consumer_to_owned_partitions", prior)
    before = {p: m for m, ps in prior.items() for p in ps}
    pairs = set()
    for m, ps in lists.items():
        for p in ps:
            old = before.get(p)
            if old is not None and old != m and old in lists:
                pairs.add((p.topic, old, m))
    return not any((t, b, a) in pairs for t, a, b in pairs)


def kept_claims(scenario: Scenario, answer: Answer) -> int:
    """How many of the members' claims on existing partitions of topics they subscribe to stay with the
    member claiming them."""
    lists = _lists(answer)
    counts = scenario.partition_counts
    kept = 0
    for m in scenario.members:
        claims = {p for p in m.owned if p.topic in m.topics and p.partition < counts.get(p.topic, 0)}
        kept += len(claims & set(lists.get(m.id, ())))
    return kept


# ------------------------------------------------------------------------------------------
# Cooperative rounds (R34, R40)


def added_and_revoked(scenario: Scenario, answer: Answer) -> tuple[set[TopicPartition], set[TopicPartition]]:
    """(partitions some member gains, partitions some member gives up) against the members' ``owned``."""
    lists = _lists(answer)
    owned = {m.id: set(m.owned) for m in scenario.members}
    added = set().union(*(set(lists[m]) - owned[m] for m in owned))
    revoked = set().union(*(owned[m] - set(lists[m]) for m in owned))
    return added, revoked


def rejoin(scenario: Scenario, answer: Answer, *, generation: int | None = None, version: int | None = None) -> Scenario:
    """The next rebalance: every member owns what ``answer`` gave it, at ``generation`` (by default one
    past its own, 1 for a member without one) and ``version`` (by default its own)."""
    lists = _lists(answer)

    def again(m):
        g = generation if generation is not None else (m.generation + 1 if m.generation >= 0 else 1)
        return replace(m, owned=tuple(lists[m.id]), generation=g, version=m.version if version is None else version)

    return replace(scenario, members=tuple(again(m) for m in scenario.members))


def settle(
    scenario: Scenario,
    assign: Callable[[Scenario], Assignment],
    *,
    answer: Assignment | None = None,
    next_round: Callable[[Scenario, Assignment], Scenario] = rejoin,
    rounds: int = 5,
) -> tuple[Scenario, Assignment]:
    """Rebalance until nothing is revoked (R40), as ``CooperativeStickyAssignorTest.verifyValidityAndBalance``
    replays it: the first round's ``answer`` (computed with ``assign`` if not given), then
    ``next_round(scenario, answer)`` and ``assign`` again, at most ``rounds`` rounds in all. Raises
    AssertionError when a round hands over a partition its owner revokes in that round, or when the
    rounds do not settle. Returns the settled round's scenario and answer."""
    for _ in range(rounds):
        if answer is None:
            answer = assign(scenario)
        added, revoked = added_and_revoked(scenario, answer)
        assert not added & revoked, f"assigned during the round its owner revokes it: {sorted(map(str, added & revoked))}"
        if not revoked:
            return scenario, answer
        scenario = next_round(scenario, answer)
        answer = None
    raise AssertionError(f"the follow-up rebalances did not settle in {rounds - 1} (R40)")


# ------------------------------------------------------------------------------------------
# Simulations


def doubles(result) -> dict[str, list[str]]:
    """Partitions consumed by several members at the end of a simulation run (``group.simulate``)."""
    consumers: dict[str, list[str]] = {}
    for m in result.steps[-1].members:
        for p in m.consuming:
            consumers.setdefault(str(p), []).append(m.name)
    return {p: names for p, names in consumers.items() if len(names) > 1}
