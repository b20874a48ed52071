"""Group histories: a consumer group's life drawn as a schedule of events (models/protocol.md §9).

``draw_history(seed, index, scale=...)`` is a pure function of its arguments, seeded like the
sampler (a BLAKE2b digest of ``"{seed}:{index}"``, choices from ``random.Random.random()`` only): the
starting cluster and a schedule of events in the simulator's vocabulary, as the event documents of
models/protocol.md §6 (``History.document()`` is the ``stickyproof.simulation/1`` document that
``stickyproof simulate`` replays; this module only writes data, the protocol is ``stickyproof.group``'s).
Nothing in it is a group state: every state a row is graded on is what the protocol makes of the
schedule, so it is reachable by construction. Which assignor the members run is not drawn; it is
given to the run (``stickyproof.group.stepper.run_history``), so every assignor meets the same life.

What the plan respects, because real clients cannot do otherwise (the rest is the protocol's work):

* a v0 client (before 2.4, no ``ownedPartitions``) runs eager only, and no member runs a possibly
  cooperative configuration while a v0 member is in the group: the KIP-429 upgrade raises every
  client to v1+ in its first bounce (members listing the cooperative assignor beside an eager one,
  still EAGER: protocol ``compatible``), and only the second bounce clears the pin (R36);
* versions only go up, partitions are only added, a deleted topic's name is never reused;
* an event only names a member that is running at that tick (a restarted member is back one tick
  after its downtime; a crashed one comes back, if at all, as a new process).

Presets (``SCALES``): ``small`` (a few members), ``medium``, ``large`` (>= 500 members and >= 50,000
partitions), ``production`` (2,000 members, 1,000,000 partitions). At large scales episodes touch a
few members each (a rolling bounce of 2,000 dynamic members is 4,000 rebalances), except KIP-429's
upgrade: a group drawn eager at those scales is being upgraded, so its first two episodes are the two
bounces of every member, a quarter of the group at a time (``_Plan._waves``), the same path as a small
group's and never a group pinned eager for its whole life. ``mix`` (default) picks the scale from the
index: every 100th history large, every 10th medium, the rest small.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from ..errors import InvalidScenario
from ..model import Scenario, Topic, scenario_to_dict
from .sampler import RandomDraw
from .space import Space

__all__ = ["History", "Scale", "SCALES", "MIX", "TIMING", "draw_history", "scale_of", "history_seed"]

MIX = "mix"

#: The timing every history is drawn for, in ticks, written into its document (models/protocol.md §1):
#: stalls are drawn shorter or longer than the session, slow callbacks around the rebalance timeout.
TIMING = {"session_timeout": 6, "rebalance_timeout": 10, "restart_downtime": 1}


@dataclass(frozen=True)
class Scale:
    """Sizes of one preset: member and topic counts, partitions per topic, episodes, and the most
    members one episode touches (``batch``; None: every member, e.g. a whole rolling bounce)."""

    name: str
    members: tuple[int, int]
    topics: tuple[int, int]
    partitions: tuple[int, int]
    episodes: tuple[int, int]
    batch: int | None
    variety: bool  # racks, two subscription cohorts, a topic nobody reads (small groups only: cheap to vary)


SCALES: dict[str, Scale] = {
    "small": Scale("small", (1, 6), (1, 3), (1, 12), (2, 8), None, True),
    "medium": Scale("medium", (8, 40), (2, 8), (8, 200), (3, 8), 8, True),
    "large": Scale("large", (500, 560), (50, 50), (1000, 1100), (2, 4), 3, False),
    "production": Scale("production", (2000, 2000), (100, 100), (10000, 10000), (1, 3), 2, False),
}


def scale_of(index: int, scale: str = MIX) -> str:
    """The preset history ``index`` is drawn at (``mix``: every 100th large, every 10th medium)."""
    if scale != MIX:
        if scale not in SCALES:
            raise InvalidScenario("scale", f"unknown scale {scale!r} (known: {MIX}, {', '.join(SCALES)})")
        return scale
    return "large" if index % 100 == 99 else "medium" if index % 10 == 9 else "small"


def history_seed(seed: int, index: int) -> int:
    """The 64-bit seed of history ``index`` of sweep ``seed`` (BLAKE2b of ``"{seed}:{index}"``, its own personalisation)."""
    digest = hashlib.blake2b(f"{seed}:{index}".encode("ascii"), digest_size=8, person=b"stickyproof-hist").digest()
    return int.from_bytes(digest, "big")


@dataclass(frozen=True)
class History:
    """A drawn life: the starting cluster (``scenario``: topics, no members; its protocol is the cap
    ``cooperative`` so the members' own pins decide, R36), the events as event documents in run order
    (the first members join at tick 0; read-only), the timing (``config`` overrides, §1), and the
    episodes drawn, in order, for reading and for reports."""

    seed: int
    index: int
    scale: str
    scenario: Scenario
    events: tuple[Mapping[str, Any], ...]
    config: Mapping[str, int]
    episodes: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def members(self) -> int:
        """Members at the start."""
        return sum(1 for e in self.events if e["at"] == 0 and e["event"] == "join")

    @property
    def partitions(self) -> int:
        """Partitions in the cluster at the start."""
        return sum(t.partitions for t in self.scenario.topics)

    def for_protocols(self, protocols: Iterable[str]) -> "History":
        """This life as clients whose assignor supports only ``protocols`` live it (R36). A client
        cannot run an assignor without eager support eagerly, nor at v0 (no ``ownedPartitions``):
        kafka-python's cooperative-sticky is such an assignor. So, for one, the eager and
        compatible pins are dropped (those members run cooperative from the start: there is no
        KIP-429 upgrade to make) and v0 members start at v1; every other event is unchanged."""
        if "eager" in set(protocols):
            return self

        def adapt(event: Mapping[str, Any]) -> Mapping[str, Any]:
            out = dict(event)
            if out.get("protocol") in ("eager", "compatible"):
                del out["protocol"]
            if out.get("version") == 0:
                out["version"] = 1
            return out

        return replace(self, events=tuple(adapt(e) for e in self.events))

    def document(self, assignor: str | None = None, without: Iterable[str] = ()) -> dict[str, Any]:
        """The ``stickyproof.simulation/1`` document that replays this history (``stickyproof simulate``)
        with every member configured with ``assignor`` and the ``--without`` switches ``without``."""
        doc: dict[str, Any] = {"format": "stickyproof.simulation/1", "name": self.name,
                               "scenario": scenario_to_dict(self.scenario), "config": dict(self.config),
                               "events": [dict(e) for e in self.events]}
        if without:
            doc["without"] = sorted(without)
        if assignor:
            doc["assignor"] = assignor
        return doc

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "index": self.index, "scale": self.scale, "name": self.name,
                "episodes": list(self.episodes), "members": self.members, "partitions": self.partitions,
                "simulation": self.document()}


def draw_history(seed: int, index: int, *, scale: str = MIX) -> History:
    """History ``index`` of the sweep seeded ``seed``, at ``scale`` (a preset name or ``mix``)."""
    for name, value in (("seed", seed), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, int) or (name == "index" and value < 0):
            raise InvalidScenario(name, f"expected a{' non-negative' if name == 'index' else 'n'} integer, got {value!r}")
    preset = SCALES[scale_of(index, scale)]
    plan = _Plan(_Draw(random.Random(history_seed(seed, index)), Space()), preset)
    plan.start()
    for _ in range(plan.draw.integer(*preset.episodes)):
        # the next episode starts after this one's last event: sometimes while its rebalance still runs
        plan.now = max(plan.now, plan.horizon) + (plan.draw.integer(1, 5) if plan.draw.chance(0.2) else plan.draw.integer(8, 40))
        plan.episode(plan.pick())
    return plan.history(seed, index)


# ------------------------------------------------------------------------------------------
# The plan: who runs with which configuration, and when each is free to be named by an event


class _Draw(RandomDraw):
    def chance(self, p: float) -> bool:
        return self._rng.random() < p

    def subset(self, items: list, k: int) -> list:
        pool, out = list(items), []
        for _ in range(min(k, len(pool))):
            out.append(pool.pop(self.integer(0, len(pool) - 1)))
        return out


@dataclass
class _Pod:
    """One consumer (a name across restarts): its configuration now and from when events may name it."""

    name: str
    cohort: int
    version: int
    protocol: str | None
    rack: str | None
    instance_id: str | None
    free_at: int = 0
    alive: bool = True


_PINS = {"eager": "eager", "compatible": "compatible", "cooperative": None}


@dataclass
class _Plan:
    draw: _Draw
    scale: Scale
    now: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)
    topics: dict[str, int] = field(default_factory=dict)
    racked: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    cohorts: list[tuple[str, ...]] = field(default_factory=list)
    pods: dict[str, _Pod] = field(default_factory=dict)
    phase: str = "cooperative"
    version: int = 3
    static: str = "none"
    racks: tuple[str, ...] = ()
    next_pod: int = 1
    next_topic: int = 0
    initial_topics: dict[str, int] = field(default_factory=dict)
    horizon: int = 0  # the last tick an event was drawn for
    static_settled: int = 0  # from when no static member's replacement can still be unsaved (fail-over)

    # -- drawing helpers ------------------------------------------------------------------

    def emit(self, at: int, kind: str, **fields: Any) -> None:
        self.events.append({"at": at, "event": kind, **fields})
        if kind in ("rolling-restart", "restart", "join"):
            # a static member replaced during a rebalance is stored only when it completes; a fail-over
            # before then fences the new process for good (FENCED_INSTANCE_ID), which no plan can follow
            self.emit_horizon(at)
        else:
            self.horizon = max(self.horizon, at)

    def emit_horizon(self, at: int) -> None:
        self.horizon = max(self.horizon, at)
        if self.static != "none":
            self.static_settled = max(self.static_settled, self.horizon + 40)

    def alive(self) -> list[_Pod]:
        return [p for p in self.pods.values() if p.alive]

    def free(self, at: int) -> list[_Pod]:
        """Running members an event at ``at`` may name (not inside a restart's downtime)."""
        return [p for p in self.alive() if p.free_at <= at]

    def some(self, pods: list[_Pod]) -> list[_Pod]:
        """All of ``pods`` at a scale without a batch limit, else a few of them."""
        if self.scale.batch is None or len(pods) <= 1:
            return pods
        return sorted(self.draw.subset(pods, self.draw.integer(1, self.scale.batch)), key=lambda p: p.name)

    def new_topic(self, partitions: int) -> str:
        name = f"t{self.next_topic}"
        self.next_topic += 1
        self.topics[name] = partitions
        return name

    def new_pod(self, at: int) -> dict[str, Any]:
        """A new consumer with the configuration new deployments have now; its join event's fields."""
        name = f"c{self.next_pod}"
        self.next_pod += 1
        cohort = self.draw.integer(0, len(self.cohorts) - 1)
        static = self.static == "all" or (self.static == "some" and self.draw.boolean())
        rack = self.racks[self.next_pod % len(self.racks)] if self.racks else None
        pod = _Pod(name, cohort, self.version, _PINS[self.phase], rack, f"{name}-instance" if static else None, at + 1)
        self.pods[name] = pod
        return self.join_fields(pod)

    def join_fields(self, pod: _Pod) -> dict[str, Any]:
        out: dict[str, Any] = {"member": pod.name, "topics": list(self.cohorts[pod.cohort]), "version": pod.version}
        if pod.protocol is not None:
            out["protocol"] = pod.protocol
        if pod.rack is not None:
            out["rack"] = pod.rack
        if pod.instance_id is not None:
            out["instance_id"] = pod.instance_id
        return out

    # -- the start ----------------------------------------------------------------------

    def start(self) -> None:
        d, sc = self.draw, self.scale
        for _ in range(d.integer(*sc.topics)):
            self.new_topic(d.integer(*sc.partitions))
        names = list(self.topics)
        self.cohorts = [tuple(names)]
        if len(names) > 1 and sc.variety and d.chance(0.2):
            # two deployments reading different topic sets (the general path, R26)
            self.cohorts.append(tuple(sorted(d.subset(names, d.integer(1, len(names) - 1)))))
        if sc.variety and d.chance(0.15):
            self.racks = ("r0", "r1", "r2")
            for t, n in self.topics.items():
                self.racked[t] = tuple((self.racks[p % 3], self.racks[(p + 1) % 3]) for p in range(n))
        if sc.variety and d.chance(0.2):
            self.new_topic(d.integer(*sc.partitions))  # a topic in the cluster nobody reads
        self.initial_topics = dict(self.topics)
        self.static = d.choice(("none", "none", "none", "some", "all"))
        if d.chance(0.35):
            self.phase = "eager"
            versions = [d.choice((0, 1, 2, 3)) for _ in range(4)] if d.chance(0.3) else [d.choice((0, 1, 2, 3, 3))]
        else:
            versions = [d.choice((1, 2, 3, 3, 3))]
        self.version = max(versions)
        for _ in range(d.integer(*sc.members)):
            fields = self.new_pod(0)
            pod = self.pods[fields["member"]]
            pod.version = fields["version"] = d.choice(versions)
            self.emit(0, "join", **fields)
        self.now = d.integer(10, 20)

    # -- episodes -----------------------------------------------------------------------

    def pick(self) -> str:
        alive = self.alive()
        weights = {"rolling-restart": 10, "scale-out": 10, "stall": 14, "subscription-change": 6,
                   "add-partitions": 5, "create-topic": 4, "failover": 4}
        if any(p.version < 3 for p in alive):
            weights["rolling-upgrade"] = 6
        if self.scale.batch is not None and self.phase != "cooperative":
            # a large group drawn eager is one being upgraded: its first two episodes are KIP-429's two
            # bounces (every member, in waves), never a group pinned eager for good
            return "cooperative-upgrade"
        if self.phase == "eager":
            weights["cooperative-upgrade"] = 6
        if self.phase == "compatible":
            weights["cooperative-upgrade"] = 40  # the second bounce follows the first
        if len(alive) > 1:
            weights["scale-in"] = 7
            weights["crash"] = 8
        if any(p.instance_id for p in alive):
            weights["static-restart"] = 5
        if len(self.topics) > 1:
            weights["delete-topic"] = 3
        kinds = sorted(weights)
        x = self.draw.integer(0, sum(weights.values()) - 1)
        for k in kinds:
            x -= weights[k]
            if x < 0:
                return k
        return kinds[-1]  # pragma: no cover

    def episode(self, kind: str) -> None:
        if not self.free(self.now):
            kind = "scale-out"  # everyone left or crashed: new members arrive
        label = getattr(self, "_" + kind.replace("-", "_"))()
        self.episodes.append(label or kind)

    def _rolling(self, pods: list[_Pod], **changes: Any) -> None:
        """A rolling bounce of ``pods``, ``gap`` ticks apart, each back ``restart_downtime`` ticks later."""
        if not pods:
            return
        gap = self.draw.integer(1, 25)
        self.emit(self.now, "rolling-restart", members=[p.name for p in pods], gap=gap, **changes)
        for i, p in enumerate(pods):
            p.free_at = self.now + i * gap + TIMING["restart_downtime"] + 1
            p.version = changes.get("version", p.version)
            p.protocol = changes.get("protocol", p.protocol)
        self.now = max(p.free_at for p in pods)
        self.emit_horizon(self.now)

    def _waves(self, pods: list[_Pod], **changes: Any) -> None:
        """A bounce of every member at a scale with a batch limit: a quarter of the group at a time, the
        next quarter 1-3 ticks later (a deployment's rolling update with 25 % unavailable, Kubernetes'
        default), written as one rolling restart per position in the wave. One member at a time would be
        a rebalance or two per member: 2,000 of them at 52,000 partitions each for a large group."""
        if self.scale.batch is None or len(pods) <= 10:
            return self._rolling(pods, **changes)
        wave = -(-len(pods) // 4)
        gap, start = self.draw.integer(1, 3), self.now
        for w in range(wave):
            lane = pods[w::wave]
            self.emit(start, "rolling-restart", members=[p.name for p in lane], gap=gap, **changes)
            for i, p in enumerate(lane):
                p.free_at = start + i * gap + TIMING["restart_downtime"] + 1
                p.version = changes.get("version", p.version)
                p.protocol = changes.get("protocol", p.protocol)
        self.now = max(p.free_at for p in pods)
        self.emit_horizon(self.now)
        return None

    def _rolling_restart(self) -> None:
        self._rolling(self.some(self.free(self.now)))

    def _rolling_upgrade(self) -> None:
        """A new client release rolled out (v0 -> v3 in steps or at once); new deployments get it too."""
        pods = self.some(self.free(self.now))
        newest = max(p.version for p in pods)
        if newest >= 3:
            return self._rolling(pods)
        target = self.draw.integer(newest + 1, 3)
        self.version = max(self.version, target)
        self._rolling(pods, version=target)
        return None

    def _cooperative_upgrade(self) -> None:
        """KIP-429: every member to a v1+ client still running EAGER (``compatible``), then the pin cleared."""
        pods = sorted(self.free(self.now), key=lambda p: p.name)
        if len(pods) != len(self.alive()):
            return  # a member is restarting: the bounce waits for the next episode
        if self.phase == "eager":
            self.version = max(self.version, 1, self.draw.choice((1, 2, 3, 3)))
            self.phase = "compatible"
            self._waves(pods, version=max(self.version, max(p.version for p in pods)), protocol="compatible")
        else:
            self.phase = "cooperative"
            self._waves(pods, protocol=None)

    def _scale_out(self) -> None:
        spacing = self.draw.integer(0, 3)
        for i in range(self.draw.integer(1, self.scale.batch or 3)):
            at = self.now + i * spacing
            self.emit(at, "join", **self.new_pod(at))
        self.now += (self.scale.batch or 3) * spacing

    def _scale_in(self) -> None:
        pods = self.free(self.now)
        if len(pods) < 2:
            return
        for p in self.draw.subset(pods, self.draw.integer(1, min(len(pods) - 1, self.scale.batch or 3))):
            self.emit(self.now, "leave", member=p.name)
            p.alive = False
            self.now += self.draw.integer(0, 2)

    def _crash(self) -> None:
        p = self.draw.choice(self.free(self.now))
        self.emit(self.now, "crash", member=p.name)
        p.alive = False
        if self.draw.chance(0.6):  # the orchestrator starts it again, before or after its session expires
            back = self.now + self.draw.integer(1, 3 * TIMING["session_timeout"])
            p.alive, p.free_at = True, back + 1
            p.version, p.protocol = max(p.version, self.version) if self.phase != "eager" else p.version, _PINS[self.phase]
            self.emit(back, "join", **self.join_fields(p))
            self.now = back

    def _stall(self) -> str:
        """A GC pause or a slow poll: short (no one notices), past the session (the member comes back
        stale), inside a slow rebalance callback (after ``onJoinPrepare``), or while a rebalance runs."""
        d, session, rebalance = self.draw, TIMING["session_timeout"], TIMING["rebalance_timeout"]
        p = d.choice(self.free(self.now))
        how = d.choice(("short", "long", "long", "join-prepare", "during"))
        if how == "short":
            self.emit(self.now, "stall", member=p.name, ticks=d.integer(1, session - 1))
        elif how == "long":
            self.emit(self.now, "stall", member=p.name, ticks=d.integer(session + 1, session + 15))
        else:
            ticks = d.integer(2, rebalance + 10)
            at = self.now + (0 if how == "join-prepare" else d.integer(0, 3))
            self.emit(at, "stall", member=p.name, ticks=ticks, **({"at_join_prepare": True} if how == "join-prepare" else {}))
            self.now += d.integer(1, 3)
            self._trigger(exclude=p)
        return f"stall:{how}"

    def _trigger(self, exclude: _Pod | None) -> None:
        """Something that makes the group rebalance now."""
        kind = self.draw.choice(("scale-out", "scale-in", "add-partitions", "subscription-change"))
        if kind == "scale-in" and len([p for p in self.free(self.now) if p is not exclude]) > 1:
            p = self.draw.choice([p for p in self.free(self.now) if p is not exclude])
            self.emit(self.now, "leave", member=p.name)
            p.alive = False
        elif kind == "add-partitions":
            self._add_partitions()
        elif kind == "subscription-change":
            self._subscription_change(live=True)
        else:
            self.emit(self.now, "join", **self.new_pod(self.now))

    def _static_restart(self) -> None:
        pods = [p for p in self.free(self.now) if p.instance_id]
        if pods:
            p = self.draw.choice(pods)
            self.emit(self.now, "restart", member=p.name)
            p.free_at = self.now + TIMING["restart_downtime"] + 1

    def _subscription_change(self, live: bool | None = None) -> None:
        """A cohort adds or drops a topic: live (a pattern subscription picking it up as each member's
        metadata refreshes) or by a rolling redeploy with the new list."""
        d = self.draw
        k = d.integer(0, len(self.cohorts) - 1)
        topics = list(self.cohorts[k])
        others = [t for t in self.topics if t not in topics]
        if others and (len(topics) == 1 or d.boolean()):
            topics = sorted(topics + [d.choice(others)])
        elif len(topics) > 1:
            topics.remove(d.choice(topics))
        else:
            topics = sorted(topics + [self.new_topic(d.integer(*self.scale.partitions))])
            self.emit(self.now, "add-partitions", topic=topics[-1], count=self.topics[topics[-1]],
                      **self._new_replica_racks(0, self.topics[topics[-1]]))
        self.cohorts[k] = tuple(topics)
        pods = [p for p in self.free(self.now) if p.cohort == k]
        if live is None:
            live = self.scale.batch is not None or d.boolean()
        if live:
            for p in pods:
                self.emit(self.now + d.integer(0, 2), "subscribe", member=p.name, topics=topics)
        else:
            self._rolling(pods, topics=topics)

    def _add_partitions(self) -> None:
        t = self.draw.choice(sorted(self.topics))
        count = self.draw.integer(1, max(1, min(100, self.topics[t] // 2)))
        first = self.topics[t]
        self.topics[t] += count
        self.emit(self.now, "add-partitions", topic=t, count=count, **self._new_replica_racks(first, count))

    def _new_replica_racks(self, first: int, count: int) -> dict[str, Any]:
        """The ``racks`` of an add-partitions event: on a cluster whose brokers have racks, new
        partitions get replicas placed as the first ones were (two consecutive racks), never none
        (a partition with no replica rack matches no racked member, which Kafka's rack-aware path
        then moves for nothing: issue 20)."""
        if not self.racks:
            return {}
        return {"racks": [[self.racks[p % 3], self.racks[(p + 1) % 3]] for p in range(first, first + count)]}

    def _create_topic(self) -> None:
        t = self.new_topic(self.draw.integer(*self.scale.partitions))
        self.emit(self.now, "add-partitions", topic=t, count=self.topics[t], **self._new_replica_racks(0, self.topics[t]))
        if self.draw.chance(0.7):  # a pattern subscription that matches it
            k = self.draw.integer(0, len(self.cohorts) - 1)
            self.cohorts[k] = tuple(sorted(self.cohorts[k] + (t,)))
            for p in self.free(self.now):
                if p.cohort == k:
                    self.emit(self.now + 1 + self.draw.integer(0, 2), "subscribe", member=p.name, topics=list(self.cohorts[k]))

    def _delete_topic(self) -> None:
        t = self.draw.choice(sorted(self.topics))
        del self.topics[t]
        self.emit(self.now, "delete-topic", topic=t)
        if self.draw.chance(0.6):  # pattern subscribers stop matching it; explicit lists keep naming it
            for k, topics in enumerate(self.cohorts):
                if t in topics and len(topics) > 1:
                    self.cohorts[k] = tuple(x for x in topics if x != t)
                    for p in self.free(self.now):
                        if p.cohort == k:
                            self.emit(self.now + 1 + self.draw.integer(0, 2), "subscribe", member=p.name,
                                      topics=list(self.cohorts[k]))

    def _failover(self) -> None:
        self.now = max(self.now, self.static_settled)
        if self.draw.boolean():
            self._trigger(exclude=None)  # the coordinator moves while a rebalance runs
            self.now += self.draw.integer(0, 2)
        self.emit(self.now, "failover")

    # -- the result ---------------------------------------------------------------------

    def history(self, seed: int, index: int) -> History:
        topics = [Topic(name, count, self.racked.get(name)) for name, count in self.initial_topics.items()]
        scenario = Scenario(tuple(topics), (), "cooperative", f"history-{seed}-{index}")
        events = tuple(e for _, e in sorted(enumerate(self.events), key=lambda pair: (pair[1]["at"], pair[0])))
        last = max((e["at"] for e in events), default=0)
        config = {**TIMING, "max_ticks": max(600, last + 300)}
        return History(seed, index, self.scale.name, scenario, events, config, tuple(self.episodes))

