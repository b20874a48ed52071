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
2. Otherwise write one ``Release`` record (``releases_sticky.py`` or ``releases_cooperative.py``)
   and add it to ``RELEASES`` below: name
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

from ..errors import UnknownAssignor
from .release import ConstrainedBuilder, GeneralBuilder, QuotaOrder, Release
from .releases_cooperative import (
    COOPERATIVE_STICKY,
    COOPERATIVE_STICKY_2_4,
    COOPERATIVE_STICKY_2_6,
    COOPERATIVE_STICKY_2_8,
    COOPERATIVE_STICKY_3_3,
    COOPERATIVE_STICKY_3_4,
    COOPERATIVE_STICKY_3_5_1,
    COOPERATIVE_STICKY_3_6,
)
from .releases_sticky import (
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
    "STICKY_3_3",
    "STICKY_3_4",
    "STICKY_3_5_1",
    "STICKY_3_6",
    "COOPERATIVE_STICKY",
    "COOPERATIVE_STICKY_2_4",
    "COOPERATIVE_STICKY_2_6",
    "COOPERATIVE_STICKY_2_8",
    "COOPERATIVE_STICKY_3_3",
    "COOPERATIVE_STICKY_3_4",
    "COOPERATIVE_STICKY_3_5_1",
    "COOPERATIVE_STICKY_3_6",
    "get_release",
    "find_release",
    "releases_of",
]

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
