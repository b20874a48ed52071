"""The JSON shapes of ``stickyproof decode`` / ``stickyproof encode``, and hex parsing.

One shape per message, the same for both directions, so ``decode`` output fed to ``encode``
gives the bytes back (up to the writers' ordering rules)::

    subscription           {"version", "topics", "user_data" (hex or null), "owned" {topic: [partitions]},
                            "generation", "rack"}
    assignment             {"version", "assigned" {topic: [partitions]}, "user_data"}
    sticky-user-data       {"version" (0 or 1), "previous_assignment" {topic: [partitions]}, "generation"}
    cooperative-user-data  {"generation"}

Fields a version lacks show their defaults (-1, {}, null). Bad JSON input raises
``InvalidScenario`` naming the field; bad hex raises ``DecodeError`` naming the character position.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..errors import DecodeError, InvalidOption, InvalidScenario
from ..model import TopicPartition
from ._messages import (
    ASSIGNMENT,
    STICKY_USER_DATA,
    SUBSCRIPTION,
    StickyUserData,
    WireAssignment,
    WireSubscription,
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from ._spec import load_spec

__all__ = ["MESSAGE_KINDS", "known_versions", "parse_hex", "decode_hex_to_json", "encode_json_to_hex", "message_to_json", "message_from_json"]

MESSAGE_KINDS = ("subscription", "assignment", "sticky-user-data", "cooperative-user-data")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_SEPARATORS = frozenset(" \t\r\n:")


def parse_hex(text: str, what: str = "hex input") -> bytes:
    """Hex digits with optional spaces/colons between them and an optional leading ``0x``."""
    start = 0
    stripped = text.lstrip()
    if stripped[:2] in ("0x", "0X"):
        start = len(text) - len(stripped) + 2
    digits: list[str] = []
    for pos in range(start, len(text)):
        ch = text[pos]
        if ch in _HEX_DIGITS:
            digits.append(ch)
        elif ch not in _SEPARATORS:
            raise DecodeError(f"{what}: invalid hex character {ch!r} at character {pos + 1}")
    if len(digits) % 2:
        raise DecodeError(f"{what}: odd number of hex digits ({len(digits)}); every byte needs two")
    return bytes.fromhex("".join(digits))


def _tp_json(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Group by topic in order of first appearance (wire order), keeping partition order."""
    out: dict[str, list[int]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp.partition)
    return out


def _hex_or_null(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def message_to_json(kind: str, value: Any) -> dict[str, Any]:
    """The JSON document of a decoded value of ``kind``."""
    if kind == "subscription":
        s: WireSubscription = value
        return {
            "version": s.version,
            "topics": list(s.topics),
            "user_data": _hex_or_null(s.user_data),
            "owned": _tp_json(s.owned),
            "generation": s.generation,
            "rack": s.rack,
        }
    if kind == "assignment":
        a: WireAssignment = value
        return {"version": a.version, "assigned": _tp_json(a.assigned), "user_data": _hex_or_null(a.user_data)}
    if kind == "sticky-user-data":
        u: StickyUserData = value
        return {"version": u.version, "previous_assignment": _tp_json(u.previous_assignment), "generation": u.generation}
    if kind == "cooperative-user-data":
        return {"generation": int(value)}
    raise InvalidScenario("", f"unknown message kind {kind!r} (known: {', '.join(MESSAGE_KINDS)})")


_DECODERS = {
    "subscription": decode_subscription,
    "assignment": decode_assignment,
    "sticky-user-data": decode_sticky_user_data,
    "cooperative-user-data": decode_cooperative_user_data,
}


def decode_hex_to_json(kind: str, text: str) -> dict[str, Any]:
    """Parse ``text`` as hex, decode it as ``kind``, return the JSON document."""
    if kind not in _DECODERS:
        raise InvalidScenario("", f"unknown message kind {kind!r} (known: {', '.join(MESSAGE_KINDS)})")
    return message_to_json(kind, _DECODERS[kind](parse_hex(text)))


# ------------------------------------------------------------------------------------------
# JSON -> values


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}.get(type(value), type(value).__name__)


def _int(value: Any, path: str, what: str = "an integer") -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidScenario(path, f"expected {what}, got {_type_name(value)}")
    return value


def _str(value: Any, path: str, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise InvalidScenario(path, f"expected a string{' or null' if nullable else ''}, got {_type_name(value)}")
    return value


def _user_data(value: Any, path: str) -> bytes | None:
    if value is None:
        return None
    text = _str(value, path, nullable=True)
    try:
        return parse_hex(text or "", "user_data")
    except DecodeError as exc:
        raise InvalidScenario(path, str(exc)) from exc


def _tps(value: Any, path: str) -> tuple[TopicPartition, ...]:
    if not isinstance(value, Mapping):
        raise InvalidScenario(path, f"expected an object of topic to partition list, got {_type_name(value)}")
    out = []
    for topic, parts in value.items():
        ppath = f"{path}.{topic}"
        if not isinstance(parts, list):
            raise InvalidScenario(ppath, f"expected an array of partition numbers, got {_type_name(parts)}")
        out.extend(TopicPartition(topic, _int(p, f"{ppath}[{i}]", "a partition number")) for i, p in enumerate(parts))
    return tuple(out)


def _fields(doc: Any, allowed: tuple[str, ...], required: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise InvalidScenario("", f"expected a JSON object, got {_type_name(doc)}")
    for key in doc:
        if key not in allowed:
            raise InvalidScenario(str(key), f"unknown field (allowed: {', '.join(allowed)})")
    for key in required:
        if key not in doc:
            raise InvalidScenario(key, "required field is missing")
    return doc


def message_from_json(kind: str, doc: Any, version: int | None = None) -> Any:
    """The value of ``kind`` a JSON document describes; ``version`` overrides the document's ``"version"``."""
    if kind == "subscription":
        d = _fields(doc, ("version", "topics", "user_data", "owned", "generation", "rack"), ("topics",))
        topics = d["topics"]
        if not isinstance(topics, list):
            raise InvalidScenario("topics", f"expected an array of topic names, got {_type_name(topics)}")
        return WireSubscription(
            version=_version(d, version, 3, kind),
            topics=tuple(_str(t, f"topics[{i}]") for i, t in enumerate(topics)),  # type: ignore[misc]
            user_data=_user_data(d.get("user_data"), "user_data"),
            owned=_tps(d.get("owned", {}), "owned"),
            generation=_int(d.get("generation", -1), "generation"),
            rack=_str(d.get("rack"), "rack", nullable=True),
        )
    if kind == "assignment":
        d = _fields(doc, ("version", "assigned", "user_data"), ("assigned",))
        return WireAssignment(
            version=_version(d, version, 3, kind),
            assigned=_tps(d["assigned"], "assigned"),
            user_data=_user_data(d.get("user_data"), "user_data"),
        )
    if kind == "sticky-user-data":
        d = _fields(doc, ("version", "previous_assignment", "generation"), ("previous_assignment",))
        return StickyUserData(
            version=_version(d, version, 1, kind),
            previous_assignment=_tps(d["previous_assignment"], "previous_assignment"),
            generation=_int(d.get("generation", -1), "generation"),
        )
    if kind == "cooperative-user-data":
        d = _fields(doc, ("generation",), ("generation",))
        if version not in (None, 0):
            raise InvalidOption("--version", f"cooperative-user-data has no version prefix and one layout (version 0), not {version}")
        return _int(d["generation"], "generation")
    raise InvalidScenario("", f"unknown message kind {kind!r} (known: {', '.join(MESSAGE_KINDS)})")


#: The versions ``encode`` writes, per kind: the versions the message specs define. Kafka's own
#: writer clamps a newer version to its highest (``checkSubscriptionVersion``; the library's
#: encoders reproduce that), but a person asking ``encode --version 4`` would get v3 bytes
#: labelled as what they asked for, so the command refuses instead.
_SPEC_OF = {"subscription": SUBSCRIPTION, "assignment": ASSIGNMENT, "sticky-user-data": STICKY_USER_DATA}


def known_versions(kind: str) -> tuple[int, int]:
    """(lowest, highest) version ``encode`` writes for ``kind``."""
    if kind == "cooperative-user-data":
        return (0, 0)
    spec = load_spec(_SPEC_OF[kind])
    return (spec.lowest, spec.highest)


def _version(d: Mapping[str, Any], override: int | None, highest: int, kind: str = "subscription") -> int:
    lowest, known = known_versions(kind)
    if override is not None:
        if isinstance(override, bool) or not isinstance(override, int) or not lowest <= override <= known:
            raise InvalidOption("--version", f"{kind} has versions {lowest}-{known}; got {override!r} "
                                f"(stickyproof writes no version it does not know)")
        return override
    version = _int(d.get("version", highest), "version")
    if not lowest <= version <= known:
        newer = f"; a newer one decodes with the v{known} layout, write it as {known}" if kind in ("subscription", "assignment") else ""
        raise InvalidScenario("version", f"{kind} has versions {lowest}-{known}; got {version} "
                              f"(stickyproof writes no version it does not know{newer})")
    return version


def encode_json_to_hex(kind: str, doc: Any, version: int | None = None) -> str:
    """Encode the JSON document ``doc`` of ``kind`` at ``version`` (default: the document's, else the newest); lower-case hex."""
    value = message_from_json(kind, doc, version)
    if kind == "subscription":
        data = encode_subscription(value)
    elif kind == "assignment":
        data = encode_assignment(value)
    elif kind == "sticky-user-data":
        data = encode_sticky_user_data(value.previous_assignment, value.generation, version=value.version)
    else:
        data = encode_cooperative_user_data(value)
    return data.hex()
