"""Replay every tests/kafka_cases/*.json file through its assignor and check Kafka's asserted outcome.

The format is tests/kafka_cases/README.md: a scenario plus ``expect``. Each file runs through the
leader (``leader.lead``: wire encode/decode at each member's version, the assignor's user data),
and every expectation key the file gives is checked. Cooperative files may add ``follow_up``:
Kafka's ``CooperativeStickyAssignorTest.verifyValidityAndBalance`` replays follow-up rebalances
(owned = the round's result, generation 1) until nothing is revoked, and the assertions placed
after it see that final state (R40); ``follow_up`` holds those.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Mapping

import pytest

from stickyproof.lookup import get_assignor
from stickyproof.assignors.sticky import build_sticky_input, sticky_result
from stickyproof.errors import StickyproofError
from stickyproof.leader import lead
from stickyproof.model import Assignment, Scenario, TopicPartition, scenario_from_dict, tp_map_to_dict

from .checks import fully_balanced, placed_twice, rack_mismatches, rejoin, settle, verify_validity_and_balance

CASES = Path(__file__).parent / "kafka_cases"
FILES = sorted(CASES.glob("*.json"))
STICKY_FILES = [p for p in FILES if p.name.startswith(("sticky-", "cooperative-sticky-"))]

ROUND_KEYS = {
    "assignment", "lists", "rack_mismatches", "sizes", "sizes_sorted", "size_range", "topic_counts", "subset_of",
    "superset_of", "intersects", "valid_balanced", "fully_balanced", "no_duplicates",
}
KEYS = ROUND_KEYS | {
    "assignor", "mechanism", "kafka_test", "note", "transferring", "transferring_count", "error", "error_message", "follow_up",
    "direct", "properties",
}
# ``properties`` (the general-path files' spelling): valid -> no partition twice, only subscribed ones;
# balanced -> R33; fully_balanced -> max - min <= 1. ``sticky`` (Kafka's isSticky) needs the general
# path's movement record, which the leader does not expose: tests/test_general.py checks it.
PROPERTIES = {"valid": "valid_balanced", "balanced": "valid_balanced", "fully_balanced": "fully_balanced"}


def load_case(path: Path) -> tuple[Scenario, dict[str, Any]]:
    doc = json.loads(path.read_text())
    expect = doc.pop("expect")
    unknown = set(expect) - KEYS
    assert not unknown, f"{path.name}: unknown expect keys {sorted(unknown)}"
    unknown = set(expect.get("follow_up", {})) - ROUND_KEYS
    assert not unknown, f"{path.name}: unknown follow_up keys {sorted(unknown)}"
    assert expect.get("kafka_test") and expect.get("mechanism"), f"{path.name}: kafka_test and mechanism are required"
    return scenario_from_dict(doc), expect


def _tps(doc: Mapping[str, list[int]]) -> set[TopicPartition]:
    return {TopicPartition(t, p) for t, ps in doc.items() for p in ps}


def check_round(scenario: Scenario, assignment: Assignment, expect: Mapping[str, Any], where: str) -> list[str]:
    """Compare one round's assignment with the round keys of ``expect``."""
    problems: list[str] = []
    got = assignment.assignment
    sizes = {m: len(v) for m, v in got.items()}
    if "assignment" in expect:
        canonical = {m: tp_map_to_dict(v) for m, v in got.items()}
        want = {m: {t: sorted(ps) for t, ps in v.items()} for m, v in expect["assignment"].items()}
        for m, v in want.items():
            if canonical.get(m) != v:
                problems.append(f"{where}assignment[{m}]: expected {v}, got {canonical.get(m)}")
    if "lists" in expect:
        for m, v in expect["lists"].items():
            actual = [[p.topic, p.partition] for p in got.get(m, ())]
            if actual != v:
                problems.append(f"{where}lists[{m}]: expected {v}, got {actual}")
    if "rack_mismatches" in expect:
        mismatched = rack_mismatches(scenario, got)
        if mismatched != expect["rack_mismatches"]:
            problems.append(f"{where}rack_mismatches: expected {expect['rack_mismatches']}, got {mismatched}")
    if "sizes" in expect and {m: sizes.get(m) for m in expect["sizes"]} != expect["sizes"]:
        problems.append(f"{where}sizes: expected {expect['sizes']}, got {sizes}")
    if "sizes_sorted" in expect and sorted(sizes.values()) != expect["sizes_sorted"]:
        problems.append(f"{where}sizes_sorted: expected {expect['sizes_sorted']}, got {sorted(sizes.values())}")
    if "size_range" in expect:
        lo, hi = expect["size_range"]
        if not all(lo <= n <= hi for n in sizes.values()):
            problems.append(f"{where}size_range: expected every size in [{lo}, {hi}], got {sizes}")
    if "topic_counts" in expect:
        for m, v in got.items():
            for topic, n in expect["topic_counts"].items():
                if sum(p.topic == topic for p in v) != n:
                    problems.append(f"{where}topic_counts: {m} holds {sum(p.topic == topic for p in v)} of {topic}, expected {n}")
    for key, test, word in (
        ("subset_of", lambda mine, ref: mine <= ref, "within"),
        ("superset_of", lambda mine, ref: mine >= ref, "containing"),
        ("intersects", lambda mine, ref: bool(mine & ref), "sharing a partition with"),
    ):
        for m, ref in expect.get(key, {}).items():
            if not test(set(got[m]), _tps(ref)):
                problems.append(f"{where}{key}[{m}]: expected a result {word} {ref}, got {tp_map_to_dict(got[m])}")
    if expect.get("valid_balanced"):
        problems += [where + p for p in verify_validity_and_balance(scenario, assignment)]
    if expect.get("fully_balanced") and not fully_balanced(got):
        problems.append(f"{where}fully_balanced: sizes {sizes}")
    if expect.get("no_duplicates") and placed_twice(got):
        problems.append(f"{where}no_duplicates: assigned twice: {sorted(map(str, placed_twice(got)))}")
    return problems


def follow_up_rounds(scenario: Scenario, assignor: str, assignment: Assignment) -> tuple[Scenario, Assignment]:
    """R40 as ``CooperativeStickyAssignorTest.verifyValidityAndBalance`` replays it (at most 4 rebalances):
    every member rejoins at generation 1, subscription v3, owning the round's result."""
    return settle(
        scenario,
        lambda s: lead(s, assignor).assignment,
        answer=assignment,
        next_round=functools.partial(rejoin, generation=1, version=3),
    )


def transferring_of(scenario: Scenario, assignor: str, result) -> Mapping[TopicPartition, str] | None:
    """Kafka's ``assignor.partitionsTransferringOwnership``: the sticky algorithm's record before any adjustment."""
    info = get_assignor(assignor)
    inp = build_sticky_input(result.group, info.release)
    return sticky_result(inp, info.release).partitions_transferring_ownership


def replay(path: Path) -> None:
    scenario, expect = load_case(path)
    assignor = expect["assignor"]
    direct = bool(expect.get("direct", False))
    if "error" in expect:
        with pytest.raises(StickyproofError) as info:
            lead(scenario, assignor, direct=direct)
        java = getattr(info.value, "kafka_exception", None) or ""
        assert expect["error"] in {type(info.value).__name__, java, java.rsplit(".", 1)[-1]}, str(info.value)
        assert expect.get("error_message", "") in str(info.value)
        return
    result = lead(scenario, assignor, direct=direct)
    checks = dict(expect)
    for prop in expect.get("properties", []):
        assert prop in PROPERTIES or prop == "sticky", f"{path.name}: unknown property {prop!r}"
        if prop in PROPERTIES:
            checks[PROPERTIES[prop]] = True
    problems = check_round(scenario, result.assignment, checks, "")
    if "transferring" in expect or "transferring_count" in expect:
        transferring = transferring_of(scenario, assignor, result)
        if "transferring" in expect:
            want = expect["transferring"]
            got = None if transferring is None else {str(k): v for k, v in transferring.items()}
            if got != want:
                problems.append(f"transferring: expected {want}, got {got}")
        if "transferring_count" in expect and len(transferring or {}) != expect["transferring_count"]:
            problems.append(f"transferring_count: expected {expect['transferring_count']}, got {len(transferring or {})}")
    if "follow_up" in expect:
        final_scenario, final = follow_up_rounds(scenario, assignor, result.assignment)
        problems += check_round(final_scenario, final, expect["follow_up"], "follow_up.")
    assert not problems, f"{path.name} ({expect['kafka_test']}):\n  " + "\n  ".join(problems) + f"\nmechanism: {expect['mechanism']}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_kafka_case(path: Path):
    replay(path)


def test_every_sticky_kafka_test_has_a_case():
    """Every assignment test of §7's three sticky test classes is present (unit tests of memberData live in test_sticky.py)."""
    named = {json.loads(p.read_text())["expect"]["kafka_test"].split("[")[0] for p in STICKY_FILES}
    abstract = {
        "testOneConsumerNoTopic", "testOneConsumerNonexistentTopic", "testOneConsumerOneTopic",
        "testOnlyAssignsPartitionsFromSubscribedTopics", "testOneConsumerMultipleTopics", "testTwoConsumersOneTopicOnePartition",
        "testTwoConsumersOneTopicTwoPartitions", "testMultipleConsumersMixedTopicSubscriptions", "testTwoConsumersTwoTopicsSixPartitions",
        "testConsumerOwningMinQuotaExpectedMaxQuota", "testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers",
        "testAllConsumersAreUnderMinQuota", "testAddRemoveConsumerOneTopic", "testTopicBalanceAfterReassignment",
        "testAddRemoveTwoConsumersTwoTopics", "testPoorRoundRobinAssignmentScenario", "testAddRemoveTopicTwoConsumers",
        "testReassignmentAfterOneConsumerLeaves", "testReassignmentAfterOneConsumerAdded", "testSameSubscriptions",
        "testSubscriptionNotEqualAndAssignSamePartitionWith3Generation", "testLargeAssignmentWithMultipleConsumersLeavingAndRandomSubscription",
        "testNewSubscription", "testMoveExistingAssignments", "testStickiness", "testAssignmentUpdatedForDeletedTopic",
        "testNoExceptionThrownWhenOnlySubscribedTopicDeleted", "testReassignmentWithRandomSubscriptionsAndChanges",
        "testAllConsumersReachExpectedQuotaAndAreConsideredFilled", "testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration",
        "testOwnedPartitionsAreInvalidatedForConsumerWithNoGeneration",
        "testPartitionsTransferringOwnershipIncludeThePartitionClaimedByMultipleConsumersInSameGeneration",
        "testEnsurePartitionsAssignedToHighestGeneration", "testNoReassignmentOnCurrentMembers",
        "testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration", "testRackAwareAssignmentWithUniformSubscription",
        "testRackAwareAssignmentWithNonEqualSubscription",
    }
    sticky = {
        "testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer",
        "testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithUnequalPartitionsPerConsumer",
        "testAssignmentWithMultipleGenerations1", "testAssignmentWithMultipleGenerations2", "testAssignmentWithConflictingPreviousGenerations",
        "testSchemaBackwardCompatibility", "testAssignorWithOldVersionSubscriptions",
    }
    cooperative = {
        "testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer",
        "testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithUnequalPartitionsPerConsumer",
        "testAssignorWithOldVersionSubscriptions", "testUniformSubscriptionTransferOwnershipListIsRight",
    }
    expected = (
        {"AbstractStickyAssignorTest." + t for t in abstract}
        | {"StickyAssignorTest." + t for t in sticky}
        | {"CooperativeStickyAssignorTest." + t for t in cooperative}
    )
    assert expected <= named, sorted(expected - named)
    for assignor in ("sticky", "cooperative-sticky"):
        per_assignor = set()
        for p in STICKY_FILES:
            e = json.loads(p.read_text())["expect"]
            if e["assignor"] == assignor:
                per_assignor.add(e["kafka_test"].split("[")[0])
        missing = {"AbstractStickyAssignorTest." + t for t in abstract} - per_assignor
        assert not missing, (assignor, sorted(missing))
