"""What an assignor receives and returns.

``GroupSubscription`` is the group as a Kafka leader holds it after decoding every member's
JoinGroup metadata (docs/rules.md §0.3): for each member, only what its subscription bytes
yielded at its version. ``leader.py`` builds it from the wire; ``--direct`` builds it from the
scenario's stated fields. An assignor is any callable ``GroupSubscription -> Assignment``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..model import Assignment, Topic, TopicPartition

__all__ = ["Subscription", "GroupSubscription", "AssignorFn", "EAGER", "COOPERATIVE"]

EAGER = "eager"
COOPERATIVE = "cooperative"


@dataclass(frozen=True)
class Subscription:
    """One member's decoded ``ConsumerPartitionAssignor.Subscription``.

    ``generation`` is ``None`` when absent: a v0/v1 subscription, or a v2+ one carrying a
    negative value (R3). ``owned`` is the wire ``ownedPartitions`` (empty for v0, and under EAGER,
    R37). ``user_data`` is this assignor's user data bytes as sent (``None`` = null). ``raw`` is the
    member's whole ``ConsumerProtocolSubscription`` as the leader received it (None in direct mode):
    an assignor in another process that decodes subscriptions itself is handed these bytes
    (models/assignor-protocol.md §3), so its own decoder is exercised.
    """

    member_id: str
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    rack: str | None = None
    instance_id: str | None = None
    version: int = 3
    raw: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class GroupSubscription:
    """The leader's input to an assignor.

    ``metadata`` is the leader's cluster metadata (every topic it knows, with partition counts
    and replica racks). ``members`` is in JoinGroup-response order, the order in which Kafka's
    leader inserts them into its ``HashMap`` (N1). ``protocol`` is the rebalance protocol in
    force (R36). ``direct`` is True when the subscriptions were built from the scenario's own
    ``owned``/``generation`` without the wire: the sticky assignors then take claims and
    generation from the subscription fields instead of decoding user data (R1/R2 bypassed).
    ``leader``: the member id of the leader running the assignor (a simulation's elected leader;
    for one scenario, which names none, its first member), None when the caller named none. Kafka's
    own assignors never look at it; a client's leader code around its assignor may (an adapter
    reproducing it needs to know whose view is the leader's).
    """

    metadata: Mapping[str, Topic]
    members: tuple[Subscription, ...]
    protocol: str = EAGER
    direct: bool = False
    leader: str | None = None

    def subscription(self, member_id: str) -> Subscription:
        for s in self.members:
            if s.member_id == member_id:
                return s
        raise KeyError(member_id)


AssignorFn = Callable[[GroupSubscription], Assignment]
