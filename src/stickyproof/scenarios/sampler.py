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

__all__ = ["sample", "derive_seed", "RandomDraw", "Space", "InvalidSpace", "scenario_features"]

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
