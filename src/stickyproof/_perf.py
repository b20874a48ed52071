"""Performance helpers shared by hot paths (not rules: nothing here decides an assignment or a grade)."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a million immutable tuples.

    The tuples hold only strings and ints, so they can never form cycles; without this, every
    700 allocations trigger a young-generation scan and building 10^6 partitions takes twice as long.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
