"""The JSON Schemas in models/ agree with the readers in model/documents.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from stickyproof.errors import InvalidScenario
from stickyproof.model import assignment_from_dict, scenario_from_dict

from .test_model import EXAMPLE, RULES

MODELS = Path(__file__).resolve().parents[1] / "models"
SCENARIO_SCHEMA = json.loads((MODELS / "scenario.schema.json").read_text())
ASSIGNMENT_SCHEMA = json.loads((MODELS / "assignment.schema.json").read_text())

# Rules a JSON Schema cannot state; the reader enforces them alone. (JSON Schema counts 2.0 as an
# integer; the format does not: a float where an integer belongs is rejected by the reader. A lone
# UTF-16 surrogate is a string to JSON Schema; Kafka's UTF-8 strings cannot carry it.)
READER_ONLY = {"member id twice", "racks length", "float generation", "topic with a lone surrogate",
               "rack with a lone surrogate"}


def test_schemas_are_valid_json_schemas():
    jsonschema.Draft202012Validator.check_schema(SCENARIO_SCHEMA)
    jsonschema.Draft202012Validator.check_schema(ASSIGNMENT_SCHEMA)


def test_example_document_is_valid_under_both():
    jsonschema.validate(EXAMPLE, SCENARIO_SCHEMA)
    scenario_from_dict(EXAMPLE)


@pytest.mark.parametrize("rule, mutate, path, words", RULES, ids=[r[0] for r in RULES])
def test_schema_rejects_what_the_reader_rejects(rule, mutate, path, words):
    doc = copy.deepcopy(EXAMPLE)
    mutate(doc)
    with pytest.raises(InvalidScenario):
        scenario_from_dict(doc)
    errors = list(jsonschema.Draft202012Validator(SCENARIO_SCHEMA).iter_errors(doc))
    if rule in READER_ONLY:
        assert errors == []
    else:
        assert errors, f"schema accepted a document breaking rule {rule!r}"


def test_assignment_schema_matches_reader():
    doc = {"format": "stickyproof.assignment/1", "assignment": {"a": {"t": [0, 1]}, "b": {}}, "revoking": {"a": {"t": [2]}}}
    jsonschema.validate(doc, ASSIGNMENT_SCHEMA)
    assignment_from_dict(doc)
    bad = {**doc, "assignment": {"a": {"t": [-1]}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, ASSIGNMENT_SCHEMA)
    with pytest.raises(InvalidScenario):
        assignment_from_dict(bad)


def test_every_regression_and_kafka_case_file_is_valid_under_the_schema():
    root = Path(__file__).resolve().parent
    files = sorted((root / "regressions").glob("*.json")) + sorted((root / "kafka_cases").glob("*.json"))
    assert files
    validator = jsonschema.Draft202012Validator(SCENARIO_SCHEMA)
    for f in files:
        doc = json.loads(f.read_text())
        errors = [e.message for e in validator.iter_errors(doc)]
        assert not errors, f"{f.name}: {errors[:3]}"
