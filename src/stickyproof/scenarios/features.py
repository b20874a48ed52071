"""``scenario_features``: what a scenario *is*, measured from the scenario alone (Parquet columns).

The features are read off the document, never taken from the knobs that drew it, so a sweep
can group results by them whatever produced the scenario (sampler, Hypothesis, a hand-written
regression). Every value is a scalar (int, str or bool) so each is one Parquet column.
"""

from __future__ import annotations

from typing import Any

from ..model import DEFAULT_GENERATION, Scenario, TopicPartition

__all__ = ["scenario_features", "subscription_kind", "FEATURE_COLUMNS"]

#: Column names in output order (a sweep can build its schema from this).
FEATURE_COLUMNS = (
    "name",
    "protocol",
    "members",
    "topics",
    "zero_partition_topics",
    "partitions",
    "subscribed_partitions",
    "subscription",
    "empty_subscriptions",
    "missing_topic_subscriptions",
    "versions",
    "min_version",
    "max_version",
    "owned_claims",
    "claimants",
    "max_generation",
    "stale_claimants",
    "unknown_generation_claimants",
    "contested_partitions",
    "double_claims",
    "deleted_topic_claims",
    "past_count_claims",
    "unsubscribed_claims",
    "racks",
    "rack_count",
    "static_members",
    "assignors",
)


def subscription_kind(scenario: Scenario) -> str:
    """``empty`` (some member subscribes to nothing), ``uniform``, ``nested`` (a chain under
    inclusion), ``disjoint`` (distinct lists share no topic) or ``heterogeneous``."""
    sets = [frozenset(m.topics) for m in scenario.members]
    if any(not s for s in sets):
        return "empty"
    distinct = sorted(set(sets), key=lambda s: (len(s), sorted(s)))
    if len(distinct) <= 1:
        return "uniform"
    if all(a <= b for a, b in zip(distinct, distinct[1:])):
        return "nested"
    if all(not (a & b) for i, a in enumerate(distinct) for b in distinct[i + 1 :]):
        return "disjoint"
    return "heterogeneous"


def _rack_kind(scenario: Scenario) -> str:
    on_members = any(m.rack is not None for m in scenario.members)
    on_replicas = any(t.racks is not None for t in scenario.topics)
    return {(False, False): "none", (True, False): "members", (False, True): "replicas", (True, True): "both"}[
        (on_members, on_replicas)
    ]


def _assignor_kind(scenario: Scenario) -> str:
    lists = {m.assignors for m in scenario.members}
    if lists <= {()}:
        return "none"
    return "same" if len(lists) == 1 else "mixed"


def scenario_features(scenario: Scenario) -> dict[str, Any]:
    """One flat record describing the scenario; keys are ``FEATURE_COLUMNS`` in order.

    ``partitions`` counts every partition in the leader's metadata, ``subscribed_partitions``
    the assignable ones (existing partitions of subscribed topics, D1); ``subscription`` is
    ``subscription_kind``. Stale claimants: members with claims whose generation is known (>= 0) but below the
    highest generation in the group. Double claims: partitions that two claimants of the same
    known generation both claim (Kafka's R8 duplicate rule).
    """
    counts = scenario.partition_counts
    members = scenario.members
    versions = sorted({m.version for m in members})
    generations = [m.generation for m in members]
    max_generation = max(generations, default=DEFAULT_GENERATION)
    claimants_of: dict[TopicPartition, list[int]] = {}
    deleted = past = unsubscribed = 0
    for m in members:
        for tp in m.owned:
            claimants_of.setdefault(tp, []).append(m.generation)
            if tp.topic not in counts:
                deleted += 1
            elif tp.partition >= counts[tp.topic]:
                past += 1
            elif tp.topic not in m.topics:
                unsubscribed += 1
    double = sum(
        1
        for gens in claimants_of.values()
        if len(gens) > 1 and any(gens.count(g) > 1 for g in set(gens) if g != DEFAULT_GENERATION)
    )
    racks = {m.rack for m in members if m.rack is not None}
    racks |= {r for t in scenario.topics if t.racks for rl in t.racks for r in rl}
    features: dict[str, Any] = {
        "name": scenario.name,
        "protocol": scenario.protocol,
        "members": len(members),
        "topics": len(scenario.topics),
        "zero_partition_topics": sum(1 for t in scenario.topics if t.partitions == 0),
        "partitions": sum(t.partitions for t in scenario.topics),
        "subscribed_partitions": len(scenario.subscribed_partitions()),
        "subscription": subscription_kind(scenario),
        "empty_subscriptions": sum(1 for m in members if not m.topics),
        "missing_topic_subscriptions": sum(1 for m in members if any(t not in counts for t in m.topics)),
        "versions": ",".join(map(str, versions)),
        "min_version": versions[0] if versions else -1,
        "max_version": versions[-1] if versions else -1,
        "owned_claims": sum(len(m.owned) for m in members),
        "claimants": sum(1 for m in members if m.owned),
        "max_generation": max_generation,
        "stale_claimants": sum(
            1 for m in members if m.owned and DEFAULT_GENERATION < m.generation < max_generation
        ),
        "unknown_generation_claimants": sum(1 for m in members if m.owned and m.generation == DEFAULT_GENERATION),
        "contested_partitions": sum(1 for gens in claimants_of.values() if len(gens) > 1),
        "double_claims": double,
        "deleted_topic_claims": deleted,
        "past_count_claims": past,
        "unsubscribed_claims": unsubscribed,
        "racks": _rack_kind(scenario),
        "rack_count": len(racks),
        "static_members": sum(1 for m in members if m.instance_id is not None),
        "assignors": _assignor_kind(scenario),
    }
    return features
