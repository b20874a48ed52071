"""Drawn online migrations: a classic group upgraded to KIP-848's consumer protocol, and maybe back.

``draw_migration_history(seed, index)`` is a pure function of its arguments (a BLAKE2b digest of
``"{seed}:{index}"`` seeds the same ``random()``-only draw as ``consumer_histories``): a classic
group stable at generation 3 (2-4 members, cooperative-sticky, or an eager assignor: range,
roundrobin or sticky; one or two topics everyone subscribes to, the partitions dealt round-robin)
and its steps, in order:

* the upgrade: every member restarted once with ``group.protocol=consumer``, in a drawn order, as
  an operator rolls a new configuration out;
* between two restarts, sometimes one more change while the group is a consumer group: a new member
  joining (a new instance, so with the new configuration), an upgraded member's subscription change
  (two topics only), or partitions added to a topic;
* sometimes the downgrade: every process restarted once with ``group.protocol=classic``.

The steps carry no ticks: the sweep spaces them so each settles on its own
(``sweep.migration_rows``), as it does the consumer histories. What is not drawn, and why: a
subscription change or added partitions while the group is classic (the migration simulator's
classic members do not rejoin on metadata they see change), static members (not modelled in a
migration), crashes, stalls and heartbeat loss (``tests/test_consumer_migration.py`` draws those).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import InvalidScenario
from .consumer_histories import _Draw

__all__ = ["MigrationStep", "MigrationHistory", "draw_migration_history", "EAGER_ASSIGNORS"]

#: The eager assignors a drawn classic group may run (a cooperative group runs cooperative-sticky).
EAGER_ASSIGNORS = ("range", "roundrobin", "sticky")


@dataclass(frozen=True)
class MigrationStep:
    """One step: ``restart`` (``member`` with ``group_protocol``), ``join`` (a new ``member`` with
    ``group_protocol`` and ``topics``), ``subscribe`` (``member``, ``topics``) or ``partitions``
    (``topic`` grows by ``count``)."""

    kind: str
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class MigrationHistory:
    """A drawn migration: the classic group at the start (a ``stickyproof.scenario/1`` dictionary),
    its steps, and whether it is downgraded at the end."""

    seed: int
    index: int
    scenario: Mapping[str, Any]
    steps: tuple[MigrationStep, ...]
    downgraded: bool

    @property
    def name(self) -> str:
        return f"migration-{self.seed}-{self.index}"


def migration_history_seed(seed: int, index: int) -> int:
    digest = hashlib.blake2b(f"{seed}:{index}".encode("ascii"), digest_size=8, person=b"stickyproof-migr").digest()
    return int.from_bytes(digest, "big")


def draw_migration_history(seed: int, index: int) -> MigrationHistory:
    """Migration history ``index`` of the sweep seeded ``seed`` (module docstring)."""
    for name, value in (("seed", seed), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, int) or (name == "index" and value < 0):
            raise InvalidScenario(name, f"expected a{' non-negative' if name == 'index' else 'n'} integer, got {value!r}")
    draw = _Draw(migration_history_seed(seed, index))
    cooperative = draw.chance(0.7)
    assignors = ["cooperative-sticky"] if cooperative else [draw.choice(EAGER_ASSIGNORS)]
    topics = {f"t{i}": draw.integer(2, 10) for i in range(draw.integer(1, 2))}
    names = [f"m{i}" for i in range(draw.integer(2, 4))]
    owned: dict[str, dict[str, list[int]]] = {n: {} for n in names}
    dealt = 0
    for topic, count in topics.items():
        for p in range(count):
            owned[names[dealt % len(names)]].setdefault(topic, []).append(p)
            dealt += 1
    scenario = {"format": "stickyproof.scenario/1", "name": f"migration-{seed}-{index}",
                "protocol": "cooperative" if cooperative else "eager", "topics": dict(topics),
                "members": [{"id": n, "topics": sorted(topics), "assignors": list(assignors), "generation": 3,
                             "owned": owned[n]} for n in names]}
    steps: list[MigrationStep] = []
    running = list(names)
    upgraded: list[str] = []
    for i, member in enumerate(draw.subset(names, len(names))):
        steps.append(MigrationStep("restart", {"member": member, "group_protocol": "consumer"}))
        upgraded.append(member)
        if i == len(names) - 1 or not draw.chance(0.5):
            continue
        change = draw.choice(("join", "subscribe", "partitions") if len(topics) > 1 else ("join", "partitions"))
        if change == "join":
            new = f"m{len(running)}"
            running.append(new)
            upgraded.append(new)
            steps.append(MigrationStep("join", {"member": new, "group_protocol": "consumer", "topics": sorted(topics)}))
        elif change == "subscribe":
            steps.append(MigrationStep("subscribe", {"member": draw.choice(upgraded), "topics": [draw.choice(sorted(topics))]}))
        else:
            topic = draw.choice(sorted(topics))
            steps.append(MigrationStep("partitions", {"topic": topic, "count": draw.integer(1, 4)}))
    downgraded = draw.chance(0.5)
    if downgraded:
        for member in draw.subset(running, len(running)):
            steps.append(MigrationStep("restart", {"member": member, "group_protocol": "classic"}))
    return MigrationHistory(seed, index, scenario, tuple(steps), downgraded)
