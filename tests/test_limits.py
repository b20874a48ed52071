"""``grading.Limits``: each field bounds one thing, every command's ``--help`` states the default in
force, and the assignor-call limit reaches every call (the grader's, the simulator's and a
history's), carried with the resolved assignor and never lost to a lookup by name."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import pytest

from stickyproof.assignors.info import AssignorInfo
from stickyproof.cli import build_parser
from stickyproof.errors import AssignorTimeLimit, InvalidOption
from stickyproof.grading import OUT_OF_PROCESS_CALL_SECONDS, Limits, bounded
from stickyproof.hunt import DEFAULT_LIMITS as HUNT_LIMITS
from stickyproof.lookup import get_assignor
from stickyproof.sweep.run import DEFAULT_LIMITS as SWEEP_LIMITS

ROOT = Path(__file__).resolve().parents[1]


def _subcommand(name: str):
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices[name]


@pytest.mark.parametrize("command, defaults", [("grade", Limits()), ("assign", Limits()), ("solve", Limits(cpsat_seconds=60.0)),
                                               ("hunt", HUNT_LIMITS), ("sweep", SWEEP_LIMITS)])
def test_every_limit_flag_defaults_to_the_value_in_force(command, defaults):
    sub = _subcommand(command)
    flags = {a.dest: a for a in sub._actions if a.dest in {f.name for f in fields(Limits)}}
    assert flags, f"{command} has no limit flags"
    for name, action in flags.items():
        assert action.default == getattr(defaults, name), f"{command} --{name}: default differs from the one in force"
        shown = "none" if action.default is None else f"{action.default:g}"
        assert f"(default {shown}" in action.help, f"{command} --{name}: --help does not state {shown}"


def test_the_assignor_limit_help_states_the_out_of_process_bound():
    action = next(a for a in _subcommand("grade")._actions if a.dest == "assignor_seconds")
    assert f"{OUT_OF_PROCESS_CALL_SECONDS:g} for an assignor in another process" in action.help


def test_the_sweep_bounds_triage_in_total_and_each_shrink_separately():
    assert SWEEP_LIMITS.triage_seconds is not None
    sweep = {a.dest for a in _subcommand("sweep")._actions}
    hunt = {a.dest for a in _subcommand("hunt")._actions}
    assert {"triage_seconds", "shrink_seconds"} <= sweep and "triage_seconds" not in hunt


def test_cpsat_work_is_a_budget_in_deterministic_units():
    with pytest.raises(InvalidOption, match="cpsat_work: must be a positive finite number of deterministic time units"):
        Limits(cpsat_work=0)


def test_an_out_of_process_assignor_is_bounded_by_default():
    info = get_assignor("tests.isolated_assignors:deal")
    assert info.fn.seconds == OUT_OF_PROCESS_CALL_SECONDS
    assert bounded(info, None).fn.seconds == OUT_OF_PROCESS_CALL_SECONDS
    assert bounded(info, 3.0).fn.seconds == 3.0


def test_grade_stops_a_hanging_user_assignor_at_the_limit():
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "stickyproof", "grade", "kip341-stale-rejoin", "--assignor", "tests.isolated_assignors:loops",
         "--assignor-seconds", "1.5", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=90,
    )
    elapsed = time.monotonic() - started
    assert '"AssignorTimeLimit' in done.stdout or "time-limit" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert elapsed < 60, f"grade took {elapsed:.1f} s with --assignor-seconds 1.5"


def _sleeping(seconds: float) -> AssignorInfo:
    base = get_assignor("roundrobin")

    def slow(group):
        time.sleep(seconds)
        return base.fn(group)

    from dataclasses import replace

    return replace(base, name="tests:slow-roundrobin", fn=slow)


def test_the_simulator_bounds_every_assignor_call_it_makes():
    """A history's assignor calls honour ``assignor_seconds`` (they once ran unbounded: the stepper
    looked the assignor up again by name and dropped the limit)."""
    from stickyproof.group.stepper import run_history
    from stickyproof.scenarios.histories import draw_history

    history = draw_history(0, 0, scale="small")
    run = run_history(history, _sleeping(0.5), assignor_seconds=0.05)
    errors = [r.error for r in run.rebalances if r.error]
    assert errors and all("AssignorTimeLimit" in e for e in errors), errors[:3]


def test_the_simulator_runs_the_assignor_it_was_given_not_one_looked_up_by_name():
    from stickyproof.group.stepper import run_history
    from stickyproof.scenarios.histories import draw_history

    calls = []
    base = get_assignor("roundrobin")

    def counting(group):
        calls.append(len(group.members))
        return base.fn(group)

    from dataclasses import replace

    run_history(draw_history(0, 0, scale="small"), replace(base, name="tests:counting-roundrobin", fn=counting))
    assert calls, "the simulation never called the assignor it was handed"


def test_a_bounded_in_process_call_raises_at_its_limit():
    info = bounded(_sleeping(1.0), 0.05)
    from stickyproof.assignors.base import GroupSubscription, Subscription
    from stickyproof.model import Topic

    group = GroupSubscription({"t": Topic("t", 2)}, (Subscription("c1", ("t",)),), "eager")
    with pytest.raises(AssignorTimeLimit):
        info.fn(group)


def test_every_limit_is_documented_in_one_place():
    text = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    for f in fields(Limits):
        assert f"`{f.name}` / `--{f.name.replace('_', '-')}`" in text, f"docs/limits.md does not list {f.name}"
