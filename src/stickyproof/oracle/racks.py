"""Where Kafka's rack-aware sticky path applies, and which placements it counts as rack-aligned.

KIP-881 (docs/rules.md R48, models/optimal-assignment.md D7): the sticky assignors turn rack-aware
assignment on for the whole group when some member reports a rack, the members' racks and the
assigned partitions' replica racks meet, and not every partition has a replica on every rack. On
that path Kafka's contract order is balance, then rack alignment ("previously owned partitions may
be reassigned to improve rack locality"), then partitions kept.

Written from the rule, apart from ``assignors/racks.py`` (the oracle never imports what it grades).
A member's rack reaches the leader only in a v3 subscription (KIP-881), so a v0-v2 member counts as
rackless here, as it does for Kafka's leader.
"""

from __future__ import annotations

from typing import Mapping

from ..model import Scenario

__all__ = ["seen_racks", "kafka_rack_path", "aligned"]

RACK_VERSION = 3
"""The first ``ConsumerProtocolSubscription`` version carrying ``RackId`` (KIP-881)."""


def seen_racks(scenario: Scenario) -> dict[str, str | None]:
    """Each member's rack as the leader decodes it: its own from v3 on, none before (an empty one is none)."""
    return {m.id: (m.rack or None) if m.version >= RACK_VERSION else None for m in scenario.members}


def _partition_racks(scenario: Scenario) -> list[frozenset[str]]:
    """The replica racks of every assignable partition (D1); a topic without rack data has replicas
    on no known rack (the empty set)."""
    subscribed = {t for m in scenario.members for t in m.topics}
    out: list[frozenset[str]] = []
    for topic in scenario.topics:
        if topic.partitions <= 0 or topic.name not in subscribed:
            continue
        if topic.racks is None:
            out.extend(frozenset() for _ in range(topic.partitions))
        else:
            out.extend(frozenset(r) for r in topic.racks)
    return out


def kafka_rack_path(scenario: Scenario) -> dict[str, str | None] | None:
    """The members' racks as the rack-aware path uses them when it runs (R48), else None.

    Off when no member reports a rack, or when the members' racks and the replica racks are
    disjoint; otherwise on iff some partition's replica racks differ from their union.
    """
    racks = seen_racks(scenario)
    consumers = {r for r in racks.values() if r}
    per_partition = _partition_racks(scenario)
    union = frozenset().union(*per_partition) if per_partition else frozenset()
    if not consumers or consumers.isdisjoint(union):
        return None
    if all(r == union for r in per_partition):
        return None
    return racks


def aligned(member_rack: str | None, replica_racks: frozenset[str] | None) -> bool:
    """D7: Kafka's ``racksMismatch`` negated. A member without a rack never mismatches; a racked member
    matches a partition only if one of its replicas is on that rack (none known: no match)."""
    return member_rack is None or (replica_racks is not None and member_rack in replica_racks)


def count_aligned(scenario: Scenario, racks: Mapping[str, str | None], owner: Mapping) -> int:
    """How many of ``owner``'s placements (partition -> member) are aligned (D7) under ``racks``."""
    meta = {t.name: t for t in scenario.topics}
    total = 0
    for tp, m in owner.items():
        t = meta.get(tp.topic)
        rl = None if t is None or t.racks is None or tp.partition >= len(t.racks) else frozenset(t.racks[tp.partition])
        total += aligned(racks.get(m), rl)
    return total
