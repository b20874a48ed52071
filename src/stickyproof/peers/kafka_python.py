"""kafka-python's assignors (``kafka-python:range|roundrobin|sticky|cooperative-sticky``), in process.

Each call runs kafka-python's own leader code path (``ConsumerCoordinator._perform_assignment``)
on the group stickyproof's leader decoded:

1. its cluster metadata object (``kafka.cluster.ClusterMetadata``), filled from a
   ``MetadataResponse`` holding the leader's metadata (one broker per replica rack);
2. each member's JoinGroup metadata as a kafka-python member in that state sends it: a
   ``ConsumerProtocolSubscription`` written by kafka-python's encoder at the member's version
   (topics, owned partitions, generation, rack), with that assignor's own user data — for
   ``sticky``, kafka-python's ``StickyAssignorUserData`` of the member's previous assignment and
   generation (attributed as Kafka's sticky assignor attributes them, R1; read from the Java user
   data the leader received, or the scenario's fields in direct mode);
3. those bytes decoded by kafka-python (``ConsumerProtocolSubscription.decode``) into
   ``JoinGroupResponseMember`` objects in JoinGroup order, and the assignor's
   ``assign(cluster, members)``;
4. each member's ``ConsumerProtocolAssignment`` encoded by kafka-python and read back by
   stickyproof's codec (``wire.decode_assignment``), as a Java member reads its SyncGroup bytes.

So the group is a kafka-python group end to end, its codecs included. ``kafka-python:<name>+java``
is the mixed group instead: a kafka-python leader among Java members, handed the bytes each Java
member of that version sends (``Subscription.raw``, the leader's raw wire mode) and decoding them
with kafka-python's own decoders. Where kafka-python cannot read them it only logs and drops the
member's history (its sticky user data carries a 2-byte version header Java's does not); that
logged exception is raised as the assignor's failure, so the incompatibility is graded, not hidden. Whatever kafka-python
raises on the way is the assignor's failure (``AssignorFailure``, ``kafka_exception`` = the
exception's type); assignment bytes a Java member cannot read, or an assignment for a member the
group does not have, are ``AssignorGarbage``. kafka-python 3.x is required (``pip install
'stickyproof[peers]'``); it is imported on first use only.
"""

from __future__ import annotations

from typing import Any

from ..assignors.base import COOPERATIVE, EAGER, GroupSubscription, Subscription
from ..assignors.registry import AssignorInfo, led_as
from ..errors import AssignorFailure, AssignorGarbage, DecodeError, UnknownAssignor
from ..model import Assignment
from ..wire import decode_assignment

__all__ = ["NAMES", "kafka_python_assignor", "kafka_python_version", "resolve"]

NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")
MIN_VERSION = (3, 0)
INSTALL = "pip install 'stickyproof[peers]' (kafka-python>=3.0)"


def kafka_python_version() -> tuple[int, ...] | None:
    """The installed kafka-python's version, or None when it is not installed."""
    try:
        import kafka
    except ImportError:
        return None
    parts = []
    for piece in str(getattr(kafka, "__version__", "0")).split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _assignor_class(name: str) -> Any:
    if name == "range":
        from kafka.coordinator.assignors.range import RangePartitionAssignor

        return RangePartitionAssignor
    if name == "roundrobin":
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        return RoundRobinPartitionAssignor
    if name == "sticky":
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

        return StickyPartitionAssignor
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor

    return CooperativeStickyAssignor


def resolve(rest: str) -> AssignorInfo:
    """``kafka-python:REST`` (``stickyproof.lookup``'s entry to this adapter)."""
    return kafka_python_assignor(rest)


def kafka_python_assignor(name: str) -> AssignorInfo:
    """``kafka-python:<name>`` (or ``<name>+java``, Java members); ``UnknownAssignor`` for another name
    or a missing/too old kafka-python."""
    java_members = name.endswith("+java")
    name = name.removesuffix("+java")
    if name not in NAMES:
        raise UnknownAssignor(f"kafka-python:{name}: unknown; kafka-python has {', '.join(NAMES)}")
    version = kafka_python_version()
    if version is None:
        raise UnknownAssignor(f"kafka-python:{name} needs kafka-python: {INSTALL}")
    if version < MIN_VERSION:
        raise UnknownAssignor(f"kafka-python:{name}: kafka-python {'.'.join(map(str, version))} is installed; {INSTALL}")
    cls = _assignor_class(name)
    instance = cls()
    supported = {p.name.lower() for p in instance.supported_protocols()}
    protocols = tuple(p for p in (COOPERATIVE, EAGER) if p in supported)
    doc = (cls.__doc__ or "").strip().splitlines()
    suffix = "+java" if java_members else ""
    return led_as(
        instance.name,
        name=f"kafka-python:{name}{suffix}",
        protocols=protocols,
        fn=_KafkaPythonFn(name, cls, java_members=java_members),
        description=f"kafka-python {'.'.join(map(str, version))} {cls.__name__}" + (f": {doc[0]}" if doc else ""),
    )


class _KafkaPythonFn:
    """``GroupSubscription -> Assignment`` through kafka-python's leader path (module docstring)."""

    def __init__(self, name: str, cls: Any, *, java_members: bool = False):
        self.name = name
        self.cls = cls
        self.java_members = java_members
        self.__name__ = self.__qualname__ = f"kafka-python[{name}{'+java' if java_members else ''}]"

    def __call__(self, group: GroupSubscription) -> Assignment:
        who = f"kafka-python:{self.name}{'+java' if self.java_members else ''}"
        with _logged_exceptions() as logged:
            try:
                members = [self._join_member(s, group.direct) for s in group.members]
                cluster = _cluster(group)
                assignor = self.cls()  # a fresh instance: kafka-python's sticky assignors keep state between calls
                result = assignor.assign(cluster, members)
                encoded = {member_id: assignment.encode() for member_id, assignment in result.items()}
            except Exception as exc:  # kafka-python's own throw (or its codec's) is the assignor's graded failure
                raise AssignorFailure(f"{exc} (raised by {who})", kafka_exception=type(exc).__name__) from exc
        if logged:
            message, exc_type = logged[0]
            raise AssignorFailure(
                f"{who} could not read what its members sent and went on without it: {message} "
                f"(kafka-python logged {exc_type} and dropped that member's previous assignment)",
                kafka_exception=exc_type,
            )
        return _read_assignments(encoded, [s.member_id for s in group.members], who)

    def _join_member(self, s: Subscription, direct: bool) -> Any:
        from kafka.protocol.consumer.group import JoinGroupResponse
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

        if self.java_members and s.raw is not None:
            # A Java member's bytes, decoded by kafka-python as its leader would (_perform_assignment).
            return JoinGroupResponse.JoinGroupResponseMember(
                member_id=s.member_id, group_instance_id=s.instance_id, metadata=ConsumerProtocolSubscription.decode(s.raw)
            )

        sub_tp = ConsumerProtocolSubscription.TopicPartition
        owned: dict[str, list[int]] = {}
        for topic, partition in s.owned:
            owned.setdefault(topic, []).append(partition)
        version = min(s.version, ConsumerProtocolSubscription.max_version)
        subscription = ConsumerProtocolSubscription(
            version=version,
            topics=list(s.topics),
            user_data=self._user_data(s, direct),
            owned_partitions=[sub_tp(topic=t, partitions=ps, version=version) for t, ps in owned.items()],
            generation_id=-1 if s.generation is None else s.generation,
            rack_id=s.rack,
        )
        raw = subscription.encode()
        # The leader's side: kafka-python decodes what the member sent (_perform_assignment).
        return JoinGroupResponse.JoinGroupResponseMember(
            member_id=s.member_id, group_instance_id=s.instance_id, metadata=ConsumerProtocolSubscription.decode(raw)
        )

    def _user_data(self, s: Subscription, direct: bool) -> Any:
        """What kafka-python's assignor puts in ``user_data`` for a member in this state."""
        if self.name != "sticky":
            return b""
        from kafka.structs import TopicPartition as KafkaTopicPartition

        from ..assignors.registry import member_data_for

        data = member_data_for("sticky")(s, direct=direct)
        if not data.partitions and data.generation is None:
            return b""  # no assignment yet: kafka-python's member sends empty user data
        previous = [KafkaTopicPartition(tp.topic, tp.partition) for tp in data.partitions]
        generation = -1 if data.generation is None else data.generation
        return self.cls._metadata(list(s.topics), previous, generation).user_data


class _logged_exceptions:
    """Collects the exceptions kafka-python catches and only logs while assigning (``log.exception``:
    "Could not parse member data"), as (message, exception type name)."""

    def __enter__(self) -> list[tuple[str, str]]:
        import logging

        self.found: list[tuple[str, str]] = []
        found = self.found

        class _Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.exc_info and record.exc_info[1] is not None:
                    exc = record.exc_info[1]
                    found.append((f"{record.getMessage()}: {exc}", type(exc).__name__))

        self.logger = logging.getLogger("kafka.coordinator.assignors")
        self.handler = _Collect(level=logging.ERROR)
        self.logger.addHandler(self.handler)
        return found

    def __exit__(self, *exc: Any) -> None:
        self.logger.removeHandler(self.handler)


def _cluster(group: GroupSubscription) -> Any:
    """kafka-python's ``ClusterMetadata`` holding the leader's metadata (every topic it knows)."""
    from kafka.cluster import ClusterMetadata
    from kafka.protocol.metadata import MetadataResponse

    v = 1
    broker_cls = MetadataResponse.MetadataResponseBroker
    topic_cls = MetadataResponse.MetadataResponseTopic
    partition_cls = topic_cls.MetadataResponsePartition
    racks = sorted({r for t in group.metadata.values() for rs in (t.racks or ()) for r in rs})
    node = {rack: i for i, rack in enumerate(racks)}
    brokers = [broker_cls(node_id=i, host=f"broker-{i}", port=9092, rack=rack, version=v) for rack, i in node.items()]
    if not brokers:
        brokers = [broker_cls(node_id=0, host="broker-0", port=9092, rack=None, version=v)]
    topics = []
    for t in group.metadata.values():
        partitions = []
        for p in range(t.partitions):
            replicas = [node[r] for r in t.racks[p]] if t.racks is not None and t.racks[p] else [0]
            partitions.append(partition_cls(error_code=0, partition_index=p, leader_id=replicas[0],
                                            replica_nodes=replicas, isr_nodes=replicas, version=v))
        topics.append(topic_cls(error_code=0, name=t.name, is_internal=False, partitions=partitions, version=v))
    cluster = ClusterMetadata()
    cluster.update_metadata(MetadataResponse(version=v, brokers=brokers, controller_id=0, topics=topics))
    return cluster


def _read_assignments(encoded: dict[str, bytes], member_ids: list[str], who: str) -> Assignment:
    """Each member's SyncGroup bytes read as a Java member reads them; unknown members refused."""
    known = set(member_ids)
    out = {}
    for member_id, data in encoded.items():
        if member_id not in known:
            raise AssignorGarbage(f"assignment.{member_id}: not a member of the group (returned by {who})")
        try:
            out[member_id] = decode_assignment(data).assigned
        except DecodeError as exc:
            raise AssignorGarbage(f"assignment.{member_id}: {who} wrote SyncGroup bytes a Java member cannot read ({exc})") from exc
    return Assignment({m: tuple(out.get(m, ())) for m in member_ids})
