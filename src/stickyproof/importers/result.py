"""What an import yields: a scenario, the group's assignment when the input shows one, and the notes.

The notes say, in words a reader of the written scenario needs no other document for, what the
input could not tell and what was assumed instead (a generation, a version, a subscription).
They travel in the scenario document as its top-level ``"notes"`` array, which every reader
accepts and ignores (docs/scenario-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..model import Assignment, Scenario, TopicPartition, assignment_to_dict, scenario_to_dict

__all__ = ["ImportResult", "scenario_document", "assignment_document", "withheld_for_revocation"]


@dataclass(frozen=True)
class ImportResult:
    """``scenario``: the group as the leader would see it at its next (describe) or captured
    (capture) rebalance. ``assignment``: the assignment the input shows, or None. ``notes``: what
    was not known and what was assumed, one sentence each. ``group``: the consumer group's name
    when the input gives it."""

    scenario: Scenario
    assignment: Assignment | None
    notes: tuple[str, ...]
    group: str | None = None


def scenario_document(result: ImportResult) -> dict[str, Any]:
    """The canonical scenario document with ``"notes"`` after ``"members"``."""
    doc = scenario_to_dict(result.scenario)
    doc["notes"] = list(result.notes)
    return doc


def assignment_document(result: ImportResult) -> dict[str, Any] | None:
    return None if result.assignment is None else assignment_to_dict(result.assignment)


def withheld_for_revocation(
    owned: Mapping[str, Sequence[TopicPartition]], assignment: Mapping[str, Sequence[TopicPartition]]
) -> dict[str, tuple[TopicPartition, ...]]:
    """docs/scenario-format.md ``revoking``: each member's owned partitions that it does not get back
    and that nobody gets this round.

    A cooperative leader hands a moving partition to nobody until its owner has revoked it (R34,
    R38), so an assignment read off the wire lacks exactly these; without them the check would
    count them unassigned.
    """
    given = {tp for tps in assignment.values() for tp in tps}
    out: dict[str, tuple[TopicPartition, ...]] = {}
    for member_id, tps in owned.items():
        mine = set(assignment.get(member_id, ()))
        lost = tuple(dict.fromkeys(tp for tp in tps if tp not in mine and tp not in given))
        if lost:
            out[member_id] = lost
    return out
