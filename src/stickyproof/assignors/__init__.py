"""Production assignors, faithful to Kafka's, and the registry that names them.

``list_assignors()`` (``registry``) lists the built-ins and ``AssignorInfo`` (``info``) is what every
assignor is run through; ``stickyproof.lookup.get_assignor(name)`` turns any name into one. The assignors are
plain functions ``GroupSubscription -> Assignment`` (``base.AssignorFn``):
``assign_range`` (``range``), ``assign_roundrobin`` (``roundrobin``), and the sticky core
(``sticky``), one registry row per ``releases.Release`` record (``releases.py`` also says how to
add a Kafka release).
"""

from .base import COOPERATIVE, EAGER, AssignorFn, GroupSubscription, Subscription
from .range import assign_range
from .info import AssignorInfo
from .registry import list_assignors
from .roundrobin import assign_roundrobin

__all__ = [
    "AssignorFn",
    "AssignorInfo",
    "COOPERATIVE",
    "EAGER",
    "GroupSubscription",
    "Subscription",
    "assign_range",
    "assign_roundrobin",
    "list_assignors",
]
