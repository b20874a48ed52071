"""The inductive invariants of the protocol model, lemma by lemma.

Each lemma is a named formula over a state, written once over the view (``v.forall`` is a Z3
quantifier in the parametric proof). A theorem's invariant is a list of lemmas; ``engine.induct``
checks every (action, lemma) pair. When a historical variant breaks the protocol, the first lemma
that stops being inductive names *why*: see ``proofs/README.md``.

Vocabulary used in the lemma names:

* *running*: not paused. *known*: the coordinator knows the process's current member id (``ing``).
* *zombie*: paused, believes it has an id, and is no longer known (removed by a timeout while it
  was paused; it will learn this the moment it resumes).
* *current*: STABLE and known: it holds the assignment of the group's generation.
"""

from __future__ import annotations

from typing import Any, Callable

from ..logic import AND, IMP, NOT, OR
from .model import COMPL, CSTABLE, EMPTY, JOINING, OUT, PREP, STABLE, SYNCING, Variant
from .state import State

__all__ = ["lemmas_for", "Lemma"]

Lemma = tuple[str, Callable[[Any, State], Any]]
M, P = "M", "P"


def _ranges(v: Any, s: State) -> Any:
    return AND(s.cs() >= EMPTY, s.cs() <= CSTABLE,
               v.forall((M,), lambda x: AND(s.st(x) >= OUT, s.st(x) <= STABLE)))


def _common(variant: Variant) -> list[Lemma]:
    """What every variant keeps: the coordinator's round structure."""
    out: list[Lemma] = [
        ("states-in-range", _ranges),
        ("generation-nonnegative", lambda v, s: s.G() >= 0),
        ("formed-generation-positive", lambda v, s: IMP(OR(s.cs() == COMPL, s.cs() == CSTABLE), s.G() >= 1)),
        # A JoinGroup pending at the coordinator belongs to a member waiting for its answer.
        ("joined-means-joining", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(s.ing(x), s.joined(x)), AND(s.st(x) == JOINING, s.cs() == PREP)))),
        ("known-joining-is-joined", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(s.ing(x), s.st(x) == JOINING), s.joined(x)))),
        # While the leader assigns, every member is waiting for it, in the group's generation.
        ("completing-all-syncing", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(s.cs() == COMPL, s.ing(x)), AND(s.st(x) == SYNCING, s.g(x) == s.G())))),
        ("syncing-known-in-group-generation", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(s.ing(x), s.st(x) == SYNCING), s.g(x) == s.G()))),
        ("leader-is-known", lambda v, s: v.forall((M,), lambda x: IMP(s.lead(x), s.ing(x)))),
        ("one-leader", lambda v, s: v.forall((M, M), lambda x, y: IMP(AND(s.lead(x), s.lead(y)), v.same(x, y)))),
        ("known-has-id", lambda v, s: v.forall((M,), lambda x: IMP(s.ing(x), s.hasid(x)))),
        # A known STABLE member holds the current generation and has not rejoined.
        ("stable-known-is-current", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(s.st(x) == STABLE, s.ing(x)),
            AND(s.g(x) == s.G(), OR(s.cs() == CSTABLE, s.cs() == PREP), NOT(s.joined(x)))))),
        ("stable-has-id", lambda v, s: v.forall((M,), lambda x: IMP(s.st(x) == STABLE, s.hasid(x)))),
    ]
    if variant.failover == "none":
        # T-a at work: only a paused member can have been removed without knowing it.
        out.append(("running-believer-is-known", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(NOT(s.paused(x)), s.hasid(x)), s.ing(x)))))
        out.append(("member-generation-not-ahead", lambda v, s: v.forall((M,), lambda x: s.g(x) <= s.G())))
    if variant.failover == "lost":
        # T-b at work: a running member the new coordinator does not know holds up its first rebalance.
        out.append(("running-unknown-believer-holds-up-the-first-rebalance", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(NOT(s.paused(x)), s.hasid(x), NOT(s.ing(x))), AND(s.G() == 0, OR(s.cs() == EMPTY, s.cs() == PREP))))))
    if variant.failover == "persisted":
        out += [
            # What the coordinator stored: the last committed generation, its members and assignment.
            ("stored-generation", lambda v, s: OR(s.pG() == -1, AND(s.pG() >= 1, s.pG() <= s.G()))),
            ("stable-group-is-stored", lambda v, s: IMP(s.cs() == CSTABLE, s.G() == s.pG())),
            ("assignment-of-stored-generation-is-stored", lambda v, s: v.forall((M, P), lambda x, p: IMP(
                s.G() == s.pG(), s.asg(x, p) == s.pasg(x, p)))),
            ("stored-leader-is-stored-member", lambda v, s: v.forall((M,), lambda x: IMP(s.plead(x), s.pin(x)))),
            ("one-stored-leader", lambda v, s: v.forall((M, M), lambda x, y: IMP(AND(s.plead(x), s.plead(y)), v.same(x, y)))),
            ("stored-members-have-ids", lambda v, s: v.forall((M,), lambda x: IMP(s.pin(x), s.hasid(x)))),
            ("stable-stored-member-in-stored-generation", lambda v, s: v.forall((M,), lambda x: IMP(
                AND(s.st(x) == STABLE, s.pin(x)), s.g(x) == s.pG()))),
            ("stable-known-is-stored", lambda v, s: v.forall((M,), lambda x: IMP(
                AND(s.st(x) == STABLE, s.ing(x)), s.pin(x)))),
            ("nothing-held-before-first-commit", lambda v, s: v.forall((M, P), lambda x, p: IMP(
                s.pG() < 0, AND(NOT(s.own(x, p)), NOT(s.mem(x, p)), s.memg(x) == -1, NOT(s.pasg(x, p)),
                                NOT(s.pin(x)), s.st(x) != STABLE)))),
            ("stable-group-members-are-stored", lambda v, s: v.forall((M,), lambda x: IMP(
                AND(s.cs() == CSTABLE, s.ing(x)), s.pin(x)))),
        ]
    return out


def _cooperative(variant: Variant) -> list[Lemma]:
    out: list[Lemma] = [
        # Only a member with an id owns anything (a reset drops what it owned: R37).
        ("owner-has-id", lambda v, s: v.forall((M, P), lambda x, p: IMP(s.own(x, p), s.hasid(x)))),
        # Two known members never own the same partition.
        ("known-owners-disjoint", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
            AND(NOT(v.same(x, y)), s.ing(x), s.ing(y), s.own(x, p)), NOT(s.own(y, p))))),
        # What a member in a join round reported is what it owns (claims are its ownedPartitions).
        ("claims-are-owned", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            AND(s.ing(x), OR(s.st(x) == JOINING, s.st(x) == SYNCING)), s.claim(x, p) == s.own(x, p)))),
        # The stored assignment never hands a partition owned by a known member to another member.
        ("assignment-respects-owners", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
            AND(s.cs() == CSTABLE, s.asg(x, p), s.ing(y), s.own(y, p)), v.same(x, y)))),
        ("assignment-unique", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
            AND(s.cs() == CSTABLE, NOT(v.same(x, y)), s.asg(x, p)), NOT(s.asg(y, p))))),
        # A STABLE known member owns exactly its stored assignment.
        ("current-owns-assignment", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            AND(s.st(x) == STABLE, s.ing(x), s.cs() == CSTABLE), s.own(x, p) == s.asg(x, p)))),
    ]
    if variant.failover != "lost":
        # A running member that owns something is known (the one who is not will learn it at once).
        out.append(("running-owner-is-known", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            AND(NOT(s.paused(x)), s.own(x, p)), s.ing(x)))))
    else:
        out += [
            # After a fail-over without state, running owners from the old epoch keep fetching until their
            # next heartbeat; nobody the new coordinator knows owns anything before its first assignment.
            ("running-owner-known-or-from-old-epoch", lambda v, s: v.forall((M, P), lambda x, p: IMP(
                AND(NOT(s.paused(x)), s.own(x, p)), OR(s.ing(x), s.G() == 0)))),
            ("new-epoch-members-own-nothing-before-first-assignment", lambda v, s: v.forall((M, P), lambda x, p: IMP(
                AND(s.G() == 0, s.ing(x)), NOT(s.own(x, p))))),
            ("running-owners-disjoint", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
                AND(NOT(v.same(x, y)), NOT(s.paused(x)), NOT(s.paused(y)), s.own(x, p)), NOT(s.own(y, p))))),
        ]
    if variant.failover == "persisted":
        out += [
            ("known-owner-is-stored", lambda v, s: v.forall((M, P), lambda x, p: IMP(
                AND(s.ing(x), s.own(x, p)), s.pin(x)))),
            ("stored-owners-disjoint", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
                AND(NOT(v.same(x, y)), s.pin(x), s.pin(y), s.own(x, p)), NOT(s.own(y, p))))),
            ("stored-assignment-respects-owners", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
                AND(s.pasg(x, p), s.pin(y), s.own(y, p)), v.same(x, y)))),
            ("stored-assignment-unique", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
                AND(NOT(v.same(x, y)), s.pasg(x, p)), NOT(s.pasg(y, p))))),
            ("stable-stored-owns-stored-assignment", lambda v, s: v.forall((M, P), lambda x, p: IMP(
                AND(s.st(x) == STABLE, s.pin(x)), s.own(x, p) == s.pasg(x, p)))),
        ]
    return out


def _eager(variant: Variant) -> list[Lemma]:
    out: list[Lemma] = [
        # An eager member owns partitions only while STABLE, or just before its join prepare revokes them.
        ("eager-owns-only-when-stable", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            s.own(x, p), OR(s.st(x) == STABLE, AND(s.st(x) == OUT, NOT(s.prep(x))))))),
        # What it owns is what its user data remembers (R1).
        ("owned-is-remembered", lambda v, s: v.forall((M, P), lambda x, p: IMP(s.own(x, p), s.mem(x, p)))),
        # A remembered generation is never ahead of the group's (within the epoch).
        ("memory-not-ahead", lambda v, s: v.forall((M,), lambda x: IMP(s.meme(x) == s.E(), s.memg(x) <= s.G()))),
        # Remembering the group's generation means holding its stored assignment; nobody does while the leader assigns.
        ("memory-of-current-generation-is-the-assignment", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            AND(s.memg(x) == s.G(), s.meme(x) == s.E()),
            AND(s.cs() != COMPL, s.mem(x, p) == s.asg(x, p))))),
        ("stable-known-remembers-current", lambda v, s: v.forall((M,), lambda x: IMP(
            AND(s.st(x) == STABLE, s.ing(x)), AND(s.memg(x) == s.G(), s.meme(x) == s.E())))),
        ("memory-generation-positive", lambda v, s: v.forall((M,), lambda x: OR(s.memg(x) == -1, s.memg(x) >= 1))),
        # Two members never remember one partition from the same generation of the same epoch.
        ("memories-of-a-generation-disjoint", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
            AND(NOT(v.same(x, y)), s.mem(x, p), s.mem(y, p), s.meme(x) == s.meme(y)), s.memg(x) != s.memg(y)))),
        # The leader assigns from claims that are the claimants' user data, as sent in this round.
        ("claims-are-memories", lambda v, s: v.forall((M, P), lambda x, p: IMP(
            AND(s.ing(x), OR(s.st(x) == JOINING, s.st(x) == SYNCING)),
            AND(s.claim(x, p) == s.mem(x, p), s.cg(x) == s.memg(x))))),

        ("assignment-unique", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
            AND(NOT(v.same(x, y)), s.asg(x, p)), NOT(s.asg(y, p))))),
    ]
    if variant.failover != "lost":
        out += [
            ("memories-from-this-epoch", lambda v, s: v.forall((M, P), lambda x, p: IMP(s.mem(x, p), s.meme(x) == s.E()))),
            ("running-stable-is-known", lambda v, s: v.forall((M,), lambda x: IMP(
                AND(NOT(s.paused(x)), s.st(x) == STABLE), s.ing(x)))),
        ]
    else:
        out += [
            ("memory-epoch-not-ahead", lambda v, s: v.forall((M,), lambda x: s.meme(x) <= s.E())),
            # Running STABLE members the new coordinator does not know all hold the old epoch's last assignment.
            ("running-unknown-stable-from-old-epoch", lambda v, s: v.forall((M,), lambda x: IMP(
                AND(NOT(s.paused(x)), s.st(x) == STABLE, NOT(s.ing(x))), s.meme(x) < s.E()))),
            ("running-stable-agree-on-generation", lambda v, s: v.forall((M, M), lambda x, y: IMP(
                AND(NOT(s.paused(x)), NOT(s.paused(y)), s.st(x) == STABLE, s.st(y) == STABLE),
                AND(s.memg(x) == s.memg(y), s.meme(x) == s.meme(y))))),
        ]
    if variant.failover == "persisted":
        out += [
            ("memory-not-ahead-of-stored", lambda v, s: v.forall((M,), lambda x: s.memg(x) <= s.pG())),
            ("memory-of-stored-generation-is-stored", lambda v, s: v.forall((M, P), lambda x, p: IMP(
                AND(s.memg(x) == s.pG(), s.pG() >= 1, s.meme(x) == s.E()), s.mem(x, p) == s.pasg(x, p)))),
            ("stable-stored-remembers-stored", lambda v, s: v.forall((M,), lambda x: IMP(
                AND(s.st(x) == STABLE, s.pin(x)), AND(s.memg(x) == s.pG(), s.meme(x) == s.E())))),
            ("stored-assignment-unique", lambda v, s: v.forall((M, M, P), lambda x, y, p: IMP(
                AND(NOT(v.same(x, y)), s.pasg(x, p)), NOT(s.pasg(y, p))))),
        ]
    return out


def lemmas_for(variant: Variant, prop: Callable[[Any, State], Any]) -> list[Lemma]:
    """The invariant that proves ``prop`` for ``variant`` (the property itself is the last lemma)."""
    body = _common(variant) + (_cooperative(variant) if variant.coop else _eager(variant))
    return body + [("no-double-consumption", prop)]
