"""``UniformAssignor`` (Kafka 4.x, ``group.consumer.assignors`` default): the homogeneous builder
when every member subscribes to the same topics, the heterogeneous one otherwise; the coordinator
decides which (``GroupSpec.subscriptionType()``, spec.subscription_type)."""

from __future__ import annotations

from .spec import HOMOGENEOUS, ConsumerGroupSpec, TopicId
from .uniform_heterogeneous import build_heterogeneous
from .uniform_heterogeneous_3_9 import build_heterogeneous_3_9
from .uniform_homogeneous import build_homogeneous

__all__ = ["assign_uniform"]


def assign_uniform(spec: ConsumerGroupSpec, *, kafka_18688_fixed: bool = True,
                   kafka_17710: bool = True) -> dict[str, list[tuple[TopicId, list[int]]]]:
    """``UniformAssignor.assign``: every member's new target (members left out get nothing).
    ``kafka_17710=False``: the heterogeneous builder before KAFKA-17710's rewrite (Kafka 3.9.x)."""
    if not spec.members:
        return {}
    if spec.subscription_type == HOMOGENEOUS:
        return build_homogeneous(spec, kafka_18688_fixed=kafka_18688_fixed)
    return build_heterogeneous(spec) if kafka_17710 else build_heterogeneous_3_9(spec)
