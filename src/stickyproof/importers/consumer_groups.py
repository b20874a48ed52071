"""What a ``kafka-consumer-groups.sh --describe`` output says about one group: members and assignments.

The formats, read from ``ConsumerGroupCommand`` at each release (Scala ``kafka.admin`` up to 3.7,
Java ``org.apache.kafka.tools.consumer.group`` from 3.8):

==============  =================================================================  =========================
release         ``--members --verbose`` columns                                     ASSIGNMENT cell
==============  =================================================================  =========================
1.1 - 2.2       CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT                   ``t(0,1,2), u(3)``
2.3 - 2.5       GROUP + the above                                                   ``t(0,1,2), u(3)``
2.6 - 3.7       GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS    ``t(0,1,2), u(3)``
                ASSIGNMENT (GROUP-INSTANCE-ID only when some member has one)
3.8 - 3.9       as 2.6 - 3.7                                                        ``(0,1,2), (3)``: no topic
4.0 -           GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS    ``t:0,1,2;u:3``
                CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT
                [UPGRADED] (KIP-1099)
==============  =================================================================  =========================

A member with no partitions shows ``-``. Topics are grouped, the groups sorted as strings;
partitions are sorted as numbers, except in 3.8/3.9 where they are sorted as strings
(``(0,1,10,2)``). Order is never relied on here. 3.8 and 3.9 lost the topic names when the command moved to Java (KAFKA-17750
restored them in 4.0); such a cell is usable only with one candidate topic, or next to the
default ``--describe`` (offsets) table, whose rows name TOPIC, PARTITION and CONSUMER-ID.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InvalidScenario
from ..model import INT32_MAX, TopicPartition
from ._table import MEMBERS, OFFSETS, STATE, Cell, Message, Table, read_tables
from .topics import LEGAL_TOPIC

__all__ = ["DescribedMember", "DescribedGroup", "read_consumer_groups", "parse_assignment_cell"]

_TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]*")
_NUMBER = re.compile(r"\d{1,10}")
MISSING = "-"


@dataclass(frozen=True)
class DescribedMember:
    """One member row. ``current``/``target``: ``(topic, partitions)`` per topic group as printed,
    topic None when the release printed none (3.8/3.9); ``current`` None without an assignment column."""

    id: str
    line: int
    instance_id: str | None = None
    client_id: str = ""
    host: str = ""
    current: tuple[tuple[str | None, tuple[int, ...]], ...] | None = None
    target: tuple[tuple[str | None, tuple[int, ...]], ...] | None = None

    def partition_count(self) -> int:
        return sum(len(ps) for _, ps in self.current or ())
    epoch: int | None = None


@dataclass(frozen=True)
class DescribedGroup:
    """Everything the output says about the selected group."""

    name: str | None
    members: tuple[DescribedMember, ...]
    #: from the offsets table: partitions per consumer id ("-" for committed but unowned partitions)
    offsets_rows: tuple[tuple[str, TopicPartition | None, int], ...] = ()
    strategy: str | None = None
    state: str | None = None
    kip848: bool = False
    messages: tuple[Message, ...] = ()
    has_members_table: bool = False


def _where(cell: Cell | int) -> str:
    return f"describe line {cell if isinstance(cell, int) else cell.line}"


def parse_assignment_cell(cell: Cell, column: str) -> tuple[tuple[str | None, tuple[int, ...]], ...]:
    """Read an assignment cell in any of the three layouts; ``-`` is no partitions.

    ``t(0,1), u(2)`` (up to 3.7), ``(0,1), (2)`` (3.8, 3.9: topic None), ``t:0,1;u:2`` (4.0 on).
    Errors name the line, the column and the offending character's column.
    """
    s = cell.text
    if s == MISSING:
        return ()

    def fail(pos: int, what: str) -> InvalidScenario:
        return InvalidScenario(_where(cell), f'{column} "{s}" at column {cell.col + pos}: {what}')

    out: list[tuple[str | None, tuple[int, ...]]] = []
    seen_topics: set[str | None] = set()
    pos = 0
    while True:
        m = _TOPIC_CHARS.match(s, pos)
        topic = m.group(0) or None
        if topic is not None and (not LEGAL_TOPIC.fullmatch(topic) or topic in (".", "..")):
            raise fail(pos, f"{topic!r} is not a legal Kafka topic name")
        if topic in seen_topics and topic is not None:
            raise fail(pos, f"topic {topic!r} appears twice")
        seen_topics.add(topic)
        pos = m.end()
        if pos < len(s) and s[pos] == "(":
            close = s.find(")", pos)
            if close < 0:
                raise fail(pos, "'(' is never closed")
            body, body_at, pos, separator = s[pos + 1 : close], pos + 1, close + 1, ","
        elif pos < len(s) and s[pos] == ":" and topic is not None:
            end = s.find(";", pos)
            end = len(s) if end < 0 else end
            body, body_at, pos, separator = s[pos + 1 : end], pos + 1, end, ";"
        else:
            found = repr(s[pos]) if pos < len(s) else "the end"
            raise fail(pos, f"expected '(' or ':' after {'topic ' + repr(topic) if topic else 'the start of a group'}, found {found}")
        partitions: dict[int, None] = {}
        at = body_at
        for part in body.split(","):
            text = part.strip()
            if not _NUMBER.fullmatch(text) or int(text) > INT32_MAX:
                raise fail(at + len(part) - len(part.lstrip()), f'partition "{text}" is not a number' if text else "empty partition")
            if int(text) in partitions:
                raise fail(at, f"partition {text} listed twice")
            partitions[int(text)] = None
            at += len(part) + 1
        out.append((topic, tuple(partitions)))
        if pos == len(s):
            return tuple(out)
        if s[pos] != separator:
            raise fail(pos, f"expected {separator!r} between topics, found {s[pos]!r}")
        pos += 1
        while pos < len(s) and s[pos] == " ":
            pos += 1
        if pos == len(s):
            raise fail(pos, f"nothing after the last {separator!r}")


def _epoch(cell: Cell | None, column: str) -> int | None:
    if cell is None or cell.text in (MISSING, ""):
        return None
    if not _NUMBER.fullmatch(cell.text) or int(cell.text) > INT32_MAX:
        raise InvalidScenario(_where(cell), f'{column} "{cell.text}" at column {cell.col}: not a number')
    return int(cell.text)


def _member(row: dict[str, Cell]) -> DescribedMember:
    cid = row["CONSUMER-ID"]
    if not cid.text or cid.text == MISSING:
        raise InvalidScenario(_where(cid), f"CONSUMER-ID at column {cid.col} is empty")
    current_col = "CURRENT-ASSIGNMENT" if "CURRENT-ASSIGNMENT" in row else "ASSIGNMENT" if "ASSIGNMENT" in row else None
    current = parse_assignment_cell(row[current_col], current_col) if current_col else None
    target = parse_assignment_cell(row["TARGET-ASSIGNMENT"], "TARGET-ASSIGNMENT") if "TARGET-ASSIGNMENT" in row else None
    count = row["#PARTITIONS"]
    if not _NUMBER.fullmatch(count.text):
        raise InvalidScenario(_where(count), f'#PARTITIONS "{count.text}" at column {count.col}: not a number')
    listed = sum(len(ps) for _, ps in current or ())
    if current is not None and int(count.text) != listed:
        raise InvalidScenario(_where(count), f"#PARTITIONS says {count.text} but {current_col} lists {listed} partitions")
    instance = row.get("GROUP-INSTANCE-ID")
    return DescribedMember(
        id=cid.text,
        line=cid.line,
        instance_id=instance.text if instance is not None and instance.text else None,
        client_id=row["CLIENT-ID"].text if "CLIENT-ID" in row else "",
        host=row["HOST"].text if "HOST" in row else "",
        current=current,
        target=target,
        epoch=_epoch(row.get("CURRENT-EPOCH"), "CURRENT-EPOCH"),
    )


def _offsets_row(row: dict[str, Cell]) -> tuple[str, TopicPartition | None, int]:
    topic, partition, consumer = row["TOPIC"], row["PARTITION"], row["CONSUMER-ID"]
    if topic.text == MISSING and partition.text == MISSING:
        return consumer.text, None, consumer.line
    if not LEGAL_TOPIC.fullmatch(topic.text) or topic.text in (".", ".."):
        raise InvalidScenario(_where(topic), f"TOPIC {topic.text!r} at column {topic.col} is not a legal Kafka topic name")
    if not _NUMBER.fullmatch(partition.text) or int(partition.text) > INT32_MAX:
        raise InvalidScenario(_where(partition), f'PARTITION "{partition.text}" at column {partition.col}: not a number')
    return consumer.text, TopicPartition(topic.text, int(partition.text)), consumer.line


def _rows_of(tables: tuple[Table, ...], kind: str, group: str | None) -> list[dict[str, Cell]]:
    return [
        dict(row) for t in tables if t.kind == kind for row in t.rows
        if group is None or "GROUP" not in row or row["GROUP"].text == group
    ]


def _select_group(tables: tuple[Table, ...], messages: tuple[Message, ...], group: str | None) -> str | None:
    named = list(dict.fromkeys(
        [row["GROUP"].text for t in tables for row in t.rows if "GROUP" in row]
        + [m.group for m in messages if m.group]
    ))
    if group is not None:
        if named and group not in named:
            raise InvalidScenario("describe", f"no group {group!r} in the output (it describes {', '.join(map(repr, named))})")
        return group
    if len(named) > 1:
        raise InvalidScenario("describe", f"the output describes {len(named)} groups ({', '.join(map(repr, named))}): choose one with --group")
    return named[0] if named else None


def read_consumer_groups(text: str, *, group: str | None = None) -> DescribedGroup:
    """Read one group out of a ``kafka-consumer-groups.sh --describe`` output (any of its tables)."""
    tables, messages = read_tables(text)
    if not any(t.kind in (MEMBERS, OFFSETS) for t in tables):
        raise InvalidScenario(
            "describe", "no members or offsets table found: expected the output of kafka-consumer-groups.sh "
            "--describe --group G --members --verbose"
        )
    name = _select_group(tables, messages, group)
    ours = tuple(m for m in messages if m.group in (None, name))
    for m in ours:
        if m.text.startswith("Error:"):
            raise InvalidScenario(_where(m.line), f"kafka-consumer-groups.sh reported: {m.text}")
    members: list[DescribedMember] = []
    first_line: dict[str, int] = {}
    for row in _rows_of(tables, MEMBERS, name):
        member = _member(row)
        if member.id in first_line:
            raise InvalidScenario(_where(member.line), f"member {member.id!r} is listed twice (first at line {first_line[member.id]})")
        first_line[member.id] = member.line
        members.append(member)
    offsets = tuple(_offsets_row(row) for row in _rows_of(tables, OFFSETS, name))
    state_rows = _rows_of(tables, STATE, name)
    strategy = state = None
    if state_rows:
        strategy = state_rows[-1]["ASSIGNMENT-STRATEGY"].text or None
        state = state_rows[-1]["STATE"].text or None
    # From 4.0 the verbose tables have epoch columns for every group, but a classic group prints
    # "-" there (and "-" for TARGET-ASSIGNMENT): only an epoch value marks a consumer-protocol group.
    kip848 = any(m.epoch is not None for m in members) or any(
        _epoch(row.get("GROUP-EPOCH"), "GROUP-EPOCH") is not None for row in state_rows
    )
    return DescribedGroup(
        name=name,
        members=tuple(members),
        offsets_rows=offsets,
        strategy=None if strategy == MISSING else strategy,
        state=state,
        kip848=kip848,
        messages=ours,
        has_members_table=any(t.kind == MEMBERS for t in tables),
    )
