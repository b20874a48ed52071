"""KIP-848 reconciliation (Kafka's group coordinator: ``CurrentAssignmentBuilder``, the partition epochs of
``ConsumerGroup``, the heartbeat of ``GroupMetadataManager``) as a transition system, written once.

The model keeps what decides *who holds what* under the consumer protocol: the coordinator's
target assignment and its epoch, each member's record (member epoch, state, assigned partitions,
partitions pending revocation, and for the 2024 builder its pending assignment and target epoch),
the partition epochs the coordinator uses to tell whether a partition is released, and what each
member's client holds. It drops what does not: topics (one set of partitions; a target is any
map that gives each partition to at most one member, so every assignor is covered), subscriptions,
member ids (one slot per process; a process that leaves and joins again reuses its slot), timers.

**The rules** follow Kafka's group coordinator:

* ``builder="today"``: ``CurrentAssignmentBuilder`` as it is after the 2024 rewrite (states STABLE,
  UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS). A member leaves UNREVOKED_PARTITIONS only when its
  heartbeat no longer reports a partition pending revocation, and then moves to its epoch + 1;
  ``computeNextAssignment`` keeps ``assigned ∩ target``, asks to revoke ``assigned − target`` (only
  if the member still reports one of them), and hands out ``target − assigned`` only where the
  partition epoch is -1 (released). A partition the member itself is revoking counts as not
  released, as before KAFKA-19449's fix; ``kafka_19449_fix`` counts it as released (PR #20781).
* ``builder="2024"``: the builder of January 2024 (states STABLE, REVOKING, ASSIGNING, a stored
  pending assignment and target member epoch). On a new target it keeps ``(assigned ∪ revoking) ∩
  target``: a partition pending revocation can be given back to the same member. Leaving REVOKING
  needs the reported owned partitions to be a subset of the assigned ones (Kafka also compares the
  number of topics; with one set of partitions the subset test is the weaker condition, so the
  model allows more runs, never fewer).
* ``bookkeeping="fixed"``: after a member's record changes, the coordinator removes the partition
  epochs of every partition of the old record and adds the new record's at its epoch (PR #15212).
  ``bookkeeping="kafka-16147"``: before that fix, assigned and pending-revocation sets were updated
  one after the other, each only if it changed: a partition moving from pending revocation to
  assigned got its epoch from the first update and lost it in the second.

* The heartbeat validates the member epoch as ``GroupMetadataManager`` does: the current epoch, or
  the previous one when the partitions reported are a subset of the assigned ones; otherwise
  FENCED_MEMBER_EPOCH, the client drops everything and rejoins at epoch 0 (the model then replaces
  the record; Kafka's handling of that rejoin, KAFKA-19233, is not modelled).

**Assumptions** (proofs/README.md, B1-B4): a request is handled when it is sent (no reordering,
no duplication); its response arrives, or with ``lossy`` may be lost; the coordinator removes a
member by a timeout (session, rebalance) only while the member is stalled or fenced, and a stalled
member consumes nothing and drops its partitions before it consumes again (as A1 of the classic
model); the client applies an assignment only between its heartbeats, revoking before it takes
new partitions.

With ``atomic_client`` the client applies each response inside its heartbeat (unless the answer is
lost, it then holds exactly its assigned partitions): the runs a simulator replays as ``heartbeat``
events. Without
it, revoking and assigning are separate client steps (``Revoke``, ``Assign``) that may lag behind
any number of the member's heartbeats.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from ..logic import AND, IMP, ITE, NOT, OR
from ..protocol.model import Action, Effect
from ..protocol.state import NextState, State, Var

__all__ = ["Variant", "STATE", "CHOICES", "ReconciliationModel", "STABLE", "UNREVOKED", "UNRELEASED",
           "REVOKING", "ASSIGNING", "STATE_NAMES", "FREE"]

M, P = "M", "P"
#: Member states. today: STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS; 2024: STABLE, REVOKING, ASSIGNING.
STABLE, UNREVOKED, UNRELEASED = 0, 1, 2
REVOKING, ASSIGNING = 1, 2
STATE_NAMES = {"today": {STABLE: "STABLE", UNREVOKED: "UNREVOKED_PARTITIONS", UNRELEASED: "UNRELEASED_PARTITIONS"},
               "2024": {STABLE: "STABLE", REVOKING: "REVOKING", ASSIGNING: "ASSIGNING"}}
#: The partition epoch of a partition nobody holds.
FREE = -1

STATE: tuple[Var, ...] = (
    # the coordinator
    Var("E", (), "int", 0, "group epoch = epoch of the current target assignment"),
    Var("tgt", (M, P), "bool", False, "the target assignment of epoch E"),
    Var("inm", (M,), "bool", False, "the member is in the group (the coordinator holds its record)"),
    Var("ep", (M,), "int", 0, "member epoch"),
    Var("pep", (M,), "int", -1, "previous member epoch"),
    Var("cst", (M,), "int", STABLE, "member state"),
    Var("asg", (M, P), "bool", False, "assigned partitions of the record"),
    Var("rev", (M, P), "bool", False, "partitions pending revocation"),
    Var("pnd", (M, P), "bool", False, "2024 builder: partitions pending assignment"),
    Var("tep", (M,), "int", 0, "2024 builder: target member epoch"),
    Var("pe", (P,), "int", FREE, "partition epoch: epoch of the member holding it, -1 when released"),
    # the member's client
    Var("cin", (M,), "bool", False, "the client believes it is in the group (joined, not fenced)"),
    Var("cep", (M,), "int", 0, "the member epoch the client sends (the last one it received)"),
    Var("own", (M, P), "bool", False, "partitions the client holds (consumes)"),
)
VARS = {v.name: v for v in STATE}

#: The free choices of a step: the assignor's new target (constrained by ``contract``), a lost response.
CHOICES: tuple[Var, ...] = (Var("a", (M, P), "bool", False, "the new target assignment"),
                            Var("lost", (), "bool", False, "the heartbeat's response is lost"))


@dataclass(frozen=True)
class Variant:
    """``builder``: ``today`` or ``2024``; ``bookkeeping``: ``fixed`` or ``kafka-16147``;
    ``atomic_client``: the client applies each response within its heartbeat; ``lossy``: a response
    may be lost (then the member epoch validation, fencing and the timeout of a fenced member matter);
    ``kafka_19449_fix``: a partition the member itself is revoking counts as released (PR #20781)."""

    builder: str = "today"
    bookkeeping: str = "fixed"
    atomic_client: bool = False
    lossy: bool = False
    kafka_19449_fix: bool = False

    def __post_init__(self) -> None:
        assert self.builder in ("today", "2024"), self.builder
        assert self.bookkeeping in ("fixed", "kafka-16147"), self.bookkeeping
        assert self.atomic_client or not self.lossy, "lost responses are modelled for the atomic client only"
        assert self.builder == "today" or not self.kafka_19449_fix, "KAFKA-19449's fix is to today's builder"

    def describe(self) -> str:
        return (f"builder={self.builder}, bookkeeping={self.bookkeeping}" + (", atomic client" if self.atomic_client else "")
                + (", lost responses" if self.lossy else "") + (", KAFKA-19449 fix" if self.kafka_19449_fix else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"builder": self.builder, "bookkeeping": self.bookkeeping, "atomic_client": self.atomic_client,
                "lossy": self.lossy, "kafka_19449_fix": self.kafka_19449_fix}

    def but(self, **changes: Any) -> "Variant":
        return replace(self, **changes)


def _k(v: Any, n: int) -> Any:
    """An integer constant of the view's integer sort (bit-vectors in bounded search)."""
    return v.value(n, "int") if getattr(v, "int_bits", None) is not None else n


def _member(v: Any, m: Any, value: Any, prev: Callable[..., Any]) -> Callable[..., Any]:
    """``name(m) := value`` over a per-member variable (``value`` a term)."""
    return lambda x: ITE(v.same(x, m), value, prev(x))


def _member_row(v: Any, m: Any, row: Callable[[Any], Any], prev: Callable[..., Any]) -> Callable[..., Any]:
    """``name(m, p) := row(p)`` over a per-(member, partition) variable."""
    return lambda x, p: ITE(v.same(x, m), row(p), prev(x, p))


class ReconciliationModel:
    """The reconciliation of ``variant`` over a view ``v`` (``logic.Concrete`` or ``logic.Symbolic``)."""

    PROPERTIES = ("no-double-ownership", "record-exclusive")

    def __init__(self, variant: Variant):
        self.variant = variant
        self.actions: tuple[Action, ...] = self._actions()

    # ------------------------------------------------------------------------------------
    # Initial state and the safety properties

    def init(self, v: Any, s: State) -> Any:
        """No member, no target, every partition released."""
        return AND(*[v.forall(var.dom, lambda *idx, var=var: s.read(var.name, idx) == var.init) for var in STATE])

    def no_double_ownership(self, v: Any, s: State) -> Any:
        """No partition held by two clients at once, counting partitions a client still holds while revoking."""
        return v.forall((M, M, P), lambda x, y, p: IMP(AND(NOT(v.same(x, y)), s.own(x, p)), NOT(s.own(y, p))))

    def held(self, s: State, x: Any, p: Any) -> Any:
        """The coordinator's record of ``x`` lists ``p``, as assigned or pending revocation."""
        return OR(s.asg(x, p), s.rev(x, p))

    def record_exclusive(self, v: Any, s: State) -> Any:
        """No partition in two members' records (assigned or pending revocation)."""
        return v.forall((M, M, P), lambda x, y, p: IMP(AND(NOT(v.same(x, y)), self.held(s, x, p)), NOT(self.held(s, y, p))))

    def prop(self, name: str) -> Callable[[Any, State], Any]:
        return {"no-double-ownership": self.no_double_ownership, "record-exclusive": self.record_exclusive}[name]

    def contract(self, v: Any, s: State, a: State) -> Any:
        """The assignor: any target giving each partition to at most one member of the group."""
        return AND(v.forall((M, P), lambda x, p: IMP(a.a(x, p), s.inm(x))),
                   v.forall((M, M, P), lambda x, y, p: IMP(AND(a.a(x, p), a.a(y, p)), v.same(x, y))))

    # ------------------------------------------------------------------------------------
    # The coordinator's step for one member's heartbeat

    def _today(self, v: Any, s: State, m: Any) -> dict[str, Any]:
        """``CurrentAssignmentBuilder.build`` (today): the new record as (changed?, fields)."""
        T = lambda p: s.tgt(m, p)  # noqa: E731
        A = lambda p: s.asg(m, p)  # noqa: E731
        O = lambda p: s.own(m, p)  # noqa: E731
        if self.variant.kafka_19449_fix:  # PR #20781: the member's own pending revocation is not "another owner"
            free = lambda p: OR(s.pe(p) == FREE, s.rev(m, p))  # noqa: E731
        else:
            free = lambda p: s.pe(p) == FREE  # noqa: E731
        st, ep, E = s.cst(m), s.ep(m), s.E()
        still_revoking = v.exists((P,), lambda p: AND(O(p), s.rev(m, p)))
        from_unrevoked = AND(st == UNREVOKED, NOT(still_revoking))
        go = OR(AND(st == STABLE, ep != E), from_unrevoked, st == UNRELEASED)
        base_ep = ITE(from_unrevoked, ep + 1, ep)
        # computeNextAssignment(base_ep, assigned)
        kept = lambda p: AND(A(p), T(p))  # noqa: E731
        revoke = lambda p: AND(A(p), NOT(T(p)))  # noqa: E731
        pending = lambda p: AND(T(p), NOT(A(p)))  # noqa: E731
        unreleased = v.exists((P,), lambda p: AND(pending(p), NOT(free(p))))
        to_unrevoked = v.exists((P,), lambda p: AND(revoke(p), O(p)))
        new_st = ITE(to_unrevoked, _k(v, UNREVOKED), ITE(unreleased, _k(v, UNRELEASED), _k(v, STABLE)))
        return {
            "go": go,
            "cst": new_st,
            "pep": ep,  # updateMemberEpoch: the previous epoch is the one before this update
            "ep": ITE(to_unrevoked, base_ep, E),
            "asg": lambda p: OR(kept(p), AND(NOT(to_unrevoked), pending(p), free(p))),
            "rev": lambda p: AND(to_unrevoked, revoke(p)),
        }

    def _2024(self, v: Any, s: State, m: Any) -> dict[str, Any]:
        """``CurrentAssignmentBuilder.build`` as of January 2024 (PR #15212's parent)."""
        T = lambda p: s.tgt(m, p)  # noqa: E731
        A = lambda p: s.asg(m, p)  # noqa: E731
        R = lambda p: s.rev(m, p)  # noqa: E731
        N = lambda p: s.pnd(m, p)  # noqa: E731
        O = lambda p: s.own(m, p)  # noqa: E731
        free = lambda p: s.pe(p) == FREE  # noqa: E731
        ep, E, tep = s.ep(m), s.E(), s.tep(m)
        new_target = E != tep
        # transitionToNewTargetAssignmentState
        U = lambda p: OR(A(p), R(p))  # noqa: E731
        a1 = lambda p: AND(U(p), T(p))  # noqa: E731
        r1 = lambda p: AND(U(p), NOT(T(p)))  # noqa: E731
        pa1 = lambda p: AND(T(p), NOT(U(p)))  # noqa: E731
        any_r1 = v.exists((P,), r1)
        # maybeTransitionFromRevokingToAssigningOrStable / FromAssigning
        revoking = v.exists((P,), R)
        revoked = v.forall((P,), lambda p: IMP(O(p), A(p)))
        some_free = v.exists((P,), lambda p: AND(N(p), free(p)))
        advance = AND(NOT(new_target), OR(AND(revoking, revoked), AND(NOT(revoking), some_free)))
        go = OR(new_target, advance)
        t_asg = lambda p: ITE(any_r1, a1(p), OR(a1(p), AND(pa1(p), free(p))))  # noqa: E731
        t_pnd = lambda p: ITE(any_r1, pa1(p), AND(pa1(p), NOT(free(p))))  # noqa: E731
        new_asg = lambda p: ITE(new_target, t_asg(p), OR(A(p), AND(N(p), free(p))))  # noqa: E731
        new_rev = lambda p: AND(new_target, r1(p))  # noqa: E731
        new_pnd = lambda p: ITE(new_target, t_pnd(p), AND(N(p), NOT(free(p))))  # noqa: E731
        new_ep = ITE(new_target, ITE(any_r1, ep, E), tep)
        new_st = ITE(v.exists((P,), new_rev), _k(v, REVOKING), ITE(v.exists((P,), new_pnd), _k(v, ASSIGNING), _k(v, STABLE)))
        return {"go": go, "cst": new_st, "ep": new_ep, "pep": ITE(AND(new_target, any_r1), s.pep(m), ep), "asg": new_asg, "rev": new_rev, "pnd": new_pnd,
                "tep": ITE(new_target, E, tep)}

    def _partition_epochs(self, v: Any, s: State, m: Any, new: dict[str, Any]) -> Callable[[Any], Any]:
        """The partition epochs after ``m``'s record becomes ``new`` (the bookkeeping switch)."""
        ep1 = new["ep"]
        if self.variant.bookkeeping == "fixed":  # remove all of the old record, add all of the new one
            return lambda p: ITE(OR(new["asg"](p), new["rev"](p)), ep1, ITE(self.held(s, m, p), _k(v, FREE), s.pe(p)))
        changed_a = v.exists((P,), lambda p: new["asg"](p) != s.asg(m, p))
        changed_r = v.exists((P,), lambda p: new["rev"](p) != s.rev(m, p))
        after_a = lambda p: ITE(changed_a, ITE(new["asg"](p), ep1, ITE(s.asg(m, p), _k(v, FREE), s.pe(p))), s.pe(p))  # noqa: E731
        return lambda p: ITE(changed_r, ITE(new["rev"](p), ep1, ITE(s.rev(m, p), _k(v, FREE), after_a(p))), after_a(p))

    # ------------------------------------------------------------------------------------
    # Actions

    def _actions(self) -> tuple[Action, ...]:
        var = self.variant

        def remove_record(v: Any, s: State, m: Any, u: dict[str, Callable[..., Any]]) -> None:
            # The record goes (epoch -1, a timeout, or replaced by a rejoin): its partition epochs are
            # released and its target removed.
            u["pe"] = lambda p: ITE(AND(s.inm(m), self.held(s, m, p)), _k(v, FREE), s.pe(p))
            for name in ("asg", "rev", "pnd", "tgt"):
                u[name] = _member_row(v, m, lambda p: False, getattr(s, name))
            for name, value in (("ep", 0), ("pep", -1), ("cst", STABLE), ("tep", 0)):
                u[name] = _member(v, m, value, getattr(s, name))

        def client_out(v: Any, s: State, m: Any, u: dict[str, Callable[..., Any]]) -> None:
            # The client drops every partition (revoked before leaving, lost when fenced or timed out).
            u["cin"] = _member(v, m, False, s.cin)
            u["cep"] = _member(v, m, 0, s.cep)
            u["own"] = _member_row(v, m, lambda p: False, s.own)

        def join(v: Any, s: State, m: Any) -> Effect:
            # ConsumerGroupHeartbeat at epoch 0 with nothing owned: a new record (replacing one the
            # coordinator still holds for a fenced client), nothing assigned; the group epoch bump and
            # the new target are the NewTarget step the coordinator takes next.
            u: dict[str, Callable[..., Any]] = {}
            remove_record(v, s, m, u)
            u["inm"] = _member(v, m, True, s.inm)
            u["cin"] = _member(v, m, True, s.cin)
            u["cep"] = _member(v, m, 0, s.cep)
            return Effect(NOT(s.cin(m)), u)

        def new_target(v: Any, s: State, c: State) -> Effect:
            return Effect(True, {"E": lambda: s.E() + 1, "tgt": lambda x, p: c.a(x, p)}, self.contract(v, s, c))

        def heartbeat(v: Any, s: State, m: Any, c: State | None = None) -> Effect:
            # Member epoch validation: the current epoch, or the previous one when what the client holds
            # is a subset of the assigned partitions (the response that bumped it may have been lost).
            valid = OR(s.cep(m) == s.ep(m), AND(s.cep(m) == s.pep(m), v.forall((P,), lambda p: IMP(s.own(m, p), s.asg(m, p)))))
            new = self._today(v, s, m) if var.builder == "today" else self._2024(v, s, m)
            go = AND(valid, new["go"])
            pe1 = self._partition_epochs(v, s, m, new)
            asg1 = lambda p: ITE(go, new["asg"](p), s.asg(m, p))  # noqa: E731
            ep1 = ITE(go, new["ep"], s.ep(m))
            u: dict[str, Callable[..., Any]] = {
                "cst": _member(v, m, ITE(go, new["cst"], s.cst(m)), s.cst),
                "ep": _member(v, m, ep1, s.ep),
                "pep": _member(v, m, ITE(go, new["pep"], s.pep(m)), s.pep),
                "asg": _member_row(v, m, asg1, s.asg),
                "rev": _member_row(v, m, lambda p: ITE(go, new["rev"](p), s.rev(m, p)), s.rev),
                "pe": lambda p: ITE(go, pe1(p), s.pe(p)),
            }
            if var.builder == "2024":
                u["pnd"] = _member_row(v, m, lambda p: ITE(go, new["pnd"](p), s.pnd(m, p)), s.pnd)
                u["tep"] = _member(v, m, ITE(go, new["tep"], s.tep(m)), s.tep)
            # The response: FENCED_MEMBER_EPOCH (the client drops everything and must rejoin), lost
            # (the client learns nothing), or the record's epoch and assignment.
            delivered = AND(valid, NOT(c.lost())) if c is not None else valid
            u["cin"] = _member(v, m, valid, s.cin)
            u["cep"] = _member(v, m, ITE(valid, ITE(delivered, ep1, s.cep(m)), 0), s.cep)
            if var.atomic_client:
                u["own"] = _member_row(v, m, lambda p: AND(valid, ITE(delivered, asg1(p), s.own(m, p))), s.own)
            else:
                u["own"] = _member_row(v, m, lambda p: AND(valid, s.own(m, p)), s.own)
            return Effect(s.cin(m), u)

        def revoke(v: Any, s: State, m: Any) -> Effect:
            return Effect(s.cin(m), {"own": _member_row(v, m, lambda p: AND(s.own(m, p), s.asg(m, p)), s.own)})

        def assign(v: Any, s: State, m: Any) -> Effect:
            done = v.forall((P,), lambda p: IMP(s.own(m, p), s.asg(m, p)))
            return Effect(AND(s.cin(m), done), {"own": _member_row(v, m, lambda p: s.asg(m, p), s.own)})

        def leave(v: Any, s: State, m: Any) -> Effect:
            # The client revokes everything and sends epoch -1 (without lost responses, also a timeout
            # of a stalled member: the same step).
            u: dict[str, Callable[..., Any]] = {"inm": _member(v, m, False, s.inm)}
            remove_record(v, s, m, u)
            client_out(v, s, m, u)
            return Effect(s.cin(m), u)

        def expire(v: Any, s: State, m: Any) -> Effect:
            # Session or rebalance timeout: only while the client is stalled (it consumes nothing, and
            # learns it was removed before it consumes again), or after it was fenced.
            u: dict[str, Callable[..., Any]] = {"inm": _member(v, m, False, s.inm)}
            remove_record(v, s, m, u)
            client_out(v, s, m, u)
            return Effect(s.inm(m), u)

        acts = [
            Action("Join", (M,), join, environment=True, doc="a member joins with epoch 0"),
            Action("NewTarget", (), new_target, uses_choice=True, environment=True,
                   doc="the group epoch is bumped and the assignor computes a new target"),
            Action("Heartbeat", (M,), heartbeat, uses_choice=var.lossy,
                   doc="the member's heartbeat, reporting what its client holds"),
            Action("Leave", (M,), leave, environment=True, doc="the member leaves (epoch -1)"),
        ]
        if var.lossy:
            acts.append(Action("Expire", (M,), expire, environment=True, doc="a timeout removes a stalled or fenced member"))
        if not var.atomic_client:
            acts.append(Action("Revoke", (M,), revoke, doc="the client stops consuming partitions no longer assigned"))
            acts.append(Action("Assign", (M,), assign, doc="the client, done revoking, takes its assigned partitions"))
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
