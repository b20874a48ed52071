"""KIP-848's server-side assignors, ported from Kafka's group coordinator: ``uniform`` and the
coordinator's ``range`` (registry name ``consumer-range``). They take the coordinator's input
(``spec.group_spec`` of a consumer-group scenario), not a classic leader's, so they live apart
from the classic assignors and share no code with them.

    assign_consumer_group(scenario, name) -> Assignment

``CONSUMER_GROUP_ASSIGNORS`` runs the compiled ports where they are built and current (compiled.py),
``PURE_CONSUMER_GROUP_ASSIGNORS`` the pure-Python ones always: the same answers, raw output and order
included (tests/test_consumer_ports_compiled.py).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from ...errors import UnknownAssignor
from ...model import Assignment, Scenario
from .compiled import compiled_ports_in_use, port_module as _port_module, ports_status
from .releases import SERVER_SIDE_RELEASES, ServerSideRelease
from .spec import ConsumerGroupSpec, group_spec, to_assignment
from .uniform import assign_uniform

__all__ = ["CONSUMER_GROUP_ASSIGNORS", "PURE_CONSUMER_GROUP_ASSIGNORS", "SERVER_SIDE_RELEASES", "ServerSideRelease",
           "ConsumerGroupSpec", "assign_consumer_group", "assign_consumer_range", "assign_uniform", "compiled_ports_in_use", "group_spec",
           "ports_status", "to_assignment"]

assign_consumer_range: Callable[[ConsumerGroupSpec], dict] = _port_module("range").assign_consumer_range


def _assignors(compiled: bool) -> dict[str, Callable[[ConsumerGroupSpec], dict]]:
    return {
        **{r.name: partial(assign_uniform, kafka_18688_fixed=r.kafka_18688_fixed, kafka_17710=r.kafka_17710,
                           compiled=compiled) for r in SERVER_SIDE_RELEASES},
        "consumer-range": _port_module("range", compiled=compiled).assign_consumer_range,
    }


CONSUMER_GROUP_ASSIGNORS: dict[str, Callable[[ConsumerGroupSpec], dict]] = _assignors(True)
PURE_CONSUMER_GROUP_ASSIGNORS: dict[str, Callable[[ConsumerGroupSpec], dict]] = _assignors(False)


def assign_consumer_group(scenario: Scenario, name: str, *, linked_targets: bool = False,
                          subscription_type: str | None = None) -> Assignment:
    """Run server-side assignor ``name`` on a consumer-group scenario; the new target of every member.
    ``linked_targets``, ``subscription_type``: Kafka's test fixtures only (``spec.group_spec``)."""
    fn = CONSUMER_GROUP_ASSIGNORS.get(name)
    if fn is None:
        raise UnknownAssignor(f"no server-side assignor {name!r} (known: {', '.join(CONSUMER_GROUP_ASSIGNORS)})")
    spec = group_spec(scenario, linked_targets=linked_targets, subscription_type_override=subscription_type)
    return to_assignment(spec, fn(spec), [m.id for m in scenario.members])
