"""The Hypothesis driver of the scenario space: ``generate.Draw`` over ``data.draw``.

``stickyproof.strategies`` (the façade users import) holds ``groups()``, its arguments and what
is reachable by default; this module holds the drawing (``_scenarios_from``), ``from_space`` and
the argument validation both share.
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
from .space import CHOICE_KNOBS, MAX_RANGE_VALUE, RANGE_KNOBS, RANGE_MINIMUM, Space

__all__ = ["from_space", "InvalidStrategyArgument"]

T = TypeVar("T")


class InvalidStrategyArgument(StickyproofError, InvalidArgument):
    """An argument of ``groups()`` / ``from_space()`` that can generate nothing sensible.

    Derives from Hypothesis' ``InvalidArgument`` (so Hypothesis reports it as a usage error)
    and from ``StickyproofError`` (so the CLI prints it as one line, exit 2).
    """


@dataclass(frozen=True)
class _Config:
    """How one strategy draws: each range knob's bounds and each choice knob's strategy.

    ``crowd``: where the member range allows both one member and several, two or more are drawn
    and fewer than one group in ten is cut to its first member (``_GROUP_OF_ONE``; Hypothesis
    alone draws one member in most groups, where an assignor has no choice to make).
    ``cooperative_versions``: the ``versions`` strategy a member of a cooperative group draws from
    (None: the same as any member's).
    """

    ranges: Mapping[str, tuple[int, int]]
    strategies: Mapping[str, SearchStrategy[Any]]
    crowd: bool = False
    cooperative_versions: SearchStrategy[Any] | None = None


class _HypothesisDraw(Draw):
    """``generate.Draw`` over a composite's ``draw``: every choice shrinks toward low/False/first/short.

    ``protocol`` is the group's, once drawn: a member's version may depend on it (``_Config``).
    """

    def __init__(self, draw: Callable[[SearchStrategy[Any]], Any], config: _Config, protocol: str | None = None):
        self._draw = draw
        self._config = config
        self._protocol = protocol

    def integer(self, low: int, high: int) -> int:
        return self._draw(_integers(low, high))

    def boolean(self) -> bool:
        return self._draw(_BOOLEANS)

    def choice(self, values: Sequence[T]) -> T:
        return self._draw(st.sampled_from(values))

    def bounds(self, knob: str) -> tuple[int, int]:
        low, high = self._config.ranges[knob]
        if knob == "members" and self._crowd():
            return (2, high)
        return (low, high)

    def group_of_one(self) -> bool:
        return self._crowd() and self._draw(_GROUP_OF_ONE)

    def _crowd(self) -> bool:
        low, high = self._config.ranges["members"]
        return self._config.crowd and low < 2 <= high

    def knob(self, knob: str) -> Any:
        strategy = self._config.strategies[knob]
        if knob == "versions" and self._protocol == "cooperative" and self._config.cooperative_versions is not None:
            strategy = self._config.cooperative_versions
        value = self._draw(strategy)
        allowed = CHOICE_KNOBS[knob]
        if value not in allowed or isinstance(value, bool):
            raise InvalidStrategyArgument(
                f"{knob}= drew {value!r}, which is not one of {', '.join(map(repr, allowed))}"
            )
        if knob == "protocols":
            self._protocol = value
        return value

    def lists(
        self,
        element: Callable[[Any], T],
        *,
        min_size: int,
        max_size: int,
        unique_by: Callable[[T], Hashable] | None = None,
    ) -> list[T]:
        elements = _elements(element, self._config, self._protocol)
        return self._draw(st.lists(elements, min_size=min_size, max_size=max_size, unique_by=unique_by))


_BOOLEANS = st.booleans()
#: Whether a crowd drawn where one member is allowed is cut to its first member: in fewer than one
#: group in ten. Hypothesis draws an integer's simplest value (0) in about half the groups and
#: spreads the rest, so only the highest of seven values cuts (8-9 % of 300 draws at two seeds;
#: benchmarks/groups_distribution.py measures 2,000). The cut comes after the members are drawn,
#: so shrinking it away (to a group of two) changes no other choice; a failure that needs one
#: member keeps it.
_GROUP_OF_ONE = st.integers(0, 6).map(lambda n: n == 6)


@lru_cache(maxsize=4096)
def _integers(low: int, high: int) -> SearchStrategy[int]:
    # Built once per range: building a strategy per draw cost more than the draw itself.
    return st.integers(low, high)


@st.composite
def _elements(
    draw: Callable[[SearchStrategy[Any]], Any], element: Callable[[Any], Any], config: _Config, protocol: str | None
) -> Any:
    """A list element drawn by a generator step (defined once; composing a new strategy per list is slow)."""
    return element(_HypothesisDraw(draw, config, protocol))


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


def _scenarios_from(
    ranges: Mapping[str, tuple[int, int]],
    strategies: Mapping[str, SearchStrategy[Any]],
    *,
    crowd: bool = False,
    cooperative_versions: SearchStrategy[Any] | None = None,
):
    """The drawing behind ``groups()`` and ``from_space()``: ``ranges`` for every range knob
    (already checked), ``strategies`` for every choice knob, ``crowd`` and ``cooperative_versions``
    as ``_Config`` says. Private (the façade imports it): its arguments are validated by its two
    callers, and a user draws through them."""
    return _scenarios(_Config(ranges, strategies, crowd, cooperative_versions))


def from_space(space: Space) -> SearchStrategy[Scenario]:
    """Groups over a ``Space`` (as parsed from ``--space KNOB=VALUE``): the sampler's space, searched by Hypothesis.

    Each choice knob becomes ``st.sampled_from`` of the space's values in their given order
    and each range knob a ``min_*``/``max_*`` pair of ``groups()``. The space is drawn as it
    stands: its hazard ranges (``stale``, ``double_claims``...) and its versions and protocols are
    taken as given, with none of the reachability ``groups()`` applies by default, and a group of
    one member is as likely as Hypothesis makes it (the hunt's and the sweeps' space, unchanged).

    Examples shrink toward each range's low end and each choice's first listed value.
    """
    if not isinstance(space, Space):
        raise InvalidStrategyArgument(f"space={space!r} must be a stickyproof.scenarios.Space")
    ranges: dict[str, tuple[int, int]] = {}
    strategies: dict[str, SearchStrategy[Any]] = {}
    for f in fields(space):
        value = getattr(space, f.name)
        if f.name in RANGE_KNOBS:
            ranges[f.name] = _check_bounds(f.name, *value)
        else:
            strategies[f.name] = st.sampled_from(value)
    return _scenarios_from(ranges, strategies)
