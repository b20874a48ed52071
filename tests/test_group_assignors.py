"""User assignors for the group simulator tests (referenced as ``tests.test_group_assignors:NAME``).

``cooperative_roundrobin`` claims to support the cooperative protocol but deals partitions round robin
afresh every time, moving partitions straight from one member to another: exactly what
``validateCooperativeAssignment`` (R39) exists to stop.
"""

from __future__ import annotations


def cooperative_roundrobin(group: dict) -> dict:
    members = sorted(m["id"] for m in group["members"])
    subscribed = sorted({t for m in group["members"] for t in m["topics"]})
    out: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    i = 0
    for topic in subscribed:
        count = group["topics"].get(topic)
        count = count["partitions"] if isinstance(count, dict) else count
        for p in range(count or 0):
            takers = [m for m in members if topic in next(x["topics"] for x in group["members"] if x["id"] == m)]
            if not takers:
                continue
            owner = takers[i % len(takers)]
            i += 1
            out[owner].setdefault(topic, []).append(p)
    return out


cooperative_roundrobin.supported_protocols = ("cooperative", "eager")
cooperative_roundrobin.assignor_name = "coop-roundrobin"


def always_fails(group: dict) -> dict:
    raise RuntimeError("this assignor cannot assign")


def test_cooperative_roundrobin_deals_every_partition_once():
    group = {"topics": {"t": 5}, "members": [{"id": "b", "topics": ["t"]}, {"id": "a", "topics": ["t"]}]}
    result = cooperative_roundrobin(group)
    assert result == {"a": {"t": [0, 2, 4]}, "b": {"t": [1, 3]}}
