"""Event schedules: what happens to a group and when (models/protocol.md §6).

An events file is a JSON list of events or ``{"format": "stickyproof.events/1", "config": {...},
"events": [...]}``; a ``stickyproof.simulation/1`` document bundles a scenario with its schedule
(the shape of ``tests/regressions/simulations/``). Every reader error is an ``InvalidScenario``
naming the JSON path (``events[2].ticks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidScenario
from ..model import MAX_VERSION, Scenario, parse_json, scenario_from_dict
from .config import FEATURES, PROTOCOL_SETTINGS, GroupConfig, config_from_dict

__all__ = [
    "Event",
    "EVENT_KINDS",
    "EVENTS_FORMAT",
    "SIMULATION_FORMAT",
    "Schedule",
    "SimulationDocument",
    "event_from_dict",
    "event_to_dict",
    "events_from_doc",
    "check_horizon",
    "MAX_TICKS",
    "load_events",
    "simulation_from_dict",
    "simulation_to_dict",
]

EVENTS_FORMAT = "stickyproof.events/1"
SIMULATION_FORMAT = "stickyproof.simulation/1"

CALLBACKS = ("revoked", "assigned", "lost")

# kind -> (required fields, optional fields)
_CONFIG_FIELDS = ("topics", "assignors", "version", "rack", "instance_id", "protocol")
EVENT_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "join": (("member", "topics"), ("assignors", "version", "rack", "instance_id", "protocol")),
    "leave": (("member",), ()),
    "crash": (("member",), ()),
    "stall": (("member", "ticks"), ("at_join_prepare",)),
    "subscribe": (("member", "topics"), ()),
    "add-partitions": (("topic", "count"), ("racks",)),
    "delete-topic": (("topic",), ()),
    "restart": (("member",), _CONFIG_FIELDS),
    "upgrade": (("member",), _CONFIG_FIELDS),
    "rolling-restart": ((), ("members", "gap") + _CONFIG_FIELDS),
    "failover": ((), ("persisted",)),
    "listener-error": (("member", "callback"), ("times",)),
}


@dataclass(frozen=True)
class Event:
    """One scheduled event. Only the fields of its kind are set (see ``EVENT_KINDS``)."""

    at: int
    event: str
    member: str | None = None
    topics: tuple[str, ...] | None = None
    assignors: tuple[str, ...] | None = None
    version: int | None = None
    rack: str | None = None
    instance_id: str | None = None
    protocol: str | None = None
    ticks: int | None = None
    at_join_prepare: bool = False
    topic: str | None = None
    count: int | None = None
    persisted: bool = True
    callback: str | None = None
    times: int = 1
    members: tuple[str, ...] | None = None
    gap: int = 20
    #: add-partitions: the replica racks of each new partition (absent: no rack known)
    racks: tuple[tuple[str, ...], ...] | None = None
    # which config fields the event sets explicitly (rack/instance_id may be set to null)
    given: frozenset[str] = field(default=frozenset(), compare=False)
    path: str = field(default="", compare=False)  # where the event was read from, for error messages

    def describe(self) -> str:
        """One line for the trace table."""
        k = self.event
        if k == "join":
            return f"{self.member} joins ({', '.join(self.topics or ())})"
        if k in ("leave", "crash"):
            return f"{self.member} {'leaves' if k == 'leave' else 'crashes'}"
        if k == "stall":
            when = " after its next join prepare" if self.at_join_prepare else ""
            return f"{self.member} stalls {self.ticks} ticks{when}"
        if k == "subscribe":
            return f"{self.member} subscribes to {', '.join(self.topics or ()) or 'nothing'}"
        if k == "add-partitions":
            return f"{self.count} partitions added to {self.topic}"
        if k == "delete-topic":
            return f"topic {self.topic} deleted"
        if k in ("restart", "upgrade"):
            changes = _config_changes(self)
            return f"{self.member} {'restarts' if k == 'restart' else 'upgrades'}{' (' + changes + ')' if changes else ''}"
        if k == "rolling-restart":
            changes = _config_changes(self)
            who = ", ".join(self.members) if self.members else "every member"
            return f"rolling restart of {who}, {self.gap} ticks apart{' (' + changes + ')' if changes else ''}"
        if k == "failover":
            return f"coordinator fail-over ({'persisted' if self.persisted else 'non-persisted'} group state)"
        if k == "listener-error":
            return f"{self.member}: next {self.times} onPartitions{self.callback.capitalize()} call(s) will throw"
        return k  # pragma: no cover - every kind is listed above


def _config_changes(e: Event) -> str:
    parts = []
    for name in _CONFIG_FIELDS:
        if name in e.given:
            value = getattr(e, name)
            if isinstance(value, tuple):
                value = "[" + ", ".join(value) + "]"
            parts.append(f"{name}={value}")
    return ", ".join(parts)


# ------------------------------------------------------------------------------------------
# Reading


def _int(value: Any, path: str, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InvalidScenario(path, f"must be an integer >= {minimum}, got {value!r}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidScenario(path, f"must be a non-empty string, got {value!r}")
    return value


def _str_list(value: Any, path: str, *, allow_empty: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InvalidScenario(path, f"must be an array of strings, got {value!r}")
    out = tuple(_str(v, f"{path}[{i}]") for i, v in enumerate(value))
    if not allow_empty and not out:
        raise InvalidScenario(path, "must not be empty")
    if len(set(out)) != len(out):
        raise InvalidScenario(path, "lists a name twice")
    return out


def event_from_dict(doc: Any, path: str = "event") -> Event:
    """Read one event, checking its kind's required and allowed fields."""
    if not isinstance(doc, Mapping):
        raise InvalidScenario(path, "must be an object with 'at' and 'event'")
    kind = doc.get("event")
    if kind not in EVENT_KINDS:
        raise InvalidScenario(f"{path}.event", f"unknown event {kind!r} (known: {', '.join(EVENT_KINDS)})")
    required, optional = EVENT_KINDS[kind]
    allowed = {"at", "event", *required, *optional}
    for key in doc:
        if key not in allowed:
            raise InvalidScenario(f"{path}.{key}", f"not a field of a {kind} event (allowed: {', '.join(sorted(allowed))})")
    for key in ("at", *required):
        if key not in doc:
            raise InvalidScenario(f"{path}.{key}", f"a {kind} event needs it")
    values: dict[str, Any] = {"at": _int(doc["at"], f"{path}.at", 0), "event": kind}
    given = set()
    for key, raw in doc.items():
        if key in ("at", "event"):
            continue
        where = f"{path}.{key}"
        given.add(key)
        if key in ("member", "topic"):
            values[key] = _str(raw, where)
        elif key in ("topics", "members"):
            values[key] = _str_list(raw, where)
        elif key == "assignors":
            values[key] = _str_list(raw, where, allow_empty=False)
        elif key == "version":
            values[key] = _int(raw, where, 0)
            if values[key] > MAX_VERSION:
                raise InvalidScenario(where, f"subscription versions are 0..{MAX_VERSION}, got {raw!r}")
        elif key in ("rack", "instance_id"):
            values[key] = None if raw is None else _str(raw, where)
        elif key == "protocol":
            # null clears a pin: the protocol the assignors give (R36), as after KIP-429's second bounce
            if raw is not None and raw not in PROTOCOL_SETTINGS:
                raise InvalidScenario(where, f"must be one of {', '.join(PROTOCOL_SETTINGS)} or null, got {raw!r}")
            values[key] = raw
        elif key in ("ticks", "count", "times", "gap"):
            values[key] = _int(raw, where, 1)
        elif key in ("at_join_prepare", "persisted"):
            if not isinstance(raw, bool):
                raise InvalidScenario(where, f"must be true or false, got {raw!r}")
            values[key] = raw
        elif key == "callback":
            if raw not in CALLBACKS:
                raise InvalidScenario(where, f"must be one of {', '.join(CALLBACKS)}, got {raw!r}")
            values[key] = raw
        elif key == "racks":
            if not isinstance(raw, list):
                raise InvalidScenario(where, f"must be an array (one list of replica racks per new partition), got {raw!r}")
            values[key] = tuple(_str_list(r, f"{where}[{i}]") for i, r in enumerate(raw))
    if values.get("racks") is not None and len(values["racks"]) != values.get("count"):
        raise InvalidScenario(f"{path}.racks", f"lists {len(values['racks'])} partitions' racks, count is {values.get('count')}")
    return Event(**values, given=frozenset(given), path=path)


def event_to_dict(e: Event) -> dict[str, Any]:
    """The event as written in an events file (only its kind's fields, the defaults left out)."""
    required, optional = EVENT_KINDS[e.event]
    out: dict[str, Any] = {"at": e.at, "event": e.event}
    for key in required + optional:
        if key in required or key in e.given:
            value = getattr(e, key)
            if key == "racks" and value is not None:
                value = [list(r) for r in value]
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True)
class Schedule:
    """An events document: the events in run order and the timing overrides."""

    events: tuple[Event, ...]
    config: GroupConfig = GroupConfig()


def events_from_doc(doc: Any, path: str = "events", base: GroupConfig | None = None) -> Schedule:
    """Read a bare list of events or an ``stickyproof.events/1`` object."""
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
    events = [event_from_dict(e, f"{prefix}[{i}]") for i, e in enumerate(doc)]
    ordered = tuple(e for _, e in sorted(enumerate(events), key=lambda pair: (pair[1].at, pair[0])))
    schedule = Schedule(ordered, config)
    check_horizon(schedule)
    return schedule


#: The longest simulation a schedule may ask for (``config.max_ticks``): the simulator steps every tick,
#: a few thousand a second, so 100,000 ticks (a group's life of days at one heartbeat a tick) runs in
#: under a minute, and a ``max_ticks`` of 2^31 cannot hang ``simulate`` (docs/limits.md).
MAX_TICKS = 100_000


def check_horizon(schedule: Schedule, members: tuple[str, ...] = ()) -> None:
    """Refuse an event the simulation would never reach (issue 14: it was silently dropped and the
    output said every monitor held). The simulator stops at ``config.max_ticks``, so an event runs only
    when scheduled before it; a rolling restart's last restart is ``at + (n - 1) * gap`` over its
    ``members`` (or, listing none, the group's ``members`` when known). A ``max_ticks`` over
    ``MAX_TICKS`` is refused too."""
    horizon = schedule.config.max_ticks
    if horizon > MAX_TICKS:
        raise InvalidScenario("config.max_ticks", f"{horizon:,} ticks, more than the simulator's limit of {MAX_TICKS:,} "
                              "(docs/limits.md)")
    for e in schedule.events:
        last, what = e.at, f"at tick {e.at}"
        if e.event == "rolling-restart":
            n = len(e.members) if e.members else len(members)
            if n > 1:
                last, what = e.at + (n - 1) * e.gap, f"its last restart at tick {e.at + (n - 1) * e.gap}"
        if last >= horizon:
            raise InvalidScenario(
                f"{e.path}.at" if e.path else "at",
                f"{e.describe()} is scheduled {what}, at or past the simulation's end (config.max_ticks = {horizon}): "
                "it would never run; move it earlier or raise config.max_ticks",
            )


def load_events(path: str | Path, base: GroupConfig | None = None) -> Schedule:
    """Read an events file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidScenario("", f"{path}: cannot read ({exc.strerror or exc})") from exc
    return events_from_doc(parse_json(data, str(path)), "events", base)


# ------------------------------------------------------------------------------------------
# Simulation documents (a scenario with its schedule, and an expectation for regressions)


@dataclass(frozen=True)
class SimulationDocument:
    scenario: Scenario
    schedule: Schedule
    without: frozenset[str] = frozenset()
    assignor: str | None = None
    name: str = ""
    expect: Mapping[str, Any] | None = None


_SIM_KEYS = ("format", "name", "scenario", "events", "config", "without", "assignor", "expect")


def simulation_from_dict(doc: Any) -> SimulationDocument:
    if not isinstance(doc, Mapping):
        raise InvalidScenario("", "a simulation document must be a JSON object")
    for key in doc:
        if key not in _SIM_KEYS:
            raise InvalidScenario(key, f"not a field of a simulation document ({', '.join(_SIM_KEYS)})")
    if doc.get("format") != SIMULATION_FORMAT:
        raise InvalidScenario("format", f"unknown format {doc.get('format')!r} (expected {SIMULATION_FORMAT!r})")
    if "scenario" not in doc:
        raise InvalidScenario("scenario", "a simulation document needs its scenario")
    try:
        raw = doc["scenario"]
        if isinstance(raw, Mapping) and raw.get("members") == [] and doc.get("events"):
            # A drawn history starts with nobody: its members join by its events (models/protocol.md §9),
            # so the R14 rule of a leader's input does not apply to its starting cluster.
            from dataclasses import replace as _replace

            scenario = _replace(scenario_from_dict({**raw, "members": [{"id": "-", "topics": []}]}), members=())
        else:
            scenario = scenario_from_dict(raw)
    except InvalidScenario as exc:
        raise InvalidScenario(f"scenario.{exc.path}" if exc.path else "scenario", exc.detail) from exc
    config = config_from_dict(doc.get("config"), "config")
    schedule = events_from_doc(doc.get("events", []), "events", config)
    without_raw = doc.get("without", [])
    without = _str_list(without_raw, "without")
    for i, name in enumerate(without):
        if name not in FEATURES:
            raise InvalidScenario(f"without[{i}]", f"unknown feature {name!r} (known: {', '.join(FEATURES)})")
    assignor = doc.get("assignor")
    if assignor is not None:
        assignor = _str(assignor, "assignor")
    expect = doc.get("expect")
    if expect is not None and not isinstance(expect, Mapping):
        raise InvalidScenario("expect", "must be an object")
    name = doc.get("name", scenario.name)
    if not isinstance(name, str):
        raise InvalidScenario("name", "must be a string")
    return SimulationDocument(scenario, schedule, frozenset(without), assignor, name, expect)


def simulation_to_dict(
    scenario_doc: Mapping[str, Any],
    events: tuple[Event, ...],
    *,
    name: str = "",
    config: GroupConfig | None = None,
    without: frozenset[str] | tuple[str, ...] = (),
    assignor: str | None = None,
    expect: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A simulation document (what a shrunk Hypothesis failure is saved as)."""
    doc: dict[str, Any] = {"format": SIMULATION_FORMAT, "name": name, "scenario": dict(scenario_doc)}
    if config is not None and config != GroupConfig():
        defaults = GroupConfig()
        doc["config"] = {f: getattr(config, f) for f in config.__dataclass_fields__ if getattr(config, f) != getattr(defaults, f)}
    doc["events"] = [event_to_dict(e) for e in events]
    if without:
        doc["without"] = [f for f in FEATURES if f in set(without)]
    if assignor:
        doc["assignor"] = assignor
    if expect is not None:
        doc["expect"] = dict(expect)
    return doc
