"""Hypothesis strategy for the oracle tests: small groups that stress the claim rules.

Heterogeneous subscriptions (including a topic that does not exist), claims with generations
(stale, shared highest, on partitions past the count, on missing topics, on unsubscribed topics),
optional replica racks. Small enough to enumerate: at most ``max_partitions`` assignable
partitions and ``max_members`` members. Examples shrink toward one member, one topic, no claims.
"""

from __future__ import annotations

from hypothesis import strategies as st

from stickyproof.model import Member, Scenario, Topic, TopicPartition

TOPICS = ("t0", "t1", "t2")
GHOST = "gone"
RACKS = ("r0", "r1", "r2")


@st.composite
def small_groups(draw, *, max_members: int = 4, max_partitions: int = 10, racks: bool = True) -> Scenario:
    n_topics = draw(st.integers(1, len(TOPICS)))
    names = TOPICS[:n_topics]
    topics = []
    budget = max_partitions
    for name in names:
        count = draw(st.integers(0, min(5, budget)))
        budget -= count
        rack_lists = None
        if racks and count and draw(st.booleans()):
            rack_lists = tuple(
                tuple(sorted(draw(st.sets(st.sampled_from(RACKS), min_size=1, max_size=2)))) for _ in range(count)
            )
        topics.append(Topic(name, count, rack_lists))
    ids = draw(st.lists(st.sampled_from("abcd"[:max_members]), min_size=1, max_size=max_members, unique=True))
    claimable = [(t, p) for t in (*names, GHOST) for p in range(6)]
    members = []
    for mid in ids:
        subs = draw(st.lists(st.sampled_from((*names, GHOST)), max_size=3, unique=True))
        owned = draw(st.lists(st.sampled_from(claimable), max_size=4, unique=True))
        generation = draw(st.sampled_from((-1, 1, 2, 3)))
        rack = draw(st.sampled_from((None, *RACKS))) if racks else None
        members.append(Member(mid, tuple(subs), tuple(TopicPartition(t, p) for t, p in owned), generation, 3, rack))
    protocol = draw(st.sampled_from(("eager", "cooperative")))
    return Scenario(tuple(topics), tuple(members), protocol, "hypothesis")
