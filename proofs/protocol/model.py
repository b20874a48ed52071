"""The classic consumer-group protocol (models/protocol.md) as a transition system, written once.

The model keeps what decides *who consumes what*: the coordinator's generation, membership and
stored assignment; each member's state, generation, owned partitions and sticky user data; the
JoinGroup metadata the leader assigns from; pauses, timeouts, restarts and coordinator fail-over.
It drops what does not (topics and subscriptions: one topic everyone subscribes to; member ids:
one Boolean "the coordinator knows this process's current id"; timers: replaced by the two
timing assumptions below; message queues: an answer takes effect when its request is handled).

**Timing assumptions** (the only ones):

* *T-a*: the coordinator removes a member by a timeout (session, rebalance, pending sync) only
  while that member is paused. A member that runs heartbeats and polls in time.
* *T-b*: a rebalance completes only when every running member that believes it is in the group
  has been heard by the current coordinator (after a fail-over without persisted state: the
  initial rebalance delay is longer than a heartbeat interval).

A paused member consumes nothing; when it resumes, its first exchange with the coordinator tells
it whether it was removed (``ResumeExpelled``), as the simulator's "returning" flag does.

**The assignor** enters only as a *per-round contract* (``contract``): the leader's answer is a
free choice (a Skolem function in the parametric proof, fresh variables in bounded search)
constrained by (1) only members get partitions, (2) a partition goes to two members only if both
are *trusted* claimants of it, (3) with the two-round rule, a partition some member claims goes
only to a trusted claimant (the others must revoke it first; KIP-429, R39). Which claimants are
trusted is the variant's ``trust`` switch. Every assignor meeting the contract is covered.

Variants (``Variant``) are the historical switches: claim trust, one or two cooperative rounds,
the client reset bug (KAFKA-12983), and what a coordinator fail-over keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..logic import AND, IMP, ITE, NOT, OR
from .state import NextState, State, Var

__all__ = [
    "Variant",
    "Action",
    "Effect",
    "STATE",
    "CHOICES",
    "ProtocolModel",
    "OUT",
    "JOINING",
    "SYNCING",
    "STABLE",
    "EMPTY",
    "PREP",
    "COMPL",
    "CSTABLE",
    "MEMBER_STATES",
    "GROUP_STATES",
]

# Member states (models/protocol.md §3): UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE.
OUT, JOINING, SYNCING, STABLE = 0, 1, 2, 3
MEMBER_STATES = {OUT: "UNJOINED", JOINING: "PREPARING_REBALANCE", SYNCING: "COMPLETING_REBALANCE", STABLE: "STABLE"}
# Coordinator states (§2): Empty, PreparingRebalance, CompletingRebalance, Stable.
EMPTY, PREP, COMPL, CSTABLE = 0, 1, 2, 3
GROUP_STATES = {EMPTY: "Empty", PREP: "PreparingRebalance", COMPL: "CompletingRebalance", CSTABLE: "Stable"}

M, P = "M", "P"

STATE: tuple[Var, ...] = (
    # the member process
    Var("st", (M,), "int", OUT, "member state"),
    Var("paused", (M,), "bool", False, "stalled, or back from a stall and not yet heard by the coordinator"),
    Var("prep", (M,), "bool", False, "onJoinPrepare done, JoinGroup not yet sent"),
    Var("hasid", (M,), "bool", False, "believes it has a member id"),
    Var("g", (M,), "int", -1, "its generation (-1 after a reset)"),
    Var("own", (M, P), "bool", False, "partitions it believes it owns"),
    Var("mem", (M, P), "bool", False, "user-data memory: the last assignment received (R1)"),
    Var("memg", (M,), "int", -1, "generation of that assignment"),
    Var("meme", (M,), "int", 0, "ghost: coordinator epoch of that assignment"),
    # the coordinator
    Var("cs", (), "int", EMPTY, "coordinator state"),
    Var("G", (), "int", 0, "group generation"),
    Var("E", (), "int", 0, "ghost: coordinator epoch (a fail-over without persisted state starts a new one)"),
    Var("ing", (M,), "bool", False, "the coordinator knows this process's current member id"),
    Var("joined", (M,), "bool", False, "has a JoinGroup pending in the current rebalance"),
    Var("lead", (M,), "bool", False, "the group leader (it alone sends the assignment)"),
    Var("claim", (M, P), "bool", False, "ownedPartitions (or user-data claims) of its last JoinGroup"),
    Var("cg", (M,), "int", -1, "the generation that JoinGroup reported with them"),
    Var("asg", (M, P), "bool", False, "the stored assignment of generation G"),
    Var("pG", (), "int", -1, "persisted: generation of the last stored assignment (-1: none)"),
    Var("pin", (M,), "bool", False, "persisted: members of that generation"),
    Var("pasg", (M, P), "bool", False, "persisted: that assignment"),
    Var("plead", (M,), "bool", False, "persisted: its leader"),
)
VARS = {v.name: v for v in STATE}

#: Free choices of a step: the leader's answer at ``Commit`` (constrained by the contract), and the new
#: leader at ``CompleteJoin`` when the old one left (Kafka: the first member in admission order).
CHOICES: tuple[Var, ...] = (
    Var("a", (M, P), "bool", False, "the leader's assignment"),
    Var("nl", (M,), "bool", False, "the new leader"),
)


@dataclass(frozen=True)
class Variant:
    """The switches (models/protocol.md §5, issue 13).

    ``protocol``: ``eager`` (revoke everything before joining; claims from the sticky user data,
    R1) or ``cooperative`` (keep owned partitions; claims are ownedPartitions, R2).
    ``trust``: which claimants of a partition the assignor may leave it with, and may double it
    between: ``all`` (every claim, sticky 2.2 / cooperative-sticky 2.4), ``top`` (every claimant at
    the highest claimed generation, 2.6-3.0), ``unique`` (only a unique highest-generation
    claimant; ties keep nobody: D3, R8).
    ``rounds``: 2 = the two-round rule (a claimed partition goes only to a trusted claimant this
    round); 1 = a cooperative assignor may move a claimed partition at once.
    ``reset_bug``: KAFKA-12983, a reset during a join round skips onJoinPrepare (keeps owned).
    ``failover``: ``none``, ``persisted`` (the new coordinator loads the last stored generation)
    or ``lost`` (no state: generations restart at 1 in a new epoch).
    """

    protocol: str = "eager"
    trust: str = "top"
    rounds: int = 2
    reset_bug: bool = False
    failover: str = "persisted"

    def __post_init__(self) -> None:
        assert self.protocol in ("eager", "cooperative"), self.protocol
        assert self.trust in ("all", "top", "unique"), self.trust
        assert self.rounds in (1, 2), self.rounds
        assert self.failover in ("none", "persisted", "lost"), self.failover

    @property
    def coop(self) -> bool:
        return self.protocol == "cooperative"

    def describe(self) -> str:
        parts = [self.protocol, f"trust={self.trust}"]
        if self.coop:
            parts.append(f"rounds={self.rounds}")
        if self.reset_bug:
            parts.append("reset-bug")
        parts.append(f"failover={self.failover}")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "trust": self.trust, "rounds": self.rounds,
                "reset_bug": self.reset_bug, "failover": self.failover}

    def but(self, **changes: Any) -> "Variant":
        return replace(self, **changes)


@dataclass
class Effect:
    """What an action does when its parameters are bound: enabled when ``guard``; ``updates`` give
    the successor's variables (others unchanged); ``assume`` constrains the step's free choices."""

    guard: Any
    updates: dict[str, Callable[..., Any]] = field(default_factory=dict)
    assume: Any = True


@dataclass(frozen=True)
class Action:
    name: str
    params: tuple[str, ...]
    build: Callable[..., Effect]
    uses_choice: bool = False
    environment: bool = False  # caused by the world (pause, restart, fail-over), not by the protocol
    doc: str = ""


class _Updates:
    """Accumulates per-member updates of one action over a state."""

    def __init__(self, v: Any, s: State):
        self.v, self.s, self.u = v, s, {}

    def _prev(self, name: str) -> Callable[..., Any]:
        if name in self.u:
            return self.u[name]
        s = self.s
        return lambda *idx: s.read(name, idx)

    def member(self, name: str, m: Any, value: Any) -> None:
        """``name(m) := value`` (for an (M, P) variable ``value`` is a function of the partition)."""
        prev, same = self._prev(name), self.v.same
        if VARS[name].dom == (M,):
            self.u[name] = lambda x: ITE(same(x, m), value, prev(x))
        else:
            self.u[name] = lambda x, p: ITE(same(x, m), value(p), prev(x, p))

    def every(self, name: str, fn: Callable[..., Any]) -> None:
        self.u[name] = fn

    def scalar(self, name: str, value: Any) -> None:
        self.u[name] = lambda: value


class ProtocolModel:
    """The protocol of ``variant`` over a view ``v`` (``logic.Concrete`` or ``logic.Symbolic``)."""

    def __init__(self, variant: Variant):
        self.variant = variant
        self.actions: tuple[Action, ...] = self._actions()

    # ------------------------------------------------------------------------------------
    # Initial state, consumption, the safety properties

    def init(self, v: Any, s: State) -> Any:
        """Everyone unstarted (UNJOINED, no id, nothing owned or remembered), the coordinator empty."""
        parts = []
        for var in STATE:
            parts.append(v.forall(var.dom, lambda *idx, var=var: s.read(var.name, idx) == var.init))
        return AND(*parts)

    def consuming(self, v: Any, s: State, m: Any, p: Any) -> Any:
        """A member fetches what it owns while it runs; an eager one only when STABLE (§3 "Consuming")."""
        base = AND(s.own(m, p), NOT(s.paused(m)))
        return base if self.variant.coop else AND(base, s.st(m) == STABLE)

    def no_double_consumption(self, v: Any, s: State) -> Any:
        """The safety property: no partition is consumed by two members at once (monitor no-double-consumption)."""
        return v.forall((M, M, P), lambda x, y, p: IMP(
            AND(NOT(v.same(x, y)), self.consuming(v, s, x, p)), NOT(self.consuming(v, s, y, p))))

    def assignment_unique(self, v: Any, s: State) -> Any:
        """The leader never hands one partition to two members (the stored assignment is a function)."""
        return v.forall((M, M, P), lambda x, y, p: IMP(AND(NOT(v.same(x, y)), s.asg(x, p)), NOT(s.asg(y, p))))

    PROPERTIES = ("no-double-consumption", "assignment-unique")

    def prop(self, name: str) -> Callable[[Any, State], Any]:
        return {"no-double-consumption": self.no_double_consumption, "assignment-unique": self.assignment_unique}[name]

    # ------------------------------------------------------------------------------------
    # The assignor's contract

    def trusted(self, v: Any, s: State, x: Any, p: Any) -> Any:
        """``x`` is a claimant of ``p`` the assignor may leave ``p`` with (the ``trust`` switch)."""
        base = AND(s.ing(x), s.claim(x, p))
        t = self.variant.trust
        if t == "all":
            return base
        if t == "top":
            return AND(base, v.forall((M,), lambda k: IMP(AND(s.ing(k), s.claim(k, p)), s.cg(k) <= s.cg(x))))
        return AND(base, v.forall((M,), lambda k: IMP(AND(s.ing(k), s.claim(k, p), NOT(v.same(k, x))), s.cg(k) < s.cg(x))))

    def contract(self, v: Any, s: State, a: State) -> Any:
        """The per-round contract on the leader's answer ``a`` (models/invariants.md: duplicate, cooperative-unsafe)."""
        members_only = v.forall((M, P), lambda x, p: IMP(a.a(x, p), s.ing(x)))
        doubled_only_if_trusted = v.forall((M, M, P), lambda x, y, p: IMP(
            AND(a.a(x, p), a.a(y, p), NOT(v.same(x, y))), AND(self.trusted(v, s, x, p), self.trusted(v, s, y, p))))
        parts = [members_only, doubled_only_if_trusted]
        if self.variant.coop and self.variant.rounds == 2:
            parts.append(v.forall((M, M, P), lambda x, k, p: IMP(
                AND(a.a(x, p), s.ing(k), s.claim(k, p)), self.trusted(v, s, x, p))))
        return AND(*parts)

    # ------------------------------------------------------------------------------------
    # Shared pieces of actions

    def _reset(self, u: _Updates, m: Any, keep_owned: Any, keep_id: Any) -> None:
        """``resetStateAndGeneration`` followed (same turn) by the retry's join prepare: generation -1,
        owned lost unless ``keep_owned`` (KAFKA-12983), member id kept only for ILLEGAL_GENERATION."""
        s = u.s
        u.member("own", m, lambda p: AND(keep_owned, s.own(m, p)))
        u.member("g", m, -1)
        u.member("hasid", m, keep_id)
        u.member("st", m, OUT)
        u.member("prep", m, True)
        u.member("pin", m, AND(keep_id, s.pin(m)))
        u.member("plead", m, AND(keep_id, s.plead(m)))

    def _fresh_process(self, u: _Updates, m: Any) -> None:
        """A restarted process: nothing owned, no id, no user data (§3 "Restarts")."""
        s = u.s
        u.member("st", m, OUT)
        u.member("paused", m, False)
        u.member("prep", m, False)
        u.member("hasid", m, False)
        u.member("g", m, -1)
        u.member("own", m, lambda p: False)
        u.member("mem", m, lambda p: False)
        u.member("memg", m, -1)
        u.member("meme", m, s.E())
        u.member("pin", m, False)
        u.member("plead", m, False)

    def _leave_group(self, u: _Updates, m: Any, others: bool) -> None:
        """The coordinator drops ``m``: a rebalance starts if others remain, else the group is empty."""
        s = u.s
        u.member("ing", m, False)
        u.member("joined", m, False)
        u.member("lead", m, False)
        if others:
            u.scalar("cs", ITE(OR(s.cs() == CSTABLE, s.cs() == COMPL), PREP, s.cs()))
        else:
            u.scalar("cs", EMPTY)

    def _abort_pending(self, u: _Updates) -> None:
        """NOT_COORDINATOR for every pending JoinGroup/SyncGroup: rejoin keeping id and generation (no new prepare)."""
        s = u.s
        pending = lambda x: OR(s.st(x) == JOINING, s.st(x) == SYNCING)  # noqa: E731
        u.every("st", lambda x: ITE(pending(x), OUT, s.st(x)))
        u.every("prep", lambda x: OR(pending(x), s.prep(x)))

    # ------------------------------------------------------------------------------------
    # Actions

    def _actions(self) -> tuple[Action, ...]:
        var = self.variant
        eager = not var.coop

        def pause(v, s, m):
            u = _Updates(v, s)
            u.member("paused", m, True)
            return Effect(NOT(s.paused(m)), u.u)

        def resume(v, s, m):
            u = _Updates(v, s)
            u.member("paused", m, False)
            return Effect(AND(s.paused(m), NOT(AND(s.hasid(m), NOT(s.ing(m))))), u.u)

        def resume_expelled(v, s, m):
            # Its first answer after the pause is UNKNOWN_MEMBER_ID. A member that was in a join round
            # (or gets there through its retry) keeps its partitions only with the reset bug.
            u = _Updates(v, s)
            u.member("paused", m, False)
            in_join_round = AND(s.st(m) != STABLE, OR(not eager, s.prep(m), s.st(m) != OUT))
            self._reset(u, m, keep_owned=AND(var.reset_bug, in_join_round), keep_id=False)
            return Effect(AND(s.paused(m), s.hasid(m), NOT(s.ing(m))), u.u)

        def heartbeat(v, s, m):
            # UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION to a heartbeat: not a join round, so the prepare runs.
            u = _Updates(v, s)
            self._reset(u, m, keep_owned=False, keep_id=s.ing(m))
            return Effect(AND(s.st(m) == STABLE, NOT(s.paused(m)), OR(NOT(s.ing(m)), s.g(m) != s.G())), u.u)

        def rejoin(v, s, m):
            # REBALANCE_IN_PROGRESS, a revocation follow-up (R38), a subscription or metadata change:
            # any STABLE member may decide to rejoin at any time (an over-approximation).
            u = _Updates(v, s)
            u.member("st", m, OUT)
            u.member("prep", m, False)
            return Effect(AND(s.st(m) == STABLE, NOT(s.paused(m)), s.ing(m), s.g(m) == s.G()), u.u)

        def prepared(s, m, p):
            """Owned after onJoinPrepare (R37): lost after a reset; eager revokes everything; cooperative keeps."""
            drop = OR(s.g(m) < 0, NOT(s.hasid(m)), eager)
            return AND(NOT(drop), s.own(m, p))

        def stall_at_prepare(v, s, m):
            # The member runs onJoinPrepare and stalls before its JoinGroup goes out (events: at_join_prepare).
            u = _Updates(v, s)
            u.member("own", m, lambda p: ITE(s.prep(m), s.own(m, p), prepared(s, m, p)))
            u.member("prep", m, True)
            u.member("paused", m, True)
            return Effect(AND(s.st(m) == OUT, NOT(s.paused(m))), u.u)

        def join(v, s, m):
            # joinGroupIfNeeded in one turn: onJoinPrepare unless done, JoinGroup; an UNKNOWN_MEMBER_ID
            # answer resets the member and it joins again at once as a new member (without a second
            # prepare: owned kept, only with the reset bug). A rebalance starts.
            u = _Updates(v, s)
            unknown = AND(s.hasid(m), NOT(s.ing(m)))
            own1 = lambda p: ITE(s.prep(m), s.own(m, p), prepared(s, m, p))  # noqa: E731
            own2 = lambda p: ITE(unknown, AND(var.reset_bug, own1(p)), own1(p))  # noqa: E731
            g2 = ITE(unknown, -1, s.g(m))
            u.member("own", m, own2)
            u.member("g", m, g2)
            if eager:  # StickyAssignor: claims and generation from the user data (R1)
                u.member("claim", m, lambda p: s.mem(m, p))
                u.member("cg", m, s.memg(m))
            else:  # CooperativeStickyAssignor: ownedPartitions, wire generation, else user data (R2)
                u.member("claim", m, own2)
                u.member("cg", m, ITE(g2 >= 0, g2, s.memg(m)))
            u.member("pin", m, AND(s.pin(m), s.hasid(m), NOT(unknown)))
            u.member("plead", m, AND(s.plead(m), s.hasid(m), NOT(unknown)))
            u.member("ing", m, True)
            u.member("hasid", m, True)
            u.member("joined", m, True)
            u.member("st", m, JOINING)
            u.member("prep", m, False)
            u.every("lead", lambda x: ITE(s.cs() == EMPTY, v.same(x, m), s.lead(x)))
            u.scalar("cs", PREP)
            return Effect(AND(s.st(m) == OUT, NOT(s.paused(m))), u.u)

        def complete_join(v, s, c):
            # onCompleteJoin: generation + 1, every member's JoinGroup answered (T-b: everyone running was heard);
            # a leader that left is replaced by one of the members (the choice ``nl``).
            u = _Updates(v, s)
            u.every("lead", lambda x: OR(s.lead(x), c.nl(x)))
            new_leader = AND(
                v.forall((M,), lambda x: IMP(c.nl(x), AND(s.ing(x), v.forall((M,), lambda y: NOT(s.lead(y)))))),
                v.forall((M, M), lambda x, y: IMP(AND(c.nl(x), c.nl(y)), v.same(x, y))),
            )
            u.scalar("G", s.G() + 1)
            u.scalar("cs", COMPL)
            u.every("st", lambda x: ITE(s.ing(x), SYNCING, s.st(x)))
            u.every("g", lambda x: ITE(s.ing(x), s.G() + 1, s.g(x)))
            u.every("joined", lambda x: False)
            guard = AND(
                s.cs() == PREP,
                v.forall((M,), lambda x: IMP(s.ing(x), s.joined(x))),
                v.forall((M,), lambda x: IMP(AND(NOT(s.paused(x)), s.hasid(x)), s.ing(x))),
            )
            return Effect(guard, u.u, new_leader)

        def commit(v, s, l, a):
            # The leader's SyncGroup: the assignment (a free choice under the contract) is stored and persisted.
            u = _Updates(v, s)
            u.every("asg", lambda x, p: a.a(x, p))
            u.scalar("cs", CSTABLE)
            if var.failover == "persisted":
                u.scalar("pG", s.G())
                u.every("pin", lambda x: s.ing(x))
                u.every("pasg", lambda x, p: a.a(x, p))
                u.every("plead", lambda x: s.lead(x))
            guard = AND(s.cs() == COMPL, s.lead(l), s.ing(l), s.st(l) == SYNCING, s.g(l) == s.G(), NOT(s.paused(l)))
            return Effect(guard, u.u, self.contract(v, s, a))

        def sync_reset(v, s, m):
            # SyncGroup answered UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION: a reset in a join round.
            u = _Updates(v, s)
            self._reset(u, m, keep_owned=var.reset_bug, keep_id=s.ing(m))
            return Effect(AND(s.st(m) == SYNCING, NOT(s.paused(m)), OR(NOT(s.ing(m)), s.g(m) != s.G())), u.u)

        def sync_rebalance(v, s, m):
            # SyncGroup answered REBALANCE_IN_PROGRESS: rejoin, generation and owned kept (R37).
            u = _Updates(v, s)
            u.member("st", m, OUT)
            u.member("prep", m, False)
            return Effect(AND(s.st(m) == SYNCING, NOT(s.paused(m)), s.ing(m), s.g(m) == s.G(), s.cs() == PREP), u.u)

        def sync_receive(v, s, m):
            # onJoinComplete: owned := assigned (cooperative: the rest revoked, R38); user data remembered.
            u = _Updates(v, s)
            u.member("own", m, lambda p: s.asg(m, p))
            u.member("mem", m, lambda p: s.asg(m, p))
            u.member("memg", m, s.G())
            u.member("meme", m, s.E())
            u.member("st", m, STABLE)
            return Effect(AND(s.st(m) == SYNCING, NOT(s.paused(m)), s.ing(m), s.g(m) == s.G(), s.cs() == CSTABLE), u.u)

        def expire(v, s, m, w):
            # Session / rebalance / pending-sync timeout (T-a: only a paused member); others remain.
            u = _Updates(v, s)
            self._leave_group(u, m, others=True)
            return Effect(AND(s.ing(m), s.paused(m), s.ing(w), NOT(v.same(w, m))), u.u)

        def expire_last(v, s, m):
            u = _Updates(v, s)
            self._leave_group(u, m, others=False)
            return Effect(AND(s.ing(m), s.paused(m), v.forall((M,), lambda x: IMP(s.ing(x), v.same(x, m)))), u.u)

        def restart(v, s, m):
            u = _Updates(v, s)
            self._fresh_process(u, m)
            return Effect(NOT(s.ing(m)), u.u)

        def restart_member(v, s, m, w):
            # Close (revoke everything, LeaveGroup) and start again; others remain.
            u = _Updates(v, s)
            self._fresh_process(u, m)
            self._leave_group(u, m, others=True)
            return Effect(AND(s.ing(m), s.ing(w), NOT(v.same(w, m))), u.u)

        def restart_last(v, s, m):
            u = _Updates(v, s)
            self._fresh_process(u, m)
            self._leave_group(u, m, others=False)
            return Effect(AND(s.ing(m), v.forall((M,), lambda x: IMP(s.ing(x), v.same(x, m)))), u.u)

        def failover_restore(v, s):
            # The new coordinator loads the last stored generation (members, assignment), Stable.
            u = _Updates(v, s)
            self._abort_pending(u)
            u.scalar("G", s.pG())
            u.every("ing", lambda x: s.pin(x))
            u.every("joined", lambda x: False)
            u.every("asg", lambda x, p: s.pasg(x, p))
            u.every("lead", lambda x: s.plead(x))
            u.scalar("cs", CSTABLE)
            return Effect(s.pG() >= 0, u.u)

        def failover_fresh(v, s, keep_persisted: bool):
            # No group state at the new coordinator: a new epoch, generations from 1 again.
            u = _Updates(v, s)
            self._abort_pending(u)
            u.scalar("E", s.E() + 1)
            u.scalar("G", 0)
            u.scalar("cs", EMPTY)
            u.every("ing", lambda x: False)
            u.every("joined", lambda x: False)
            u.every("lead", lambda x: False)
            u.every("asg", lambda x, p: False)
            if not keep_persisted:
                u.scalar("pG", -1)
                u.every("pin", lambda x: False)
                u.every("pasg", lambda x, p: False)
                u.every("plead", lambda x: False)
            return Effect(True if not keep_persisted else s.pG() < 0, u.u)

        acts = [
            Action("Pause", (M,), pause, environment=True, doc="a member stalls (GC, slow processing, network)"),
            Action("Resume", (M,), resume, environment=True, doc="a paused member still in the group runs again"),
            Action("ResumeExpelled", (M,), resume_expelled, environment=True,
                   doc="a paused member removed meanwhile runs again and learns it (UNKNOWN_MEMBER_ID)"),
            Action("Heartbeat", (M,), heartbeat, doc="a heartbeat answered UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION"),
            Action("Rejoin", (M,), rejoin, doc="a STABLE member rejoins (rebalance in progress, follow-up, subscription change)"),
            Action("StallAtPrepare", (M,), stall_at_prepare, environment=True,
                   doc="a member about to join stalls right after onJoinPrepare, before its JoinGroup"),
            Action("Join", (M,), join, doc="onJoinPrepare (unless done) and JoinGroup, retried at once after UNKNOWN_MEMBER_ID"),
            Action("CompleteJoin", (), complete_join, uses_choice=True, doc="the coordinator completes the join: generation + 1"),
            Action("Commit", (M,), commit, uses_choice=True, doc="the leader's SyncGroup stores its assignment"),
            Action("SyncReset", (M,), sync_reset, doc="SyncGroup answered UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION"),
            Action("SyncRebalance", (M,), sync_rebalance, doc="SyncGroup answered REBALANCE_IN_PROGRESS"),
            Action("SyncReceive", (M,), sync_receive, doc="SyncGroup answered with the member's assignment"),
            Action("Expire", (M, M), expire, environment=True, doc="a paused member's session or rebalance timeout"),
            Action("ExpireLast", (M,), expire_last, environment=True, doc="the last member times out"),
            Action("Restart", (M,), restart, environment=True, doc="a process outside the group restarts"),
            Action("RestartMember", (M, M), restart_member, environment=True, doc="a member closes and restarts"),
            Action("RestartLast", (M,), restart_last, environment=True, doc="the last member closes and restarts"),
        ]
        if var.failover == "persisted":
            acts.append(Action("Failover", (), failover_restore, environment=True, doc="the coordinator moves; stored state loaded"))
            acts.append(Action("FailoverUnstored", (), lambda v, s: failover_fresh(v, s, True), environment=True,
                               doc="the coordinator moves before anything was stored"))
        elif var.failover == "lost":
            acts.append(Action("FailoverLost", (), lambda v, s: failover_fresh(v, s, False), environment=True,
                               doc="the coordinator moves without persisted state: generations restart"))
        return tuple(acts)

    def action(self, name: str) -> Action:
        for a in self.actions:
            if a.name == name:
                return a
        raise KeyError(name)

    def effect(self, action: Action, v: Any, s: State, args: tuple, choice: State | None) -> Effect:
        if action.uses_choice:
            return action.build(v, s, *args, choice)
        return action.build(v, s, *args)

    def successor(self, s: State, effect: Effect) -> NextState:
        return NextState(s, effect.updates)
