"""One look at a group for ``explain``: a ``kafka-consumer-groups.sh --describe`` output, a
capture or a scenario, read into the members, metadata and what each member holds.

    read_snapshot(data, source, options) -> Snapshot
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InvalidScenario, StickyproofError
from ..model import Scenario, TopicPartition, parse_json, scenario_from_dict

__all__ = ["SnapshotOptions", "Snapshot", "read_snapshot"]


@dataclass(frozen=True)
class SnapshotOptions:
    """What the user tells the reading of a describe output that the tools do not show.

    ``topics_text``: a ``kafka-topics.sh --describe`` output (partition counts, replicas);
    ``partitions``: topic -> partition count over it. Without either, a topic's count is taken as
    one more than the highest partition either side shows held (said in the notes). ``subscribe``:
    the topics every member subscribes to (default: every topic the group holds, the common case;
    the importer's own default, the topics each member holds, would make every member that lost a
    topic's last partition look unsubscribed). ``target``: read TARGET-ASSIGNMENT (Kafka 4.0+,
    consumer-protocol groups) instead of what members hold now. ``assignor``: the group's assignor,
    when the input does not show it (it decides the balance promise the optimum keeps).
    ``protocol``: the rebalance protocol, when the input does not show it (the importer's default
    otherwise).
    """

    group: str | None = None
    topics_text: str | None = None
    partitions: Mapping[str, int] = field(default_factory=dict)
    broker_racks: Mapping[int, str] = field(default_factory=dict)
    member_racks: Mapping[str, str] = field(default_factory=dict)
    subscribe: tuple[str, ...] | None = None
    target: bool = False
    assignor: str | None = None
    protocol: str | None = None


@dataclass(frozen=True)
class Snapshot:
    """One look at the group.

    ``scenario``: its members (subscriptions, racks, instance ids) and metadata; ``held``: what each
    member holds in this look; ``leader_input``: for a capture, the group as its leader saw it
    (JoinGroup claims and generations), else None; ``clients``: member -> (client id, host) where
    the input shows them; ``assignor``: the assignor the input names, if any.
    """

    source: str
    kind: str
    group: str | None
    scenario: Scenario
    held: Mapping[str, tuple[TopicPartition, ...]]
    leader_input: Scenario | None = None
    clients: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    assignor: str | None = None
    state: str | None = None
    kip848: bool = False
    notes: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------------
# Reading one side


def read_snapshot(data: str | bytes, source: str, options: SnapshotOptions = SnapshotOptions(),
                  *, others: tuple[str, ...] = ()) -> Snapshot:
    """One side from its text: a JSON document (a ``stickyproof.capture/1`` capture, or a scenario,
    whose members hold what they own) or a ``kafka-consumer-groups.sh --describe`` output.

    ``others``: the other side's text, when it is a describe output too, so that a partition count
    inferred from what is held sees both. Every error names ``source`` and the line or field.
    """
    try:
        return _read(data, source, options, others)
    except InvalidScenario as exc:
        raise InvalidScenario(f"{source}: {exc.path}" if exc.path else source, exc.detail) from None
    except StickyproofError as exc:  # a capture's bytes that do not decode (DecodeError names member and offset)
        raise InvalidScenario(source, str(exc)) from None


def _read(data: str | bytes, source: str, options: SnapshotOptions, others: tuple[str, ...]) -> Snapshot:
    text = data.decode("utf-8-sig") if isinstance(data, (bytes, bytearray)) else data
    if text.lstrip().startswith("{"):
        doc = parse_json(text, source)
        if isinstance(doc, dict) and doc.get("format") == "stickyproof.capture/1":
            return _from_capture(doc, source)
        return _from_scenario(doc, source)
    return _from_describe(text, source, options, others)


def _from_capture(doc: Any, source: str) -> Snapshot:
    from . import import_capture

    r = import_capture(doc)
    if r.assignment is None:
        raise InvalidScenario("members", "the capture holds no SyncGroup assignments: it shows what members claimed, "
                              "not what they were given")
    held = {m.id: tuple(sorted(r.assignment.assignment.get(m.id, ()))) for m in r.scenario.members}
    assignor = next((m.assignors[0] for m in r.scenario.members if m.assignors), None)
    return Snapshot(source, "capture", r.group, r.scenario, held, leader_input=r.scenario, assignor=assignor,
                    notes=tuple(r.notes))


def _from_scenario(doc: Any, source: str) -> Snapshot:
    scenario = scenario_from_dict(doc)
    held = {m.id: tuple(sorted(m.owned)) for m in scenario.members}
    assignor = next((m.assignors[0] for m in scenario.members if m.assignors), None)
    return Snapshot(source, "scenario", None, scenario, held, assignor=assignor,
                    notes=("a scenario: each member holds what it owns",))


def _from_describe(text: str, source: str, options: SnapshotOptions, others: tuple[str, ...]) -> Snapshot:
    from . import DescribeOptions, import_describe
    from .consumer_groups import read_consumer_groups
    from .topics import read_topics

    group = read_consumer_groups(text, group=options.group)
    listed = read_topics(options.topics_text) if options.topics_text is not None else {}
    inferred: dict[str, int] = {}
    for t in (text, *others):
        try:
            g = group if t is text else read_consumer_groups(t, group=options.group)
        except StickyproofError:
            continue  # the other side's own errors are reported when it is read
        for topic, p in _shown(g):
            if topic not in listed and topic not in options.partitions:
                inferred[topic] = max(inferred.get(topic, 0), p + 1)
    r = import_describe(text, options.topics_text, DescribeOptions(
        group=options.group,
        partitions={**inferred, **options.partitions},
        broker_racks=options.broker_racks,
        member_racks=options.member_racks,
        assignor=options.assignor,
        protocol=options.protocol,
        subscribe=options.subscribe,
        subscribe_all=options.subscribe is None,
        target=options.target,
    ))
    # What explain decides itself (who owns what, the assignor) is said once in explain's own notes.
    own = ("owned partitions:", "assignment:", "assignor:", "member order:")
    notes = [n for n in r.notes if not n.startswith(own)
             and not (n.startswith("partition counts of") and n.endswith("from --partitions")
                      and all(t.strip() in inferred for t in n[len("partition counts of "):-len(": from --partitions")].split(",")))]
    # explain subscribes every member to the group's topics unless --subscribe names them (the
    # importer's note names its own flag for that)
    notes = [n.replace("(--subscribe-all)", "(explain's default; --subscribe TOPICS names them)")
             .replace("; --subscription-version to change)", ")") for n in notes]
    if inferred:
        notes.insert(0, "partition counts of " + ", ".join(f"{t}={n}" for t, n in sorted(inferred.items()))
                     + ": one more than the highest partition held in either output (give --topics or --partitions "
                     "if a partition was unowned in both)")
    assert r.assignment is not None  # a describe import always shows what members hold
    held = {m.id: tuple(sorted(r.assignment.assignment.get(m.id, ()))) for m in r.scenario.members}
    clients = {m.id: (m.client_id, m.host) for m in group.members}
    return Snapshot(source, "describe", r.group, r.scenario, held, clients=clients,
                    assignor=options.assignor or group.strategy, state=group.state, kip848=group.kip848,
                    notes=tuple(notes))


def _shown(group: Any) -> list[tuple[str, int]]:
    """Every (topic, partition) a describe output shows held (current and target), topics known."""
    out = [(t, p) for m in group.members for cell in (m.current or (), m.target or ()) for t, ps in cell
           if t is not None for p in ps]
    out += [(tp.topic, tp.partition) for _, tp, _ in group.offsets_rows if tp is not None]
    return out
