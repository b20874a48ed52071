"""``ServerSideRelease``: the releases of Kafka's server-side (KIP-848) assignors whose results differ,
one frozen record each, and how each was verified against the jar of its release.

The classic ``release.Release`` describes the sticky assignors' knobs (user data, ownership rules,
paths); a coordinator assignor has none of those, so its releases get a record of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServerSideRelease", "SERVER_SIDE_RELEASES"]


@dataclass(frozen=True)
class ServerSideRelease:
    """One release of a server-side assignor, as far as its targets can tell it apart.

    ``name``: the registry name; ``kafka_name``: the name in ``group.consumer.assignors``;
    ``version``: ``"current"`` or the Kafka release; ``kafka_18688_fixed``: the homogeneous ``uniform``
    builder lets a member give up the "+1" partition to later members (4.0.1 and 4.1.0 on);
    ``kafka_17710``: the heterogeneous builder is KAFKA-17710's rewrite (4.0.0 on), else the 3.9.x one.
    ``verified_against``: the jar diffed (``kafka-group-coordinator 4.0.0``, run as
    ``kafka-java:uniform@4.0.0``); ``verified_inputs`` / ``verified_agreeing``: random groups of
    tests/consumer_groups.py diffed by benchmarks/consumer_assignors_vs_jars.py (``--groups 3000``,
    seed 1) and how many came out identical.
    """

    name: str
    kafka_name: str
    version: str
    kafka_18688_fixed: bool
    references: tuple[str, ...]
    description: str
    verified_against: str | None = None
    verified_inputs: int = 0
    verified_agreeing: int = 0
    kafka_17710: bool = True


SERVER_SIDE_RELEASES: tuple[ServerSideRelease, ...] = (
    ServerSideRelease(
        "uniform", "uniform", "current", True, ("KIP-848", "KAFKA-17710", "KAFKA-18688"),
        "UniformAssignor (KIP-848, server side; Kafka 4.0.1 on): homogeneous groups sizes within one, sticky up to "
        "quota; heterogeneous groups balanced topic by topic, at most 16 rounds",
        "kafka-group-coordinator 4.4.0", 3000, 3000,
    ),
    ServerSideRelease(
        "uniform@4.0.0", "uniform", "4.0.0", False, ("KIP-848", "KAFKA-17710"),
        "UniformAssignor as in Kafka 4.0.0: the homogeneous builder before KAFKA-18688's fix (only members early in "
        "iteration order keep an owned +1 partition, so a balanced group can move)",
        "kafka-group-coordinator 4.0.0", 3000, 3000,
    ),
    ServerSideRelease(
        "uniform@3.9.1", "uniform", "3.9.1", False, ("KIP-848", "KAFKA-17710"),
        "UniformAssignor as in Kafka 3.9.x (KIP-848 preview): 4.0.0's homogeneous builder, and the heterogeneous "
        "builder before KAFKA-17710's rewrite (slow; throws PartitionAssignorException when a partition must move twice)",
        "kafka-group-coordinator 3.9.1", 3000, 3000, kafka_17710=False,
    ),
)
"""KAFKA-17710 is observable: on 500 random groups (benchmarks/consumer_assignors_vs_jars.py
--groups 500 --pairs uniform@4.0.0=uniform@3.9.1) ``kafka-java:uniform@3.9.1`` agrees with
``uniform@4.0.0`` on every homogeneous group, gives other targets on 87 heterogeneous ones and
throws ``PartitionAssignorException`` ("Mismatch in partition movement record with respect to
partition ownership during a rebalance") on 3; ``uniform@3.9.1`` reproduces all of it. Releases
before 3.9 (KIP-848 early access) are not modelled."""
