"""Message specs: the JSON files of models/messages/, read into frozen values the codec interprets.

The files follow Kafka's JSON message definitions (``clients/src/main/resources/common/message/``):
``name``, ``validVersions``, ``flexibleVersions``, and ``fields`` each with ``name``, ``type``,
``versions``, optional ``nullableVersions``, ``default``, ``ignorable``, ``about`` and, for arrays of
structs, nested ``fields``. One key is ours: ``versionHeader`` says whether the message travels behind
an int16 version (the two consumer-protocol messages, framed by ``MessageUtil.toVersionPrefixedByteBuffer``)
or bare (the assignors' user data, KIP-341). Only non-flexible encodings exist here, so
``flexibleVersions`` must be ``"none"``.

The package reads its copy under ``stickyproof/data/messages/``; ``models/messages/`` is the
canonical copy and a test keeps the two identical byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..errors import StickyproofError

__all__ = ["PRIMITIVES", "VersionRange", "FieldSpec", "MessageSpec", "SpecError", "spec_names", "load_spec", "parse_spec"]

# Fixed-width big-endian integer types: byte width and struct format.
PRIMITIVES: dict[str, tuple[int, str]] = {"int8": (1, ">b"), "int16": (2, ">h"), "int32": (4, ">i"), "int64": (8, ">q")}
_VARIABLE = ("string", "bytes")


class SpecError(StickyproofError):
    """A message spec file that does not follow the format (a packaging bug, not bad input)."""


@dataclass(frozen=True)
class VersionRange:
    """Kafka's version range syntax: ``"0+"``, ``"1-3"``, ``"2"`` or ``"none"`` (``low > high``)."""

    low: int
    high: int | None  # None = open ("N+")

    @classmethod
    def parse(cls, text: str, where: str) -> "VersionRange":
        if not isinstance(text, str):
            raise SpecError(f"{where}: version range must be a string, got {text!r}")
        try:
            if text == "none":
                return cls(1, 0)
            if text.endswith("+"):
                return cls(int(text[:-1]), None)
            if "-" in text:
                lo, hi = text.split("-", 1)
                return cls(int(lo), int(hi))
            return cls(int(text), int(text))
        except ValueError as exc:
            raise SpecError(f"{where}: bad version range {text!r}") from exc

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and version >= self.low and (self.high is None or version <= self.high)

    @property
    def empty(self) -> bool:
        return self.high is not None and self.high < self.low


@dataclass(frozen=True)
class FieldSpec:
    """One field. ``type`` is a primitive, ``string``, ``bytes``, or ``[]X`` (array of primitive/string or struct X)."""

    name: str
    type: str
    versions: VersionRange
    nullable_versions: VersionRange
    default: Any  # the Python value a reader reports when the version lacks the field
    ignorable: bool
    about: str
    fields: tuple["FieldSpec", ...] = ()  # for arrays of structs

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:]

    @property
    def is_struct_array(self) -> bool:
        return self.is_array and bool(self.fields)

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable_versions


@dataclass(frozen=True)
class MessageSpec:
    """A whole message: its versions, whether a version header precedes it, and its fields in wire order."""

    name: str
    valid_versions: VersionRange
    version_header: bool
    about: str
    fields: tuple[FieldSpec, ...]

    @property
    def lowest(self) -> int:
        return self.valid_versions.low

    @property
    def highest(self) -> int:
        assert self.valid_versions.high is not None
        return self.valid_versions.high


def _default(raw: Any, ftype: str, nullable: VersionRange, where: str) -> Any:
    if ftype.startswith("[]"):
        if raw not in (None, "null", "[]"):
            raise SpecError(f"{where}: arrays take no default other than null")
        return None if raw == "null" else ()
    if ftype in PRIMITIVES:
        if raw is None:
            return 0
        try:
            return int(raw, 0) if isinstance(raw, str) else int(raw)
        except ValueError as exc:
            raise SpecError(f"{where}: default {raw!r} is not an integer") from exc
    if raw == "null":
        if nullable.empty:
            raise SpecError(f"{where}: default null on a field that is never nullable")
        return None
    if raw is None:
        return "" if ftype == "string" else b""
    if ftype == "string" and isinstance(raw, str):
        return raw
    raise SpecError(f"{where}: unsupported default {raw!r} for {ftype}")


_FIELD_KEYS = {"name", "type", "versions", "nullableVersions", "default", "ignorable", "about", "fields",
               "mapKey", "entityType", "zeroCopy"}


def _parse_field(raw: Any, where: str) -> FieldSpec:
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: a field must be an object")
    unknown = set(raw) - _FIELD_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("name", "type", "versions"):
        if key not in raw:
            raise SpecError(f"{where}: missing {key!r}")
    name, ftype = raw["name"], raw["type"]
    where = f"{where}({name})"
    versions = VersionRange.parse(raw["versions"], f"{where}.versions")
    nullable = VersionRange.parse(raw.get("nullableVersions", "none"), f"{where}.nullableVersions")
    sub = tuple(_parse_field(f, f"{where}.fields[{i}]") for i, f in enumerate(raw.get("fields", ())))
    element = ftype[2:] if ftype.startswith("[]") else None
    if element is not None:
        if sub and (element in PRIMITIVES or element in _VARIABLE):
            raise SpecError(f"{where}: an array of {element} takes no nested fields")
        if not sub and element not in PRIMITIVES and element != "string":
            raise SpecError(f"{where}: array of struct {element} needs nested fields")
    elif ftype not in PRIMITIVES and ftype not in _VARIABLE:
        raise SpecError(f"{where}: unsupported type {ftype!r}")
    elif sub:
        raise SpecError(f"{where}: only arrays of structs take nested fields")
    if not nullable.empty and ftype in PRIMITIVES:
        raise SpecError(f"{where}: {ftype} cannot be nullable")
    return FieldSpec(
        name=name,
        type=ftype,
        versions=versions,
        nullable_versions=nullable,
        default=_default(raw.get("default"), ftype, nullable, where),
        ignorable=bool(raw.get("ignorable", False)),
        about=raw.get("about", ""),
        fields=sub,
    )


def parse_spec(doc: Any, source: str = "spec") -> MessageSpec:
    """Read one spec document (already JSON-decoded) into a ``MessageSpec``, checking the format."""
    if not isinstance(doc, dict):
        raise SpecError(f"{source}: a spec must be a JSON object")
    for key in ("name", "validVersions", "fields"):
        if key not in doc:
            raise SpecError(f"{source}: missing {key!r}")
    if doc.get("flexibleVersions", "none") != "none":
        raise SpecError(f"{source}: flexible versions are not supported")
    valid = VersionRange.parse(doc["validVersions"], f"{source}.validVersions")
    if valid.high is None or valid.empty:
        raise SpecError(f"{source}: validVersions must be a closed, non-empty range")
    fields = tuple(_parse_field(f, f"{source}.fields[{i}]") for i, f in enumerate(doc["fields"]))
    return MessageSpec(
        name=doc["name"],
        valid_versions=valid,
        version_header=bool(doc.get("versionHeader", True)),
        about=doc.get("about", ""),
        fields=fields,
    )


def _spec_dir() -> Any:
    # Through the top-level package: data/ has no __init__.py, it is package data, not a module.
    return resources.files("stickyproof").joinpath("data", "messages")


def spec_names() -> tuple[str, ...]:
    """The names of the bundled message specs, sorted."""
    files = _spec_dir().iterdir()
    return tuple(sorted(f.name[:-5] for f in files if f.name.endswith(".json")))


@lru_cache(maxsize=None)
def load_spec(name: str) -> MessageSpec:
    """The bundled spec ``name`` (e.g. ``"ConsumerProtocolSubscription"``)."""
    if name not in spec_names():
        raise SpecError(f"no message spec named {name!r} (known: {', '.join(spec_names())})")
    text = _spec_dir().joinpath(f"{name}.json").read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{name}.json is not valid JSON: {exc}") from exc
    spec = parse_spec(doc, f"{name}.json")
    if spec.name != name:
        raise SpecError(f"{name}.json declares name {spec.name!r}")
    return spec
