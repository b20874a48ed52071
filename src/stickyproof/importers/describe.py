"""A scenario from what Kafka's tools show of a live group (``kafka-consumer-groups.sh --describe``
and ``kafka-topics.sh --describe``), with everything they do not show stated as an assumption.

The tools show who the members are and what each holds now. They do not show what the leader of
the next rebalance needs besides: subscriptions, generations, protocol versions, the assignor, the
rebalance protocol, client racks, the JoinGroup order. ``import_describe`` fills each from an option
or a stated default and writes one note per gap. The scenario is the group's *next* rebalance from
where it stands (each member owns what it holds); the assignment is what it holds (or, for a
KIP-848 group with ``target``, the coordinator's target assignment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..errors import InvalidScenario
from ..model import (
    DEFAULT_GENERATION,
    INT32_MAX,
    MAX_VERSION,
    PROTOCOLS,
    Assignment,
    Member,
    Scenario,
    Topic,
    TopicPartition,
    scenario_from_dict,
    scenario_to_dict,
)
from .consumer_groups import DescribedGroup, DescribedMember, read_consumer_groups
from .result import ImportResult, withheld_for_revocation
from .topics import TopicListing, read_topics, replica_racks

__all__ = ["DescribeOptions", "import_describe"]

COOPERATIVE_ASSIGNOR = "cooperative-sticky"


@dataclass(frozen=True)
class DescribeOptions:
    """What the user tells the import that the tools do not show (every field optional).

    ``partitions``: topic -> partition count, over the kafka-topics.sh listing. ``broker_racks``:
    broker id -> rack, to turn each partition's Replicas into replica racks. ``member_racks``:
    member id or client id -> client.rack. ``subscribe``: the topics every member subscribes to;
    ``subscribe_all``: every topic some member holds; neither: the topics each member holds.
    ``target``: write the TARGET-ASSIGNMENT column (Kafka 4.0+, KIP-848 groups) as the assignment.
    """

    group: str | None = None
    partitions: Mapping[str, int] = field(default_factory=dict)
    broker_racks: Mapping[int, str] = field(default_factory=dict)
    member_racks: Mapping[str, str] = field(default_factory=dict)
    assignor: str | None = None
    protocol: str | None = None
    version: int = MAX_VERSION
    generation: int = DEFAULT_GENERATION
    subscribe: tuple[str, ...] | None = None
    subscribe_all: bool = False
    target: bool = False
    name: str | None = None


def import_describe(text: str, topics_text: str | None = None, options: DescribeOptions = DescribeOptions()) -> ImportResult:
    """Scenario (and assignment) of the group in a ``kafka-consumer-groups.sh --describe`` output.

    ``topics_text``: a ``kafka-topics.sh --describe`` output giving the partition counts (or give
    them in ``options.partitions``). Raises ``InvalidScenario`` naming the line and column of
    anything it cannot read, and naming the option for a value it needs and was not given.
    """
    _check_options(options)
    group = read_consumer_groups(text, group=options.group)
    listings = read_topics(topics_text) if topics_text is not None else {}
    notes: list[str] = []
    holdings, targets, ids = _holdings(group, options, listings, notes)
    counts = {name: listing.partitions for name, listing in listings.items()}
    counts.update(options.partitions)

    subscriptions = _subscriptions(ids, holdings, targets, options, notes)
    wanted = list(dict.fromkeys(
        [tp.topic for tps in holdings.values() for tp in tps]
        + [tp.topic for tps in (targets or {}).values() for tp in tps]
        + [t for topics in subscriptions.values() for t in topics]
    ))
    missing = [t for t in wanted if t not in counts]
    if missing:
        raise InvalidScenario(
            "topics",
            f"no partition count for {', '.join(map(repr, missing))}: give the kafka-topics.sh --describe output "
            f"(--topics FILE) or --partitions {missing[0]}=N",
        )
    topics = _topics(wanted, counts, listings, options, notes)
    dropped = [n for n in listings if n not in wanted]
    if dropped:
        many = len(dropped) > 1
        notes.append(f"topics: {len(dropped)} topic{'s' if many else ''} of the kafka-topics.sh output that no member holds "
                     f"or subscribes to {'were' if many else 'was'} left out "
                     f"({', '.join(dropped[:5])}{', ...' if len(dropped) > 5 else ''})")
    past = sorted({str(tp) for tps in holdings.values() for tp in tps if tp.partition >= counts[tp.topic]})
    if past:
        notes.append(f"partitions held past their topic's partition count (the tools' snapshots differ, or the topic "
                     f"shrank): {', '.join(past[:10])}; the check will report them")

    assignor = _assignor(group, options, notes)
    protocol = _protocol(group, assignor, options, notes)
    racks = _member_racks(group.members, ids, options, notes)
    instance = {m.id: m.instance_id for m in group.members}
    members = tuple(
        Member(
            id=mid,
            topics=subscriptions[mid],
            owned=holdings[mid],
            generation=options.generation,
            version=options.version,
            rack=racks.get(mid),
            instance_id=instance.get(mid),
            assignors=(assignor,) if assignor else (),
        )
        for mid in ids
    )
    notes.extend(_fixed_notes(group, options))
    scenario = Scenario(
        topics=topics,
        members=members,
        protocol=protocol,
        name=options.name or f"{group.name or 'group'} (imported from kafka-consumer-groups.sh)",
    )
    scenario = scenario_from_dict(scenario_to_dict(scenario))  # every rule of the format, checked once more
    given = targets if targets is not None else holdings
    revoking = withheld_for_revocation(holdings, given) if protocol == "cooperative" else {}
    assignment = Assignment({mid: given.get(mid, ()) for mid in ids}, revoking)
    return ImportResult(scenario, assignment, tuple(notes), group.name)


# ------------------------------------------------------------------------------------------
# options


def _check_options(o: DescribeOptions) -> None:
    if not 0 <= o.version <= MAX_VERSION:
        raise InvalidScenario("--subscription-version", f"version {o.version} outside 0..{MAX_VERSION}")
    if not -(2**31) <= o.generation <= INT32_MAX:
        raise InvalidScenario("--generation", f"generation {o.generation} outside int32")
    if o.protocol is not None and o.protocol not in PROTOCOLS:
        raise InvalidScenario("--protocol", f"unknown protocol {o.protocol!r} (expected one of {', '.join(PROTOCOLS)})")
    if o.subscribe is not None and o.subscribe_all:
        raise InvalidScenario("--subscribe", "give either --subscribe TOPICS or --subscribe-all, not both")
    for topic, count in o.partitions.items():
        if not 0 <= count <= INT32_MAX:
            raise InvalidScenario("--partitions", f"{topic}={count}: a partition count is 0..{INT32_MAX}")


# ------------------------------------------------------------------------------------------
# who holds what


def _offsets_holdings(group: DescribedGroup) -> tuple[list[str], dict[str, list[TopicPartition]], list[TopicPartition]]:
    order: list[str] = []
    held: dict[str, list[TopicPartition]] = {}
    unowned: list[TopicPartition] = []
    for consumer, tp, _line in group.offsets_rows:
        if consumer == "-":
            if tp is not None:
                unowned.append(tp)
            continue
        if consumer not in held:
            order.append(consumer)
            held[consumer] = []
        if tp is not None:
            held[consumer].append(tp)
    return order, held, unowned


def _holdings(
    group: DescribedGroup, options: DescribeOptions, listings: Mapping[str, TopicListing], notes: list[str]
) -> tuple[dict[str, tuple[TopicPartition, ...]], dict[str, tuple[TopicPartition, ...]] | None, list[str]]:
    """Each member's current partitions, the target assignment when asked for, and the member order."""
    off_order, off_held, unowned = _offsets_holdings(group)
    if group.has_members_table:
        ids = [m.id for m in group.members]
    else:
        ids = off_order
        notes.append("members: read from the offsets table (there is no --members table), which does not show "
                     "group.instance.id: no member is static")
    if not ids:
        who = f"group {group.name!r}" if group.name else "the group"
        raise InvalidScenario("describe", f"{who} has no active members: nothing to import")
    if unowned:
        notes.append(f"partitions with committed offsets but no owner in the offsets table: "
                     f"{', '.join(map(str, unowned[:10]))}{' ...' if len(unowned) > 10 else ''}")
    by_id = {m.id: m for m in group.members}
    holdings: dict[str, tuple[TopicPartition, ...]] = {}
    for mid in ids:
        member = by_id.get(mid)
        if member is None or member.current is None:
            if not group.offsets_rows:
                raise InvalidScenario(
                    f"describe line {member.line}" if member else "describe",
                    "the members table has no ASSIGNMENT column: run kafka-consumer-groups.sh with --members --verbose",
                )
            holdings[mid] = tuple(sorted(off_held.get(mid, ())))
        elif any(topic is None for topic, _ in member.current):
            holdings[mid] = _resolve_topicless(member, off_held if group.offsets_rows else None, options, listings)
        else:
            holdings[mid] = _flatten(member.current)
            if group.offsets_rows and mid in off_held and set(off_held[mid]) != set(holdings[mid]):
                notes.append(f"member {mid}: the offsets table (another moment) shows other partitions than the members "
                             "table; the members table was used")
    if any(any(t is None for t, _ in m.current or ()) for m in group.members):
        notes.append("topic names: Kafka 3.8 and 3.9 print ASSIGNMENT without topic names (restored in 4.0, KAFKA-17750); "
                     + ("they were taken from the offsets table" if group.offsets_rows else "every partition was given to the only topic known"))
    targets = None
    if options.target:
        if not any(m.target is not None for m in group.members):
            raise InvalidScenario("--target", "the output has no TARGET-ASSIGNMENT column (kafka-consumer-groups.sh 4.0+ "
                                  "--members --verbose on a KIP-848 group)")
        targets = {m.id: _flatten(m.target or ()) for m in group.members}
    return holdings, targets, ids


def _flatten(groups: tuple[tuple[str | None, tuple[int, ...]], ...]) -> tuple[TopicPartition, ...]:
    return tuple(sorted(TopicPartition(t, p) for t, ps in groups if t is not None for p in ps))


def _resolve_topicless(
    member: DescribedMember,
    off_held: Mapping[str, list[TopicPartition]] | None,
    options: DescribeOptions,
    listings: Mapping[str, TopicListing],
) -> tuple[TopicPartition, ...]:
    """Topics for a 3.8/3.9 ASSIGNMENT cell: from the offsets table, else the one candidate topic."""
    current = member.current or ()
    numbers = sorted(p for _, ps in current for p in ps)
    if off_held is not None:
        held = tuple(sorted(off_held.get(member.id, ())))
        if numbers != sorted(tp.partition for tp in held):
            raise InvalidScenario(
                f"describe line {member.line}",
                f"member {member.id!r}: ASSIGNMENT lists partitions {numbers} but the offsets table gives it "
                f"{', '.join(map(str, held)) or 'none'} (two moments of a changing group?); describe again",
            )
        return held
    candidates = list(options.subscribe) if options.subscribe else list(dict.fromkeys([*listings, *options.partitions]))
    if len(candidates) == 1 and len(current) <= 1:
        return tuple(TopicPartition(candidates[0], p) for p in numbers)
    raise InvalidScenario(
        f"describe line {member.line}",
        "ASSIGNMENT names no topics (Kafka 3.8 and 3.9 print only partition numbers) and "
        + (f"{len(candidates)} topics are candidates" if candidates else "no topic is known")
        + ": add the default --describe (offsets) table of the group to the input, or give its one topic with --subscribe",
    )


# ------------------------------------------------------------------------------------------
# what the tools do not show


def _subscriptions(
    ids: list[str],
    holdings: Mapping[str, tuple[TopicPartition, ...]],
    targets: Mapping[str, tuple[TopicPartition, ...]] | None,
    options: DescribeOptions,
    notes: list[str],
) -> dict[str, tuple[str, ...]]:
    """Subscriptions are never shown: from ``--subscribe``, ``--subscribe-all``, or what each member holds."""
    held = {mid: tuple(dict.fromkeys(tp.topic for tp in (*holdings[mid], *((targets or {}).get(mid, ()))))) for mid in ids}
    if options.subscribe is not None:
        notes.append(f"subscriptions: not shown by kafka-consumer-groups.sh; every member subscribes to "
                     f"{', '.join(options.subscribe) or 'nothing'} (--subscribe)")
        return {mid: tuple(options.subscribe) for mid in ids}
    if options.subscribe_all:
        every = tuple(sorted({t for topics in held.values() for t in topics}))
        notes.append(f"subscriptions: not shown by kafka-consumer-groups.sh; every member subscribes to every topic the "
                     f"group holds: {', '.join(every) or 'none'} (--subscribe-all)")
        return {mid: every for mid in ids}
    idle = [mid for mid in ids if not held[mid]]
    notes.append(
        "subscriptions: not shown by kafka-consumer-groups.sh (only assignments); each member subscribes to the "
        "topics it holds"
        + (f"; members holding nothing subscribe to nothing ({', '.join(idle[:5])}{' ...' if len(idle) > 5 else ''}): "
           "use --subscribe-all or --subscribe TOPICS if they subscribe to the group's topics" if idle else "")
    )
    return {mid: tuple(sorted(held[mid])) for mid in ids}


def _topics(
    wanted: list[str], counts: Mapping[str, int], listings: Mapping[str, TopicListing], options: DescribeOptions, notes: list[str]
) -> tuple[Topic, ...]:
    sources = [t for t in wanted if t in options.partitions]
    if sources:
        notes.append(f"partition counts of {', '.join(sources)}: from --partitions")
    listed = [t for t in wanted if t in listings and t not in options.partitions]
    if listed:
        notes.append(f"partition counts of {', '.join(listed)}: from the kafka-topics.sh --describe output")
    if not options.broker_racks:
        notes.append("replica racks: unknown (give --broker-rack ID=RACK for each broker, with the kafka-topics.sh "
                     "output, to read them from the Replicas column); no topic has racks")
        return tuple(Topic(t, counts[t]) for t in sorted(wanted))
    topics = []
    rackless: set[int] = set()
    for t in sorted(wanted):
        if t not in listings:
            raise InvalidScenario("--broker-rack", f"topic {t!r} is not in the kafka-topics.sh output, so its replicas "
                                  "(and their racks) are unknown")
        if t in options.partitions and options.partitions[t] != listings[t].partitions:
            raise InvalidScenario("--partitions", f"{t}={options.partitions[t]} disagrees with the kafka-topics.sh "
                                  f"output ({listings[t].partitions}) whose replica lines give the racks")
        racks, missing = replica_racks(listings[t], options.broker_racks)
        rackless.update(missing)
        topics.append(Topic(t, counts[t], racks))
    notes.append("replica racks: each partition's Replicas (kafka-topics.sh) mapped through --broker-rack"
                 + (f"; broker{'s' if len(rackless) > 1 else ''} {', '.join(map(str, sorted(rackless)))} "
                    f"{'have' if len(rackless) > 1 else 'has'} no rack given and count{'' if len(rackless) > 1 else 's'} "
                    "as rackless (as Kafka's Node.rack() null)" if rackless else ""))
    return tuple(topics)


def _assignor(group: DescribedGroup, options: DescribeOptions, notes: list[str]) -> str | None:
    if options.assignor:
        if group.strategy and group.strategy != options.assignor:
            notes.append(f"assignor: {options.assignor} (--assignor), although --state shows {group.strategy}")
        else:
            notes.append(f"assignor: {options.assignor} (--assignor); each member offers only it")
        return options.assignor
    if group.strategy and not group.kip848:
        notes.append(f"assignor: {group.strategy} (ASSIGNMENT-STRATEGY of the --state table); each member offers only it")
        return group.strategy
    if group.kip848 and group.strategy:
        notes.append(f"assignor: the group uses the broker-side assignor {group.strategy!r} (KIP-848), which is not a "
                     "client assignor; none is named (pass --assignor to grade a client assignor on this group)")
        return None
    notes.append("assignor: not shown by --members (see ASSIGNMENT-STRATEGY of --describe --state); none is named, "
                 "so the group cannot vote: pass --assignor NAME, or name one to grade/assign")
    return None


def _protocol(group: DescribedGroup, assignor: str | None, options: DescribeOptions, notes: list[str]) -> str:
    if options.protocol:
        notes.append(f"rebalance protocol: {options.protocol} (--protocol)")
        return options.protocol
    if group.kip848:
        notes.append("rebalance protocol: eager assumed: a KIP-848 group's coordinator revokes before it assigns, "
                     "so no cooperative withholding is expected of the assignment")
        return "eager"
    if assignor == COOPERATIVE_ASSIGNOR:
        notes.append("rebalance protocol: cooperative, assumed because the assignor is cooperative-sticky (a consumer "
                     "runs COOPERATIVE when every assignor it configures supports it, docs/rules.md R36); pass "
                     "--protocol eager if the members also configure an eager-only assignor such as range")
        return "cooperative"
    notes.append("rebalance protocol: eager (the only one range, roundrobin and sticky support); pass --protocol to change it")
    return "eager"


def _member_racks(
    described: tuple[DescribedMember, ...], ids: list[str], options: DescribeOptions, notes: list[str]
) -> dict[str, str]:
    if not options.member_racks:
        notes.append("member racks: client.rack is not shown; no member has a rack (give --member-rack ID=RACK)")
        return {}
    by_client: dict[str, list[str]] = {}
    for m in described:
        by_client.setdefault(m.client_id, []).append(m.id)
    racks: dict[str, str] = {}
    for key, rack in options.member_racks.items():
        targets = [key] if key in ids else by_client.get(key, [])
        if not targets:
            raise InvalidScenario("--member-rack", f"{key}={rack}: no member has that member id or client id")
        for mid in targets:
            racks[mid] = rack
    notes.append(f"member racks: from --member-rack for {len(racks)} of {len(ids)} members; the others have none")
    return racks


def _fixed_notes(group: DescribedGroup, options: DescribeOptions) -> list[str]:
    notes = [
        f"generation: not shown by kafka-consumer-groups.sh; every member's is {options.generation}"
        + (" (unknown)" if options.generation == DEFAULT_GENERATION else " (--generation)"),
        f"protocol version: not shown; every member speaks ConsumerProtocolSubscription v{options.version}"
        + (" (the newest; --subscription-version to change)" if options.version == MAX_VERSION else " (--subscription-version)"),
        "owned partitions: each member owns what the tool shows it holding (its current assignment): the scenario "
        "is the next rebalance from the group as it stands",
        "member order: as the tool lists them; the JoinGroup order the leader saw is not shown (it decides the sticky "
        "assignors' member iteration order, docs/rules.md 0.3)",
        "assignment: " + ("the TARGET-ASSIGNMENT column (--target)" if options.target
                          else "what each member holds now (the ASSIGNMENT column)"),
    ]
    if group.kip848:
        notes.append("KIP-848 group: member epochs (CURRENT-EPOCH) are not classic generations and were not used")
    if group.state and group.state != "Stable":
        notes.append(f"group state: {group.state} when described (--state): the assignment may be mid-change")
    if any("rebalancing" in m.text for m in group.messages):
        notes.append("the tool warned the group was rebalancing: the assignment may be mid-change")
    return notes
