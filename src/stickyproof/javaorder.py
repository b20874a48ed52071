"""Java iteration and comparison orders that Kafka's results depend on (docs/rules.md N1, N2).

Kafka's leader puts members into a ``HashMap<String, Subscription>`` in JoinGroup order and the
sticky assignors iterate it; the general path iterates a ``HashSet<TopicPartition>``. Python dicts
iterate in insertion order, so reproducing Kafka means computing Java's bucket order explicitly.

A ``HashMap`` iterates bucket by bucket (bucket = spread(hashCode) & (capacity - 1)), and within a
bucket in insertion order (a resize splits buckets but keeps each half's relative order, so the
final order depends only on the final capacity and the insertion order). Tree bins (8+ colliding
keys in one bucket at capacity >= 64) are not modelled: they need adversarial ids.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Sequence, TypeVar

__all__ = [
    "java_string_hash",
    "topic_partition_hash",
    "spread",
    "hashmap_capacity",
    "hashmap_order",
    "java_string_key",
]

K = TypeVar("K", bound=Hashable)

_MASK = 0xFFFFFFFF


def _to_int32(x: int) -> int:
    x &= _MASK
    return x - (1 << 32) if x & 0x80000000 else x


def java_string_hash(s: str) -> int:
    """``String.hashCode()``: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in int32."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK
    return _to_int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode()`` = 31 * (31 + partition) + topic.hashCode(), in int32."""
    return _to_int32(31 * (31 + partition) + java_string_hash(topic))


def spread(h: int) -> int:
    """``HashMap.hash``: h ^ (h >>> 16), as an unsigned 32-bit bucket selector."""
    h &= _MASK
    return h ^ (h >> 16)


def hashmap_capacity(size: int, *, initial: int = 16) -> int:
    """Table size after ``size`` puts into ``new HashMap<>()`` (load factor 0.75, doubling on size > threshold)."""
    cap = initial
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def hashmap_order(
    keys: Iterable[K],
    hash_fn: Callable[[K], int] = java_string_hash,  # type: ignore[assignment]
    *,
    capacity: int | None = None,
) -> list[K]:
    """The iteration order of a Java ``HashMap``/``HashSet`` built by inserting ``keys`` in order.

    Duplicate keys keep their first insertion position (a re-put does not move a key).
    ``capacity`` overrides the table size (e.g. for maps built by a sizing constructor).
    """
    seen: dict[K, None] = dict.fromkeys(keys)
    ordered: Sequence[K] = list(seen)
    cap = capacity if capacity is not None else hashmap_capacity(len(ordered))
    mask = cap - 1
    # sorted() is stable: within a bucket, insertion order is kept.
    return sorted(ordered, key=lambda k: spread(hash_fn(k)) & mask)


def java_string_key(s: str) -> bytes:
    """Sort key reproducing ``String.compareTo`` (UTF-16 code-unit order; differs from Python's only above U+FFFF)."""
    return s.encode("utf-16-be")
