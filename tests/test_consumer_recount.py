"""The consumer-group recount (oracle/consumer_recount.py) against the plain loop it replaced, on
answers an assignor could give: partitions of topics the metadata lacks, partitions past a topic's
count, a partition listed twice, members the scenario does not have. Grading counts assignors'
answers with it, so it must count whatever it is handed exactly as the loop did; and the
placement check names each way an answer can fail to be a target."""

from __future__ import annotations

import random

from stickyproof.model import Assignment, TopicPartition, scenario_from_dict
from stickyproof.oracle.consumer import consumer_objective, solve_consumer, subscribers_of
from stickyproof.oracle.consumer_recount import recount_placed


def _loop_objective(scenario, assignment):
    """K1-K4 one partition at a time (the recount as it was written before the arrays)."""
    holders = {tp: m.id for m in scenario.members for tp in m.owned}
    racks = {m.id: m.rack or None for m in scenario.members}
    replicas = {t.name: None if t.racks is None else [frozenset(r) for r in t.racks] for t in scenario.topics}
    sum_squares = spread = rack_local = kept = 0
    for member, tps in assignment.assignment.items():
        sum_squares += len(tps) ** 2
        per_topic: dict[str, int] = {}
        rack = racks.get(member)
        for tp in tps:
            per_topic[tp.topic] = per_topic.get(tp.topic, 0) + 1
            if rack is not None:
                rr = replicas.get(tp.topic)
                rack_local += rr is not None and tp.partition < len(rr) and rack in rr[tp.partition]
            kept += holders.get(tp) == member
        spread += sum(c * c for c in per_topic.values())
    return (sum_squares, spread, rack_local, kept)


def _scenario(rng: random.Random) -> dict:
    topics = {}
    for i in range(rng.randint(1, 4)):
        n = rng.randint(1, 6)
        racks = [rng.sample("xyz", rng.randint(0, 2)) for _ in range(n)] if rng.random() < 0.6 else None
        topics[f"t{i}"] = {"partitions": n, "racks": racks} if racks else n
    count = {t: (v if isinstance(v, int) else v["partitions"]) for t, v in topics.items()}
    members, taken = [], set()
    for i in range(rng.randint(1, 5)):
        owned = {}
        for t in list(count) + (["gone"] if rng.random() < 0.3 else []):
            parts = [p for p in range(count.get(t, 3)) if (t, p) not in taken and rng.random() < 0.4]
            taken.update((t, p) for p in parts)
            if parts:
                owned[t] = parts
        members.append({"id": f"m{i}", "topics": rng.sample(list(count) + ["gone"], rng.randint(1, len(count))),
                        "owned": owned, "rack": rng.choice([None, "x", "y"])})
    return {"format": "stickyproof.scenario/1", "group_protocol": "consumer", "topics": topics, "members": members}


def _answer(rng: random.Random, scenario) -> Assignment:
    """Every partition somewhere, plus strays: unknown topics, partitions past the count, repeats, strangers."""
    ids = [m.id for m in scenario.members] + ["stranger"]
    out: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    for t in scenario.topics:
        for p in range(t.partitions + rng.randint(0, 2)):
            for _ in range(rng.choice([1, 1, 1, 2])):
                out[rng.choice(ids)].append(TopicPartition(t.name, p))
    if rng.random() < 0.5:
        out[rng.choice(ids)].append(TopicPartition("gone", rng.randint(0, 3)))
    return Assignment({m: tuple(tps) for m, tps in out.items()})


def test_the_recount_counts_every_answer_as_the_loop_does():
    rng = random.Random(11)
    for _ in range(400):
        scenario = scenario_from_dict(_scenario(rng))
        answer = _answer(rng, scenario)
        got = consumer_objective(scenario, answer)
        assert (got.sum_squares, got.spread, got.rack_local, got.kept) == _loop_objective(scenario, answer)


def test_the_oracle_answer_is_placed_once_on_subscribers_and_counted_as_the_loop_does():
    rng = random.Random(12)
    for _ in range(100):
        scenario = scenario_from_dict(_scenario(rng))
        opt = solve_consumer(scenario)
        assert opt.proven, opt.detail
        assert recount_placed(scenario, opt.assignment, subscribers_of(scenario))[1] == []
        o = opt.objective
        assert (o.sum_squares, o.spread, o.rack_local, o.kept) == _loop_objective(scenario, opt.assignment)


def test_the_placement_check_names_a_missing_a_repeated_a_stray_and_an_unsubscribed_partition():
    scenario = scenario_from_dict({"format": "stickyproof.scenario/1", "group_protocol": "consumer",
                                   "topics": {"a": 2, "b": 1},
                                   "members": [{"id": "m0", "topics": ["a"]}, {"id": "m1", "topics": ["a", "b"]}]})
    subs = subscribers_of(scenario)
    good = Assignment({"m0": (TopicPartition("a", 0),), "m1": (TopicPartition("a", 1), TopicPartition("b", 0))})
    assert recount_placed(scenario, good, subs)[1] == []
    bad = Assignment({"m0": (TopicPartition("a", 0), TopicPartition("a", 0), TopicPartition("b", 0), TopicPartition("c", 0)),
                      "m1": ()})
    failures = recount_placed(scenario, bad, subs)[1]
    assert any("1 partitions placed on no member (e.g. a-1)" in f for f in failures), failures
    assert any("1 partitions placed more than once (e.g. a-0)" in f for f in failures), failures
    assert any("1 partitions placed that the metadata lacks (e.g. c-0)" in f for f in failures), failures
    assert any("1 partitions on a member not subscribed to their topic (e.g. b-0 on m0)" in f for f in failures), failures
