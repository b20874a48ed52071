"""``StickyAssignor`` (``sticky``) release by release: one ``Release`` record per behaviour (releases.py lists them)."""

from __future__ import annotations

from .constrained import constrained_assign
from .ownership import (
    HIGHEST_GENERATION_2_8,
    HIGHEST_GENERATION_3_0,
    HIGHEST_GENERATION_ONLY,
    PER_PARTITION,
    PER_PARTITION_3_5_1,
    TREEMAP_BY_GENERATION,
    TRUST_EVERY_CLAIM,
)
from .reference.constrained_2_6 import constrained_assign_2_6, constrained_assign_2_8
from .reference.general import general_assign_of_release
from .reference.general_2_2 import general_assign_2_2, general_assign_2_3, general_assign_2_4
from .reference.general_2_6 import general_assign_2_6
from .release import Release
from .sticky_types import QuotaOrder
from .user_data import (
    STICKY_V0,
    STICKY_V1,
)

__all__ = [
    "STICKY",
    "STICKY_2_2",
    "STICKY_2_3",
    "STICKY_2_4",
    "STICKY_2_6",
    "STICKY_2_8",
    "STICKY_3_3",
    "STICKY_3_4",
    "STICKY_3_5_1",
    "STICKY_3_6",
]


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
