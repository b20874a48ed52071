"""The JSON shapes of the assignor protocol (models/assignor-protocol.md, version ``assignor/1``).

Pure functions over bytes and values, no processes: the hello (§2), the request a
``GroupSubscription`` becomes (§3), partition lists with their optional ranges encoding (§4),
and the answer read back into an ``Assignment`` (§5). ``exec.py`` moves these lines through a
child's pipes; ``worker.py`` is the other end for Python user assignors.

Answers are validated like a user callable's result (``assignors.registry``): member ids must be
the group's, partitions non-negative int32 integers; a partition listed twice is kept, for the
graders to report. Whatever breaks the protocol raises ``AssignorGarbage`` naming the JSON path;
an ``{"error": ...}`` answer raises ``AssignorFailure`` with the thrown type as ``kafka_exception``.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from functools import partial
from itertools import chain, islice, repeat
from operator import lt
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..assignors.base import COOPERATIVE, EAGER, GroupSubscription, Subscription
from .._perf import gc_paused
from ..errors import AssignorFailure, AssignorGarbage
from ..model import Assignment, TopicPartition
from ..wire import WireSubscription, encode_subscription

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_LINE_BYTES",
    "MAX_ANSWER_PARTITIONS",
    "Hello",
    "Answer",
    "parse_hello",
    "hello_line",
    "request_document",
    "encode_request",
    "parse_answer_line",
    "read_answer",
    "decode_answer",
    "answer_document",
    "to_ranges",
    "partition_list",
    "expand_partition_list",
    "topic_partitions",
    "by_topic",
    "cut",
]

PROTOCOL_VERSION = "assignor/1"
MAX_LINE_BYTES = 64 * 1024 * 1024
"""§6: an answer line longer than this is garbage (the child is not read further)."""
MAX_ANSWER_PARTITIONS = MAX_LINE_BYTES // 2
"""The most partitions an answer may describe: as many as an array answer of the size limit can
hold, so the ranges encoding cannot turn a small line into an unbounded allocation."""
INT32_MAX = 2**31 - 1
ENCODINGS = frozenset({"ranges"})


def cut(text: str, limit: int = 200) -> str:
    """``text`` shortened to ``limit`` characters for a message (§6: a garbage line is shown cut at 200)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_line(doc: Any) -> bytes:
    # ASCII output escapes every non-ASCII character, lone surrogates included, so any member id
    # or topic a scenario can hold crosses the pipe and comes back as the same string.
    return json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"


# ------------------------------------------------------------------------------------------
# §2 Hello


@dataclass(frozen=True)
class Hello:
    """What the child says it is: display ``name``, the Kafka protocol name it registers under
    (``kafka_name``), the rebalance ``protocols`` it supports (highest first, as an
    ``AssignorInfo`` holds them), the optional encodings it reads, and whether it wants raw bytes."""

    name: str
    kafka_name: str
    protocols: tuple[str, ...]
    accepts: frozenset[str] = frozenset()
    wire: bool = False
    contract: str | None = None


def parse_hello(line: bytes, default_name: str) -> Hello:
    """Read the child's first line (§2); ``AssignorGarbage`` with the line when it is not a hello."""
    text = line.decode("utf-8", errors="replace").rstrip("\n")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise AssignorGarbage("the first line is not a JSON hello", line=cut(text)) from None
    if not isinstance(doc, dict) or "stickyproof" not in doc:
        raise AssignorGarbage('the first line is not a hello (no "stickyproof" key)', line=cut(text))
    if doc["stickyproof"] != PROTOCOL_VERSION:
        raise AssignorGarbage(
            f"the hello names protocol {cut(json.dumps(doc['stickyproof']), 60)}; stickyproof speaks {PROTOCOL_VERSION!r}",
            line=cut(text),
        )
    name = doc.get("name", default_name)
    kafka_name = doc.get("kafka_name", name)
    protocols = doc.get("supported_protocols", [EAGER])
    accepts = doc.get("accepts", [])
    wire = doc.get("wire", False)
    contract = doc.get("contract")
    problems = []
    if not isinstance(name, str) or not name:
        problems.append("name must be a non-empty string")
    if not isinstance(kafka_name, str) or not kafka_name:
        problems.append("kafka_name must be a non-empty string")
    if (not isinstance(protocols, list) or not protocols
            or any(p not in (EAGER, COOPERATIVE) for p in protocols)):
        problems.append('supported_protocols must be a non-empty array of "eager"/"cooperative"')
    if not isinstance(accepts, list) or any(not isinstance(a, str) for a in accepts):
        problems.append("accepts must be an array of strings")
    if not isinstance(wire, bool):
        problems.append("wire must be true or false")
    if contract is not None and (not isinstance(contract, str) or not contract):
        problems.append("contract must be a contract name")
    if problems:
        raise AssignorGarbage(f"bad hello: {'; '.join(problems)}", line=cut(text))
    return Hello(
        name=name,
        kafka_name=kafka_name,
        protocols=tuple(p for p in (COOPERATIVE, EAGER) if p in protocols),
        accepts=frozenset(accepts) & ENCODINGS,  # encodings this version does not know are ignored
        wire=wire,
        contract=contract,
    )


def hello_line(hello: Hello) -> bytes:
    """The hello as a child writes it (``worker.py``; test fixtures)."""
    return _json_line({
        "stickyproof": PROTOCOL_VERSION,
        "name": hello.name,
        "kafka_name": hello.kafka_name,
        "supported_protocols": list(hello.protocols),
        "accepts": sorted(hello.accepts),
        "wire": hello.wire,
        **({"contract": hello.contract} if hello.contract else {}),
    })


# ------------------------------------------------------------------------------------------
# §4 Partition lists


def to_ranges(partitions: Sequence[int]) -> list[list[int]]:
    """Inclusive ``[first, last]`` runs of a strictly increasing list."""
    runs: list[list[int]] = []
    for p in partitions:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return runs


def partition_list(partitions: Sequence[int], ranges: bool) -> list[int] | dict[str, Any]:
    """``partitions`` as §4 writes them: ``{"ranges": ...}`` when allowed, exact (strictly
    increasing: no order or repeat to lose) and fewer numbers to write; the array otherwise."""
    n = len(partitions)
    if ranges and n > 4 and all(map(lt, partitions, islice(partitions, 1, None))):
        runs = to_ranges(partitions)
        if 2 * len(runs) + 2 < n:
            return {"ranges": runs}
    return partitions if isinstance(partitions, list) else list(partitions)


def _check_partitions(parts: list[Any], path: str) -> None:
    # The fast test first (C loops: a million partitions checks in milliseconds), the slow one to name the culprit.
    if parts and set(map(type, parts)) == {int} and min(parts) >= 0 and max(parts) <= INT32_MAX:
        return
    for i, p in enumerate(parts):
        if type(p) is not int:  # bool and float are refused too
            raise AssignorGarbage(f"{path}[{i}]: expected a partition number, got {cut(json.dumps(p), 60)}")
        if not 0 <= p <= INT32_MAX:
            raise AssignorGarbage(f"{path}[{i}]: partition {p} outside 0..{INT32_MAX}")


def expand_partition_list(value: Any, path: str, budget: list[int]) -> Sequence[int]:
    """A §4 partition list read back, checked: int32 partitions >= 0, ranges well formed.
    ``budget`` holds how many partitions the answer may still describe (``MAX_ANSWER_PARTITIONS``)."""
    if isinstance(value, list):
        parts: Any = value
        _check_partitions(parts, path)
    elif isinstance(value, dict) and set(value) == {"ranges"} and isinstance(value["ranges"], list):
        runs, described = [], 0
        for i, run in enumerate(value["ranges"]):
            if (not isinstance(run, list) or len(run) != 2 or any(type(p) is not int for p in run)
                    or not 0 <= run[0] <= run[1] <= INT32_MAX):
                raise AssignorGarbage(
                    f"{path}.ranges[{i}]: expected [first, last] with 0 <= first <= last <= {INT32_MAX}, "
                    f"got {cut(json.dumps(run), 60)}"
                )
            described += run[1] - run[0] + 1
            if described > budget[0]:
                raise AssignorGarbage(f"{path}.ranges[{i}]: the answer describes more than {MAX_ANSWER_PARTITIONS} partitions")
            runs.append(range(run[0], run[1] + 1))
        parts = list(chain.from_iterable(runs))
    else:
        raise AssignorGarbage(f"{path}: expected an array of partitions or {{\"ranges\": [[first, last], ...]}}, "
                              f"got {cut(json.dumps(value), 60)}")
    budget[0] -= len(parts)
    if budget[0] < 0:
        raise AssignorGarbage(f"{path}: the answer describes more than {MAX_ANSWER_PARTITIONS} partitions")
    return parts


# ------------------------------------------------------------------------------------------
# §3 Request


def by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Claims grouped by topic, topics in first-claim order, partitions in claim order
    (the shape ``registry.group_to_dict`` hands a user callable)."""
    out: dict[str, list[int]] = {}
    last, partitions = None, None
    for topic, partition in tps:  # runs of one topic take the fast path (a million claims: about a second)
        if topic != last:
            partitions = out.get(topic)
            if partitions is None:
                partitions = out[topic] = []
            last = topic
        partitions.append(partition)  # type: ignore[union-attr]
    return out


def _topic_document(topic: Any) -> Any:
    if topic.racks is None:
        return topic.partitions
    return {"partitions": topic.partitions, "racks": [list(r) for r in topic.racks]}


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def raw_subscription_bytes(s: Subscription) -> bytes:
    """The member's ``ConsumerProtocolSubscription`` for a ``wire`` request: the bytes the leader
    received (``Subscription.raw``), or, when it has none (direct mode), the decoded fields
    encoded at the member's version (§3)."""
    if s.raw is not None:
        return s.raw
    return encode_subscription(
        WireSubscription(s.version, tuple(s.topics), s.user_data, tuple(s.owned),
                         -1 if s.generation is None else s.generation, s.rack),
        s.version,
    )


def _owned_document(owned: Sequence[TopicPartition], ranges: bool) -> dict[str, Any]:
    lists = by_topic(owned)
    if not ranges:
        return lists
    return {t: partition_list(ps, True) if len(ps) > 4 else ps for t, ps in lists.items()}


def request_document(call_id: int, group: GroupSubscription, *, ranges: bool = False, wire: bool = False) -> dict[str, Any]:
    """The §3 request for ``group``: the leader's member id, the group as the leader decoded it,
    ``owned`` lists in the ranges encoding where ``ranges`` allows and it pays, raw subscriptions
    when ``wire``."""
    members = []
    for s in group.members:
        members.append({
            "id": s.member_id,
            "topics": list(s.topics),
            "owned": _owned_document(s.owned, ranges),
            "generation": -1 if s.generation is None or s.generation < 0 else s.generation,
            "version": s.version,
            "rack": s.rack,
            "instance_id": s.instance_id,
            "user_data": _b64(s.user_data),
        })
    doc: dict[str, Any] = {
        "id": call_id,
        "rebalance_protocol": group.protocol,
        "leader": group.leader,
        "group": {"topics": {t.name: _topic_document(t) for t in group.metadata.values()}, "members": members},
    }
    if wire:
        doc["subscriptions"] = {s.member_id: _b64(raw_subscription_bytes(s)) for s in group.members}
    return doc


def encode_request(call_id: int, group: GroupSubscription, *, ranges: bool = False, wire: bool = False) -> bytes:
    """The request line (UTF-8 JSON, ASCII-escaped, ``\\n``-terminated)."""
    with gc_paused():  # a large group's request is a million small lists: no cycles, nothing for the collector
        return _json_line(request_document(call_id, group, ranges=ranges, wire=wire))


# ------------------------------------------------------------------------------------------
# §5 Answer


@dataclass(frozen=True)
class Answer:
    """A decoded answer: the assignment (every member listed, in group order) and the time the
    child says the assignor took (``assign_seconds``, None when it did not say)."""

    assignment: Assignment
    assign_seconds: float | None


_new_tp = partial(tuple.__new__, TopicPartition)


def topic_partitions(topic: str, partitions: Iterable[int]) -> Iterator[TopicPartition]:
    """``TopicPartition(topic, p)`` for each partition, built in C (the answers of a large group hold a million)."""
    return map(_new_tp, zip(repeat(topic), partitions))


def _plain_lists(topics: dict[str, Any], budget: list[int]) -> tuple[TopicPartition, ...] | None:
    """A member's partitions when every list is a plain array of valid partitions, checked and built
    in C loops (a member of a large group lists hundreds of topics); None sends it the slow way,
    which names what is wrong."""
    lists = list(topics.values())
    if set(map(type, lists)) - {list}:
        return None
    flat = list(chain.from_iterable(lists))
    if flat and not (set(map(type, flat)) == {int} and min(flat) >= 0 and max(flat) <= INT32_MAX):
        return None
    if len(flat) > budget[0]:
        return None
    budget[0] -= len(flat)
    names = chain.from_iterable(map(repeat, topics.keys(), map(len, lists)))
    return tuple(map(_new_tp, zip(names, flat)))


def _partition_map(doc: Any, path: str, known: set[str], budget: list[int]) -> dict[str, tuple[TopicPartition, ...]]:
    if not isinstance(doc, dict):
        raise AssignorGarbage(f"{path}: expected an object of member id to partitions, got {cut(json.dumps(doc), 60)}")
    out: dict[str, tuple[TopicPartition, ...]] = {}
    for member_id, topics in doc.items():
        mpath = f"{path}.{member_id}"
        if member_id not in known:
            raise AssignorGarbage(f"{mpath}: not a member of the group")
        if not isinstance(topics, dict):
            raise AssignorGarbage(f"{mpath}: expected an object of topic to partitions, got {cut(json.dumps(topics), 60)}")
        fast = _plain_lists(topics, budget)
        if fast is not None:
            out[member_id] = fast
            continue
        tps: list[TopicPartition] = []
        for topic, value in topics.items():
            tps.extend(topic_partitions(topic, expand_partition_list(value, f"{mpath}.{topic}", budget)))
        out[member_id] = tuple(tps)
    return out


def parse_answer_line(line: bytes, call_id: int, who: str) -> dict[str, Any]:
    """The answer line as a JSON object carrying ``call_id``; ``AssignorGarbage`` (with the line)
    otherwise: the stream is then out of step and the child cannot be trusted further (§6)."""
    try:
        doc = json.loads(line)
    except (ValueError, RecursionError):
        raise AssignorGarbage(f"{who} answered call {call_id} with a line that is not JSON", line=cut(_line_text(line))) from None
    if not isinstance(doc, dict):
        raise AssignorGarbage(f"{who} answered call {call_id} with a line that is not one JSON object", line=cut(_line_text(line)))
    got = doc.get("id")
    if type(got) is not int or got != call_id:
        raise AssignorGarbage(f"{who} answered with id {cut(json.dumps(got), 40)} to call {call_id}", line=cut(_line_text(line)))
    return doc


def read_answer(doc: Mapping[str, Any], call_id: int, member_ids: Sequence[str], who: str) -> Answer:
    """The assignment of a parsed answer (§5): ``AssignorGarbage`` naming the path for a malformed
    one, ``AssignorFailure`` (``kafka_exception`` = the thrown type) for an ``{"error": ...}`` answer."""
    if "error" in doc:
        error = doc["error"]
        if not isinstance(error, dict) or not isinstance(error.get("type"), str) or not error["type"]:
            raise AssignorGarbage(f'error: expected {{"type": ..., "message": ...}} (call {call_id} of {who}), '
                                  f"got {cut(json.dumps(error), 100)}")
        message = error.get("message")
        text = message if isinstance(message, str) else json.dumps(message)
        if error["type"].startswith("stickyproof."):  # the child's own complaint (BadRequest), not the assignor's
            raise AssignorGarbage(f"{who} refused call {call_id}: {error['type']}: {cut(text, 200)}")
        raise AssignorFailure(f"{text} (raised by {who})", kafka_exception=error["type"])
    if "assignment" not in doc:
        raise AssignorGarbage(f'call {call_id} of {who}: the answer has neither "assignment" nor "error"')
    known = set(member_ids)
    budget = [MAX_ANSWER_PARTITIONS]
    with gc_paused():
        assignment = _partition_map(doc["assignment"], "assignment", known, budget)
        revoking_doc = doc.get("revoking")
        revoking = {} if revoking_doc is None else _partition_map(revoking_doc, "revoking", known, budget)
    seconds = doc.get("assign_seconds")
    if seconds is not None and (type(seconds) not in (int, float) or not math.isfinite(seconds) or seconds < 0):
        raise AssignorGarbage(f"assign_seconds: expected a non-negative number of seconds, got {cut(json.dumps(seconds), 40)}")
    return Answer(
        Assignment({m: assignment.get(m, ()) for m in member_ids}, {m: v for m, v in revoking.items() if v}),
        None if seconds is None else float(seconds),
    )


def decode_answer(line: bytes, call_id: int, member_ids: Sequence[str], who: str) -> Answer:
    """``parse_answer_line`` then ``read_answer``."""
    return read_answer(parse_answer_line(line, call_id, who), call_id, member_ids, who)


def _line_text(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").rstrip("\r\n")


def answer_document(call_id: int, assignment: Mapping[str, Mapping[str, Any]], *, assign_seconds: float | None = None) -> dict[str, Any]:
    """An answer as a child writes it (``worker.py``)."""
    doc: dict[str, Any] = {"id": call_id, "assignment": assignment}
    if assign_seconds is not None:
        doc["assign_seconds"] = assign_seconds
    return doc
