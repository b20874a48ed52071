"""Kafka's sticky assignors release by release: one frozen ``Release`` record per behaviour stickyproof reproduces.

Each record says everything that differs between releases of ``StickyAssignor`` (``sticky``) and
``CooperativeStickyAssignor`` (``cooperative-sticky``) as far as an assignment can show it
(docs/rules.md §1.3): the user-data layout (``user_data.py``), whether a generation is known
at all, the ownership rule (``ownership.py``), whether there is a constrained path and which
builder runs it (``constrained.py``, ``reference/constrained_2_6.py``), which general path runs
(``general_builder``: the 2.2, 2.3 and 2.4 records name their releases' algorithm,
``reference/general_2_2.py``; the 2.6 and 2.8.1 records 2.6's, ``reference/general_2_6.py``; the
3.x records before 3.5.2 today's transcription with ``isBalanced`` as before KAFKA-15106,
``reference/general.py``; the others today's), the order in which owned partitions count towards
quotas (R16, KAFKA-16277), the rack fixes of KAFKA-15170, whether racks are read at all (KIP-881).
The sticky core (``sticky.py``) reads these fields and nothing else:
no code anywhere tests a release's name or version. The registry builds one row per record, in
``RELEASES`` order.

The current records model the source docs/rules.md was read from: apache/kafka trunk
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

Which release lines each record stands for, measured
----------------------------------------------------
Each record is diffed against the kafka-clients jar it names (``verified_against``; its docstring
says where and why it differs). ``benchmarks/releases_vs_jars.py --releases NAME --against
VERSION...`` diffs a record against other jars on the same ~400 inputs (each jar led as the record:
the same bytes, the record's user data); exact agreement, measured 2026-11-27:

* ``sticky`` and ``cooperative-sticky``: 431/431 and 399/399 with 3.7.2, 3.8.1, 3.9.1, 4.0.1, 4.1.1
  and 4.4.0; 388 and 372 with 3.5.2 and 3.6.2; 355 and 346 with 3.4.1; 299 and 318 with 3.0.2 to
  3.3.2; 205 and 251-258 with 2.7.2 and 2.8.2. So 3.7 on behave as the current records, and the
  3.x lines before have the records below, and 2.5-2.8 the 2.6 and 2.8.1 records.
* ``sticky@2.2``: 424/424 with 2.0.1, 2.1.1 and 2.2.2 alike; 116 with 2.3.1 and 2.4.1.
* ``sticky@2.3``: 424/424 with 2.3.1 and 2.4.1; 123 with 2.2.2, 150 with 2.5.1.
* ``sticky@2.4``: 424/424 with 2.4.1; 423 with 2.3.1 (its regression file), 151 with 2.5.1.
* ``sticky@2.6``: 424/424 with 2.5.1, 2.6.3, 2.7.2 and 2.8.0 alike; 403 with 2.8.1 and 2.8.2.
* ``sticky@2.8.1``: 424/424 with 2.8.1 and 2.8.2; 402 with 2.5.1, 2.6.3, 2.7.2 and 2.8.0.
* ``cooperative-sticky@2.4``: 392/392 with 2.4.1; 256 with 2.5.1.
* ``cooperative-sticky@2.6``: 392/392 with 2.5.1, 2.6.3, 2.7.2 and 2.8.0 alike; 351 with 2.8.1 and 2.8.2.
* ``cooperative-sticky@2.8.1``: 392/392 with 2.8.1 and 2.8.2; 337 with 2.5.1, 2.6.3, 2.7.2 and 2.8.0.
* ``sticky@3.3`` and ``cooperative-sticky@3.3``: 424/424 and 392/392 with 3.0.2, 3.1.2, 3.2.3, 3.3.2
  and 3.4.0.
* ``sticky@3.4`` and ``cooperative-sticky@3.4``: 424/424 and 392/392 with 3.4.1 (KAFKA-14639 backported).
* ``sticky@3.5.1``: 424/424 with 3.5.0 and 3.5.1. ``cooperative-sticky@3.5.1``: 395/395 with 3.5.0
  and 3.5.1; 387 with 3.5.2 (KAFKA-15106 fixed).
* ``sticky@3.6`` and ``cooperative-sticky@3.6``: 424/424 and 392/392 with 3.5.2, 3.6.2 and 3.7.0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..errors import UnknownAssignor
from .base import COOPERATIVE, EAGER
from .constrained import constrained_assign
from .ownership import (
    HIGHEST_GENERATION_2_8,
    HIGHEST_GENERATION_3_0,
    HIGHEST_GENERATION_ONLY,
    PER_PARTITION,
    PER_PARTITION_3_5_1,
    TREEMAP_BY_GENERATION,
    TRUST_EVERY_CLAIM,
    OwnershipRule,
)
from .reference.constrained_2_6 import constrained_assign_2_6, constrained_assign_2_8
from .reference.general_2_2 import general_assign_2_2, general_assign_2_3, general_assign_2_4
from .reference.general import general_assign_of_release
from .reference.general_2_6 import general_assign_2_6
from .sticky_types import PriorOwners, QuotaOrder, StickyInput, StickyResult
from .user_data import (
    COOPERATIVE_GENERATION,
    COOPERATIVE_GENERATION_2_8,
    COOPERATIVE_GENERATION_3_0,
    NO_USER_DATA,
    STICKY_V0,
    STICKY_V1,
    UserData,
)

__all__ = [
    "Release",
    "ConstrainedBuilder",
    "GeneralBuilder",
    "QuotaOrder",
    "RELEASES",
    "STICKY",
    "STICKY_2_2",
    "STICKY_2_3",
    "STICKY_2_4",
    "STICKY_2_6",
    "STICKY_2_8",
    "COOPERATIVE_STICKY",
    "COOPERATIVE_STICKY_2_4",
    "COOPERATIVE_STICKY_2_6",
    "COOPERATIVE_STICKY_2_8",
    "COOPERATIVE_STICKY_3_5_1",
    "get_release",
    "find_release",
    "releases_of",
    "STICKY_3_3",
    "STICKY_3_4",
    "STICKY_3_5_1",
    "STICKY_3_6",
    "COOPERATIVE_STICKY_3_3",
    "COOPERATIVE_STICKY_3_4",
    "COOPERATIVE_STICKY_3_6",
]

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
    verified_against="kafka-clients 4.4.0",
    verified_inputs=431,
    verified_agreeing=431,
)
"""Equal to kafka-clients 4.4.0 (the version peers/versions.lock pins) on all 431 inputs: its 8
regression files, 119 Kafka cases, 4 bundled scenarios, 150 sampler groups and 150 history
rebalances; tests/test_peers_native.py holds the same against every Kafka case and 300 sampler
groups in CI."""

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
    verified_against="kafka-clients 2.2.2",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_2_2,
)
"""Equal to kafka-clients 2.2.2 on all 424 inputs (its regression file, 119 Kafka cases, 4 bundled
scenarios, 150 sampler groups, 150 history rebalances), and so to 2.0.1 and 2.1.1, which answer
alike. 2.2 had no constrained path: ``general_builder`` is its ``StickyAssignor.assign``
(``reference/general_2_2.py``), which collects the claims itself, trusting every one (the
ownership rule says the same to the rest of the tool). The incident it exists for, KAFKA-7026,
is 2.2's: on its regression file (sticky-2.2-stalled-member-keeps-reassigned-partitions) A and B
both keep t-0 and t-1, and the balancing moves B's copy of t-0 to A: A [t-0, t-1, t-0],
B [t-1, t-2, t-3], from the jar as from the record. It also throws where 2.2 did: a
``NullPointerException`` when a member subscribes to a topic the metadata lacks."""

STICKY_2_3 = Release(
    name="sticky@2.3",
    kafka_name="sticky",
    version="2.3",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=TREEMAP_BY_GENERATION,
    constrained_builder=None,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-54", "KIP-341"),
    description="StickyAssignor as released in 2.3 (KIP-341): V1 user data, claims resolved per partition by "
    "generation, a partition handed back to its previous owner first",
    verified_against="kafka-clients 2.3.1",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_2_3,
)
"""Equal to kafka-clients 2.3.1 on all 424 inputs (its regression file, 119 Kafka cases, 4 bundled
scenarios, 150 sampler groups, 150 history rebalances). KIP-341 is what sets it apart from 2.2:
V1 user data carries the generation, ``prepopulateCurrentAssignments`` resolves each partition by
a ``TreeMap`` of its claimants' generations (the ownership rule ``TREEMAP_BY_GENERATION``) and
remembers the runner-up as ``prevAssignment``, and the balancing hands a partition back to that
previous owner first (``reference/general_2_2.py``, era 2.3). On its regression file
(sticky-2.3-previous-owner-gets-its-partitions-back, the KAFKA-7026 group) 2.3.1 and the record
give A [t-0, t-1] and B [t-2, t-3]; 2.2.2 keeps both copies. The eager ``StickyAssignor`` of 2.4.1
answers as this record on all 424 inputs too; its first balancing pass over newly assigned
partitions shows on rarer groups (``sticky@2.4``)."""

STICKY_2_4 = Release(
    name="sticky@2.4",
    kafka_name="sticky",
    version="2.4",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=TREEMAP_BY_GENERATION,
    constrained_builder=None,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-341", "KIP-429"),
    description="StickyAssignor as released in 2.4: 2.3's algorithm, newly assigned partitions balanced first",
    verified_against="kafka-clients 2.4.1",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_2_4,
)
"""Equal to kafka-clients 2.4.1 on all 424 inputs (its regression file, 119 Kafka cases, 4 bundled
scenarios, 150 sampler groups, 150 history rebalances). The eager assignor of 2.4 runs the same
``AbstractStickyAssignor.assign`` as ``cooperative-sticky@2.4`` (``reference/general_2_2.py``, era
2.4) on 2.3's V1 user data: when no member has to revoke a partition for a subscription change,
it balances with the partitions assigned in this round before all of them. That sets it apart
from 2.3.1 on its regression file only (sticky-2.4-newly-assigned-partitions-balanced-first: c
keeps t1-0, which 2.3.1 moves to d), of these 424 inputs."""

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
    verified_against="kafka-clients 2.6.3",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_2_6,
)
"""Equal to kafka-clients 2.6.3 on all 424 inputs (its regression file, 119 Kafka cases, 4 bundled
scenarios, 150 sampler groups, 150 history rebalances). Both paths are 2.6's: the constrained one
(``constrained_assign_2_6``; its regression sticky-2.6-nonexistent-partition-claim-handed-out replays
with the jar) and the general one (``reference/general_2_6.py``), including what 2.6 did by accident:
the general path reads each member's user data a second time, and the members
``allSubscriptionsEqual`` had read before it met a differing subscription come back with nothing
(the ``ByteBuffer`` was parsed in place; ``STICKY_V1.read_again``). In Kafka case
sticky-assignment-with-conflicting-previous-generations-unequal that is consumer3 (first in map
order): its generation-2 claims on topic-2, topic-3 and topic3 vanish, and 2.6.3 answers consumer1
topic [2, 3, 0], consumer2 topic2 [2, 1, 3] + topic [1], consumer3 topic3 [0, 1, 2, 3] + topic2 [0]."""

STICKY_2_8 = Release(
    name="sticky@2.8.1",
    kafka_name="sticky",
    version="2.8.1",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=HIGHEST_GENERATION_2_8,
    constrained_builder=constrained_assign_2_8,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-341", "KAFKA-9987", "KAFKA-13081"),
    description="StickyAssignor as released in 2.8.1: 2.6's paths, partitions claimed twice in one generation "
    "taken from every claimant on the constrained path",
    verified_against="kafka-clients 2.8.1",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_2_6,
)
"""Equal to kafka-clients 2.8.1 (and 2.8.2) on all 424 inputs (its regression file, 119 Kafka cases, 4 bundled
scenarios, 150 sampler groups, 150 history rebalances), and to 2.8.1 alike. The version is 2.8.1's:
the KAFKA-13081 backport changed ``allSubscriptionsEqual`` and ``constrainedAssign`` there, and 2.8.0
behaves as ``sticky@2.6`` (424/424 with the 2.8.0 jar). What differs from ``sticky@2.6``, on 22 of the
424 inputs (19 with equal subscriptions): a partition claimed twice within the highest generation is
taken from every claimant (``HIGHEST_GENERATION_2_8``) and dealt afresh (``constrained_assign_2_8``;
regression sticky-2.8.1-same-generation-double-claim-dealt-afresh). The general path is 2.6's, unchanged
in 2.8 (``reference/general_2_6.py``)."""

STICKY_3_3 = Release(
    name="sticky@3.3",
    kafka_name="sticky",
    version="3.3",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=HIGHEST_GENERATION_3_0,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-341", "KAFKA-9987", "KAFKA-12464", "KAFKA-12675", "KAFKA-12984"),
    description="StickyAssignor as released in 3.0 to 3.3: only the highest generation's claims count, a "
    "partition claimed twice in it is dropped; no rack awareness, isBalanced before KAFKA-15106",
    verified_against="kafka-clients 3.3.2",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_of_release,
    kafka_15106=False,
    kip_881=False,
)
"""Equal to kafka-clients 3.3.2 on all 424 inputs (its regression file, 119 Kafka cases, 4 bundled
scenarios, 150 sampler groups, 150 history rebalances; and on 1,124 with 500 of each), and to 3.0.2,
3.1.2, 3.2.3 and 3.4.0 on the same 424: the line 3.0 to 3.4.0. KAFKA-12984 (3.0) made one
resolution serve both paths: only the highest generation's claims count, and a partition claimed twice
in it is dropped by both claimants (``HIGHEST_GENERATION_3_0``); racks are not read (``kip_881=False``)
and the general path runs ``isBalanced`` as before KAFKA-15106 (``general_assign_of_release``). Its
regression (sticky-3.3-older-generation-claims-dropped) shows a member one generation behind losing an
uncontested claim that 3.4.1 lets it keep."""

STICKY_3_4 = Release(
    name="sticky@3.4",
    kafka_name="sticky",
    version="3.4",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=PER_PARTITION_3_5_1,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-341", "KAFKA-9987", "KAFKA-12984", "KAFKA-14639"),
    description="StickyAssignor as released in 3.4: per-partition generation resolution with the owner-map bug, "
    "no rack awareness (before KIP-881), isBalanced before KAFKA-15106",
    verified_against="kafka-clients 3.4.1",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_of_release,
    kafka_15106=False,
    kip_881=False,
)
"""Equal to kafka-clients 3.4.1 on all 424 inputs (and on 1,124 with 500 sampler groups and 500
history rebalances). 3.4.1 carries KAFKA-14639 (backported; 3.4.0 does not and behaves as ``sticky@3.3``):
the per-partition resolution with 3.5.1's owner-map bug (``PER_PARTITION_3_5_1``), on a 3.4 code base
that knows no racks (KIP-881 came in 3.5: ``kip_881=False``) and runs ``isBalanced`` as before
KAFKA-15106. Its regression (sticky-3.4-racks-not-read) is a group 3.5 on assign by rack."""

STICKY_3_5_1 = Release(
    name="sticky@3.5.1",
    kafka_name="sticky",
    version="3.5.1",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=PER_PARTITION_3_5_1,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-341", "KAFKA-9987", "KAFKA-12984", "KIP-881", "KAFKA-14639", "KAFKA-15106"),
    description="StickyAssignor as released in 3.5.0 / 3.5.1: rack-aware (KIP-881), with the owner-map and "
    "isBalanced bugs fixed in 3.5.2 (KAFKA-15106)",
    verified_against="kafka-clients 3.5.1",
    verified_inputs=424,
    verified_agreeing=424,
    general_builder=general_assign_of_release,
    kafka_15106=False,
)
"""Equal to kafka-clients 3.5.1 on all 424 inputs (and on 1,124 with 500 sampler groups and 500
history rebalances), and to 3.5.0 on the same 424. The eager twin of ``cooperative-sticky@3.5.1``:
rack-aware (KIP-881), with both halves of KAFKA-15106 unfixed (the owner map, ``PER_PARTITION_3_5_1``;
``isBalanced``, ``kafka_15106=False``). Its regression (sticky-3.5.1-partition-kept-by-two-members) is the
three-generation group on which 3.5.1 leaves topic-2 with two members and 3.5.2 with one."""

STICKY_3_6 = Release(
    name="sticky@3.6",
    kafka_name="sticky",
    version="3.6",
    cooperative=False,
    user_data=STICKY_V1,
    ownership_rule=PER_PARTITION,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-341", "KAFKA-9987", "KAFKA-12984", "KIP-881", "KAFKA-14639", "KAFKA-15106"),
    description="StickyAssignor as released in 3.5.2 to 3.7.0: owned partitions count towards quotas in claim "
    "order (before KAFKA-16277), rack rules before KAFKA-15170",
    verified_against="kafka-clients 3.6.2",
    verified_inputs=424,
    verified_agreeing=424,
)
"""Equal to kafka-clients 3.6.2 on all 424 inputs (and on 1,124 with 500 sampler groups and 500
history rebalances), and to 3.5.2 and 3.7.0 on the same 424: the line 3.5.2 to 3.7.0. Today's ownership
rule and general path; the constrained path counts owned partitions towards quotas in claim order
(``QuotaOrder.CLAIM``, before KAFKA-16277) and has the rack bookkeeping before KAFKA-15170
(``kafka_15170=False``), both fixed in 3.7.1 / 3.8.0. Its regression
(sticky-3.6-owned-partitions-kept-in-claim-order) is a member keeping different owned partitions than
3.7.1 on keeps."""

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
    verified_against="kafka-clients 4.4.0",
    verified_inputs=399,
    verified_agreeing=399,
)
"""Equal to kafka-clients 4.4.0 on all 399 inputs (8 regression files, 86 Kafka cases, 5 bundled
scenarios, 150 sampler groups, 150 history rebalances); tests/test_peers_native.py holds the same in CI."""

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
    verified_against="kafka-clients 2.4.1",
    verified_inputs=392,
    verified_agreeing=392,
    general_builder=general_assign_2_4,
)
"""Equal to kafka-clients 2.4.1 on all 392 inputs (its regression file, 86 Kafka cases, 5 bundled
scenarios, 150 sampler groups, 150 history rebalances). 2.4 had no constrained path:
``general_builder`` is ``AbstractStickyAssignor.assign`` of 2.4 (``reference/general_2_2.py``,
era 2.4: 2.3's algorithm plus ``revocationRequired`` and a first balancing pass over the newly
assigned partitions), then ``adjustAssignment`` withholds the transferring partitions. With no
generation anywhere, a partition claimed twice goes to the last claimant in map order: on its
regression file (cooperative-sticky-2.4-stale-claim-handed-over-while-owner-revokes) the jar and
the record give the stale member t-0 and withhold nothing. On bundled kip792-mixed-versions, where
c1 and c2 both list t-2 as owned, both give c1 [t-3] and c2 [t-2, t-4] in the same round."""

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
    verified_against="kafka-clients 2.6.3",
    verified_inputs=392,
    verified_agreeing=392,
    general_builder=general_assign_2_6,
)
"""Equal to kafka-clients 2.6.3 on all 392 inputs (its regression file, 86 Kafka cases, 5 bundled
scenarios, 150 sampler groups, 150 history rebalances): 2.6's constrained path (its regression
cooperative-sticky-2.6-same-generation-double-claim-assigned-twice replays with the jar) and 2.6's
general path (``reference/general_2_6.py``: it drops claims on partitions the metadata lacks, as in
sampler group 12:7 where c25 claims t0-5 of a 5-partition t0, and knows no racks, KIP-881 being 3.5)."""

COOPERATIVE_STICKY_2_8 = Release(
    name="cooperative-sticky@2.8.1",
    kafka_name="cooperative-sticky",
    version="2.8.1",
    cooperative=True,
    user_data=COOPERATIVE_GENERATION_2_8,
    ownership_rule=HIGHEST_GENERATION_2_8,
    constrained_builder=constrained_assign_2_8,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-429", "KAFKA-9987", "KAFKA-13081"),
    description="CooperativeStickyAssignor as released in 2.8.1: its generation in user data, partitions claimed "
    "twice in one generation taken from every claimant and withheld for a round",
    verified_against="kafka-clients 2.8.1",
    verified_inputs=392,
    verified_agreeing=392,
    general_builder=general_assign_2_6,
)
"""Equal to kafka-clients 2.8.1 (and 2.8.2) on all 392 inputs (its regression file, 86 Kafka cases, 5 bundled
scenarios, 150 sampler groups, 150 history rebalances), and to 2.8.1 alike; 2.8.0 behaves as
``cooperative-sticky@2.6`` (392/392 with the 2.8.0 jar). The KAFKA-13081 backport (2.8.1) made the
assignor send its generation as an int32 in its user data, read from there only, the subscription
having no generation field yet (``COOPERATIVE_GENERATION_2_8``), and took a partition claimed twice
within the highest generation from every claimant, withholding it for a round as transferring
(``HIGHEST_GENERATION_2_8``, ``constrained_assign_2_8``; regression
cooperative-sticky-2.8.1-same-generation-double-claim-withheld-from-both). It differs from
``cooperative-sticky@2.6`` on 55 of the 392 inputs, 28 with equal subscriptions; on the general path
(2.6's, ``reference/general_2_6.py``) the generations now order the claims, and the members
``allSubscriptionsEqual`` read before a differing subscription come back with generation -1, their
user data's int32 consumed by the first read (``COOPERATIVE_GENERATION_2_8.read_again``)."""

COOPERATIVE_STICKY_3_3 = Release(
    name="cooperative-sticky@3.3",
    kafka_name="cooperative-sticky",
    version="3.3",
    cooperative=True,
    user_data=COOPERATIVE_GENERATION_3_0,
    ownership_rule=HIGHEST_GENERATION_3_0,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-429", "KAFKA-9987", "KAFKA-12464", "KAFKA-12675", "KAFKA-12984"),
    description="CooperativeStickyAssignor as released in 3.0 to 3.3: generation from its user data only, only "
    "the highest generation's claims count; no rack awareness, isBalanced before KAFKA-15106",
    verified_against="kafka-clients 3.3.2",
    verified_inputs=392,
    verified_agreeing=392,
    general_builder=general_assign_of_release,
    kafka_15106=False,
    kip_881=False,
)
"""Equal to kafka-clients 3.3.2 on all 392 inputs (its regression file, 86 Kafka cases, 5 bundled
scenarios, 150 sampler groups, 150 history rebalances; and on 1,092 with 500 of each), and to 3.0.2,
3.1.2, 3.2.3 and 3.4.0 on the same 392. As ``sticky@3.3`` (highest generation only, no racks, old
``isBalanced``), with the generation read from the int32 user data alone
(``COOPERATIVE_GENERATION_3_0``): the subscription's ``generationId`` came with KIP-792 in 3.4.0, which
reads it first. Every scenario's member sends the same generation in both places, so no input tells the
two readings apart, nor this record from 3.4.0. Its regression
(cooperative-sticky-3.3-stale-owners-partition-handed-over-unrevoked) is the double assignment
KAFKA-14639 fixed: a stale member's claims are dropped, so a partition it still owns is dealt to
another member in the same round."""

COOPERATIVE_STICKY_3_4 = Release(
    name="cooperative-sticky@3.4",
    kafka_name="cooperative-sticky",
    version="3.4",
    cooperative=True,
    user_data=COOPERATIVE_GENERATION,
    ownership_rule=PER_PARTITION_3_5_1,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-429", "KAFKA-9987", "KAFKA-12984", "KIP-792", "KAFKA-13715", "KAFKA-14639"),
    description="CooperativeStickyAssignor as released in 3.4: per-partition generation resolution with the "
    "owner-map bug, no rack awareness (before KIP-881), isBalanced before KAFKA-15106",
    verified_against="kafka-clients 3.4.1",
    verified_inputs=392,
    verified_agreeing=392,
    general_builder=general_assign_of_release,
    kafka_15106=False,
    kip_881=False,
)
"""Equal to kafka-clients 3.4.1 on all 392 inputs (and on 1,092 with 500 sampler groups and 500
history rebalances). As ``sticky@3.4``: KAFKA-14639 backported with 3.5.1's owner-map bug
(``PER_PARTITION_3_5_1``), no racks (``kip_881=False``), ``isBalanced`` before KAFKA-15106; the generation
from the wire first (KIP-792). Its regression (cooperative-sticky-3.4-racks-not-read) is a group 3.5 on
assign by rack."""

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
    verified_against="kafka-clients 3.5.1",
    verified_inputs=395,
    verified_agreeing=395,
    general_builder=general_assign_of_release,
    kafka_15106=False,
)
"""Equal to kafka-clients 3.5.1 on all 395 inputs (its 4 regression files, 86 Kafka cases, 5 bundled
scenarios, 150 sampler groups, 150 history rebalances; and on 1,095 with 500 sampler groups and 500
history rebalances). KAFKA-15106 fixed two things in 3.5.2: the owner map (``PER_PARTITION_3_5_1``)
and, on the general path, ``isBalanced``, which in 3.5.1 called an assignment unbalanced as soon as
a member had fewer partitions than the owner of one it could take (``kafka_15106=False``, run by
``general_assign_of_release``): sampler group 12:134 keeps reassigning under it, and 3.5.1 gives c26
t1 [0, 1, 2, 3, 4, 5, 2, 4, 0] where 3.5.2 stops at [0, 1, 2, 3, 4, 5, 2, 4]."""

COOPERATIVE_STICKY_3_6 = Release(
    name="cooperative-sticky@3.6",
    kafka_name="cooperative-sticky",
    version="3.6",
    cooperative=True,
    user_data=COOPERATIVE_GENERATION,
    ownership_rule=PER_PARTITION,
    constrained_builder=constrained_assign,
    quota_order=QuotaOrder.CLAIM,
    kafka_15170=False,
    references=("KIP-429", "KAFKA-9987", "KAFKA-12984", "KIP-792", "KAFKA-13715", "KIP-881", "KAFKA-14639",
                "KAFKA-15106"),
    description="CooperativeStickyAssignor as released in 3.5.2 to 3.7.0: owned partitions count towards quotas "
    "in claim order (before KAFKA-16277), rack rules before KAFKA-15170",
    verified_against="kafka-clients 3.6.2",
    verified_inputs=392,
    verified_agreeing=392,
)
"""Equal to kafka-clients 3.6.2 on all 392 inputs (and on 1,092 with 500 sampler groups and 500
history rebalances), and to 3.5.2 and 3.7.0 on the same 392: the line 3.5.2 to 3.7.0. As ``sticky@3.6``:
quotas in claim order (before KAFKA-16277), rack bookkeeping before KAFKA-15170. Its regression
(cooperative-sticky-3.6-owned-partitions-kept-in-claim-order) keeps and revokes other partitions than
3.7.1 on."""

RELEASES: tuple[Release, ...] = (
    STICKY,
    STICKY_2_2,
    STICKY_2_3,
    STICKY_2_4,
    STICKY_2_6,
    STICKY_2_8,
    STICKY_3_3,
    STICKY_3_4,
    STICKY_3_5_1,
    STICKY_3_6,
    COOPERATIVE_STICKY,
    COOPERATIVE_STICKY_2_4,
    COOPERATIVE_STICKY_2_6,
    COOPERATIVE_STICKY_2_8,
    COOPERATIVE_STICKY_3_3,
    COOPERATIVE_STICKY_3_4,
    COOPERATIVE_STICKY_3_5_1,
    COOPERATIVE_STICKY_3_6,
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
