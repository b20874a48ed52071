"""The Hypothesis driver of the scenario space: ``generate.Draw`` over ``data.draw``.

Public names are re-exported by ``stickyproof.strategies`` (the façade users import);
this module holds the implementation and the argument validation.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Callable, Hashable, Mapping, Sequence, TypeVar

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from ..errors import StickyproofError
from ..model import Scenario
from .generate import Draw, build_scenario
from .space import (
    ASSIGNORS,
    CHOICE_KNOBS,
    IDS,
    MAX_RANGE_VALUE,
    OWNERSHIP,
    PROTOCOLS,
    RACKS,
    RANGE_KNOBS,
    RANGE_MINIMUM,
    STATIC,
    SUBSCRIPTIONS,
    VERSIONS,
    Space,
)

__all__ = ["groups", "from_space", "InvalidStrategyArgument"]

T = TypeVar("T")


class InvalidStrategyArgument(StickyproofError, InvalidArgument):
    """An argument of ``groups()`` / ``from_space()`` that can generate nothing sensible.

    Derives from Hypothesis' ``InvalidArgument`` (so Hypothesis reports it as a usage error)
    and from ``StickyproofError`` (so the CLI prints it as one line, exit 2).
    """


@dataclass(frozen=True)
class _Config:
    ranges: Mapping[str, tuple[int, int]]
    strategies: Mapping[str, SearchStrategy[Any]]


class _HypothesisDraw(Draw):
    """``generate.Draw`` over a composite's ``draw``: every choice shrinks toward low/False/first/short."""

    def __init__(self, draw: Callable[[SearchStrategy[Any]], Any], config: _Config):
        self._draw = draw
        self._config = config

    def integer(self, low: int, high: int) -> int:
        return self._draw(_integers(low, high))

    def boolean(self) -> bool:
        return self._draw(_BOOLEANS)

    def choice(self, values: Sequence[T]) -> T:
        return self._draw(st.sampled_from(values))

    def bounds(self, knob: str) -> tuple[int, int]:
        return self._config.ranges[knob]

    def knob(self, knob: str) -> Any:
        value = self._draw(self._config.strategies[knob])
        allowed = CHOICE_KNOBS[knob]
        if value not in allowed or isinstance(value, bool):
            raise InvalidStrategyArgument(
                f"{knob}= drew {value!r}, which is not one of {', '.join(map(repr, allowed))}"
            )
        return value

    def lists(
        self,
        element: Callable[[Any], T],
        *,
        min_size: int,
        max_size: int,
        unique_by: Callable[[T], Hashable] | None = None,
    ) -> list[T]:
        elements = _elements(element, self._config)
        return self._draw(st.lists(elements, min_size=min_size, max_size=max_size, unique_by=unique_by))


_BOOLEANS = st.booleans()


@lru_cache(maxsize=4096)
def _integers(low: int, high: int) -> SearchStrategy[int]:
    # Built once per range: building a strategy per draw cost more than the draw itself.
    return st.integers(low, high)


@st.composite
def _elements(draw: Callable[[SearchStrategy[Any]], Any], element: Callable[[Any], Any], config: _Config) -> Any:
    """A list element drawn by a generator step (defined once; composing a new strategy per list is slow)."""
    return element(_HypothesisDraw(draw, config))


@st.composite
def _scenarios(draw: Callable[[SearchStrategy[Any]], Any], config: _Config) -> Scenario:
    return build_scenario(_HypothesisDraw(draw, config), max_members=config.ranges["members"][1])


def _check_bounds(knob: str, low: Any, high: Any) -> tuple[int, int]:
    lo_name, hi_name = f"min_{knob}", f"max_{knob}"
    for name, value in ((lo_name, low), (hi_name, high)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidStrategyArgument(f"{name}={value!r} must be an integer")
    floor = RANGE_MINIMUM.get(knob, 0)
    if low < floor:
        raise InvalidStrategyArgument(f"{lo_name}={low!r} must be at least {floor}")
    if high < low:
        raise InvalidStrategyArgument(f"Cannot have {hi_name}={high!r} < {lo_name}={low!r}")
    if high > MAX_RANGE_VALUE:
        raise InvalidStrategyArgument(f"{hi_name}={high!r} must be at most {MAX_RANGE_VALUE}")
    return (low, high)


def _check_strategy(knob: str, value: Any) -> SearchStrategy[Any]:
    if not isinstance(value, SearchStrategy):
        example = ", ".join(map(repr, CHOICE_KNOBS[knob]))
        raise InvalidStrategyArgument(
            f"{knob}={value!r} must be a strategy, e.g. st.sampled_from([{example}]) "
            f"(pass st.just({value!r}) for a single value)"
        )
    return value


def groups(
    *,
    min_members: int = 1,
    max_members: int = 8,
    min_topics: int = 1,
    max_topics: int = 4,
    min_partitions: int = 1,
    max_partitions: int = 8,
    min_zero_partition_topics: int = 0,
    max_zero_partition_topics: int = 1,
    min_generation: int = 1,
    max_generation: int = 10,
    min_stale: int = 0,
    max_stale: int = 2,
    min_double_claims: int = 0,
    max_double_claims: int = 2,
    min_unknown_generation: int = 0,
    max_unknown_generation: int = 1,
    min_deleted_topic_claims: int = 0,
    max_deleted_topic_claims: int = 1,
    min_past_count_claims: int = 0,
    max_past_count_claims: int = 1,
    subscriptions: SearchStrategy[str] = st.sampled_from(SUBSCRIPTIONS),
    ownership: SearchStrategy[str] = st.sampled_from(OWNERSHIP),
    versions: SearchStrategy[int] = st.sampled_from(VERSIONS),
    protocols: SearchStrategy[str] = st.sampled_from(PROTOCOLS),
    racks: SearchStrategy[str] = st.sampled_from(RACKS),
    static: SearchStrategy[str] = st.sampled_from(STATIC),
    assignors: SearchStrategy[str] = st.sampled_from(ASSIGNORS),
    ids: SearchStrategy[str] = st.sampled_from(IDS),
) -> SearchStrategy[Scenario]:
    """Consumer groups at one rebalance, as ``Scenario`` values, over the scenario space.

    Sizes: ``min_members..max_members`` members (JoinGroup order as drawn, ids unique),
    ``min_topics..max_topics`` topics of ``min_partitions..max_partitions`` partitions each,
    plus ``min_zero_partition_topics..max_zero_partition_topics`` topics with none; the group is
    at generation ``min_generation..max_generation``. Hazard counts (each an inclusive range,
    capped by what the drawn group can hold): ``stale`` members rejoining from an older
    generation with claims the group reassigned, ``double_claims`` (two members of the same
    generation claim a partition), ``unknown_generation`` claimants (generation -1),
    ``deleted_topic_claims`` and ``past_count_claims``.

    Knobs drawn once per group are strategies: ``subscriptions`` (uniform, heterogeneous,
    nested, disjoint, empty), ``ownership`` (none, balanced, skewed, members-left,
    members-joined, partitions-added, partitions-deleted, topics-added, topics-deleted),
    ``protocols``, ``racks``, ``static``, ``assignors``, ``ids``; ``versions`` is drawn once
    per member. Pass ``st.just(x)`` to fix a knob. Every argument is validated here, naming
    ``arg=value`` and the rule broken.

    Examples shrink toward one member at version 3 subscribed to one topic of one partition,
    nothing owned, generation -1, eager, no racks, no hazards.
    """
    bounds = {
        "members": (min_members, max_members),
        "topics": (min_topics, max_topics),
        "partitions": (min_partitions, max_partitions),
        "zero_partition_topics": (min_zero_partition_topics, max_zero_partition_topics),
        "generation": (min_generation, max_generation),
        "stale": (min_stale, max_stale),
        "double_claims": (min_double_claims, max_double_claims),
        "unknown_generation": (min_unknown_generation, max_unknown_generation),
        "deleted_topic_claims": (min_deleted_topic_claims, max_deleted_topic_claims),
        "past_count_claims": (min_past_count_claims, max_past_count_claims),
    }
    ranges = {knob: _check_bounds(knob, *bounds[knob]) for knob in RANGE_KNOBS}
    knobs = {
        "subscriptions": subscriptions,
        "ownership": ownership,
        "versions": versions,
        "protocols": protocols,
        "racks": racks,
        "static": static,
        "assignors": assignors,
        "ids": ids,
    }
    strategies = {knob: _check_strategy(knob, knobs[knob]) for knob in CHOICE_KNOBS}
    return _scenarios(_Config(ranges, strategies))


def from_space(space: Space) -> SearchStrategy[Scenario]:
    """Groups over a ``Space`` (as parsed from ``--space KNOB=VALUE``): the sampler's space, searched by Hypothesis.

    Each choice knob becomes ``st.sampled_from`` of the space's values in their given order
    and each range knob a ``min_*``/``max_*`` pair of ``groups()``.

    Examples shrink toward each range's low end and each choice's first listed value.
    """
    if not isinstance(space, Space):
        raise InvalidStrategyArgument(f"space={space!r} must be a stickyproof.scenarios.Space")
    kwargs: dict[str, Any] = {}
    for f in fields(space):
        value = getattr(space, f.name)
        if f.name in RANGE_KNOBS:
            kwargs[f"min_{f.name}"], kwargs[f"max_{f.name}"] = value
        else:
            kwargs[f.name] = st.sampled_from(value)
    return groups(**kwargs)
