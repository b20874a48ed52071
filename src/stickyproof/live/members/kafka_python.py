"""kafka-python as a live member: ``python -m stickyproof.live.members.kafka_python``.

The protocol is the Java member's (``stickyproof.live.members``). kafka-python calls its
``ConsumerRebalanceListener`` from inside ``poll`` and heartbeats on a thread of its own, so a stall
past ``max_poll_interval_ms`` makes it leave the group itself, as the Java consumer does. Its
assignors are chosen by the protocol names the group matches across libraries (``range``,
``roundrobin``, ``sticky``, ``cooperative-sticky``); the generation and member id are its
``group_metadata()``. It speaks only the classic group protocol.
"""

from __future__ import annotations

from typing import Any, Mapping

from kafka import KafkaConsumer
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

from . import Library, serve

__all__ = ["KafkaPython", "ASSIGNORS"]

ASSIGNORS = {a.name: a for a in (RangePartitionAssignor, RoundRobinPartitionAssignor, StickyPartitionAssignor,
                                 CooperativeStickyAssignor)}
"""Protocol name -> kafka-python's assignor class."""


def _pairs(tps: Any) -> list[tuple[str, int]]:
    return [(tp.topic, tp.partition) for tp in tps or ()]


class _Listener(ConsumerRebalanceListener):
    def __init__(self, member: "KafkaPython") -> None:
        self.member = member

    def on_partitions_revoked(self, revoked):
        self.member.on_revoked(_pairs(revoked))

    def on_partitions_assigned(self, assigned):
        self.member.on_assigned(_pairs(assigned))

    def on_partitions_lost(self, lost):
        self.member.on_lost(_pairs(lost))


class KafkaPython(Library):
    def __init__(self) -> None:
        self.consumer: KafkaConsumer | None = None

    def open(self, start: Mapping[str, Any]) -> None:
        if str(start.get("group_protocol") or "classic") != "classic":
            raise ValueError("kafka-python speaks only group.protocol=classic")
        self.consumer = KafkaConsumer(
            bootstrap_servers=start["bootstrap"], group_id=start["group"], client_id=start["name"],
            enable_auto_commit=False, auto_offset_reset="earliest",
            session_timeout_ms=int(start["session_timeout_ms"]), heartbeat_interval_ms=int(start["heartbeat_interval_ms"]),
            max_poll_interval_ms=int(start["max_poll_interval_ms"]),
            metadata_max_age_ms=int(start.get("metadata_max_age_ms") or 300000),
            group_instance_id=start.get("instance_id"),
            partition_assignment_strategy=[ASSIGNORS[n] for n in start.get("assignors") or ("range",)],
        )

    def subscribe(self, topics: list[str]) -> None:
        assert self.consumer is not None
        self.consumer.subscribe(topics, listener=_Listener(self))

    def poll(self, seconds: float) -> None:
        assert self.consumer is not None
        self.consumer.poll(timeout_ms=int(seconds * 1000))

    def close(self) -> None:
        assert self.consumer is not None
        self.consumer.close()

    def membership(self) -> tuple[int, str | None]:
        if self.consumer is None:
            return -1, None
        try:
            meta = self.consumer.group_metadata()
            return int(getattr(meta, "generation_id", -1)), getattr(meta, "member_id", None)
        except Exception:  # noqa: BLE001
            return -1, None

    def assignment(self) -> list[tuple[str, int]]:
        return _pairs(self.consumer.assignment()) if self.consumer is not None else []


if __name__ == "__main__":
    serve(KafkaPython)
