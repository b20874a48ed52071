"""A sweep's failures, sorted by what they say about Kafka: the four sections of the console and the report.

    hazard       known Kafka hazards reproduced (docs/rules.md §10 K1, K5, v0 claims, R2): per rule
    kafka-bug    Kafka bugs on states a real group reaches (K2, K3, rack-unstable): each its own line
    historical   historical releases reproducing their incidents: per release
    unexpected   everything no stated rule explains: per (assignor, failure), each with a replay

A failing rebalance row carries its labels (``grading.hazards``, models/invariants.md §6) as
``failure:rule`` pairs and its unexplained failures in ``unexpected``; a crash of the grading itself
is unexpected too (``error:<stage>:<Type>``). A history's failed monitor (models/protocol.md §7) is
explained the way ``grading.hazards`` explains an ``unstable`` beside a labelled failure: a historical
release's by its release; otherwise by the labels of that history's failing rows, which share its
cause (K3's refused partition is what makes the group rebalance for ever); with none, unexpected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..grading.failure import crash_signature, crashed_row
from .columns import MONITORS, monitor_column
from .store import failure_file_name, history_file_name

__all__ = ["SECTIONS", "TITLES", "Example", "Finding", "collect_findings", "error_kind", "parse_hazards"]

SECTIONS = ("hazard", "kafka-bug", "historical", "unexpected")
TITLES = {
    "hazard": "known Kafka hazards reproduced",
    "kafka-bug": "Kafka bugs on reachable states",
    "historical": "historical incidents reproduced",
    "unexpected": "unexpected failures",
}


@dataclass(frozen=True, order=True)
class Example:
    """The smallest row of a finding: where it is, and its size (members, subscribed partitions)."""

    partitions: int
    members: int
    seed: int
    index: int
    rebalance: int | None
    assignor: str
    source: str
    migration: bool = False  # a migration's history row (sweep.migration_rows), which shares its task's key

    def failure_file(self) -> str:
        return failure_file_name(self.seed, self.index, self.rebalance, self.assignor)

    def history_file(self) -> str:
        return history_file_name(self.seed, self.index, self.assignor, self.migration)


@dataclass
class Finding:
    """One line of a section: the rule (or, unexpected, the assignor and failure), its rows and histories."""

    section: str
    rule: str
    text: str
    failures: dict[str, int] = field(default_factory=dict)  # failure (invariant, error kind, monitor:<name>) -> count
    assignors: dict[str, int] = field(default_factory=dict)  # assignor -> its rows and histories
    rows: int = 0
    histories: int = 0
    example: Example | None = None  # the smallest failing rebalance row
    history: Example | None = None  # the smallest history with a failed monitor (when no row example)

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9@._-]+", "_", f"{self.section}--{self.rule}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section, "rule": self.rule, "text": self.text, "failures": dict(self.failures),
            "assignors": dict(self.assignors), "rows": self.rows, "histories": self.histories,
            "example": None if self.example is None else self.example.__dict__,
            "history": None if self.history is None else self.history.__dict__,
        }


def error_kind(error: str | None) -> str:
    """``grade: SolverError: ...`` -> ``error:grade:SolverError``: a crash's signature
    (``grading.failure.crash_signature``)."""
    return crash_signature(error)


def parse_hazards(text: Any) -> list[tuple[str, str]]:
    """``nonexistent:K1,unstable:K1`` -> [(failure, rule), ...]."""
    if not isinstance(text, str) or not text:
        return []
    out = []
    for item in text.split(","):
        failure, _, rule = item.partition(":")
        out.append((failure, rule))
    return out


def _section_of(rule: str) -> tuple[str, str]:
    """(section, text) of a label rule: one of ``grading.hazards.RULES``, else a historical release's name."""
    from ..grading.hazards import RULES

    if rule in RULES:
        return RULES[rule]
    return "historical", _release_text(rule)


def _release_text(name: str) -> str:
    try:
        from ..lookup import get_assignor

        release = get_assignor(name).release
    except Exception:  # noqa: BLE001 - an unknown name is described by its name
        return name
    if release is None:
        return name
    return f"{release.description} ({', '.join(release.references)})"


#: What a labelled consumer-protocol monitor failure is (``sweep.consumer_protocol.HAZARDS``).
CONSUMER_HAZARDS = {
    "zombie": "a KIP-848 member cut off from the coordinator past its session keeps fetching while its partitions "
              "go to others (Kafka's design: its offset commits are fenced by member epoch, not modelled)",
}


def _consumer_monitors(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A consumer history's failed protocol monitors as (monitor, label), label '' when unexplained."""
    failed = row.get("monitors_failed")
    if not isinstance(failed, str) or not failed:
        return []
    hazards = row.get("monitor_hazards")
    labels = dict(h.split(":", 1) for h in hazards.split(",")) if isinstance(hazards, str) and hazards else {}
    return [(m, labels.get(m, "")) for m in failed.split(",")]


def _historical(name: str) -> bool:
    try:
        from ..lookup import get_assignor

        release = get_assignor(name).release
    except Exception:  # noqa: BLE001
        return False
    return release is not None and release.version != "current"


def _example(row: Mapping[str, Any]) -> Example:
    def num(key: str) -> int:
        value = row.get(key)
        return 0 if value is None or value != value else int(value)  # NaN from pandas

    rebalance = row.get("rebalance")
    rebalance = None if rebalance is None or rebalance != rebalance else int(rebalance)
    return Example(num("subscribed_partitions") or num("start_partitions"), num("members") or num("start_members"),
                   int(row["seed"]), int(row["index"]), rebalance, str(row["assignor"]), str(row.get("source") or ""),
                   row.get("migration") == True)  # noqa: E712 - numpy's bool too


def _add(findings: dict[tuple[str, str], Finding], section: str, rule: str, text: str) -> Finding:
    key = (section, rule)
    if key not in findings:
        findings[key] = Finding(section, rule, text)
    return findings[key]


def _count(d: dict[str, int], key: str) -> None:
    d[key] = d.get(key, 0) + 1


def _row_failures(row: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """(section, rule-or-signature, text, failure) of each thing a failing rebalance row says."""
    for failure, rule in parse_hazards(row.get("hazards")):
        section, text = _section_of(rule)
        yield section, rule, text, failure
    unexpected = row.get("unexpected")
    if isinstance(unexpected, str) and unexpected:
        for failure in unexpected.split(","):
            yield "unexpected", f"{row['assignor']}: {failure}", f"{failure} with no known cause", failure
    if crashed_row(row):
        kind = crash_signature(row.get("error"))
        yield "unexpected", f"{row['assignor']}: {kind}", f"the grading crashed ({kind})", kind


def collect_findings(rebalances: Iterable[Mapping[str, Any]], histories: Iterable[Mapping[str, Any]]) -> list[Finding]:
    """Every finding of a sweep, by section, most rows first (``rebalances``: the failing rows; ``histories``: all)."""
    findings: dict[tuple[str, str], Finding] = {}
    rules_by_history: dict[tuple[int, int, str], list[tuple[str, str, str]]] = {}
    for row in rebalances:
        seen: set[tuple[str, str]] = set()
        for section, rule, text, failure in _row_failures(row):
            finding = _add(findings, section, rule, text)
            _count(finding.failures, failure)
            if (section, rule) in seen:
                continue
            seen.add((section, rule))
            finding.rows += 1
            _count(finding.assignors, str(row["assignor"]))
            example = _example(row)
            if finding.example is None or example < finding.example:
                finding.example = example
            if section != "unexpected":
                rules_by_history.setdefault((int(row["seed"]), int(row["index"]), str(row["assignor"])), []).append(
                    (section, rule, text))
    for row in histories:
        failed = [m for m in MONITORS if row.get(monitor_column(m)) is False]
        consumer = _consumer_monitors(row)
        error = row.get("error")
        crashed = isinstance(error, str) and bool(error)
        if not failed and not crashed and not consumer:
            continue
        assignor = str(row["assignor"])
        causes: list[tuple[str, str, str]]
        if crashed:
            kind = crash_signature(error)
            causes = [("unexpected", f"{assignor}: {kind}", f"the history run crashed ({kind})")]
            failed = [kind]
        elif consumer:
            # the consumer protocol's monitors judge the coordinator, not the assignor: a release's
            # name explains none of them; a known hazard's label does
            what = "migration" if row.get("migration") == True else "consumer protocol"  # noqa: E712
            causes = [("hazard", f"{m}:{label}", CONSUMER_HAZARDS.get(label, label)) if label else
                      ("unexpected", f"{assignor}: {'migration ' if what == 'migration' else ''}monitor {m}",
                       f"the {what}'s {m} monitor failed with no known cause")
                      for m, label in consumer]
            failed = [m for m, _ in consumer]
        elif _historical(assignor):
            causes = [("historical", assignor, _release_text(assignor))]
        else:
            key = (int(row["seed"]), int(row["index"]), assignor)
            causes = list(dict.fromkeys(rules_by_history.get(key, ())))
            if not causes:
                causes = [("unexpected", f"{assignor}: monitor {m}", f"the {m} monitor failed with no known cause")
                          for m in failed]
        for section, rule, text in causes:
            finding = _add(findings, section, rule, text)
            finding.histories += 1
            _count(finding.assignors, assignor)
            for m in failed:
                _count(finding.failures, m if m.startswith("error:") else f"monitor:{m}")
            example = _example(row)
            if finding.history is None or example < finding.history:
                finding.history = example
    order = {s: i for i, s in enumerate(SECTIONS)}
    return sorted(findings.values(), key=lambda f: (order[f.section], -(f.rows + f.histories), f.rule))
