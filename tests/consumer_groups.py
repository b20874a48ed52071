"""Random consumer-protocol (KIP-848) groups for diffing the server-side ports against Kafka's jars.

``random_group(rng)`` draws a group the coordinator could hand an assignor: topics of 0-40
partitions (enough for ``HashSet<Integer>`` buckets to collide), members with random ids (so Java's
``HashMap`` order varies), some static; homogeneous or heterogeneous subscriptions, sometimes to a
topic that does not exist; and disjoint current targets that may name topics the member no longer
subscribes to, or a deleted topic, in shuffled claim order.
"""

from __future__ import annotations

import random
import string

from stickyproof.model import scenario_from_dict


def random_group_doc(rng: random.Random) -> dict:
    n_topics = rng.randint(1, 6)
    topics = {f"t{rng.choice(string.ascii_lowercase)}{i}": rng.choice([0, 1, 2, 3, 5, 7, 8, 12, 17, 24, 40]) for i in range(n_topics)}
    names = list(topics)
    n_members = rng.randint(1, 8)
    member_ids = [f"{rng.choice(['c', 'consumer-', 'm'])}{rng.randrange(10**rng.randint(1, 6))}-{i}" for i in range(n_members)]
    homogeneous = rng.random() < 0.5
    common = rng.sample(names, rng.randint(0, len(names)))
    if rng.random() < 0.1:
        common.append("missing")
    members = []
    taken: set[tuple[str, int]] = set()
    for mid in member_ids:
        subs = list(common) if homogeneous else rng.sample(names + ["missing"], rng.randint(0, len(names)))
        rng.shuffle(subs)
        owned: dict[str, list[int]] = {}
        for t in rng.sample(names, rng.randint(0, len(names))):
            parts = [p for p in range(topics[t]) if (t, p) not in taken and rng.random() < 0.4]
            if parts:
                rng.shuffle(parts)
                owned[t] = parts
                taken.update((t, p) for p in parts)
        if rng.random() < 0.05:
            deleted = ("deleted", rng.randrange(5))
            if deleted not in taken:
                owned["deleted"] = [deleted[1]]
                taken.add(deleted)
        members.append({
            "id": mid,
            "topics": subs,
            "owned": owned,
            "rack": None,
            "instance_id": f"i{rng.randrange(100)}-{mid}" if rng.random() < 0.3 else None,
        })
    return {"format": "stickyproof.scenario/1", "name": "random", "group_protocol": "consumer", "topics": topics, "members": members}


def random_group(rng: random.Random):
    return scenario_from_dict(random_group_doc(rng))
