"""From a counterexample of the model to a simulator events file (models/protocol.md §6).

The model interleaves single steps freely; the simulator (``stickyproof simulate``) runs the protocol
itself, deterministically, and takes only the *world's* events from a file: joins, stalls,
restarts, coordinator fail-overs. Exporting a trace therefore means two things:

1. **Search under the simulator's discipline** (``simulator_discipline``): the trace to export is a
   counterexample of the same model found with two scheduling rules the simulator always follows:
   the leader applies its own assignment in the step that stores it (its SyncGroup answer is
   immediate), and a STABLE member rejoins only when a rebalance is under way or, cooperative, when
   it has just revoked partitions (R38). Every such trace is a trace of the model.
2. **Lay the world's steps out in time** (``events_for``): a member's first JoinGroup becomes a
   ``join`` event (or a scenario member), a pause a ``stall`` lasting until the member resumes (long
   enough for its session to expire when the trace removes it), a stall right after the join
   prepare a ``stall`` with ``at_join_prepare``, a restart a ``restart``, a fail-over a ``failover``.
   Everything else (JoinGroup/SyncGroup, timeouts, the leader's assignment) the simulator does by
   itself. Steps of the world that follow a completed rebalance are placed after the group settles
   (``SETTLE`` ticks later); steps within one rebalance, one tick apart.

The assignor is chosen by the variant's switches (``default_assignor``): an assignor whose real behaviour
makes the choice the contract allowed. Whether the laid-out file really trips the simulator's
monitor is checked by ``tests/test_proofs.py`` (every counterexample of the table), not assumed here.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..logic import AND, IMP, NOT, OR
from .engine import Trace, Unrolling
from .model import CSTABLE, PREP, Variant

__all__ = ["simulator_discipline", "joins_in_index_order", "keep_with_trusted_choice", "rotate_claimed_choice",
           "events_for", "simulation_document", "default_assignor", "member_names", "SETTLE", "LONG_STALL"]

#: Ticks to let a rebalance complete and the group settle (the simulator's defaults: session 6, rebalance 10).
SETTLE = 14
#: A stall long enough for the member's session (and a rebalance timeout) to expire.
LONG_STALL = 14
#: A stall the group does not notice.
SHORT_STALL = 2


def default_assignor(variant: Variant) -> tuple[str | None, tuple[str, ...]]:
    """The simulator assignor and ``--without`` switches that realise ``variant`` (None: the caller must give one).

    eager: ``all`` = sticky 2.2 (no generation, KAFKA-7026), ``top`` = sticky 2.6 (highest generation only),
    ``unique`` = today's sticky. cooperative: ``all`` = cooperative-sticky 2.6 (no generation in its user
    data, so every claim counts, and 2.6-2.8 did not detect duplicate claims: both claimants keep the
    partition, KAFKA-12984, docs/rules.md §1.3; 2.4's resolution keeps only the last claimant in map
    order, so it never doubles one partition), otherwise today's cooperative-sticky. One round needs a
    user assignor that moves claimed partitions at once (``tests/proof_assignors.py: rotate_claimed``).
    """
    without: list[str] = []
    if variant.reset_bug:
        without.append("join-prepare-after-reset")
    if not variant.coop:
        return {"all": "sticky@2.2", "top": "sticky@2.6", "unique": "sticky"}[variant.trust], tuple(without)
    if variant.rounds == 1:
        without.append("cooperative-validation")
        return None, tuple(without)
    return ("cooperative-sticky@2.6" if variant.trust == "all" else "cooperative-sticky"), tuple(without)


#: After these steps a member sends its next JoinGroup in the same turn (``joinGroupIfNeeded`` loops).
_SAME_TURN_JOIN = ("Rejoin", "SyncRebalance", "SyncReset", "Heartbeat", "ResumeExpelled")


def simulator_discipline(u: Unrolling, k: int) -> Any:
    """The scheduling rules of the simulator, as constraints on step ``k`` (and ``k + 1``)."""
    v, model, s = u.v, u.model, u.states[k]
    rules = []
    for m in v.elems("M"):
        # The leader's SyncGroup answer is immediate: it applies its assignment in the next step.
        rules.append(IMP(u.step_is(k, "Commit", (m,)), u.step_is(k + 1, "SyncReceive", (m,))))
        # A STABLE member rejoins because a rebalance is under way, or (cooperative) after revoking.
        revoked = v.exists(("P",), lambda p, m=m: AND(s.claim(m, p), NOT(s.own(m, p)))) if model.variant.coop else False
        rules.append(IMP(u.step_is(k, "Rejoin", (m,)), OR(s.cs() == PREP, AND(s.cs() == CSTABLE, revoked))))
        # One turn: a member that must rejoin does so at once (or stalls inside its join prepare).
        for name in _SAME_TURN_JOIN:
            rules.append(IMP(u.step_is(k, name, (m,)), OR(u.step_is(k + 1, "Join", (m,)), u.step_is(k + 1, "StallAtPrepare", (m,)))))
    # A leader that left is replaced by the earliest member still there: one of the last stored generation.
    c = u.choices[k]
    stored_present = v.exists(("M",), lambda y: AND(s.ing(y), s.pin(y)))
    rules.append(IMP(u.step_is(k, "CompleteJoin"), v.forall(("M",), lambda x: IMP(AND(c.nl(x), stored_present), s.pin(x)))))
    return AND(*rules)


def joins_in_index_order(u: Unrolling, k: int) -> Any:
    """Symmetry breaking for exports: member i + 1 joins for the first time only after member i has
    (so simulator names, given in order of first join, follow the model's indices)."""
    v = u.v
    rules = []
    for m in v.elems("M"):
        if m == 0:
            continue
        earlier = OR(*[u.step_is(j, "Join", (m - 1,)) for j in range(k)])
        rules.append(IMP(u.step_is(k, "Join", (m,)), earlier))
    return AND(*rules)


def rotate_claimed_choice(u: Unrolling, k: int) -> Any:
    """The leader's choice fixed to what a "rotate claimed" user assignor answers (one partition): a
    claimed partition goes to the next known member after its claimant in index order, an unclaimed
    one to the first known member. For exporting the one-round counterexample: the user assignor
    ``tests/proof_assignors.py: rotate_claimed`` answers the same."""
    v, s, c = u.v, u.states[k], u.choices[k]
    assert v.sizes["P"] == 1, "rotate_claimed_choice models one partition"
    members = list(v.elems("M"))
    rules = []
    for x in members:
        # the first claimant k0 (lowest index among known claimants) and x = next known member after k0
        cases = []
        for k0 in members:
            first_claimant = AND(s.ing(k0), s.claim(k0, 0), *[NOT(AND(s.ing(j), s.claim(j, 0))) for j in members if j < k0])
            after = [j for j in members if j > k0] + [j for j in members if j <= k0]
            nxt = [AND(s.ing(j), *[NOT(s.ing(i)) for i in after[: after.index(j)]]) for j in after]
            cases.append(AND(first_claimant, nxt[after.index(x)]))
        unclaimed = AND(*[NOT(AND(s.ing(j), s.claim(j, 0))) for j in members])
        first_known = AND(s.ing(x), *[NOT(s.ing(j)) for j in members if j < x])
        expected = OR(*cases, AND(unclaimed, first_known))
        rules.append(c.a(x, 0) == expected if not isinstance(expected, bool) else (c.a(x, 0) if expected else NOT(c.a(x, 0))))
    return IMP(u.step_is(k, "Commit"), AND(*rules))


def _first_joins(trace: Trace) -> dict[int, int]:
    """member -> index of the step of its first JoinGroup as a new process (start, or after a restart)."""
    first: dict[int, int] = {}
    for i, step in enumerate(trace.steps):
        if step.action == "Join" and step.args[0] not in first:
            first[step.args[0]] = i
    return first


def member_names(trace: Trace) -> list[str]:
    """Simulator names: ``c1`` for the first member to join in the trace, and so on (the simulator
    admits the members of a cold start in name order, and the first admitted leads)."""
    first_join = _first_joins(trace)
    order = sorted(range(trace.sizes["M"]), key=lambda m: first_join.get(m, len(trace.steps) + m))
    names = [""] * trace.sizes["M"]
    for rank, m in enumerate(order):
        names[m] = f"c{rank + 1}"
    return names


def events_for(trace: Trace, names: Sequence[str] | None = None) -> tuple[list[int], list[dict[str, Any]]]:
    """(members present from tick 0, events) for ``trace`` (names from ``member_names`` unless given)."""
    names = list(names) if names is not None else member_names(trace)
    first_join = _first_joins(trace)
    first_complete = next((i for i, s in enumerate(trace.steps) if s.action == "CompleteJoin"), len(trace.steps))
    at_start = sorted(m for m, i in first_join.items() if i < first_complete)
    # the steps of the world, in order: (step index, kind, member)
    world = []
    for i, step in enumerate(trace.steps):
        if step.action == "Join" and step.args[0] not in at_start and first_join.get(step.args[0]) == i:
            world.append((i, "join", step.args[0]))
        elif step.action in ("Pause", "StallAtPrepare", "Resume", "ResumeExpelled"):
            world.append((i, step.action, step.args[0]))
        elif step.action in ("Restart", "RestartMember", "RestartLast"):
            world.append((i, "restart", step.args[0]))
        elif step.action in ("Failover", "FailoverUnstored", "FailoverLost"):
            world.append((i, "failover", None))
    # ticks: after the start settles; a world step after a completed rebalance waits for the group to settle
    ticks: list[int] = []
    tick = SETTLE // 2 if first_complete < (world[0][0] if world else 0) else 1
    last = -1
    for i, _, _ in world:
        if last >= 0:
            between = trace.steps[last + 1: i]
            tick += SETTLE if any(s.action == "Commit" for s in between) else 1
        ticks.append(tick)
        last = i
    events: list[dict[str, Any]] = []
    placed: list[tuple[int, int]] = []  # (step index, position in events) of the join/restart/fail-over events
    open_stalls: dict[int, dict[str, Any]] = {}
    expired_during: dict[int, bool] = {}
    expiries = {i: s.args[0] for i, s in enumerate(trace.steps) if s.action in ("Expire", "ExpireLast")}
    for (i, kind, m), t in zip(world, ticks):
        for j in [j for j in expiries if j < i]:
            if expiries[j] in open_stalls:
                expired_during[expiries[j]] = True
        if kind == "join":
            placed.append((i, len(events)))
            events.append({"at": t, "event": "join", "member": names[m], "topics": ["t"]})
        elif kind in ("Pause", "StallAtPrepare"):
            e = {"at": t, "event": "stall", "member": names[m], "ticks": SHORT_STALL}
            if kind == "StallAtPrepare":
                e["at_join_prepare"] = True
            # A member that did nothing since earlier world events stalls *before* them, in their tick:
            # laid out a tick later, its heartbeat would already have answered them (after a fail-over
            # without state, UNKNOWN_MEMBER_ID would reset it before the stall the trace needs).
            at = len(events)
            for i0, pos in reversed(placed):
                if kind != "Pause" or any(m in s.args for s in trace.steps[i0 + 1: i]):
                    break
                at, e["at"] = pos, events[pos]["at"]
            events.insert(at, e)
            placed[:] = [(i0, pos + (pos >= at)) for i0, pos in placed]
            open_stalls[m] = e
            expired_during[m] = False
        elif kind in ("Resume", "ResumeExpelled"):
            e = open_stalls.pop(m, None)
            if e is not None:
                long = kind == "ResumeExpelled" or expired_during.get(m, False)
                e["ticks"] = max(t - e["at"], LONG_STALL if long else SHORT_STALL)
        elif kind == "restart":
            placed.append((i, len(events)))
            events.append({"at": t, "event": "restart", "member": names[m]})
        elif kind == "failover":
            persisted = trace.variant.failover == "persisted" and trace.steps[i].action == "Failover"
            placed.append((i, len(events)))
            events.append({"at": t, "event": "failover", "persisted": persisted})
    for e in open_stalls.values():  # never resumed within the trace: a long pause
        e["ticks"] = LONG_STALL
    # a stall armed at the join prepare must be in place before the rebalance that triggers it
    for e in events:
        if e.get("at_join_prepare"):
            earlier = [x["at"] for x in events if x is not e and x["at"] <= e["at"]]
            e["at"] = max(earlier) if earlier else e["at"]
    return at_start, events


def simulation_document(trace: Trace, *, name: str, mechanism: str, assignor: str | None = None,
                        without: Sequence[str] | None = None, names: Sequence[str] | None = None,
                        expect_monitors: dict[str, bool] | None = None) -> dict[str, Any]:
    """A ``stickyproof.simulation/1`` document replaying ``trace`` in the simulator.

    ``names``: the simulator name of each model member (default ``member_names``). Within a tick the
    simulator's members act in name order, so a follower named before the leader sends its
    SyncGroup first and gets its answer a tick after the leader applied its own: name members
    accordingly when that matters (the one-round counterexample).
    """
    chosen, switches = default_assignor(trace.variant)
    assignor = assignor or chosen
    if assignor is None:
        raise ValueError(f"{trace.variant.describe()}: give the simulator assignor to export with")
    names = list(names) if names is not None else member_names(trace)
    at_start, events = events_for(trace, names)
    members = [{"id": names[m], "topics": ["t"], "assignors": [assignor]} for m in sorted(at_start, key=lambda m: names[m])]
    return {
        "format": "stickyproof.simulation/1",
        "name": name,
        "scenario": {
            "format": "stickyproof.scenario/1",
            "name": name,
            "protocol": trace.variant.protocol,
            "topics": {"t": trace.sizes["P"]},
            "members": members,
        },
        "events": sorted(events, key=lambda e: e["at"]),
        **({"without": list(without if without is not None else switches)} if (without or switches) else {}),
        "assignor": assignor,
        "expect": {
            "mechanism": mechanism,
            "monitors": dict(expect_monitors or {"no-double-consumption": False}),
        },
    }


def keep_with_trusted_choice(u: Unrolling, k: int) -> Any:
    """The leader's choice fixed to what the eager sticky assignors answer for one partition: every
    trusted claimant keeps it (the variant's ``trust``: sticky 2.2 trusts every claim, KAFKA-7026;
    sticky 2.6 every claimant at the top generation), an unclaimed one goes to the first known member
    in index order. Used to export the eager counterexamples (KAFKA-7026, the fail-over finding)."""
    v, s, c = u.v, u.states[k], u.choices[k]
    assert v.sizes["P"] == 1, "keep_with_trusted_choice models one partition"
    members = list(v.elems("M"))
    claimed = OR(*[AND(s.ing(j), s.claim(j, 0)) for j in members])
    rules = []
    for x in members:
        first_known = AND(s.ing(x), *[NOT(s.ing(j)) for j in members if j < x])
        expected = OR(AND(claimed, u.model.trusted(v, s, x, 0)), AND(NOT(claimed), first_known))
        rules.append(c.a(x, 0) == expected)
    return IMP(u.step_is(k, "Commit"), AND(*rules))
