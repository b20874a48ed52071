"""KIP-848's server-side assignors, ported from Kafka's group coordinator: ``uniform`` and the
coordinator's ``range`` (registry name ``consumer-range``). They take the coordinator's input
(``spec.group_spec`` of a consumer-group scenario), not a classic leader's, so they live apart
from the classic assignors and share no code with them.

    assign_consumer_group(scenario, name) -> Assignment
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from ...errors import UnknownAssignor
from ...model import Assignment, Scenario
from .range import assign_consumer_range
from .releases import SERVER_SIDE_RELEASES, ServerSideRelease
from .spec import ConsumerGroupSpec, group_spec, to_assignment
from .uniform import assign_uniform

__all__ = ["CONSUMER_GROUP_ASSIGNORS", "SERVER_SIDE_RELEASES", "ServerSideRelease", "ConsumerGroupSpec",
           "assign_consumer_group", "assign_consumer_range", "assign_uniform", "group_spec", "to_assignment"]

CONSUMER_GROUP_ASSIGNORS: dict[str, Callable[[ConsumerGroupSpec], dict]] = {
    **{r.name: partial(assign_uniform, kafka_18688_fixed=r.kafka_18688_fixed, kafka_17710=r.kafka_17710)
       for r in SERVER_SIDE_RELEASES},
    "consumer-range": assign_consumer_range,
}


def assign_consumer_group(scenario: Scenario, name: str, *, linked_targets: bool = False,
                          subscription_type: str | None = None) -> Assignment:
    """Run server-side assignor ``name`` on a consumer-group scenario; the new target of every member.
    ``linked_targets``, ``subscription_type``: Kafka's test fixtures only (``spec.group_spec``)."""
    fn = CONSUMER_GROUP_ASSIGNORS.get(name)
    if fn is None:
        raise UnknownAssignor(f"no server-side assignor {name!r} (known: {', '.join(CONSUMER_GROUP_ASSIGNORS)})")
    spec = group_spec(scenario, linked_targets=linked_targets, subscription_type_override=subscription_type)
    return to_assignment(spec, fn(spec), [m.id for m in scenario.members])
