"""Replay every regression scenario in tests/regressions/ (format: tests/regressions/README.md).

Each file is run through the leader with its assignor and compared with its ``expect`` object;
an expectation that is not met fails. ``replay_file`` is the one replay every regression folder
uses (tests/regressions/peers/ through ``test_regressions_peers``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from stickyproof.errors import StickyproofError
from stickyproof.model import assignment_from_dict, assignment_to_dict, parse_json, scenario_from_dict

from .checks import kept_claims

REGRESSIONS = Path(__file__).parent / "regressions"
FILES = sorted(REGRESSIONS.glob("*.json"))
OUTCOME_KEYS = {
    "error", "kafka_exception", "error_message", "check", "grade", "assignment", "revoking", "balance",
    "nondeterministic", "kept_below",
}
OUTCOMES = ("error", "kafka_exception", "check", "grade", "assignment", "nondeterministic", "kept_below")
#: Runs of one group for the repeated outcomes (an assignor whose answer depends on chance: peers).
REPEATS = 50
# Documentation keys.
EXTRA_KEYS = {"kafka_rules"}
EXPECT_KEYS = {"assignor", "mechanism", "direct"} | OUTCOME_KEYS | EXTRA_KEYS
def _check_outcome(where: str, outcome: dict[str, Any]) -> None:
    assert any(k in outcome for k in OUTCOMES), f"{where}: expect needs one of {', '.join(OUTCOMES)}"
    failing = {"error", "kafka_exception"} & set(outcome)
    assert not failing or not ({"check", "grade", "assignment", "revoking"} & set(outcome)), (
        f"{where}: an expected error excludes expectations on the assignment"
    )


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
    direct = expect.get("direct", False)
    assert isinstance(direct, (bool, dict)), f"{path.name}: expect.direct is true/false or an object of outcomes"
    _check_outcome(path.name, expect)
    if isinstance(direct, dict):
        unknown = set(direct) - OUTCOME_KEYS
        assert not unknown, f"{path.name}: unknown expect.direct keys {sorted(unknown)}"
        _check_outcome(f"{path.name} (direct)", direct)
    return scenario, expect


def runs_of(expect: dict[str, Any]) -> list[tuple[bool, dict[str, Any]]]:
    """(direct?, outcome expectations) for each run a file asks for: the main one, and a direct one
    when ``direct`` is an object (the same group with the wire bypassed)."""
    direct = expect.get("direct", False)
    main = {k: v for k, v in expect.items() if k in OUTCOME_KEYS}
    if isinstance(direct, dict):
        return [(False, main), (True, direct)]
    return [(bool(direct), main)]


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


def _error_problem(exc: StickyproofError | None, outcome: dict[str, Any]) -> str | None:
    want = outcome.get("error") or outcome.get("kafka_exception")
    if exc is None:
        return f"expected error {want}, but the run succeeded"
    java = getattr(exc, "kafka_exception", None) or ""
    names = {type(exc).__name__, java, java.rsplit(".", 1)[-1]}
    if want not in names:
        return f"expected error {want}, got {type(exc).__name__} ({java or 'no Kafka exception'}): {exc}"
    if "error_message" in outcome and outcome["error_message"] not in str(exc):
        return f"expected the error message to contain {outcome['error_message']!r}, got: {exc}"
    return None


def replay(leader, scenario, assignor: str, direct: bool, outcome: dict[str, Any]) -> list[str]:
    """Run one rebalance and compare it with ``outcome``: the problems found."""
    tag = "direct: " if direct else ""
    if scenario.is_consumer_group:  # KIP-848: no leader; the coordinator hands the assignor its GroupSpec
        leader = _Coordinator()
    if "error" in outcome or "kafka_exception" in outcome:
        try:
            leader.lead(scenario, assignor, direct=direct)
        except StickyproofError as exc:
            problem = _error_problem(exc, outcome)
        else:
            problem = _error_problem(None, outcome)
        return [tag + problem] if problem else []

    result = leader.lead(scenario, assignor, direct=direct)
    problems: list[str] = []
    if "nondeterministic" in outcome or "kept_below" in outcome:
        problems += [tag + p for p in _repeated(leader, scenario, assignor, direct, outcome)]
    if "assignment" in outcome or "revoking" in outcome:
        got = assignment_to_dict(result.assignment)
        want = assignment_to_dict(
            assignment_from_dict(
                {
                    "format": "stickyproof.assignment/1",
                    "assignment": outcome.get("assignment", {}),
                    "revoking": outcome.get("revoking", {}),
                }
            )
        )
        for key in ("assignment", "revoking"):
            # A member with nothing may be left out of the expectation (peers' files do).
            got[key] = {m: v for m, v in got[key].items() if v or m in outcome.get(key, {})}
            if key in outcome and got[key] != want[key]:
                problems.append(f"{tag}{key}: expected {want[key]}, got {got[key]}")

    if "check" in outcome:
        from stickyproof.oracle.invariants import check_assignment

        checked = check_assignment(scenario, result.assignment, balance=outcome.get("balance"))
        problems += [tag + p for p in _compare_record("check", checked.to_dict(), outcome["check"], list(checked.violated()))]

    if "grade" in outcome:
        from stickyproof.grading import grade_assignor

        graded = grade_assignor(scenario, assignor, direct=direct, balance=outcome.get("balance"))
        problems += [tag + p for p in _compare_record("grade", graded.to_dict(), outcome["grade"], list(graded.violated()))]
    return problems


class _Coordinator:
    """``leader.lead``'s shape for a consumer group: the server-side assignor run as the coordinator runs it."""

    @staticmethod
    def lead(scenario, assignor, *, direct=False):
        from types import SimpleNamespace

        from stickyproof.grading import consumer_group_run
        from stickyproof.lookup import get_assignor

        return SimpleNamespace(assignment=consumer_group_run(get_assignor(assignor))(scenario))


def _repeated(leader, scenario, assignor, direct: bool, outcome: dict[str, Any]) -> list[str]:
    """``nondeterministic``: ``REPEATS`` runs give at least two different answers (partition sets per
    member). ``kept_below``: some run keeps fewer than that many of the members' claims on existing
    partitions of topics they subscribe to (each kept by the member claiming it)."""
    runs = [leader.lead(scenario, assignor, direct=direct).assignment for _ in range(REPEATS)]
    problems = []
    if outcome.get("nondeterministic"):
        answers = {frozenset((m, frozenset(tps)) for m, tps in a.assignment.items() if tps) for a in runs}
        if len(answers) < 2:
            problems.append(f"nondeterministic: expected two answers or more in {REPEATS} runs, got one")
    if "kept_below" in outcome:
        kept = [kept_claims(scenario, a) for a in runs]
        if min(kept) >= outcome["kept_below"]:
            problems.append(f"kept_below: expected a run keeping fewer than {outcome['kept_below']}, kept {sorted(set(kept))}")
    return problems


def test_there_are_regressions_to_replay():
    assert FILES, "tests/regressions/ holds no scenario files"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_regression_file_is_well_formed(path):
    scenario, expect = load_regression(path)
    assert scenario.name == path.stem, f"{path.name}: name should be the file's stem"
    for _, outcome in runs_of(expect):
        if "assignment" in outcome:
            full = {"format": "stickyproof.assignment/1", "assignment": outcome["assignment"], "revoking": outcome.get("revoking", {})}
            assignment_from_dict(full)
            assert set(outcome["assignment"]) == {m.id for m in scenario.members}, f"{path.name}: list every member"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_regression(path):
    replay_file(path)


def replay_file(path: Path, assignor: Any = None) -> None:
    """Replay one regression file with its assignor (or ``assignor``, an ``AssignorInfo`` standing for
    it) and fail naming every unmet expectation and the file's mechanism."""
    from stickyproof import leader

    scenario, expect = load_regression(path)
    assert scenario.name == path.stem, f"{path.name}: name should be the file's stem"
    problems: list[str] = []
    for direct, outcome in runs_of(expect):
        problems += replay(leader, scenario, assignor or expect["assignor"], direct, outcome)
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems) + f"\nmechanism: {expect['mechanism']}"


def test_regression_files_read_as_scenarios_and_keep_their_expectation(tmp_path):
    # Every command reads a regression file as a scenario (the reader ignores "expect"), so
    # `stickyproof grade FILE --assignor NAME` replays it; load_regression also returns the expectation.
    doc = json.loads(FILES[0].read_text())
    assert scenario_from_dict(doc).members
    scenario, expect = load_regression(FILES[0])
    assert scenario == scenario_from_dict(doc)
    assert expect == doc["expect"]
