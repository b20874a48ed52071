"""The scenario space: every knob a generated group can vary, as one frozen ``Space``.

Both drivers read the space through the same generator (``scenarios.generate``): the
Hypothesis strategy ``groups()`` and the seeded ``sampler.sample(seed, index, space)``.
A knob is either a *range* (an inclusive ``(low, high)`` of integers, written ``2..50`` or
``7``) or a *choice* (a non-empty tuple of allowed values, written ``uniform,nested``).
The first value of every default choice is the plain case (version 3, nothing owned,
eager), which is where Hypothesis shrinks to.

``Space.from_overrides(["members=2..50", "subscriptions=uniform"])`` parses the CLI's
``--space KNOB=VALUE`` strings; bad input raises ``InvalidSpace`` naming the knob.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Iterable

from ..errors import StickyproofError
from ..model import Scenario

__all__ = [
    "Space",
    "InvalidSpace",
    "RANGE_KNOBS",
    "CHOICE_KNOBS",
    "SUBSCRIPTIONS",
    "OWNERSHIP",
    "VERSIONS",
    "PROTOCOLS",
    "RACKS",
    "STATIC",
    "ASSIGNORS",
    "IDS",
    "KNOB_HELP",
    "KNOB_MAX",
    "MAX_SPACE_PARTITIONS",
    "knobs_table",
    "claims_invisible",
    "space_admits",
]

# Choice knobs: the plain case comes first in every tuple (Hypothesis shrinks toward it).
SUBSCRIPTIONS = ("uniform", "heterogeneous", "nested", "disjoint", "empty")
OWNERSHIP = (
    "none",
    "balanced",
    "skewed",
    "members-left",
    "members-joined",
    "partitions-added",
    "partitions-deleted",
    "topics-added",
    "topics-deleted",
    "topics-unsubscribed",
)
VERSIONS = (3, 2, 1, 0)
PROTOCOLS = ("eager", "cooperative")
RACKS = ("none", "members", "replicas", "both")
STATIC = ("none", "some", "all")
ASSIGNORS = ("none", "same", "mixed")
IDS = ("plain", "kafka")

#: Upper limit on any range knob (``strategies.groups()`` checks its arguments against it).
MAX_RANGE_VALUE = 1_000_000

#: The largest value each range knob accepts in a ``Space`` (``--space``): sizes the seeded sampler
#: draws a group of within seconds on one core (the corners are measured by benchmarks/limits.py: at
#: most 5 s; the generator's prior-ownership and claim steps grow with members x partitions). A cap used to be 1,000,000 for every knob, and ``members=1000000`` never produced a
#: sample; a typo now fails at once, naming the knob and its cap. The production scale (2,000
#: members x 1,000,000 partitions) is graded from files, not sampled (docs/limits.md).
KNOB_MAX: dict[str, int] = {
    "members": 2_000,
    "topics": 1_000,
    "partitions": 10_000,
    "zero_partition_topics": 1_000,
    "generation": MAX_RANGE_VALUE,
    "stale": 100,
    "double_claims": 100,
    "unknown_generation": 100,
    "deleted_topic_claims": 100,
    "past_count_claims": 100,
}
#: The most partitions a space's largest group may hold (topics x partitions, upper bounds).
MAX_SPACE_PARTITIONS = 10_000

KNOB_HELP: dict[str, str] = {
    "members": "number of members in the group",
    "topics": "number of topics with partitions in the leader's metadata",
    "partitions": "partition count of each such topic",
    "zero_partition_topics": "extra topics that exist with zero partitions (subscribed like the others)",
    "generation": "the group's current generation (members that rejoin from it report it)",
    "stale": "members that rejoin from an older generation with claims the group has since reassigned (KIP-341)",
    "double_claims": "partitions claimed by two members of the same generation",
    "unknown_generation": "claimants whose generation is -1 (old clients, reset members)",
    "deleted_topic_claims": "claims on topics that no longer exist",
    "past_count_claims": "claims on partition numbers at or past the topic's count (hazard K1, docs/rules.md)",
    "subscriptions": "uniform (all equal), heterogeneous (random subsets), nested (prefixes), "
    "disjoint (two halves), empty (some members subscribe to nothing, R13, docs/rules.md)",
    "ownership": "what members own before this rebalance: none, balanced, skewed, or a balanced prior "
    "assignment after members left/joined, partitions/topics were added/deleted, or members stopped "
    "subscribing to a topic they still claim (topics-unsubscribed: the only source of such claims in cooperative groups)",
    "versions": "ConsumerProtocolSubscription versions members speak (each member draws one)",
    "protocols": "the rebalance protocol in force: eager or cooperative",
    "racks": "rack information: none, on members, on partition replicas, or both",
    "static": "static membership (instance_id): none, some members, all members",
    "assignors": "assignor lists members advertise: none (empty), the same list, or mixed (a rolling upgrade)",
    "ids": "member id style: plain (c17) or kafka (consumer-g-3-<uuid>)",
}


class InvalidSpace(StickyproofError, ValueError):
    """A ``--space KNOB=VALUE`` override (or a Space field) that names no knob or breaks a knob's rule."""

    def __init__(self, knob: str, message: str):
        self.knob = knob
        super().__init__(f"space knob {knob}: {message}")


@dataclass(frozen=True)
class Space:
    """Knob ranges and choices of the scenario space; the defaults are the sweep's default space.

    Counts of hazards (``stale``, ``double_claims``...) are upper-bounded by what the drawn
    group can hold (a one-member group has no stale member: nobody moved on without it).
    """

    # Range knobs: inclusive (low, high).
    members: tuple[int, int] = (1, 8)
    topics: tuple[int, int] = (1, 4)
    partitions: tuple[int, int] = (1, 8)
    zero_partition_topics: tuple[int, int] = (0, 1)
    generation: tuple[int, int] = (1, 10)
    stale: tuple[int, int] = (0, 2)
    double_claims: tuple[int, int] = (0, 2)
    unknown_generation: tuple[int, int] = (0, 1)
    deleted_topic_claims: tuple[int, int] = (0, 1)
    past_count_claims: tuple[int, int] = (0, 1)
    # Choice knobs: allowed values, plain case first.
    subscriptions: tuple[str, ...] = SUBSCRIPTIONS
    ownership: tuple[str, ...] = OWNERSHIP
    versions: tuple[int, ...] = VERSIONS
    protocols: tuple[str, ...] = PROTOCOLS
    racks: tuple[str, ...] = RACKS
    static: tuple[str, ...] = STATIC
    assignors: tuple[str, ...] = ASSIGNORS
    ids: tuple[str, ...] = IDS

    def __post_init__(self) -> None:
        for knob in RANGE_KNOBS:
            _check_range(knob, getattr(self, knob))
        for knob, allowed in CHOICE_KNOBS.items():
            _check_choice(knob, getattr(self, knob), allowed)
        largest = self.topics[1] * self.partitions[1]
        if largest > MAX_SPACE_PARTITIONS:
            raise InvalidSpace(
                "partitions",
                f"topics={self.topics[1]} x partitions={self.partitions[1]} allows {largest:,} partitions in one group, "
                f"more than the sampler's {MAX_SPACE_PARTITIONS:,} (docs/limits.md: larger groups are graded from files)",
            )

    @classmethod
    def from_overrides(cls, overrides: Iterable[str], base: "Space | None" = None) -> "Space":
        """Apply ``KNOB=VALUE`` strings (``members=2..50``, ``versions=3,0``) to ``base`` (default: the default space)."""
        space = base if base is not None else cls()
        changes: dict[str, Any] = {}
        for item in overrides:
            if not isinstance(item, str) or "=" not in item:
                raise InvalidSpace(str(item), f"expected KNOB=VALUE, got {item!r} (knobs: {', '.join(ALL_KNOBS)})")
            knob, _, text = item.partition("=")
            knob = knob.strip().replace("-", "_")
            text = text.strip()
            if knob not in ALL_KNOBS:
                raise InvalidSpace(knob, f"unknown knob in {item!r} (knobs: {', '.join(ALL_KNOBS)})")
            if knob in changes:
                raise InvalidSpace(knob, f"given twice ({item!r})")
            changes[knob] = _parse_range(knob, text) if knob in RANGE_KNOBS else _parse_choice(knob, text)
        return replace(space, **changes)

    def to_overrides(self) -> list[str]:
        """The ``KNOB=VALUE`` strings that rebuild this space from the default one (only changed knobs)."""
        default = Space()
        out = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == getattr(default, f.name):
                continue
            if f.name in RANGE_KNOBS:
                lo, hi = value
                out.append(f"{f.name}={lo}" if lo == hi else f"{f.name}={lo}..{hi}")
            else:
                out.append(f"{f.name}={','.join(str(v) for v in value)}")
        return out

    def describe(self) -> dict[str, Any]:
        """Every knob and its value, JSON-ready (ranges as ``"lo..hi"``)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = f"{value[0]}..{value[1]}" if f.name in RANGE_KNOBS else list(value)
        return out


RANGE_KNOBS = (
    "members",
    "topics",
    "partitions",
    "zero_partition_topics",
    "generation",
    "stale",
    "double_claims",
    "unknown_generation",
    "deleted_topic_claims",
    "past_count_claims",
)
#: Smallest value each range knob accepts (members >= 1: the leader is a member, R14;
#: generation >= 1 so a stale member has an older generation >= 0 to come from).
RANGE_MINIMUM = {"members": 1, "topics": 1, "generation": 1}

CHOICE_KNOBS: dict[str, tuple[Any, ...]] = {
    "subscriptions": SUBSCRIPTIONS,
    "ownership": OWNERSHIP,
    "versions": VERSIONS,
    "protocols": PROTOCOLS,
    "racks": RACKS,
    "static": STATIC,
    "assignors": ASSIGNORS,
    "ids": IDS,
}
ALL_KNOBS = RANGE_KNOBS + tuple(CHOICE_KNOBS)


def _check_range(knob: str, value: Any) -> None:
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise InvalidSpace(knob, f"expected a (low, high) pair of integers, got {value!r}")
    lo, hi = value
    floor = RANGE_MINIMUM.get(knob, 0)
    if lo < floor:
        raise InvalidSpace(knob, f"{knob}={lo}..{hi}: lower bound must be >= {floor}")
    if hi < lo:
        raise InvalidSpace(knob, f"{knob}={lo}..{hi}: upper bound {hi} < lower bound {lo}")
    cap = KNOB_MAX.get(knob, MAX_RANGE_VALUE)
    if hi > cap:
        raise InvalidSpace(knob, f"{knob}={lo}..{hi}: upper bound must be <= {cap:,} (docs/limits.md)")


def _check_choice(knob: str, value: Any, allowed: tuple[Any, ...]) -> None:
    if not isinstance(value, tuple) or not value:
        raise InvalidSpace(knob, f"expected a non-empty tuple of values from {', '.join(map(str, allowed))}, got {value!r}")
    for v in value:
        if v not in allowed or isinstance(v, bool):
            raise InvalidSpace(knob, f"{v!r} is not one of {', '.join(map(str, allowed))}")
    if len(set(value)) != len(value):
        raise InvalidSpace(knob, f"{','.join(map(str, value))}: a value is listed twice")


def _parse_int(knob: str, text: str, whole: str) -> int:
    if len(text.strip()) > 30:
        raise InvalidSpace(knob, f"{knob}={whole[:40]}...: not an integer of a sensible size")
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidSpace(knob, f"{knob}={whole}: {text.strip()!r} is not an integer (expected N or LOW..HIGH)") from None


def _parse_range(knob: str, text: str) -> tuple[int, int]:
    if ".." in text:
        lo_text, _, hi_text = text.partition("..")
        value = (_parse_int(knob, lo_text, text), _parse_int(knob, hi_text, text))
    else:
        n = _parse_int(knob, text, text)
        value = (n, n)
    _check_range(knob, value)
    return value


def _parse_choice(knob: str, text: str) -> tuple[Any, ...]:
    allowed = CHOICE_KNOBS[knob]
    parts = [p.strip() for p in text.split(",")]
    if not text or any(not p for p in parts):
        raise InvalidSpace(knob, f"{knob}={text}: expected a comma-separated list of {', '.join(map(str, allowed))}")
    values: list[Any] = []
    for p in parts:
        if knob == "versions":
            v: Any = _parse_int(knob, p, text)
        else:
            v = p
        if v not in allowed:
            raise InvalidSpace(knob, f"{knob}={text}: {p!r} is not one of {', '.join(map(str, allowed))}")
        values.append(v)
    value = tuple(values)
    _check_choice(knob, value, allowed)
    return value


def knobs_table() -> list[dict[str, Any]]:
    """Every knob: name, kind (range or choice), default, what it accepts, and what it means
    (``stickyproof scenarios knobs``, and the ``--help`` of ``hunt`` and ``sweep``)."""
    default = Space()
    rows = []
    for knob in ALL_KNOBS:
        value = getattr(default, knob)
        if knob in RANGE_KNOBS:
            lo, hi = value
            rows.append({"knob": knob, "kind": "range", "default": f"{lo}..{hi}",
                         "accepts": f"N or LOW..HIGH, {RANGE_MINIMUM.get(knob, 0)}..{KNOB_MAX[knob]:,}",
                         "help": KNOB_HELP[knob]})
        else:
            every = tuple(value) == tuple(CHOICE_KNOBS[knob])
            rows.append({"knob": knob, "kind": "choice", "default": "all" if every else ",".join(map(str, value)),
                         "accepts": "any of " + ",".join(map(str, CHOICE_KNOBS[knob])),
                         "help": KNOB_HELP[knob]})
    return rows


def knobs_help() -> str:
    """The knobs as a few plain lines for an argparse epilog."""
    lines = ["space knobs (--space KNOB=VALUE; 'stickyproof scenarios knobs' for the table):"]
    for row in knobs_table():
        lines.append(f"  {row['knob']} ({row['accepts']}; default {row['default']}): {row['help']}")
    lines.append(f"  a space's largest group holds at most {MAX_SPACE_PARTITIONS:,} partitions (topics x partitions)")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Admission: whether a group (a shrunk one, say) is still one the space can generate


def _claims_past_count_allowed(space: Space) -> bool:
    return space.past_count_claims[1] > 0 or "partitions-deleted" in space.ownership


def _claims_on_missing_topics_allowed(space: Space) -> bool:
    return space.deleted_topic_claims[1] > 0 or "topics-deleted" in space.ownership


def claims_invisible(scenario: Scenario) -> bool:
    """A cooperative group with a member speaking subscription v0, whose owned partitions never
    reach the leader (the field exists from v1, R2; KIP-429 upgrades need v1+): those it owns now,
    and those it is handed in round 1 and owns in the follow-up round.

    No assignor can be cooperative-safe there (it cannot see what it must not hand over), and no
    real group has such a member (a v0 client predates the cooperative protocol), so the hunt leaves
    such groups out: the hazard belongs to the group, not to the assignor under test, and is pinned
    by ``tests/regressions/cooperative-sticky-v0-claims-invisible*.json`` (label ``v0-invisible``).
    """
    return scenario.protocol == "cooperative" and any(m.version == 0 for m in scenario.members)


def space_admits(space: Space, scenario: Scenario) -> bool:
    """Whether ``scenario`` still has only features ``space`` can generate (checked on the knobs
    shrinking can cross: protocol, versions, member and topic counts, partition counts, empty or
    unequal subscriptions, claims past a partition count or on a missing topic, racks, static ids).

    A shrunk failure must stay inside the space it was found in: a group shrunk out of a
    hazard-free space into a hazard (an empty subscription, R13) would fail for another reason.
    """
    if scenario.protocol not in space.protocols or claims_invisible(scenario):
        return False
    if any(m.version not in space.versions for m in scenario.members):
        return False
    if not space.members[0] <= len(scenario.members):
        return False
    counts = {t.name: t.partitions for t in scenario.topics}
    live = [t for t in scenario.topics if t.partitions > 0]
    if len(live) < space.topics[0] or len(scenario.topics) - len(live) > space.zero_partition_topics[1]:
        return False
    if any(not space.partitions[0] <= t.partitions <= space.partitions[1] for t in live):
        return False
    if "empty" not in space.subscriptions and any(not m.topics for m in scenario.members):
        return False
    if set(space.subscriptions) <= {"uniform"} and len({frozenset(m.topics) for m in scenario.members}) > 1:
        return False
    unsubscribed_allowed = "topics-unsubscribed" in space.ownership
    for m in scenario.members:
        for tp in m.owned:
            n = counts.get(tp.topic)
            if n is None and not _claims_on_missing_topics_allowed(space):
                return False
            if n is not None and tp.partition >= n and not _claims_past_count_allowed(space):
                return False
            if (n is not None and tp.partition < n and tp.topic not in m.topics and scenario.protocol == "cooperative"
                    and not unsubscribed_allowed):
                return False  # a cooperative member revokes what it no longer subscribes to before joining
    if space.racks == ("none",) and (any(m.rack for m in scenario.members) or any(t.racks for t in scenario.topics)):
        return False
    if space.static == ("none",) and any(m.instance_id for m in scenario.members):
        return False
    return True
