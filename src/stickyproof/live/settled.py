"""Each settled assignment of a live run graded by the oracle, as a sweep row is (issue 24 item 3).

A live run settles at known points: after its initial members joined, before each event the group
had come to rest for, and after its history (``run.py`` records them). At each one the group's
state is read off what the members reported: who runs, what each subscribes to, the topics'
partition counts, and what each owns. The group at that point becomes a ``Scenario`` whose members
``owned`` what they held when the group's last rebalance began (``last_rebalance_start``, from the
callbacks' generations; the previous settle point's holdings when no generation was reported), and
what they own now is its ``Assignment``; ``grading.grade_assignment``
grades that answer (the entry point a sweep row's given answer is graded through) against the
promise of the assignor the group chose (its ``contract``), and ``sweep.rows.grade_columns`` turns
the grade into the sweep row's columns, so a live grade and a sweep row read the same.

What a live grade cannot know, and says: a cooperative rebalance's two rounds are graded as one move
(so the scenario is written ``eager``, whose owned partitions count for stickiness and not for a
round's safety, which the no-double-consumption monitor checks on the real callbacks); a rebalance
before the last one between two settle points is not graded; no port of the assignor
is run, so determinism and stability are not judged; and which library's implementation assigned is
the group leader's, which the members do not report (a group of one library is graded as that
library's assignor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import StickyproofError
from ..model import Assignment, Member, Scenario, Topic, TopicPartition

__all__ = ["SettledGrade", "group_assignor", "holdings", "last_rebalance_start", "grade_settle_points"]


@dataclass(frozen=True)
class SettledGrade:
    """One settle point graded: ``index`` 0 is the first, ``at_ms`` on the run's clock; ``row`` the
    sweep row's grade columns (``valid``, ``failures``, ``stickiness``, ``kept``, ``optimal_kept``, ...)."""

    index: int
    at_ms: int
    assignor: str
    scenario: Scenario
    assignment: tuple[tuple[str, tuple[TopicPartition, ...]], ...]
    row: tuple[tuple[str, Any], ...] = ()
    error: str | None = None
    epoch: int | None = None  # a KIP-848 group's target epoch (``live.targets``): a target, not a settle point

    @property
    def columns(self) -> dict[str, Any]:
        return dict(self.row)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.columns.get("failures") and self.columns.get("valid") is not False

    def to_dict(self) -> dict[str, Any]:
        from ..model import scenario_to_dict

        out: dict[str, Any] = {"index": self.index, "at_ms": self.at_ms, "assignor": self.assignor,
                               "scenario": scenario_to_dict(self.scenario),
                               "assignment": {m: [[t, p] for t, p in tps] for m, tps in self.assignment},
                               "row": self.columns}
        if self.error:
            out["error"] = self.error
        if self.epoch is not None:
            out["epoch"] = self.epoch
        return out

    def line(self) -> str:
        """One line for the console: the verdict and the figures a sweep row leads with."""
        c = self.columns
        what = f"target epoch {self.epoch}" if self.epoch is not None else f"settle {self.index}"
        if self.error:
            return f"{what} at {self.at_ms} ms ({self.assignor}): not graded: {self.error}"
        broken = c.get("failures") or sorted({v.get("invariant") for v in c.get("violations") or ()})
        verdict = "valid" if c.get("valid") else f"FAILS {broken}"
        figures = [f"contract {c.get('contract')}"]
        owned = c.get("owned", sum(len(m.owned) for m in self.scenario.members))
        if c.get("input_seen") is False:
            figures.append("stickiness not measured")
        elif owned:
            figures.append(f"kept {c.get('kept')} of {owned} owned, optimum {c.get('optimal_kept')}"
                           + (" (proven)" if c.get("proven") else ""))
            if c.get("stickiness") is not None:
                figures.append(f"stickiness {c['stickiness']:.2f}")
        else:
            figures.append("nothing owned before: stickiness not measured")
        return f"{what} at {self.at_ms} ms ({self.assignor}): {verdict}; {', '.join(figures)}"


def group_assignor(preferences: Sequence[Sequence[str]]) -> str | None:
    """The protocol a classic group's coordinator chooses from its members' preference lists: the
    candidates every member supports, each member voting for its first candidate, the most votes
    winning (Kafka's ``selectProtocol``; a tie goes to the candidate the first member prefers, where
    Kafka's choice follows its map's order). None when no protocol is common."""
    if not preferences:
        return None
    common = set(preferences[0]).intersection(*map(set, preferences[1:]))
    if not common:
        return None
    votes: dict[str, int] = {}
    for prefs in preferences:
        first = next(p for p in prefs if p in common)
        votes[first] = votes.get(first, 0) + 1
    best = max(votes.values())
    return next(p for p in preferences[0] if p in common and votes.get(p) == best)


def holdings(reports: Sequence[Any], strip: Any, until_ns: int) -> dict[str, frozenset[TopicPartition]]:
    """What each member process owned at ``until_ns``, read off its callbacks (``strip`` turns a
    report's partitions into the scenario's names); a process that ended owns nothing."""
    owned: dict[str, set[TopicPartition]] = {}
    for r in reports:
        if r.mono_ns > until_ns:
            break
        if r.ev == "started":
            owned[r.name] = set()
        elif r.ev == "assigned":
            owned.setdefault(r.name, set()).update(strip(r))
        elif r.ev in ("revoked", "lost"):
            owned.get(r.name, set()).difference_update(strip(r))
        elif r.ev in ("crashing", "closed"):
            owned[r.name] = set()
    return {n: frozenset(tps) for n, tps in owned.items()}


def last_rebalance_start(reports: Sequence[Any], since_ns: int, until_ns: int, cooperative: bool) -> tuple[int, int] | None:
    """(monotonic ns, generation) at which the group's last rebalance before ``until_ns`` began, read
    off the callbacks' generations: the last generation whose callbacks moved a partition (G; a
    follow-up generation that hands out nothing, seen when a member of another library rejoins, is
    not the rebalance that settled the group); under a cooperative assignor
    the generation before it when that one revoked something (a rebalance's first round revokes,
    its follow-up assigns); an eager member's revocation before it rejoins carries the generation it
    leaves, so it counts from its first revocation after that generation's last assignment. None
    when no callback since ``since_ns`` carries a generation (a library that does not expose it)."""
    window = [r for r in reports if since_ns < r.mono_ns <= until_ns and r.ev in ("assigned", "revoked", "lost")
              and isinstance(r.get("generation"), int) and r.get("generation") >= 0]
    moved = [r.get("generation") for r in window if r.partitions()]
    if not moved:
        return None
    start = max(moved)
    if cooperative and any(r.ev == "revoked" and r.partitions() and r.get("generation") == start - 1 for r in window):
        start -= 1
    last_before = max((r.mono_ns for r in window if r.ev == "assigned" and r.get("generation") == start - 1), default=since_ns)
    begins = [r.mono_ns for r in window if r.get("generation") == start
              or (r.ev in ("revoked", "lost") and r.get("generation") == start - 1 and r.mono_ns > last_before)]
    return min(begins), start


def grade_settle_points(
    settles: Sequence[tuple[int, Mapping[str, Sequence[str]], Mapping[str, int]]],
    reports: Sequence[Any],
    strip: Any,
    t0: int,
    assignor_of: Mapping[str, Sequence[str]],
    name: str = "",
) -> tuple[SettledGrade, ...]:
    """Grade every settle point (module docstring). ``settles``: (monotonic ns, member -> topics,
    topic -> partitions) as the run recorded them; ``assignor_of``: member -> its assignors' protocol
    names, in preference order."""
    from ..grading import grade_assignment
    from ..lookup import get_assignor
    from ..sweep.rows import grade_columns

    out = []
    before: dict[str, frozenset[TopicPartition]] = {}
    for i, (at_ns, subscriptions, topics) in enumerate(settles):
        now = holdings(reports, strip, at_ns)
        members = sorted(subscriptions)
        chosen = group_assignor([assignor_of[m] for m in members]) or "range"
        scenario = Scenario(
            topics=tuple(Topic(t, n) for t, n in sorted(topics.items())),
            members=tuple(Member(m, tuple(subscriptions[m]), owned=tuple(sorted(before.get(m, ()))),
                                 generation=1 if before.get(m) else -1) for m in members),
            protocol="eager", name=f"{name or 'live'} settle {i}",
        )
        # what each member held when the last rebalance began (the group it was asked to rebalance);
        # without generations, what it held at the previous settle point
        began = last_rebalance_start(reports, settles[i - 1][0] if i else 0, at_ns, chosen == "cooperative-sticky")
        if began is not None:
            held = holdings(reports, strip, began[0] - 1)
            before = {m: held.get(m, frozenset()) for m in members}
        generation = began[1] - 1 if began is not None and began[1] > 1 else 1
        scenario = Scenario(
            topics=scenario.topics,
            members=tuple(Member(m, tuple(subscriptions[m]), owned=tuple(sorted(before.get(m, ()))),
                                 generation=generation if before.get(m) else -1) for m in members),
            protocol="eager", name=scenario.name,
        )
        answer = {m: tuple(sorted(now.get(m, ()))) for m in members}
        try:
            contract = get_assignor(chosen).contract
            g = grade_assignment(scenario, Assignment(answer), name=chosen, contract=contract)
            row = grade_columns(g, scenario)
            error = None
        except StickyproofError as exc:  # a group the oracle cannot take (say, an unknown topic) is said, not raised
            row, error = {}, f"{type(exc).__name__}: {exc}"
        out.append(SettledGrade(i, (at_ns - t0) // 1_000_000, chosen, scenario, tuple(sorted(answer.items())),
                                tuple(sorted(row.items())), error))
        before = {m: now.get(m, frozenset()) for m in members}
    return tuple(out)

