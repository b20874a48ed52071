"""Issue 14, items 2-5: every symptom the issue lists, as the command a user would run.

Bad input is exit 2 with one line naming the field or flag; sizes are counted, not built, and a
group past the documented limits is refused up front; no command passes on nothing (compare of
disjoint sweeps, an event past the horizon, an unknown wire version); one grammar across commands.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stickyproof.cli import build_parser, main
from stickyproof.model import scenario_to_dict
from stickyproof.scenarios import named

SRC = str(Path(__file__).resolve().parents[1] / "src")


def run(argv, capsys, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def base() -> dict:
    return scenario_to_dict(named.get("kip341-stale-rejoin"))


def write(tmp_path: Path, text: str, name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return str(path)


SCENARIO_COMMANDS = [
    ["validate", "{}"],
    ["assign", "{}", "--assignor", "range"],
    ["solve", "{}"],
    ["grade", "{}", "--assignor", "range"],
    ["check", "{}", "ASSIGNMENT"],
    ["simulate", "{}"],
]


@pytest.fixture
def assignment(tmp_path) -> str:
    doc = {"format": "stickyproof.assignment/1", "assignment": {"c1": {"t": [0, 1]}, "c2": {"t": [2, 3]}, "c3": {"t": [4, 5]}}}
    return write(tmp_path, json.dumps(doc), "a.json")


def each_command(path: str, assignment: str) -> list[list[str]]:
    return [[assignment if a == "ASSIGNMENT" else path if a == "{}" else a for a in argv] for argv in SCENARIO_COMMANDS]


# ------------------------------------------------------------------------------------------
# Item 2: bad input is exit 2 and one line naming the field


def test_an_integer_over_4300_digits_is_one_line_naming_its_path_in_every_command(tmp_path, capsys, assignment):
    text = json.dumps(base()).replace('"t": 6', '"t": ' + "9" * 4400, 1)
    for argv in each_command(write(tmp_path, text), assignment):
        code, out, err = run(argv, capsys)
        assert (code, out) == (2, ""), argv
        assert one_line(err) == "InvalidScenario: topics.t: an integer of 4400 digits is not a number any field accepts"
    doc = write(tmp_path, '{"topics": ["a"], "generation": -' + "9" * 5000 + "}", "sub.json")
    code, _, err = run(["encode", "subscription", doc], capsys)
    assert code == 2 and "generation: an integer of 5000 digits" in one_line(err)


@pytest.mark.parametrize("where", ["members[0].id", "members[1].topics[0]", "topics key", "members[0].rack"])
def test_a_lone_surrogate_is_refused_by_the_reader_in_every_command(where, tmp_path, capsys, assignment):
    doc = base()
    if where == "members[0].id":
        doc["members"][0]["id"] = "\udc80x"
    elif where == "members[1].topics[0]":
        doc["members"][1]["topics"] = ["t\ud800"]
    elif where == "topics key":
        doc["topics"] = {"t\udfff": 6}
    else:
        doc["members"][0]["rack"] = "\udc00"
    path = write(tmp_path, json.dumps(doc))  # ensure_ascii: the surrogate travels as an escape, as JSON allows
    for argv in each_command(path, assignment):
        code, out, err = run(argv, capsys)
        assert (code, out) == (2, ""), argv
        assert "lone UTF-16 surrogate" in one_line(err), argv
    raw = write(tmp_path, '{"topics": ["\\udc80"]}', "sub.json")
    code, _, err = run(["encode", "subscription", raw], capsys)
    assert code == 2 and one_line(err).startswith("InvalidScenario: topics[0]: holds a lone UTF-16 surrogate")


def test_surrogates_encoded_as_bytes_are_not_utf8(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_bytes(json.dumps(base()).encode().replace(b'"c1"', b'"c\xed\xb2\x80"', 1))
    code, _, err = run(["validate", str(path)], capsys)
    assert code == 2 and "is not UTF-8 text: byte offset" in one_line(err)


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"format": "stickyproof.scenario/1", "topics": {"t": 2, "t": 3}, "members": [{"id": "a", "topics": ["t"]}]}',
         "topics.t: key 't' appears twice"),
        ('{"format": "stickyproof.scenario/1", "topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "id": "b"}]}',
         "members[0].id: key 'id' appears twice"),
        ('{"format": "stickyproof.scenario/1", "topics": {"t": 2}, "members": [{"id": "", "topics": ["t"]}]}',
         "members[0].id: expected a member id string, got the empty string"),
        ('{"format": "stickyproof.scenario/1", "topics": {"": 2}, "members": [{"id": "a", "topics": []}]}',
         "topics.: expected a topic name, got the empty string"),
        ('{"format": "stickyproof.scenario/1", "topics": {"t": 2}, "members": [{"id": "a", "topics": [""]}]}',
         "members[0].topics[0]: expected a topic name, got the empty string"),
        ('{"format": "stickyproof.scenario/1", "topics": {"t": 2}, "members": []}',
         "members: a group has at least one member (its leader, R14)"),
        ('{"format": "stickyproof.scenario/1", "topics": {"t": NaN}, "members": [{"id": "a", "topics": ["t"]}]}',
         "topics.t: NaN is not a JSON value"),
        ('{"format": "stickyproof.scenario/1", "topics": {"t": {"partitions": 4294967296}}, "members": [{"id": "a", "topics": []}]}',
         "topics.t.partitions: partition count 4294967296 exceeds int32"),
    ],
)
def test_readers_refuse_what_kafka_cannot_have_naming_the_field(text, words, tmp_path, capsys):
    code, out, err = run(["validate", write(tmp_path, text)], capsys)
    assert (code, out) == (2, "")
    assert words in one_line(err)


def test_an_assignment_with_an_empty_member_id_or_a_repeated_member_is_refused(tmp_path, capsys):
    scenario = write(tmp_path, json.dumps(base()))
    empty = write(tmp_path, '{"format": "stickyproof.assignment/1", "assignment": {"": {"t": [0]}}}', "a.json")
    code, _, err = run(["check", scenario, empty], capsys)
    assert code == 2 and "assignment.: expected a member id, got the empty string" in one_line(err)
    twice = write(tmp_path, '{"format": "stickyproof.assignment/1", "assignment": {"c1": {"t": [0]}, "c1": {"t": [1]}}}', "b.json")
    code, _, err = run(["grade", scenario, "--assignment", twice], capsys)
    assert code == 2 and "assignment.c1: key 'c1' appears twice" in one_line(err)


def test_sweep_out_that_is_a_file_or_under_one_is_refused_before_spark(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out_dir, words in ((afile, "exists and is not a directory"), (afile / "sub", "cannot create the directory")):
        code, out, err = run(["sweep", "--groups", "1", "--out", str(out_dir)], capsys)
        assert (code, out) == (2, "")
        assert one_line(err).startswith(f"SweepError: --out {out_dir}: {words}")


def test_sweep_out_that_cannot_be_written_is_refused(tmp_path, capsys, monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)  # what a read-only directory does (even to root: a ro mount)
    code, _, err = run(["sweep", "--groups", "1", "--out", str(tmp_path / "ro")], capsys)
    assert code == 2 and one_line(err) == f"SweepError: --out {tmp_path / 'ro'}: cannot write into the directory (Permission denied)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_sweep_out_in_a_read_only_directory_is_refused(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        code, _, err = run(["sweep", "--groups", "1", "--out", str(ro)], capsys)
        assert code == 2 and "cannot write into the directory" in one_line(err)
    finally:
        ro.chmod(0o755)


LIMIT_FLAGS = [
    (["solve", "kip341-stale-rejoin"], "--cpsat-seconds"),
    (["grade", "kip341-stale-rejoin", "--assignor", "range"], "--assignor-seconds"),
    (["grade", "kip341-stale-rejoin", "--assignor", "range"], "--z3-query-seconds"),
    (["assign", "kip341-stale-rejoin", "--assignor", "range"], "--assignor-seconds"),
    (["hunt", "--assignor", "range"], "--shrink-seconds"),
    (["hunt", "--assignor", "range"], "--z3-query-seconds"),
    (["sweep", "--out", "never-created"], "--assignor-seconds"),
    (["sweep", "--out", "never-created"], "--shrink-seconds"),
]


@pytest.mark.parametrize("argv, flag", LIMIT_FLAGS)
@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_every_time_limit_flag_is_validated_naming_the_flag(argv, flag, value, capsys):
    code, out, err = run([*argv, flag, value], capsys)
    assert (code, out) == (2, "")
    assert one_line(err).startswith(f"InvalidOption: {flag}: must be a positive finite number of seconds")
    assert not Path("never-created").exists()


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["hunt", "--assignor", "range", "--examples", "0"], "--examples"),
        (["hunt", "--assignor", "range", "--min-stickiness", "nan"], "--min-stickiness"),
        (["hunt", "--assignor", "range", "--shrink-evaluations", "0"], "--shrink-evaluations"),
        (["sweep", "--out", "never-created", "--groups", "-3"], "--groups"),
        (["sweep", "--out", "never-created", "--chunk", "0"], "--chunk"),
        (["scenarios", "sample", "--seed", "1", "--index", "-1"], "--index"),
        (["assign", "kip341-stale-rejoin", "--max-partitions", "0"], "--max-partitions"),
        (["solve", "kip341-stale-rejoin", "--max-members", "9" * 5000], "--max-members"),
    ],
)
def test_count_flags_are_checked_naming_the_flag(argv, flag, capsys):
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "")
    assert flag in one_line(err)


# ------------------------------------------------------------------------------------------
# Item 3: sizes counted, limits named


def test_validate_counts_a_billion_partitions_without_building_them(tmp_path, capsys):
    doc = base()
    doc["topics"] = {"t": 10**9}
    started = time.perf_counter()
    code, out, _ = run(["validate", write(tmp_path, json.dumps(doc))], capsys)
    assert code == 0 and "1000000000 subscribed partitions" in out
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("argv", SCENARIO_COMMANDS[1:])
def test_a_group_past_the_partition_limit_is_refused_up_front_naming_the_limit(argv, tmp_path, capsys, assignment):
    doc = base()
    doc["topics"] = {"t": 10**9}
    path = write(tmp_path, json.dumps(doc))
    argv = [assignment if a == "ASSIGNMENT" else path if a == "{}" else a for a in argv]
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "")
    assert one_line(err) == ("InvalidScenario: topics: 1,000,000,000 partitions in total, more than --max-partitions "
                             "1,000,000 (a documented limit, docs/limits.md; raise it with --max-partitions N)")
    code, _, err = run([*argv, "--max-partitions", "5"], capsys)
    assert code == 2 and "more than --max-partitions 5 " in err


def test_the_member_limit_is_named_and_can_be_raised(capsys):
    code, _, err = run(["assign", "kip341-stale-rejoin", "--assignor", "range", "--max-members", "2"], capsys)
    assert code == 2 and one_line(err).startswith("InvalidScenario: members: 3 members, more than --max-members 2")
    code, out, _ = run(["assign", "kip341-stale-rejoin", "--assignor", "range", "--max-members", "3"], capsys)
    assert code == 0 and json.loads(out)["assignment"]


def test_space_knobs_past_what_the_sampler_can_build_are_refused_naming_the_knob(capsys):
    code, _, err = run(["scenarios", "sample", "--seed", "0", "--index", "0", "--space", "members=1000000"], capsys)
    assert code == 2 and one_line(err) == "InvalidSpace: space knob members: members=1000000..1000000: upper bound must be <= 2,000 (docs/limits.md)"
    code, _, err = run(["scenarios", "sample", "--seed", "0", "--index", "0", "--space", "topics=100", "partitions=1000"], capsys)
    assert code == 2 and "more than the sampler's 10,000" in one_line(err)


def test_hunt_refuses_a_space_hypothesis_could_never_draw_at_once(capsys):
    started = time.perf_counter()
    code, _, err = run(["hunt", "--assignor", "range", "--space", "members=2000"], capsys)
    assert code == 2 and one_line(err).startswith("InvalidSpace: space knob members: members=2000..: only 0% of this "
                                                  "space's smallest groups fit")
    assert time.perf_counter() - started < 10


def test_the_largest_members_knob_samples(capsys):
    started = time.perf_counter()
    code, out, _ = run(["scenarios", "sample", "--seed", "0", "--index", "0", "--space", "members=2000"], capsys)
    assert code == 0 and len(json.loads(out)["members"]) == 2000
    assert time.perf_counter() - started < 60


# ------------------------------------------------------------------------------------------
# Item 4: no green lies


def test_compare_of_sweeps_with_nothing_in_common_is_exit_2(tmp_path, capsys):
    from stickyproof.sweep.store import SweepDir
    from tests.test_sweep_rows import rows_of, write_chunk

    a, b = SweepDir(tmp_path / "a"), SweepDir(tmp_path / "b")
    write_chunk(a, "c1", rows_of(0, 4, "x"))
    write_chunk(b, "c1", rows_of(0, 4, "y"))
    code, out, err = run(["compare", str(a.root), str(b.root)], capsys)
    assert (code, out) == (2, "")
    assert "share no (scenario, assignor) pair (8 and 8 graded rows): nothing to compare" in one_line(err)


def test_encode_refuses_a_version_it_does_not_know(tmp_path, capsys):
    doc = write(tmp_path, '{"topics": ["a"]}', "sub.json")
    for argv, words in (
        (["encode", "subscription", "--version", "4", doc], "InvalidOption: --version: subscription has versions 0-3; got 4"),
        (["encode", "assignment", "--version", "-1", write(tmp_path, '{"assigned": {}}', "a.json")],
         "InvalidOption: --version: assignment has versions 0-3; got -1"),
        (["encode", "sticky-user-data", "--version", "2", write(tmp_path, '{"previous_assignment": {}}', "u.json")],
         "InvalidOption: --version: sticky-user-data has versions 0-1; got 2"),
        (["encode", "subscription", write(tmp_path, '{"version": 7, "topics": []}', "v.json")],
         "InvalidScenario: version: subscription has versions 0-3; got 7"),
    ):
        code, out, err = run(argv, capsys)
        assert (code, out) == (2, "")
        assert one_line(err).startswith(words)


def test_an_event_past_max_ticks_is_an_error_naming_the_event(tmp_path, capsys):
    events = write(tmp_path, '[{"at": 5, "event": "leave", "member": "c2"}, {"at": 600, "event": "crash", "member": "c1"}]', "e.json")
    code, out, err = run(["simulate", "kip341-stale-rejoin", "--events", events], capsys)
    assert (code, out) == (2, "")
    assert one_line(err).startswith("InvalidScenario: events[1].at: c1 crashes is scheduled at tick 600, at or past "
                                    "the simulation's end (config.max_ticks = 600)")
    rolling = write(tmp_path, '{"format": "stickyproof.events/1", "config": {"max_ticks": 40}, "events": '
                              '[{"at": 10, "event": "rolling-restart", "gap": 20}]}', "r.json")
    code, _, err = run(["simulate", "kip341-stale-rejoin", "--events", rolling], capsys)
    assert code == 2 and "its last restart at tick 50" in one_line(err)


def test_a_simulation_longer_than_the_documented_limit_is_refused(tmp_path, capsys):
    events = write(tmp_path, '{"format": "stickyproof.events/1", "config": {"max_ticks": 2147483647}, "events": '
                             '[{"at": 2147483646, "event": "crash", "member": "c1"}]}', "e.json")
    code, _, err = run(["simulate", "kip341-stale-rejoin", "--events", events], capsys)
    assert code == 2 and one_line(err) == ("InvalidScenario: config.max_ticks: 2,147,483,647 ticks, more than the "
                                           "simulator's limit of 100,000 (docs/limits.md)")


def test_the_last_tick_before_the_horizon_still_runs(tmp_path, capsys):
    events = write(tmp_path, '[{"at": 599, "event": "crash", "member": "c1"}]', "e.json")
    code, out, _ = run(["simulate", "kip341-stale-rejoin", "--events", events, "--json"], capsys)
    assert code in (0, 1)
    assert any("c1 crashes" in step["events"] for step in json.loads(out)["steps"] if step["tick"] == 599)


# ------------------------------------------------------------------------------------------
# Item 5: one grammar


def subcommands():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for name, p in sub.choices.items():
        inner = [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"]
        if inner:
            for action_name, q in inner[0].choices.items():
                yield f"{name} {action_name}", q
        else:
            yield name, p


def test_every_command_takes_json():
    missing = [name for name, p in subcommands() if "--json" not in p._option_string_actions]
    assert not missing, f"commands without --json: {missing}"


def test_every_scenario_command_takes_the_scenario_positionally():
    for name, p in subcommands():
        if name in ("validate", "assign", "solve", "check", "grade", "simulate"):
            positional = [a for a in p._actions if not a.option_strings and a.dest == "scenario"]
            assert positional and positional[0].metavar == "SCENARIO", name


def test_the_same_limit_has_the_same_flag_everywhere():
    seen = {}
    for name, p in subcommands():
        for flag in p._option_string_actions:
            if flag.endswith(("-seconds", "-work")) or flag in ("--shrink-evaluations", "--max-partitions", "--max-members"):
                seen.setdefault(flag, []).append(name)
    assert set(seen) <= {"--assignor-seconds", "--z3-query-seconds", "--cpsat-work", "--cpsat-seconds", "--shrink-seconds",
                         "--triage-seconds", "--shrink-evaluations", "--max-partitions", "--max-members"}
    assert "--time-limit" not in {f for _, p in subcommands() for f in p._option_string_actions}


def test_simulate_takes_a_positional_scenario_stdin_and_the_old_flag(capsys, monkeypatch):
    code, out, _ = run(["simulate", "kip341-stale-rejoin", "--brief"], capsys)
    assert code == 0 and "all monitors hold" in out
    code, out, _ = run(["simulate", "--scenario", "kip341-stale-rejoin", "--brief"], capsys)
    assert code == 0 and "all monitors hold" in out
    code, out, _ = run(["simulate", "-", "--json"], capsys, stdin=json.dumps(base()).encode(), monkeypatch=monkeypatch)
    assert code == 0 and json.loads(out)["ok"] is True
    code, _, err = run(["simulate", "kip341-stale-rejoin", "--scenario", "kip341-stale-rejoin"], capsys)
    assert code == 2 and "give the scenario once" in one_line(err)
    assert "--scenario" not in build_parser().format_help()


def test_json_output_of_the_text_commands(capsys, tmp_path):
    code, out, _ = run(["validate", "kip341-stale-rejoin", "--json"], capsys)
    assert code == 0 and json.loads(out)["subscribed_partitions"] == 6
    code, out, _ = run(["encode", "cooperative-user-data", write(tmp_path, '{"generation": 5}'), "--json"], capsys)
    assert code == 0 and json.loads(out) == {"message": "cooperative-user-data", "hex": "00000005"}
    code, out, _ = run(["scenarios", "list", "--json"], capsys)
    assert code == 0 and any(r["name"] == "kip341-stale-rejoin" for r in json.loads(out))


def test_scenarios_knobs_and_the_help_of_hunt_and_sweep_list_every_knob(capsys):
    from stickyproof.scenarios.space import ALL_KNOBS

    code, out, _ = run(["scenarios", "knobs"], capsys)
    assert code == 0 and all(f"\n{k} " in "\n" + out for k in ALL_KNOBS)
    code, out, _ = run(["scenarios", "knobs", "--json"], capsys)
    assert [r["knob"] for r in json.loads(out)["knobs"]] == list(ALL_KNOBS)
    for command in ("hunt", "sweep"):
        text = build_parser()._subparsers._group_actions[0].choices[command].format_help()
        assert all(f"  {k} (" in text for k in ALL_KNOBS), command


def test_a_user_assignor_imports_from_the_current_directory(tmp_path):
    (tmp_path / "mymod.py").write_text(
        "def fn(group):\n"
        "    members = [m['id'] for m in group['members']]\n"
        "    return {m: ({'t': list(range(6))} if i == 0 else {}) for i, m in enumerate(members)}\n"
    )
    # -P: the current directory is not on this process's path, as with the installed console script
    done = subprocess.run(
        [sys.executable, "-P", "-c", "import sys; from stickyproof.cli import main; sys.exit(main())",
         "assign", "kip341-stale-rejoin", "--assignor", "mymod:fn"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": SRC}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["assignment"]["c1"] == {"t": [0, 1, 2, 3, 4, 5]}


# ------------------------------------------------------------------------------------------
# Ctrl-C


def interrupt(argv: list[str], after: float, stdin=subprocess.DEVNULL) -> tuple[int, str]:
    # ``-m stickyproof`` is the console script's path (``_entry``): on a loaded machine the signal can
    # land while the command modules are still importing, which ``_entry`` answers like any Ctrl-C
    # (``-m stickyproof.cli`` imports them before any handler of ours runs, and Python dies of SIGINT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "stickyproof", *argv], stdin=stdin, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": SRC}, text=True,
    )
    try:
        time.sleep(after)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # a process that ignored Ctrl-C must not outlive the test
    return proc.returncode, err


def test_ctrl_c_while_reading_standard_input_is_exit_130_and_one_line():
    code, err = interrupt(["validate", "-"], 3.0, stdin=subprocess.PIPE)
    assert code == 130 and err == "interrupted\n"


def test_ctrl_c_in_a_hunt_is_exit_130_and_one_line():
    code, err = interrupt(["hunt", "--assignor", "sticky", "--examples", "100000", "--keep-going"], 8.0)
    assert code == 130 and err == "interrupted\n"



def run_script(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": SRC},
                          capture_output=True, text=True, timeout=60)


def test_after_ctrl_c_a_half_built_objects_finalizer_prints_nothing():
    # what CI once saw: Ctrl-C inside z3's ParamsRef.__init__ left an object whose __del__ failed
    # after "interrupted", and Python printed "Exception ignored in ..." with a traceback
    done = run_script(
        "import sys\n"
        "from stickyproof.cli import interrupts\n"
        "restore = interrupts.watch()\n"
        "class Half:\n"
        "    def __init__(self):\n"
        "        interrupts.on_sigint(2, None)\n"
        "    def __del__(self):\n"
        "        self.params\n"
        "try:\n"
        "    Half()\n"
        "except KeyboardInterrupt:\n"
        "    code = interrupts.interrupted()\n"
        "sys.exit(code)\n"
    )
    assert (done.returncode, done.stderr) == (130, "interrupted\n")


def test_ctrl_c_landing_in_a_gc_callback_reaches_the_command():
    # a hunt once lost its Ctrl-C in Hypothesis's gc callback ("Exception ignored in gc_callback ...
    # KeyboardInterrupt") and ran on until the watchdog ended it
    done = run_script(
        "import gc, sys\n"
        "from stickyproof.cli import interrupts\n"
        "restore = interrupts.watch()\n"
        "def once(phase, info):\n"
        "    gc.callbacks.remove(once)\n"
        "    interrupts.on_sigint(2, None)\n"
        "gc.callbacks.append(once)\n"
        "try:\n"
        "    gc.collect()\n"
        "    for _ in range(10**7):\n"
        "        pass\n"
        "    print('the command never heard of it')\n"
        "    code = 0\n"
        "except KeyboardInterrupt:\n"
        "    code = interrupts.interrupted()\n"
        "sys.exit(code)\n"
    )
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "interrupted\n")


def test_without_ctrl_c_an_unraisable_error_is_still_printed():
    done = run_script(
        "from stickyproof.cli import interrupts\n"
        "restore = interrupts.watch()\n"
        "class Broken:\n"
        "    def __del__(self):\n"
        "        raise ValueError('a finalizer bug')\n"
        "Broken()\n"
    )
    assert done.returncode == 0 and "a finalizer bug" in done.stderr


def test_ctrl_c_inside_a_long_solver_call_ends_the_process_after_the_grace():
    # Python raises KeyboardInterrupt only between bytecodes, never inside one Z3 check (ctrl_c off,
    # as the solver commands set it; here the pigeonhole principle, 14 into 13, which Z3 does not
    # finish in minutes): the watchdog ends the process itself once INTERRUPT_GRACE_SECONDS passed
    from stickyproof.cli.interrupts import INTERRUPT_GRACE_SECONDS

    script = (
        "import z3\nfrom stickyproof.cli import interrupts\nrestore = interrupts.watch()\ninterrupts.leave_ctrl_c_to_python()\n"
        "n = 14\nx = [[z3.Bool(f'p{i}_{j}') for j in range(n - 1)] for i in range(n)]\ns = z3.Solver()\n"
        "for i in range(n):\n    s.add(z3.Or(x[i]))\n"
        "for j in range(n - 1):\n    for i in range(n):\n        for k in range(i + 1, n):\n"
        "            s.add(z3.Or(z3.Not(x[i][j]), z3.Not(x[k][j])))\n"
        "print('ready', flush=True)\nprint(s.check())\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": SRC}, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        time.sleep(0.5)  # inside the check
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # a process that ignored Ctrl-C must not outlive the test
    assert (proc.returncode, out, err) == (130, "", "interrupted\n")
    assert time.monotonic() - started >= INTERRUPT_GRACE_SECONDS - 0.1


GOLOMB_13 = (  # the shortest Golomb ruler with 13 marks: CP-SAT does not prove it in minutes
    "from ortools.sat.python import cp_model\n"
    "model = cp_model.CpModel()\n"
    "x = [model.new_int_var(0, 169, f'x{i}') for i in range(13)]\n"
    "model.add(x[0] == 0)\n"
    "for i in range(12):\n    model.add(x[i] < x[i + 1])\n"
    "model.add_all_different([x[j] - x[i] for i in range(13) for j in range(i + 1, 13)])\n"
    "model.minimize(x[-1])\n"
    "solver = cp_model.CpSolver()\n"
    "solver.parameters.max_time_in_seconds = 120\n"
)


def test_ctrl_c_inside_a_cp_sat_solve_stops_the_search_at_once():
    # CP-SAT's own SIGINT handler would stop the search and return its incumbent as if time had run
    # out (the command then printed a FEASIBLE answer); the oracle's solve_interruptibly leaves the
    # signal to Python and stops the search itself, so KeyboardInterrupt reaches the command at
    # once, not after the watchdog's grace (the child prints when, on the machine's monotonic
    # clock; OR-Tools then takes seconds to exit, which is not the point here)
    from stickyproof.cli.interrupts import INTERRUPT_GRACE_SECONDS

    script = (
        GOLOMB_13 + "import sys, time\nfrom stickyproof.cli import interrupts\nfrom stickyproof.oracle.optimal import solve_model\n"
        "restore = interrupts.watch()\nprint('ready', flush=True)\n"
        "try:\n    print(solve_model(solver, model))\n    code = 0\n"
        "except KeyboardInterrupt:\n    print(time.monotonic(), flush=True)\n    code = interrupts.interrupted()\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": SRC}, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        time.sleep(1.0)  # inside the search
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # a process that ignored Ctrl-C must not outlive the test
    assert (proc.returncode, err) == (130, "interrupted\n")
    assert float(out) - started < INTERRUPT_GRACE_SECONDS / 3  # the search stopped, not the watchdog


def test_after_a_cp_sat_solve_ctrl_c_still_reaches_python():
    # CP-SAT, left to catch SIGINT, sets it to the system default when a solve returns: a later
    # Ctrl-C killed the process without a word. The oracle's solves leave the handler as it was
    done = run_script(
        # a process started with SIGINT ignored (a background job of a non-interactive shell) keeps
        # it ignored and Python installs no handler: give it Python's, as a terminal's process has
        "import os, signal, time\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from ortools.sat.python import cp_model\n"
        "from stickyproof.oracle.optimal import solve_model\n"
        "model = cp_model.CpModel()\nx = model.new_int_var(0, 5, 'x')\nmodel.maximize(x)\n"
        "print(solve_model(cp_model.CpSolver(), model))\n"
        # short sleeps: Python raises the interrupt at the first bytecode after any of them returns
        "try:\n    os.kill(os.getpid(), signal.SIGINT)\n    for _ in range(500):\n        time.sleep(0.01)\n    print('lost')\n"
        "except KeyboardInterrupt:\n    print('reached python')\n"
    )
    assert (done.returncode, done.stdout) == (0, "OPTIMAL\nreached python\n")


def test_no_code_patches_a_solver_at_import_or_during_a_run():
    # the command line once replaced CpSolver.solve process-wide; the solvers' classes and modules
    # must come out of importing every stickyproof module and running the solver commands (the
    # real-process path, watchdog included) exactly as OR-Tools and Z3 made them
    done = run_script(
        "import importlib, io, pkgutil, sys, types\n"
        "import z3\n"
        "from ortools.sat.python import cp_model\n"
        "from ortools.graph.python import min_cost_flow\n"
        "def attributes():\n"
        "    out = {}\n"
        "    for c in (cp_model.CpSolver, cp_model.CpModel, cp_model.CpSolverSolutionCallback,\n"
        "              min_cost_flow.SimpleMinCostFlow, z3.Solver, z3.Optimize, z3.Context):\n"
        "        out.update({(c.__qualname__, k): v for k, v in vars(c).items()})\n"
        "    for m in (cp_model, min_cost_flow, z3, sys.modules['z3.z3']):\n"
        "        out.update({(m.__name__, k): v for k, v in vars(m).items()\n"
        "                    if isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType))})\n"
        "    return out\n"
        "before = attributes()\n"
        "import stickyproof\n"
        "for info in pkgutil.walk_packages(stickyproof.__path__, 'stickyproof.'):\n"
        "    if not info.name.endswith('__main__'):\n"
        "        importlib.import_module(info.name)\n"
        "after_import = attributes()\n"
        "from stickyproof.cli import main\n"
        "codes = []\n"
        "for argv in (['solve', '--engine', 'both', 'kip429-new-member'],\n"
        "             ['grade', '--assignor', 'cooperative-sticky', 'kip429-new-member']):\n"
        "    sys.argv, sys.stdout = ['stickyproof', *argv], io.StringIO()\n"
        "    codes.append(main())\n"
        "sys.stdout = sys.__stdout__\n"
        "after_run = attributes()\n"
        "def changed(a, b):\n"
        "    return sorted(str(k) for k in set(a) | set(b) if a.get(k, changed) is not b.get(k, changed))\n"
        "print(codes, changed(before, after_import), changed(before, after_run))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[0, 0] [] []\n"


def test_ctrl_c_while_the_command_line_imports_is_exit_130_and_one_line():
    # the console script's entry point: a Ctrl-C during `import stickyproof.cli` (a quarter of a
    # second of command modules) is exit 130 and one line, not a KeyboardInterrupt traceback
    done = run_script(
        "import builtins, sys\n"
        "real_import = builtins.__import__\n"
        "def interrupted_import(name, *args, **kwargs):\n"
        "    if name == 'cli':\n"
        "        raise KeyboardInterrupt\n"
        "    return real_import(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupted_import\n"
        "from stickyproof._entry import main\n"
        "sys.exit(main())\n"
    )
    assert (done.returncode, done.stderr) == (130, "interrupted\n")



@pytest.mark.parametrize("argv, hint", [
    (["grad", "kip341-stale-rejoin"], "did you mean 'grade'?"),
    (["grade", "kip341-stale-rejoin", "--assignr", "sticky"], "did you mean --assignor?"),
    (["sweep", "--out", "x", "--sale", "small"], "did you mean --scale?"),
])
def test_a_misspelt_command_or_flag_names_the_closest_real_one(argv, hint, capsys):
    from stickyproof.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and hint in err and len(err.strip().splitlines()) == 1, err
