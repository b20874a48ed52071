"""confluent-kafka (librdkafka) as a live member: ``python -m stickyproof.live.members.librdkafka``.

The protocol is the Java member's (``stickyproof.live.members``). librdkafka runs its group
membership (heartbeats, the max-poll-interval check) on its own threads and calls the rebalance
callbacks from inside ``poll``, as the Java consumer does; an ``on_assign`` that does not assign
itself is followed by the library's own (incremental under ``cooperative-sticky``) assign, so the
callbacks only report. ``partition.assignment.strategy`` takes librdkafka's names (``range``,
``roundrobin``, ``cooperative-sticky``), which are also the protocol names the group matches
across libraries. The generation is read from the consumer group metadata librdkafka serializes
for transactions (``consumer_group_metadata()``); -1 when its layout is not the one expected.
"""

from __future__ import annotations

import struct
from typing import Any, Mapping

import confluent_kafka

from . import Library, serve

__all__ = ["Librdkafka", "generation_of"]

_MAGIC = b"CGMDv2:"


def generation_of(metadata: bytes) -> int:
    """The generation id in librdkafka's serialized group metadata (``CGMDv2:``, then the int32
    generation in host byte order, then the group and member ids), or -1 for any other layout
    (seen with librdkafka 2.16.0: ``b'CGMDv2:\\x01\\x00\\x00\\x00g\\x00rdkafka-...'`` in generation 1)."""
    if not isinstance(metadata, (bytes, bytearray)) or len(metadata) < len(_MAGIC) + 4 or not metadata.startswith(_MAGIC):
        return -1
    return struct.unpack_from("=i", metadata, len(_MAGIC))[0]


def _pairs(partitions: Any) -> list[tuple[str, int]]:
    return [(p.topic, p.partition) for p in partitions or ()]


class Librdkafka(Library):
    def __init__(self) -> None:
        self.consumer: confluent_kafka.Consumer | None = None

    def open(self, start: Mapping[str, Any]) -> None:
        protocol = str(start.get("group_protocol") or "classic")
        conf: dict[str, Any] = {
            "bootstrap.servers": start["bootstrap"], "group.id": start["group"], "client.id": start["name"],
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "group.protocol": protocol,
            "max.poll.interval.ms": int(start["max_poll_interval_ms"]),
        }
        if start.get("metadata_max_age_ms"):
            # librdkafka refreshes subscribed topics' metadata on its own interval (5 min by default)
            conf["topic.metadata.refresh.interval.ms"] = int(start["metadata_max_age_ms"])
        if start.get("instance_id"):
            conf["group.instance.id"] = start["instance_id"]
        if protocol == "classic":
            conf["session.timeout.ms"] = int(start["session_timeout_ms"])
            conf["heartbeat.interval.ms"] = int(start["heartbeat_interval_ms"])
            conf["partition.assignment.strategy"] = ",".join(start.get("assignors") or ("range",))
        elif start.get("remote_assignor"):
            conf["group.remote.assignor"] = start["remote_assignor"]
        self.consumer = confluent_kafka.Consumer(conf)

    def subscribe(self, topics: list[str]) -> None:
        assert self.consumer is not None
        self.consumer.subscribe(topics, on_assign=lambda c, ps: self.on_assigned(_pairs(ps)),
                                on_revoke=lambda c, ps: self.on_revoked(_pairs(ps)),
                                on_lost=lambda c, ps: self.on_lost(_pairs(ps)))

    def poll(self, seconds: float) -> None:
        assert self.consumer is not None
        msg = self.consumer.poll(seconds)
        if msg is not None and msg.error() is not None and not msg.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
            raise confluent_kafka.KafkaException(msg.error())

    def close(self) -> None:
        assert self.consumer is not None
        self.consumer.close()

    def membership(self) -> tuple[int, str | None]:
        if self.consumer is None:
            return -1, None
        try:
            generation = generation_of(self.consumer.consumer_group_metadata())
        except Exception:  # noqa: BLE001 - not in a group yet
            generation = -1
        try:
            member_id = self.consumer.memberid()
        except Exception:  # noqa: BLE001
            member_id = None
        return generation, member_id

    def assignment(self) -> list[tuple[str, int]]:
        return _pairs(self.consumer.assignment()) if self.consumer is not None else []


if __name__ == "__main__":
    serve(Librdkafka)
