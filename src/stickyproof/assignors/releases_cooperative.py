"""``CooperativeStickyAssignor`` (``cooperative-sticky``) release by release: one ``Release`` record per
behaviour (releases.py lists them)."""

from __future__ import annotations

from .constrained import constrained_assign
from .ownership import (
    HIGHEST_GENERATION_2_8,
    HIGHEST_GENERATION_3_0,
    HIGHEST_GENERATION_ONLY,
    PER_PARTITION,
    PER_PARTITION_3_5_1,
    TREEMAP_BY_GENERATION,
)
from .reference.constrained_2_6 import constrained_assign_2_6, constrained_assign_2_8
from .reference.general import general_assign_of_release
from .reference.general_2_2 import general_assign_2_4
from .reference.general_2_6 import general_assign_2_6
from .release import Release
from .sticky_types import QuotaOrder
from .user_data import (
    COOPERATIVE_GENERATION,
    COOPERATIVE_GENERATION_2_8,
    COOPERATIVE_GENERATION_3_0,
    NO_USER_DATA,
)

__all__ = [
    "COOPERATIVE_STICKY",
    "COOPERATIVE_STICKY_2_4",
    "COOPERATIVE_STICKY_2_6",
    "COOPERATIVE_STICKY_2_8",
    "COOPERATIVE_STICKY_3_3",
    "COOPERATIVE_STICKY_3_4",
    "COOPERATIVE_STICKY_3_5_1",
    "COOPERATIVE_STICKY_3_6",
]


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
