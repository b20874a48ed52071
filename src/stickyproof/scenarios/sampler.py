"""The seeded sampler: the scenario space's distribution without Hypothesis at run time.

``sample(seed, index, space)`` is a pure function of its arguments: the same triple gives the
same scenario in any process, on any machine, under any Python 3 version, so a Spark task can
regenerate scenario ``index`` of sweep ``seed`` from those two integers alone.

Why it is stable: the per-scenario seed is a BLAKE2b digest of ``"{seed}:{index}"`` (never
``hash()``, which is salted per process), and every random choice is built from
``random.Random.random()`` only: the one method whose output sequence Python guarantees for an
integer seed across versions (``randrange``/``choice`` are documented as free to change).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Callable, Hashable, Sequence, TypeVar

from ..model import Scenario
from .features import scenario_features
from .generate import Draw, build_scenario
from .space import InvalidSpace, Space

__all__ = [
    "sample",
    "derive_seed",
    "RandomDraw",
    "Space",
    "InvalidSpace",
    "scenario_features",
    "HYPOTHESIS_BUFFER",
    "smallest_draw",
    "check_hypothesis_budget",
]

T = TypeVar("T")

_CHUNK = 2**32


def derive_seed(seed: int, index: int) -> int:
    """The 64-bit seed of scenario ``index`` of sweep ``seed`` (BLAKE2b of ``"{seed}:{index}"``)."""
    digest = hashlib.blake2b(f"{seed}:{index}".encode("ascii"), digest_size=8, person=b"stickyproof").digest()
    return int.from_bytes(digest, "big")


class RandomDraw(Draw):
    """``generate.Draw`` over a ``random.Random``: uniform over each knob's range or choices."""

    def __init__(self, rng: random.Random, space: Space):
        self._rng = rng
        self._space = space

    def _below(self, n: int) -> int:
        """Uniform in ``0..n-1`` from ``random()`` alone (32 bits per call; exact for powers of two)."""
        if n <= _CHUNK:
            return min(n - 1, int(self._rng.random() * n))
        value, span = 0, 1
        while span < n:
            value = value * _CHUNK + int(self._rng.random() * _CHUNK)
            span *= _CHUNK
        return value % n

    def integer(self, low: int, high: int) -> int:
        if high < low:
            raise ValueError(f"empty range {low}..{high}")
        if high == low:
            return low
        return low + self._below(high - low + 1)

    def boolean(self) -> bool:
        return self._rng.random() < 0.5

    def choice(self, values: Sequence[T]) -> T:
        return values[self.integer(0, len(values) - 1)]

    def bounds(self, knob: str) -> tuple[int, int]:
        return getattr(self._space, knob)

    def knob(self, knob: str) -> Any:
        return self.choice(getattr(self._space, knob))

    def lists(
        self,
        element: Callable[[Any], T],
        *,
        min_size: int,
        max_size: int,
        unique_by: Callable[[T], Hashable] | None = None,
    ) -> list[T]:
        """Draw the size, then elements; a duplicate key is redrawn, as Hypothesis' unique lists do."""
        size = self.integer(min_size, max_size)
        out: list[T] = []
        seen: set[Hashable] = set()
        attempts = 0
        while len(out) < size:
            item = element(self)
            if unique_by is not None:
                key = unique_by(item)
                if key in seen:
                    attempts += 1
                    if attempts > 10 * size + 100:  # pragma: no cover - id spaces are 4x the member count
                        raise InvalidSpace("members", f"could not draw {size} distinct member ids")
                    continue
                seen.add(key)
            out.append(item)
        return out


# ------------------------------------------------------------------------------------------
# What a space costs Hypothesis (the hunt's driver) to draw

#: Hypothesis's bound on what one example may draw (``hypothesis.internal.conjecture.engine.BUFFER_SIZE``,
#: in its choice bytes: 1 per boolean, 1 + bit_length // 8 per integer). A group needing more overruns
#: on every draw, and the hunt ends with nothing drawn after minutes (``members=2000``: 287 s).
HYPOTHESIS_BUFFER = 8 * 1024


class _OverBudget(Exception):
    pass


class _CountingDraw(RandomDraw):
    """``RandomDraw`` that counts each choice as Hypothesis sizes it, stopping past ``budget``."""

    def __init__(self, rng: random.Random, space: Space, budget: int):
        super().__init__(rng, space)
        self.spent = 0
        self.budget = budget

    def _spend(self, n: int) -> None:
        self.spent += n
        if self.spent > self.budget:
            raise _OverBudget

    def integer(self, low: int, high: int) -> int:
        value = super().integer(low, high)
        self._spend(1 + abs(value).bit_length() // 8)
        return value

    def boolean(self) -> bool:
        self._spend(1)
        return super().boolean()

    def lists(self, element: Callable[[Any], T], *, min_size: int, max_size: int,
              unique_by: Callable[[T], Hashable] | None = None) -> list[T]:
        self._spend(min_size + 1)  # one "another element?" choice per element, and the one that stops
        return super().lists(element, min_size=min_size, max_size=min_size, unique_by=unique_by)


def smallest_draw(space: Space, budget: int = HYPOTHESIS_BUFFER) -> int:
    """Choice bytes Hypothesis spends on the smallest group of ``space`` (every range at its low bound,
    every choice knob at its first value: where Hypothesis shrinks to), or ``budget + 1`` once past
    ``budget`` (counting stops there, so this is cheap whatever the space)."""
    from dataclasses import fields, replace

    from .space import RANGE_KNOBS

    low = replace(space, **{f.name: (getattr(space, f.name)[0],) * 2 if f.name in RANGE_KNOBS else getattr(space, f.name)[:1]
                            for f in fields(space)})
    draw = _CountingDraw(random.Random(0), low, budget)
    try:
        build_scenario(draw, max_members=space.members[1])
    except _OverBudget:
        return budget + 1
    return draw.spent


def check_hypothesis_budget(space: Space) -> None:
    """``InvalidSpace`` naming the knob when Hypothesis could never draw the smallest group of ``space``
    (what ``hunt`` checks before it starts, instead of failing after minutes)."""
    from dataclasses import replace

    from .space import RANGE_KNOBS

    needed = smallest_draw(space)
    if needed <= HYPOTHESIS_BUFFER:
        return
    default = Space()
    # Name the knob whose lower bound, put back to its default, saves the most.
    best, best_cost = "members", needed
    for knob in RANGE_KNOBS:
        lo, hi = getattr(space, knob)
        base = getattr(default, knob)[0]
        if lo > base:
            cost = smallest_draw(replace(space, **{knob: (base, max(base, hi))}))
            if cost < best_cost:
                best, best_cost = knob, cost
    lo = getattr(space, best)[0]
    raise InvalidSpace(
        best,
        f"{best}={lo}..: the smallest group of this space needs more than the {HYPOTHESIS_BUFFER:,} bytes of choices "
        "Hypothesis lets one example draw, so the hunt could never draw one; lower its lower bound (or use "
        "'stickyproof sweep', whose seeded sampler has no such bound)",
    )


def sample(seed: int, index: int, space: Space | None = None) -> Scenario:
    """Scenario ``index`` of the sweep seeded ``seed`` over ``space`` (default: ``Space()``).

    Named ``sample-{seed}-{index}`` so a report row leads back to its generator call.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidSpace("seed", f"expected an integer, got {seed!r}")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise InvalidSpace("index", f"expected a non-negative integer, got {index!r}")
    space = space if space is not None else Space()
    draw = RandomDraw(random.Random(derive_seed(seed, index)), space)
    return build_scenario(draw, name=f"sample-{seed}-{index}", max_members=space.members[1])
