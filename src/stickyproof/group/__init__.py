"""The group protocol simulator: coordinator and member state machines, traces, monitors (models/protocol.md).

    simulate(scenario, events, without=..., assignor=...) -> SimulationResult
    Simulation(scenario, ...)        the same machine, driven tick by tick
    load_events(path), events_from_doc(doc), simulation_from_dict(doc)
    schedule_for(name)               the event schedule a named scenario carries
"""

from .config import FEATURES, GroupConfig, MemberConfig
from .events import (
    EVENT_KINDS,
    Event,
    Schedule,
    SimulationDocument,
    event_from_dict,
    event_to_dict,
    events_from_doc,
    load_events,
    simulation_from_dict,
    simulation_to_dict,
)
from .monitors import MONITORS
from .simulator import Simulation, SimulationResult, simulate
from .trace import GroupView, MemberView, Step, Verdict, Violation

__all__ = [
    "FEATURES",
    "GroupConfig",
    "MemberConfig",
    "EVENT_KINDS",
    "Event",
    "Schedule",
    "SimulationDocument",
    "event_from_dict",
    "event_to_dict",
    "events_from_doc",
    "load_events",
    "simulation_from_dict",
    "simulation_to_dict",
    "MONITORS",
    "Simulation",
    "SimulationResult",
    "simulate",
    "GroupView",
    "MemberView",
    "Step",
    "Verdict",
    "Violation",
]
