"""Every target a KIP-848 group's coordinator computed in a live run, graded with the input it had.

Under ``group.protocol=consumer`` the broker's assignor computes a *target* per group epoch from the
group as it stands: the members, their subscriptions, the topics' partition counts and each
member's previous target. The run's admin process describes the group every 100 ms (``watch-group``
in ``peers/kafka-member``) and reports each new target epoch with every member's target; the
members' own reports give their subscriptions (``started``, ``subscribed``) and the admin's the
partition counts (``topics-created``, ``partitions-added``, ``topic-deleted``), each as it stood
when the target was seen. So each target is graded as ``stickyproof grade`` grades a
consumer-group answer: the group with every member's previous target as its ``owned``, the new
targets as the answer, against the promise of the broker's assignor
(``oracle.consumer_contracts``) and the proven optimum.

A target whose previous epoch the watch did not see (two targets within 100 ms, or a description
taken while the group epoch was ahead of the target's: members join faster than a target is
described) has an input the reports do not show: it is graded for validity and its distance to the optimum, not for the
assignor's stickiness promise, and the grade says so. A member is named by its ``client.id``, which
every live member sets to its name.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..errors import StickyproofError
from ..model import CONSUMER, Assignment, Member, Scenario, Topic, TopicPartition
from .settled import SettledGrade

__all__ = ["WATCH_MS", "grade_targets", "member_ids_seen", "partition_counts", "subscriptions", "topic_ids_seen", "join_epochs_seen"]

WATCH_MS = 100
"""How often the admin describes the group (``watch-group``'s ``watch_ms``)."""


def subscriptions(reports: Sequence[Any], until_ns: int, strip: Callable[[str], str]) -> dict[str, tuple[str, ...]]:
    """Each member's subscribed topics at ``until_ns``, from its ``started`` and ``subscribed`` reports."""
    out: dict[str, tuple[str, ...]] = {}
    for r in reports:
        if r.mono_ns > until_ns:
            break
        if r.ev in ("started", "subscribed"):
            out[r.name] = tuple(strip(str(t)) for t in r.get("topics") or ())
    return out


def partition_counts(admin_reports: Sequence[Any], until_ns: int, strip: Callable[[str], str]) -> dict[str, int]:
    """Each topic's partition count at ``until_ns``, from the admin's reports of what it changed."""
    out: dict[str, int] = {}
    for r in admin_reports:
        if r.mono_ns > until_ns:
            break
        if r.ev == "topics-created":
            out.update({strip(str(t)): int(n) for t, n in (r.get("topics") or {}).items()})
        elif r.ev == "partitions-added":
            out[strip(str(r.get("topic")))] = int(r.get("partitions"))
        elif r.ev == "topic-deleted":
            out.pop(strip(str(r.get("topic"))), None)
    return out


def _targets(doc: Mapping[str, Any], strip: Callable[[str], str]) -> dict[str, tuple[TopicPartition, ...]]:
    return {name: tuple(sorted(TopicPartition(strip(str(t)), int(p)) for t, p in (m.get("target") or ())))
            for name, m in sorted(doc.items())}


def grade_targets(member_reports: Sequence[Any], admin_reports: Sequence[Any], strip: Callable[[str], str], t0: int,
                  assignor: str, name: str = "") -> tuple[SettledGrade, ...]:
    """Grade each target epoch the admin saw (module docstring), in epoch order."""
    from ..grading.consumer import consumer_row_fields, grade_consumer_assignment, promise_of

    out = []
    previous: dict[str, tuple[TopicPartition, ...]] = {}
    previous_epoch: int | None = None
    for i, r in enumerate(x for x in admin_reports if x.ev == "target"):
        epoch = int(r.get("epoch"))
        targets = _targets(r.get("members") or {}, strip)
        subscribed = subscriptions(member_reports, r.mono_ns, strip)
        counts = partition_counts(admin_reports, r.mono_ns, strip)
        members = tuple(Member(m, subscribed.get(m, ()), owned=previous.get(m, ())) for m in targets)
        scenario = Scenario(tuple(Topic(t, n) for t, n in sorted(counts.items())), members,
                            name=f"{name or 'live'} target epoch {epoch}", group_protocol=CONSUMER)
        # the first target (epoch 1) starts from nothing; any other needs the epoch just before it
        seen_input = epoch == 1 if previous_epoch is None else epoch == previous_epoch + 1
        contract = promise_of(assignor, scenario)
        error = None
        try:
            g = grade_consumer_assignment(scenario, Assignment(targets), name=assignor,
                                          contract=contract if seen_input else None)
            row = consumer_row_fields(g)
            row["input_seen"] = seen_input
            if not seen_input:  # what the members held before is unknown: no stickiness figure either
                row.update(contract=f"none (the target of epoch {epoch - 1}, its input, was not seen)",
                           stickiness=None, kept=None, optimal_kept=None)
        except StickyproofError as exc:  # a group the oracle cannot take is said, not raised
            row, error = {}, f"{type(exc).__name__}: {exc}"
        out.append(SettledGrade(i, (r.mono_ns - t0) // 1_000_000, assignor, scenario, tuple(sorted(targets.items())),
                                tuple(sorted(row.items())), error, epoch=epoch))
        previous, previous_epoch = targets, epoch
    return tuple(out)


def member_ids_seen(admin_reports: Sequence[Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each member's member ids in the order the admin's targets showed them (a restarted process
    generates a new one, KIP-1082)."""
    out: dict[str, list[str]] = {}
    for r in admin_reports:
        if r.ev == "target":
            for name, m in sorted((r.get("members") or {}).items()):
                ids = out.setdefault(name, [])
                if m.get("member_id") and m["member_id"] not in ids:
                    ids.append(str(m["member_id"]))
    return tuple(sorted((name, tuple(ids)) for name, ids in out.items() if ids))


def topic_ids_seen(admin_reports: Sequence[Any], strip: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """Each topic the run created and the id the broker gave it (Kafka's ``Uuid.toString``)."""
    out: dict[str, str] = {}
    for r in admin_reports:
        if r.ev == "topics-created":
            out.update({strip(str(t)): str(i) for t, i in (r.get("ids") or {}).items()})
    return tuple(sorted(out.items()))


def join_epochs_seen(admin_reports: Sequence[Any]) -> tuple[tuple[str, int], ...]:
    """Each member's first group epoch in the admin's descriptions (``group-epoch``): a join bumps the
    group epoch, so the order of these is the order the members joined, as far as 100 ms apart
    descriptions tell (two joins between two descriptions share an epoch)."""
    first: dict[str, int] = {}
    for r in admin_reports:
        if r.ev == "group-epoch":
            for name in r.get("members") or ():
                first.setdefault(str(name), int(r.get("epoch")))
    return tuple(sorted(first.items()))
