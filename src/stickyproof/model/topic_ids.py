"""Topic ids for consumer-protocol (KIP-848) groups, derived stably from topic names.

The coordinator hands its assignors topic *ids* (``org.apache.kafka.common.Uuid``), not names, and
Kafka's server-side assignors order ties by them: ``HashSet<Uuid>``/``HashMap<Uuid, ...>`` iterate by
``Uuid.hashCode()``, and the heterogeneous ``uniform`` builder sorts topics by ``Uuid.compareTo`` last.
A scenario names topics, so each name gets one id, the same in every run and in every language:
the MD5 name-based UUID of the name's UTF-8 bytes (RFC 4122 version 3, no namespace), which is what
Java's ``java.util.UUID.nameUUIDFromBytes(name.getBytes(UTF_8))`` returns, so the Java harness derives
the very same ids. A version-3 UUID is never Kafka's reserved ``Uuid.ZERO_UUID`` (0, 0) nor
``Uuid.METADATA_TOPIC_ID`` (0, 1): its version bits are set.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import uuid
from typing import Iterable

__all__ = ["topic_id", "parse_kafka_uuid", "kafka_uuid_string", "topic_ids_of", "uuid_bits", "java_uuid_hash", "uuid_order_key"]

_MASK64 = (1 << 64) - 1


def topic_id(name: str) -> uuid.UUID:
    """The id of topic ``name``: ``UUID.nameUUIDFromBytes(name.getBytes(UTF_8))``."""
    return uuid.UUID(bytes=hashlib.md5(name.encode("utf-8")).digest(), version=3)


def _signed64(x: int) -> int:
    x &= _MASK64
    return x - (1 << 64) if x >> 63 else x


def uuid_bits(u: uuid.UUID) -> tuple[int, int]:
    """Kafka's ``Uuid(mostSignificantBits, leastSignificantBits)``, as Java's signed longs."""
    return _signed64(u.int >> 64), _signed64(u.int)


def java_uuid_hash(u: uuid.UUID) -> int:
    """``Uuid.hashCode()``: the two longs xor-ed, then the high and low int halves xor-ed (int32)."""
    xor = (u.int >> 64) ^ (u.int & _MASK64)
    h = ((xor >> 32) ^ xor) & 0xFFFFFFFF
    return h - (1 << 32) if h >> 31 else h


def uuid_order_key(u: uuid.UUID) -> tuple[int, int]:
    """Sort key reproducing ``Uuid.compareTo``: most significant long, then least, both signed."""
    return uuid_bits(u)


def parse_kafka_uuid(text: str) -> uuid.UUID:
    """``Uuid.fromString``: 22 base64url characters (no padding) of 16 bytes; ``ValueError`` naming
    the rule otherwise, and for Kafka's reserved ids (zero, and the metadata topic's (0, 1))."""
    if not isinstance(text, str) or len(text) != 22:
        raise ValueError("a topic id is 22 base64url characters (Kafka's Uuid.toString)")
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError):
        raise ValueError("a topic id is 22 base64url characters (Kafka's Uuid.toString)") from None
    u = uuid.UUID(bytes=raw)
    if u.int in (0, 1):
        raise ValueError("a topic id cannot be Kafka's reserved zero or metadata-topic id")
    return u


def kafka_uuid_string(u: uuid.UUID) -> str:
    """``Uuid.toString``: the 16 bytes in base64url without padding."""
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


def topic_ids_of(topics: Iterable) -> dict[str, uuid.UUID]:
    """Name -> id for a scenario's topics: the stated id (``Topic.id``) or the name's derived one."""
    return {t.name: parse_kafka_uuid(t.id) if t.id is not None else topic_id(t.name) for t in topics}
