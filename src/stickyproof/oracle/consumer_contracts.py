"""What each server-side (KIP-848) assignor promises, as checks over assignments (models/invariants.md §5.2).

Written from the contracts in models/, never from the assignors' code (the layer table): the
grader runs the assignor (``grading.consumer``) and hands the answers here.

- ``uniform-homogeneous``: every subscribed partition assigned exactly once (V1), sizes within one
  over all members (B1), an input that already satisfies both returned unchanged (FP1), and as many
  partitions kept as any within-one assignment keeps (S1).
- ``uniform-heterogeneous``: V1 only; balance is attempted (per topic, at most 16 rounds) and not
  promised. FP2: a complete input in which every topic's subscribers hold totals within one of
  each other comes back unchanged (the loop never starts).
- ``consumer-range``: V1, per topic each subscriber's partitions one contiguous range (R1) and the
  sizes per topic within one (R2); membership unchanged, its own answer comes back unchanged (FP3).

Order independence (O1 members listed in another order, O2 members renamed) is owed as far as
Kafka's tie-breaks allow: homogeneous ``uniform`` the same multiset of sizes and the same kept
count under both; ``consumer-range`` the identical answer under O1 (it sorts by instance and member
id, so O2 changes who gets which range); heterogeneous ``uniform`` nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..model import Assignment, Scenario, TopicPartition
from .consumer import assignable_partitions, subscribers_of
from .invariants import Violation

__all__ = [
    "CONSUMER_CONTRACTS",
    "ConsumerContract",
    "consumer_contract",
    "homogeneous",
    "current_target",
    "sizes_within_one",
    "per_topic_within_one",
    "contiguous_ranges",
    "fixed_point_owed",
    "contract_violations",
]


@dataclass(frozen=True)
class ConsumerContract:
    """One server-side assignor's promise: its name, the balance it owes (a ``balanced`` key or None),
    whether it owes S1 (kept = the most a within-one assignment keeps), its fixed point (FP1-FP3) and
    the order independence it owes (O1 members listed in another order, O2 members renamed): for each,
    the worst ``grading.consumer.ORDER_VERDICTS`` allowed, or None (not owed)."""

    name: str
    balance: str | None
    owes_kept: bool
    fixed_point: str
    promise: str
    reordered: str | None = None
    renamed: str | None = None


CONSUMER_CONTRACTS: dict[str, ConsumerContract] = {
    c.name: c
    for c in (
        ConsumerContract("uniform-homogeneous", "uniform", True, "FP1",
                         "sizes within one, kept up to quota, a balanced input unchanged",
                         reordered="same-sizes-and-kept", renamed="same-sizes-and-kept"),
        ConsumerContract("uniform-heterogeneous", None, False, "FP2",
                         "every partition to a subscriber; balance attempted, not promised"),
        ConsumerContract("consumer-range", "per-topic", False, "FP3",
                         "per-topic contiguous ranges, sizes per topic within one",
                         reordered="identical"),
    )
}


def homogeneous(scenario: Scenario) -> bool:
    """The coordinator's subscription type: homogeneous iff every subscribed name (known or not) is
    subscribed by every member (models/invariants.md §5.2)."""
    names = [set(m.topics) for m in scenario.members]
    union = set().union(*names) if names else set()
    return all(n == union for n in names)


def consumer_contract(kafka_name: str, scenario: Scenario) -> ConsumerContract | None:
    """The contract of a server-side assignor by its Kafka name on this group, or None (no known promise)."""
    if kafka_name == "uniform":
        return CONSUMER_CONTRACTS["uniform-homogeneous" if homogeneous(scenario) else "uniform-heterogeneous"]
    if kafka_name in ("range", "consumer-range"):
        return CONSUMER_CONTRACTS["consumer-range"]
    return None


def current_target(scenario: Scenario) -> Assignment:
    """The members' current targets as an assignment (what an unchanged answer looks like)."""
    return Assignment({m.id: tuple(sorted(m.owned)) for m in scenario.members})


def _complete(scenario: Scenario, a: Assignment) -> bool:
    """V1 on ``a``: every assignable partition exactly once, each to one of its topic's subscribers, nothing else."""
    subs = subscribers_of(scenario)
    placed = [(tp, m) for m, tps in a.assignment.items() for tp in tps]
    if len(placed) != len({tp for tp, _ in placed}):
        return False
    if {tp for tp, _ in placed} != set(assignable_partitions(scenario)):
        return False
    return all(m in subs.get(tp.topic, ()) for tp, m in placed)


def sizes_within_one(scenario: Scenario, a: Assignment) -> bool:
    """B1: every member's size within one of every other's (members with no target count as 0)."""
    sizes = [len(a.assignment.get(m.id, ())) for m in scenario.members]
    return not sizes or max(sizes) - min(sizes) <= 1


def _counts(scenario: Scenario, a: Assignment) -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {t: {m: [] for m in ms} for t, ms in subscribers_of(scenario).items()}
    for m, tps in a.assignment.items():
        for tp in tps:
            if tp.topic in out and m in out[tp.topic]:
                out[tp.topic][m].append(tp.partition)
    return out


def per_topic_within_one(scenario: Scenario, a: Assignment) -> bool:
    """R2: per topic, its subscribers' counts within one."""
    for by_member in _counts(scenario, a).values():
        sizes = [len(ps) for ps in by_member.values()]
        if sizes and max(sizes) - min(sizes) > 1:
            return False
    return True


def contiguous_ranges(scenario: Scenario, a: Assignment) -> TopicPartition | None:
    """R1: a partition breaking some subscriber's range of a topic into two, or None when every range is contiguous."""
    for topic, by_member in _counts(scenario, a).items():
        for ps in by_member.values():
            ps = sorted(ps)
            for x, y in zip(ps, ps[1:]):
                if y != x + 1:
                    return TopicPartition(topic, y)
    return None


def _per_topic_totals_within_one(scenario: Scenario, a: Assignment) -> bool:
    sizes = {m: len(tps) for m, tps in a.assignment.items()}
    for ms in subscribers_of(scenario).values():
        totals = [sizes.get(m, 0) for m in ms]
        if len(totals) >= 2 and max(totals) - min(totals) > 1:
            return False
    return True


def fixed_point_owed(scenario: Scenario, contract: ConsumerContract) -> bool:
    """Whether the members' current targets already satisfy ``contract`` so that they must come back
    unchanged: FP1 (complete and sizes within one) or FP2 (complete and each topic's subscribers'
    totals within one). FP3 is a re-run on the assignor's own answer: ``grading.consumer`` owes it always."""
    target = current_target(scenario)
    if contract.fixed_point == "FP1":
        return _complete(scenario, target) and sizes_within_one(scenario, target)
    if contract.fixed_point == "FP2":
        return _complete(scenario, target) and _per_topic_totals_within_one(scenario, target)
    return False


def balanced_columns(scenario: Scenario, a: Assignment) -> dict[str, bool | None]:
    """Every balance the consumer-group grade reports (only the contract's is a promise)."""
    return {"uniform": sizes_within_one(scenario, a), "per-topic": per_topic_within_one(scenario, a)}


def contract_violations(scenario: Scenario, contract: ConsumerContract, a: Assignment, *,
                        kept: int | None = None, optimal_kept: int | None = None) -> list[Violation]:
    """The contract's own promises broken by ``a`` (V1 is ``check_assignment``'s): ``imbalance`` (B1 or R2),
    ``not-contiguous`` (R1), ``not-fixed-point`` (FP1/FP2), ``stickiness`` (S1, when ``kept`` and
    ``optimal_kept`` are given)."""
    out: list[Violation] = []
    if contract.balance == "uniform" and not sizes_within_one(scenario, a):
        out.append(Violation("imbalance", {"mode": "uniform", "loads": a.loads()}))
    if contract.balance == "per-topic":
        if not per_topic_within_one(scenario, a):
            out.append(Violation("imbalance", {"mode": "per-topic", "loads": a.loads()}))
        broken = contiguous_ranges(scenario, a)
        if broken is not None:
            out.append(Violation("not-contiguous", {"partition": [broken.topic, broken.partition]}))
    if fixed_point_owed(scenario, contract):
        target = current_target(scenario)
        moved = _first_move(target, a)
        if moved is not None:
            out.append(Violation("not-fixed-point", {"rule": contract.fixed_point, **moved}))
    if contract.owes_kept and kept is not None and optimal_kept is not None and kept < optimal_kept:
        out.append(Violation("stickiness", {"kept": kept, "optimal_kept": optimal_kept}))
    return out


def _first_move(before: Assignment, after: Assignment) -> dict[str, Any] | None:
    """The first partition (sorted) whose member differs between two assignments."""
    a = {tp: m for m, tps in before.assignment.items() for tp in tps}
    b = {tp: m for m, tps in after.assignment.items() for tp in tps}
    for tp in sorted(set(a) | set(b)):
        if a.get(tp) != b.get(tp):
            return {"partition": [tp.topic, tp.partition], "first": a.get(tp), "second": b.get(tp)}
    return None


def first_move(before: Assignment, after: Assignment) -> dict[str, Any] | None:
    """``_first_move`` for the grader (its witness of a re-run that moved something)."""
    return _first_move(before, after)


def member_sizes(a: Assignment) -> tuple[int, ...]:
    return tuple(sorted(len(tps) for tps in a.assignment.values()))


def topic_sizes(scenario: Scenario, a: Assignment) -> Mapping[str, tuple[int, ...]]:
    return {t: tuple(sorted(len(ps) for ps in by_member.values())) for t, by_member in _counts(scenario, a).items()}
