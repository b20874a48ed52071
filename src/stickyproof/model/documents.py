"""Reading and writing the format's JSON documents.

Readers enforce every rule of docs/scenario-format.md and raise ``InvalidScenario`` naming the JSON
path and the value; writers emit the canonical document (defaults included, keys in a fixed
order) so a round trip is the identity.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from .._json import has_surrogate, parse_json, surrogate_message
from ..errors import InvalidScenario
from .values import (
    ASSIGNMENT_FORMAT,
    CLASSIC,
    CONSUMER,
    DEFAULT_GENERATION,
    GROUP_PROTOCOLS,
    INT32_MAX,
    MAX_VERSION,
    PROTOCOLS,
    SCENARIO_FORMAT,
    Assignment,
    Member,
    Scenario,
    Topic,
    TopicPartition,
    tp_map_to_dict,
)

# --------------------------------------------------------------------------------------------
# Reading: every rule of docs/scenario-format.md, each raising InvalidScenario(path, what).


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__ if not isinstance(value, (int, float)) else "number"
    )


def _expect(value: Any, kind: type | tuple[type, ...], path: str, what: str) -> Any:
    if isinstance(value, bool) and kind is not bool and (kind is int or (isinstance(kind, tuple) and int in kind)):
        raise InvalidScenario(path, f"expected {what}, got boolean {json.dumps(value)}")
    if not isinstance(value, kind):
        raise InvalidScenario(path, f"expected {what}, got {_type_name(value)} {_short(value)}")
    return value


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _int(value: Any, path: str, what: str = "an integer") -> int:
    if isinstance(value, float):
        raise InvalidScenario(path, f"expected {what}, got non-integer {value!r}")
    return _expect(value, int, path, what)


def _check_keys(obj: Mapping[str, Any], allowed: Iterable[str], path: str) -> None:
    allowed = set(allowed)
    for key in obj:
        if key not in allowed:
            raise InvalidScenario(f"{path}.{key}" if path else key, f"unknown field (allowed: {', '.join(sorted(allowed))})")


def _require(obj: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in obj:
        raise InvalidScenario(f"{path}.{key}" if path else key, "required field is missing")
    return obj[key]


def _name(value: Any, path: str, what: str) -> str:
    """A member id, topic or other name Kafka writes as a UTF-8 string: non-empty, no lone surrogate.

    An empty member id is the one a consumer sends *before* the coordinator names it; no member of a
    group the leader assigns has it. An empty topic name is not a topic (Kafka's ``Topic.validate``).
    """
    _expect(value, str, path, what)
    if not value:
        raise InvalidScenario(path, f"expected {what}, got the empty string")
    if has_surrogate(value):
        raise InvalidScenario(path, surrogate_message(value))
    return value


def _ascii_strings(values: tuple[Any, ...]) -> bool:
    """Whether every element is an ASCII string (so none holds a lone surrogate)."""
    try:
        return "".join(values).isascii()
    except TypeError:  # an element not a string
        return False


def _names(values: list[Any], path: str, what: str) -> tuple[str, ...]:
    """Every element of the array at ``path`` a name (``_name``): checked together where all are
    non-empty ASCII strings (a group of 10,000 members of 1,000 topics each names 10 million), one
    by one otherwise, so that the error names the first element at fault (``path[i]``)."""
    out = tuple(values)
    if all(out) and _ascii_strings(out):  # all(): no empty string, in one C loop
        return out
    return tuple(_name(v, f"{path}[{i}]", what) for i, v in enumerate(out))


def _texts(values: list[Any], path: str, what: str) -> tuple[str, ...]:
    """Every element of the array at ``path`` a free string (``_text``), checked as ``_names`` does."""
    out = tuple(values)
    if _ascii_strings(out):
        return out
    return tuple(_text(v, f"{path}[{i}]", what) for i, v in enumerate(out))


def _text(value: Any, path: str, what: str) -> str:
    """A free string (rack, instance id, assignor name, note): a string with no lone surrogate."""
    _expect(value, str, path, what)
    if has_surrogate(value):
        raise InvalidScenario(path, surrogate_message(value))
    return value


def _topic_from_json(name: str, raw: Any, path: str) -> Topic:
    if isinstance(raw, Mapping):
        _check_keys(raw, ("partitions", "racks", "id"), path)
        count = _int(_require(raw, "partitions", path), f"{path}.partitions", "a partition count")
        if count < 0:
            raise InvalidScenario(f"{path}.partitions", f"negative partition count {count}")
        if count > INT32_MAX:
            raise InvalidScenario(f"{path}.partitions", f"partition count {count} exceeds int32")
        racks_raw = raw.get("racks")
        racks = None
        if racks_raw is not None:
            _expect(racks_raw, list, f"{path}.racks", "an array of rack lists")
            if len(racks_raw) != count:
                raise InvalidScenario(
                    f"{path}.racks", f"has {len(racks_raw)} entries but the topic has {count} partitions"
                )
            parsed = []
            for p, rl in enumerate(racks_raw):
                if type(rl) is not list:  # the path built only for the error: a topic may have thousands
                    _expect(rl, list, f"{path}.racks[{p}]", "an array of rack names")
                parsed.append(_texts(rl, f"{path}.racks[{p}]", "a rack name"))
            racks = tuple(parsed)
        topic_id = raw.get("id")
        if topic_id is not None:
            from .topic_ids import parse_kafka_uuid

            try:
                parse_kafka_uuid(topic_id)
            except ValueError as exc:
                raise InvalidScenario(f"{path}.id", f"{_short(topic_id)}: {exc}") from None
        return Topic(name, count, racks, topic_id)
    count = _int(raw, path, "a partition count or {partitions, racks}")
    if count < 0:
        raise InvalidScenario(path, f"negative partition count {count}")
    if count > INT32_MAX:
        raise InvalidScenario(path, f"partition count {count} exceeds int32")
    return Topic(name, count, None)


_MEMBER_FIELDS = ("id", "topics", "owned", "generation", "version", "rack", "instance_id", "assignors")


def _member_from_json(raw: Any, path: str) -> Member:
    _expect(raw, Mapping, path, "a member object")
    _check_keys(raw, _MEMBER_FIELDS, path)
    member_id = _name(_require(raw, "id", path), f"{path}.id", "a member id string")
    topics_raw = _expect(_require(raw, "topics", path), list, f"{path}.topics", "an array of topic names")
    topics = _names(topics_raw, f"{path}.topics", "a topic name")
    owned_raw = raw.get("owned", {})
    owned = partitions_by_topic({} if owned_raw is None else owned_raw, f"{path}.owned")
    generation = _int(raw.get("generation", DEFAULT_GENERATION), f"{path}.generation", "an integer generation")
    if not -(2**31) <= generation <= INT32_MAX:
        raise InvalidScenario(f"{path}.generation", f"generation {generation} outside int32")
    version = _int(raw.get("version", MAX_VERSION), f"{path}.version", "a version 0..3")
    if not 0 <= version <= MAX_VERSION:
        raise InvalidScenario(f"{path}.version", f"version {version} outside 0..{MAX_VERSION}")
    rack = raw.get("rack")
    if rack is not None:
        _text(rack, f"{path}.rack", "a rack name or null")
    instance_id = raw.get("instance_id")
    if instance_id is not None:
        _text(instance_id, f"{path}.instance_id", "an instance id or null")
    assignors_raw = raw.get("assignors", [])
    if assignors_raw is None:
        assignors_raw = []
    _expect(assignors_raw, list, f"{path}.assignors", "an array of assignor names")
    assignors = tuple(_text(a, f"{path}.assignors[{i}]", "an assignor name") for i, a in enumerate(assignors_raw))
    return Member(member_id, topics, owned, generation, version, rack, instance_id, assignors)


def topics_from_dict(raw: Any, path: str = "topics") -> tuple[Topic, ...]:
    """Read the ``topics`` object of a scenario (the leader's metadata) at ``path``."""
    _expect(raw, Mapping, path, "an object of topic name to partition count")
    return tuple(_topic_from_json(_name(n, f"{path}.{n}", "a topic name"), v, f"{path}.{n}") for n, v in raw.items())


def scenario_from_dict(doc: Any) -> Scenario:
    """Read a scenario document, enforcing every rule of docs/scenario-format.md."""
    _expect(doc, Mapping, "", "a JSON object")
    # Two extensions every command reads and ignores: "expect", the outcome regression and
    # Kafka-case files carry beside the scenario (tests/regressions/README.md), and "notes", what
    # `stickyproof import` could not know about a real group and assumed (docs/import.md).
    _check_keys(doc, ("format", "name", "group_protocol", "protocol", "topics", "members", "expect", "notes"), "")
    fmt = _require(doc, "format", "")
    if fmt != SCENARIO_FORMAT:
        raise InvalidScenario("format", f"unknown format {_short(fmt)} (expected {SCENARIO_FORMAT!r})")
    name = _text(doc.get("name", ""), "name", "a string")
    notes = _expect(doc.get("notes", []), list, "notes", "an array of strings")
    for i, note in enumerate(notes):
        _text(note, f"notes[{i}]", "a string")
    group_protocol = _expect(doc.get("group_protocol", CLASSIC), str, "group_protocol", "a string")
    if group_protocol not in GROUP_PROTOCOLS:
        raise InvalidScenario(
            "group_protocol", f"unknown group protocol {group_protocol!r} (expected one of {', '.join(GROUP_PROTOCOLS)})"
        )
    if group_protocol == CONSUMER and "protocol" in doc:
        raise InvalidScenario(
            "protocol", "a consumer group (KIP-848) has no eager/cooperative rebalance protocol; leave the field out"
        )
    protocol = _expect(doc.get("protocol", "eager"), str, "protocol", "a string")
    if protocol not in PROTOCOLS:
        raise InvalidScenario("protocol", f"unknown protocol {protocol!r} (expected one of {', '.join(PROTOCOLS)})")
    topics = topics_from_dict(_require(doc, "topics", ""))
    members_raw = _expect(_require(doc, "members", ""), list, "members", "an array of members")
    if not members_raw:
        # R14: Kafka's leader is itself a member, so no group it assigns is empty (and its assignors
        # divide by zero on one); a scenario with nobody in it describes no rebalance.
        raise InvalidScenario("members", "a group has at least one member (its leader, R14); got an empty array")
    members = tuple(_member_from_json(m, f"members[{i}]") for i, m in enumerate(members_raw))
    seen: dict[str, int] = {}
    for i, m in enumerate(members):
        if m.id in seen:
            raise InvalidScenario(f"members[{i}].id", f"member id {m.id!r} already used by members[{seen[m.id]}]")
        seen[m.id] = i
    if group_protocol == CONSUMER:
        _check_consumer_members(members_raw, topics, members)
    else:
        for t in topics:
            if t.id is not None:
                raise InvalidScenario(f"topics.{t.name}.id", "a topic id reaches consumer-group assignors only (group_protocol \"consumer\")")
    return Scenario(topics, members, protocol, name, group_protocol)


_CLASSIC_ONLY_MEMBER_FIELDS = ("generation", "version", "assignors")


def _check_consumer_members(members_raw: list[Any], topics: tuple[Topic, ...], members: tuple[Member, ...]) -> None:
    """What the group coordinator could never hand a server-side assignor, refused.

    A member's ``owned`` is its current target assignment, which the coordinator keeps as one map of
    partition to member (``ModernGroup.invertedTargetAssignment``): no partition is in two targets.
    Partition counts only grow and a topic keeps its id, so a target never names a partition at or
    beyond its existing topic's count (the heterogeneous builder would index past its owner array).
    A target naming a topic the member no longer subscribes to, or a topic deleted since, is legal:
    ``TargetAssignmentBuilder`` passes the previous target whatever the new subscription, and both
    ``uniform`` builders drop such topics themselves (``maybeRevokePartitions``).
    """
    for i, raw in enumerate(members_raw):
        for key in _CLASSIC_ONLY_MEMBER_FIELDS:
            if key in raw:
                raise InvalidScenario(
                    f"members[{i}].{key}",
                    "a consumer-group member (KIP-848) carries no generation, protocol version or assignor list; leave the field out",
                )
    counts = {t.name: t.partitions for t in topics}
    from .topic_ids import topic_ids_of

    named: dict[object, str] = {}
    for name, tid in topic_ids_of(topics).items():
        if tid in named:
            raise InvalidScenario(f"topics.{name}", f"has the topic id of topic {named[tid]!r}: a topic id names one topic")
        named[tid] = name
    holder: dict[TopicPartition, int] = {}
    for i, m in enumerate(members):
        for tp in m.owned:
            count = counts.get(tp.topic)
            if count is not None and tp.partition >= count:
                raise InvalidScenario(
                    f"members[{i}].owned.{tp.topic}",
                    f"partition {tp.partition} of a topic with {count} partitions: a target assignment names only existing partitions",
                )
            if tp in holder:
                raise InvalidScenario(
                    f"members[{i}].owned.{tp.topic}",
                    f"partition {tp.partition} is already in the target of members[{holder[tp]}]: a partition is in one target at most",
                )
            holder[tp] = i


def partitions_by_topic(doc: Any, path: str, *, allow_repeats: bool = False) -> tuple[TopicPartition, ...]:
    """Read ``{topic: [partitions]}`` at ``path`` into partitions, checking types, signs and (unless
    ``allow_repeats``) repeats. An assignor's answer may list a partition twice (a bug worth reporting
    as ``duplicate``, not a format error), so assignment documents allow repeats."""
    _expect(doc, Mapping, path, "an object of topic to partition list")
    out: list[TopicPartition] = []
    for topic, parts in doc.items():
        ppath = f"{path}.{topic}"
        _name(topic, ppath, "a topic name")
        _expect(parts, list, ppath, "an array of partition numbers")
        seen: set[int] = set()
        for i, p in enumerate(parts):
            p = _int(p, f"{ppath}[{i}]", "a partition number")
            if p < 0:
                raise InvalidScenario(f"{ppath}[{i}]", f"negative partition {p}")
            if p > INT32_MAX:
                raise InvalidScenario(f"{ppath}[{i}]", f"partition {p} exceeds int32")
            if p in seen and not allow_repeats:
                raise InvalidScenario(f"{ppath}[{i}]", f"partition {p} listed twice")
            seen.add(p)
            out.append(TopicPartition(topic, p))
    return tuple(out)


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """The canonical scenario document (every field written, owned partitions in claim order)."""
    topics: dict[str, Any] = {}
    for t in scenario.topics:
        if t.racks is None and t.id is None:
            topics[t.name] = t.partitions
        else:
            topics[t.name] = {"partitions": t.partitions}
            if t.racks is not None:
                topics[t.name]["racks"] = [list(r) for r in t.racks]
            if t.id is not None:
                topics[t.name]["id"] = t.id
    members = []
    consumer = scenario.group_protocol == CONSUMER
    for m in scenario.members:
        owned: dict[str, list[int]] = {}
        for tp in m.owned:
            owned.setdefault(tp.topic, []).append(tp.partition)
        if consumer:
            members.append({"id": m.id, "topics": list(m.topics), "owned": owned, "rack": m.rack, "instance_id": m.instance_id})
            continue
        members.append(
            {
                "id": m.id,
                "topics": list(m.topics),
                "owned": owned,
                "generation": m.generation,
                "version": m.version,
                "rack": m.rack,
                "instance_id": m.instance_id,
                "assignors": list(m.assignors),
            }
        )
    if consumer:
        return {"format": SCENARIO_FORMAT, "name": scenario.name, "group_protocol": CONSUMER, "topics": topics, "members": members}
    return {
        "format": SCENARIO_FORMAT,
        "name": scenario.name,
        "protocol": scenario.protocol,
        "topics": topics,
        "members": members,
    }


def assignment_from_dict(doc: Any) -> Assignment:
    """Read an assignment document (``{"format", "assignment", "revoking"}``)."""
    _expect(doc, Mapping, "", "a JSON object")
    fmt = _require(doc, "format", "")
    if fmt != ASSIGNMENT_FORMAT:
        raise InvalidScenario("format", f"unknown format {_short(fmt)} (expected {ASSIGNMENT_FORMAT!r})")
    raw = _expect(_require(doc, "assignment", ""), Mapping, "assignment", "an object of member id to partitions")
    assignment = {_name(m, f"assignment.{m}", "a member id"): partitions_by_topic(v, f"assignment.{m}", allow_repeats=True)
                  for m, v in raw.items()}
    revoking_raw = doc.get("revoking") or {}
    _expect(revoking_raw, Mapping, "revoking", "an object of member id to partitions")
    revoking = {_name(m, f"revoking.{m}", "a member id"): partitions_by_topic(v, f"revoking.{m}", allow_repeats=True)
                for m, v in revoking_raw.items()}
    return Assignment(assignment, revoking)


def assignment_to_dict(assignment: Assignment, *, sort: bool = True) -> dict[str, Any]:
    """The assignment document; partitions sorted per topic unless ``sort=False`` keeps the assignor's order."""

    def shape(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
        if sort:
            return tp_map_to_dict(tps)
        out: dict[str, list[int]] = {}
        for tp in tps:
            out.setdefault(tp.topic, []).append(tp.partition)
        return out

    doc: dict[str, Any] = {
        "format": ASSIGNMENT_FORMAT,
        "assignment": {m: shape(assignment.assignment[m]) for m in sorted(assignment.assignment)},
    }
    revoking = {m: shape(v) for m, v in sorted(assignment.revoking.items()) if v}
    doc["revoking"] = revoking
    return doc


def _read_text(path: str | Path) -> str | bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError as exc:
        raise InvalidScenario("", f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise InvalidScenario("", f"{path}: is a directory") from exc
    except OSError as exc:
        raise InvalidScenario("", f"{path}: cannot read ({exc.strerror})") from exc


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file ("-" for standard input)."""
    if str(path) == "-":
        import sys

        return scenario_from_dict(parse_json(sys.stdin.buffer.read(), "standard input"))
    return scenario_from_dict(parse_json(_read_text(path), str(path)))


def load_assignment(path: str | Path) -> Assignment:
    """Read an assignment file ("-" for standard input)."""
    if str(path) == "-":
        import sys

        return assignment_from_dict(parse_json(sys.stdin.buffer.read(), "standard input"))
    return assignment_from_dict(parse_json(_read_text(path), str(path)))


def dump_json(doc: Any, indent: int = 2) -> str:
    """Deterministic JSON text: two-space indent, insertion order kept (writers order keys canonically).

    Arrays of scalars (partition lists, topic lists) stay on one line, so an assignment of
    thousands of partitions reads as one line per member and topic rather than one per partition.
    """

    def render(value: Any, depth: int) -> str:
        pad, inner = " " * (indent * depth), " " * (indent * (depth + 1))
        if isinstance(value, Mapping):
            if not value:
                return "{}"
            items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {render(v, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, (list, tuple)):
            if all(not isinstance(v, (Mapping, list, tuple)) for v in value):
                return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
            return "[\n" + ",\n".join(inner + render(v, depth + 1) for v in value) + "\n" + pad + "]"
        return json.dumps(value, ensure_ascii=False)

    return render(doc, 0)


def jsonable(value: Any) -> Any:
    """``value`` with every mapping, sequence and set turned into JSON values (sets sorted), and
    anything else that is not a JSON scalar written as its ``str``; a ``TopicPartition`` is a tuple: ``["t", 3]``."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
