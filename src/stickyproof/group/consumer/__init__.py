"""KIP-848's consumer group protocol, simulated: the group coordinator (group epoch, target assignment
per group epoch, member records, partition epochs, timeouts) and its members heartbeating
(docs/consumer-protocol.md).

    simulate_consumer_group(scenario, events, coordinator="current", assignor="uniform") -> ConsumerResult
    ConsumerSimulation(...)             the same machine, driven tick by tick
    COORDINATOR_RELEASES                today's coordinator and the releases before three fixes
    CONSUMER_MONITORS                   the rules checked at every step
    run_consumer_simulation(ref, ...)   what ``stickyproof simulate`` runs on a consumer-group scenario
    simulate_migration(scenario, events, policy="bidirectional") -> ConsumerResult
                                        a group moved between the classic and the consumer protocol
"""

from .coordinator import ConsumerCoordinator, HeartbeatRequest, HeartbeatResponse, Transition
from .events import (
    CONSUMER_EVENT_KINDS,
    ConsumerDocument,
    ConsumerEvent,
    ConsumerSchedule,
    consumer_document_from_dict,
    consumer_event_from_dict,
    consumer_events_from_doc,
)
from .monitors import CONSUMER_MONITORS, CONVERGENCE_BOUND
from .reconcile import MemberRecord, epoch_error, reconcile, update_partition_epochs
from .releases import COORDINATOR_RELEASES, CoordinatorRelease, coordinator_release
from .simulator import DEFAULT_ASSIGNOR, DEFAULT_COORDINATOR, ConsumerSimulation, simulate_consumer_group
from .migration import MIGRATION_MONITORS, MigrationSimulation, simulate_migration
from .migration_coordinator import MIGRATION_POLICIES, MigrationCoordinator
from .trace import ConsumerResult, ConsumerStep

__all__ = [
    "ConsumerCoordinator",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "Transition",
    "CONSUMER_EVENT_KINDS",
    "ConsumerDocument",
    "ConsumerEvent",
    "ConsumerSchedule",
    "consumer_document_from_dict",
    "consumer_event_from_dict",
    "consumer_events_from_doc",
    "CONSUMER_MONITORS",
    "CONVERGENCE_BOUND",
    "MemberRecord",
    "epoch_error",
    "reconcile",
    "update_partition_epochs",
    "COORDINATOR_RELEASES",
    "CoordinatorRelease",
    "coordinator_release",
    "DEFAULT_ASSIGNOR",
    "DEFAULT_COORDINATOR",
    "ConsumerSimulation",
    "simulate_consumer_group",
    "ConsumerResult",
    "ConsumerStep",
    "MIGRATION_MONITORS",
    "MIGRATION_POLICIES",
    "MigrationCoordinator",
    "MigrationSimulation",
    "simulate_migration",
]
