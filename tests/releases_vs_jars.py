"""Each historical ``Release`` record against the kafka-clients jar it names (``verified_against``).

Shared by tests/test_releases_vs_jars.py (a modest count, in CI) and benchmarks/releases_vs_jars.py
(a few hundred inputs per record). For one record and its jar, every input is one rebalance through
``leader.lead`` twice, with the same wire bytes: once with the record's own row, once with the
record's row whose assignor function is Kafka's Java assignor of that release
(``kafka-java:NAME@VERSION``, decoding the bytes with that release's own ``ConsumerProtocol``).
The members are led as the record says (its user data, its member data, its R39 exemption), so both
sides see exactly what a group of that release's clients would send.

The inputs, in this order:

* ``regression``: the record's own regression files (``tests/regressions/<name>-*.json``, its
  incidents), replayed as groups;
* ``case``: the Kafka case files of that assignor (``tests/kafka_cases``, not ``direct``);
* ``bundled``: the bundled scenarios of that assignor (``stickyproof.scenarios.named``), the
  2,100-member one left out;
* ``sampler``: sampler groups ``sample(SEED, i)`` (a sticky record meets the eager ones only, R36);
* ``history``: the groups each leader saw while ``run_history`` ran histories ``0..`` of seed
  ``SEED`` with the record (small and medium scales).

Two results agree when each member gets the same partitions in the same per-topic order, or both
throw the same exception (by simple name).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from stickyproof.assignors.registry import AssignorInfo
from stickyproof.lookup import get_assignor
from stickyproof.assignors.releases import RELEASES, Release
from stickyproof.errors import AssignorFailure, StickyproofError
from stickyproof.leader import lead
from stickyproof.model import Assignment, Scenario, scenario_from_dict, scenario_to_dict

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "kafka_cases"
SEED = 12
BIG_BUNDLED = 500
"""Bundled scenarios with more members than this are left out (kip615-2100: seconds per call, no new rule)."""


def jar_version(release: Release) -> str:
    """``"kafka-clients 2.2.2"`` -> ``"2.2.2"``: the jar a record names as the one it was verified against."""
    assert release.verified_against and release.verified_against.startswith("kafka-clients "), release.name
    return release.verified_against.removeprefix("kafka-clients ")


def java_row(release: Release, jar: str | None = None) -> AssignorInfo:
    """The record's own row, with Kafka's Java assignor of its jar (or of kafka-clients ``jar``) as the
    assignor function."""
    java = get_assignor(f"kafka-java:{release.kafka_name}@{jar or jar_version(release)}")
    row = get_assignor(release.name)
    return replace(row, name=java.name, fn=java.fn)


Outcome = tuple[dict[str, dict[str, tuple[int, ...]]] | None, str | None]


def _lists(assignment: Assignment) -> dict[str, dict[str, tuple[int, ...]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for member, tps in assignment.assignment.items():
        for tp in tps:
            out.setdefault(member, {}).setdefault(tp.topic, []).append(tp.partition)
    return {m: {t: tuple(ps) for t, ps in ts.items()} for m, ts in out.items()}


def outcome(scenario: Scenario, info: AssignorInfo) -> Outcome:
    try:
        return _lists(lead(scenario, info).assignment), None
    except AssignorFailure as exc:
        return None, (exc.kafka_exception or type(exc).__name__).rsplit(".", 1)[-1]


def _sets(result: Outcome):
    lists, error = result
    if lists is None:
        return error
    return {m: {t: frozenset(ps) for t, ps in ts.items()} for m, ts in lists.items()}


# ------------------------------------------------------------------------------------------------
# the inputs


def _runs_protocol(release: Release, scenario: Scenario) -> bool:
    return scenario.protocol in release.protocols


def regression_files(release: Release) -> list[Path]:
    """The regression files whose assignor is this record (tests/regressions/, format in its README)."""
    out = []
    for path in sorted((ROOT / "tests" / "regressions").glob("*.json")):
        if json.loads(path.read_text())["expect"]["assignor"] == release.name:
            out.append(path)
    return out


def regression_inputs(release: Release) -> Iterator[tuple[str, Scenario]]:
    for path in regression_files(release):
        doc = json.loads(path.read_text())
        doc.pop("expect")
        scenario = scenario_from_dict(doc)
        if _runs_protocol(release, scenario):
            yield f"regression {path.stem}", scenario


def case_inputs(release: Release) -> Iterator[tuple[str, Scenario]]:
    for path in sorted(CASES.glob("*.json")):
        doc = json.loads(path.read_text())
        expect = doc.pop("expect")
        if expect["assignor"].partition("@")[0] != release.kafka_name or expect.get("direct"):
            continue
        scenario = scenario_from_dict(doc)
        if _runs_protocol(release, scenario):
            yield f"case {path.stem}", scenario


def bundled_inputs(release: Release) -> Iterator[tuple[str, Scenario]]:
    from stickyproof.scenarios import named

    for name in named.names():
        scenario = named.get(name)
        if len(scenario.members) > BIG_BUNDLED or not _runs_protocol(release, scenario):
            continue
        if any(release.kafka_name in m.assignors for m in scenario.members):
            yield f"bundled {name}", scenario


def sampler_inputs(release: Release, count: int) -> Iterator[tuple[str, Scenario]]:
    from stickyproof.scenarios.sampler import sample

    taken = index = 0
    while taken < count and index < 20 * count + 20:
        scenario = sample(SEED, index)
        index += 1
        if _runs_protocol(release, scenario):
            taken += 1
            yield f"sampler {SEED}:{index - 1}", scenario


def history_inputs(release: Release, count: int) -> Iterator[tuple[str, Scenario]]:
    """The groups the leader saw, rebalance by rebalance, in histories run with the record itself
    (``count`` rebalances at most; the groups depend on the record's own answers, which is the
    life a group of that release has)."""
    import stickyproof.group.member as member_module
    from stickyproof.group.stepper import run_history
    from stickyproof.scenarios.histories import draw_history

    seen: list[Scenario] = []
    original = member_module.run_leader

    def recording(*args, **kwargs):
        result = original(*args, **kwargs)
        if result.scenario is not None:
            seen.append(result.scenario)
        return result

    taken = index = 0
    member_module.run_leader = recording
    try:
        while taken < count and index < 4 * count + 20:
            seen.clear()
            history = draw_history(SEED, index, scale="small" if index % 10 else "medium")
            index += 1
            try:
                run_history(history, release.name)
            except StickyproofError:
                continue
            for rebalance, scenario in enumerate(list(seen)):
                if taken >= count:
                    break
                if _runs_protocol(release, scenario):
                    taken += 1
                    yield f"history {SEED}:{index - 1} rebalance {rebalance}", scenario
    finally:
        member_module.run_leader = original


# ------------------------------------------------------------------------------------------------
# the diff


@dataclass
class Diff:
    """What one record did against its jar: inputs by kind, and each disagreement with its group."""

    release: str
    jar: str
    inputs: dict[str, int] = field(default_factory=dict)
    same_sets: int = 0
    differ: list[tuple[str, str, Outcome, Outcome, Scenario]] = field(default_factory=list)
    on_equal: int = 0
    same_verdict: int = 0
    graded: bool = True
    record_only_violations: dict[str, int] = field(default_factory=dict)
    kafka_only_violations: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.inputs.values())

    def line(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in self.inputs.items())
        by_kind = ", ".join(f"{k} {sum(1 for d in self.differ if d[1] == k)}" for k in self.inputs)
        line = (f"{self.release} vs kafka-clients {self.jar}: {self.total - len(self.differ)}/{self.total} agree "
                f"({kinds}); of {len(self.differ)} differences ({by_kind}): {self.on_equal} with equal subscriptions, "
                f"{self.same_sets} in order only")
        if not self.graded:
            return line
        return (f"{line}, {self.same_verdict} graded alike; broken by the record only: "
                f"{self.record_only_violations or 'none'}, by Kafka only: {self.kafka_only_violations or 'none'}")

    def examples(self, limit: int = 3) -> list[str]:
        return [
            f"{where}: record {ours[1] or ours[0]} != Kafka {theirs[1] or theirs[0]}\n"
            f"  scenario: {json.dumps(scenario_to_dict(scenario))}"
            for where, _, ours, theirs, scenario in self.differ[:limit]
        ]


def equal_subscriptions(scenario: Scenario) -> bool:
    """Every member subscribes to the same topics (the groups whose constrained path R12 can take,
    from 2.6 on; ``allSubscriptionsEqual`` itself also looks at the claims)."""
    return len({frozenset(m.topics) for m in scenario.members}) <= 1


def verdict(scenario: Scenario, info: AssignorInfo) -> tuple:
    """What the grader says of one rebalance: valid, the invariants broken, partitions kept, error or not."""
    from stickyproof.grading import Limits, grade_assignor

    grade = grade_assignor(scenario, info, limits=Limits(assignor_seconds=60.0))
    return grade.valid, tuple(sorted(grade.violated())), grade.kept, grade.error is None


def diff_release(release: Release, *, sampler: int, histories: int, grade_differences: bool = True,
                 jar: str | None = None) -> Diff:
    """The record against its jar, or against kafka-clients ``jar`` (which release lines behave as it)."""
    java = java_row(release, jar)
    ours_row = get_assignor(release.name)
    result = Diff(release.name, jar or jar_version(release), graded=grade_differences)
    sources = (
        ("regression", regression_inputs(release)),
        ("case", case_inputs(release)),
        ("bundled", bundled_inputs(release)),
        ("sampler", sampler_inputs(release, sampler)),
        ("history", history_inputs(release, histories)),
    )
    for kind, inputs in sources:
        for where, scenario in inputs:
            result.inputs[kind] = result.inputs.get(kind, 0) + 1
            ours = outcome(scenario, ours_row)
            theirs = outcome(scenario, java)
            if ours != theirs:
                result.same_sets += _sets(ours) == _sets(theirs)
                result.on_equal += equal_subscriptions(scenario)
                if grade_differences:
                    mine, kafka = verdict(scenario, ours_row), verdict(scenario, java)
                    result.same_verdict += mine == kafka
                    for name in set(mine[1]) - set(kafka[1]):
                        result.record_only_violations[name] = result.record_only_violations.get(name, 0) + 1
                    for name in set(kafka[1]) - set(mine[1]):
                        result.kafka_only_violations[name] = result.kafka_only_violations.get(name, 0) + 1
                result.differ.append((where, kind, ours, theirs, scenario))
    return result


def verified_releases() -> tuple[Release, ...]:
    """The records that name the jar they were verified against."""
    return tuple(r for r in RELEASES if r.verified_against)
