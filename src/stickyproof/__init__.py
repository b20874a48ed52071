"""stickyproof: a verifier for Kafka consumer-group partition assignment."""

from .errors import (
    AssignorFailure,
    DecodeError,
    EncodeError,
    InvalidScenario,
    SolverError,
    StickyproofError,
    SweepError,
    UnknownAssignor,
)
from .model import Assignment, Index, Member, Scenario, Topic, TopicPartition

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "Assignment",
    "AssignorFailure",
    "DecodeError",
    "EncodeError",
    "Index",
    "InvalidScenario",
    "Member",
    "Scenario",
    "SolverError",
    "StickyproofError",
    "SweepError",
    "Topic",
    "TopicPartition",
    "UnknownAssignor",
]
