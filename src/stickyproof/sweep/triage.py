"""Triage: every finding (``findings.py``) made replayable, the real bugs and the unexpected shrunk.

Each finding's smallest failing rebalance row left its leader input in ``DIR/failures/``, with the
row's verdict as an ``expect`` block (``rows.failure_document``); the triage gives its replay
command (``stickyproof grade FILE --assignor NAME``) and, for a finding whose history failed a
monitor, the history's (``stickyproof simulate FILE --assignor NAME``). A finding of the
``kafka-bug`` or ``unexpected`` section -- what a person must look at -- is also shrunk by the
shared deterministic delta debugging (``scenarios.shrink.shrink_search``, the hunt's too; this
module never imports the hunt) while the same failure still shows on the leader input graded alone
("the same way" is ``grading.failure.shows``: the failure kind, and an error's type), and the shrunk
case goes to ``DIR/triage/<slug>.json`` as a regression file: the group plus its ``expect`` block,
written by the writer ``hunt --save`` uses (``grading.regression``), so ``tests/test_regressions.py``
replays it once copied into ``tests/regressions/``. Shrinking re-grades every candidate, so it
is bounded by evaluations per finding and a wall-clock budget for the whole triage.

A history row is judged on what members really held (``truth``); graded alone, its leader input is
judged on what members said they held. When the failure does not show that way the case is left
unshrunk with a note, and the history's replay remains the witness.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..grading.failure import ERROR_KINDS, Verdict, shows, verdict_of
from ..grading.regression import regression_document
from ..model import Scenario, dump_json, scenario_from_dict
from ..scenarios.shrink import shrink_search
from .findings import Finding
from .rows import TaskParams
from .store import SweepDir, _write_atomic

__all__ = ["TriageCase", "replay_command", "shrink", "still_fails", "judge_alone", "triage", "SHRUNK_SECTIONS"]

SHRUNK_SECTIONS = ("kafka-bug", "unexpected")


@dataclass(frozen=True)
class TriageCase:
    """One finding made replayable: the commands, and (real bugs, unexpected) its shrunk case."""

    section: str
    rule: str
    failure: str
    assignor: str
    command: str
    history_command: str
    original_size: tuple[int, int, int]  # members, topics, subscribed partitions
    shrunk_size: tuple[int, int, int] | None
    path: Path | None
    evaluations: int
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section, "rule": self.rule, "failure": self.failure, "assignor": self.assignor,
            "command": self.command, "history_command": self.history_command,
            "original_size": list(self.original_size),
            "shrunk_size": None if self.shrunk_size is None else list(self.shrunk_size),
            "path": None if self.path is None else str(self.path), "evaluations": self.evaluations, "note": self.note,
        }


def replay_command(verb: str, path: Path | str, assignor: str) -> str:
    """``stickyproof VERB FILE --assignor NAME`` shell-quoted, so a directory with a space or an
    ``exec:`` assignor's command line pastes as one argument: every replay command of the triage
    and the report is written by this one function."""
    return f"stickyproof {verb} {shlex.quote(str(path))} --assignor {shlex.quote(assignor)}"


def _size(scenario: Scenario) -> tuple[int, int, int]:
    return (len(scenario.members), len(scenario.topics), len(scenario.subscribed_partitions()))


def shrink(scenario: Scenario, fails: Callable[[Scenario], bool], *, max_evaluations: int,
           deadline: float | None = None) -> tuple[Scenario, int, bool]:
    """(smallest failing scenario, evaluations spent, whether the deadline stopped it)."""
    result = shrink_search(scenario, fails, max_evaluations=max_evaluations, deadline=deadline)
    return result.scenario, result.evaluations, result.stopped_by == "deadline"


def judge_alone(assignor: Any, candidate: Scenario, params: TaskParams) -> Verdict | None:
    """The verdict on ``assignor`` (an ``AssignorInfo``) graded on ``candidate`` alone, or None for a
    pair Kafka never runs (R36) or a candidate the grader cannot judge."""
    from ..grading import grade_assignor, unsupported_reason

    if unsupported_reason(candidate, assignor) is not None:
        return None
    try:
        return verdict_of(grade_assignor(candidate, assignor, direct=params.direct, limits=params.limits))
    except Exception:  # noqa: BLE001 - a candidate the grader cannot judge does not reproduce it
        return None


def still_fails(assignor: str, failure: str, params: TaskParams, *,
                error_type: str | None = None) -> Callable[[Scenario], bool]:
    """Whether ``assignor`` graded on a candidate alone fails the same way: shows ``failure`` (a
    failure kind, ``grading.failure.FAILURE_KINDS``) and, for an error, one of ``error_type``."""
    from ..lookup import get_assignor

    info = get_assignor(assignor)

    def check(candidate: Scenario) -> bool:
        verdict = judge_alone(info, candidate, params)
        return verdict is not None and shows(verdict, failure, error_type)

    return check


def _load(path: Path) -> Scenario | None:
    if not path.exists():
        return None
    try:
        return scenario_from_dict(json.loads(path.read_text()))
    except Exception:  # noqa: BLE001 - an unreadable witness is reported by its note
        return None


def triage(out: SweepDir, findings: Sequence[Finding], params: TaskParams, *, budget_seconds: float | None = 20.0,
           max_evaluations: int = 120, finding_seconds: float | None = None) -> list[TriageCase]:
    """One case per finding; shrink those of ``SHRUNK_SECTIONS`` within the budgets: ``budget_seconds``
    for the whole triage (``Limits.triage_seconds``), ``finding_seconds`` for each finding
    (``Limits.shrink_seconds``), ``max_evaluations`` judged candidates per finding."""
    deadline = time.monotonic() + (budget_seconds if budget_seconds is not None else float("inf"))
    out.triage.mkdir(parents=True, exist_ok=True)
    cases: list[TriageCase] = []
    for finding in findings:
        example = finding.example
        failure = max(finding.failures, key=lambda k: (finding.failures[k], k)) if finding.failures else "?"
        history_command = ""
        hist = finding.history or example
        if hist is not None and hist.source == "histories":
            path = out.histories / hist.history_file()
            if path.exists():
                history_command = replay_command("simulate", path, hist.assignor)
        if example is None:
            cases.append(TriageCase(finding.section, finding.rule, failure, (finding.history.assignor if finding.history
                                    else "?"), "", history_command, (0, 0, 0), None, None, 0,
                                    "a failed monitor with no failing rebalance row: replay the history"))
            continue
        file = out.failures / example.failure_file()
        scenario = _load(file)
        command = replay_command("grade", file, example.assignor) if scenario is not None else ""
        size = _size(scenario) if scenario is not None else (0, 0, 0)
        base = dict(section=finding.section, rule=finding.rule, failure=failure, assignor=example.assignor,
                    command=command, history_command=history_command, original_size=size)
        if scenario is None or finding.section not in SHRUNK_SECTIONS or failure.startswith(("error:", "monitor:")):
            cases.append(TriageCase(**base, shrunk_size=None, path=None, evaluations=0))
            continue
        if time.monotonic() > deadline:
            cases.append(TriageCase(**base, shrunk_size=None, path=None, evaluations=0,
                                    note="not shrunk: triage time budget spent"))
            continue
        from ..lookup import get_assignor

        info = get_assignor(example.assignor)
        first = judge_alone(info, scenario, params)
        if first is None or not shows(first, failure):
            cases.append(TriageCase(**base, shrunk_size=None, path=None, evaluations=1,
                                    note="graded alone (on what members said they held) it does not fail: "
                                         "replay the history"))
            continue
        error_type = first.run_error.type if failure in ERROR_KINDS and first.run_error is not None else None
        fails = still_fails(example.assignor, failure, params, error_type=error_type)
        own = deadline if finding_seconds is None else min(deadline, time.monotonic() + finding_seconds)
        small, evaluations, clocked = shrink(scenario, fails, max_evaluations=max_evaluations, deadline=own)
        verdict = judge_alone(info, small, params) if small is not scenario else first
        if verdict is None or not shows(verdict, failure, error_type):  # flaky on re-judging: keep the original
            small, verdict = scenario, first
        path = out.triage / f"{finding.slug}.json"
        doc = regression_document(
            small, verdict, name=path.stem, assignor=example.assignor, failure=failure, direct=params.direct,
            found_by=(f"Found by the sweep in {out.root} ({example.source} seed {example.seed} index {example.index} "
                      f"rebalance {example.rebalance}; {finding.section} {finding.rule}) and shrunk by its triage "
                      f"from {size[0]} members, {size[1]} topics and {size[2]} partitions"),
        )
        _write_atomic(path, dump_json(doc) + "\n")
        cases.append(TriageCase(**{**base, "command": replay_command("grade", path, example.assignor)},
                                shrunk_size=_size(small), path=path, evaluations=evaluations + 2,
                                note=("shrink stopped by the triage time budget" if time.monotonic() >= deadline
                                      else "shrink stopped by its per-finding time limit") if clocked else ""))
    return cases
