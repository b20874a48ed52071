"""Reading the fixed-width tables ``kafka-consumer-groups.sh --describe`` prints.

Every variant of the tool (Scala ``ConsumerGroupCommand`` 1.1-3.7, Java from 3.8) prints a table
as one ``printf`` format for the header and the same format for each row: each column but the last
is left-justified and padded (``%-Ns``) to the widest value or label of that column, columns are
separated by one space, and the last column is not padded. So the header's labels give every
column's start, and a cell is the text from its column's start to the next column's start. Slicing
by position is what copes with an empty cell (a member without ``group.instance.id`` in a table
that has the GROUP-INSTANCE-ID column prints only spaces there), which splitting on whitespace
cannot.

A row that does not line up with its header (pasted through something that collapsed the spaces)
is read by splitting on whitespace when that is unambiguous: as many fields as columns, the extra
ones joined into the last column (``ASSIGNMENT`` holds ``", "``). Otherwise it is refused, naming
the line.

Three tables are recognised by their labels: ``members`` (``--members [--verbose]``), ``offsets``
(the default ``--describe``) and ``state`` (``--state``). Between tables the tool prints messages
(``Consumer group 'g' has no active members.``, ``Warning: Consumer group 'g' is rebalancing.``,
``Error: ...``); those are kept as ``Message`` values. Anything else is refused naming its line,
except before the first table, where a pasted shell prompt or command line is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from ..errors import InvalidScenario

__all__ = ["Cell", "Table", "Message", "read_tables", "MEMBERS", "OFFSETS", "STATE"]

MEMBERS, OFFSETS, STATE = "members", "offsets", "state"

#: Every label each table has had in some release; the identifying labels must all be present.
_KINDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    MEMBERS: (
        frozenset({"GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT",
                   "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT", "UPGRADED"}),
        frozenset({"CONSUMER-ID", "#PARTITIONS"}),
    ),
    OFFSETS: (
        frozenset({"GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                   "CONSUMER-ID", "HOST", "CLIENT-ID"}),
        frozenset({"TOPIC", "PARTITION", "CONSUMER-ID"}),
    ),
    STATE: (
        frozenset({"GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
                   "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"}),
        frozenset({"ASSIGNMENT-STRATEGY", "STATE"}),
    ),
}
_LABEL = re.compile(r"COORDINATOR \(ID\)|\S+")
_LABEL_LIKE = re.compile(r"^(?:[A-Z#][A-Z0-9#-]*|COORDINATOR \(ID\))$")
_MESSAGES = (
    re.compile(r"^Consumer group '(?P<group>.*)' has no active members\.$"),
    re.compile(r"^Warning: Consumer group '(?P<group>.*)' is rebalancing\.$"),
    re.compile(r"^Error: (?:.*?'(?P<group>[^']*)')?.*$"),
    re.compile(r"^Note: .*$"),
)


@dataclass(frozen=True)
class Cell:
    """One cell: its text (stripped), the 1-based line and column where its column starts."""

    text: str
    line: int
    col: int


@dataclass(frozen=True)
class Table:
    """A header and its rows; each row maps a column label to its cell."""

    kind: str
    labels: tuple[str, ...]
    line: int
    rows: tuple[Mapping[str, Cell], ...]


@dataclass(frozen=True)
class Message:
    """A line the tool prints between tables; ``group`` when the line names one."""

    text: str
    line: int
    group: str | None


def _where(line: int) -> str:
    return f"describe line {line}"


def _header(text: str, line: int) -> tuple[str, tuple[str, ...], tuple[int, ...]] | None:
    """The table kind, labels and column starts if ``text`` is a header line, else None."""
    found = [(m.group(0), m.start()) for m in _LABEL.finditer(text)]
    if not found or not all(_LABEL_LIKE.match(label) for label, _ in found):
        return None
    labels = [label for label, _ in found]
    for kind, (known, identifying) in _KINDS.items():
        if identifying <= set(labels):
            for label, start in found:
                if label not in known:
                    raise InvalidScenario(
                        _where(line),
                        f"unknown column {label!r} at column {start + 1} of a kafka-consumer-groups.sh {kind} header "
                        f"(known: {', '.join(sorted(known))})",
                    )
            if len(set(labels)) != len(labels):
                raise InvalidScenario(_where(line), f"a column label appears twice in the header: {' '.join(labels)}")
            return kind, tuple(labels), tuple(start for _, start in found)
    return None


def _message(text: str, line: int) -> Message | None:
    stripped = text.strip()
    for pattern in _MESSAGES:
        m = pattern.match(stripped)
        if m:
            return Message(stripped, line, m.groupdict().get("group"))
    return None


def _row(text: str, line: int, labels: tuple[str, ...], starts: tuple[int, ...], at: int) -> dict[str, Cell]:
    """Slice ``text`` at the header's column starts; fall back to whitespace fields when it does not line up.

    A padded value begins exactly at its column start, so a non-space just before a column start
    (a value ran into the next column) or a non-empty cell that begins with a space (a value shifted
    right) means the row does not line up. Only an empty cell is all spaces.
    """
    cells: dict[str, Cell] = {}
    for i, (label, start) in enumerate(zip(labels, starts)):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        chunk = text[start:end] if start < len(text) else ""
        if (start and start < len(text) and text[start - 1] != " ") or (chunk.strip() and chunk[0] == " "):
            break
        cells[label] = Cell(chunk.strip(), line, start + 1)
    else:
        return cells
    fields = [(m.group(0), m.start()) for m in re.finditer(r"\S+", text)]
    # Whitespace fields are unambiguous only when no cell can be empty or hold spaces but the
    # last (ASSIGNMENT's "t(0), u(1)", a CLIENT-ID with spaces).
    if len(fields) < len(labels):
        raise InvalidScenario(
            _where(line),
            f"row does not line up with the header of line {at} ({len(fields)} fields where {len(labels)} columns are "
            f"named: {' '.join(labels)}); paste the output of kafka-consumer-groups.sh unchanged",
        )
    head, tail = fields[: len(labels) - 1], fields[len(labels) - 1 :]
    cells = {label: Cell(value, line, col + 1) for label, (value, col) in zip(labels, head)}
    cells[labels[-1]] = Cell(text[tail[0][1]:].strip(), line, tail[0][1] + 1)
    return cells


#: ``ConsumerGroupState`` / ``GroupState`` names the STATE column can hold.
_GROUP_STATES = frozenset({"Stable", "Empty", "Dead", "PreparingRebalance", "CompletingRebalance", "Assigning",
                           "Reconciling", "Unknown", "NotReady"})


def _state_row(text: str, line: int, labels: tuple[str, ...]) -> dict[str, Cell]:
    """A ``--state`` row, read by tokens rather than positions.

    Its format pads GROUP to the coordinator's width and the coordinator (``host:port (id)``,
    two spaces before the id from 3.8) to 25, so a longer host name pushes every later value
    right of its label. The coordinator ends at the first token closing with ``)``; an empty
    ASSIGNMENT-STRATEGY (an Empty group before 4.0) is recognised by the state name that follows.
    """
    fields = [(m.group(0), m.start() + 1) for m in re.finditer(r"\S+", text)]

    def fail(what: str) -> InvalidScenario:
        return InvalidScenario(_where(line), f"--state row: {what}")

    cells: dict[str, Cell] = {}
    i = 0
    if labels[0] == "GROUP":
        cells["GROUP"] = Cell(fields[0][0], line, fields[0][1])
        i = 1
    j = i
    while j < len(fields) and not fields[j][0].endswith(")"):
        j += 1
    if i >= len(fields) or j == len(fields):
        raise fail("no COORDINATOR (ID) of the form host:port (id)")
    start, end = fields[i][1], fields[j][1] + len(fields[j][0])
    cells["COORDINATOR (ID)"] = Cell(text[start - 1 : end - 1], line, start)
    rest = fields[j + 1 :]
    if rest and rest[0][0] not in _GROUP_STATES:
        cells["ASSIGNMENT-STRATEGY"] = Cell(rest[0][0], line, rest[0][1])
        rest = rest[1:]
    else:
        cells["ASSIGNMENT-STRATEGY"] = Cell("", line, rest[0][1] if rest else len(text) + 1)
    if not rest or rest[0][0] not in _GROUP_STATES:
        raise fail(f"expected a group state ({', '.join(sorted(_GROUP_STATES))}) after the assignment strategy")
    cells["STATE"] = Cell(rest[0][0], line, rest[0][1])
    after = labels[labels.index("STATE") + 1 :]
    if len(rest) - 1 != len(after):
        raise fail(f"{len(rest) - 1} values after STATE where {len(after)} columns are named ({' '.join(after)})")
    for label, (value, col) in zip(after, rest[1:]):
        cells[label] = Cell(value, line, col)
    return cells


def read_tables(text: str) -> tuple[tuple[Table, ...], tuple[Message, ...]]:
    """Every table and message in ``text``, in order; anything else raises ``InvalidScenario``."""
    tables: list[Table] = []
    messages: list[Message] = []
    current: tuple[str, tuple[str, ...], tuple[int, ...], int] | None = None
    rows: list[dict[str, Cell]] = []

    def close() -> None:
        nonlocal current, rows
        if current is not None:
            kind, labels, _, at = current
            tables.append(Table(kind, labels, at, tuple(rows)))
        current, rows = None, []

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n").expandtabs(8)
        if not line.strip():
            close()
            continue
        header = _header(line, number)
        if header is not None:
            close()
            current = (*header, number)
            continue
        message = _message(line, number)
        if message is not None:
            close()
            messages.append(message)
            continue
        if current is not None:
            kind, labels, starts, at = current
            rows.append(_state_row(line, number, labels) if kind == STATE else _row(line, number, labels, starts, at))
            continue
        if not tables:  # a pasted prompt or command line before the output
            continue
        raise InvalidScenario(
            _where(number), f"not a table header, table row or message of kafka-consumer-groups.sh: {_quote(line)}"
        )
    close()
    return tuple(tables), tuple(messages)


def _quote(text: str, limit: int = 60) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
