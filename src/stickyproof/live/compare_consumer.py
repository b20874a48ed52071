"""The KIP-848 simulator against Kafka's real coordinator: the same history, targets compared.

``stickyproof live HISTORY --group-protocol consumer --compare`` runs the history with real members
(``group.protocol=consumer``) on the broker, and the same history through the KIP-848 simulator
(``group.consumer``, today's coordinator, the same server-side assignor). The broker's targets are
what the run's admin saw (``live.targets``: each target epoch with every member's target); the
simulator's are its coordinator's at every step. They are compared at checkpoints: just before each
event of the history, and at the end. At a checkpoint the two agree when every member has the same
target; a *tie-break* when the members, their target sizes and the partitions kept since the previous
checkpoint are the same but the partitions are not (``uniform`` breaks ties by member and topic ids
and by the previous targets, so a restarted process's new member id, which the simulator cannot
know, or two members joining together decide them); a
*timing* step when either side had not settled to a target by then (the real members join when their
processes are up, seconds after the history's tick); else they disagree. The simulator's members are
given the member ids the real ones had (``LiveResult.member_ids``; a restarted process's new id only
for its first incarnation), the topics the ids the broker drew (``LiveResult.topic_ids``), and the
members join in the order they joined the real group, so ``uniform``'s ties break alike where the
inputs are alike. A step after a tie-break or
a timing step compares states timing chose, and says so, as the classic comparison does.

Then each member's (member epoch, assigned partitions), step by step (``live.epochs``; a
``ConsumerCompareResult`` carries both, and disagrees when either does).

Time: the simulator's tick is one heartbeat interval; the broker's KIP-848 heartbeat interval is
``CONSUMER_HEARTBEAT_MS`` and its session timeout ``CONSUMER_SESSION_MS`` (``live.broker``), so a
history event at tick ``t`` of a live run of ``tick_ms`` is at heartbeat ``t * tick_ms /
CONSUMER_HEARTBEAT_MS`` in the simulator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..group.config import GroupConfig
from ..group.events import Schedule
from ..model import Scenario, TopicPartition
from .broker import CONSUMER_HEARTBEAT_MS, CONSUMER_SESSION_MS
from .compare import CompareResult, Generation, StepComparison, _owning
from .epochs import EpochsComparison, explain_step, match_steps, sim_member_steps

__all__ = ["CONSUMER_HEARTBEAT_MS", "CONSUMER_SESSION_MS", "ConsumerCompareResult", "candidate_orders", "compare_consumer_run",
           "compare_epochs", "join_order", "simulate_consumer_as_live"]

Targets = tuple[tuple[str, tuple[TopicPartition, ...]], ...]


def _sim_tick(at: int, tick_ms: int) -> int:
    return max(1, round(at * tick_ms / CONSUMER_HEARTBEAT_MS))


def _sim_ticks(schedule: Schedule, tick_ms: int) -> dict[int, int]:
    """Each tick of the history's events -> its heartbeat in the simulator: ``_sim_tick``, but never
    the heartbeat of an earlier tick's events. Events one history tick apart (500 ms) reach the real
    coordinator in different heartbeats, each bumping the group epoch on its own; in one simulator
    heartbeat, where every member heartbeats at once, one heartbeat would bump once for both (found
    comparing member epochs: ``history-0-6``'s topic deletion and the subscription change after it)."""
    out: dict[int, int] = {}
    last = 0
    for t in sorted({e.at for e in schedule.events}):
        out[t] = last = max(_sim_tick(t, tick_ms), last + 1)
    return out


def join_order(live: Any, members: Sequence[str]) -> list[str]:
    """The scenario's members in the order they joined the real group: by the first group epoch the
    admin saw each in (``LiveResult.join_epochs``), then by when its process started consuming
    (``started``: built, subscribed, polling; its first heartbeat, its join, follows at once); a member
    never seen last."""
    epochs = dict(live.join_epochs)
    started: dict[str, int] = {}
    for e in live.timeline:
        if e.what == "started" and e.member not in started:
            started[e.member] = e.at_ms
    return sorted(members, key=lambda m: (epochs.get(m, 1 << 30), started.get(m, 1 << 62), m))


def candidate_orders(live: Any, members: Sequence[str], limit: int = 24) -> list[list[str]]:
    """The join orders the admin's descriptions allow (``join_order`` first): members first seen at the
    same group epoch in every order among themselves, at most ``limit`` orders in all."""
    from itertools import permutations, product

    first = join_order(live, members)
    epochs = dict(live.join_epochs)
    groups: list[list[str]] = []
    for m in first:
        if groups and m in epochs and epochs.get(groups[-1][0]) == epochs[m]:
            groups[-1].append(m)
        else:
            groups.append([m])
    out: list[list[str]] = []
    for choice in product(*(list(permutations(g)) for g in groups)):
        out.append([m for g in choice for m in g])
        if len(out) >= limit:
            break
    return out


def _consumer_inputs(scenario: Scenario, schedule: Schedule, tick_ms: int, ids: Mapping[str, str],
                     order: Sequence[str] = (), topic_ids: Mapping[str, str] | None = None
                     ) -> tuple[Scenario, list[dict[str, Any]], GroupConfig, int]:
    """The history as the KIP-848 simulator reads it: the members fresh (a live run starts them so),
    named by the member id their first process had in the real group (``ids``; the simulator's first
    incarnation of a member takes its name as its member id, so ``uniform`` sees the same ids and
    breaks ties alike), the events on the heartbeat clock, the broker's session timeout."""
    from ..group.consumer.events import consumer_scenario_from_dict

    def named(member: str) -> str:
        return ids.get(member, member)

    # the members join one heartbeat apart in the order they joined the real group (``order``): each
    # join is a target computed from the previous one, so the order decides the formed targets
    by_name = {m.id: m for m in scenario.members}
    joining = [by_name[n] for n in order if n in by_name] + [m for m in scenario.members if m.id not in order]
    first = joining[:1] if order else list(scenario.members)
    doc = {"format": "stickyproof.scenario/1", "group_protocol": "consumer",
           "topics": {t.name: {"partitions": t.partitions, "id": topic_ids[t.name]} if t.name in (topic_ids or {})
                      else t.partitions for t in scenario.topics},
           "members": [{"id": named(m.id), "topics": list(m.topics), **({"instance_id": m.instance_id} if m.instance_id else {})}
                       for m in first]}
    events: list[dict[str, Any]] = [
        {"at": i, "event": "join", "member": named(m.id), "topics": list(m.topics),
         **({"instance_id": m.instance_id} if m.instance_id else {})}
        for i, m in enumerate(joining[len(first):], start=1)]
    # the history's events after the group formed, as a live run applies them (it waits for the group to settle)
    at = _sim_ticks(schedule, tick_ms)
    shift = max(0, len(events) + 3 - min(at.values(), default=0))
    existing = {t.name for t in scenario.topics}
    for e in schedule.events:
        one: dict[str, Any] = {"at": at[e.at] + shift, "event": e.event}
        if e.event == "add-partitions" and e.topic not in existing:
            # partitions added to a topic that does not exist: a live run creates it (``live.run``), and so
            # must the KIP-848 simulator, which refuses partitions added to no topic
            one["event"] = "create-topic"
        existing = existing - {e.topic} if e.event == "delete-topic" else existing | ({e.topic} if e.topic else set())
        for key in ("member", "topics", "instance_id", "ticks", "topic", "count"):
            value = getattr(e, key, None)
            if value is not None and (key in e.given or key in ("member", "topic")):
                one[key] = list(value) if key == "topics" else named(value) if key == "member" else value
        if e.event == "stall" and e.ticks is not None:
            one["ticks"] = _sim_tick(e.ticks, tick_ms)
        events.append(one)
    config = GroupConfig(session_timeout=CONSUMER_SESSION_MS // CONSUMER_HEARTBEAT_MS,
                         rebalance_timeout=max(1, schedule.config.session_timeout * tick_ms // CONSUMER_HEARTBEAT_MS))
    return consumer_scenario_from_dict(doc), events, config, shift


def simulate_consumer_as_live(scenario: Scenario, schedule: Schedule, tick_ms: int, assignor: str | None,
                              ids: Mapping[str, str] | None = None, order: Sequence[str] = (),
                              topic_ids: Mapping[str, str] | None = None):
    """The KIP-848 simulator's run of the history a live run of ``tick_ms`` applied (members named by
    ``ids``, member name -> member id, where given; the scenario's members joining in ``order``), its
    tick shift, and the history's events it left out: (event, member, simulator tick).

    An event for a member whose process the simulator stopped is left out and the run made again: a
    static member rejoining while its crashed process's record still holds its instance id is
    refused UNRELEASED_INSTANCE_ID, fatal to the Java client, and the simulator stops its process;
    the live run's process lives on (its consumer failed, its reports say so) and takes the history's
    later ``subscribe`` without effect on the group."""
    from ..errors import InvalidScenario
    from ..group.consumer import simulate_consumer_group
    from ..group.consumer.events import consumer_events_from_doc

    start, events, config, shift = _consumer_inputs(scenario, schedule, tick_ms, ids or {}, order, topic_ids)
    kept, dropped = list(range(len(events))), []
    while True:
        parsed = consumer_events_from_doc([events[i] for i in kept], base=config)
        try:
            return simulate_consumer_group(start, parsed.events, config=config, assignor=assignor or "uniform",
                                           name=scenario.name or "live"), shift, tuple(dropped)
        except InvalidScenario as exc:
            at = re.fullmatch(r"events\[(\d+)\]\.member", exc.path)
            if at is None or "is not running" not in exc.detail:
                raise
            i = kept.pop(int(at.group(1)))
            dropped.append((str(events[i]["event"]), str(events[i]["member"]), int(events[i]["at"])))


def _sim_targets(result: Any, before_tick: int | None, names: Mapping[str, str]) -> tuple[Targets, bool, int]:
    """The simulator's targets at the end of the last step before ``before_tick`` (None: the end),
    and whether its group had settled to them (the target epoch is the group epoch and every member
    holds its target)."""
    steps = [s for s in result.steps if before_tick is None or s.tick < before_tick]
    if not steps:
        return (), False, 0
    last = steps[-1]
    targets = tuple(sorted((names.get(m.name, m.name), tuple(sorted(m.target))) for m in last.members if m.state is not None))
    settled = last.group.group_epoch == last.group.assignment_epoch and all(
        m.state is None or (m.state == "STABLE" and sorted(m.owned) == sorted(m.target)) for m in last.members)
    return targets, settled, last.group.assignment_epoch


def _live_targets(live: Any, before_ms: int | None) -> tuple[Targets, int | None]:
    """The broker's last target seen before ``before_ms`` (None: the end), with its epoch."""
    seen = [g for g in live.grades if g.epoch is not None and (before_ms is None or g.at_ms < before_ms)]
    if not seen:
        return (), None
    return tuple(sorted(seen[-1].assignment)), seen[-1].epoch


def _kept(before: Targets, now: Targets) -> int:
    held = {tp: m for m, tps in before for tp in tps}
    return sum(1 for m, tps in now for tp in tps if held.get(tp) == m)


def _shape(targets: Targets) -> tuple:
    return tuple(m for m, _ in targets), tuple(sorted(len(tps) for _, tps in targets))


def compare_consumer_run(scenario: Scenario, schedule: Schedule, live: Any, settings: Any) -> CompareResult:
    """The simulator run as ``live`` was (a ``group.protocol=consumer`` live run), compared at each
    checkpoint (module docstring)."""
    ids = {name: first[0] for name, first in live.member_ids if first}
    names = {member_id: name for name, member_id in ids.items()}
    applied = [e.at_ms for e in live.timeline if e.member == "history"]
    ticks = sorted({e.at for e in schedule.events})
    at = _sim_ticks(schedule, settings.tick_ms)
    # the join order: as the admin saw it; members it saw join between two descriptions are tried in
    # every order, the first that forms the real group's target kept, and said
    inferred = None
    orders = candidate_orders(live, [m.id for m in scenario.members])
    forming_ms = applied[0] if applied else None
    for order in orders:
        sim, shift, dropped = simulate_consumer_as_live(scenario, schedule, settings.tick_ms, settings.assignor, ids, order,
                                               dict(live.topic_ids))
        formed = _sim_targets(sim, (at[ticks[0]] + shift) if ticks else None, names)[0]
        if _owning(formed) == _owning(_live_targets(live, forming_ms)[0]):
            inferred = order if len(orders) > 1 else None
            break
    else:
        order = orders[0]
        sim, shift, dropped = simulate_consumer_as_live(scenario, schedule, settings.tick_ms, settings.assignor, ids, order,
                                               dict(live.topic_ids))
    labels = ["forming: the scenario's members join"] + [
        f"tick {t}: " + "; ".join(e.describe() for e in schedule.events if e.at == t) for t in ticks]
    # the live time of the first event of each tick (applied in order, one entry per event)
    firsts, i = [], 0
    for t in ticks:
        firsts.append(applied[i] if i < len(applied) else None)
        i += sum(1 for e in schedule.events if e.at == t)
    checkpoints = [(at[t] + shift, ms) for t, ms in zip(ticks, firsts)] + [(None, None)]
    steps: list[StepComparison] = []
    before_sim: Targets = ()
    before_live: Targets = ()
    chosen_by_timing = False
    for k, (sim_tick, live_ms) in enumerate(checkpoints):
        s_targets, s_settled, s_epoch = _sim_targets(sim, sim_tick, names)
        l_targets, epoch = _live_targets(live, live_ms)
        s_own, l_own = _owning(s_targets), _owning(l_targets)
        if s_own == l_own:
            verdict, reason = "agree", ""
        elif not s_settled or epoch is None:
            verdict = "timing"
            reason = ("the simulator's group had not settled to its target by this point" if not s_settled else
                      "the run's admin saw no target by this point") + (
                      ": when a member's join or a revocation lands is timing")
        elif chosen_by_timing:
            verdict, reason = "timing", "follows a step timing decided: the group started it from a state timing chose"
        elif _shape(s_own) == _shape(l_own) and _kept(before_sim, s_own) == _kept(before_live, l_own):
            verdict = "timing"
            reason = ("tie-break: the same members, target sizes and partitions kept, other partitions: a tie the assignor "
                      "broke on what the run could not hand the simulator (a restarted process's new member id, or "
                      "which of two members joining together came first)")
        else:
            verdict, reason = "disagree", "different targets"
        chosen_by_timing = chosen_by_timing or (verdict == "timing" and s_own != l_own)
        steps.append(StepComparison(k, labels[k], verdict, reason,
                                    (Generation(s_epoch, s_own),), (Generation(epoch or 0, l_own),), s_own, l_own))
        before_sim, before_live = s_own, l_own
    final = steps[-1].verdict
    epochs = compare_epochs(sim, live, names, checkpoints, steps, scenario)
    notes = ["group.protocol=consumer: targets compared (the simulator's coordinator against the broker's, as the run's "
             "admin saw them), just before each event and at the end; the simulator's members carry the member ids the "
             "real ones had (a restarted process's new id excepted); each member's epochs and assignments are compared step "
             "by step after them (live.epochs)"]
    if inferred is not None:
        notes.append(f"the admin saw some members join between two of its descriptions; of the {len(orders)} orders they "
                     f"could have joined in, {', '.join(inferred)} forms the real group's target, and the simulator ran it")
    if dropped:
        notes.append("the simulator left out events for members whose processes it had stopped (UNRELEASED_INSTANCE_ID "
                     "is fatal to the Java client; the live process lived on, its consumer failed): " + "; ".join(
                         f"{event} of {names.get(member, member)} at simulator tick {at}" for event, member, at in dropped))
    if not sim.ok:
        notes.append(f"the simulator's monitors failed: {', '.join(sim.failed)}")
    return ConsumerCompareResult(live.name, tuple(steps), final, steps[-1].sim_end, steps[-1].live_end, tuple(notes),
                                 epochs)


@dataclass(frozen=True)
class ConsumerCompareResult(CompareResult):
    """The targets compared at checkpoints (``CompareResult``) and every member's epochs and
    assignments step by step (``live.epochs``; None: the run's admin reported no member states)."""

    epochs: EpochsComparison | None = None

    @property
    def agrees(self) -> bool:
        return super().agrees and (self.epochs is None or self.epochs.agrees)

    def to_dict(self) -> dict[str, Any]:
        doc = super().to_dict()
        doc["agrees"] = self.agrees
        if self.epochs is not None:
            doc["epochs"] = self.epochs.to_dict()
        return doc


def compare_epochs(sim: Any, live: Any, names: Mapping[str, str], checkpoints: Sequence[tuple[int | None, int | None]],
                   steps: Sequence[StepComparison], scenario: Scenario | None = None) -> EpochsComparison | None:
    """Each member incarnation's (member epoch, assigned) steps, the broker's against the simulator's
    (``live.epochs``), after the targets were compared at ``checkpoints`` ((simulator tick, live ms),
    the last (None, None): the end) in ``steps``. A broker state past a checkpoint whose targets
    timing chose is timing for that reason, if its member epoch is not past the simulator's group
    epoch at the end of that stretch: the epochs are numbered by the same bumps either way."""
    if not live.member_states:
        return None
    # the first checkpoint whose targets differ by timing: every state seen after the one before it
    chosen = next((k for k, s in enumerate(steps) if s.verdict == "timing" and s.sim_end != s.live_end), None)
    from_ms = None if chosen is None else (0 if chosen == 0 else checkpoints[chosen - 1][1])
    final_timing = None if chosen is None else f"the targets of step {chosen} differ by timing ({steps[chosen].reason})"
    # a target that gives no member anything though they subscribe to topics with partitions: a broker
    # on Kafka 4.3+'s defaults batched the forming group's joins and computed its first target off the
    # coordinator thread (KIP-1263), so its epochs run one ahead of the simulator's, which computes each
    # target at once; `live --compare` starts its broker with both off (live.broker.ASSIGNMENT_AT_ONCE),
    # a broker at --bootstrap keeps its own. Seen in the admin's target reports or in the members' states.
    lag = next((g for g in live.grades if g.epoch is not None and not any(tps for _, tps in g.assignment) and any(
        t.name in m.topics and t.partitions for m in g.scenario.members for t in g.scenario.topics)), None)
    if lag is None and scenario is not None:
        lag = _empty_first_target(scenario, live)
    if lag is not None:
        why = (f"the broker's target epoch {lag.epoch} gave every member nothing though their topics have partitions: "
               "a broker on Kafka 4.3+'s defaults batches a forming group's joins and computes its target off the "
               "coordinator thread (KIP-1263; group.consumer.assignment.interval.ms, group.consumer.assignor.offload.enable), "
               "the simulator computes each target at once: its epochs are one ahead of the simulator's from there")
        if from_ms is None or lag.at_ms < from_ms:
            from_ms, final_timing = lag.at_ms, why
    sim_steps = sim_member_steps(sim, names)
    # the group epochs the simulator's group passed through (one bump at a time), and its group epoch
    # at each checkpoint: a broker member epoch past it there is a bump the simulator did not make
    passed = list(range(min(s.group.group_epoch for s in sim.steps), max(s.group.group_epoch for s in sim.steps) + 1))
    bound = [max((s.group.group_epoch for s in sim.steps if tick is None or s.tick < tick), default=0) + (lag is not None)
             for tick, _ in checkpoints]

    def stretch(at_ms: int) -> int:
        return sum(1 for _, ms in checkpoints if ms is not None and ms <= at_ms)

    keys = sorted({(m.member, m.incarnation) for m in (*sim_steps, *live.member_states)})
    members = []
    for member, k in keys:
        mine = [s for s in sim_steps if (s.member, s.incarnation) == (member, k)]
        seen = [s for s in live.member_states if (s.member, s.incarnation) == (member, k)]

        def explain(i: int, state, seen=seen, mine=mine) -> str | None:
            epoch = state[0]
            if epoch is not None and epoch > bound[min(stretch(seen[i].at), len(bound) - 1)]:
                return None  # past every bump the simulator made by then: the epochs are numbered apart
            if from_ms is not None and seen[i].at >= from_ms:
                return final_timing
            return explain_step(state, mine, passed)

        members.append(match_steps(member, k, [s.state for s in mine], [s.state for s in seen], explain, final_timing))
    notes = ["the broker's states are the admin's looks every 100 ms: a state between two looks is missed, not a disagreement"]
    if chosen is not None:
        notes.append(f"from step {chosen} on the targets differ by timing: states the simulator's members never had are timing "
                     "unless their member epoch is past the simulator's group epoch")
    if lag is not None:
        notes.append(why)
    return EpochsComparison(tuple(members), tuple(notes))


@dataclass(frozen=True)
class _EmptyTarget:
    epoch: int
    at_ms: int


def _empty_first_target(scenario: Scenario, live: Any) -> "_EmptyTarget | None":
    """The members' states at the lowest target epoch the admin saw them at, when every one of them had
    an empty target there though some member subscribes to a topic with partitions (the first target
    of a forming group a KIP-1263 broker computed after its batch: see the caller)."""
    # epoch 1 is a new group's empty target on Kafka 4.4 and in the simulator alike (KAFKA-20268)
    seen = [s for s in live.member_states if s.target_epoch is not None and s.target_epoch > 1]
    if not seen or not any(t.partitions for t in scenario.topics for m in scenario.members if t.name in m.topics):
        return None
    first = min(s.target_epoch for s in seen)
    at_first = [s for s in seen if s.target_epoch == first]
    if any(s.target for s in at_first):
        return None
    return _EmptyTarget(epoch=first, at_ms=min(s.at for s in at_first))
