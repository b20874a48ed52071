"""Why did each partition move between two looks at a group, and was the move necessary?

    explain(before, after) -> Explanation
    read_snapshot(data, source, options) -> Snapshot     a describe output, a capture or a scenario

An on-call engineer has two ``kafka-consumer-groups.sh --describe --members --verbose`` outputs
(or two captures, or two scenarios): the group before a rebalance and after it. ``explain`` says
which members left, joined or stayed, and for every partition whose holder changed, why:

    left          its owner is not a member of the group any more
    joined        members joined, and the owner's share shrank below what it held (balance needed it)
    unsubscribed  its owner is still a member but no longer subscribes to the topic
    stale-claim   its owner's claim was not the one that counts (another member claimed it at a
                  higher generation, or two at the same one: nobody may keep it, docs/rules.md D3)
    gone          the partition is not in the group's metadata after (its topic left every
                  subscription, or the partition count shrank)
    balance       its owner held more than its share
    rack          the new holder's rack holds a replica and the old holder's does not (KIP-881:
                  a sticky assignor may move a partition to improve rack locality)
    unnecessary   an assignor choice an optimal assignment would not make: the most-sticky
                  assignment balanced as the assignor promises (the oracle's contract optimum over
                  AFTER's members owning what they held BEFORE) keeps it with its owner

and which of stickyproof's built-in assignors and releases, run through the leader on that same
input, would have kept it. The input the judgement is made on (the *reconstructed* rebalance) is
AFTER's membership and subscriptions with BEFORE's ownership; with a capture as AFTER it is the
JoinGroup metadata the leader really saw. Everything the inputs do not show is assumed and said in
``notes``. The words, the reasons and an example are in docs/explain.md.

A class's partitions are interchangeable to the optimum (models/optimal-assignment.md §4): when an
owner lost three partitions of which the optimum keeps one, which of the three is called
unnecessary is the first in (topic, partition) order; the counts are exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

from .errors import AssignorFailure, UnknownAssignor
from .importers.snapshot import Snapshot, SnapshotOptions, read_snapshot
from .model import (
    DEFAULT_GENERATION,
    Assignment,
    Member,
    Scenario,
    TopicPartition,
    scenario_from_dict,
    scenario_to_dict,
)

__all__ = [
    "REASONS",
    "NECESSARY",
    "SnapshotOptions",
    "Snapshot",
    "Move",
    "Explanation",
    "read_snapshot",
    "explain",
    "verdict_line",
]

#: Every reason a move can have, in the order they are tried and reported.
REASONS = ("gone", "left", "unsubscribed", "stale-claim", "joined", "balance", "rack", "unnecessary")
#: The reasons that make a move necessary (``rack`` is a move the assignor's rack promise allows).
NECESSARY = frozenset(REASONS) - {"unnecessary"}
#: How the verdict line groups the reasons.
_GROUPS = (("membership", ("left", "joined")), ("balance", ("balance",)), ("unsubscribed", ("unsubscribed",)),
           ("stale claim", ("stale-claim",)), ("partition gone", ("gone",)), ("rack locality", ("rack",)))


@dataclass(frozen=True)
class Move:
    """One partition whose holder changed. ``to`` None: taken from its owner and not yet given to
    anyone (a cooperative rebalance, or a KIP-848 group reconciling). ``kept_by``: the built-in
    assignors that, run on the reconstructed rebalance, leave it with its owner."""

    partition: TopicPartition
    source: str
    to: str | None
    reason: str
    why: str
    kept_by: tuple[str, ...] | None

    @property
    def necessary(self) -> bool:
        return self.reason in NECESSARY

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": [self.partition.topic, self.partition.partition],
            "from": self.source,
            "to": self.to,
            "reason": self.reason,
            "necessary": self.necessary,
            "why": self.why,
            "kept_by": None if self.kept_by is None else list(self.kept_by),
        }


@dataclass(frozen=True)
class Explanation:
    """Everything ``explain`` found, in a fixed order (partitions sorted, members sorted)."""

    group: str | None
    left: tuple[str, ...]
    joined: tuple[str, ...]
    stayed: tuple[str, ...]
    rejoined: tuple[tuple[str, str, str], ...]  # (before id, after id, why they are one member)
    returned: tuple[tuple[str, str], ...]  # (left id, joined id) that look like one consumer restarted
    moves: tuple[Move, ...]
    assigned: tuple[tuple[TopicPartition, str], ...]  # nobody held it before; now this member does
    contract: str
    notion: str | None
    optimal_kept: int | None
    after_kept: int
    proven: bool
    optimum_status: str
    assignors: tuple[tuple[str, int | None, str | None], ...]  # (name, moves it keeps, error)
    notes: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        return {r: sum(1 for m in self.moves if m.reason == r) for r in REASONS}

    def to_dict(self) -> dict[str, Any]:
        counts = self.counts()
        return {
            "format": "stickyproof.explain/1",
            "group": self.group,
            "verdict": verdict_line(self),
            "members": {
                "left": list(self.left),
                "joined": list(self.joined),
                "stayed": list(self.stayed),
                "rejoined": [{"before": b, "after": a, "why": w} for b, a, w in self.rejoined],
                "returned": [{"left": b, "joined": a} for b, a in self.returned],
            },
            "moved": len(self.moves),
            "necessary": sum(1 for m in self.moves if m.necessary),
            "unnecessary": counts["unnecessary"],
            "reasons": counts,
            "moves": [m.to_dict() for m in self.moves],
            "assigned": [{"partition": [tp.topic, tp.partition], "to": m} for tp, m in self.assigned],
            "optimum": {
                "contract": self.contract,
                "notion": self.notion,
                "kept": self.optimal_kept,
                "after_kept": self.after_kept,
                "proven": self.proven,
                "status": self.optimum_status,
            },
            "assignors": [{"name": n, "keeps": k, "error": e} for n, k, e in self.assignors],
            "notes": list(self.notes),
        }


# ------------------------------------------------------------------------------------------
# Who is who


def _identities(before: Snapshot, after: Snapshot) -> tuple[dict[str, str], list[tuple[str, str, str]], list[tuple[str, str]]]:
    """BEFORE id -> AFTER id for members in both; static members that rejoined under a new member
    id (same ``group.instance.id``: the coordinator hands a static member its place back, KIP-345);
    and (left, joined) pairs with the same client id and host, unique on both sides: probably one
    consumer restarted, but a new member to the group (it owns nothing when it joins)."""
    after_ids = {m.id for m in after.scenario.members}
    same = {m.id: m.id for m in before.scenario.members if m.id in after_ids}
    by_instance = {m.instance_id: m.id for m in after.scenario.members if m.instance_id and m.id not in same.values()}
    rejoined = []
    for m in before.scenario.members:
        if m.id not in same and m.instance_id and m.instance_id in by_instance:
            new = by_instance[m.instance_id]
            same[m.id] = new
            rejoined.append((m.id, new, f"static member {m.instance_id!r} (group.instance.id) rejoined with a new member id"))
    left = [m.id for m in before.scenario.members if m.id not in same]
    joined = [m.id for m in after.scenario.members if m.id not in same.values()]

    def unique(ids: list[str], clients: Mapping[str, tuple[str, str]]) -> dict[tuple[str, str], str]:
        seen: dict[tuple[str, str], list[str]] = {}
        for i in ids:
            key = clients.get(i)
            if key and all(key):
                seen.setdefault(key, []).append(i)
        return {k: v[0] for k, v in seen.items() if len(v) == 1}

    gone, new = unique(left, before.clients), unique(joined, after.clients)
    returned = sorted((gone[k], new[k]) for k in gone.keys() & new.keys())
    return same, sorted(rejoined), returned


# ------------------------------------------------------------------------------------------
# The rebalance as the leader met it


def _reconstruct(before: Snapshot, after: Snapshot, same: Mapping[str, str], notes: list[str]) -> Scenario:
    """AFTER's members, subscriptions and metadata, each member owning what it held BEFORE (a
    member that joined owns nothing); a capture's own leader input when AFTER is a capture."""
    if after.leader_input is not None:
        notes.append("the rebalance judged: the JoinGroup metadata of the AFTER capture (what its leader saw)")
        return after.leader_input
    counts = after.scenario.partition_counts
    owned_after = {a: before.held.get(b, ()) for b, a in same.items()}
    generations = {m.generation for m in before.scenario.members}
    members = []
    for m in after.scenario.members:
        owned = tuple(tp for tp in owned_after.get(m.id, ()) if 0 <= tp.partition < counts.get(tp.topic, 0))
        members.append(replace(m, owned=owned, generation=max(generations) if generations else DEFAULT_GENERATION))
    notes.append("the rebalance judged: AFTER's members and subscriptions, each owning what it held BEFORE (a member "
                 "that joined owns nothing), every claim at one generation")
    scenario = replace(after.scenario, members=tuple(members))
    return scenario_from_dict(scenario_to_dict(scenario))


def _contract(after: Snapshot, before: Snapshot, notes: list[str]) -> str:
    """The balance promise the optimum keeps: the named assignor's, else Kafka's sticky family's."""
    from .lookup import get_assignor

    name = after.assignor or before.assignor
    if name:
        try:
            info = get_assignor(name)
        except UnknownAssignor:
            info = None
        if info is not None:
            notes.append(f"balance promise: {info.contract} ({name}'s)")
            return info.contract or "kafka"
    notes.append("balance promise: kafka (the sticky family's: uniform loads on equal subscriptions; "
                 + (f"the group's assignor {name!r} is not one stickyproof knows)" if name else
                    "the inputs name no assignor: --assignor NAME to hold the group to another)"))
    return "kafka"


def _shares(scenario: Scenario, notion: str) -> dict[tuple[str, str | None], int]:
    """Each member's share: per topic under per-topic balance (ceil of the topic's partitions over
    its subscribers); else ceil(P / N) when every member subscribes to the same topics, and its load
    in a globally balanced optimum when they do not."""
    from .oracle.claims import subscribers_by_topic
    from .oracle.contracts import raw_subscriptions_equal

    subs = subscribers_by_topic(scenario)
    counts = scenario.partition_counts
    if notion == "per-topic":
        return {(m, t): math.ceil(counts[t] / len(ms)) for t, ms in subs.items() for m in ms}
    if not scenario.members:
        return {}
    if raw_subscriptions_equal(scenario):
        total = sum(counts[t] for t in subs)
        return {(m.id, None): math.ceil(total / len(scenario.members)) for m in scenario.members}
    from .oracle.flow import optimal_loads

    return {(m, None): n for m, n in optimal_loads(scenario, "global").items()}


def _racks_known(scenario: Scenario) -> bool:
    return any(m.rack for m in scenario.members) and any(t.racks for t in scenario.topics)


def _replica_racks(scenario: Scenario, tp: TopicPartition) -> tuple[str, ...]:
    topic = scenario.topic(tp.topic)
    if topic is None or not topic.racks or tp.partition >= len(topic.racks):
        return ()
    return topic.racks[tp.partition]


# ------------------------------------------------------------------------------------------
# The built-in assignors on the same rebalance


def _assignor_runs(scenario: Scenario, limits: Any) -> list[tuple[str, Assignment | None, str | None]]:
    """Every built-in assignor and release, led as Kafka leads it on ``scenario``: cooperative for an
    assignor that supports it (so the cooperative-sticky family sees ``ownedPartitions``), else eager
    (where ``sticky`` reads its claims from user data and range/roundrobin keep nothing on purpose)."""
    from .assignors.registry import list_assignors
    from .grading import leader_run
    from .lookup import get_assignor

    out = []
    for row in list_assignors():
        info = get_assignor(row.name)
        protocol = "cooperative" if "cooperative" in info.protocols else "eager"
        led = replace(scenario, protocol=protocol, members=tuple(replace(m, assignors=()) for m in scenario.members))
        try:
            out.append((info.name, leader_run(info, limits=limits)(led), None))
        except AssignorFailure as exc:
            out.append((info.name, None, f"{type(exc).__name__}: {exc}"))
    return out


# ------------------------------------------------------------------------------------------
# The explanation


def explain(before: Snapshot, after: Snapshot, *, limits: Any = None, assignors: bool = True) -> Explanation:
    """Why each partition moved between ``before`` and ``after`` (the module docstring lists the
    reasons). ``assignors``: run the built-in assignors to say which would have kept each move.
    ``limits``: ``grading.Limits`` for the assignor runs and the optimum (default: none)."""
    from .grading import Limits
    from .importers.result import withheld_for_revocation
    from .oracle.claims import retainable_claims
    from .oracle.contracts import contract_named, contract_optimum

    limits = limits if limits is not None else Limits()
    notes: list[str] = []
    if before.group and after.group and before.group != after.group:
        notes.append(f"the two inputs describe different groups ({before.group!r}, {after.group!r})")
    if after.kip848 and after.state not in (None, "Stable"):
        notes.append(f"AFTER's group was {after.state}: members may not hold their target yet (--target reads "
                     "TARGET-ASSIGNMENT, the assignor's decision)")
    same, rejoined, returned = _identities(before, after)
    recon = _reconstruct(before, after, same, notes)
    ids = {m.id for m in recon.members}
    given = {m: tuple(tps) for m, tps in after.held.items() if m in ids}
    owned = {m.id: m.owned for m in recon.members}
    revoking = withheld_for_revocation(owned, given) if recon.protocol == "cooperative" else {}
    after_assignment = Assignment({m.id: given.get(m.id, ()) for m in recon.members}, revoking)

    contract = _contract(after, before, notes)
    optimum = contract_optimum(recon, contract, assignment=after_assignment, cpsat_work=limits.cpsat_work,
                               cpsat_seconds=limits.cpsat_seconds)
    unnecessary = set(optimum.unnecessary)
    if not optimum.proven:
        notes.append(f"the optimum is not proven ({optimum.status}; bound {optimum.bound}): 'unnecessary' is "
                     "judged against the best assignment found")
    notion = optimum.notion or contract_named(contract).notion(recon)
    retainer = retainable_claims(recon)
    share_after = _shares(recon, notion)
    share_before = _shares(before.scenario, notion) if before.scenario.members else {}
    racks = _racks_known(recon)
    counts = recon.partition_counts
    subscribed = {m.id: set(m.topics) for m in recon.members}

    holder_before = {tp: m for m, tps in before.held.items() for tp in tps}
    holder_after = {tp: m for m, tps in after.held.items() for tp in tps}
    pending = [(tp, b) for tp, b in sorted(holder_before.items()) if same.get(b) != holder_after.get(tp)]
    assigned = tuple((tp, holder_after[tp]) for tp in sorted(holder_after) if tp not in holder_before)
    joined = [m.id for m in after.scenario.members if m.id not in same.values()]
    left = [m.id for m in before.scenario.members if m.id not in same]

    runs = _assignor_runs(recon, limits) if assignors else []

    def held_count(member_before: str, a: str, topic: str | None) -> tuple[int, int | None, int | None]:
        """What the owner held (of ``topic`` under per-topic balance), its share BEFORE and AFTER."""
        mine = [tp for tp in before.held.get(member_before, ()) if topic is None or tp.topic == topic]
        return (len(mine), share_before.get((member_before, topic)), share_after.get((a, topic)))

    moves: list[Move] = []
    for tp, b in pending:
        a = same.get(b)
        to = holder_after.get(tp)
        where = f"to {to}" if to else "and not yet given to anyone"
        topic_key = tp.topic if notion == "per-topic" else None
        if tp.topic not in counts or not 0 <= tp.partition < counts[tp.topic] or not any(
                tp.topic in s for s in subscribed.values()):
            reason, why = "gone", (f"{tp} is not in AFTER's metadata" if tp.topic not in counts or tp.partition >= counts[tp.topic]
                                   else f"no member subscribes to {tp.topic} after")
        elif a is None:
            reason, why = "left", f"its owner {b} is not a member of the group any more (it left)"
        elif tp.topic not in subscribed[a]:
            reason, why = "unsubscribed", f"its owner {a} is still a member but is not subscribed to {tp.topic}"
        elif retainer.get(tp) != a:
            rivals = [m.id for m in recon.members if tp in m.owned and m.id != a]
            mine = next((m for m in recon.members if m.id == a), None)
            if mine is not None and tp not in mine.owned:
                why = f"its owner {a} did not claim it when it joined (its JoinGroup listed other partitions)"
            elif rivals:
                gens = {m.id: m.generation for m in recon.members if tp in m.owned}
                why = (f"its owner's claim was stale: {', '.join(rivals)} claimed it too (generations "
                       + ", ".join(f"{m} {g}" for m, g in sorted(gens.items())) + "); only a unique highest generation keeps it")
            else:
                why = "its owner's claim does not count (docs/rules.md D3-D4)"
            reason = "stale-claim"
        elif tp in unnecessary:
            aligned = racks and to is not None and _rack_of(recon, to) in _replica_racks(recon, tp)
            was = _rack_of(recon, a) in _replica_racks(recon, tp)
            if aligned and not was:
                reason, why = "rack", (f"moved to a member whose rack ({_rack_of(recon, to)}) holds a replica; "
                                       f"{a}'s rack ({_rack_of(recon, a) or 'none'}) holds none (KIP-881)")
            else:
                reason, why = "unnecessary", (f"an optimal assignment balanced as the {contract} promise requires keeps it "
                                              f"with {a}: moving it was the assignor's choice")
        elif racks and to is not None and _rack_of(recon, to) in _replica_racks(recon, tp) \
                and _rack_of(recon, a) not in _replica_racks(recon, tp):
            # On Kafka's rack-aware path the contract optimum ranks rack alignment above kept
            # (models/optimal-assignment.md T9), so a realigning move is not among the unnecessary ones.
            reason, why = "rack", (f"moved to a member whose rack ({_rack_of(recon, to)}) holds a replica; "
                                   f"{a}'s rack ({_rack_of(recon, a) or 'none'}) holds none (KIP-881)")
        else:
            h, before_share, after_share = held_count(b, a, topic_key)
            of = f" of {tp.topic}" if topic_key else ""
            if joined and after_share is not None and h > after_share and (before_share is None or h <= before_share):
                reason, why = "joined", (f"{len(joined)} member{'s' if len(joined) > 1 else ''} joined: {a} held {h}{of}, "
                                         f"its share is now {after_share}" + (f" (it was {before_share})" if before_share is not None else ""))
            elif after_share is not None and h > after_share:
                reason, why = "balance", f"its owner {a} held {h}{of}, more than its share of {after_share}"
            else:
                reason, why = "balance", (f"the balanced optimum moves it too ({a} held {h}{of}, its share is "
                                          f"{after_share}; the balance of the whole group needed a move here)")
        kept_by = None
        if runs and a is not None and reason not in ("gone", "left", "unsubscribed"):
            kept_by = tuple(name for name, asg, _ in runs if asg is not None and tp in asg.assignment.get(a, ()))
        moves.append(Move(tp, b, to, reason, f"{why}; moved {where}" if to is None else why, kept_by))

    moved_from = {mv.partition: same.get(mv.source) for mv in moves}
    summary = []
    for name, asg, error in runs:
        if asg is None:
            summary.append((name, None, error))
            continue
        keeps = sum(1 for tp, a in moved_from.items() if a is not None and tp in asg.assignment.get(a, ()))
        summary.append((name, keeps, None))
    after_kept = sum(1 for m in recon.members for tp in m.owned if tp in after_assignment.assignment.get(m.id, ()))
    for b, a in returned:
        notes.append(f"{a} has the client id and host of {b}, which left: probably the same consumer restarted, but a "
                     "new member to the group (a new member id), owning nothing when it joined")
    both = [n for n in before.notes if n in after.notes]
    notes.extend(f"both: {n}" for n in both)
    notes.extend(f"BEFORE ({before.source}): {n}" for n in before.notes if n not in both)
    notes.extend(f"AFTER ({after.source}): {n}" for n in after.notes if n not in both)
    return Explanation(
        group=after.group or before.group,
        left=tuple(sorted(left)),
        joined=tuple(sorted(joined)),
        stayed=tuple(sorted(same.values())),
        rejoined=tuple(rejoined),
        returned=tuple(returned),
        moves=tuple(moves),
        assigned=assigned,
        contract=contract,
        notion=optimum.notion,
        optimal_kept=optimum.kept,
        after_kept=after_kept,
        proven=optimum.proven,
        optimum_status=optimum.status,
        assignors=tuple(summary),
        notes=tuple(notes),
    )


def _rack_of(scenario: Scenario, member_id: str | None) -> str | None:
    m: Member | None = next((m for m in scenario.members if m.id == member_id), None)
    return m.rack if m is not None else None


def verdict_line(e: Explanation) -> str:
    """``12 partitions moved; 9 necessary (membership 6, balance 3), 3 an optimal assignment would have kept``."""
    n = len(e.moves)
    if n == 0:
        return "no partition moved" + (f"; {len(e.assigned)} unowned partition{'s' if len(e.assigned) != 1 else ''} assigned"
                                       if e.assigned else "")
    counts = e.counts()
    parts = [f"{label} {k}" for label, reasons in _GROUPS if (k := sum(counts[r] for r in reasons))]
    necessary = sum(1 for m in e.moves if m.necessary)
    line = f"{n} partition{'s' if n != 1 else ''} moved; {necessary} necessary" + (f" ({', '.join(parts)})" if parts else "")
    u = counts["unnecessary"]
    line += f", {u} an optimal assignment would have kept" if u else ", none an optimal assignment would have kept"
    return line
