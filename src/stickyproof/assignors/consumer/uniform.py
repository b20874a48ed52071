"""``UniformAssignor`` (Kafka 4.x, ``group.consumer.assignors`` default): the homogeneous builder
when every member subscribes to the same topics, the heterogeneous one otherwise; the coordinator
decides which (``GroupSpec.subscriptionType()``, spec.subscription_type)."""

from __future__ import annotations

from .compiled import port_module
from .spec import HOMOGENEOUS, ConsumerGroupSpec, TopicId

__all__ = ["assign_uniform"]


def assign_uniform(spec: ConsumerGroupSpec, *, kafka_18688_fixed: bool = True,
                   kafka_17710: bool = True, compiled: bool = True) -> dict[str, list[tuple[TopicId, list[int]]]]:
    """``UniformAssignor.assign``: every member's new target (members left out get nothing).
    ``kafka_17710=False``: the heterogeneous builder before KAFKA-17710's rewrite (Kafka 3.9.x).
    ``compiled=False``: the pure-Python builders even where compiled ones are current (compiled.py)."""
    if not spec.members:
        return {}
    if spec.subscription_type == HOMOGENEOUS:
        return port_module("uniform_homogeneous", compiled=compiled).build_homogeneous(
            spec, kafka_18688_fixed=kafka_18688_fixed)
    if kafka_17710:
        return port_module("uniform_heterogeneous", compiled=compiled).build_heterogeneous(spec)
    return port_module("uniform_heterogeneous_3_9", compiled=compiled).build_heterogeneous_3_9(spec)
