"""Named scenarios shipped with the package, from the KIPs and docs/rules.md.

The catalogue (``data/scenarios/catalogue.json``) maps each name to its scenario (a file
beside it, or a builder function here for the big one) and to what the scenario format
cannot carry: a description, the failure mechanism, sources, and room for event schedules
(``events``) that the protocol simulator attaches later. The scenario files themselves are
plain interchange documents, so ``stickyproof validate`` and every other reader accept them.

``stickyproof.cli.load_scenario_ref`` resolves bundled names through ``names()`` and ``get()``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from ..errors import InvalidScenario
from ..model import Member, Scenario, Topic, TopicPartition, parse_json, scenario_from_dict

__all__ = ["names", "get", "describe", "table", "events"]


def _read(filename: str) -> bytes:
    return resources.files("stickyproof").joinpath("data", "scenarios", filename).read_bytes()


@lru_cache(maxsize=1)
def _catalogue() -> dict[str, dict[str, Any]]:
    return json.loads(_read("catalogue.json"))


def names() -> list[str]:
    """Every bundled scenario name, sorted."""
    return sorted(_catalogue())


def _entry(name: str) -> dict[str, Any]:
    catalogue = _catalogue()
    if name not in catalogue:
        raise InvalidScenario("", f"no bundled scenario named {name!r} (known: {', '.join(sorted(catalogue))})")
    return catalogue[name]


@lru_cache(maxsize=None)
def get(name: str) -> Scenario:
    """The bundled scenario ``name``, read through the same validation as any scenario file."""
    entry = _entry(name)
    if "builder" in entry:
        return _BUILDERS[entry["builder"]]()
    return scenario_from_dict(parse_json(_read(entry["file"]), f"bundled scenario {name}"))


def events(name: str) -> list[dict[str, Any]]:
    """The event schedule the catalogue attaches to ``name`` (raw event objects, models/protocol.md §6);
    ``stickyproof simulate`` runs it when no events file is given."""
    return [dict(e) for e in _entry(name).get("events", [])]


def describe(name: str) -> str:
    """The scenario's description followed by its mechanism (what goes wrong, and why)."""
    entry = _entry(name)
    text = entry["description"]
    if entry.get("mechanism"):
        text += " Mechanism: " + entry["mechanism"]
    return text


# ------------------------------------------------------------------------------------------
# Builders for scenarios too large to ship as files.


def _kip615_2100() -> Scenario:
    """2,100 members x 2,100 partitions (10 topics of 210): the KAFKA-9987 scale case.

    Member i owned flat partition i at generation 7; the last 105 members (5%) are new ones
    that replaced departed members, so they own nothing and the departed shares are free.
    """
    n_members, n_topics, per_topic, joined = 2100, 10, 210, 105
    topics = tuple(Topic(f"topic-{t}", per_topic) for t in range(n_topics))
    subscription = tuple(t.name for t in topics)
    members = []
    for i in range(n_members):
        if i < n_members - joined:
            owned: tuple[TopicPartition, ...] = (TopicPartition(f"topic-{i // per_topic}", i % per_topic),)
            generation = 7
        else:
            owned, generation = (), -1
        members.append(
            Member(
                id=f"consumer-{i:04d}",
                topics=subscription,
                owned=owned,
                generation=generation,
                assignors=("cooperative-sticky",),
            )
        )
    return Scenario(topics=topics, members=tuple(members), protocol="cooperative", name="kip615-2100")


_BUILDERS: dict[str, Callable[[], Scenario]] = {"kip615_2100": _kip615_2100}


def table() -> list[dict[str, Any]]:
    """One row per bundled scenario for ``stickyproof scenarios list``: name, members, partitions, summary.

    ``summary`` is the description's first sentence; ``describe`` gives the whole text.
    """
    rows = []
    for name in names():
        scenario = get(name)
        summary = _entry(name)["description"].split(". ", 1)[0].rstrip(".") + "."
        rows.append(
            {
                "name": name,
                "members": len(scenario.members),
                "partitions": sum(t.partitions for t in scenario.topics),
                "summary": summary,
            }
        )
    return rows
