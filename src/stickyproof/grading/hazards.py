"""Known Kafka behaviour, named: which failures of Kafka's own assignors are hazards it is known for.

A verdict is a claim about Kafka. When a built-in assignor fails, the failure is one of:

    historical   a historical release reproducing the incident it is modelled for (its release
                 record's KIPs and KAFKA issues)
    kafka-bug    a real Kafka bug on a state a real group can reach (docs/rules.md §10 K2, K3,
                 and the rack-aware general path's instability stickyproof found), with a replay
    hazard       a known hazard of Kafka's input handling (§10 K1, K5, and v0 claims a cooperative
                 leader cannot see, R2), reproduced on inputs that provoke it
    (none)       an unexpected failure: what a sweep must explain

Each label comes from one stated rule (``RULES``, and models/invariants.md §6): the failed
invariant (or the thrown exception), the assignor family, and a feature of the group that causes
it. Labels are claims about Kafka's code only: another client's assignor, or a user's, is never
labelled (its failures are its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..assignors.registry import AssignorInfo
from ..model import Scenario
from ..oracle.grade import Grade
from .failure import run_error_kind

__all__ = ["HazardLabel", "RULES", "label_failures", "CATEGORIES"]

CATEGORIES = ("historical", "kafka-bug", "hazard")

RULES = {
    "K1": ("hazard", "a claim on a partition number past its topic's count (R6, §10 K1): kept and output by the "
           "constrained path, or the sorted merge loses sync (nonexistent, duplicate, unassigned, imbalance, "
           "cooperative-unsafe, or IllegalStateException)"),
    "K2": ("kafka-bug", "empty-subscription seeding (R13, §10 K2): a member subscribed to nothing is handed partitions "
           "(unsubscribed, witness member with no topics; cooperative-unsafe when the partition it is handed is "
           "still another member's)"),
    "K3": ("kafka-bug", "prevAssignment hands a lower-generation member back a partition of a topic it no longer "
           "subscribes to (R27/R32, §10 K3): unsubscribed on a claim of that member, or NullPointerException"),
    "K5": ("hazard", "the v0/v1 generation asymmetry (R10, §10 K5): a claimant whose wire version carries no generation "
           "wins or loses against the wrong rival (duplicate or cooperative-unsafe with a v0/v1 claimant)"),
    "v0-invisible": ("hazard", "a v0 member's owned partitions never reach a cooperative leader (R2): cooperative-unsafe "
                     "on a partition a v0 member claims (in round 1, or in the follow-up round after it was handed "
                     "it), or unstable on a partition a v0 member holds"),
    "rack-unstable": ("kafka-bug", "the rack-aware path moves its own balanced assignment after an R28 rack mismatch "
                      "without gaining rack alignment (a partition with no known replica rack moved between two "
                      "equally mismatched members; found by stickyproof; tests/regressions/"
                      "cooperative-sticky-rack-aware-moves-its-own-balanced-assignment.json): unstable on the "
                      "rack-aware path, aligned_after <= aligned_before"),
}


@dataclass(frozen=True)
class HazardLabel:
    """One failure of a grade explained: which failure, the rule id (``K1`` ... or a release name),
    its category, and the rule in words."""

    failure: str
    rule: str
    category: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"failure": self.failure, "rule": self.rule, "category": self.category, "text": self.text}


def _sticky_family(info: AssignorInfo) -> bool:
    return not info.user and info.release is not None


def _past_count(scenario: Scenario) -> bool:
    counts = scenario.partition_counts
    return any(tp.topic in counts and counts[tp.topic] > 0 and tp.partition >= counts[tp.topic] for m in scenario.members for tp in m.owned)


def _member(scenario: Scenario, member_id: object):
    return next((m for m in scenario.members if m.id == member_id), None)


def _claimants(scenario: Scenario, partition: object) -> list:
    if not isinstance(partition, (list, tuple)) or len(partition) != 2:
        return []
    return [m for m in scenario.members if any(tp.topic == partition[0] and tp.partition == partition[1] for tp in m.owned)]


def _no_alignment_gain(witness: dict) -> bool:
    """An ``unstable`` witness from Kafka's rack-aware path (the grader adds both alignment counts
    there) whose re-run gained no rack alignment: KIP-881 permits moves that improve locality (the
    grader does not report those), so only these are the bug."""
    before, after = witness.get("aligned_before"), witness.get("aligned_after")
    return isinstance(before, int) and isinstance(after, int) and after <= before


def _rule_for(scenario: Scenario, info: AssignorInfo, failure: str, witness: dict, kafka_exception: str | None) -> str | None:
    """The rule a failure of a sticky-family assignor matches, or None (an unexpected failure)."""
    java = (kafka_exception or "").rsplit(".", 1)[-1]
    if failure == "error" and java == "NullPointerException":
        return "K3"
    if failure == "unsubscribed":
        member = _member(scenario, witness.get("member"))
        if member is not None and not member.topics:
            return "K2"
        partition = witness.get("partition")
        if member is not None and isinstance(partition, (list, tuple)) and any(tp.topic == partition[0] for tp in member.owned):
            return "K3"
    if failure == "cooperative-unsafe":
        # K2's seeding hands the member with no topics a partition another member still claims.
        receiver = _member(scenario, witness.get("assigned_to"))
        if receiver is not None and not receiver.topics:
            return "K2"
    if _past_count(scenario) and (
        # When the merge loses sync a partition still claimed by one member is handed to another.
        failure in ("nonexistent", "duplicate", "unassigned", "imbalance", "cooperative-unsafe")
        or (failure == "error" and java == "IllegalStateException")
    ):
        return "K1"
    if failure in ("cooperative-unsafe", "duplicate"):
        claimants = _claimants(scenario, witness.get("partition"))
        if scenario.protocol == "cooperative" and failure == "cooperative-unsafe" and any(m.version == 0 for m in claimants):
            return "v0-invisible"
        if any(m.version <= 1 for m in claimants):
            return "K5"
    v0 = {m.id for m in scenario.members if m.version == 0} if scenario.protocol == "cooperative" else set()
    if v0 and failure == "cooperative-unsafe":
        # Round 2: what a v0 member was handed in round 1 never reaches the leader either (R2).
        named = {c.get("member") for c in witness.get("claimants", ()) if isinstance(c, dict)}
        if named & v0:
            return "v0-invisible"
    if v0 and failure == "unstable" and v0 & {str(h).split(":")[-1] for h in
                                              (*(witness.get("first") or ()), *(witness.get("second") or ()))}:
        # Fed its own answer back, the leader still cannot see the v0 member's holdings (R2).
        return "v0-invisible"
    if failure == "unstable" and _no_alignment_gain(witness):
        return "rack-unstable"
    return None


def label_failures(scenario: Scenario, info: AssignorInfo, grade: Grade) -> tuple[HazardLabel, ...]:
    """One label per failure of ``grade`` that a known behaviour of Kafka's own assignor explains
    (the failures as ``failure.verdict_of`` names them: a time limit is ``time-limit``, never ``error``)."""
    if info.user or grade.valid:
        return ()
    failures: Iterable[tuple[str, dict]] = [(v.invariant, dict(v.witness)) for v in grade.violations]
    if grade.run_error is not None:
        failures = [(run_error_kind(grade.run_error), {"message": grade.run_error.message}), *failures]
    java = grade.run_error.kafka_exception if grade.run_error is not None else None
    out: list[HazardLabel] = []
    seen: set[str] = set()
    for failure, witness in failures:
        if failure in seen:
            continue
        seen.add(failure)
        release = info.release
        if release is not None and release.version != "current":
            refs = ", ".join(release.references)
            out.append(HazardLabel(failure, release.name, "historical", f"{release.description} ({refs})"))
            continue
        if not _sticky_family(info):
            continue
        rule = _rule_for(scenario, info, failure, witness, java)
        if rule is not None:
            category, text = RULES[rule]
            out.append(HazardLabel(failure, rule, category, text))
    # The next generation inherits the hazard's input (a claim past the count is claimed again, a
    # refused partition is handed back): an unexplained `unstable` beside a labelled failure shares its cause.
    if out and "unstable" in seen and all(label.failure != "unstable" for label in out):
        first = out[0]
        out.append(HazardLabel("unstable", first.rule, first.category, first.text))
    return tuple(out)
