"""Scenario, Member, Topic, Assignment: the interchange format of docs/scenario-format.md as frozen values.

Readers enforce every rule of the format and raise ``InvalidScenario`` naming the JSON path and
the value (``members[2].owned.orders[1]: negative partition -3``); writers emit the canonical
document (defaults included, keys in a fixed order) so a round trip is the identity.

``Index`` interns members and partitions into dense integers in *sorted* order, so code that
works on arrays is deterministic whatever order the document listed things in.
"""

from .._json import parse_json
from .documents import (
    assignment_from_dict,
    assignment_to_dict,
    dump_json,
    jsonable,
    load_assignment,
    load_scenario,
    partitions_by_topic,
    scenario_from_dict,
    scenario_to_dict,
    topics_from_dict,
)
from .index import Index
from .values import (
    ASSIGNMENT_FORMAT,
    CLASSIC,
    CONSUMER,
    DEFAULT_GENERATION,
    GROUP_PROTOCOLS,
    INT32_MAX,
    MAX_VERSION,
    PROTOCOLS,
    SCENARIO_FORMAT,
    Assignment,
    Member,
    Scenario,
    Topic,
    TopicPartition,
    tp_map_to_dict,
)

__all__ = [
    "SCENARIO_FORMAT",
    "ASSIGNMENT_FORMAT",
    "PROTOCOLS",
    "GROUP_PROTOCOLS",
    "CLASSIC",
    "CONSUMER",
    "DEFAULT_GENERATION",
    "MAX_VERSION",
    "INT32_MAX",
    "TopicPartition",
    "Topic",
    "Member",
    "Scenario",
    "Assignment",
    "Index",
    "scenario_from_dict",
    "topics_from_dict",
    "scenario_to_dict",
    "assignment_from_dict",
    "assignment_to_dict",
    "parse_json",
    "load_scenario",
    "load_assignment",
    "dump_json",
    "jsonable",
    "partitions_by_topic",
    "tp_map_to_dict",
]
