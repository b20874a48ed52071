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
import time
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
    "drawable_share",
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
#: in its choice bytes: 1 per boolean, 1 + bit_length // 8 per integer). A draw needing more is thrown
#: away; when most draws of a space need more, Hypothesis finds an example only after minutes, or
#: never (``hunt --space members=2000`` ended after 287 s with nothing drawn).
HYPOTHESIS_BUFFER = 8 * 1024
#: What ``hunt`` asks of a space before it starts: at least ``DRAWABLE_SHARE`` of ``DRAW_SAMPLES``
#: seeded draws at the space's smallest sizes fit in ``DRAW_HEADROOM`` of the buffer. Calibrated on
#: this generator (Hypothesis 6.170): members=1000 (35 % fit) drew 3 examples in 7 s, members=1100
#: (21 %) one in 188 s, members=1300 (6 %) one in 172 s; with the cheapest choice knobs fixed,
#: members=1500 (every draw at 81 % of the buffer) drew 3 in 0.7 s, members=1800 (96 %) one in 251 s.
DRAW_HEADROOM = 0.85
DRAWABLE_SHARE = 0.25
DRAW_SAMPLES = 48
DRAW_SECONDS = 2.0


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


def drawable_share(space: Space, samples: int = DRAW_SAMPLES) -> float:
    """The share of seeded draws of ``space``, every range knob at its low bound (Hypothesis grows
    sizes from there) and every choice knob drawn from the space's own values, whose choices fit in
    ``DRAW_HEADROOM`` of Hypothesis's buffer. Counting stops at the budget, so this is cheap."""
    from dataclasses import fields, replace

    from .space import RANGE_KNOBS

    low = replace(space, **{f.name: (getattr(space, f.name)[0],) * 2 for f in fields(space) if f.name in RANGE_KNOBS})
    budget = int(HYPOTHESIS_BUFFER * DRAW_HEADROOM)
    fits = tried = 0
    started = time.perf_counter()
    for i in range(samples):
        # A group that fits can still be slow to build (10,000 partitions owned by one member): stop
        # sampling after a couple of seconds, with at least 4 draws judged.
        if tried >= 4 and time.perf_counter() - started > DRAW_SECONDS:
            break
        tried += 1
        try:
            build_scenario(_CountingDraw(random.Random(i), low, budget), max_members=space.members[1])
        except _OverBudget:
            continue
        fits += 1
    return fits / tried


def check_hypothesis_budget(space: Space) -> None:
    """``InvalidSpace`` naming a knob when Hypothesis would seldom or never draw a group of ``space``
    (what ``hunt`` checks before it starts, instead of running for minutes without an example)."""
    from dataclasses import replace

    from .space import RANGE_KNOBS

    share = drawable_share(space)
    if share >= DRAWABLE_SHARE:
        return
    default = Space()
    # Name the range knob whose lower bound, put back to its default, helps the most.
    best, best_share = "members", share
    for knob in RANGE_KNOBS:
        lo, hi = getattr(space, knob)
        base = getattr(default, knob)[0]
        if lo > base:
            helped = drawable_share(replace(space, **{knob: (base, max(base, hi))}), samples=16)
            if helped > best_share:
                best, best_share = knob, helped
    lo = getattr(space, best)[0]
    raise InvalidSpace(
        best,
        f"{best}={lo}..: only {share:.0%} of this space's smallest groups fit in the {HYPOTHESIS_BUFFER:,} bytes of "
        "choices Hypothesis lets one example draw, so the hunt would run for minutes without an example; lower it "
        "(or fix cheaper choices: ids=plain, subscriptions=uniform, racks=none), or use 'stickyproof sweep', whose "
        "seeded sampler has no such bound (docs/limits.md)",
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
