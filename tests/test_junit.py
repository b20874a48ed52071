"""``hunt --junit FILE`` and ``sweep --junit FILE``: JUnit XML that parses, with the right counts, a
``<failure>`` for a failing assignor carrying its kind and a shell-quoted replay command."""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import settings

from stickyproof.cli import main
from stickyproof.junit import Case, junit_xml, sweep_cases
from stickyproof.oracle.invariants.verdict import INVARIANTS
from stickyproof.sweep.columns import HISTORY, REBALANCE, arrow_schema, empty_row, with_failing

EXAMPLES = min(40, settings.default.max_examples)
FAULTY = "tests.faulty_assignors:"


def _suite(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    for key, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        assert int(suite.get(key)) == sum(1 for c in cases if c.find(tag) is not None), key
    assert int(suite.get("tests")) == len(cases)
    return suite


def _replays(text: str) -> list[list[str]]:
    """Each ``replay...:`` line of a failure's text split as a shell would."""
    return [shlex.split(line.split(": ", 1)[1]) for line in text.splitlines() if line.startswith("replay")]


def test_the_document_escapes_and_counts():
    cases = [Case("c", "ok"), Case("c", "bad <&>", failure="duplicate", message='"m"', text="a < b\n"),
             Case("c", "crash", error="grading", text="x"), Case("c", "never", skipped="eager only (R36)")]
    root = ET.fromstring(junit_xml("s", cases))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("4", "1", "1", "1")
    failure = suite.findall("testcase")[1].find("failure")
    assert (failure.get("type"), failure.get("message"), failure.text) == ("duplicate", '"m"', "a < b\n")


def test_hunt_junit_has_a_failure_with_the_kind_and_a_replay_that_pastes(tmp_path, capsys):
    out, saved = tmp_path / "hunt.xml", tmp_path / "saved"
    code = main(["hunt", "--assignor", FAULTY + "raises_on_two_topics", "--examples", str(EXAMPLES), "--seed", "0",
                 "--junit", str(out), "--save", str(saved)])
    assert code == 1
    capsys.readouterr()
    suite = _suite(out)
    (case,) = suite.findall("testcase")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "error"
    assert case.get("classname") == f"stickyproof.hunt.{FAULTY}raises_on_two_topics"
    (replay,) = _replays(failure.text)
    assert replay[:3] == ["stickyproof", "grade", str(next(saved.glob("*.json")))]
    assert replay[3:] == ["--assignor", FAULTY + "raises_on_two_topics"]
    repeat = next(line for line in failure.text.splitlines() if line.startswith("repeat: "))
    assert shlex.split(repeat[len("repeat: "):])[:4] == ["stickyproof", "hunt", "--assignor", FAULTY + "raises_on_two_topics"]


def test_hunt_junit_of_a_correct_assignor_is_one_passing_case(tmp_path, capsys):
    out = tmp_path / "deep" / "hunt.xml"
    assert main(["hunt", "--assignor", FAULTY + "optimal", "--examples", "5", "--junit", str(out)]) == 0
    capsys.readouterr()
    suite = _suite(out)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "0")


def test_an_unwritable_junit_path_is_one_line_exit_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["hunt", "--assignor", "sticky", "--examples", "2", "--junit", str(blocker / "x.xml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--junit" in err[0]


# ------------------------------------------------------------------------------------------
# A sweep: rows written as a sweep writes them (one committed chunk), read back as cases


def _rebalance(index: int, assignor: str, number: int, **fields):
    r = empty_row(REBALANCE, "histories", 3, index, assignor, rebalance=number)
    r.update({name: False for name in INVARIANTS})
    r.update(valid=True, grade_seconds=0.5)
    r.update(fields)
    return with_failing(r)


def _write_grades(out: Path, rows: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    chunk = out / "grades" / "chunk=c0"
    chunk.mkdir(parents=True)
    schema = arrow_schema()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), chunk / "part-0.parquet")


def test_sweep_cases_one_per_assignor_and_history(tmp_path):
    rows = []
    for index in range(3):
        for assignor in ("range", "exec:./my assignor"):
            rows.append(_rebalance(index, assignor, 1))
            bad = index == 1 and assignor.startswith("exec")
            rows.append(_rebalance(index, assignor, 2, valid=not bad, duplicate=bad,
                                   failures="duplicate" if bad else None))
            h = empty_row(HISTORY, "histories", 3, index, assignor)
            h.update(monitor_failures="no-double-consumption" if (index, assignor) == (2, "range") else None)
            rows.append(h)
    rows.append(_rebalance(0, "sticky", 1, valid=None, skipped="cooperative protocol unsupported by sticky (R36)"))
    rows.append(_rebalance(1, "sticky", 1, valid=None, error="grade: SolverError: boom"))
    _write_grades(tmp_path, rows)
    cases = sweep_cases(tmp_path)
    assert len(cases) == 8
    by = {(c.classname, c.name): c for c in cases}
    bad = by[("stickyproof.sweep.exec:./my assignor", "history 3-1")]
    assert bad.failure == "duplicate" and bad.message.startswith("duplicate: 1 of 2 rebalances")
    grade, simulate = _replays(bad.text)
    assert grade == ["stickyproof", "grade", str(tmp_path / "failures" / "3-1-2-exec_._my_assignor.json"),
                     "--assignor", "exec:./my assignor"]
    assert simulate[:2] == ["stickyproof", "simulate"] and simulate[-1] == "exec:./my assignor"
    assert by[("stickyproof.sweep.range", "history 3-2")].failure == "monitor"
    assert [c for c in cases if c.error] == [by[("stickyproof.sweep.sticky", "history 3-1")]]
    assert by[("stickyproof.sweep.sticky", "history 3-0")].skipped.endswith("(R36)")
    assert sum(c.failure is None and c.error is None and c.skipped is None for c in cases) == 4
    path = tmp_path / "sweep.xml"
    from stickyproof.junit import write_junit

    write_junit(path, "stickyproof sweep", cases)
    suite = _suite(path)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("8", "2", "1", "1")


def test_sweep_junit_of_an_empty_directory_is_an_empty_suite(tmp_path):
    assert sweep_cases(tmp_path) == []
    assert ET.fromstring(junit_xml("s", [])).find("testsuite").get("tests") == "0"


@pytest.mark.parametrize("command", [["hunt", "--assignor", "sticky"], ["sweep", "--out", "x"]])
def test_the_flag_is_documented(command, capsys):
    with pytest.raises(SystemExit):
        main([command[0], "--help"])
    assert "--junit FILE" in capsys.readouterr().out
