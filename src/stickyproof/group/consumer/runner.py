"""From a reference to a finished consumer-group simulation: what ``stickyproof simulate`` runs when
the scenario's ``group_protocol`` is ``consumer``.

The reference is a ``stickyproof.simulation/1`` document, a scenario file, standard input (``-``,
read once by the caller and passed as ``document``) or a bundled scenario's name; a classic group is
none of this module's business (``consumer_simulation_for`` answers None and the classic runner
takes it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ...errors import InvalidScenario
from ...model import parse_json
from ..events import SIMULATION_FORMAT
from .events import ConsumerDocument, ConsumerSchedule, consumer_document_from_dict, consumer_events_from_doc, \
    consumer_scenario_from_dict
from .releases import coordinator_release
from .simulator import DEFAULT_ASSIGNOR, DEFAULT_COORDINATOR, consumer_assignor, simulate_consumer_group
from .trace import ConsumerResult

__all__ = ["consumer_simulation_for", "run_consumer_simulation", "is_consumer_document"]


def is_consumer_document(doc: Any) -> bool:
    """A scenario, or a simulation document's scenario, with ``"group_protocol": "consumer"``."""
    if not isinstance(doc, Mapping):
        return False
    scenario = doc.get("scenario") if doc.get("format") == SIMULATION_FORMAT else doc
    return isinstance(scenario, Mapping) and scenario.get("group_protocol") == "consumer"


def consumer_simulation_for(ref: str, document: Any = None) -> ConsumerDocument | None:
    """The consumer-group simulation ``ref`` names, or None when it names a classic group.
    ``document``: the already-parsed content of standard input when ``ref`` is ``-``."""
    path = Path(ref)
    if ref == "-" or path.exists():
        if ref == "-":
            doc = document
        else:
            try:
                doc = parse_json(path.read_bytes(), ref)
            except OSError as exc:
                raise InvalidScenario("", f"{ref}: cannot read ({exc.strerror or exc})") from exc
        from .migration import is_migration_document

        if is_migration_document(doc):
            return consumer_document_from_dict(doc, migration=True)
        if not is_consumer_document(doc):
            return None
        if doc.get("format") == SIMULATION_FORMAT:
            return consumer_document_from_dict(doc)
        scenario = consumer_scenario_from_dict(doc, "")
        return ConsumerDocument(scenario, ConsumerSchedule(), name=scenario.name or ("stdin" if ref == "-" else path.stem))
    from ...scenarios import named

    if ref not in named.names():
        return None  # the classic runner says the name is unknown
    scenario = named.get(ref)
    if not scenario.is_consumer_group:
        return None
    schedule = consumer_events_from_doc(named.events(ref), f"catalogue.{ref}.events")
    return ConsumerDocument(scenario, schedule, name=ref)


def run_consumer_simulation(sim: ConsumerDocument, *, events: str | None = None, coordinator: str | None = None,
                            assignor: str | None = None) -> ConsumerResult:
    """Run ``sim``; ``events`` (an events file) replaces its schedule; ``coordinator`` and ``assignor``
    (the command line's) override the document's, which override the defaults."""
    schedule = sim.schedule
    if events is not None:
        try:
            data = Path(events).read_bytes()
        except OSError as exc:
            raise InvalidScenario("", f"{events}: cannot read ({exc.strerror or exc})") from exc
        schedule = consumer_events_from_doc(parse_json(data, events), "events", schedule.config, migration=sim.migration)
    if coordinator is not None:
        release = coordinator_release(coordinator, "--coordinator")
    else:
        release = coordinator_release(sim.coordinator or DEFAULT_COORDINATOR, "coordinator")
    if assignor is None and sim.assignor is not None:
        consumer_assignor(sim.assignor, "assignor")  # a bad name in the document is named as its field
    if sim.migration:
        from .migration import check_migration_release, check_policy, simulate_migration

        check_migration_release(release, "--coordinator" if coordinator is not None else "coordinator")
        return simulate_migration(sim.scenario, schedule.events, config=schedule.config, coordinator=release,
                                  assignor=assignor or sim.assignor or DEFAULT_ASSIGNOR, name=sim.name,
                                  policy=check_policy(sim.migration_policy or "bidirectional", "migration_policy"))
    return simulate_consumer_group(sim.scenario, schedule.events, config=schedule.config, coordinator=release,
                                   assignor=assignor or sim.assignor or DEFAULT_ASSIGNOR, name=sim.name)
