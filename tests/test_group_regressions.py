"""Replay every simulation regression in tests/regressions/simulations/ (format: tests/regressions/README.md).

Each document runs through the same path as ``stickyproof simulate --scenario FILE`` and its
``expect`` object is checked: every listed monitor verdict, and optionally how the run ended,
whether a partition is still consumed twice at the end, and a message the trace must contain.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyproof.group import MONITORS, simulation_from_dict
from stickyproof.group.runner import run_simulation
from stickyproof.model import parse_json

from .checks import doubles as final_doubles

FOLDER = Path(__file__).parent / "regressions" / "simulations"
FILES = sorted(FOLDER.glob("*.json"))
EXPECT_KEYS = {"mechanism", "monitors", "final_double_consumption", "ended", "note_contains"}


def test_there_are_simulation_regressions():
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_simulation_regression(path):
    doc = simulation_from_dict(parse_json(path.read_bytes(), str(path)))
    expect = dict(doc.expect or {})
    assert set(expect) <= EXPECT_KEYS, f"unknown expect keys {sorted(set(expect) - EXPECT_KEYS)}"
    assert isinstance(expect.get("mechanism"), str) and len(expect["mechanism"]) > 40
    assert expect.get("monitors") and set(expect["monitors"]) <= set(MONITORS)
    assert doc.name == path.stem, "a simulation regression is named after its file"

    result = run_simulation(str(path))
    problems = []
    for monitor, holds in expect["monitors"].items():
        verdict = result.verdict(monitor)
        if verdict.ok != holds:
            first = verdict.first.message if verdict.first else "no violation"
            problems.append(f"{monitor}: expected {'to hold' if holds else 'a violation'}, got {first}")
    if "final_double_consumption" in expect and bool(final_doubles(result)) != expect["final_double_consumption"]:
        problems.append(f"final_double_consumption: expected {expect['final_double_consumption']}, got {final_doubles(result)}")
    if "ended" in expect and result.ended != expect["ended"]:
        problems.append(f"ended: expected {expect['ended']!r}, got {result.ended!r}")
    if "note_contains" in expect and not any(expect["note_contains"] in n for s in result.steps for n in s.notes):
        problems.append(f"no protocol message contains {expect['note_contains']!r}")
    assert not problems, "; ".join(problems)
