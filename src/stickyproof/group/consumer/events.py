"""Event schedules of a consumer group (docs/consumer-protocol.md, "Events").

The classic simulator's vocabulary where it applies (``join``, ``leave``, ``crash``, ``stall``,
``restart``, ``subscribe``, ``add-partitions``, ``delete-topic``: group/events.py), minus the fields
a KIP-848 member has no use for (assignor lists, subscription versions, KIP-429 protocols), plus
what only this protocol needs: ``heartbeat-loss`` (requests or responses dropped for some ticks) and
``slow-revocation`` (a member whose revocation callback takes some ticks, so it keeps heartbeating
while it still owns what it must give up). A document is the classic ``stickyproof.simulation/1``
shape whose scenario has ``"group_protocol": "consumer"``; every error names the JSON path.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from ...errors import InvalidScenario
from ...model import Scenario, scenario_from_dict
from ..config import GroupConfig, config_from_dict
from ..events import EVENTS_FORMAT, MAX_TICKS, SIMULATION_FORMAT

__all__ = [
    "CONSUMER_EVENT_KINDS",
    "CLASSIC_ONLY_KINDS",
    "LOSS_DIRECTIONS",
    "MIGRATION_FIELDS",
    "GROUP_PROTOCOLS",
    "ConsumerEvent",
    "ConsumerSchedule",
    "ConsumerDocument",
    "consumer_event_from_dict",
    "consumer_events_from_doc",
    "consumer_document_from_dict",
]

# kind -> (required fields, optional fields)
CONSUMER_EVENT_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "join": (("member", "topics"), ("rack", "instance_id")),
    "leave": (("member",), ()),
    "crash": (("member",), ()),
    "stall": (("member", "ticks"), ()),
    "subscribe": (("member", "topics"), ()),
    "add-partitions": (("topic", "count"), ("racks",)),
    "delete-topic": (("topic",), ()),
    "create-topic": (("topic", "count"), ("racks",)),
    "restart": (("member",), ("topics", "rack", "instance_id")),
    "heartbeat-loss": (("member", "ticks"), ("direction",)),
    "slow-revocation": (("member", "ticks"), ()),
}

#: Classic events with no meaning in a consumer group, and why (the error says it).
CLASSIC_ONLY_KINDS = {
    "upgrade": "a KIP-848 member has no assignor list or subscription version to upgrade; use restart",
    "rolling-restart": "not modelled for consumer groups yet; schedule one restart per member",
    "failover": "coordinator fail-over is not modelled for consumer groups",
    "listener-error": "rebalance listener errors are not modelled for consumer groups; slow-revocation delays one",
}

#: Fields only a migration history's events carry (docs/consumer-protocol.md, "Online migration"): the
#: protocol a joining or restarted process speaks (``group.protocol``), and the client-side assignors
#: a classic process offers in its JoinGroup.
MIGRATION_FIELDS: dict[str, tuple[str, ...]] = {"join": ("group_protocol", "assignors"), "restart": ("group_protocol", "assignors")}
GROUP_PROTOCOLS = ("classic", "consumer")

#: ``heartbeat-loss`` directions: the request never reaches the coordinator, or its response never
#: reaches the member (the coordinator acted on it), or both.
LOSS_DIRECTIONS = ("response", "request", "both")


@dataclass(frozen=True)
class ConsumerEvent:
    """One scheduled event; only the fields of its kind are set (``CONSUMER_EVENT_KINDS``)."""

    at: int
    event: str
    member: str | None = None
    topics: tuple[str, ...] | None = None
    rack: str | None = None
    instance_id: str | None = None
    ticks: int | None = None
    topic: str | None = None
    count: int | None = None
    racks: tuple[tuple[str, ...], ...] | None = None
    direction: str = "response"
    group_protocol: str | None = None
    assignors: tuple[str, ...] | None = None
    given: frozenset[str] = field(default=frozenset(), compare=False)
    path: str = field(default="", compare=False)

    def describe(self) -> str:
        """One line for the trace."""
        k = self.event
        if k == "join":
            static = f" as static member {self.instance_id}" if self.instance_id else ""
            speaks = f" with group.protocol={self.group_protocol}" if self.group_protocol else ""
            return f"{self.member} joins ({', '.join(self.topics or ())}){static}{speaks}"
        if k == "leave":
            return f"{self.member} leaves"
        if k == "crash":
            return f"{self.member} crashes"
        if k == "stall":
            return f"{self.member} stalls {self.ticks} ticks"
        if k == "subscribe":
            return f"{self.member} subscribes to {', '.join(self.topics or ()) or 'nothing'}"
        if k == "add-partitions":
            return f"{self.count} partitions added to {self.topic}"
        if k == "delete-topic":
            return f"topic {self.topic} deleted"
        if k == "create-topic":
            return f"topic {self.topic} created with {self.count} partitions"
        if k == "restart":
            changes = ", ".join(f"{f}={_show(getattr(self, f))}" for f in ("topics", "rack", "instance_id", "assignors") if f in self.given)
            if self.group_protocol:
                changes = ", ".join(c for c in (f"group.protocol={self.group_protocol}", changes) if c)
            return f"{self.member} restarts{' (' + changes + ')' if changes else ''}"
        if k == "heartbeat-loss":
            what = {"response": "responses", "request": "requests", "both": "requests and responses"}[self.direction]
            return f"{self.member}'s heartbeat {what} lost for {self.ticks} ticks"
        return f"{self.member}'s revocations take {self.ticks} ticks"  # slow-revocation


def _show(value: Any) -> str:
    return "[" + ", ".join(value) + "]" if isinstance(value, tuple) else str(value)


def _int(value: Any, path: str, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InvalidScenario(path, f"must be an integer >= {minimum}, got {value!r}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidScenario(path, f"must be a non-empty string, got {value!r}")
    return value


def _names(value: Any, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InvalidScenario(path, f"must be an array of strings, got {value!r}")
    out = tuple(_str(v, f"{path}[{i}]") for i, v in enumerate(value))
    if len(set(out)) != len(out):
        raise InvalidScenario(path, "lists a name twice")
    return out


def consumer_event_from_dict(doc: Any, path: str = "event", *, migration: bool = False) -> ConsumerEvent:
    """Read one event of a consumer group's schedule, checking its kind's fields; ``migration``: a
    migration history's, whose ``join`` and ``restart`` may name a ``group_protocol`` and ``assignors``."""
    if not isinstance(doc, Mapping):
        raise InvalidScenario(path, "must be an object with 'at' and 'event'")
    kind = doc.get("event")
    if kind in CLASSIC_ONLY_KINDS:
        raise InvalidScenario(f"{path}.event", f"{kind!r} is a classic-protocol event: {CLASSIC_ONLY_KINDS[kind]}")
    if kind not in CONSUMER_EVENT_KINDS:
        raise InvalidScenario(f"{path}.event", f"unknown event {kind!r} (known for consumer groups: {', '.join(CONSUMER_EVENT_KINDS)})")
    required, optional = CONSUMER_EVENT_KINDS[kind]
    allowed = {"at", "event", *required, *optional, *(MIGRATION_FIELDS.get(kind, ()) if migration else ())}
    for key in doc:
        if key in MIGRATION_FIELDS.get(kind, ()) and not migration:
            raise InvalidScenario(f"{path}.{key}", "a migration history's field: the simulator runs a history as a migration "
                                                   "when one of its events names a group_protocol")
        if key not in allowed:
            raise InvalidScenario(f"{path}.{key}", f"not a field of a {kind} event in a consumer group "
                                                   f"(allowed: {', '.join(sorted(allowed))})")
    for key in ("at", *required):
        if key not in doc:
            raise InvalidScenario(f"{path}.{key}", f"a {kind} event needs it")
    values: dict[str, Any] = {"at": _int(doc["at"], f"{path}.at", 0), "event": kind}
    for key, raw in doc.items():
        where = f"{path}.{key}"
        if key in ("member", "topic"):
            values[key] = _str(raw, where)
        elif key in ("topics", "assignors"):
            values[key] = _names(raw, where)
        elif key == "group_protocol":
            if raw not in GROUP_PROTOCOLS:
                raise InvalidScenario(where, f"must be one of {', '.join(GROUP_PROTOCOLS)}, got {raw!r}")
            values[key] = raw
        elif key in ("rack", "instance_id"):
            values[key] = None if raw is None else _str(raw, where)
        elif key in ("ticks", "count"):
            values[key] = _int(raw, where, 1)
        elif key == "direction":
            if raw not in LOSS_DIRECTIONS:
                raise InvalidScenario(where, f"must be one of {', '.join(LOSS_DIRECTIONS)}, got {raw!r}")
            values[key] = raw
        elif key == "racks":
            if not isinstance(raw, list):
                raise InvalidScenario(where, f"must be an array (one list of replica racks per new partition), got {raw!r}")
            values[key] = tuple(_names(r, f"{where}[{i}]") for i, r in enumerate(raw))
    if values.get("racks") is not None and len(values["racks"]) != values.get("count"):
        raise InvalidScenario(f"{path}.racks", f"lists {len(values['racks'])} partitions' racks, count is {values.get('count')}")
    given = frozenset(k for k in doc if k not in ("at", "event"))
    return ConsumerEvent(**values, given=given, path=path)


@dataclass(frozen=True)
class ConsumerSchedule:
    """The events in run order and the timing settings (``GroupConfig``: session and rebalance
    timeouts, restart downtime and the horizon ``max_ticks`` are read; the classic rebalance knobs
    are accepted and unused)."""

    events: tuple[ConsumerEvent, ...] = ()
    config: GroupConfig = GroupConfig()


def consumer_events_from_doc(doc: Any, path: str = "events", base: GroupConfig | None = None, *,
                             migration: bool = False) -> ConsumerSchedule:
    """Read a bare list of events or a ``stickyproof.events/1`` object, in (tick, file) order, refusing
    an event at or past ``config.max_ticks`` (it would never run)."""
    config = base or GroupConfig()
    prefix = path
    if isinstance(doc, Mapping):
        for key in doc:
            if key not in ("format", "config", "events"):
                raise InvalidScenario(key, "not a field of an events document (format, config, events)")
        if doc.get("format") != EVENTS_FORMAT:
            raise InvalidScenario("format", f"unknown format {doc.get('format')!r} (expected {EVENTS_FORMAT!r})")
        config = config_from_dict(doc.get("config"), "config", config)
        doc = doc.get("events", [])
        prefix = "events"
    if not isinstance(doc, list):
        raise InvalidScenario(prefix, "must be an array of events")
    events = [consumer_event_from_dict(e, f"{prefix}[{i}]", migration=migration) for i, e in enumerate(doc)]
    ordered = tuple(e for _, e in sorted(enumerate(events), key=lambda pair: (pair[1].at, pair[0])))
    schedule = ConsumerSchedule(ordered, config)
    check_consumer_horizon(schedule)
    return schedule


def check_consumer_horizon(schedule: ConsumerSchedule) -> None:
    """Refuse a ``max_ticks`` over the simulator's limit, and an event the run would never reach."""
    horizon = schedule.config.max_ticks
    if horizon > MAX_TICKS:
        raise InvalidScenario("config.max_ticks", f"{horizon:,} ticks, more than the simulator's limit of {MAX_TICKS:,} "
                              "(docs/limits.md)")
    for e in schedule.events:
        if e.at >= horizon:
            raise InvalidScenario(f"{e.path}.at" if e.path else "at",
                                  f"{e.describe()} is scheduled at tick {e.at}, at or past the simulation's end "
                                  f"(config.max_ticks = {horizon}): it would never run; move it earlier or raise config.max_ticks")


@dataclass(frozen=True)
class ConsumerDocument:
    """A consumer group's simulation: scenario, schedule, and the releases to run (None: the caller's)."""

    scenario: Scenario
    schedule: ConsumerSchedule
    assignor: str | None = None
    coordinator: str | None = None
    name: str = ""
    expect: Mapping[str, Any] | None = None
    migration: bool = False
    migration_policy: str | None = None


_DOC_KEYS = ("format", "name", "scenario", "events", "config", "assignor", "coordinator", "expect")


def consumer_document_from_dict(doc: Any, *, migration: bool = False) -> ConsumerDocument:
    """Read a ``stickyproof.simulation/1`` document whose scenario is a consumer group, or, for a
    ``migration`` history, a classic or a consumer group (and its ``migration_policy``)."""
    if not isinstance(doc, Mapping):
        raise InvalidScenario("", "a simulation document must be a JSON object")
    keys = _DOC_KEYS + (("migration_policy",) if migration else ())
    for key in doc:
        if key not in keys:
            what = "migration history" if migration else "consumer-group simulation document"
            raise InvalidScenario(key, f"not a field of a {what} ({', '.join(keys)})")
    if doc.get("format") != SIMULATION_FORMAT:
        raise InvalidScenario("format", f"unknown format {doc.get('format')!r} (expected {SIMULATION_FORMAT!r})")
    if "scenario" not in doc:
        raise InvalidScenario("scenario", "a simulation document needs its scenario")
    if migration and isinstance(doc["scenario"], Mapping) and doc["scenario"].get("group_protocol") != "consumer":
        try:
            scenario = scenario_from_dict(doc["scenario"])
        except InvalidScenario as exc:
            raise InvalidScenario(_join("scenario", exc.path), exc.detail) from exc
    else:
        scenario = consumer_scenario_from_dict(doc["scenario"], "scenario")
    config = config_from_dict(doc.get("config"), "config")
    schedule = consumer_events_from_doc(doc.get("events", []), "events", config, migration=migration)
    names = {}
    for key in ("assignor", "coordinator", *(("migration_policy",) if migration else ())):
        names[key] = None if doc.get(key) is None else _str(doc.get(key), key)
    expect = doc.get("expect")
    if expect is not None and not isinstance(expect, Mapping):
        raise InvalidScenario("expect", "must be an object")
    name = doc.get("name", scenario.name)
    if not isinstance(name, str):
        raise InvalidScenario("name", "must be a string")
    return ConsumerDocument(scenario, schedule, names["assignor"], names["coordinator"], name, expect, migration,
                            names.get("migration_policy"))


def consumer_scenario_from_dict(raw: Any, path: str = "scenario") -> Scenario:
    """A consumer-group scenario, its errors prefixed with ``path``; ``"members": []`` is a group
    nobody has joined yet (its members come by the schedule's join events)."""
    try:
        if isinstance(raw, Mapping) and raw.get("members") == []:
            scenario = replace(scenario_from_dict({**raw, "members": [{"id": "-", "topics": []}]}), members=())
        else:
            scenario = scenario_from_dict(raw)
    except InvalidScenario as exc:
        raise InvalidScenario(_join(path, exc.path), exc.detail) from exc
    if not scenario.is_consumer_group:
        raise InvalidScenario(_join(path, "group_protocol"), 'a consumer-group simulation needs "group_protocol": "consumer"')
    return scenario


def _join(path: str, field: str) -> str:
    return f"{path}.{field}" if path and field else path or field
