"""Replay every regression scenario in tests/regressions/ (format: tests/regressions/README.md).

Each file is run through the leader with its assignor and compared with its ``expect`` object.
A file is skipped only while a module it needs does not exist yet, with that module named;
an expectation that is not met fails.
"""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from stickyproof.errors import StickyproofError
from stickyproof.model import assignment_from_dict, assignment_to_dict, parse_json, scenario_from_dict

REGRESSIONS = Path(__file__).parent / "regressions"
FILES = sorted(REGRESSIONS.glob("*.json"))
EXPECT_KEYS = {"assignor", "mechanism", "direct", "balance", "error", "error_message", "check", "grade", "assignment", "revoking"}
OUTCOMES = ("error", "check", "grade", "assignment")
PENDING_MODULES = {"stickyproof.leader", "stickyproof.oracle.invariants", "stickyproof.oracle.grade"}


def _module(name: str):
    """Import ``name``; a missing *pending* module is a skip reason (returned as str), anything else raises."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name in PENDING_MODULES:
            return f"{exc.name} does not exist yet"
        raise


def load_regression(path: Path) -> tuple[Any, dict[str, Any]]:
    doc = parse_json(path.read_bytes(), str(path))
    assert isinstance(doc, dict) and "expect" in doc, f"{path.name}: no top-level 'expect' object"
    expect = doc.pop("expect")
    scenario = scenario_from_dict(doc)
    assert isinstance(expect, dict), f"{path.name}: 'expect' must be an object"
    unknown = set(expect) - EXPECT_KEYS
    assert not unknown, f"{path.name}: unknown expect keys {sorted(unknown)}"
    assert isinstance(expect.get("assignor"), str) and expect["assignor"], f"{path.name}: expect.assignor is required"
    assert isinstance(expect.get("mechanism"), str) and len(expect["mechanism"]) > 20, f"{path.name}: expect.mechanism is required"
    assert any(k in expect for k in OUTCOMES), f"{path.name}: expect needs one of {', '.join(OUTCOMES)}"
    assert "error" not in expect or not (set(expect) & {"check", "grade", "assignment"}), (
        f"{path.name}: an expected error excludes expectations on the assignment"
    )
    return scenario, expect


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, float) or isinstance(actual, float):
        return actual is not None and expected is not None and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
    return actual == expected


def _compare_record(kind: str, record: dict[str, Any], expected: dict[str, Any], violated: list[str]) -> list[str]:
    problems = []
    for key, want in expected.items():
        if key == "violations":
            got: Any = sorted(set(violated))
            want = sorted(set(want))
        elif key == "deferred":
            got, want = sorted(record.get(key, [])), sorted(want)
        else:
            if key not in record:
                problems.append(f"{kind}.{key}: the {kind} record has no such field")
                continue
            got = record[key]
        if not _same(got, want):
            problems.append(f"{kind}.{key}: expected {want!r}, got {got!r}")
    return problems


def _error_matches(exc: StickyproofError, expect: dict[str, Any]) -> str | None:
    want = expect["error"]
    java = getattr(exc, "kafka_exception", None) or ""
    names = {type(exc).__name__, java, java.rsplit(".", 1)[-1]}
    if want not in names:
        return f"expected error {want}, got {type(exc).__name__} ({java or 'no Kafka exception'}): {exc}"
    if "error_message" in expect and expect["error_message"] not in str(exc):
        return f"expected the error message to contain {expect['error_message']!r}, got: {exc}"
    return None


def test_there_are_regressions_to_replay():
    assert FILES, "tests/regressions/ holds no scenario files"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_regression_file_is_well_formed(path):
    scenario, expect = load_regression(path)
    assert scenario.name == path.stem, f"{path.name}: name should be the file's stem"
    if "assignment" in expect:
        full = {"format": "stickyproof.assignment/1", "assignment": expect["assignment"], "revoking": expect.get("revoking", {})}
        assignment_from_dict(full)
        assert set(expect["assignment"]) == {m.id for m in scenario.members}, f"{path.name}: list every member"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_regression(path):
    scenario, expect = load_regression(path)
    leader = _module("stickyproof.leader")
    if isinstance(leader, str):
        pytest.skip(leader)
    direct = bool(expect.get("direct", False))
    assignor = expect["assignor"]

    if "error" in expect:
        with pytest.raises(StickyproofError) as info:
            leader.lead(scenario, assignor, direct=direct)
        problem = _error_matches(info.value, expect)
        assert problem is None, f"{path.name}: {problem}\nmechanism: {expect['mechanism']}"
        return

    result = leader.lead(scenario, assignor, direct=direct)
    problems: list[str] = []
    pending: list[str] = []

    if "assignment" in expect:
        got = assignment_to_dict(result.assignment)
        want = assignment_to_dict(
            assignment_from_dict(
                {"format": "stickyproof.assignment/1", "assignment": expect["assignment"], "revoking": expect.get("revoking", {})}
            )
        )
        if got["assignment"] != want["assignment"]:
            problems.append(f"assignment: expected {want['assignment']}, got {got['assignment']}")
        if "revoking" in expect and got["revoking"] != want["revoking"]:
            problems.append(f"revoking: expected {want['revoking']}, got {got['revoking']}")

    if "check" in expect:
        invariants = _module("stickyproof.oracle.invariants")
        if isinstance(invariants, str):
            pending.append(invariants)
        else:
            checked = invariants.check_assignment(scenario, result.assignment, balance=expect.get("balance"))
            problems += _compare_record("check", checked.to_dict(), expect["check"], list(checked.violated()))

    if "grade" in expect:
        grading = _module("stickyproof.oracle.grade")
        if isinstance(grading, str):
            pending.append(grading)
        else:
            graded = grading.grade(
                scenario,
                run=lambda s: leader.lead(s, assignor, direct=direct).assignment,
                view=scenario if direct else leader.decoded_view(scenario, assignor),
                assignor=assignor,
                balance=expect.get("balance"),
            )
            record = graded.to_dict()
            violated = [v["invariant"] if isinstance(v, dict) else getattr(v, "invariant", v) for v in record.get("violations", [])]
            problems += _compare_record("grade", record, expect["grade"], violated)

    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems) + f"\nmechanism: {expect['mechanism']}"
    if pending:
        pytest.skip("; ".join(pending))


def test_expect_is_stripped_before_reading_the_scenario(tmp_path):
    # The scenario reader rejects unknown keys, so a regression file is not a scenario file as is.
    doc = json.loads(FILES[0].read_text())
    from stickyproof.errors import InvalidScenario

    with pytest.raises(InvalidScenario, match="expect"):
        scenario_from_dict(doc)
    scenario, _ = load_regression(FILES[0])
    assert scenario.members
