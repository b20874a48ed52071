"""RangeAssignor: one test per rule (R41, R43-R47), Kafka's own tests replayed, and the fast
implementation graded against a line-by-line transcription of ``RangeAssignor.assignPartitions``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stickyproof.assignors.base import GroupSubscription, Subscription
from stickyproof.assignors.range import assign_range, member_info_order, partitions_per_topic_in_hashmap_order
from stickyproof.javaorder import hashmap_capacity, hashmap_order, java_string_hash, java_string_key
from stickyproof.model import Assignment, Scenario, Topic, TopicPartition, tp_map_to_dict
from stickyproof.strategies import HAZARDS, groups

from .builders import direct_group, strs
from .checks import rack_mismatches, validity
from .test_kafka_cases import load_case

CASES = Path(__file__).parent / "kafka_cases"


def group_of(topics: dict[str, int | tuple[int, list[list[str]]]], members: list[Subscription]) -> GroupSubscription:
    meta = {}
    for name, spec in topics.items():
        if isinstance(spec, tuple):
            count, racks = spec
            meta[name] = Topic(name, count, tuple(tuple(r) for r in racks))
        else:
            meta[name] = Topic(name, spec)
    return GroupSubscription(meta, tuple(members))


def assert_valid_range(group: GroupSubscription, assignment: Assignment) -> None:
    """Every existing partition of a subscribed topic goes to exactly one of its subscribers; nothing else is given;
    per topic the subscribers' counts differ by at most one (the range guarantee, R43/R47)."""
    assert validity(group, assignment) == []
    subscribed = {t for s in group.members for t in s.topics}
    for t in subscribed & set(group.metadata):
        counts = [sum(tp.topic == t for tp in assignment.assignment[s.member_id]) for s in group.members if t in s.topics]
        assert max(counts) - min(counts) <= 1


# ------------------------------------------------------------------------------------------
# A transcription of Kafka's RangeAssignor, statement by statement, without the fast path's shortcuts.


def reference_range(group: GroupSubscription) -> dict[str, list[TopicPartition]]:
    by_map_order = hashmap_order(list(range(len(group.members))), lambda i: java_string_hash(group.members[i].member_id))
    members = [group.members[i] for i in by_map_order]
    # AbstractPartitionAssignor.assign: HashSet of subscribed topics, then the partitionsPerTopic HashMap.
    seen = list(dict.fromkeys(t for s in members for t in s.topics))
    set_order = hashmap_order(seen, capacity=hashmap_capacity(len(seen)))
    existing = [t for t in set_order if t in group.metadata and group.metadata[t].partitions > 0]
    topics = hashmap_order(existing, capacity=hashmap_capacity(len(existing)))

    def member_info_key(s: Subscription):
        return (0, java_string_key(s.instance_id)) if s.instance_id is not None else (1, java_string_key(s.member_id))

    racks = {s.member_id: s.rack for s in members if s.rack}
    states = []
    for t in topics:
        consumers = list(dict.fromkeys(s.member_id for s in sorted(members, key=member_info_key) if t in s.topics))
        meta = group.metadata[t]
        n = meta.partitions
        consumer_racks = {racks[c] for c in consumers if c in racks}
        partition_racks = [set(meta.racks[p]) if meta.racks else set() for p in range(n)] if consumer_racks else []
        all_partition_racks = set().union(*partition_racks) if partition_racks else set()
        needs = bool(consumer_racks) and not consumer_racks.isdisjoint(all_partition_racks) and not all(
            r == all_partition_racks for r in partition_racks
        )
        states.append(
            {"topic": t, "consumers": consumers, "racks": partition_racks, "needs": needs,
             "unassigned": list(range(n)), "count": {c: 0 for c in consumers},
             "q": n // len(consumers), "extra": n % len(consumers)}
        )
    out: dict[str, list[TopicPartition]] = {s.member_id: [] for s in group.members}

    def max_assignable(st_, c):
        return max(0, st_["q"] + (1 if st_["extra"] > 0 else 0) - st_["count"][c])

    def racks_match(st_, c, p):
        return c not in racks or (bool(st_["racks"]) and racks[c] in st_["racks"][p])

    def assign(c, ps, st_):
        out[c].extend(TopicPartition(st_["topic"], p) for p in ps)
        st_["count"][c] += len(ps)
        if st_["count"][c] > st_["q"]:
            st_["extra"] -= 1
        st_["unassigned"] = [p for p in st_["unassigned"] if p not in ps]

    def assign_ranges(st_, may_assign):
        for c in st_["consumers"]:
            if not st_["unassigned"]:
                break
            limit = max_assignable(st_, c)
            ps = [p for p in st_["unassigned"] if may_assign(st_, c, p)][:limit]
            if ps:
                assign(c, ps, st_)

    use_rack = any(s["needs"] for s in states)
    if use_rack:
        grouped: dict = {}
        for s in states:
            grouped.setdefault(tuple(s["consumers"]), {}).setdefault(len(s["racks"]), []).append(s)
        for consumers, by_size in grouped.items():
            for size, co in by_size.items():
                if len(co) > 1:
                    remaining = list(consumers)
                    for p in range(size):
                        match = [c for c in remaining if all(racks_match(s, c, p) and max_assignable(s, c) > 0 for s in co)]
                        if match:
                            for s in co:
                                assign(match[0], [p], s)
                            if not any(max_assignable(s, match[0]) > 0 for s in co):
                                remaining.remove(match[0])
                                if not remaining:
                                    break
                elif co[0]["needs"]:
                    assign_ranges(co[0], racks_match)
    for s in states:
        assign_ranges(s, lambda *_: True)
    if use_rack:
        for c in out:
            out[c].sort(key=lambda tp: (java_string_key(tp.topic), tp.partition))
    return out


# ------------------------------------------------------------------------------------------
# Rules


def test_R41_static_members_first_by_instance_id_then_dynamic_by_member_id():
    members = [
        Subscription("a", ("t",)),
        Subscription("b", ("t",), instance_id="y"),
        Subscription("c", ("t",), instance_id="x"),
        Subscription("0", ("t",)),
    ]
    assert [members[i].member_id for i in member_info_order(members)] == ["c", "b", "0", "a"]
    result = assign_range(group_of({"t": 4}, members))
    assert strs(result) == {"c": ["t-0"], "b": ["t-1"], "0": ["t-2"], "a": ["t-3"]}


def test_R41_member_ids_compare_as_java_strings():
    # U+FF5E sorts after U+1F600 in Python (code points) but before it in Java (UTF-16 code units: D83D DE00).
    members = [Subscription("\U0001F600", ("t",)), Subscription("\uff5e", ("t",))]
    assert strs(assign_range(group_of({"t": 2}, members))) == {"\U0001F600": ["t-0"], "\uff5e": ["t-1"]}


def test_R43_first_p_mod_n_subscribers_get_one_extra_partition_per_topic():
    members = [Subscription(f"c{i}", ("t1", "t2")) for i in range(3)]
    result = assign_range(group_of({"t1": 7, "t2": 2}, members))
    # t1: 7 = 3*2 + 1 -> c0 gets 3, c1 and c2 get 2; t2: 2 < 3 -> c0 and c1 get one each, c2 none.
    assert strs(result) == {
        "c0": ["t1-0", "t1-1", "t1-2", "t2-0"],
        "c1": ["t1-3", "t1-4", "t2-1"],
        "c2": ["t1-5", "t1-6"],
    }


def test_R43_lists_follow_the_partitions_per_topic_hashmap_order():
    # String.hashCode: t1 = 3645, t2 = 3646, t10 = 113043; spread() & 15 puts them in buckets 13, 14, 2.
    result = assign_range(group_of({"t1": 1, "t2": 1, "t10": 1}, [Subscription("c", ("t1", "t2", "t10"))]))
    assert strs(result) == {"c": ["t10-0", "t1-0", "t2-0"]}
    assert list(partitions_per_topic_in_hashmap_order(group_of({"t1": 1, "t2": 1, "t10": 1}, [Subscription("c", ("t1", "t2", "t10"))]))) == [
        "t10", "t1", "t2"
    ]


def test_R43_only_existing_non_empty_subscribed_topics_are_assigned():
    members = [Subscription("a", ("t", "ghost", "empty")), Subscription("b", ())]
    result = assign_range(group_of({"t": 2, "empty": 0, "other": 5}, members))
    assert strs(result) == {"a": ["t-0", "t-1"], "b": []}


def test_R14_empty_group_gets_an_empty_assignment():
    assert assign_range(group_of({"t": 3}, [])).assignment == {}


SUBSET_RACKS = [["a"], ["b"], ["c"], ["a"], ["b"], ["c"]]


def test_R44_rack_matching_only_when_some_partition_is_not_on_every_rack():
    members = [Subscription(f"c{i}", ("t",), rack=r) for i, r in enumerate("abc")]
    everywhere = assign_range(group_of({"t": (6, [["a", "b", "c"]] * 6)}, members))
    assert strs(everywhere) == {"c0": ["t-0", "t-1"], "c1": ["t-2", "t-3"], "c2": ["t-4", "t-5"]}
    subset = assign_range(group_of({"t": (6, SUBSET_RACKS)}, members))
    assert strs(subset) == {"c0": ["t-0", "t-3"], "c1": ["t-1", "t-4"], "c2": ["t-2", "t-5"]}
    # Consumer racks disjoint from the replica racks: off, plain ranges.
    other = [Subscription(f"c{i}", ("t",), rack=r) for i, r in enumerate("def")]
    assert strs(assign_range(group_of({"t": (6, SUBSET_RACKS)}, other)))["c0"] == ["t-0", "t-1"]
    # An empty rack string is no rack.
    blank = [Subscription(f"c{i}", ("t",), rack="") for i in range(3)]
    assert strs(assign_range(group_of({"t": (6, SUBSET_RACKS)}, blank)))["c0"] == ["t-0", "t-1"]


def test_R44_one_rack_aware_topic_turns_on_sorted_lists_for_the_whole_assignment():
    # t10 iterates before t1 (see the R43 order test); with t1 rack-aware every list is sorted.
    members = [Subscription("c0", ("t1", "t10"), rack="a"), Subscription("c1", ("t1", "t10"), rack="b")]
    result = assign_range(group_of({"t1": (2, [["a"], ["b"]]), "t10": 2}, members))
    assert strs(result) == {"c0": ["t1-0", "t10-0"], "c1": ["t1-1", "t10-1"]}
    plain = assign_range(group_of({"t1": 2, "t10": 2}, members))
    assert strs(plain) == {"c0": ["t10-0", "t1-0"], "c1": ["t10-1", "t1-1"]}


def test_R45_co_partitioned_topics_give_each_partition_index_to_one_member():
    members = [Subscription("c0", ("x", "y"), rack="a"), Subscription("c1", ("x", "y"), rack="b")]
    # Partition i of x and of y sit on the same rack, alternating a, b.
    racks = [["a"], ["b"], ["a"], ["b"]]
    result = assign_range(group_of({"x": (4, racks), "y": (4, racks)}, members))
    assert strs(result) == {"c0": ["x-0", "x-2", "y-0", "y-2"], "c1": ["x-1", "x-3", "y-1", "y-3"]}
    # If y's racks disagree with x's at every index, no member matches both: co-partitioning wins, plain ranges.
    flipped = [["b"], ["a"], ["b"], ["a"]]
    result = assign_range(group_of({"x": (4, racks), "y": (4, flipped)}, members))
    assert strs(result) == {"c0": ["x-0", "x-1", "y-0", "y-1"], "c1": ["x-2", "x-3", "y-2", "y-3"]}


def test_R45_a_member_without_a_rack_matches_every_partition():
    members = [Subscription("c0", ("t",)), Subscription("c1", ("t",), rack="a")]
    result = assign_range(group_of({"t": (4, [["a"], ["a"], ["b"], ["b"]])}, members))
    # c0 (no rack) takes the two lowest partitions, c1 finds no rack-a partition left: it gets t-2, t-3 in phase 2.
    assert strs(result) == {"c0": ["t-0", "t-1"], "c1": ["t-2", "t-3"]}


def test_R46_room_allows_the_extra_partition_only_while_fewer_than_r_members_exceeded_q():
    # 5 partitions, 2 members: q = 2, r = 1. Every partition is on rack a except t-4.
    members = [Subscription("c0", ("t",), rack="a"), Subscription("c1", ("t",), rack="a")]
    result = assign_range(group_of({"t": (5, [["a"], ["a"], ["a"], ["a"], ["b"]])}, members))
    # c0 takes 3 rack-a partitions (room q+1 while r = 1); then c1's room is q = 2: t-3, and t-4 in phase 2.
    assert strs(result) == {"c0": ["t-0", "t-1", "t-2"], "c1": ["t-3", "t-4"]}


def test_R47_balance_wins_over_rack_alignment():
    # All partitions on rack a; c1 is on rack b and still gets its full share, misaligned.
    members = [Subscription("c0", ("t",), rack="a"), Subscription("c1", ("t",), rack="b")]
    result = assign_range(group_of({"t": (4, [["a"], ["a"], ["a"], ["b"]])}, members))
    assert strs(result) == {"c0": ["t-0", "t-1"], "c1": ["t-2", "t-3"]}
    assert_valid_range(group_of({"t": (4, [["a"], ["a"], ["a"], ["b"]])}, members), result)


# ------------------------------------------------------------------------------------------
# Kafka's tests, replayed from tests/kafka_cases


def kafka_case_files(prefix: str) -> list[Path]:
    return sorted(CASES.glob(f"{prefix}-*.json"))


def replay_case(path: Path, assign) -> None:
    scenario, expect = load_case(path)
    group = direct_group(scenario)
    result = assign(group)
    got = {m: tp_map_to_dict(tps) for m, tps in result.assignment.items()}
    assert got == expect["assignment"], expect["mechanism"]
    if "lists" in expect:
        assert {m: [[tp.topic, tp.partition] for tp in tps] for m, tps in result.assignment.items()} == expect["lists"]
    if "rack_mismatches" in expect:
        assert rack_mismatches(scenario, result) == expect["rack_mismatches"]


def test_kafka_cases_are_all_present():
    # RangeAssignorTest (20 tests, most parameterised) and AbstractPartitionAssignorTest.testUseRackAwareAssignment.
    tests = {json.loads(p.read_text())["expect"]["kafka_test"].split("[")[0] for p in kafka_case_files("range")}
    assert len(tests) == 21
    assert len(kafka_case_files("range")) >= 90


@pytest.mark.parametrize("path", kafka_case_files("range"), ids=lambda p: p.stem)
def test_kafka_range_case(path: Path):
    replay_case(path, assign_range)


# ------------------------------------------------------------------------------------------
# The fast path graded by the transcription


@settings(max_examples=150)
@given(groups(hazards=HAZARDS, max_members=7, max_topics=4, max_partitions=9, racks=st.sampled_from(("none", "replicas", "both", "members")),
              static=st.sampled_from(("none", "some", "all"))))
def test_range_equals_line_by_line_transcription(scenario: Scenario):
    group = direct_group(scenario)
    result = assign_range(group)
    assert {m: list(v) for m, v in result.assignment.items()} == reference_range(group)
    assert_valid_range(group, result)


@settings(max_examples=50)
@given(groups(hazards=HAZARDS, max_members=6, racks=st.sampled_from(("none", "both"))), st.randoms(use_true_random=False))
def test_range_does_not_depend_on_join_order(scenario: Scenario, rnd: random.Random):
    # Unless two members share an instance id: Kafka's stable sort then keeps HashMap order, which can
    # depend on insertion order within a bucket (R41, member_info_order).
    instance_ids = [m.instance_id for m in scenario.members if m.instance_id is not None]
    assume(len(set(instance_ids)) == len(instance_ids))
    members = list(scenario.members)
    rnd.shuffle(members)
    shuffled = Scenario(scenario.topics, tuple(members), scenario.protocol, scenario.name)
    a, b = assign_range(direct_group(scenario)), assign_range(direct_group(shuffled))
    assert {m: set(v) for m, v in a.assignment.items()} == {m: set(v) for m, v in b.assignment.items()}


def test_range_many_topics_colliding_in_the_topic_set_keep_kafka_list_order():
    # 40 topics: several share a HashSet bucket, so the leader's insertion order matters.
    names = [f"topic-{i}" for i in range(40)]
    members = [Subscription(f"m{i}", tuple(reversed(names)) if i % 2 else tuple(names)) for i in range(5)]
    group = group_of({n: 3 for n in names}, members)
    assert {m: list(v) for m, v in assign_range(group).assignment.items()} == reference_range(group)
