"""``AssignorInfo``: the one interface every assignor is graded through, built-in or not.

Everything that runs an assignor (the leader, the simulator, the graders) holds one of these: the
callable and what the leader needs besides its answer. The built-ins' rows are in ``registry``;
an adapter to another client's assignor builds one, usually through
``registry.led_as``; ``stickyproof.lookup`` is the one place a name becomes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..model import Assignment, Member, Scenario
from .base import AssignorFn
from .sticky_types import MemberData
from .user_data import no_user_data, wire_member_data

if TYPE_CHECKING:
    from .releases import Release

__all__ = ["AssignorInfo", "OUT_OF_PROCESS_CALL_SECONDS"]

OUT_OF_PROCESS_CALL_SECONDS = 120.0
"""The bound on one call of an assignor in another process when the caller sets none
(``Limits.assignor_seconds`` None): a child that never answers must not hang a grade, a hunt or a
sweep, so an out-of-process call is always bounded. stickyproof's own assignors are not."""


@dataclass(frozen=True)
class AssignorInfo:
    """One assignor as the registry knows it.

    ``name``: the registry name (``sticky@2.2``, ``mypkg.mod:fn``); ``kafka_name``: the protocol name
    on the wire; ``variant``: ``"current"``, a Kafka release (``"2.2"``) or ``"user"``;
    ``protocols``: the rebalance protocols it supports, highest first (R36).
    ``release``: the sticky release record the row was built from (None for the others).
    ``user_data(member)``: the user data a member in that state sends (``subscriptionUserData``).
    ``member_data(subscription, direct=False)``: the claims and generation the assignor attributes
    to a decoded member (``memberData``, R1-R4; the wire fields for assignors without user data).
    ``claims_from_user_data``: its claims travel in its user data, not in ``ownedPartitions`` (R1).
    ``contract``: the balance it promises, by name (models/invariants.md §5: ``per-topic`` for range,
    ``uniform-if-equal`` for round robin, ``kafka`` for the sticky family and, unless declared, for
    any other assignor); a failure is a broken promise.
    ``consumer_group``: for a server-side (KIP-848) assignor, the call that assigns a consumer-group
    scenario (``group_protocol`` ``consumer``): the coordinator's input, not a leader's. Such a row
    has no classic protocols and its ``fn`` refuses a classic group. None for classic assignors.
    ``display``: the name the assignor's program gives itself (an ``exec:`` child's hello ``name``)
    when it differs from ``name``, else ``""``: reports show it beside ``name``, which stays the
    string that reproduces the run.
    """

    name: str
    kafka_name: str
    variant: str
    protocols: tuple[str, ...]
    fn: AssignorFn
    description: str
    user: bool = False
    release: Release | None = None
    user_data: Callable[[Member], bytes | None] = no_user_data
    member_data: Callable[..., MemberData] = wire_member_data
    claims_from_user_data: bool = False
    contract: str = "kafka"
    consumer_group: Callable[[Scenario], Assignment] | None = None
    display: str = ""

    @property
    def is_cooperative_sticky(self) -> bool:
        """The assignor ``ConsumerCoordinator`` exempts from ``validateCooperativeAssignment`` (R39)."""
        return not self.user and self.kafka_name == "cooperative-sticky"
