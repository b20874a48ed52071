"""Reading ``kafka-topics.sh --describe`` output: partition counts, and replica brokers per partition.

``TopicCommand`` prints one summary line per topic and one line per partition, fields separated by
tabs, every release since 1.x::

    Topic: orders	TopicId: 3Yb...	PartitionCount: 3	ReplicationFactor: 2	Configs: min.insync.replicas=1
    	Topic: orders	Partition: 0	Leader: 1	Replicas: 1,2	Isr: 1,2
    	Topic: orders	Partition: 1	Leader: 2	Replicas: 2,3	Isr: 2,3	Elr: N/A	LastKnownElr: N/A

Releases up to 2.3 wrote the summary without a space after each colon (``Topic:orders\tPartitionCount:3``);
2.8 added ``TopicId`` (omitted for the zero id), partition lines gained ``Adding Replicas`` /
``Removing Replicas`` during a reassignment and, in 3.7, ``Elr`` / ``LastKnownElr``. A key this
reader does not know is skipped, so later additions read too. When the tabs were lost to a copy,
fields are split at the known keys instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import InvalidScenario

__all__ = ["TopicListing", "read_topics", "replica_racks", "LEGAL_TOPIC"]

#: ``org.apache.kafka.common.internals.Topic.validate``: ASCII letters, digits, '.', '_', '-'; at most 249.
LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")
_KEYS = ("Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs", "MarkedForDeletion", "Partition",
         "Leader", "Replicas", "Isr", "Adding Replicas", "Removing Replicas", "Elr", "LastKnownElr")
_KEY_SPLIT = re.compile(r"(?:^|\s+)(?=(?:" + "|".join(re.escape(k) for k in sorted(_KEYS, key=len, reverse=True)) + r"):)")


@dataclass(frozen=True)
class TopicListing:
    """One topic as listed: its partition count and, per partition line printed, the replica broker ids."""

    name: str
    partitions: int
    line: int
    replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


def _where(line: int) -> str:
    return f"topics line {line}"


def _fields(text: str, line: int) -> dict[str, str]:
    parts = [p for p in text.split("\t") if p.strip()] if "\t" in text else [p for p in _KEY_SPLIT.split(text) if p.strip()]
    out: dict[str, str] = {}
    for part in parts:
        key, colon, value = part.strip().partition(":")
        if not colon:
            raise InvalidScenario(_where(line), f"field {part.strip()!r} is not 'Key: value'")
        if key in out:
            raise InvalidScenario(_where(line), f"field {key!r} appears twice")
        out[key] = value.strip()
    return out


def _int(value: str, key: str, line: int, *, minimum: int = 0) -> int:
    if not re.fullmatch(r"\d{1,10}", value) or int(value) > 2**31 - 1 or int(value) < minimum:
        raise InvalidScenario(_where(line), f"{key} {value!r} is not a number from {minimum} to 2147483647")
    return int(value)


def _topic(value: str, line: int) -> str:
    if not LEGAL_TOPIC.fullmatch(value) or value in (".", ".."):
        raise InvalidScenario(_where(line), f"Topic {value!r} is not a legal Kafka topic name (letters, digits, '.', '_', '-')")
    return value


def read_topics(text: str) -> dict[str, TopicListing]:
    """Every topic of a ``kafka-topics.sh --describe`` output, by name, in the order listed."""
    summaries: dict[str, TopicListing] = {}
    replicas: dict[str, dict[int, tuple[int, ...]]] = {}
    seen_any = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("Error while executing topic command"):
            raise InvalidScenario(_where(number), f"kafka-topics.sh reported an error: {stripped}")
        if not stripped.startswith("Topic:"):
            if not seen_any:  # a pasted prompt or command line before the output
                continue
            raise InvalidScenario(_where(number), f"not a topic or partition line of kafka-topics.sh --describe: {stripped[:60]!r}")
        seen_any = True
        fields = _fields(line, number)
        name = _topic(fields["Topic"], number)
        if "Partition" in fields:
            partition = _int(fields["Partition"], "Partition", number)
            listed = replicas.setdefault(name, {})
            if partition in listed:
                raise InvalidScenario(_where(number), f"partition {partition} of topic {name!r} is listed twice")
            brokers = fields.get("Replicas", "")
            listed[partition] = tuple(_int(b.strip(), "Replicas broker", number) for b in brokers.split(",") if b.strip())
            summary = summaries.get(name)
            if summary is not None and partition >= summary.partitions:
                raise InvalidScenario(
                    _where(number), f"partition {partition} of topic {name!r} is past its PartitionCount {summary.partitions}"
                )
        elif "PartitionCount" in fields:
            if name in summaries:
                raise InvalidScenario(_where(number), f"topic {name!r} is listed twice (first at line {summaries[name].line})")
            summaries[name] = TopicListing(name, _int(fields["PartitionCount"], "PartitionCount", number), number)
        else:
            raise InvalidScenario(_where(number), "a Topic line with neither PartitionCount nor Partition")
    for name in replicas:
        if name not in summaries:
            raise InvalidScenario(
                "topics",
                f"topic {name!r} has partition lines but no summary line with its PartitionCount (was kafka-topics.sh run "
                "with a filter such as --under-replicated-partitions?)",
            )
    return {name: TopicListing(t.name, t.partitions, t.line, replicas.get(name, {})) for name, t in summaries.items()}


def replica_racks(listing: TopicListing, broker_racks: Mapping[int, str]) -> tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]:
    """``racks[p]`` for every partition (the racks of its replicas, in replica order, each once) and
    the replica brokers that have no rack given.

    A broker without a rack contributes none, as Kafka's ``Node.rack()`` null does. Every partition
    needs its line: a partition whose replicas are unknown has no honest rack list.
    """
    missing = [p for p in range(listing.partitions) if p not in listing.replicas]
    if missing:
        raise InvalidScenario(
            "topics",
            f"topic {listing.name!r}: no partition line for partition {missing[0]}"
            f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}, so its replica racks are unknown",
        )
    racks = []
    rackless: set[int] = set()
    for p in range(listing.partitions):
        seen: list[str] = []
        for broker in listing.replicas[p]:
            rack = broker_racks.get(broker)
            if rack is None:
                rackless.add(broker)
            elif rack not in seen:
                seen.append(rack)
        racks.append(tuple(seen))
    return tuple(racks), tuple(sorted(rackless))
