"""The codec's shortcuts: per-(fields, version) plans and the fast paths for the shapes a big group is made of.

Nothing here changes a byte or an error: a plan is what ``version in f.versions`` and
``f.nullable_in(version)`` would answer, cached; the fast paths read or write a value only when it is
all there and well-formed, and otherwise leave it, untouched, to ``_codec``'s generic path, which
raises the exact error. A million-partition group is hundreds of thousands of topic/partitions
structs and topic names per rebalance, and the generic interpreter spent most of the leader's time on them.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from ._spec import PRIMITIVES, FieldSpec

if TYPE_CHECKING:  # pragma: no cover
    from ._codec import _Reader

STRING_MAX_BYTES = 0x7FFF
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
STRUCTS = {name: struct.Struct(fmt) for name, (_, fmt) in PRIMITIVES.items()}
RANGES = {name: (-(1 << (8 * w - 1)), (1 << (8 * w - 1)) - 1) for name, (w, _) in PRIMITIVES.items()}


# Per (field tuple, version): which fields the version has, each one's nullability, and the names.
# Keyed by id() and holding the tuple itself, so an id is never reused while its entry lives. A
# million-partition group has hundreds of thousands of per-topic structs, and asking a
# VersionRange for each of them was most of the codec's time.
_PLANS: dict[tuple[int, int], tuple[tuple[FieldSpec, ...], tuple[tuple[FieldSpec, bool, bool], ...], frozenset[str]]] = {}
_MIN_SIZES: dict[tuple[int, int], tuple[FieldSpec, int]] = {}


def field_plan(fields: tuple[FieldSpec, ...], version: int) -> tuple[tuple[FieldSpec, bool, bool], ...]:
    key = (id(fields), version)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not fields:
        plan = (fields, tuple((f, version in f.versions, f.nullable_in(version)) for f in fields), frozenset(f.name for f in fields))
        _PLANS[key] = plan
    return plan[1]


def field_names(fields: tuple[FieldSpec, ...], version: int) -> frozenset[str]:
    field_plan(fields, version)
    return _PLANS[(id(fields), version)][2]


def array_min_size(f: FieldSpec, version: int) -> int:
    key = (id(f), version)
    cached = _MIN_SIZES.get(key)
    if cached is None or cached[0] is not f:
        cached = (f, min_size(f.element_type, f.fields, version))
        _MIN_SIZES[key] = cached
    return cached[1]


_PAIRS: dict[tuple[int, int], tuple[tuple[FieldSpec, ...], Any]] = {}


def pair_shape(fields: tuple[FieldSpec, ...], version: int) -> Any:
    """For a struct that is, at ``version``, exactly a non-nullable string and a non-nullable array of
    fixed-width integers (a topic and its partitions): (string first?, names, element struct, bounds); else None.

    Arrays of such structs (owned, assigned and previously assigned partitions) are read and written
    element by element without the generic interpreter; any element the shortcut cannot take as is
    (a wrong type, a bad length, short data) goes through the generic path, which gives the exact error.
    """
    key = (id(fields), version)
    cached = _PAIRS.get(key)
    if cached is not None and cached[0] is fields:
        return cached[1]
    shape = None
    plan = field_plan(fields, version)
    if len(plan) == 2 and all(present and not nullable for _, present, nullable in plan):
        (a, _, _), (b, _, _) = plan
        for string, array, first in ((a, b, True), (b, a, False)):
            if string.type == "string" and array.is_array and not array.fields and array.element_type in STRUCTS:
                element = array.element_type
                shape = (first, string.name, array.name, STRUCTS[element], RANGES[element])
    _PAIRS[key] = (fields, shape)
    return shape


def read_pair(r: "_Reader", shape: Any) -> dict[str, Any] | None:
    first, sname, aname, s, _ = shape
    data, pos, end = r.data, r.pos, len(r.data)
    if pos + 2 > end:
        return None
    (length,) = INT16.unpack_from(data, pos)
    pos += 2
    if length < 0 or pos + length > end:
        return None
    try:
        name = data[pos : pos + length].decode("utf-8")
    except UnicodeDecodeError:
        return None
    pos += length
    if pos + 4 > end:
        return None
    (count,) = INT32.unpack_from(data, pos)
    pos += 4
    if count < 0 or pos + count * s.size > end:
        return None
    values = list(struct.unpack_from(f">{count}{s.format[-1]}", data, pos)) if count else []
    r.pos = pos + count * s.size
    return {sname: name, aname: values} if first else {aname: values, sname: name}


def read_plain_string(r: "_Reader") -> str | None:
    """A non-null string that is all there and valid UTF-8, read in one go; None (nothing consumed) otherwise."""
    data, pos = r.data, r.pos
    if pos + 2 > len(data):
        return None
    (length,) = INT16.unpack_from(data, pos)
    if length < 0 or pos + 2 + length > len(data):
        return None
    try:
        value = data[pos + 2 : pos + 2 + length].decode("utf-8")
    except UnicodeDecodeError:
        return None
    r.pos = pos + 2 + length
    return value


def write_pair(out: bytearray, shape: Any, item: Any) -> bool:
    """Write ``item`` by the shortcut, or return False having written nothing."""
    _, sname, aname, s, (lo, hi) = shape
    if type(item) is not dict or len(item) != 2:
        return False
    name, values = item.get(sname), item.get(aname)
    if type(name) is not str or type(values) is not list:
        return False
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    if len(raw) > STRING_MAX_BYTES:
        return False
    if values and (set(map(type, values)) != {int} or min(values) < lo or max(values) > hi):
        return False
    # the fields in spec order: the shape knows which comes first
    head = INT16.pack(len(raw)) + raw
    tail = INT32.pack(len(values)) + (struct.pack(f">{len(values)}{s.format[-1]}", *values) if values else b"")
    out += head + tail if shape[0] else tail + head
    return True


def min_size(f_type: str, fields: tuple[FieldSpec, ...], version: int) -> int:
    """Fewest bytes one value of this type can take at ``version`` (used to bound array counts)."""
    if f_type in PRIMITIVES:
        return PRIMITIVES[f_type][0]
    if f_type == "string":
        return 2
    if f_type == "bytes" or f_type.startswith("[]"):
        return 4
    return sum(min_size(f.type, f.fields, version) for f in fields if version in f.versions)
