"""Links from proofs/ to the code: counterexamples replayed by the simulator, simulator ticks checked as model steps.

(being written)
"""

from __future__ import annotations


def rotate_claimed(group: dict) -> dict:
    """A cooperative user assignor that breaks the two-round rule on purpose (the one-round counterexample).

    Every claimed partition goes, at once, to the member after its claimant in id order; unclaimed
    partitions are dealt round robin. When a partition moves from a follower to the leader, the
    leader takes it in the same turn while the follower still fetches it.
    """
    members = sorted(m["id"] for m in group["members"])
    claimant: dict[tuple[str, int], str] = {}
    for m in group["members"]:
        for topic, parts in (m.get("owned") or {}).items():
            for p in parts:
                claimant.setdefault((topic, p), m["id"])
    out: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    dealt = 0
    for topic in sorted({t for m in group["members"] for t in m["topics"]}):
        count = group["topics"].get(topic)
        count = count["partitions"] if isinstance(count, dict) else (count or 0)
        for p in range(count):
            if (topic, p) in claimant:
                owner = members[(members.index(claimant[(topic, p)]) + 1) % len(members)]
            else:
                owner = members[dealt % len(members)]
                dealt += 1
            out[owner].setdefault(topic, []).append(p)
    return out


rotate_claimed.supported_protocols = ("cooperative", "eager")
rotate_claimed.assignor_name = "rotate-claimed"
