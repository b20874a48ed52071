"""The group protocol simulator: coordinator and member state machines, traces, monitors (models/protocol.md).

    simulate(scenario, events, without=..., assignor=...) -> SimulationResult
    Simulation(scenario, ...)        the same machine, driven tick by tick
    load_events(path), events_from_doc(doc), simulation_from_dict(doc)
    schedule_for(name)               the event schedule a named scenario carries
    run_history(history, assignor, engine="stepper"|"simulator") -> HistoryRun   (§9: drawn histories,
                                     one RebalanceRecord per leader step)
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
from .rebalances import RebalanceRecord, record_to_dict
from .simulator import Simulation, SimulationResult, simulate
from .stepper import ENGINES, HistoryRun, Stepper, run_history
from .trace import GroupView, MemberView, Step, MonitorVerdict, MonitorViolation

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
    "RebalanceRecord",
    "record_to_dict",
    "ENGINES",
    "HistoryRun",
    "Stepper",
    "run_history",
    "Simulation",
    "SimulationResult",
    "simulate",
    "GroupView",
    "MemberView",
    "Step",
    "MonitorVerdict",
    "MonitorViolation",
]
