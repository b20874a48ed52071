"""KIP-881 rack awareness: when Kafka turns rack-aware assignment on (docs/rules.md R44, R48).

``AbstractPartitionAssignor.useRackAwareAssignment``: off when no consumer has a rack or the
consumer racks and the partition racks are disjoint; otherwise on iff some partition's replica
racks differ from the union (not every partition is on every rack). Range applies the rule per
topic (R44), the sticky assignors to the whole group (R48).
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["use_rack_aware_assignment"]


def use_rack_aware_assignment(
    consumer_racks: Iterable[str | None], racks_per_partition: Iterable[Iterable[str]]
) -> bool:
    consumers = {r for r in consumer_racks if r}
    per_partition = [frozenset(r) for r in racks_per_partition]
    all_racks = frozenset().union(*per_partition) if per_partition else frozenset()
    if not consumers or consumers.isdisjoint(all_racks):
        return False
    return any(racks != all_racks for racks in per_partition)
