"""Typed consumer-protocol values and the writer/reader conventions Kafka's Java code adds on top of the specs.

The byte layout is the spec's business (``_codec``); what lives here is what Kafka's
``ConsumerProtocol``, ``StickyAssignor`` and ``CooperativeStickyAssignor`` do around the generated
messages: which order the writers emit topics and partitions in, which version they clamp to,
and how the readers flatten the per-topic entries back into partitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import groupby, repeat
from operator import itemgetter
from typing import Any, Iterable, Sequence

from ..errors import DecodeError, EncodeError
from ..javaorder import hashmap_order, java_string_key
from ..model import TopicPartition
from ._codec import decode, encode
from ._spec import load_spec

__all__ = [
    "SUBSCRIPTION",
    "ASSIGNMENT",
    "STICKY_USER_DATA",
    "COOPERATIVE_USER_DATA",
    "WireSubscription",
    "WireAssignment",
    "StickyUserData",
    "encode_subscription",
    "decode_subscription",
    "encode_assignment",
    "decode_assignment",
    "encode_sticky_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_user_data",
    "decode_cooperative_user_data",
]

SUBSCRIPTION = "ConsumerProtocolSubscription"
ASSIGNMENT = "ConsumerProtocolAssignment"
STICKY_USER_DATA = "StickyAssignorUserData"
COOPERATIVE_USER_DATA = "CooperativeStickyAssignorUserData"

_TOPIC = itemgetter(0)
_PARTITION = itemgetter(1)
_NEW_TP = partial(tuple.__new__, TopicPartition)


@dataclass(frozen=True)
class WireSubscription:
    """A ``ConsumerProtocolSubscription`` as carried on the wire (docs/rules.md §5.1).

    ``generation`` and ``rack`` are the raw wire values: -1 / None when the version lacks them.
    Kafka's ``Subscription`` turns a negative generation into "absent" (R3); that is the
    leader's step, not the codec's. A decoded empty rack ``""`` is reported as None, as Kafka's
    ``ConsumerProtocol.deserializeSubscription`` does.
    """

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1
    rack: str | None = None


@dataclass(frozen=True)
class WireAssignment:
    """A ``ConsumerProtocolAssignment`` (docs/rules.md §5.2): the partitions in wire order."""

    version: int
    assigned: tuple[TopicPartition, ...]
    user_data: bytes | None = None


@dataclass(frozen=True)
class StickyUserData:
    """The eager sticky assignor's user data (KIP-341, §5.3); ``version`` is the layout that decoded (0 or 1)."""

    version: int
    previous_assignment: tuple[TopicPartition, ...]
    generation: int = -1


# ------------------------------------------------------------------------------------------
# helpers


def _topic_partitions(tps: Any, what: str) -> list[TopicPartition]:
    """Check ``tps`` is a sequence of (str, int) pairs, so the sort keys below cannot raise TypeError."""
    if isinstance(tps, (str, bytes)) or not hasattr(tps, "__iter__"):
        raise EncodeError(f"{what}: expected a sequence of (topic, partition), got {type(tps).__name__}")
    tps = list(tps)
    # The common case checked without a Python loop: TopicPartitions of a str and a plain int.
    if (
        not tps
        or set(map(type, tps)) == {TopicPartition}
        and set(map(type, map(_TOPIC, tps))) == {str}
        and set(map(type, map(_PARTITION, tps))) == {int}
    ):
        return tps
    out = []
    for i, tp in enumerate(tps):
        if not isinstance(tp, tuple) or len(tp) != 2:
            raise EncodeError(f"{what}[{i}]: expected a (topic, partition) pair, got {tp!r:.60}")
        topic, partition = tp
        if not isinstance(topic, str):
            raise EncodeError(f"{what}[{i}]: topic must be a string, got {type(topic).__name__}")
        if not isinstance(partition, int) or isinstance(partition, bool):
            raise EncodeError(f"{what}[{i}]: partition must be an integer, got {type(partition).__name__}")
        out.append(TopicPartition(topic, partition))
    return out


def _group_consecutive(tps: Iterable[TopicPartition]) -> list[dict[str, Any]]:
    """One entry per run of equal topics, as ``ConsumerProtocol.serializeSubscription`` builds OwnedPartitions."""
    return [{"Topic": topic, "Partitions": list(map(_PARTITION, run))} for topic, run in groupby(tps, _TOPIC)]


def _group_first_appearance(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for topic, run in groupby(tps, _TOPIC):
        partitions = grouped.get(topic)
        if partitions is None:
            grouped[topic] = list(map(_PARTITION, run))
        else:
            partitions.extend(map(_PARTITION, run))
    return grouped


def _flatten(entries: Sequence[dict[str, Any]]) -> tuple[TopicPartition, ...]:
    out: list[TopicPartition] = []
    for e in entries:
        # tuple.__new__ is what TopicPartition(topic, p) calls; mapped, it builds a million without a Python frame each.
        out.extend(map(_NEW_TP, zip(repeat(e["Topic"]), e["Partitions"])))
    return tuple(out)


def _sorted_for_subscription(tps: list[TopicPartition]) -> list[TopicPartition]:
    """Sorted by (topic in Java ``String.compareTo`` order, partition).

    When Python's order of the topic names is Java's (always, unless a name mixes characters
    above U+FFFF with ones in U+E000-U+FFFF), plain tuple order is the same order, without a key call per partition.
    """
    topics = sorted(set(map(_TOPIC, tps)))
    if topics == sorted(topics, key=java_string_key):
        return sorted(tps)
    return sorted(tps, key=lambda tp: (java_string_key(tp.topic), tp.partition))


def _clamp_version(name: str, version: Any) -> int:
    """``ConsumerProtocol.check{Subscription,Assignment}Version``: below lowest fails, above highest writes the highest."""
    spec = load_spec(name)
    if not isinstance(version, int) or isinstance(version, bool):
        raise EncodeError(f"{name}: version must be an integer, got {version!r}")
    if version < spec.lowest:
        raise EncodeError(f"{name}: unsupported version {version}")
    return min(version, spec.highest)


# ------------------------------------------------------------------------------------------
# ConsumerProtocolSubscription


def encode_subscription(sub: WireSubscription, version: int | None = None) -> bytes:
    """Bytes of ``sub`` at ``version`` (default ``sub.version``), as ``ConsumerProtocol.serializeSubscription``.

    Topics are sorted by name and owned partitions by (topic, partition), both in Java
    ``String.compareTo`` order, and owned partitions are written one entry per topic, so two
    subscriptions listing the same things in different orders give identical bytes. A version
    above 3 is written as 3 (header included), a negative one raises ``EncodeError``; fields
    the version lacks are dropped.
    """
    version = _clamp_version(SUBSCRIPTION, sub.version if version is None else version)
    if isinstance(sub.topics, (str, bytes)) or not hasattr(sub.topics, "__iter__"):
        raise EncodeError(f"{SUBSCRIPTION}.Topics: expected a sequence of topic names, got {type(sub.topics).__name__}")
    topics = list(sub.topics)
    for i, t in enumerate(topics):
        if not isinstance(t, str):
            raise EncodeError(f"{SUBSCRIPTION}.Topics[{i}]: expected a string, got {type(t).__name__} {t!r:.60}")
    topics.sort(key=java_string_key)
    owned = _sorted_for_subscription(_topic_partitions(sub.owned, f"{SUBSCRIPTION}.owned"))
    value = {
        "Topics": topics,
        "UserData": sub.user_data,
        "OwnedPartitions": _group_consecutive(owned),
        "GenerationId": sub.generation,
        "RackId": sub.rack,
    }
    return encode(SUBSCRIPTION, value, version)


def decode_subscription(data: bytes, *, max_version: int | None = None) -> WireSubscription:
    """Read a subscription, as ``ConsumerProtocol.deserializeSubscription``.

    ``.version`` is the header's version as read (may be above 3, parsed with the v3 layout,
    trailing bytes ignored). ``max_version`` reads as a client that knows only versions up to it.
    Generation is the raw wire value (-1 when absent); rack ``""`` or null is None.
    """
    d = decode(SUBSCRIPTION, data, max_version=max_version)
    v = d.value
    return WireSubscription(
        version=d.version,
        topics=tuple(v["Topics"]),
        user_data=v["UserData"],
        owned=_flatten(v["OwnedPartitions"]),
        generation=v["GenerationId"],
        rack=v["RackId"] or None,
    )


# ------------------------------------------------------------------------------------------
# ConsumerProtocolAssignment


def encode_assignment(a: WireAssignment, version: int | None = None) -> bytes:
    """Bytes of ``a`` at ``version`` (default ``a.version``), as ``ConsumerProtocol.serializeAssignment``.

    Partitions are grouped by topic in order of first appearance, keeping their order within a
    topic (the Java writer looks each topic up in an insertion-ordered collection; nothing is sorted).
    """
    version = _clamp_version(ASSIGNMENT, a.version if version is None else version)
    grouped = _group_first_appearance(_topic_partitions(a.assigned, f"{ASSIGNMENT}.assigned"))
    value = {
        "AssignedPartitions": [{"Topic": t, "Partitions": ps} for t, ps in grouped.items()],
        "UserData": a.user_data,
    }
    return encode(ASSIGNMENT, value, version)


def decode_assignment(data: bytes, *, max_version: int | None = None) -> WireAssignment:
    """Read an assignment, as ``ConsumerProtocol.deserializeAssignment``; partitions in wire order."""
    d = decode(ASSIGNMENT, data, max_version=max_version)
    return WireAssignment(version=d.version, assigned=_flatten(d.value["AssignedPartitions"]), user_data=d.value["UserData"])


# ------------------------------------------------------------------------------------------
# StickyAssignor user data (KIP-341, no version prefix)


def encode_sticky_user_data(
    previous_assignment: Iterable[TopicPartition], generation: int | None, *, version: int = 1
) -> bytes:
    """``StickyAssignor.serializeTopicPartitionAssignment``: V1 by default, V0 drops the generation.

    Topics come in Java ``HashMap`` order of their names (``CollectionUtils.groupPartitionsByTopic``
    builds a ``HashMap``), partitions in the given order. ``generation=None`` writes -1
    (``DEFAULT_GENERATION``): Kafka itself always has a generation when it writes.
    """
    if version not in (0, 1) or isinstance(version, bool):
        raise EncodeError(f"{STICKY_USER_DATA}: cannot write version {version!r} (valid 0-1)")
    grouped = _group_first_appearance(_topic_partitions(previous_assignment, f"{STICKY_USER_DATA}.previous_assignment"))
    value = {
        "PreviousAssignment": [{"Topic": t, "Partitions": grouped[t]} for t in hashmap_order(grouped)],
        "Generation": -1 if generation is None else generation,
    }
    return encode(STICKY_USER_DATA, value, version)


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """``StickyAssignor.deserializeTopicPartitionAssignment``: try V1, fall back to V0, else ``DecodeError``.

    Bytes after the parsed layout are ignored, as Kafka's ``Schema.read`` does. Kafka then treats a
    double failure as "no claims, generation -1" and empty user data as "no claims" (R1); that is the
    assignor's rule, so here both raise.
    """
    try:
        d = decode(STICKY_USER_DATA, data, version=1)
    except DecodeError as v1_error:
        try:
            d = decode(STICKY_USER_DATA, data, version=0)
        except DecodeError as v0_error:
            raise DecodeError(
                f"{STICKY_USER_DATA}: decodes as neither V1 (failed at {v1_error.field or 'start'}, "
                f"byte {v1_error.offset}) nor V0",
                field=v0_error.field,
                offset=v0_error.offset,
            ) from None
    return StickyUserData(
        version=d.layout_version,
        previous_assignment=_flatten(d.value["PreviousAssignment"]),
        generation=d.value["Generation"],
    )


# ------------------------------------------------------------------------------------------
# CooperativeStickyAssignor user data (a bare int32)


def encode_cooperative_user_data(generation: int) -> bytes:
    """``CooperativeStickyAssignor.subscriptionUserData``: the int32 generation of the last assignment received."""
    return encode(COOPERATIVE_USER_DATA, {"Generation": generation}, 0)


def decode_cooperative_user_data(data: bytes) -> int:
    """The generation; ``DecodeError`` if fewer than 4 bytes (Kafka's assignor then uses -1, R2), trailing bytes ignored."""
    return int(decode(COOPERATIVE_USER_DATA, data, version=0).value["Generation"])
