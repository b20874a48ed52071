"""From a scenario reference to a finished simulation: what ``stickyproof simulate`` calls.

The scenario may name a bundled scenario (which carries its event schedule in the catalogue), a
scenario file, or a ``stickyproof.simulation/1`` document (scenario, events, switches together);
``-`` reads either document from standard input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ..errors import InvalidScenario
from ..model import parse_json, scenario_from_dict
from .config import check_features
from .events import SIMULATION_FORMAT, Schedule, check_horizon, events_from_doc, load_events, simulation_from_dict
from .simulator import SimulationResult, simulate

__all__ = ["schedule_for", "run_simulation", "resolve_simulation"]


def schedule_for(name: str) -> Schedule:
    """The event schedule a bundled scenario carries (empty when it has none)."""
    from ..scenarios import named

    return events_from_doc(named.events(name), f"catalogue.{name}.events")


def resolve_simulation(
    ref: str, events: str | None = None, without: Iterable[str] = (), assignor: str | None = None,
    document: Any = None,
):
    """(scenario, schedule, without, assignor, name) for ``ref`` and the command-line overrides;
    ``document``: standard input already read and parsed by the caller when ``ref`` is ``-``."""
    path = Path(ref)
    if ref == "-" or path.exists():
        if ref == "-":
            import sys

            doc = document if document is not None else parse_json(sys.stdin.buffer.read(), "standard input")
            path = Path("stdin")
        else:
            try:
                doc = parse_json(path.read_bytes(), ref)
            except OSError as exc:
                raise InvalidScenario("", f"{ref}: cannot read ({exc.strerror or exc})") from exc
        if isinstance(doc, dict) and doc.get("format") == SIMULATION_FORMAT:
            sim = simulation_from_dict(doc)
            scenario, schedule = sim.scenario, sim.schedule
            switched = set(sim.without)
            assignor = assignor or sim.assignor
            name = sim.name or scenario.name
        else:
            scenario = scenario_from_dict(doc)
            schedule, switched, name = Schedule(()), set(), scenario.name or path.stem
    else:
        from ..scenarios import named

        if ref not in named.names():
            raise InvalidScenario("", f"{ref}: no such file, and no bundled scenario of that name (see 'stickyproof scenarios list')")
        scenario, schedule, switched, name = named.get(ref), schedule_for(ref), set(), ref
    if events is not None:
        schedule = load_events(events, schedule.config)
    switched |= set(check_features(without))
    check_horizon(schedule, tuple(m.id for m in scenario.members))
    return scenario, schedule, frozenset(switched), assignor, name


def run_simulation(
    ref: str, events: str | None = None, without: Iterable[str] = (), assignor: str | None = None
) -> SimulationResult:
    """Resolve ``ref`` (and overrides) and run the simulation to its end."""
    scenario, schedule, switched, assignor, name = resolve_simulation(ref, events, without, assignor)
    return simulate(scenario, schedule, without=switched, assignor=assignor, name=name)
