"""User assignors for tests/test_hunt.py: one correct, and faulty ones that each break one rule on some groups.

Each follows the user assignor contract of ``stickyproof.assignors.registry``: it receives the
group as the leader decoded it (a scenario document) and returns ``{member: {topic: [p, ...]}}``
or a full assignment document. All of them support both rebalance protocols, so the hunt meets
them in cooperative groups too (the only groups where a user assignor sees owned partitions, R37).

``optimal`` is the correct one: the oracle's min-cost-flow optimum over what the leader decoded
(balanced, then as sticky as possible; a cooperative round withholds what changes owner, D5).
Every faulty assignor starts from it and injects one fault, only on the groups its docstring
names, and leaves every other rule intact there, so the hunt must name that one rule.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from stickyproof.model import Assignment, Member, Scenario, TopicPartition, assignment_to_dict, scenario_from_dict
from stickyproof.oracle.claims import claimants
from stickyproof.oracle.flow import solve_flow

BOTH = ("cooperative", "eager")


def _solve(doc: dict[str, Any]) -> tuple[Scenario, dict[str, list[TopicPartition]], dict[str, tuple[TopicPartition, ...]]]:
    """The decoded group and the optimum as mutable per-member lists (and its revoking map)."""
    scenario = scenario_from_dict(doc)
    result = solve_flow(scenario)
    assert result.assignment is not None
    plan = {m.id: list(result.assignment.assignment.get(m.id, ())) for m in scenario.members}
    return scenario, plan, dict(result.assignment.revoking)


def _document(plan: dict[str, list[TopicPartition]], revoking: dict[str, tuple[TopicPartition, ...]]) -> dict[str, Any]:
    return assignment_to_dict(Assignment({m: tuple(tps) for m, tps in plan.items()}, revoking))


def _claimed(scenario: Scenario) -> dict[TopicPartition, tuple[str, ...]]:
    return claimants(scenario)


def optimal(doc: dict[str, Any]) -> dict[str, Any]:
    """Correct: the proven optimum (global balance, then most partitions kept by their owners)."""
    _, plan, revoking = _solve(doc)
    return _document(plan, revoking)


def drops_a_partition_with_three_members(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (unassigned): with 3 or more members, the most loaded member's last partition is dropped."""
    scenario, plan, revoking = _solve(doc)
    if len(scenario.members) >= 3:
        heaviest = max(sorted(plan), key=lambda m: len(plan[m]))
        if plan[heaviest]:
            plan[heaviest].pop()
    return _document(plan, revoking)


def double_assigns_a_multiple_claim(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (duplicate): when a member claims 2+ partitions, one it keeps (and nobody else claims)
    is also given to another subscriber of its topic."""
    scenario, plan, revoking = _solve(doc)
    claimed = _claimed(scenario)
    for m in sorted(scenario.members, key=lambda m: m.id):
        if len(m.owned) < 2:
            continue
        for tp in plan[m.id]:
            if claimed.get(tp) != (m.id,):
                continue
            other = next((x.id for x in sorted(scenario.members, key=lambda x: x.id) if x.id != m.id and tp.topic in x.topics), None)
            if other is not None:
                plan[other].append(tp)
                return _document(plan, revoking)
    return _document(plan, revoking)


def assigns_an_unsubscribed_topic(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (unsubscribed): a member that does not subscribe to an assigned topic is handed an
    unclaimed partition of it (moved from its holder)."""
    scenario, plan, revoking = _solve(doc)
    claimed = _claimed(scenario)
    for x in sorted(scenario.members, key=lambda m: m.id):
        for holder in sorted(plan):
            tp = next((tp for tp in plan[holder] if tp.topic not in x.topics and tp not in claimed), None)
            if tp is not None:
                plan[holder].remove(tp)
                plan[x.id].append(tp)
                return _document(plan, revoking)
    return _document(plan, revoking)


def unbalanced_with_five_partitions(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (imbalance): with 5 or more partitions to assign, one unclaimed partition moves from a
    member to another subscriber of its topic holding at least as many."""
    scenario, plan, revoking = _solve(doc)
    if len(scenario.subscribed_partitions()) < 5:
        return _document(plan, revoking)
    claimed = _claimed(scenario)
    topics = {m.id: set(m.topics) for m in scenario.members}
    for a, b in itertools.permutations(sorted(plan), 2):
        if len(plan[b]) < len(plan[a]):
            continue
        tp = next((tp for tp in plan[a] if tp.topic in topics[b] and tp not in claimed), None)
        if tp is not None:
            plan[a].remove(tp)
            plan[b].append(tp)
            break
    return _document(plan, revoking)


_calls = itertools.count()


def nondeterministic_swap(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (nondeterministic): every second call swaps the whole assignments of the first two
    members with the same subscription whose partitions nobody claims (still valid, still
    balanced, still cooperative-safe; only the answer changes from one call to the next)."""
    scenario, plan, revoking = _solve(doc)
    if next(_calls) % 2:
        claimed = _claimed(scenario)
        free = [m for m in sorted(scenario.members, key=lambda m: m.id) if not any(tp in claimed for tp in plan[m.id])]
        for x, y in itertools.combinations(free, 2):
            if set(x.topics) == set(y.topics) and plan[x.id] != plan[y.id]:
                plan[x.id], plan[y.id] = plan[y.id], plan[x.id]
                break
    return _document(plan, revoking)


def ignores_ownership(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (stickiness): balanced and cooperative-safe, but computed as if nobody owned anything
    (a partition that changes owner is withheld until the follow-up round, so it stays valid)."""
    scenario = scenario_from_dict(doc)
    bare = Scenario(scenario.topics, tuple(Member(m.id, m.topics) for m in scenario.members), scenario.protocol)
    result = solve_flow(bare)
    assert result.target is not None
    claimed = _claimed(scenario)
    plan: dict[str, list[TopicPartition]] = {}
    for m in scenario.members:
        target = result.target.assignment.get(m.id, ())
        if scenario.protocol == "cooperative":
            target = tuple(tp for tp in target if m.id in claimed.get(tp, (m.id,)))
        plan[m.id] = list(target)
    return _document(plan, {})


def raises_on_two_topics(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (error): raises KeyError when a member subscribes to two or more topics."""
    if any(len(m["topics"]) >= 2 for m in doc["members"]):
        raise KeyError("second topic")
    return optimal(doc)


def two_faults(doc: dict[str, Any]) -> dict[str, Any]:
    """Two faults at once: raises KeyError on two topics (as ``raises_on_two_topics``), and otherwise
    drops a partition with three members (as ``drops_a_partition_with_three_members``)."""
    if any(len(m["topics"]) >= 2 for m in doc["members"]):
        raise KeyError("second topic")
    return drops_a_partition_with_three_members(doc)


SLOW_SECONDS = 2.0


def slow_with_four_members(doc: dict[str, Any]) -> dict[str, Any]:
    """Fault (time-limit): sleeps ``SLOW_SECONDS`` when the group has four or more members."""
    if len(doc["members"]) >= 4:
        time.sleep(SLOW_SECONDS)
    return optimal(doc)


for _fn in (
    optimal,
    drops_a_partition_with_three_members,
    double_assigns_a_multiple_claim,
    assigns_an_unsubscribed_topic,
    unbalanced_with_five_partitions,
    nondeterministic_swap,
    ignores_ownership,
    raises_on_two_topics,
    two_faults,
    slow_with_four_members,
):
    _fn.supported_protocols = BOTH  # type: ignore[attr-defined]
del _fn
