"""One fallback protocol for both sticky paths: the fast engine, else the faithful transcription.

Each sticky path has two engines that must give the same answer (tests/test_constrained.py and
tests/test_general.py check it on generated groups):

* a fast engine over dense integer ids (``constrained.constrained_fast``, ``general.general_fast``),
  written for well-formed input;
* the transcription of Kafka's builder (``reference/constrained.py``, ``reference/general.py``),
  which handles everything Kafka handles, its failure modes included (§10 K1: a kept claim past a
  topic's partition count desynchronises ``getUnassignedPartitions``; K3: the ``prevAssignment``
  lookup of a fixed member).

The fast engine either returns its result or raises ``Declined`` saying why the input is outside
the space it is written for; ``fast_or_reference`` then runs the transcription, which records the
reason. Every ``StickyResult`` says which engine computed it (``engine``) and, after a hand-over,
why (``declined``), so a slow run can be traced to its cause.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from .sticky_types import FAST, REFERENCE

__all__ = ["Declined", "fast_or_reference", "FAST", "REFERENCE"]

R = TypeVar("R")


class Declined(Exception):
    """Raised by a fast engine for input it is not written for; ``reason`` says which precondition failed.

    Never escapes ``fast_or_reference``: it is a hand-over, not an error (not a ``StickyproofError``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def fast_or_reference(fast: Callable[..., R], reference: Callable[..., R], *args: object) -> R:
    """``fast(*args)``, or, when it declines, ``reference(*args, declined=reason)``.

    The transcription is called with the decline reason so that the result it returns records it.
    """
    try:
        return fast(*args)
    except Declined as declined:
        return reference(*args, declined=declined.reason)
