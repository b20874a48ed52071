"""Consumer-group (KIP-848) histories: the target assignments the group coordinator computes as a group lives.

``draw_consumer_history(seed, index, scale=...)`` is a pure function of its arguments (a BLAKE2b
digest of ``"{seed}:{index}"`` seeds a ``random.Random`` read through ``random()`` only, as
``histories.draw_history``): the starting topics and a schedule of membership and metadata events.
``run_consumer_history(history, assign)`` replays it with one server-side assignor and returns, for
every event that bumps the group epoch, the ``GroupSpec`` the coordinator hands the assignor (a
consumer-group ``Scenario``) and its answer.

The model, and what it leaves out (docs/sweep.md, "KIP-848 lines"):

* each member's current target is the previous target the coordinator computed for it; a member
  that leaves (heartbeat with epoch -1) or crashes (its session expires) is dropped with its target;
  a new member joins with an empty target;
* a static member's restart (leave with epoch -2, rejoin with a new member id and the same
  ``group.instance.id``) keeps its target under its new member id and does not bump the group epoch
  by itself (Kafka 4.x's coordinator copies the old member's target to the new one without running
  the assignor): its new id reaches the assignor at the next computation;
* Kafka computes the target at the first heartbeat after the epoch bump; the model assumes one
  arrives before the next event, so every bump is one computation;
* a subscription change, partitions added to a subscribed topic, and a subscribed topic created
  each bump the group epoch; a rack never changes under a running member;
* when the assignor throws, the coordinator keeps the previous target (the heartbeat fails);
* reconciliation (what members actually own while they revoke and acquire) is not modelled here:
  the assignor's input is the target, which is what Kafka hands it (issue 23 models reconciliation).

Presets (``CONSUMER_SCALES``): ``small`` (2-8 members) and ``medium`` (10-24 members); every
history joins its first members one heartbeat at a time, as the coordinator sees them.
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from ..errors import InvalidScenario, StickyproofError
from ..model import Assignment, Member, Scenario, Topic
from ..model.values import CONSUMER

__all__ = [
    "ConsumerScale",
    "CONSUMER_SCALES",
    "ConsumerEvent",
    "ConsumerHistory",
    "ConsumerStep",
    "draw_consumer_history",
    "run_consumer_history",
    "consumer_scale_of",
]

RACKS = ("r0", "r1", "r2")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

#: Episode kinds, drawn with these weights (plain first).
EPISODES: tuple[tuple[str, int], ...] = (
    ("join", 3),
    ("leave", 2),
    ("crash", 2),
    ("static-restart", 3),
    ("rolling-restart", 1),
    ("subscription-change", 2),
    ("partitions-added", 2),
    ("topic-created", 1),
    ("topic-deleted", 1),
)


@dataclass(frozen=True)
class ConsumerScale:
    """Sizes of one preset: members at the start, topics, partitions per topic, episodes after the start."""

    name: str
    members: tuple[int, int]
    topics: tuple[int, int]
    partitions: tuple[int, int]
    episodes: tuple[int, int]


CONSUMER_SCALES: dict[str, ConsumerScale] = {
    "small": ConsumerScale("small", (2, 8), (1, 3), (1, 12), (3, 8)),
    "medium": ConsumerScale("medium", (10, 24), (2, 5), (6, 40), (3, 6)),
}


def consumer_scale_of(index: int) -> str:
    """The preset of consumer history ``index``: every 8th medium, the rest small."""
    return "medium" if index % 8 == 7 else "small"


@dataclass(frozen=True)
class ConsumerEvent:
    """One change the coordinator hears of. ``kind``: ``join``, ``leave``, ``crash``, ``static-restart``,
    ``subscribe``, ``partitions``, ``topic-created``, ``topic-deleted``; ``text``: the cause as a person names it;
    ``fields``: what changes (a member's fields, a member id, a topic's count and racks)."""

    kind: str
    text: str
    fields: Mapping[str, Any]

    @property
    def bumps_epoch(self) -> bool:
        """Whether the coordinator computes a new target for it (a static restart alone does not)."""
        return self.kind != "static-restart"


@dataclass(frozen=True)
class ConsumerHistory:
    """A drawn life of a consumer group: the starting topics (``start``, no members), its events in
    order (the first ``start_members`` are the joins that form the group), the episodes drawn (for
    reading), whether subscriptions are one for all, and whether members and replicas carry racks."""

    seed: int
    index: int
    scale: str
    start: Scenario
    events: tuple[ConsumerEvent, ...]
    episodes: tuple[str, ...]
    subscription: str
    racks: bool
    start_members: int

    @property
    def name(self) -> str:
        return self.start.name

    @property
    def computations(self) -> int:
        return sum(1 for e in self.events if e.bumps_epoch)


@dataclass(frozen=True)
class ConsumerStep:
    """One target computation: its number (1, 2, ...), the group epoch it is for, the event that
    bumped it, the group as the coordinator hands it to the assignor, and the answer (None, with
    ``error``, when the assignor threw: the previous target stays)."""

    number: int
    epoch: int
    event: ConsumerEvent
    scenario: Scenario
    answer: Assignment | None
    error: StickyproofError | None
    assign_seconds: float


def consumer_history_seed(seed: int, index: int) -> int:
    digest = hashlib.blake2b(f"{seed}:{index}".encode("ascii"), digest_size=8, person=b"stickyproof-k848").digest()
    return int.from_bytes(digest, "big")


class _Draw:
    """Choices from ``random.Random.random()`` only, so a seed draws the same history on any Python."""

    def __init__(self, seed: int):
        self._rng = random.Random(seed)

    def integer(self, low: int, high: int) -> int:
        return low + min(high - low, int(self._rng.random() * (high - low + 1)))

    def chance(self, p: float) -> bool:
        return self._rng.random() < p

    def choice(self, items: list[Any] | tuple[Any, ...]) -> Any:
        return items[self.integer(0, len(items) - 1)]

    def weighted(self, items: tuple[tuple[str, int], ...]) -> str:
        point = self.integer(0, sum(w for _, w in items) - 1)
        for item, weight in items:
            if point < weight:
                return item
            point -= weight
        raise AssertionError("unreachable")

    def subset(self, items: list[Any], k: int) -> list[Any]:
        pool, out = list(items), []
        for _ in range(min(k, len(pool))):
            out.append(pool.pop(self.integer(0, len(pool) - 1)))
        return out

    def member_id(self) -> str:
        """A member id as Kafka 4.x clients make one (``Uuid.randomUuid().toString()``: 22 base64url
        characters), so the assignor's hash-ordered member maps meet realistic spellings."""
        return "".join(_B64[self.integer(0, 63)] for _ in range(22))


class _Plan:
    """The group as the draw sees it (members and topics, no targets): events are drawn against it."""

    def __init__(self, draw: _Draw, preset: ConsumerScale, name: str):
        self.draw = draw
        self.preset = preset
        self.racks = draw.chance(0.35)
        self.subscription = "heterogeneous" if draw.chance(0.3) else "homogeneous"
        count = draw.integer(*preset.topics)
        self.topics: dict[str, Topic] = {}
        for i in range(count):
            self._new_topic(f"t{i}", draw.integer(*preset.partitions))
        self.next_topic = count
        self.members: dict[str, dict[str, Any]] = {}
        self.next_instance = 0
        self.events: list[ConsumerEvent] = []
        self.episodes: list[str] = []
        self.name = name

    # -- values
    def _replica_racks(self, n: int) -> tuple[tuple[str, ...], ...] | None:
        if not self.racks:
            return None
        return tuple(tuple(sorted(self.draw.subset(list(RACKS), self.draw.integer(1, 2)))) for _ in range(n))

    def _new_topic(self, name: str, n: int) -> Topic:
        topic = Topic(name, n, self._replica_racks(n))
        self.topics[name] = topic
        return topic

    def _subscription(self) -> tuple[str, ...]:
        names = sorted(self.topics)
        if self.subscription == "homogeneous":
            return tuple(names)
        return tuple(sorted(self.draw.subset(names, self.draw.integer(1, len(names)))))

    def _event(self, kind: str, text: str, **fields: Any) -> None:
        self.events.append(ConsumerEvent(kind, text, fields))

    # -- episodes
    def join(self) -> None:
        static = self.draw.chance(0.5)
        instance = None
        if static:
            instance = f"i{self.next_instance}"
            self.next_instance += 1
        mid = self.draw.member_id()
        fields = {"id": mid, "topics": self._subscription(), "rack": self.draw.choice(RACKS) if self.racks else None,
                  "instance_id": instance}
        self.members[mid] = fields
        self._event("join", f"{mid[:6]} joins" + (f" (static {instance})" if instance else ""), **fields)

    def leave(self, kind: str) -> bool:
        if len(self.members) < 2:
            return False
        mid = self.draw.choice(sorted(self.members))
        del self.members[mid]
        self._event(kind, f"{mid[:6]} " + ("leaves" if kind == "leave" else "crashes (session expired)"), id=mid)
        return True

    def restart(self, mid: str) -> None:
        """A static member restarts (same instance id, new member id, target kept); a dynamic one
        leaves with epoch -1 and comes back as a new member."""
        fields = self.members.pop(mid)
        new = self.draw.member_id()
        if fields["instance_id"] is not None:
            self.members[new] = {**fields, "id": new}
            self._event("static-restart", f"{fields['instance_id']} restarts as {new[:6]}", id=mid, new_id=new)
        else:
            self._event("leave", f"{mid[:6]} leaves to restart", id=mid)
            self.members[new] = {**fields, "id": new}
            self._event("join", f"{new[:6]} joins (restarted {mid[:6]})", **self.members[new])

    def subscribe(self, mid: str, topics: tuple[str, ...]) -> None:
        self.members[mid] = {**self.members[mid], "topics": topics}
        self._event("subscribe", f"{mid[:6]} subscribes to {','.join(topics)}", id=mid, topics=topics)

    def episode(self, kind: str) -> bool:
        d = self.draw
        if kind == "join":
            for _ in range(d.integer(1, 3)):
                self.join()
        elif kind in ("leave", "crash"):
            return self.leave(kind)
        elif kind == "static-restart":
            static = sorted(m for m, f in self.members.items() if f["instance_id"] is not None)
            if not static:
                return False
            self.restart(d.choice(static))
        elif kind == "rolling-restart":
            for mid in sorted(self.members):
                self.restart(mid)
        elif kind == "subscription-change":
            names = sorted(self.topics)
            if len(names) < 2:
                return False
            members = sorted(self.members)
            if self.subscription == "homogeneous":
                # a rolling deploy of a new subscription: every member in turn (mixed while it rolls)
                drop = d.choice(names)
                new = tuple(n for n in names if n != drop)
                for mid in d.subset(members, len(members)):
                    self.subscribe(mid, new)
                self.topics.pop(drop)  # nobody reads it any more: out of the group's metadata
            else:
                mid = d.choice(members)
                self.subscribe(mid, tuple(sorted(d.subset(names, d.integer(1, len(names))))))
        elif kind == "partitions-added":
            name = d.choice(sorted(self.topics))
            old = self.topics[name]
            count = old.partitions + d.integer(1, max(1, old.partitions))
            racks = None if old.racks is None else old.racks + self._replica_racks(count - old.partitions)
            self.topics[name] = Topic(name, count, racks)
            self._event("partitions", f"{name} grows to {count} partitions", topic=name, partitions=count, racks=racks)
        elif kind == "topic-created":
            name = f"t{self.next_topic}"
            self.next_topic += 1
            members = sorted(self.members)
            readers = members if self.subscription == "homogeneous" else d.subset(members, d.integer(1, len(members)))
            for mid in readers:  # subscribed first (the topic does not exist yet), then created
                self.subscribe(mid, tuple(sorted(set(self.members[mid]["topics"]) | {name})))
            topic = self._new_topic(name, d.integer(*self.preset.partitions))
            self._event("topic-created", f"{name} created with {topic.partitions} partitions", topic=name,
                        partitions=topic.partitions, racks=topic.racks)
        elif kind == "topic-deleted":
            # an administrator deletes a topic the group reads: members keep its name in their
            # subscriptions (a name resolves to no topic id any more), their targets keep its
            # partitions until the assignor drops them (both uniform builders and range do)
            names = sorted(self.topics)
            if len(names) < 2:
                return False
            name = d.choice(names)
            self.topics.pop(name)
            self._event("topic-deleted", f"{name} deleted", topic=name)
        return True


def draw_consumer_history(seed: int, index: int, *, scale: str | None = None) -> ConsumerHistory:
    """Consumer history ``index`` of the sweep seeded ``seed`` at ``scale`` (default ``consumer_scale_of(index)``)."""
    for name, value in (("seed", seed), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, int) or (name == "index" and value < 0):
            raise InvalidScenario(name, f"expected a{' non-negative' if name == 'index' else 'n'} integer, got {value!r}")
    scale = scale or consumer_scale_of(index)
    if scale not in CONSUMER_SCALES:
        raise InvalidScenario("scale", f"unknown consumer-group scale {scale!r} (known: {', '.join(CONSUMER_SCALES)})")
    preset = CONSUMER_SCALES[scale]
    draw = _Draw(consumer_history_seed(seed, index))
    name = f"kip848-{seed}-{index}"
    plan = _Plan(draw, preset, name)
    start_topics = tuple(plan.topics.values())
    start_members = draw.integer(*preset.members)
    for _ in range(start_members):
        plan.join()
    plan.episodes.append("start")
    for _ in range(draw.integer(*preset.episodes)):
        kind = draw.weighted(EPISODES)
        if plan.episode(kind):
            plan.episodes.append(kind)
    start = Scenario(start_topics, (), name=name, group_protocol=CONSUMER)
    return ConsumerHistory(seed, index, scale, start, tuple(plan.events), tuple(plan.episodes), plan.subscription,
                           plan.racks, start_members)


# ------------------------------------------------------------------------------------------
# The replay: what the coordinator hands the assignor at each epoch


def _apply(topics: dict[str, Topic], members: list[Member], event: ConsumerEvent) -> list[Member]:
    f = event.fields
    if event.kind == "join":
        return members + [Member(f["id"], tuple(f["topics"]), (), rack=f["rack"], instance_id=f["instance_id"])]
    if event.kind in ("leave", "crash"):
        return [m for m in members if m.id != f["id"]]
    if event.kind == "static-restart":
        return [replace(m, id=f["new_id"]) if m.id == f["id"] else m for m in members]
    if event.kind == "subscribe":
        return [replace(m, topics=tuple(f["topics"])) if m.id == f["id"] else m for m in members]
    if event.kind in ("partitions", "topic-created"):
        topics[f["topic"]] = Topic(f["topic"], f["partitions"], f["racks"])
        return members
    if event.kind == "topic-deleted":
        topics.pop(f["topic"])
        return members
    raise AssertionError(f"unknown event kind {event.kind!r}")


def _metadata(topics: dict[str, Topic], members: list[Member]) -> tuple[Topic, ...]:
    """The topics the group subscribes to and that exist (what the coordinator describes to the assignor)."""
    subscribed = {t for m in members for t in m.topics}
    return tuple(topics[n] for n in sorted(topics) if n in subscribed)


def run_consumer_history(history: ConsumerHistory, assign: Callable[[Scenario], Assignment]) -> tuple[ConsumerStep, ...]:
    """Replay ``history`` with ``assign`` (a server-side assignor as the coordinator calls it): one
    step per group-epoch bump, each handed the previous targets. An assignor's ``StickyproofError``
    is recorded on its step and the previous targets kept; anything else is stickyproof's and raises."""
    topics = {t.name: t for t in history.start.topics}
    members: list[Member] = []
    steps: list[ConsumerStep] = []
    epoch = 0
    for event in history.events:
        members = _apply(topics, members, event)
        if not event.bumps_epoch:
            continue
        epoch += 1
        scenario = Scenario(_metadata(topics, members), tuple(members), name=f"{history.name} epoch {epoch}",
                            group_protocol=CONSUMER)
        started = time.perf_counter()
        try:
            answer, error = assign(scenario), None
        except StickyproofError as exc:
            answer, error = None, exc
        seconds = time.perf_counter() - started
        steps.append(ConsumerStep(len(steps) + 1, epoch, event, scenario, answer, error, seconds))
        if answer is not None:
            members = [replace(m, owned=tuple(answer.assignment.get(m.id, ()))) for m in members]
    return tuple(steps)
