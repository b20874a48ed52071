"""One codec for every message spec: the non-flexible encoding of docs/rules.md §5, driven by the spec.

Nothing here knows a message by name; each field is read or written by its spec ``type`` at the
version being processed. Values are plain dicts keyed by the spec's field names, arrays of structs
are lists of such dicts (``{"Topics": [...], "OwnedPartitions": [{"Topic": "t", "Partitions": [0]}]}``).

Reader rules (Kafka's generated readers, ``MessageDataGenerator.generateVariableLengthReader``, and
``ConsumerProtocol.checkSubscriptionVersion``):

- a version header below the lowest valid version fails; one above the highest is read with the
  newest layout and the bytes after it are ignored (how a "future" version stays readable);
- a field the version lacks takes its spec default;
- a negative length on a nullable field means null; on any other field it is an error
  ("non-nullable field ... was serialized as null");
- running out of bytes is a ``DecodeError`` naming the dotted field path
  (``OwnedPartitions[2].Partitions[0]``) and the byte offset where that field starts (its length
  prefix for strings, bytes and arrays; the first missing element of a fixed-width array).

Two deliberate differences from Java, both only on corrupt input: an array count is checked against
the remaining bytes times the element's minimum size *before* anything is allocated (Java checks
count <= remaining bytes, then underflows later; both fail, ours names the array), and invalid
UTF-8 in a string is a ``DecodeError`` (Java substitutes U+FFFD).

Only ``DecodeError`` leaves ``decode``; only ``EncodeError`` leaves ``encode``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import DecodeError, EncodeError
from ._plans import (
    INT16,
    INT32,
    RANGES,
    STRUCTS,
    STRING_MAX_BYTES,
    array_min_size,
    field_names,
    pair_shape,
    field_plan,
    read_pair,
    read_plain_string,
    write_pair,
)
from ._spec import FieldSpec, MessageSpec, load_spec

__all__ = ["Decoded", "encode", "decode", "STRING_MAX_BYTES", "INT32_MIN", "INT32_MAX"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_HEADER = struct.Struct(">h")


@dataclass(frozen=True)
class Decoded:
    """What ``decode`` read.

    ``version`` is the version as found in the header (may exceed the spec's highest), or the
    layout asked for when the message has no header; ``layout_version`` is the layout actually
    parsed; ``end`` is the offset after the last byte parsed (``data[end:]`` was ignored).
    """

    name: str
    version: int
    layout_version: int
    value: dict[str, Any]
    end: int


# ------------------------------------------------------------------------------------------
# reading


class _Reader:
    __slots__ = ("data", "pos", "message")

    def __init__(self, data: bytes, pos: int, message: str):
        self.data = data
        self.pos = pos
        self.message = message

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def need(self, n: int, path: str, what: str, start: int | None = None) -> None:
        """Fail unless ``n`` bytes remain; the error points at ``start`` (the field's first byte) or here."""
        if n > self.remaining:
            raise DecodeError(
                f"{self.message}: truncated: {what} needs {n} bytes, {self.remaining} remain",
                field=path,
                offset=self.pos if start is None else start,
            )

    def fixed(self, s: struct.Struct, path: str, what: str) -> int:
        self.need(s.size, path, what)
        (value,) = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return value

    def take(self, n: int) -> bytes:
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def _check_nullable(r: _Reader, f: FieldSpec, version: int, length: int, path: str, start: int) -> None:
    if not f.nullable_in(version):
        raise DecodeError(
            f"{r.message}: non-nullable field was serialized as null (length {length})", field=path, offset=start
        )


def _read_string(r: _Reader, path: str, nullable: bool) -> str | None:
    start = r.pos
    length = r.fixed(INT16, path, "string length (int16)")
    if length < 0:
        if not nullable:
            raise DecodeError(
                f"{r.message}: non-nullable string was serialized as null (length {length})", field=path, offset=start
            )
        return None
    r.need(length, path, "string content", start)
    raw = r.take(length)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"{r.message}: string is not valid UTF-8 ({exc.reason})", field=path, offset=start + 2 + exc.start
        ) from None


def _read_value(r: _Reader, f: FieldSpec, version: int, path: str, nullable: bool | None = None) -> Any:
    ftype = f.type
    if ftype in STRUCTS:
        return r.fixed(STRUCTS[ftype], path, ftype)
    if ftype == "string":
        return _read_string(r, path, f.nullable_in(version) if nullable is None else nullable)
    start = r.pos
    length = r.fixed(INT32, path, "bytes length (int32)" if ftype == "bytes" else "array count (int32)")
    if length < 0:
        _check_nullable(r, f, version, length, path, start)
        return None
    if ftype == "bytes":
        r.need(length, path, "bytes content", start)
        return r.take(length)
    # An array: bound the count by what the remaining bytes can possibly hold before building anything.
    element = f.element_type
    min_size = array_min_size(f, version)
    if element in STRUCTS and length * min_size > r.remaining:
        # Fixed-width elements: the first one that does not fit is known exactly.
        missing = r.remaining // min_size
        raise DecodeError(
            f"{r.message}: truncated: array of {length} {element} needs {length * min_size} bytes, {r.remaining} remain",
            field=f"{path}[{missing}]",
            offset=r.pos + missing * min_size,
        )
    if min_size and length * min_size > r.remaining:
        raise DecodeError(
            f"{r.message}: truncated: array of {length} elements needs at least {length * min_size} bytes, "
            f"{r.remaining} remain",
            field=path,
            offset=start,
        )
    out: list[Any] = []
    if f.is_struct_array:
        shape = pair_shape(f.fields, version)
        for i in range(length):
            value = read_pair(r, shape) if shape is not None else None
            out.append(value if value is not None else _read_fields(r, f.fields, version, f"{path}[{i}]."))
    elif element == "string":
        for i in range(length):
            value = read_plain_string(r)
            out.append(value if value is not None else _read_string(r, f"{path}[{i}]", False))
    else:
        # Fixed-width elements, all known to fit (checked above): one unpack instead of one per element.
        s = STRUCTS[element]
        out = list(struct.unpack_from(f">{length}{s.format[-1]}", r.data, r.pos))
        r.pos += length * s.size
    return out


def _default_value(f: FieldSpec) -> Any:
    d = f.default
    return list(d) if isinstance(d, tuple) else d


def _read_fields(r: _Reader, fields: tuple[FieldSpec, ...], version: int, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f, present, nullable in field_plan(fields, version):
        if present:
            out[f.name] = _read_value(r, f, version, prefix + f.name, nullable)
        else:
            out[f.name] = _default_value(f)
    return out


def _as_bytes(data: Any, name: str) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise DecodeError(f"{name}: expected bytes, got {type(data).__name__}")


def decode(
    spec_name: str | MessageSpec,
    data: bytes,
    *,
    version: int | None = None,
    max_version: int | None = None,
) -> Decoded:
    """Decode ``data`` as the message ``spec_name``.

    With a version header, the header gives the version (``version`` must be None); without one,
    ``version`` names the layout (default: the highest). ``max_version`` caps the layout as a reader
    that only knows versions up to it would (an older client), never below the spec's lowest.
    """
    spec = spec_name if isinstance(spec_name, MessageSpec) else load_spec(spec_name)
    data = _as_bytes(data, spec.name)
    highest = spec.highest
    if max_version is not None:
        if max_version not in spec.valid_versions:
            raise DecodeError(f"{spec.name}: a reader capped at version {max_version} does not exist "
                              f"(valid {spec.lowest}-{spec.highest})")
        highest = max_version
    r = _Reader(data, 0, spec.name)
    if spec.version_header:
        if version is not None:
            raise DecodeError(f"{spec.name}: the version comes from the header; do not pass one")
        read_version = r.fixed(_HEADER, "Version", "version header (int16)")
    else:
        read_version = spec.highest if version is None else version
    if read_version < spec.lowest:
        raise DecodeError(f"{spec.name}: unsupported version {read_version}", field="Version", offset=0)
    if not spec.version_header and read_version > spec.highest:
        raise DecodeError(f"{spec.name}: no layout for version {read_version}", field="Version")
    layout = min(read_version, highest)
    value = _read_fields(r, spec.fields, layout, "")
    return Decoded(spec.name, read_version, layout, value, r.pos)


# ------------------------------------------------------------------------------------------
# writing


def _fail(spec: MessageSpec, path: str, message: str) -> EncodeError:
    return EncodeError(f"{spec.name}.{path}: {message}")


def _write_int(out: bytearray, spec: MessageSpec, ftype: str, value: Any, path: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail(spec, path, f"expected an {ftype}, got {type(value).__name__} {value!r}")
    lo, hi = RANGES[ftype]
    if not lo <= value <= hi:
        raise _fail(spec, path, f"{value} is outside the {ftype} range [{lo}, {hi}]")
    out += STRUCTS[ftype].pack(value)


def _write_string(out: bytearray, spec: MessageSpec, value: Any, nullable: bool, path: str) -> None:
    if value is None:
        if not nullable:
            raise _fail(spec, path, "null is not allowed for a non-nullable string")
        out += INT16.pack(-1)
        return
    if not isinstance(value, str):
        raise _fail(spec, path, f"expected a string, got {type(value).__name__} {value!r:.60}")
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(spec, path, f"string is not encodable as UTF-8 ({exc.reason} at character {exc.start})") from None
    if len(raw) > STRING_MAX_BYTES:
        raise _fail(spec, path, f"string of {len(raw)} UTF-8 bytes exceeds the {STRING_MAX_BYTES}-byte limit")
    out += INT16.pack(len(raw))
    out += raw


def _write_value(
    out: bytearray, spec: MessageSpec, f: FieldSpec, value: Any, version: int, path: str, nullable: bool | None = None
) -> None:
    ftype = f.type
    if nullable is None:
        nullable = f.nullable_in(version)
    if ftype in STRUCTS:
        _write_int(out, spec, ftype, value, path)
        return
    if ftype == "string":
        _write_string(out, spec, value, nullable, path)
        return
    if value is None:
        if not nullable:
            raise _fail(spec, path, "null is not allowed for a non-nullable field")
        out += INT32.pack(-1)
        return
    if ftype == "bytes":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise _fail(spec, path, f"expected bytes, got {type(value).__name__}")
        raw = bytes(value)
        if len(raw) > INT32_MAX:
            raise _fail(spec, path, f"{len(raw)} bytes exceed the int32 length limit")
        out += INT32.pack(len(raw))
        out += raw
        return
    if type(value) is list:
        items = value
    elif isinstance(value, (str, bytes, bytearray, Mapping)) or not hasattr(value, "__iter__"):
        raise _fail(spec, path, f"expected an array, got {type(value).__name__}")
    else:
        items = list(value)
    if len(items) > INT32_MAX:
        raise _fail(spec, path, f"{len(items)} elements exceed the int32 count limit")
    out += INT32.pack(len(items))
    element = f.element_type
    if element in STRUCTS and items and set(map(type, items)) == {int}:
        # Plain ints (no bools) all in range: one pack for the whole array, bytes as per element.
        lo, hi = RANGES[element]
        if lo <= min(items) and max(items) <= hi:
            out += struct.pack(f">{len(items)}{STRUCTS[element].format[-1]}", *items)
            return
    if element == "string" and set(map(type, items)) == {str}:
        try:
            raws = [item.encode("utf-8") for item in items]
        except UnicodeEncodeError:
            raws = None
        if raws is not None and max(map(len, raws)) <= STRING_MAX_BYTES:
            out += b"".join(INT16.pack(len(raw)) + raw for raw in raws)
            return
    if f.is_struct_array:
        shape = pair_shape(f.fields, version)
        for i, item in enumerate(items):
            if shape is None or not write_pair(out, shape, item):
                _write_fields(out, spec, f.fields, item, version, f"{path}[{i}].")
        return
    for i, item in enumerate(items):
        ipath = f"{path}[{i}]"
        if f.is_struct_array:
            _write_fields(out, spec, f.fields, item, version, ipath + ".")
        elif element == "string":
            _write_string(out, spec, item, False, ipath)
        else:
            _write_int(out, spec, element, item, ipath)


_MISSING = object()


def _write_fields(
    out: bytearray, spec: MessageSpec, fields: tuple[FieldSpec, ...], value: Any, version: int, prefix: str
) -> None:
    if type(value) is not dict and not isinstance(value, Mapping):
        raise _fail(spec, prefix.rstrip(".") or "<root>", f"expected an object of fields, got {type(value).__name__}")
    known = field_names(fields, version)
    for key in value:
        if key not in known:
            raise _fail(spec, prefix + str(key), f"unknown field (known: {', '.join(sorted(known))})")
    for f, present, nullable in field_plan(fields, version):
        v = value.get(f.name, _MISSING)
        if not present:
            # Kafka's generated writers drop an ignorable field, or one at its default, silently;
            # a non-default value of a non-ignorable field cannot be represented.
            if v is _MISSING or f.ignorable or _is_default(v, f):
                continue
            raise _fail(spec, prefix + f.name, f"cannot be written at version {version} (field exists in {_range_text(f)})")
        if v is _MISSING:
            v = f.default
        _write_value(out, spec, f, v, version, prefix + f.name, nullable)


def _is_default(value: Any, f: FieldSpec) -> bool:
    if isinstance(f.default, tuple):
        return isinstance(value, (list, tuple)) and len(value) == 0
    return type(value) is type(f.default) and bool(value == f.default)


def _range_text(f: FieldSpec) -> str:
    v = f.versions
    return f"versions {v.low}+" if v.high is None else f"versions {v.low}-{v.high}"


def encode(spec_name: str | MessageSpec, value: Mapping[str, Any], version: int) -> bytes:
    """Encode ``value`` (a dict of spec field names) as ``spec_name`` at ``version``.

    Writes the int16 version header when the spec has one. Fields the version lacks are dropped
    when ignorable or at their default; missing keys take the spec default.
    """
    spec = spec_name if isinstance(spec_name, MessageSpec) else load_spec(spec_name)
    if not isinstance(version, int) or isinstance(version, bool) or version not in spec.valid_versions:
        raise EncodeError(f"{spec.name}: cannot write version {version!r} (valid {spec.lowest}-{spec.highest})")
    out = bytearray()
    if spec.version_header:
        out += _HEADER.pack(version)
    _write_fields(out, spec, spec.fields, value, version, "")
    return bytes(out)
