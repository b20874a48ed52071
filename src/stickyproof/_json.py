"""Strict JSON reading for every document stickyproof reads (``model.parse_json`` is this one).

Python's ``json`` accepts things a scenario must not hold, each of which once crashed or fooled a
command (issue 14): a repeated key (the last one silently wins), ``NaN``/``Infinity`` (not JSON), an
integer of more digits than Python converts (a ``ValueError`` deep in the decoder), and a lone UTF-16
surrogate (``"\\udc80"``, which no UTF-8 writer, wire codec or solver can carry). ``parse_json``
refuses each with the JSON path of the value, as ``InvalidScenario``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import InvalidScenario

__all__ = ["parse_json", "has_surrogate", "surrogate_message"]


def parse_json(text: str | bytes, source: str = "input") -> Any:
    """Parse JSON, turning any failure into InvalidScenario with line and column, or the JSON path
    of the refused value (a repeated key, NaN, a huge integer, a lone surrogate)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode(json.detect_encoding(text))
        except UnicodeDecodeError as exc:
            raise InvalidScenario("", f"{source} is not UTF-8 text: byte offset {exc.start}") from exc
    marks: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    marks.append("duplicate")
                    return _Repeated(obj, key)
                seen.add(key)
        return obj

    def constant(name: str) -> Any:
        marks.append("constant")
        return _Flagged(f"{name} is not a JSON value")

    def loads(**hooks: Any) -> Any:
        try:
            return json.loads(text, object_pairs_hook=pairs, parse_constant=constant, **hooks)
        except json.JSONDecodeError as exc:
            raise InvalidScenario("", f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
        except RecursionError as exc:
            raise InvalidScenario("", f"{source} nests too deeply to read") from exc

    try:
        doc = loads()
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits(): read again to name it
        if isinstance(exc, InvalidScenario):
            raise
        marks.append("integer")
        doc = loads(parse_int=_bounded_int)
    if marks or _SURROGATE_ESCAPE.search(text):
        _refuse_flagged(doc, source)
    return doc


#: ``\ud800``-``\udfff`` written as an escape: the only way a lone surrogate reaches a decoded string
#: (raw bytes are decoded strictly above, which refuses encoded surrogates).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Repeated(dict):  # type: ignore[type-arg]
    """An object that listed ``key`` twice (what ``parse_json`` refuses once it knows the path)."""

    def __init__(self, items: dict[str, Any], key: str):
        super().__init__(items)
        self.key = key


class _Flagged(str):
    """A value ``parse_json`` refuses, standing where it was read; the text says why."""


def _bounded_int(digits: str) -> int | _Flagged:
    if len(digits.lstrip("-")) > 4000:
        return _Flagged(f"an integer of {len(digits.lstrip('-'))} digits is not a number any field accepts")
    return int(digits)


def has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def surrogate_message(text: str) -> str:
    at = next(i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff")
    return (f"holds a lone UTF-16 surrogate (\\u{ord(text[at]):04x}) at character {at + 1}; "
            "Kafka strings are UTF-8 and cannot carry it")


def _refuse_flagged(doc: Any, source: str) -> None:
    """Raise InvalidScenario at the first (depth-first, document order) flagged value, repeated key or
    lone surrogate under ``doc``; an iterative walk, so the deepest document JSON reads is walked too."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Flagged):
            raise InvalidScenario(path, str(value)) if path else InvalidScenario("", f"{source}: {value}")
        if isinstance(value, str):
            if has_surrogate(value):
                raise InvalidScenario(path, surrogate_message(value))
            continue
        if isinstance(value, dict):
            if isinstance(value, _Repeated):
                where = f"{path}.{value.key}" if path else value.key
                raise InvalidScenario(where, f"key {value.key!r} appears twice in one object (a JSON reader would keep one silently)")
            children = []
            for key, item in value.items():
                where = f"{path}.{key}" if path else key
                if has_surrogate(key):
                    raise InvalidScenario(where, "the key " + surrogate_message(key))
                children.append((where, item))
            stack.extend(reversed(children))
        elif isinstance(value, list):
            # str is a subclass check away from _Flagged; partition lists of plain ints push nothing
            stack.extend(reversed([(f"{path}[{i}]", item) for i, item in enumerate(value) if isinstance(item, (str, dict, list))]))
