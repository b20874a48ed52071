"""The inductive invariant of reconciliation safety, lemma by lemma.

The argument in words: a client holds only what its record lists (assigned or pending revocation);
every partition a record lists has a partition epoch (it is not "released"); the builder hands a
member a partition it does not already list only when that partition is released. So no two
records list one partition, and no two clients hold one. KAFKA-16147 breaks the second lemma: a
partition moved from pending revocation to assigned loses its epoch (``Heartbeat`` breaks
``listed-has-epoch``), and the third follows one heartbeat later.
"""

from __future__ import annotations

from typing import Any, Callable

from ..logic import AND, IMP, NOT, OR
from ..protocol.state import State
from .model import FREE, STABLE, UNRELEASED, UNREVOKED, Variant

__all__ = ["lemmas_for", "epoch_lemmas", "Lemma"]

Lemma = tuple[str, Callable[[Any, State], Any]]
M, P = "M", "P"


def _held(s: State, x: Any, p: Any) -> Any:
    return OR(s.asg(x, p), s.rev(x, p))


def lemmas_for(variant: Variant, goal: Callable[[Any, State], Any]) -> list[Lemma]:
    """The lemmas whose conjunction is inductive for ``variant`` and implies ``goal``."""
    out: list[Lemma] = [
        ("epochs-nonnegative", lambda v, s: AND(s.E() >= 0, v.forall((M,), lambda x: s.ep(x) >= 0))),
        ("states-in-range", lambda v, s: v.forall((M,), lambda x: AND(s.cst(x) >= STABLE, s.cst(x) <= UNRELEASED))),
        # A member out of the group has no record; a client out of it (left, fenced) holds nothing.
        ("out-lists-nothing", lambda v, s: v.forall((M, P), lambda x, p: IMP(NOT(s.inm(x)), AND(
            NOT(s.asg(x, p)), NOT(s.rev(x, p)), NOT(s.tgt(x, p)))))),
        ("client-out-holds-nothing", lambda v, s: v.forall((M, P), lambda x, p: IMP(NOT(s.cin(x)), NOT(s.own(x, p))))),
        ("client-in-has-record", lambda v, s: v.forall((M,), lambda x: IMP(s.cin(x), s.inm(x)))),
        # The builders split what a record lists: kept (assigned) or to give up (pending revocation).
        ("assigned-revoking-disjoint", lambda v, s: v.forall((M, P), lambda x, p: NOT(AND(s.asg(x, p), s.rev(x, p))))),
        # A client holds only what its record lists.
        ("held-is-listed", lambda v, s: v.forall((M, P), lambda x, p: IMP(s.own(x, p), _held(s, x, p)))),
        # Whatever a record lists is not released.
        ("listed-has-epoch", lambda v, s: v.forall((M, P), lambda x, p: IMP(_held(s, x, p), s.pe(p) != FREE))),
        ("listed-once", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
            AND(NOT(v.same(x, y)), _held(s, x, p)), NOT(_held(s, y, p))))),
    ]
    if variant.builder == "today":
        # Only UNREVOKED_PARTITIONS lists partitions pending revocation.
        out.append(("revoking-only-when-unrevoked", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            s.rev(x, p), s.cst(x) == UNREVOKED))))
    out.append(("goal", goal))
    return out


def epoch_lemmas() -> list[Lemma]:
    """Today's builder: member epochs stay at or below the group epoch, and a member at the group
    epoch keeps only partitions of the target (STABLE there: exactly the target). Inductive with the
    safety lemmas for every client; used for the epoch statements and for convergence."""
    def at_target(s: State, x: Any, state: int) -> Any:
        return AND(s.inm(x), s.cst(x) == state, s.ep(x) == s.E())

    return [
        ("member-epoch-at-most-group-epoch", lambda v, s: v.forall((M,), lambda x: s.ep(x) <= s.E())),
        ("stable-at-epoch-holds-target", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            at_target(s, x, STABLE), s.asg(x, p) == s.tgt(x, p)))),
        ("unrevoked-at-epoch-keeps-target", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            AND(at_target(s, x, UNREVOKED), s.asg(x, p)), s.tgt(x, p)))),
        ("unreleased-at-epoch-keeps-target", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            AND(at_target(s, x, UNRELEASED), s.asg(x, p)), s.tgt(x, p)))),
    ]
