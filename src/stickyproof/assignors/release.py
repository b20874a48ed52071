"""``Release``: what differs between releases of Kafka's sticky assignors, as one frozen record.

The records themselves are in ``releases_sticky.py`` and ``releases_cooperative.py``; ``releases.py``
lists them (``RELEASES``), says how each was verified, and looks them up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from .base import COOPERATIVE, EAGER
from .ownership import OwnershipRule
from .sticky_types import PriorOwners, QuotaOrder, StickyInput, StickyResult
from .user_data import UserData

__all__ = ["Release", "ConstrainedBuilder", "GeneralBuilder", "QuotaOrder"]

ConstrainedBuilder = Callable[[StickyInput, PriorOwners, "Release"], StickyResult]
"""A constrained path: ``(inp, prior, release) -> StickyResult`` (R15-R25 or a historical builder)."""
GeneralBuilder = Callable[[StickyInput, PriorOwners, "Release"], StickyResult]
"""A general path: ``(inp, prior, release) -> StickyResult`` (a historical ``GeneralAssignmentBuilder``
or, before 2.6, the whole of ``AbstractStickyAssignor.assign``'s balancing)."""


@dataclass(frozen=True)
class Release:
    """One release of a Kafka sticky assignor, as far as its assignments can tell it apart.

    ``name``: the registry name (``sticky``, ``sticky@2.2``); ``kafka_name``: the protocol name a
    member announces in JoinGroup; ``version``: ``"current"`` or the Kafka release (``"2.2"``).
    ``cooperative``: ``CooperativeStickyAssignor``: withholds transferring partitions (R34) and
    supports the COOPERATIVE protocol (R36).
    ``user_data``: what a member sends and how the assignor reads it (R1, R2, §5.3-§5.4).
    ``ownership_rule``: who keeps which claim before assignment (R5-R11, §1.3).
    ``constrained_builder``: the constrained path (R12-R25), None for releases before 2.6
    (KAFKA-9987), which always took the general path.
    ``quota_order``: the order owned partitions count towards quotas on the constrained path (R16
    step 2; KAFKA-16277).
    ``kafka_15170``: the rack fixes of 3.7.1 / 3.8.0 in the constrained builder (R20, R25).
    ``references``: the KIPs and KAFKA issues that made this release behave as it does (§1.3).
    ``verified_against``: the jar this record was diffed against (``"kafka-clients 2.2.2"``, run as
    ``kafka-java:NAME@2.2.2``); ``verified_inputs``: on how many rebalances (Kafka cases, bundled
    scenarios, sampler groups, history rebalances: tests/releases_vs_jars.py, run by
    benchmarks/releases_vs_jars.py at its defaults); ``verified_agreeing``: on how many of them the
    record's result equals the jar's exactly. None and 0 when never diffed; each record's docstring
    says where and why it differs.
    ``general_builder``: the general path of that release, None for today's (``general.general_assign``).
    ``kafka_15106``: the ``isBalanced`` fix of 3.5.2 / 3.6.0 on the general path (R30): read by
    ``reference.general.general_assign_of_release``, the general builder of the 3.x records before it.
    ``kip_881``: rack-aware assignment (3.5.0 on, R48); without it ``build_sticky_input`` leaves rack
    mode off whatever the racks, on both paths.
    """

    name: str
    kafka_name: str
    version: str
    cooperative: bool
    user_data: UserData
    ownership_rule: OwnershipRule
    constrained_builder: Optional[ConstrainedBuilder]
    quota_order: QuotaOrder
    kafka_15170: bool
    references: tuple[str, ...]
    description: str
    verified_against: Optional[str] = None
    verified_inputs: int = 0
    verified_agreeing: int = 0
    general_builder: Optional[GeneralBuilder] = None
    kafka_15106: bool = True
    kip_881: bool = True

    @property
    def generation_in_user_data(self) -> bool:
        """The assignor knows a generation (KIP-341 V1 sticky user data; the 3.0 cooperative int32)."""
        return self.user_data.carries_generation

    @property
    def constrained_path(self) -> bool:
        """Equal subscriptions take a constrained path (2.6 on, KAFKA-9987)."""
        return self.constrained_builder is not None

    @property
    def protocols(self) -> tuple[str, ...]:
        """``supportedProtocols()``, highest first (R36)."""
        return (COOPERATIVE, EAGER) if self.cooperative else (EAGER,)
