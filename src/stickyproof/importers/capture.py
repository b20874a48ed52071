"""A scenario from captured bytes: each member's JoinGroup metadata and SyncGroup assignment, as hex.

The capture format (``stickyproof.capture/1``, docs/import.md)::

    {"format": "stickyproof.capture/1",
     "group": "orders-app",                       optional, names the scenario
     "assignor": "cooperative-sticky",            the JoinGroup response's protocol name
     "protocol": "cooperative",                   optional: the rebalance protocol in force
     "topics": {"orders": 6},                     the leader's metadata, as in a scenario
     "members": [                                 in JoinGroup response order
       {"id": "c-1", "instance_id": null,
        "subscription": "0003...",                ConsumerProtocolSubscription bytes
        "assignment": "0003..."}]}                ConsumerProtocolAssignment bytes (all members or none)

Each member's bytes are decoded with the project's codecs, then turned into the scenario fields
from which the leader path re-derives exactly what this leader saw (``leader.decoded_view``):

- ``sticky`` (R1): claims and generation come only from its user data: ``owned`` = the previous
  assignment there, ``generation`` = its V1 generation (-1 for V0, none, or undecodable data);
- ``cooperative-sticky`` (R2): ``owned`` = the subscription's ownedPartitions, ``generation`` = its
  generationId when >= 0, else the int32 of the user data, else -1;
- any other assignor: ``owned`` = ownedPartitions, ``generation`` = generationId (-1 when absent, R3).

Topics keep the wire order, ``version`` is the header's (a newer one is read as v3, as Kafka reads
it), ``rack`` the RackId. What a scenario cannot carry (another assignor's user data, a version
above 3, bytes after the message) is kept out and stated in a note.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import DecodeError, InvalidScenario
from ..model import (
    DEFAULT_GENERATION,
    MAX_VERSION,
    PROTOCOLS,
    Assignment,
    Member,
    Scenario,
    TopicPartition,
    parse_json,
    scenario_from_dict,
    scenario_to_dict,
    topics_from_dict,
)
from ..wire import (
    ASSIGNMENT,
    SUBSCRIPTION,
    WireSubscription,
    decode,
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
)
from ..wire.cli_json import parse_hex
from .result import ImportResult, withheld_for_revocation

__all__ = ["CAPTURE_FORMAT", "import_capture", "read_capture"]

CAPTURE_FORMAT = "stickyproof.capture/1"
_TOP = ("format", "name", "group", "assignor", "protocol", "topics", "members")
_MEMBER = ("id", "instance_id", "assignor", "subscription", "assignment")


def read_capture(text: str | bytes, source: str = "capture") -> Any:
    """Parse the capture's JSON text (errors name the line and column)."""
    try:
        return parse_json(text, source)
    except InvalidScenario:
        raise
    except ValueError as exc:  # e.g. an integer past Python's int-from-text digit limit
        raise InvalidScenario("", f"{source}: {exc}") from None


def import_capture(doc: Any, *, protocol: str | None = None, name: str | None = None) -> ImportResult:
    """Scenario (and, when every member's assignment was captured, the assignment) of a capture document.

    ``protocol`` overrides the capture's rebalance protocol. Bad JSON shapes raise
    ``InvalidScenario`` naming the path (``members[2].subscription``); bytes that do not decode raise
    ``DecodeError`` naming the member, the field and the byte offset.
    """
    _fields(doc, _TOP, "")
    _no_lone_surrogates(doc, "")
    if doc.get("format") != CAPTURE_FORMAT:
        raise InvalidScenario("format", f"expected {CAPTURE_FORMAT!r}, got {doc.get('format')!r}")
    members_raw = doc.get("members")
    if not isinstance(members_raw, list) or not members_raw:
        raise InvalidScenario("members", "expected a non-empty array of captured members")
    _all_or_none(members_raw)
    default_assignor = _opt_str(doc, "assignor", "assignor")
    if "topics" not in doc:
        raise InvalidScenario("topics", "required field is missing (the leader's metadata: topic to partition count)")
    topics = topics_from_dict(doc["topics"])

    notes: list[str] = []
    members: list[Member] = []
    assigned: dict[str, tuple[TopicPartition, ...]] = {}
    assignor_of_first: str | None = None
    for i, raw in enumerate(members_raw):
        path = f"members[{i}]"
        _fields(raw, _MEMBER, path)
        member_id = _str(raw.get("id"), f"{path}.id", "a member id")
        assignor = _opt_str(raw, "assignor", f"{path}.assignor") or default_assignor
        if assignor is None:
            raise InvalidScenario(f"{path}.assignor", "required (or a top-level assignor): the protocol name the "
                                  "JoinGroup response carries, e.g. cooperative-sticky")
        if assignor_of_first is None:
            assignor_of_first = assignor
        elif assignor != assignor_of_first:
            raise InvalidScenario(f"{path}.assignor", f"{assignor!r} differs from {assignor_of_first!r} of members[0]: "
                                  "a JoinGroup response carries one protocol's metadata for every member")
        instance_id = raw.get("instance_id")
        if instance_id is not None:
            _str(instance_id, f"{path}.instance_id", "a group.instance.id or null")
        members.append(_member(raw, path, member_id, instance_id, assignor, notes))
        if "assignment" in raw:
            assigned[member_id] = _assignment(raw["assignment"], f"{path}.assignment", notes)

    assignor = assignor_of_first or ""
    protocol = _protocol(doc, protocol, assignor, notes)
    _eager_owned_notes(members, assignor, protocol, notes)
    notes.extend(_fixed_notes(assignor, bool(assigned)))
    scenario = Scenario(
        topics=topics,
        members=tuple(members),
        protocol=protocol,
        name=name or _opt_str(doc, "name", "name") or f"{_opt_str(doc, 'group', 'group') or 'group'} (imported from a capture)",
    )
    scenario = scenario_from_dict(scenario_to_dict(scenario))  # ids unique, values in range: the format's rules
    assignment = None
    if assigned:
        owned = {m.id: m.owned for m in scenario.members}
        revoking = withheld_for_revocation(owned, assigned) if protocol == "cooperative" else {}
        assignment = Assignment({m.id: assigned[m.id] for m in scenario.members}, revoking)
    return ImportResult(scenario, assignment, tuple(notes), _opt_str(doc, "group", "group"))


# ------------------------------------------------------------------------------------------
# one member


def _member(raw: Mapping[str, Any], path: str, member_id: str, instance_id: str | None, assignor: str, notes: list[str]) -> Member:
    data = _hex(raw.get("subscription"), f"{path}.subscription")
    try:
        wire = decode_subscription(data)
        end = decode(SUBSCRIPTION, data).end
    except DecodeError as exc:
        raise _located(exc, f"{path}.subscription") from None
    if end < len(data):
        notes.append(f"{member_id}: {len(data) - end} byte(s) after its subscription were ignored, as Kafka's reader does")
    version = wire.version
    if version > MAX_VERSION:
        notes.append(f"{member_id}: subscription v{version} read with the v{MAX_VERSION} layout (as Kafka reads a newer "
                     f"version) and written as v{MAX_VERSION}")
        version = MAX_VERSION
    owned, generation = _claims(wire, assignor, member_id, path, notes)
    return Member(
        id=member_id,
        topics=wire.topics,
        owned=owned,
        generation=generation,
        version=version,
        rack=wire.rack,
        instance_id=instance_id,
        assignors=(assignor,),
    )


def _claims(
    wire: WireSubscription, assignor: str, member_id: str, path: str, notes: list[str]
) -> tuple[tuple[TopicPartition, ...], int]:
    """(owned, generation) such that the leader path attributes to the member what this leader did."""
    if assignor == "sticky":  # R1: the user data alone
        if wire.owned:
            notes.append(f"{member_id}: ownedPartitions on the wire ({len(wire.owned)}) are ignored: the sticky "
                         "assignor reads claims only from its user data (R1)")
        if not wire.user_data:
            return (), DEFAULT_GENERATION
        try:
            data = decode_sticky_user_data(wire.user_data)
        except DecodeError as exc:
            notes.append(f"{member_id}: its sticky user data does not decode ({exc}); the sticky assignor then sees no "
                         "claims and generation -1 (R1)")
            return (), DEFAULT_GENERATION
        if data.version == 0:
            notes.append(f"{member_id}: sticky user data V0 carries no generation; -1 written (the same to the "
                         "assignor as an absent one, R4)")
            return data.previous_assignment, DEFAULT_GENERATION
        return data.previous_assignment, data.generation
    if assignor == "cooperative-sticky":  # R2: wire owned; wire generation, else the user data's
        if wire.generation >= 0:
            return wire.owned, wire.generation
        if wire.user_data is None:
            return wire.owned, DEFAULT_GENERATION
        try:
            return wire.owned, decode_cooperative_user_data(wire.user_data)
        except DecodeError:
            notes.append(f"{member_id}: its cooperative user data is shorter than 4 bytes; generation -1 (R2)")
            return wire.owned, DEFAULT_GENERATION
    if wire.user_data:
        notes.append(f"{member_id}: {len(wire.user_data)} byte(s) of {assignor} user data are not representable in a "
                     "scenario and were dropped")
    if wire.generation < DEFAULT_GENERATION:
        notes.append(f"{member_id}: generationId {wire.generation} is negative: absent to the leader (R3), written -1")
    return wire.owned, max(wire.generation, DEFAULT_GENERATION)


def _assignment(value: Any, path: str, notes: list[str]) -> tuple[TopicPartition, ...]:
    data = _hex(value, path)
    try:
        wire = decode_assignment(data)
        end = decode(ASSIGNMENT, data).end
    except DecodeError as exc:
        raise _located(exc, path) from None
    if end < len(data):
        notes.append(f"{path}: {len(data) - end} byte(s) after the assignment were ignored, as Kafka's reader does")
    if wire.user_data:
        notes.append(f"{path}: {len(wire.user_data)} byte(s) of assignment user data are not part of an assignment "
                     "document and were dropped")
    return wire.assigned


# ------------------------------------------------------------------------------------------
# group-level choices


def _protocol(doc: Mapping[str, Any], override: str | None, assignor: str, notes: list[str]) -> str:
    chosen = override or doc.get("protocol")
    if chosen is not None:
        if chosen not in PROTOCOLS:
            raise InvalidScenario("protocol", f"unknown protocol {chosen!r} (expected one of {', '.join(PROTOCOLS)})")
        notes.append(f"rebalance protocol: {chosen} ({'--protocol' if override else 'as the capture says'})")
        return chosen
    if assignor == "cooperative-sticky":
        notes.append("rebalance protocol: cooperative, assumed because the assignor is cooperative-sticky (a consumer "
                     "runs COOPERATIVE when every assignor it configures supports it, docs/rules.md R36); set "
                     "\"protocol\" in the capture or pass --protocol eager otherwise")
        return "cooperative"
    notes.append(f"rebalance protocol: eager, assumed for {assignor} (set \"protocol\" in the capture to change it)")
    return "eager"


def _eager_owned_notes(members: list[Member], assignor: str, protocol: str, notes: list[str]) -> None:
    if protocol != "eager" or assignor == "sticky":
        return
    holding = [m.id for m in members if m.owned]
    if holding:
        notes.append(f"{', '.join(holding[:5])}{' ...' if len(holding) > 5 else ''}: ownedPartitions sent under the "
                     "eager protocol; a scenario's eager member sends none (it revoked everything first, R37), so the "
                     "leader path will not show them to the assignor")


def _fixed_notes(assignor: str, has_assignment: bool) -> list[str]:
    source = {
        "sticky": "owned partitions and generation: from each member's StickyAssignor user data, where the sticky "
                  "assignor reads them (R1)",
        "cooperative-sticky": "owned partitions: each subscription's ownedPartitions; generation: its generationId, "
                              "else the generation in the cooperative user data (R2)",
    }.get(assignor, "owned partitions and generation: each subscription's ownedPartitions and generationId")
    return [
        source,
        "members: in capture order, which must be the JoinGroup response order (it decides the sticky assignors' "
        "member iteration order, docs/rules.md 0.3)",
        "assignment: the captured SyncGroup assignments" if has_assignment
        else "assignment: none captured, so no assignment document",
    ]


# ------------------------------------------------------------------------------------------
# JSON helpers


def _fields(obj: Any, allowed: tuple[str, ...], path: str) -> None:
    if not isinstance(obj, Mapping):
        raise InvalidScenario(path, f"expected an object, got {type(obj).__name__}")
    for key in obj:
        if key not in allowed:
            raise InvalidScenario(f"{path}.{key}" if path else key, f"unknown field (allowed: {', '.join(allowed)})")


def _str(value: Any, path: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidScenario(path, f"expected {what} (a non-empty string), got {value!r:.40}")
    return value


def _opt_str(obj: Mapping[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    return None if value is None else _str(value, path, "a string")


def _hex(value: Any, path: str) -> bytes:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "".join(value)
    if not isinstance(value, str):
        raise InvalidScenario(path, "expected the bytes as a hex string (or an array of hex strings)")
    try:
        return parse_hex(value, "hex")
    except DecodeError as exc:
        raise InvalidScenario(path, str(exc)) from None


def _located(exc: DecodeError, path: str) -> DecodeError:
    located = DecodeError(f"{path}: {exc}")
    located.field, located.offset = exc.field, exc.offset
    return located


def _no_lone_surrogates(value: Any, path: str) -> None:
    """JSON's ``\\udc80`` escapes make strings no UTF-8 writer can write; refuse them where they are."""
    if isinstance(value, str):
        for i, ch in enumerate(value):
            if "\ud800" <= ch <= "\udfff":
                raise InvalidScenario(path, f"lone surrogate U+{ord(ch):04X} at character {i + 1}: not a Unicode string")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            shown = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in str(key))
            sub = f"{path}.{shown}" if path else shown
            _no_lone_surrogates(key, f"{sub} (the key)")
            _no_lone_surrogates(item, sub)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _no_lone_surrogates(item, f"{path}[{i}]")


def _all_or_none(members_raw: list[Any]) -> None:
    have = [isinstance(m, Mapping) and "assignment" in m for m in members_raw]
    if any(have) and not all(have):
        i = have.index(False)
        j = have.index(True)
        raise InvalidScenario(f"members[{i}].assignment", f"missing while members[{j}] has one: capture every member's "
                              "SyncGroup assignment, or none")
