"""JUnit XML for CI (``hunt --junit FILE``, ``sweep --junit FILE``): one test case per assignor and
finding (a hunt) or per assignor and history or sampled group (a sweep).

A case *fails* (``<failure>``) when the assignor broke a promise: ``type`` is the failure kind
(``grading.failure.FAILURE_KINDS``: ``error``, ``duplicate``, ``unstable``, ...), and the text holds
what failed and the shell-quoted command that replays it. A case is an *error* (``<error>``) when
stickyproof's own grading crashed there, and *skipped* when Kafka never runs that pair (R36). The
layout is the one CI servers read (Jenkins, GitLab, GitHub test reporters): ``<testsuites>``, one
``<testsuite>`` with its counts, ``<testcase classname name time>``.

Written with the standard library's ``xml.etree``; the cases come from the hunt's result
(``hunt_cases``) or the sweep's Parquet rows (``sweep_cases``), never from printed text.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .errors import InvalidOption

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from .hunt.search import HuntResult

__all__ = ["Case", "hunt_cases", "sweep_cases", "junit_xml", "write_junit"]


@dataclass(frozen=True)
class Case:
    """One test case: ``failure`` (the kind) with ``message`` and ``text`` when the assignor failed;
    ``error`` when the grading itself crashed; ``skipped`` (why) when the pair never meets."""

    classname: str
    name: str
    seconds: float = 0.0
    failure: str | None = None
    error: str | None = None
    skipped: str | None = None
    message: str = ""
    text: str = ""


def junit_xml(suite: str, cases: Sequence[Case]) -> bytes:
    """The JUnit XML document of ``cases`` in one ``<testsuite name=suite>``, UTF-8 with a declaration."""
    counts = {
        "tests": len(cases),
        "failures": sum(c.failure is not None for c in cases),
        "errors": sum(c.error is not None for c in cases),
        "skipped": sum(c.skipped is not None for c in cases),
    }
    seconds = f"{sum(c.seconds for c in cases):.3f}"
    root = ET.Element("testsuites", {"name": "stickyproof", **{k: str(v) for k, v in counts.items()}, "time": seconds})
    node = ET.SubElement(root, "testsuite", {"name": suite, **{k: str(v) for k, v in counts.items()}, "time": seconds})
    for case in cases:
        tc = ET.SubElement(node, "testcase", {"classname": case.classname, "name": case.name, "time": f"{case.seconds:.3f}"})
        if case.failure is not None:
            ET.SubElement(tc, "failure", {"type": case.failure, "message": case.message}).text = case.text
        elif case.error is not None:
            ET.SubElement(tc, "error", {"type": case.error, "message": case.message}).text = case.text
        elif case.skipped is not None:
            ET.SubElement(tc, "skipped", {"message": case.skipped})
        elif case.text:
            ET.SubElement(tc, "system-out").text = case.text
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(path: str | Path, suite: str, cases: Sequence[Case]) -> Path:
    """Write ``junit_xml(suite, cases)`` to ``path``; ``InvalidOption`` naming ``--junit`` when it cannot."""
    target = Path(path)
    try:
        if target.parent != Path(""):
            target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(junit_xml(suite, cases))
    except OSError as exc:
        raise InvalidOption("--junit", f"{path}: cannot write the JUnit file ({exc.strerror or exc})") from exc
    return target


# ------------------------------------------------------------------------------------------
# A hunt: one case per finding (per failure signature with --keep-going), or one passing case


def hunt_cases(result: "HuntResult", *, saved: Sequence[str] = ()) -> list[Case]:
    """The hunt as cases of class ``stickyproof.hunt.<assignor>``: each finding fails with its kind,
    its witness, the minimal group and the commands that replay it (``grade`` on the saved file when
    ``--save`` wrote one, and the hunt's own command line); no finding is one passing case."""
    import json

    from .model import dump_json, scenario_to_dict

    classname = f"stickyproof.hunt.{result.assignor}"
    if not result.findings:
        return [Case(classname, f"{result.tried} examples (seed {result.seed})", seconds=result.seconds,
                     text=f"repeat: {result.command()}\n")]
    per_case = result.seconds / len(result.findings)
    cases = []
    for number, finding in enumerate(result.findings):
        replay = [f"repeat: {result.command()}"]
        if number < len(saved):
            replay.insert(0, f"replay: stickyproof grade {shlex.quote(saved[number])} --assignor {shlex.quote(result.assignor)}")
        text = "\n".join([
            f"violated: {', '.join(finding.failures)}",
            "witness: " + json.dumps(finding.to_dict()["witness"], sort_keys=True),
            *replay,
            "minimal scenario:",
            dump_json(scenario_to_dict(finding.scenario)),
        ])
        cases.append(Case(classname, finding.signature, seconds=per_case, failure=finding.failure,
                          message=f"{finding.failure}: {result.assignor} on a group of {len(finding.scenario.members)} members",
                          text=text + "\n"))
    return cases


# ------------------------------------------------------------------------------------------
# A sweep: one case per assignor x history (or sampled group), read from DIR/grades


_ROW_COLUMNS = ["kind", "source", "seed", "index", "rebalance", "assignor", "failing", "failures", "signature",
                "valid", "error", "skipped", "hazard_categories", "monitor_failures", "grade_seconds", "migration"]


def _null(value: Any) -> bool:
    return value is None or value != value


def sweep_cases(out: str | Path) -> list[Case]:
    """The sweep in ``out`` as cases of class ``stickyproof.sweep.<assignor>``, one per history (or
    sampled group) and assignor, in (assignor, seed, index) order. A case fails when one of its
    rebalance rows fails (``failing``, the one definition) or a monitor of its history failed: the
    kind is the first failing row's first failure, the text every failing row's kinds and the replay
    commands (``stickyproof grade`` on ``DIR/failures/``, ``stickyproof simulate`` on
    ``DIR/histories/``). Rows whose grading crashed make an error; a pair Kafka never runs is skipped."""
    from .grading.failure import crashed_row, failing_row
    from .sweep.store import SweepDir, failure_file_name, history_file_name, read_table

    sweep = SweepDir(Path(out))
    table = read_table(sweep.grades, columns=_ROW_COLUMNS)
    groups: dict[tuple[str, int, int, bool], list[dict[str, Any]]] = {}
    for row in table.to_pylist():  # a migration's row (sweep.migration_rows) is a case of its own
        groups.setdefault((row["assignor"], row["seed"], row["index"], row["migration"] is True), []).append(row)
    cases = []
    for (assignor, seed, index, migration), rows in sorted(groups.items()):
        rows.sort(key=lambda r: (r["kind"] != "history", r["rebalance"] or 0))
        kind = "migration" if migration else "history" if rows[0]["source"] == "histories" else "group"
        name = f"{kind} {seed}-{index}"
        seconds = sum(float(r["grade_seconds"] or 0.0) for r in rows if r["kind"] != "history")
        classname = f"stickyproof.sweep.{assignor}"
        rebalances = [r for r in rows if r["kind"] != "history"]
        history = next((r for r in rows if r["kind"] == "history"), None)
        failing = [r for r in rebalances if (failing_row(r) if r["failing"] is None else r["failing"])]
        crashed = [r for r in failing if crashed_row(r)]
        failed = [r for r in failing if not crashed_row(r)]
        monitors = history.get("monitor_failures") if history is not None else None
        q = shlex.quote
        replay = []
        for r in failing[:3]:
            path = sweep.failures / failure_file_name(seed, index, r["rebalance"], assignor)
            replay.append(f"replay: stickyproof grade {q(str(path))} --assignor {q(assignor)}")
        if history is not None and (failing or not _null(monitors) and monitors):
            path = sweep.histories / history_file_name(seed, index, assignor, migration)
            replay.append(f"replay history: stickyproof simulate {q(str(path))} --assignor {q(assignor)}")
        if failed or (not _null(monitors) and monitors):
            lines = [f"rebalance {r['rebalance']}: {r['failures'] or r['signature'] or 'failing'}"
                     + (f" (known: {r['hazard_categories']})" if r["hazard_categories"] else "")
                     for r in failed]
            if not _null(monitors) and monitors:
                lines.append(f"monitors: {monitors}")
            kind = (failed[0]["failures"] or "failing").split(",")[0] if failed else "monitor"
            message = f"{kind}: {len(failed)} of {len(rebalances)} rebalances fail"
            cases.append(Case(classname, name, seconds, failure=kind, message=message,
                              text="\n".join(lines + replay) + "\n"))
        elif crashed:
            text = "\n".join([f"rebalance {r['rebalance']}: {r['error']}" for r in crashed] + replay) + "\n"
            cases.append(Case(classname, name, seconds, error="grading", text=text,
                              message=f"stickyproof's grading crashed on {len(crashed)} of {len(rebalances)} rebalances"))
        elif rebalances and all(not _null(r["skipped"]) and r["skipped"] for r in rebalances):
            cases.append(Case(classname, name, seconds, skipped=str(rebalances[0]["skipped"])))
        else:
            cases.append(Case(classname, name, seconds))
    return cases
