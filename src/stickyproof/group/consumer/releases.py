"""``CoordinatorRelease``: the group coordinator's reconciliation as released, one frozen record per
behaviour the simulator can tell apart (docs/consumer-protocol.md, "Coordinator releases").

The coordinator's server-side assignors have their own records (``assignors.consumer.releases``);
these records describe what the coordinator does around them: which reconciliation state machine
runs, how partition epochs are kept, which partitions count as unreleased, and whether a member
may rejoin at epoch 0. Each pre-fix release names the fix it lacks; the later fixes it also lacks
follow from the dates (KAFKA-16147 merged January 2024, first released in 3.8.0; KAFKA-19449's
PR #20781 merged October 2025; KAFKA-19233's PR #21305 merged January 2026; KAFKA-20272's PR #21662
(March 2026) and KAFKA-20640's PR #22457 (June 2026), which only a migration history can tell apart,
are both in Kafka 4.4.0's coordinator; so is KAFKA-20268's PR #21700, March 2026, which starts a
new group at epoch 1: the older releases' groups start at 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InvalidOption

__all__ = ["CoordinatorRelease", "COORDINATOR_RELEASES", "EARLY_ACCESS", "REVISED", "coordinator_release"]

#: The reconciliation state machine of KIP-848's early access (Kafka 3.7: REVOKING, ASSIGNING,
#: STABLE, with a target member epoch), before KAFKA-16249 (PR #15364, Kafka 3.8) replaced it.
EARLY_ACCESS = "early-access"
#: KAFKA-16249's state machine (STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS, UNKNOWN).
REVISED = "revised"


@dataclass(frozen=True)
class CoordinatorRelease:
    """One coordinator release, as far as reconciliation can tell it apart.

    ``state_machine``: ``EARLY_ACCESS`` or ``REVISED`` (``CurrentAssignmentBuilder``);
    ``kafka_16147_fixed``: partition epochs are replaced whole on every member update (remove the old
    member's, add the new one's), so a partition moving from pending revocation back to assigned keeps
    its epoch; before, the two sets were updated one after the other and the second removal erased
    the epoch the first had just written (``ConsumerGroup.maybeUpdatePartitionEpoch``);
    ``kafka_19449_fixed``: a partition the member itself has pending revocation does not count as
    unreleased; ``kafka_19233_fixed``: a heartbeat with member epoch 0 from a member the coordinator
    still holds is accepted (``throwIfConsumerGroupMemberEpochIsInvalid`` returns early);
    ``kafka_20640_fixed``: under ``group.consumer.migration.policy=disabled`` a classic member's
    JoinGroup to a consumer group, new or rejoining, is refused (before, it was admitted and the group
    stayed mixed for good); ``kafka_20272_fixed``: a classic member in a consumer group is told to
    rejoin (REBALANCE_IN_PROGRESS on its Heartbeat or SyncGroup) when its epoch is behind the target
    assignment epoch, not the group epoch; ``kafka_20268_fixed``: a new group starts at group epoch 1
    with target assignment epoch 1 (an empty target), so the first member's join bumps it to 2 and
    the first computed target is epoch 2 (``ModernGroup``'s constructor; before, both started at 0).
    """

    name: str
    state_machine: str
    kafka_16147_fixed: bool
    kafka_19449_fixed: bool
    kafka_19233_fixed: bool
    references: tuple[str, ...]
    description: str
    kafka_20640_fixed: bool = False
    kafka_20272_fixed: bool = False
    kafka_20268_fixed: bool = False


COORDINATOR_RELEASES: tuple[CoordinatorRelease, ...] = (
    CoordinatorRelease(
        "current", REVISED, True, True, True,
        ("KIP-848", "KAFKA-16249", "KAFKA-16147", "KAFKA-19449", "KAFKA-19233", "KAFKA-20272", "KAFKA-20640",
         "KAFKA-20268"),
        "today's coordinator: KAFKA-16249's state machine with the fixes of KAFKA-16147, KAFKA-19449 and KAFKA-19233 "
        "(and, for online migration, KAFKA-20272 and KAFKA-20640, as in Kafka 4.4.0); a new group starts at epoch 1 "
        "(KAFKA-20268); every target computed at the bump, as a 4.4 broker does with KIP-1263's batching and offload "
        "off (group.consumer.assignment.interval.ms=0, group.consumer.assignor.offload.enable=false; on by default, "
        "not modelled)",
        kafka_20640_fixed=True, kafka_20272_fixed=True, kafka_20268_fixed=True,
    ),
    CoordinatorRelease(
        "before-kafka-19233", REVISED, True, True, False, ("KIP-848", "KAFKA-19233"),
        "the coordinator before PR #21305: a member the coordinator still holds, rejoining with member epoch 0 after "
        "being fenced, is fenced again unless 0 is its previous epoch, until its session times out",
    ),
    CoordinatorRelease(
        "before-kafka-19449", REVISED, True, False, False, ("KIP-848", "KAFKA-19449", "KAFKA-19233"),
        "the coordinator from 3.8 to PR #20781: a partition of the member's own pending revocation counts as held by "
        "another member, so the member waits one heartbeat in UNRELEASED_PARTITIONS for itself",
    ),
    CoordinatorRelease(
        "3.7", EARLY_ACCESS, False, False, False, ("KIP-848", "KAFKA-16147"),
        "Kafka 3.7's early-access coordinator: REVOKING/ASSIGNING state machine, and partition epochs updated set by "
        "set, so a partition pending revocation that the new target gives back to the same member loses its epoch "
        "and can be handed to a second member",
    ),
)

_BY_NAME = {r.name: r for r in COORDINATOR_RELEASES}


def coordinator_release(name: str, flag: str = "--coordinator") -> CoordinatorRelease:
    """The release called ``name``; ``InvalidOption`` naming ``flag`` and the known names otherwise."""
    release = _BY_NAME.get(name)
    if release is None:
        raise InvalidOption(flag, f"unknown coordinator release {name!r} (known: {', '.join(_BY_NAME)})")
    return release
