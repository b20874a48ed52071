"""``stickyproof hunt``: search the scenario space for a group an assignor gets wrong, and shrink it.

``hunt(assignor, ...)`` reads as four named steps:

    hunting_space     the space the assignor can meet: the scenario space minus the rebalance
                      protocols it does not support (R36: a consumer refuses that configuration)
    _search           Hypothesis draws groups from the space (``strategies.from_space``, half
                      of them from the upper half of the member range) under ``@seed(seed)``
                      with no example database, so one seed is one run on any machine; each
                      group is judged (``judge``), ``target()`` steers the search toward low
                      stickiness, and the first failing group ends the search. Cooperative
                      groups with v0 claims are left out (``claims_invisible``).
    shrink            deterministic delta debugging of that group, keeping a reduction only
                      while the group stays in the space (``space_admits``) and fails the same
                      way (or a more severe way, which is then what is reported)
    judge             the shrunk group, judged once more for the report: the violated
                      invariant, the oracle's witness, and ``regression_document``

A group *fails* when, in this order: the assignor raised (``error``), ran past the time limit
(``time-limit``), broke an invariant of ``models/invariants.md`` as graded by
``oracle.grade.grade`` (its id: ``unassigned``, ``duplicate``, ... ``unstable``), or kept less
than ``min_stickiness`` of the proven optimal stickiness (``stickiness``).

Shrinking is our own delta debugging (``shrink``), not Hypothesis's shrinker. The sweep's triage
shrinks groups the seeded sampler drew, which have no Hypothesis choice sequence to shrink;
delta debugging works on any ``Scenario``, spends a bounded number of evaluations, and its result
is a pure function of the group and the predicate. It removes members, topics, claims and
subscriptions (halves first, then quarters, down to single items), lowers partition counts, and
simplifies fields (versions, racks, instance ids, assignor lists, generations, member names).

The library neither prints nor exits; ``progress`` (a callable taking a ``HuntProgress``) is how
the CLI draws its progress line.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from .assignors.registry import AssignorInfo, get_assignor
from .errors import AssignorFailure, StickyproofError
from .model import Member, Scenario, TopicPartition, scenario_to_dict
from .oracle.invariants import INVARIANTS
from .scenarios.space import InvalidSpace, Space

__all__ = [
    "FAILURE_KINDS",
    "AssignorTimeLimit",
    "Verdict",
    "Finding",
    "HuntProgress",
    "HuntResult",
    "Shrunk",
    "hunt",
    "hunting_space",
    "judge",
    "shrink",
    "shrink_search",
    "space_admits",
    "claims_invisible",
    "regression_document",
    "regression_name",
]

#: What a failing group can break, most severe first: the assignor raised, ran past the time
#: limit, broke an invariant of models/invariants.md, or kept too little.
FAILURE_KINDS = ("error", "time-limit", *INVARIANTS, "stickiness")

DEFAULT_EXAMPLES = 100
DEFAULT_TIME_LIMIT = 10.0
DEFAULT_SHRINK_EVALUATIONS = 300
DEFAULT_SHRINK_SECONDS = 120.0


# ------------------------------------------------------------------------------------------
# Judging one group


@dataclass(frozen=True)
class Verdict:
    """How one group went: the failures found (``FAILURE_KINDS`` order), a witness for each,
    the grade record, and the exception the assignor raised (if it did)."""

    failures: tuple[str, ...]
    witnesses: Mapping[str, Mapping[str, Any]]
    stickiness: float | None
    grade: Any = None
    exception: BaseException | None = None

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def first(self) -> str | None:
        return self.failures[0] if self.failures else None


class AssignorTimeLimit(AssignorFailure):
    """The assignor did not return within the hunt's time limit (its thread is abandoned)."""


def _call_with_limit(fn: Callable[[], Any], limit: float | None) -> Any:
    """``fn()`` in a daemon thread, waiting at most ``limit`` seconds.

    Python cannot stop a thread: an assignor stuck in a loop keeps its thread (a daemon, so it
    never holds the process open) and the hunt moves on. Without a limit ``fn`` runs inline.
    """
    if limit is None:
        return fn()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="stickyproof-hunt-assignor", daemon=True)
    started = time.perf_counter()
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise AssignorTimeLimit(f"the assignor ran past the time limit of {limit:g} s (stopped waiting after {time.perf_counter() - started:.2f} s)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def judge(
    scenario: Scenario,
    assignor: str | AssignorInfo,
    *,
    min_stickiness: float | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    balance: str | None = None,
) -> Verdict:
    """Grade ``assignor`` on ``scenario`` through the leader path and list what failed.

    The grade is ``oracle.grade.grade`` with ``run`` = the leader (``leader.lead``) and ``view`` =
    what that assignor's leader decodes (``leader.decoded_view``), exactly as
    ``tests/test_regressions.py`` replays a ``grade`` expectation. Every call of the assignor is
    bounded by ``time_limit`` seconds. ``stickiness`` is a failure only below ``min_stickiness``
    and only when the optimum it is measured against is proven.
    """
    from .leader import decoded_view, lead
    from .oracle.grade import grade

    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    raised: list[BaseException] = []

    def run(s: Scenario) -> Any:
        try:
            return _call_with_limit(lambda: lead(s, info).assignment, time_limit)
        except Exception as exc:
            raised.append(exc)
            raise

    view = decoded_view(scenario, info)
    g = grade(scenario, run=run, view=view, assignor=info.name, balance=balance)
    failures: list[str] = []
    witnesses: dict[str, Mapping[str, Any]] = {}
    error = getattr(g, "error", None)
    if error:
        exc = raised[0] if raised else None
        kind = "time-limit" if isinstance(exc, AssignorTimeLimit) else "error"
        failures.append(kind)
        witnesses[kind] = {"message": str(error), **_exception_fields(exc)}
    for v in getattr(g, "violations", ()) or ():
        name = v.invariant if hasattr(v, "invariant") else v["invariant"]
        if name not in witnesses:
            witnesses[name] = dict(v.witness if hasattr(v, "witness") else v.get("witness", {}))
            failures.append(name)
    stickiness = getattr(g, "stickiness", None)
    if (
        min_stickiness is not None
        and not error
        and stickiness is not None
        and getattr(g, "proven", False)
        and stickiness < min_stickiness
    ):
        failures.append("stickiness")
        witnesses["stickiness"] = {
            "stickiness": stickiness,
            "min_stickiness": min_stickiness,
            "kept": getattr(g, "kept", None),
            "optimal_kept": getattr(g, "optimal_kept", None),
            "moved": getattr(g, "moved", None),
        }
    order = {k: i for i, k in enumerate(FAILURE_KINDS)}
    failures.sort(key=lambda k: order.get(k, len(order)))
    return Verdict(tuple(failures), witnesses, stickiness, g, raised[0] if raised else None)


def _exception_fields(exc: BaseException | None) -> dict[str, Any]:
    if exc is None:
        return {}
    out: dict[str, Any] = {"type": type(exc).__name__}
    java = getattr(exc, "kafka_exception", None)
    if java:
        out["kafka_exception"] = java
    cause = exc.__cause__
    if cause is not None:
        out["cause"] = type(cause).__name__
    return out


# ------------------------------------------------------------------------------------------
# The space an assignor can meet, and whether a shrunk group is still in it


def hunting_space(space: Space | Sequence[str] | None, info: AssignorInfo) -> Space:
    """``space`` (a ``Space``, ``KNOB=VALUE`` strings, or None for the default) restricted to the
    rebalance protocols ``info`` supports (R36); ``InvalidSpace`` when none is left."""
    if space is None:
        base = Space()
    elif isinstance(space, Space):
        base = space
    else:
        base = Space.from_overrides(list(space))
    protocols = tuple(p for p in base.protocols if p in info.protocols)
    if not protocols:
        raise InvalidSpace(
            "protocols",
            f"{info.name} supports only {', '.join(info.protocols)} (R36), and the space allows only "
            f"{', '.join(base.protocols)}",
        )
    return replace(base, protocols=protocols)


def _claims_past_count_allowed(space: Space) -> bool:
    return space.past_count_claims[1] > 0 or "partitions-deleted" in space.ownership


def _claims_on_missing_topics_allowed(space: Space) -> bool:
    return space.deleted_topic_claims[1] > 0 or "topics-deleted" in space.ownership


def claims_invisible(scenario: Scenario) -> bool:
    """A cooperative group with a member speaking subscription v0, whose owned partitions never
    reach the leader (the field exists from v1, R2; KIP-429 upgrades need v1+).

    No assignor can be cooperative-safe there (it cannot see what it must not hand over), so the
    hunt leaves such groups out: the hazard belongs to the group, not to the assignor under test,
    and is pinned by ``tests/regressions/cooperative-sticky-v0-claims-invisible*.json``.
    """
    return scenario.protocol == "cooperative" and any(m.version == 0 and m.owned for m in scenario.members)


def space_admits(space: Space, scenario: Scenario) -> bool:
    """Whether ``scenario`` still has only features ``space`` can generate (checked on the knobs
    shrinking can cross: protocol, versions, member and topic counts, partition counts, empty or
    unequal subscriptions, claims past a partition count or on a missing topic, racks, static ids).

    A shrunk failure must stay inside the space it was found in: a group shrunk out of a
    hazard-free space into a hazard (an empty subscription, R13) would fail for another reason.
    """
    if scenario.protocol not in space.protocols or claims_invisible(scenario):
        return False
    if any(m.version not in space.versions for m in scenario.members):
        return False
    if not space.members[0] <= len(scenario.members):
        return False
    counts = {t.name: t.partitions for t in scenario.topics}
    live = [t for t in scenario.topics if t.partitions > 0]
    if len(live) < space.topics[0] or len(scenario.topics) - len(live) > space.zero_partition_topics[1]:
        return False
    if any(not space.partitions[0] <= t.partitions <= space.partitions[1] for t in live):
        return False
    if "empty" not in space.subscriptions and any(not m.topics for m in scenario.members):
        return False
    if set(space.subscriptions) <= {"uniform"} and len({frozenset(m.topics) for m in scenario.members}) > 1:
        return False
    for m in scenario.members:
        for tp in m.owned:
            n = counts.get(tp.topic)
            if n is None and not _claims_on_missing_topics_allowed(space):
                return False
            if n is not None and tp.partition >= n and not _claims_past_count_allowed(space):
                return False
    if space.racks == ("none",) and (any(m.rack for m in scenario.members) or any(t.racks for t in scenario.topics)):
        return False
    if space.static == ("none",) and any(m.instance_id for m in scenario.members):
        return False
    return True


# ------------------------------------------------------------------------------------------
# Shrinking: deterministic delta debugging over a Scenario


@dataclass(frozen=True)
class Shrunk:
    """The result of ``shrink_search``: the smallest failing group found, the evaluations spent,
    and what stopped it (``done``: no candidate fails any more; ``evaluations`` or ``deadline``)."""

    scenario: Scenario
    evaluations: int
    stopped_by: str


def _chunks(items: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """Halves, quarters, ..., single items: delta debugging's coarse-to-fine removal sets."""
    n = len(items)
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            yield tuple(items[start : start + size])
        size //= 2


#: An edit maps the current group to a smaller or plainer one, or to None when it no longer
#: applies (its member or topic is gone). Edits name members, topics and claims, never
#: positions, so an edit planned at the start of a pass still means the same after others.
Edit = Callable[[Scenario], "Scenario | None"]


def _with_members(s: Scenario, members: Iterable[Member]) -> Scenario:
    return replace(s, members=tuple(members))


def _map_member(s: Scenario, member_id: str, change: Callable[[Member], Member]) -> Scenario | None:
    if not any(m.id == member_id for m in s.members):
        return None
    return _with_members(s, (change(m) if m.id == member_id else m for m in s.members))


def _drop_members(ids: frozenset[str]) -> Edit:
    def edit(s: Scenario) -> Scenario | None:
        kept = [m for m in s.members if m.id not in ids]
        return _with_members(s, kept) if kept and len(kept) < len(s.members) else None

    return edit


def _drop_topic(name: str) -> Edit:
    def edit(s: Scenario) -> Scenario | None:
        if s.topic(name) is None and not any(name in m.topics or any(tp.topic == name for tp in m.owned) for m in s.members):
            return None
        members = (
            replace(m, topics=tuple(t for t in m.topics if t != name), owned=tuple(tp for tp in m.owned if tp.topic != name))
            for m in s.members
        )
        return _with_members(replace(s, topics=tuple(t for t in s.topics if t.name != name)), members)

    return edit


def _drop_claims(member_id: str | None, claims: frozenset[TopicPartition] | None) -> Edit:
    """Drop ``claims`` (None: all) of ``member_id`` (None: of every member)."""

    def edit(s: Scenario) -> Scenario | None:
        members = []
        for m in s.members:
            if member_id is None or m.id == member_id:
                m = replace(m, owned=tuple(tp for tp in m.owned if claims is not None and tp not in claims))
            members.append(m)
        return _with_members(s, members)

    return edit


def _cut_partitions(name: str, how: str) -> Edit:
    """Topic ``name`` cut to one partition, half its partitions, or one fewer. Claims on the
    removed partitions go with them; claims already past the old count stay (they may be what
    fails, §10 K1)."""

    def edit(s: Scenario) -> Scenario | None:
        topic = s.topic(name)
        if topic is None or topic.partitions <= 1:
            return None
        old = topic.partitions
        count = {"one": 1, "half": old // 2, "one-fewer": old - 1}[how]
        topics = tuple(
            replace(t, partitions=count, racks=None if t.racks is None else t.racks[:count]) if t.name == name else t
            for t in s.topics
        )
        members = (
            replace(m, owned=tuple(tp for tp in m.owned if not (tp.topic == name and count <= tp.partition < old)))
            for m in s.members
        )
        return _with_members(replace(s, topics=topics), members)

    return edit


def _compact_claims(name: str) -> Edit:
    """Partitions of topic ``name`` renumbered so the claimed ones come first (in their order):
    the same group up to partition names, and the partition cuts that follow can keep the claims."""

    def edit(s: Scenario) -> Scenario | None:
        topic = s.topic(name)
        if topic is None:
            return None
        claimed = sorted({tp.partition for m in s.members for tp in m.owned if tp.topic == name and tp.partition < topic.partitions})
        order = claimed + [p for p in range(topic.partitions) if p not in set(claimed)]
        new_number = {old: new for new, old in enumerate(order)}
        if all(old == new for old, new in new_number.items()):
            return None
        racks = None if topic.racks is None else tuple(topic.racks[old] for old in order)
        topics = tuple(replace(t, racks=racks) if t.name == name else t for t in s.topics)
        members = (
            replace(
                m,
                owned=tuple(
                    TopicPartition(name, new_number[tp.partition]) if tp.topic == name and tp.partition in new_number else tp
                    for tp in m.owned
                ),
            )
            for m in s.members
        )
        return _with_members(replace(s, topics=topics), members)

    return edit


def _unsubscribe(member_id: str, name: str) -> Edit:
    return lambda s: _map_member(s, member_id, lambda m: replace(m, topics=tuple(t for t in m.topics if t != name)))


def _lower_past_count_claims(s: Scenario) -> Scenario | None:
    """Claims past a topic's partition count, renumbered to the first missing partition."""
    counts = {t.name: t.partitions for t in s.topics}
    members = []
    for m in s.members:
        owned: list[TopicPartition] = []
        for tp in m.owned:
            n = counts.get(tp.topic)
            lowered = TopicPartition(tp.topic, n) if n is not None and tp.partition > n else tp
            owned.append(lowered if lowered not in owned and lowered not in m.owned else tp)
        members.append(replace(m, owned=tuple(owned)))
    return _with_members(s, members)


def _set_all(attr: str, value: Any) -> Edit:
    return lambda s: _with_members(s, (replace(m, **{attr: value}) for m in s.members))


def _set_member(member_id: str, attr: str, value: Any) -> Edit:
    return lambda s: _map_member(s, member_id, lambda m: replace(m, **{attr: value}))


def _eager(s: Scenario) -> Scenario:
    return replace(s, protocol="eager")


def _no_replica_racks(s: Scenario) -> Scenario:
    return replace(s, topics=tuple(replace(t, racks=None) for t in s.topics))


def _generations_ranked(s: Scenario) -> Scenario:
    """Generations mapped to 1, 2, 3 ... in their order (-1 kept): the same comparisons, smaller numbers."""
    known = sorted({m.generation for m in s.members if m.generation >= 0})
    rank = {g: i + 1 for i, g in enumerate(known)}
    return _with_members(s, (replace(m, generation=rank.get(m.generation, m.generation)) for m in s.members))


def _members_in_id_order(s: Scenario) -> Scenario:
    return _with_members(s, sorted(s.members, key=lambda m: m.id))


def _short_names(n: int) -> list[str]:
    if n <= 26:
        return [chr(ord("a") + i) for i in range(n)]
    return [f"c{i}" for i in range(n)]


def _renamed(s: Scenario) -> Scenario:
    """Members renamed a, b, c ... keeping their sorted order (Kafka's hash order may change: a
    failure that depends on it rejects the rename)."""
    ranked = sorted(m.id for m in s.members)
    names = dict(zip(ranked, _short_names(len(ranked))))
    return _with_members(s, (replace(m, id=names[m.id]) for m in s.members))


def _edits(s: Scenario) -> list[Edit]:
    """One pass of edits for ``s``, the biggest reductions first."""
    ids = [m.id for m in s.members]
    edits: list[Edit] = []
    # Members: halves, quarters, ... single members.
    edits += [_drop_members(frozenset(chunk)) for chunk in _chunks(ids)]
    # Topics, whole: metadata, subscriptions and claims.
    names = list(dict.fromkeys([t.name for t in s.topics] + [t for m in s.members for t in m.topics]))
    edits += [_drop_topic(name) for name in names]
    # Claims: everybody's, each member's, then halves ... single claims of each member.
    if any(m.owned for m in s.members):
        edits.append(_drop_claims(None, None))
        edits += [_drop_claims(m.id, None) for m in s.members if len(m.owned) > 1]
        for m in s.members:
            edits += [_drop_claims(m.id, frozenset(chunk)) for chunk in _chunks(list(m.owned))]
    # Partition counts (claimed partitions renumbered first, so cuts can keep them).
    edits += [_compact_claims(t.name) for t in s.topics if t.partitions > 1]
    for how in ("one", "half", "one-fewer"):
        edits += [_cut_partitions(t.name, how) for t in s.topics if t.partitions > 1]
    # Subscriptions: one topic fewer for one member.
    edits += [_unsubscribe(m.id, name) for m in s.members for name in dict.fromkeys(m.topics)]
    # Plainer values: claims past a count lowered, eager, no racks, no static ids, no assignor
    # lists, version 3, generation -1 or smaller generations, id order, short names.
    edits += [_lower_past_count_claims, _eager, _no_replica_racks]
    edits += [_set_all("rack", None), _set_all("instance_id", None), _set_all("assignors", ())]
    edits += [_set_member(m.id, "version", 3) for m in s.members if m.version != 3]
    edits.append(_set_all("generation", -1))
    edits += [_set_member(m.id, "generation", -1) for m in s.members if m.generation != -1]
    edits += [_generations_ranked, _members_in_id_order, _renamed]
    return edits


def shrink_search(
    scenario: Scenario,
    still_fails: Callable[[Scenario], bool],
    *,
    max_evaluations: int = DEFAULT_SHRINK_EVALUATIONS,
    deadline: float | None = None,
    progress: Callable[[int, Scenario], None] | None = None,
) -> Shrunk:
    """Delta debugging in passes: each pass plans its edits (``_edits``) for the current group and
    applies them in order, keeping every edit whose result ``still_fails``; passes repeat until one
    keeps nothing, ``max_evaluations`` calls of ``still_fails`` are spent, or ``deadline`` (a
    ``time.monotonic()`` value) passes.

    A kept edit is not undone, and later edits of the pass apply to the smaller group (an edit
    naming a member that is gone is skipped without a call). ``scenario`` itself is assumed to
    fail and is not re-checked; no group is checked twice. The result is a pure function of
    ``scenario`` and ``still_fails`` unless the deadline stops it.
    """
    current, evaluations = scenario, 0
    seen: set[Scenario] = {scenario}
    progressed = True
    while progressed:
        progressed = False
        for edit in _edits(current):
            candidate = edit(current)
            if candidate is None or candidate in seen:
                continue
            if evaluations >= max_evaluations:
                return Shrunk(current, evaluations, "evaluations")
            if deadline is not None and time.monotonic() > deadline:
                return Shrunk(current, evaluations, "deadline")
            seen.add(candidate)
            evaluations += 1
            if still_fails(candidate):
                current, progressed = candidate, True
                if progress is not None:
                    progress(evaluations, current)
    return Shrunk(current, evaluations, "done")


def shrink(
    scenario: Scenario,
    still_fails: Callable[[Scenario], bool],
    *,
    max_evaluations: int = DEFAULT_SHRINK_EVALUATIONS,
    deadline: float | None = None,
) -> Scenario:
    """The smallest group ``shrink_search`` reaches from ``scenario`` that ``still_fails``.

    Deterministic delta debugging (not Hypothesis's shrinker, so it works on groups from any
    source): fewer members, topics, claims, partitions and subscribed topics, then plainer
    values (``shrink_search``). ``still_fails`` should be deterministic; it is never called on ``scenario`` itself.
    """
    return shrink_search(scenario, still_fails, max_evaluations=max_evaluations, deadline=deadline).scenario


# ------------------------------------------------------------------------------------------
# The hunt


@dataclass(frozen=True)
class HuntProgress:
    """One progress report: ``phase`` is ``search`` (``done`` of ``total`` examples) or ``shrink``
    (``done`` evaluations, ``total`` their budget; ``members``/``partitions`` of the current group)."""

    phase: str
    done: int
    total: int
    worst_stickiness: float | None
    failure: str | None = None
    members: int | None = None
    partitions: int | None = None


@dataclass(frozen=True)
class Finding:
    """A failing group, shrunk: what failed first, the oracle's witness, and where it came from."""

    failure: str
    failures: tuple[str, ...]
    witness: Mapping[str, Any]
    scenario: Scenario
    original: Scenario
    verdict: Verdict
    shrink_evaluations: int
    shrink_stopped_by: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "failure": self.failure,
            "failures": list(self.failures),
            "witness": _jsonable(self.witness),
            "scenario": scenario_to_dict(self.scenario),
            "size": _size(self.scenario),
            "original_size": _size(self.original),
            "stickiness": self.verdict.stickiness,
            "shrink": {"evaluations": self.shrink_evaluations, "stopped_by": self.shrink_stopped_by},
        }


@dataclass(frozen=True)
class HuntResult:
    """What a hunt did: the finding (None when every example passed), how many examples it tried,
    the worst stickiness it saw (and on which group), and the exact inputs that reproduce it."""

    assignor: str
    seed: int
    examples: int
    tried: int
    space: Space
    min_stickiness: float | None
    time_limit: float | None
    balance: str | None
    finding: Finding | None
    worst_stickiness: float | None
    worst_scenario: Scenario | None = None
    seconds: float = 0.0

    @property
    def found(self) -> bool:
        return self.finding is not None

    def command(self) -> str:
        """The ``stickyproof hunt`` command line that repeats this hunt."""
        parts = ["stickyproof hunt", f"--assignor {self.assignor}", f"--examples {self.examples}", f"--seed {self.seed}"]
        overrides = self.space.to_overrides()
        if overrides:
            parts.append("--space " + " ".join(overrides))
        if self.min_stickiness is not None:
            parts.append(f"--min-stickiness {self.min_stickiness:g}")
        if self.time_limit is not None and self.time_limit != DEFAULT_TIME_LIMIT:
            parts.append(f"--time-limit {self.time_limit:g}")
        if self.balance is not None:
            parts.append(f"--balance {self.balance}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.assignor,
            "seed": self.seed,
            "examples": self.examples,
            "tried": self.tried,
            "space": self.space.to_overrides(),
            "min_stickiness": self.min_stickiness,
            "time_limit": self.time_limit,
            "balance": self.balance,
            "found": self.found,
            "finding": None if self.finding is None else self.finding.to_dict(),
            "worst_stickiness": self.worst_stickiness,
            "seconds": round(self.seconds, 3),
            "command": self.command(),
        }


def _size(s: Scenario) -> dict[str, int]:
    return {
        "members": len(s.members),
        "topics": sum(1 for t in s.topics if t.partitions > 0),
        "partitions": len(s.subscribed_partitions()),
        "claims": sum(len(m.owned) for m in s.members),
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


class _Found(Exception):
    """Raised inside the Hypothesis test to end the search at the first failing group."""


@dataclass
class _SearchState:
    tried: int = 0
    worst: float | None = None
    worst_scenario: Scenario | None = None
    failing: Scenario | None = None
    verdict: Verdict | None = None
    timings: list[float] = field(default_factory=list)


def _hunting_strategy(space: Space) -> Any:
    """``strategies.from_space(space)``, with half the draws from the upper half of the member range.

    Hypothesis draws short lists far more often than long ones (most groups it draws from the
    default space have one or two members); a fault that needs a crowd would otherwise be met late
    or not at all within a CI-sized example budget. Both halves stay inside ``space``.
    """
    from hypothesis import strategies as st

    from .strategies import from_space

    low, high = space.members
    middle = (low + high + 1) // 2
    if middle <= low:
        return from_space(space)
    return st.one_of(from_space(space), from_space(replace(space, members=(middle, high))))


def _search(
    info: AssignorInfo,
    space: Space,
    *,
    examples: int,
    seed: int,
    judge_one: Callable[[Scenario], Verdict],
    progress: Callable[[HuntProgress], None] | None,
) -> _SearchState:
    """Hypothesis over ``strategies.from_space(space)``, seeded, without a database, stopping at
    the first failing group (no Hypothesis shrinking: ``shrink`` does that, for any source)."""
    from hypothesis import HealthCheck, Phase, Verbosity, assume, given, settings, target
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import Unsatisfiable

    state = _SearchState()

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        derandomize=False,
        deadline=None,
        phases=(Phase.generate, Phase.target),
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(_hunting_strategy(space))
    def search(scenario: Scenario) -> None:
        if state.failing is not None:  # Hypothesis replays the failing example once: fail again
            raise _Found()
        assume(not claims_invisible(scenario))
        state.tried += 1
        verdict = judge_one(scenario)
        if verdict.stickiness is not None:
            target(1.0 - float(verdict.stickiness), label="stickiness gap")
            if state.worst is None or verdict.stickiness < state.worst:
                state.worst, state.worst_scenario = verdict.stickiness, scenario
        if progress is not None:
            progress(HuntProgress("search", state.tried, examples, state.worst, verdict.first))
        if verdict.failed:
            state.failing, state.verdict = scenario, verdict
            raise _Found()

    try:
        search()
    except _Found:
        pass
    except Unsatisfiable as exc:
        raise InvalidSpace(
            "space",
            "Hypothesis could not draw a group the hunt can judge from this space (every draw was a cooperative "
            "group with v0 claims, which no assignor can see: see claims_invisible)",
        ) from exc
    except BaseException as exc:
        # Hypothesis wraps several failures in an ExceptionGroup; ours is the only kind raised.
        inner = getattr(exc, "exceptions", None)
        if not inner or not all(isinstance(e, _Found) for e in inner):
            raise
    return state


def hunt(
    assignor: str | AssignorInfo,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    space: Space | Sequence[str] | None = None,
    min_stickiness: float | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    balance: str | None = None,
    shrink_evaluations: int = DEFAULT_SHRINK_EVALUATIONS,
    shrink_seconds: float | None = DEFAULT_SHRINK_SECONDS,
    progress: Callable[[HuntProgress], None] | None = None,
) -> HuntResult:
    """Search ``space`` for a group on which ``assignor`` fails; shrink the first one found.

    ``assignor``: a registry name or ``module.path:callable`` (the contract is in
    ``stickyproof.assignors.registry``). ``examples``: how many groups Hypothesis draws at most.
    ``seed``: the Hypothesis seed; the same arguments give the same hunt. ``space``: a ``Space``
    or ``KNOB=VALUE`` overrides. ``min_stickiness``: a ratio in [0, 1] below which keeping too
    little is a failure. ``time_limit``: seconds per assignor call (None: unbounded).
    ``balance``: the grade's balance mode (None: uniform on equal subscriptions, else global).
    Shrinking stops after ``shrink_evaluations`` judged candidates or ``shrink_seconds``.
    """
    started = time.perf_counter()
    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
        raise InvalidSpace("examples", f"must be a positive integer, got {examples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidSpace("seed", f"must be an integer, got {seed!r}")
    if min_stickiness is not None and not 0.0 <= float(min_stickiness) <= 1.0:
        raise InvalidSpace("min_stickiness", f"must be between 0 and 1, got {min_stickiness!r}")
    if time_limit is not None and not time_limit > 0:
        raise InvalidSpace("time_limit", f"must be positive seconds, got {time_limit!r}")
    if balance is not None and balance not in ("uniform", "global", "kafka"):
        raise InvalidSpace("balance", f"must be uniform, global or kafka, got {balance!r}")
    hunted = hunting_space(space, info)

    def judge_one(s: Scenario) -> Verdict:
        return judge(s, info, min_stickiness=min_stickiness, time_limit=time_limit, balance=balance)

    state = _search(info, hunted, examples=examples, seed=seed, judge_one=judge_one, progress=progress)
    finding = None
    if state.failing is not None and state.verdict is not None:
        finding = _shrink_finding(
            state.failing, state.verdict, hunted, judge_one, shrink_evaluations, shrink_seconds, state.worst, progress
        )
    return HuntResult(
        assignor=info.name,
        seed=seed,
        examples=examples,
        tried=state.tried,
        space=hunted,
        min_stickiness=min_stickiness,
        time_limit=time_limit,
        balance=balance,
        finding=finding,
        worst_stickiness=state.worst,
        worst_scenario=state.worst_scenario,
        seconds=time.perf_counter() - started,
    )


def _shrink_finding(
    failing: Scenario,
    verdict: Verdict,
    space: Space,
    judge_one: Callable[[Scenario], Verdict],
    max_evaluations: int,
    seconds: float | None,
    worst: float | None,
    progress: Callable[[HuntProgress], None] | None,
) -> Finding:
    """Shrink ``failing`` while it stays in ``space`` and fails the same way.

    "The same way" starts as the group's first failure (``FAILURE_KINDS`` order). When the
    shrunk group shows a more severe failure than that one (a partition dropped in a cooperative
    round shows as ``imbalance`` until the group is shrunk to an eager one, where it is
    ``unassigned``), shrinking goes on for the more severe one, which is what is reported.
    """
    rank = {k: i for i, k in enumerate(FAILURE_KINDS)}
    deadline = None if seconds is None else time.monotonic() + seconds
    current, current_verdict = failing, verdict
    wanted = verdict.first
    assert wanted is not None
    evaluations, stopped_by = 0, "done"
    while True:
        target = wanted

        def still_fails(candidate: Scenario, target: str = target) -> bool:
            return space_admits(space, candidate) and target in judge_one(candidate).failures

        def report(done: int, s: Scenario, target: str = target, spent: int = evaluations) -> None:
            if progress is not None:
                size = _size(s)
                progress(HuntProgress("shrink", spent + done, max_evaluations, worst, target, size["members"], size["partitions"]))

        shrunk = shrink_search(
            current, still_fails, max_evaluations=max_evaluations - evaluations, deadline=deadline, progress=report
        )
        evaluations += shrunk.evaluations
        stopped_by = shrunk.stopped_by
        final = judge_one(shrunk.scenario)
        if wanted not in final.failures:  # flaky (or clocked) on re-judging: keep the last group that failed
            break
        current, current_verdict = shrunk.scenario, final
        more_severe = final.first
        if stopped_by != "done" or more_severe is None or rank[more_severe] >= rank[wanted]:
            break
        wanted = more_severe
    return Finding(
        failure=wanted if wanted in current_verdict.failures else current_verdict.first or wanted,
        failures=current_verdict.failures,
        witness=current_verdict.witnesses.get(wanted, {}),
        scenario=current,
        original=failing,
        verdict=current_verdict,
        shrink_evaluations=evaluations,
        shrink_stopped_by=stopped_by,
    )


# ------------------------------------------------------------------------------------------
# The regression file (tests/regressions/README.md)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9@]+", "-", text).strip("-").lower()


def regression_name(result: HuntResult) -> str:
    """``<assignor>-<failure>-hunt-seed<S>``: the file stem and the scenario's name."""
    assert result.finding is not None
    return f"{_slug(result.assignor)}-{result.finding.failure}-hunt-seed{result.seed}"


def _witness_sentence(failure: str, witness: Mapping[str, Any]) -> str:
    shown = ", ".join(f"{k}={_jsonable(v)}" for k, v in witness.items() if k != "message")
    if failure in ("error", "time-limit"):
        return f"{witness.get('message', '')}".strip()
    return shown


def regression_document(result: HuntResult) -> dict[str, Any]:
    """The finding as a regression file: the shrunk scenario plus an ``expect`` object.

    The expectation is what ``tests/test_regressions.py`` replays: ``error`` (the Java exception's
    simple name, or ``AssignorFailure``) when the assignor raised, otherwise ``grade`` with
    ``valid`` and the full set of violated invariants (and ``stickiness``, ``kept``,
    ``optimal_kept`` for a stickiness finding). A time-limit finding cannot be replayed as such
    (the replay has no time limit); it is written with ``error: AssignorFailure`` and a
    ``time limit`` message, which documents it but fails until the assignor gets faster.
    """
    finding = result.finding
    if finding is None:
        raise StickyproofError("the hunt found nothing: there is no regression to write")
    name = regression_name(result)
    doc = scenario_to_dict(replace(finding.scenario, name=name))
    size = _size(finding.original)
    mechanism = (
        f"Found by `{result.command()}` and shrunk from {size['members']} members and {size['partitions']} "
        f"partitions: {finding.failure} ({_witness_sentence(finding.failure, finding.witness)})."
    )
    expect: dict[str, Any] = {"assignor": result.assignor, "mechanism": mechanism}
    if result.balance is not None:
        expect["balance"] = result.balance
    if finding.failure == "error":
        exc = finding.verdict.exception
        java = getattr(exc, "kafka_exception", None) if exc is not None else None
        expect["error"] = java.rsplit(".", 1)[-1] if java else (type(exc).__name__ if exc is not None else "AssignorFailure")
    elif finding.failure == "time-limit":
        expect["error"] = "AssignorFailure"
        expect["error_message"] = "time limit"
    else:
        g = finding.verdict.grade
        record: dict[str, Any] = {
            "valid": bool(getattr(g, "valid", False)),
            "violations": sorted(f for f in finding.failures if f not in ("error", "time-limit", "stickiness")),
        }
        if finding.failure == "stickiness":
            record["stickiness"] = finding.verdict.stickiness
            record["kept"] = getattr(g, "kept", None)
            record["optimal_kept"] = getattr(g, "optimal_kept", None)
        expect["grade"] = record
    doc["expect"] = expect
    return doc
