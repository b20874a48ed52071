"""Kafka's sticky assignors release by release: one frozen ``Release`` record per behaviour stickyproof reproduces.

Each record says everything that differs between releases of ``StickyAssignor`` (``sticky``) and
``CooperativeStickyAssignor`` (``cooperative-sticky``) as far as an assignment can show it
(KAFKA_SEMANTICS.md §1.3): the user-data layout (``user_data.py``), whether a generation is known
at all, the ownership rule (``ownership.py``), whether there is a constrained path and which
builder runs it (``constrained.py``, ``reference/constrained_2_6.py``), the order in which owned
partitions count towards quotas (R16, KAFKA-16277), the rack fixes of KAFKA-15170. The sticky core
(``sticky.py``) reads these fields and nothing else: no code anywhere tests a release's name or
version. The general path is today's for every record (the records model the ownership rules, the
user data and the constrained builders, not the old general algorithms). The registry builds one
row per record, in ``RELEASES`` order.

The current records model the source KAFKA_SEMANTICS.md was written from: apache/kafka trunk
1eb7644349cb (between 3.9 and 4.0).

How do I add Kafka 3.9's behaviour? (or any other release)
-----------------------------------------------------------
1. Find what changed in the sticky assignors between the nearest modelled release and yours::

       git diff -w <nearest-tag> <your-tag> -- clients/src/main/java/org/apache/kafka/clients/consumer/{StickyAssignor,CooperativeStickyAssignor}.java \\
           clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractStickyAssignor.java

   For 3.9 the answer is: nothing. ``git diff -w 3.8.0 1eb7644349cb`` over those three files shows
   import order and style only, and 3.9.0-rc3's files equal 1eb7644349cb's: Kafka 3.9 behaves as
   ``sticky`` / ``cooperative-sticky`` (the current records), and there is no record to add.
2. Otherwise write one ``Release`` record below and add it to ``RELEASES``: name
   ``<kafka_name>@<version>``, each field chosen from the values the other records use. If the
   release did something no existing value expresses, write that one rule next to its siblings,
   named after the release, and point the record at it: a resolver and an ``OwnershipRule`` in
   ``ownership.py``; a builder ``(inp, prior, release) -> StickyResult`` in ``reference/``; a
   ``UserData`` layout in ``user_data.py``; or a new boolean field here that both constrained
   engines read (as ``kafka_15170`` is).
3. Write its regression file, ``tests/regressions/<name>-<what-it-does>.json`` (format:
   tests/regressions/README.md): a group on which it behaves differently from its neighbour
   release, with the mechanism in a sentence. Add the name to ``BUILTINS`` in
   tests/test_registry.py (that test pins the listed order).

The registry (``get_assignor``, ``stickyproof assignors``), the leader's user data and member
data, the simulator and the sweep all read the record; nothing else needs editing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..errors import UnknownAssignor
from .base import COOPERATIVE, EAGER
from .constrained import constrained_assign
from .ownership import (
    HIGHEST_GENERATION_ONLY,
    PER_PARTITION,
    PER_PARTITION_3_5_1,
    TREEMAP_BY_GENERATION,
    TRUST_EVERY_CLAIM,
    OwnershipRule,
)
from .reference.constrained_2_6 import constrained_assign_2_6
from .sticky_types import PriorOwners, QuotaOrder, StickyInput, StickyResult
from .user_data import COOPERATIVE_GENERATION, NO_USER_DATA, STICKY_V0, STICKY_V1, UserData

__all__ = [
    "Release",
    "ConstrainedBuilder",
    "QuotaOrder",
    "RELEASES",
    "STICKY",
    "STICKY_2_2",
    "STICKY_2_6",
    "COOPERATIVE_STICKY",
    "COOPERATIVE_STICKY_2_4",
    "COOPERATIVE_STICKY_2_6",
    "COOPERATIVE_STICKY_3_5_1",
    "get_release",
    "find_release",
    "releases_of",
]

ConstrainedBuilder = Callable[[StickyInput, PriorOwners, "Release"], StickyResult]
"""A constrained path: ``(inp, prior, release) -> StickyResult`` (R15-R25 or a historical builder)."""


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


# ------------------------------------------------------------------------------------------
# StickyAssignor

STICKY = Release(
    name="sticky",
    kafka_name="sticky",
    version="current",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=PER_PARTITION,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.PARTITION_THEN_TOPIC,
    kafka_15170=True,
    references=("KIP-54", "KIP-341", "KAFKA-9987", "KAFKA-12984", "KIP-881", "KAFKA-14639", "KAFKA-15106",
                "KAFKA-16277", "KAFKA-15170"),
    description="StickyAssignor (current): balanced, keeps previous assignments carried in its user data",
)

STICKY_2_2 = Release(
    name="sticky@2.2",
    kafka_name="sticky",
    version="2.2",
    cooperative=False,
    user_data=STICKY_V0,
    ownership_rule=TRUST_EVERY_CLAIM,
    constrained_builder=None,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-54", "KAFKA-7026"),
    description="StickyAssignor as released in 2.2: V0 user data, no generation (before KIP-341)",
)

STICKY_2_6 = Release(
    name="sticky@2.6",
    kafka_name="sticky",
    version="2.6",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=HIGHEST_GENERATION_ONLY,
    constrained_builder=constrained_assign_2_6,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-341", "KAFKA-9987"),
    description="StickyAssignor as released in 2.6: constrained fast path, highest-generation-only claims",
)

# ------------------------------------------------------------------------------------------
# CooperativeStickyAssignor

COOPERATIVE_STICKY = Release(
    name="cooperative-sticky",
    kafka_name="cooperative-sticky",
    version="current",
    cooperative=True,
    user_data=COOPERATIVE_GENERATION,
    ownership_rule=PER_PARTITION,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.PARTITION_THEN_TOPIC,
    kafka_15170=True,
    references=("KIP-429", "KAFKA-9987", "KAFKA-12984", "KIP-792", "KAFKA-13715", "KIP-881", "KAFKA-14639",
                "KAFKA-15106", "KAFKA-16277", "KAFKA-15170"),
    description="CooperativeStickyAssignor (current): sticky, then withholds partitions changing owner until the next round",
)

COOPERATIVE_STICKY_2_4 = Release(
    name="cooperative-sticky@2.4",
    kafka_name="cooperative-sticky",
    version="2.4",
    cooperative=True,
    user_data=NO_USER_DATA,
    ownership_rule=TREEMAP_BY_GENERATION,
    constrained_builder=None,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-429",),
    description="CooperativeStickyAssignor as released in 2.4 (KIP-429): no generation, every owned claim honoured",
)

COOPERATIVE_STICKY_2_6 = Release(
    name="cooperative-sticky@2.6",
    kafka_name="cooperative-sticky",
    version="2.6",
    cooperative=True,
    user_data=NO_USER_DATA,
    ownership_rule=HIGHEST_GENERATION_ONLY,
    constrained_builder=constrained_assign_2_6,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-429", "KAFKA-9987"),
    description="CooperativeStickyAssignor as released in 2.6: constrained fast path, no generation in user data",
)

COOPERATIVE_STICKY_3_5_1 = Release(
    name="cooperative-sticky@3.5.1",
    kafka_name="cooperative-sticky",
    version="3.5.1",
    cooperative=True,
    user_data=COOPERATIVE_GENERATION,
    ownership_rule=PER_PARTITION_3_5_1,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KAFKA-12984", "KIP-792", "KAFKA-13715", "KIP-881", "KAFKA-14639", "KAFKA-15106"),
    description="CooperativeStickyAssignor as released in 3.5.1: per-partition generation resolution, with its "
    "owner-map bug (a partition could be kept by two members; fixed in 3.5.2, KAFKA-15106)",
)

RELEASES: tuple[Release, ...] = (
    STICKY,
    STICKY_2_2,
    STICKY_2_6,
    COOPERATIVE_STICKY,
    COOPERATIVE_STICKY_2_4,
    COOPERATIVE_STICKY_2_6,
    COOPERATIVE_STICKY_3_5_1,
)
"""Every modelled release, in the registry's order (each assignor's current release first)."""

_BY_NAME: dict[str, Release] = {r.name: r for r in RELEASES}
_BY_PROTOCOL: dict[tuple[str, str], Release] = {(r.kafka_name, r.version): r for r in RELEASES}


def get_release(name: str) -> Release:
    """The release with registry name ``name`` (``sticky``, ``cooperative-sticky@2.4``)."""
    release = _BY_NAME.get(name)
    if release is None:
        raise UnknownAssignor(f"no sticky release named {name!r} (known: {', '.join(_BY_NAME)})")
    return release


def releases_of(kafka_name: str) -> tuple[Release, ...]:
    """The modelled releases of the assignor a member announces as ``kafka_name``, current first."""
    return tuple(r for r in RELEASES if r.kafka_name == kafka_name)


def find_release(kafka_name: str, version: str = "current") -> Release:
    """The release of protocol ``kafka_name`` as of ``version`` (``"current"`` or e.g. ``"2.6"``)."""
    release = _BY_PROTOCOL.get((kafka_name, version))
    if release is None:
        known = ", ".join(r.version for r in releases_of(kafka_name))
        raise UnknownAssignor(
            f"unknown variant {version!r} of {kafka_name} (known: {known})"
            if known
            else f"{kafka_name!r} is not a sticky assignor (known: {', '.join(sorted({r.kafka_name for r in RELEASES}))})"
        )
    return release
