"""Triage: failing rows grouped by signature, each signature's smallest case shrunk and made replayable.

A signature is (assignor, what failed, scenario class): what failed is the violated invariant
(a row violating two invariants belongs to two signatures) or ``error:<stage>:<ExceptionType>``
for a crash; the scenario class is the subscription kind and protocol. For each signature the
smallest failing scenario (fewest partitions, then members) is shrunk by the hunt's deterministic
delta debugging (``shrink``, which is ``stickyproof.scenarios.shrink.shrink_search``: remove members, topics,
partitions, subscriptions and owned claims, coarse chunks first, then plainer values), keeping a
removal whenever the same signature still fails. The result goes to ``DIR/triage/<signature>.json``
with the command that replays it.
Shrinking re-grades every candidate, so it is bounded by a count of evaluations per signature
(deterministic) and a wall-clock budget for the whole triage (a case stopped by the clock says so).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from ..model import Scenario, dump_json, scenario_from_dict, scenario_to_dict
from ..scenarios.shrink import shrink_search
from .rows import INVARIANTS, RowParams, grade_row
from .store import SweepDir, _write_atomic, failure_file_name, read_table

__all__ = ["Signature", "TriageCase", "signatures_of", "shrink", "triage"]

MAX_EVALUATIONS = 150
MAX_SIGNATURES = 24
DEFAULT_BUDGET_SECONDS = 30.0


@dataclass(frozen=True, order=True)
class Signature:
    assignor: str
    failure: str  # an invariant column name, or error:<stage>:<Type>
    scenario_class: str

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9@._-]+", "_", f"{self.assignor}--{self.failure}--{self.scenario_class}")

    def __str__(self) -> str:
        return f"{self.assignor} / {self.failure} / {self.scenario_class}"


@dataclass(frozen=True)
class TriageCase:
    """One signature: how many rows share it, the shrunk case, and how to replay it."""

    signature: Signature
    rows: int
    example: tuple[int, int]  # (seed, index) of the case that was shrunk
    original_size: tuple[int, int, int]  # members, topics, subscribed partitions
    shrunk_size: tuple[int, int, int]
    path: Path | None
    command: str
    evaluations: int
    stopped_by_clock: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.signature.assignor,
            "failure": self.signature.failure,
            "class": self.signature.scenario_class,
            "rows": self.rows,
            "example": {"seed": self.example[0], "index": self.example[1]},
            "original_size": dict(zip(("members", "topics", "partitions"), self.original_size)),
            "shrunk_size": dict(zip(("members", "topics", "partitions"), self.shrunk_size)),
            "path": str(self.path) if self.path else None,
            "command": self.command,
            "evaluations": self.evaluations,
            "stopped_by_clock": self.stopped_by_clock,
            "note": self.note,
        }


def error_kind(error: str | None) -> str | None:
    """``grade: AssignorFailure: ...`` -> ``error:grade:AssignorFailure``."""
    if not error:
        return None
    parts = [p.strip() for p in error.split(":", 2)]
    if len(parts) >= 2 and parts[1] and " " not in parts[1]:
        return f"error:{parts[0]}:{parts[1]}"
    return f"error:{parts[0] or 'unknown'}"


def _class_of(row: Mapping[str, Any]) -> str:
    return f"{row.get('subscription') or '?'}/{row.get('protocol') or '?'}"


def failures_of(row: Mapping[str, Any]) -> list[str]:
    """What a row failed: its violated invariants, or its error kind."""
    kind = error_kind(row.get("error"))
    if kind:
        return [kind]
    return [name for name in INVARIANTS if row.get(name) is True]


def signatures_of(row: Mapping[str, Any]) -> list[Signature]:
    return [Signature(str(row["assignor"]), f, _class_of(row)) for f in failures_of(row)]


def _size(scenario: Scenario) -> tuple[int, int, int]:
    return (len(scenario.members), len(scenario.topics), len(scenario.subscribed_partitions()))


def shrink(
    scenario: Scenario,
    still_fails: Callable[[Scenario], bool],
    *,
    max_evaluations: int = MAX_EVALUATIONS,
    deadline: float | None = None,
) -> tuple[Scenario, int, bool]:
    """The shared deterministic delta debugging (``scenarios.shrink.shrink_search``, the hunt's too);
    returns (smallest failing scenario, evaluations spent, whether the deadline stopped it)."""
    result = shrink_search(scenario, still_fails, max_evaluations=max_evaluations, deadline=deadline)
    return result.scenario, result.evaluations, result.stopped_by == "deadline"


def _still_fails(signature: Signature, params: RowParams) -> Callable[[Scenario], bool]:
    def check(candidate: Scenario) -> bool:
        row = grade_row(candidate, 0, 0, signature.assignor, params)
        return signature in signatures_of(row)

    return check


# ------------------------------------------------------------------------------------------
# The triage of a sweep directory


def collect_signatures(out: SweepDir) -> dict[Signature, list[dict[str, Any]]]:
    """Failing rows by signature (each row's scenario text left out until a case is chosen)."""
    import pyarrow.dataset as ds

    columns = ["seed", "index", "assignor", "valid", "error", "subscription", "protocol", "members", "subscribed_partitions", *INVARIANTS]
    failing = (ds.field("valid") == False) | (~ds.field("error").is_null())  # noqa: E712 - an Arrow expression
    table = read_table(out.grades, columns, filter=failing)
    groups: dict[Signature, list[dict[str, Any]]] = {}
    for row in table.to_pylist():
        for sig in signatures_of(row):
            groups.setdefault(sig, []).append(row)
    return dict(sorted(groups.items()))


def _scenario_for(out: SweepDir, row: Mapping[str, Any]) -> Scenario | None:
    path = out.failures / failure_file_name(row["seed"], row["index"], row["assignor"])
    if not path.exists():
        return None
    return scenario_from_dict(json.loads(path.read_text()))


def triage(
    out: SweepDir,
    params: RowParams,
    *,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    max_signatures: int = MAX_SIGNATURES,
    max_evaluations: int = MAX_EVALUATIONS,
) -> list[TriageCase]:
    """Shrink one case per signature (most frequent signatures first) and write ``DIR/triage/``."""
    deadline = time.monotonic() + budget_seconds
    groups = collect_signatures(out)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    cases: list[TriageCase] = []
    out.triage.mkdir(parents=True, exist_ok=True)
    for rank, (sig, rows) in enumerate(ranked):
        example = min(rows, key=lambda r: (r.get("subscribed_partitions") or 0, r.get("members") or 0, r["seed"], r["index"]))
        original = _scenario_for(out, example)
        replay_of = out.failures / failure_file_name(example["seed"], example["index"], example["assignor"])
        if original is None:
            cases.append(_unshrunk(sig, rows, example, None, "no scenario: the sampler itself failed"))
            continue
        if rank >= max_signatures or time.monotonic() > deadline:
            why = "not shrunk: beyond the signature limit" if rank >= max_signatures else "not shrunk: triage time budget spent"
            cases.append(_unshrunk(sig, rows, example, original, why, replay_of))
            continue
        check = _still_fails(sig, params)
        if not check(original):
            cases.append(_unshrunk(sig, rows, example, original, "did not fail again on re-grading (flaky or time-limited)", replay_of))
            continue
        small, evaluations, clocked = shrink(original, check, max_evaluations=max_evaluations, deadline=deadline)
        small = replace(small, name=f"triage {sig}: shrunk from seed {example['seed']} index {example['index']}")
        path = out.triage / f"{sig.slug}.json"
        _write_atomic(path, dump_json(scenario_to_dict(small)) + "\n")
        cases.append(
            TriageCase(
                signature=sig,
                rows=len(rows),
                example=(example["seed"], example["index"]),
                original_size=_size(original),
                shrunk_size=_size(small),
                path=path,
                command=f"stickyproof grade {path} --assignor {sig.assignor}",
                evaluations=evaluations + 1,
                stopped_by_clock=clocked,
                note="shrink stopped by the triage time budget" if clocked else "",
            )
        )
    return cases


def _unshrunk(
    sig: Signature, rows: list[dict[str, Any]], example: Mapping[str, Any], scenario: Scenario | None, note: str, path: Path | None = None
) -> TriageCase:
    size = _size(scenario) if scenario is not None else (0, 0, 0)
    command = f"stickyproof grade {path} --assignor {sig.assignor}" if path is not None else ""
    return TriageCase(sig, len(rows), (example["seed"], example["index"]), size, size, path, command, 0, False, note)

