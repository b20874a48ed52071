"""Production assignors, faithful to Kafka's, and the registry that names them.

``get_assignor(name)`` / ``list_assignors()`` (``registry``) are the way in; the assignors are
plain functions ``GroupSubscription -> Assignment`` (``base.AssignorFn``):
``assign_range`` (``range``), ``assign_roundrobin`` (``roundrobin``), and the sticky core
(``sticky``), one registry row per ``releases.Release`` record (``releases.py`` also says how to
add a Kafka release).
"""

from .base import COOPERATIVE, EAGER, AssignorFn, GroupSubscription, Subscription
from .range import assign_range
from .registry import AssignorInfo, get_assignor, list_assignors
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
    "get_assignor",
    "list_assignors",
]
