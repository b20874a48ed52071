"""``exec:`` assignors (models/assignor-protocol.md): every failure of §6 is the call's recorded error,
with its exit status or signal and stderr tail, and the next call works again on a fresh child.

The children are tests/peer_children.py in one mode each. Modes given a marker file misbehave
once (they create it), so the restarted child behaves and the test can show the restart.
"""

from __future__ import annotations

import base64
import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from stickyproof.assignors.base import COOPERATIVE, EAGER, GroupSubscription, Subscription
from stickyproof.errors import (
    AssignorCrash,
    AssignorFailure,
    AssignorGarbage,
    AssignorTimeLimit,
    InvalidOption,
    UnknownAssignor,
)
from stickyproof.grading import Limits, grade_assignor
from stickyproof.model import Topic, TopicPartition
from stickyproof.lookup import ADAPTERS
from stickyproof.lookup import get_assignor as resolve
from stickyproof.peers.exec import STDERR_LINES, ExecAssignorFn, exec_assignor
from stickyproof.peers.protocol import (
    MAX_ANSWER_PARTITIONS,
    MAX_LINE_BYTES,
    decode_answer,
    partition_list,
    request_document,
)
from stickyproof.wire import decode_subscription

from .builders import group, member

CHILD = str(Path(__file__).with_name("peer_children.py"))


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


GROUP = GroupSubscription(
    {"t": Topic("t", 4)},
    (Subscription("a", ("t",)), Subscription("b", ("t",))),
)
DEALT = {"a": (tp("t", 0), tp("t", 2)), "b": (tp("t", 1), tp("t", 3))}


@pytest.fixture
def peer():
    """``peer(mode, arg=None, seconds=5)``: a fresh exec assignor running one child mode, closed afterwards."""
    made = []

    def make(mode: str, arg: str | None = None, seconds: float = 5.0, **options):
        argv = [sys.executable, CHILD, mode] + ([arg] if arg is not None else [])
        info = exec_assignor(f"exec:{mode}", argv, call_seconds=seconds, **options)
        made.append(info)
        return info

    yield make
    for info in made:
        info.fn.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def child_pid(info) -> int:
    return info.fn.client._child.proc.pid


# ------------------------------------------------------------------------------------------
# A well-behaved child


def test_hello_names_the_assignor_and_its_protocols(peer):
    info = peer("good")
    assert info.name == "exec:good"
    assert info.kafka_name == "test-child"
    assert info.protocols == (COOPERATIVE, EAGER)
    assert info.user and info.variant == "peer"


def test_one_child_serves_many_calls(peer):
    info = peer("good")
    pid = child_pid(info)
    for _ in range(3):
        assert dict(info.fn(GROUP).assignment) == DEALT
    assert child_pid(info) == pid and info.fn.client.starts == 1
    timing = info.fn.last_timing
    assert timing.assign_seconds == 0.001 and timing.request_bytes > 0 and timing.answer_bytes > 0
    assert timing.pipe_seconds == pytest.approx(timing.total_seconds - 0.001)


def test_a_peer_announcing_a_kafka_name_is_led_as_that_kafka_assignor(peer):
    info = peer("wire")
    assert info.kafka_name == "sticky" and not info.user and info.variant == "current"


# ------------------------------------------------------------------------------------------
# §6: each failure is the call's error, and the next call works on a fresh child


@pytest.mark.parametrize(
    "mode, error, kind, status, sig, said",
    [
        ("exit", AssignorCrash, "crash", 3, None, "about to exit with 3"),
        ("segv", AssignorCrash, "crash", None, "SIGSEGV", "about to segfault"),
        ("hang", AssignorTimeLimit, "time-limit", None, None, "thinking forever"),
        ("garbage", AssignorGarbage, "garbage", None, None, None),
        ("wrong-id", AssignorGarbage, "garbage", None, None, None),
    ],
)
def test_a_failing_call_is_recorded_and_the_child_restarted(peer, tmp_path, mode, error, kind, status, sig, said):
    info = peer(mode, str(tmp_path / "marker"), seconds=1.5)
    first = child_pid(info)
    started = time.monotonic()
    with pytest.raises(error) as caught:
        info.fn(GROUP)
    assert time.monotonic() - started < 5
    exc = caught.value
    assert exc.kind == kind
    if isinstance(exc, AssignorCrash) and not isinstance(exc, AssignorGarbage):
        assert (exc.exit_status, exc.signal) == (status, sig)
        assert said in exc.stderr_tail
    if said:
        assert said in str(exc)  # the stderr tail is in the message a grade records
    if mode == "garbage":
        assert exc.line == "this is not json"
    if mode == "wrong-id":
        assert '"id": 101' in exc.line and "to call 1" in str(exc)
    assert not alive(first)  # killed and reaped, never left behind
    assert dict(info.fn(GROUP).assignment) == DEALT
    assert info.fn.client.starts == 2


def test_an_answer_over_the_size_limit_is_garbage(peer, tmp_path):
    info = peer("oversize", str(tmp_path / "marker"), seconds=20)
    with pytest.raises(AssignorGarbage, match=f"over {MAX_LINE_BYTES} bytes"):
        info.fn(GROUP)
    assert dict(info.fn(GROUP).assignment) == DEALT


def test_a_second_line_puts_the_stream_out_of_step(peer):
    info = peer("two-lines")
    assert dict(info.fn(GROUP).assignment) == DEALT
    with pytest.raises(AssignorGarbage, match="answered with id 1 to call 2"):
        info.fn(GROUP)
    assert dict(info.fn(GROUP).assignment) == DEALT


def test_the_stderr_tail_is_its_last_40_lines_even_when_it_floods(peer):
    info = peer("flood-stderr", seconds=20)
    with pytest.raises(AssignorCrash) as caught:
        info.fn(GROUP)
    assert caught.value.exit_status == 5
    assert len(caught.value.stderr_tail) == STDERR_LINES
    assert caught.value.stderr_tail[-1] == "log line 199999"


def test_a_time_limit_kills_the_whole_process_group(peer):
    info = peer("grandchild", seconds=1.5)
    with pytest.raises(AssignorTimeLimit) as caught:
        info.fn(GROUP)
    line = next(ln for ln in str(caught.value).splitlines() if ln.startswith("  grandchild "))
    grandchild = int(line.split()[-1])
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild) or _zombie(grandchild)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return False


def test_a_slow_answer_within_the_limit_is_an_answer(peer):
    info = peer("slow", "0.3", seconds=3)
    assert dict(info.fn(GROUP).assignment) == DEALT


# ------------------------------------------------------------------------------------------
# §5: answers are checked like a user callable's result; the child stays


@pytest.mark.parametrize(
    "mode, path",
    [
        ("unknown-member", "assignment.ghost: not a member of the group"),
        ("negative", "assignment.a.t[1]: partition -2 outside"),
        ("bad-ranges", "assignment.a.t.ranges[0]: expected [first, last]"),
    ],
)
def test_a_malformed_assignment_is_garbage_naming_the_path(peer, mode, path):
    info = peer(mode)
    for _ in range(2):
        with pytest.raises(AssignorGarbage) as caught:
            info.fn(GROUP)
        assert path in str(caught.value) and caught.value.kind == "garbage"
    assert info.fn.client.starts == 1  # the stream is in step: no restart needed


def test_a_partition_listed_twice_is_kept_for_the_grader(peer):
    info = peer("duplicate")
    assert dict(info.fn(GROUP).assignment) == {"a": (tp("t", 0), tp("t", 1)), "b": (tp("t", 1), tp("t", 1))}


def test_an_error_answer_is_the_assignors_failure(peer):
    info = peer("error")
    with pytest.raises(AssignorFailure) as caught:
        info.fn(GROUP)
    exc = caught.value
    assert type(exc) is AssignorFailure and exc.kind == "error"
    assert exc.kafka_exception == "IllegalStateException"
    assert "No more unfilled consumers" in str(exc)
    assert info.fn.client.starts == 1


# ------------------------------------------------------------------------------------------
# §2: a child that cannot start is an unknown assignor (exit 2)


@pytest.mark.parametrize(
    "mode, message",
    [
        ("no-hello-exit", "exited with status 4 before its hello"),
        ("bad-hello", 'no "stickyproof" key'),
        ("other-version", "assignor/9"),
        ("silent", "wrote no hello within 1 s"),
    ],
)
def test_a_child_without_a_valid_hello_is_an_unknown_assignor(mode, message):
    with pytest.raises(UnknownAssignor, match=message) as caught:
        exec_assignor(f"exec:{mode}", [sys.executable, CHILD, mode], start_seconds=1)
    if mode == "no-hello-exit":
        assert "cannot start: missing config" in str(caught.value)


def test_a_missing_command_is_an_unknown_assignor():
    with pytest.raises(UnknownAssignor, match="cannot start /nonexistent/assignor"):
        exec_assignor("exec:/nonexistent/assignor", ["/nonexistent/assignor"])


def test_exec_prefix_splits_the_command_like_a_shell(tmp_path):
    info = resolve(f"exec:{sys.executable} '{CHILD}' good")
    try:
        assert dict(info.fn(GROUP).assignment) == DEALT
        assert resolve(f"exec:{sys.executable} '{CHILD}' good") is info  # one child per assignor per process
    finally:
        info.fn.close()
    with pytest.raises(UnknownAssignor, match="needs a command"):
        resolve("exec:   ")
    # a built-in name and a module:callable are not adapter names: the lookup's table has no row for them
    assert resolve("sticky").name == "sticky" and {"sticky", "mod"}.isdisjoint(a.prefix for a in ADAPTERS)


def test_a_per_call_limit_must_be_a_positive_number(peer):
    info = peer("good")
    for bad in (0, -1, float("nan"), float("inf"), True):
        with pytest.raises(InvalidOption):
            ExecAssignorFn(info.fn.client, bad)
    assert info.fn.with_time_limit(None) is info.fn
    assert info.fn.with_time_limit(2).seconds == 2.0


# ------------------------------------------------------------------------------------------
# Requests: §3 shapes, §4 ranges, wire bytes


def test_owned_lists_travel_as_ranges_only_when_accepted_and_shorter(peer, tmp_path):
    owned = tuple(tp("t", p) for p in range(10)) + (tp("u", 3),)
    group = GroupSubscription(
        {"t": Topic("t", 10), "u": Topic("u", 5)},
        (Subscription("a", ("t", "u"), owned=owned, generation=2), Subscription("b", ("t", "u"))),
        COOPERATIVE,
    )
    record = tmp_path / "requests.jsonl"
    info = peer("record", str(record))
    info.fn(group)
    sent = json.loads(record.read_text())
    assert sent["group"]["members"][0]["owned"] == {"t": list(range(10)), "u": [3]}  # no "accepts": arrays
    doc = request_document(1, group, ranges=True)
    assert doc["group"]["members"][0]["owned"] == {"t": {"ranges": [[0, 9]]}, "u": [3]}
    assert doc["group"]["members"][0]["generation"] == 2 and doc["group"]["members"][1]["generation"] == -1


def test_partition_lists_keep_order_and_repeats():
    assert partition_list([0, 1, 2, 3, 4, 5], True) == {"ranges": [[0, 5]]}
    assert partition_list([5, 4, 3, 2, 1, 0], True) == [5, 4, 3, 2, 1, 0]  # claim order would be lost
    assert partition_list([0, 1, 1, 2, 3, 4], True) == [0, 1, 1, 2, 3, 4]  # a repeat would be lost
    assert partition_list([0, 2, 4, 6, 8, 10], True) == [0, 2, 4, 6, 8, 10]  # ranges would be longer
    assert partition_list(list(range(100)), False) == list(range(100))


def test_answers_in_ranges_are_expanded_and_bounded():
    line = json.dumps({"id": 1, "assignment": {"a": {"t": {"ranges": [[0, 2], [5, 5]]}}}}).encode()
    assert decode_answer(line, 1, ["a", "b"], "x").assignment.assignment == {
        "a": (tp("t", 0), tp("t", 1), tp("t", 2), tp("t", 5)), "b": ()}
    huge = json.dumps({"id": 1, "assignment": {"a": {"t": {"ranges": [[0, MAX_ANSWER_PARTITIONS]]}}}}).encode()
    with pytest.raises(AssignorGarbage, match="more than"):
        decode_answer(huge, 1, ["a"], "x")


def test_member_ids_of_any_unicode_cross_the_pipe(peer):
    odd = "c\udc80-\u00e9"  # a lone surrogate survives a scenario document, so it must survive the pipe
    group = GroupSubscription({"t": Topic("t", 2)}, (Subscription(odd, ("t",)), Subscription("b", ("t",))))
    info = peer("good")
    assert dict(info.fn(group).assignment) == {odd: (tp("t", 0),), "b": (tp("t", 1),)}


def test_wire_requests_carry_each_members_subscription_bytes(peer, tmp_path):
    raw = bytes.fromhex("0001000000010001740000000000000000")  # any bytes the leader received go as they came
    group = GroupSubscription(
        {"t": Topic("t", 4)},
        (Subscription("a", ("t",), raw=raw),
         Subscription("b", ("t",), owned=(tp("t", 1),), generation=3, rack="r1", version=3)),
    )
    doc = request_document(1, group, wire=True)
    assert base64.b64decode(doc["subscriptions"]["a"]) == raw
    decoded = decode_subscription(base64.b64decode(doc["subscriptions"]["b"]))  # no bytes (direct): the fields, encoded
    assert (decoded.topics, decoded.owned, decoded.generation, decoded.rack) == (("t",), (tp("t", 1),), 3, "r1")
    assert "subscriptions" not in request_document(1, group)
    record = tmp_path / "requests.jsonl"
    info = peer("record", str(record))
    info.fn(group)
    assert "subscriptions" not in json.loads(record.read_text())


# ------------------------------------------------------------------------------------------
# Graded, not crashed on; no process outlives its owner


def test_a_hostile_child_is_graded_not_crashed_on(peer, tmp_path):
    scenario = group({"t": 4}, [member("a").topics("t"), member("b").topics("t")])
    crash = grade_assignor(scenario, peer("segv"))
    assert not crash.valid and crash.run_error.kind == "crash" and "SIGSEGV" in crash.run_error.message
    started = time.monotonic()
    hung = grade_assignor(scenario, peer("hang", seconds=60), limits=Limits(assignor_seconds=1))
    assert hung.run_error.kind == "time-limit" and time.monotonic() - started < 10
    good = grade_assignor(scenario, peer("good"))
    assert good.run_error is None and good.valid


def _call_in_fork(info, queue):
    queue.put((os.getpid(), dict(info.fn(GROUP).assignment) == DEALT, child_pid(info)))


def test_a_forked_worker_starts_its_own_child(peer):
    info = peer("good")
    parent_child = child_pid(info)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    worker = ctx.Process(target=_call_in_fork, args=(info, queue))
    worker.start()
    pid, ok, its_child = queue.get(timeout=30)
    worker.join(30)
    deadline = time.monotonic() + 5
    while alive(its_child) and not _zombie(its_child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ok and its_child != parent_child
    assert not alive(its_child) or _zombie(its_child)  # the worker's exit ended its own child
    assert child_pid(info) == parent_child and dict(info.fn(GROUP).assignment) == DEALT


def test_no_child_outlives_the_interpreter(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from stickyproof.peers.exec import exec_assignor
        info = exec_assignor("exec:hang", [sys.executable, {CHILD!r}, "grandchild"], call_seconds=60)
        print(info.fn.client._child.proc.pid, flush=True)
    """)
    src = str(Path(__file__).resolve().parents[1] / "src")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": src})
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 5
    while alive(pid) and not _zombie(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid) or _zombie(pid)


# ------------------------------------------------------------------------------------------
# kafka-java: through the manifest its build script writes (franz-go: and sarama: are built
# from the Go module proxy instead: tests/test_peers_go.py)


def test_built_harnesses_are_found_through_their_manifest(tmp_path, monkeypatch):
    (tmp_path / "kafka-java").mkdir()
    (tmp_path / "kafka-java" / "manifest.json").write_text(json.dumps(
        {"assignors": {"test-good": [sys.executable, CHILD, "good"]}}))
    monkeypatch.setenv("STICKYPROOF_PEERS_DIR", str(tmp_path))
    info = resolve("kafka-java:test-good@local")
    try:
        assert info.name == "kafka-java:test-good@local" and info.kafka_name == "test-child"
        assert dict(info.fn(GROUP).assignment) == DEALT
    finally:
        info.fn.close()
    with pytest.raises(UnknownAssignor, match=r"no assignor 'cooperative-sticky' \(it has: test-good\)"):
        resolve("kafka-java:cooperative-sticky@local")


def test_an_unbuilt_harness_says_how_to_build_it(tmp_path, monkeypatch):
    monkeypatch.setenv("STICKYPROOF_PEERS_DIR", str(tmp_path))
    with pytest.raises(UnknownAssignor, match=r"kafka-java: no harness built .* peers/kafka-java/build.sh"):
        resolve("kafka-java:sticky@local")
    (tmp_path / "kafka-java").mkdir()
    (tmp_path / "kafka-java" / "manifest.json").write_text('{"assignors": {"sticky": "not an array"}}')
    with pytest.raises(UnknownAssignor, match="peers/kafka-java/build.sh"):
        resolve("kafka-java:sticky@local")


def test_a_failed_build_is_named_by_its_first_maven_error_not_mavens_advice():
    from stickyproof.peers.builds import failure_line

    maven = ("[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal on project h: Could not resolve dependencies: "
             "kafka-clients:jar:9.9.9 was not found\n[ERROR] \n[ERROR] Re-run Maven using the -X switch\n"
             "[ERROR] [Help 1] http://example.invalid/DependencyResolutionException\n")
    assert failure_line(maven).startswith("[ERROR] Failed to execute goal")
    assert failure_line("go: downloading x\nmain.go:3:2: error: no required module\nexit") == "main.go:3:2: error: no required module"


# ------------------------------------------------------------------------------------------
# What an adapter author sees: the hello's name in reports, the leader in each request, the contract


def test_the_hellos_name_is_shown_beside_the_exec_name_in_a_grade(peer):
    from stickyproof.cli.grade import grade_line

    info = peer("good")
    assert info.name == "exec:good" and info.display == "test-child"
    scenario = group({"t": 4}, [member("a").topics("t"), member("b").topics("t")])
    doc = grade_assignor(scenario, info).to_dict()
    assert doc["assignor"] == "exec:good" and doc["assignor_name"] == "test-child"
    assert grade_line(doc).startswith("valid; ") and grade_line(doc).endswith(" (assignor test-child)")
    assert grade_assignor(scenario, "range").to_dict()["assignor_name"] is None  # a built-in says nothing more


def test_each_request_names_the_leader(peer, tmp_path):
    from stickyproof.leader import lead

    calls = tmp_path / "requests.jsonl"
    info = peer("record", str(calls))
    scenario = group({"t": 4}, [member("a").topics("t"), member("b").topics("t")])
    lead(scenario, info)  # one scenario names no leader: its first member leads
    lead(scenario, info, leader="b")  # a simulation's elected leader
    sent = [json.loads(line) for line in calls.read_text().splitlines()]
    assert [r["leader"] for r in sent] == ["a", "b"]


def test_a_simulated_leader_is_the_member_the_coordinator_elected(tmp_path):
    import shlex

    from stickyproof.group.runner import resolve_simulation
    from stickyproof.group.simulator import simulate

    calls = tmp_path / "requests.jsonl"
    name = "exec:" + shlex.join([sys.executable, CHILD, "record", str(calls)])
    scenario, schedule, switched, assignor, title = resolve_simulation("kip341-stale-rejoin", None, (), name)
    result = simulate(scenario, schedule, without=switched, assignor=assignor, name=title)
    sent = [json.loads(line) for line in calls.read_text().splitlines()]
    leaders = {step.group.leader for step in result.steps if step.group.leader}
    members = {m["id"] for r in sent for m in r["group"]["members"]}
    assert sent and all(r["leader"] in members for r in sent)
    assert {r["leader"] for r in sent} <= leaders


def test_a_declared_contract_holds_the_peer_to_it(peer):
    info = peer("contract", "per-topic")
    assert info.contract == "per-topic"
    scenario = group({"t": 4}, [member("a").topics("t"), member("b").topics("t")])
    assert grade_assignor(scenario, info).to_dict()["contract"] == "per-topic"


def test_an_unknown_declared_contract_is_named(peer):
    from stickyproof.errors import InvalidScenario

    info = peer("contract", "fair-ish")
    scenario = group({"t": 4}, [member("a").topics("t"), member("b").topics("t")])
    with pytest.raises(InvalidScenario, match="contract"):
        grade_assignor(scenario, info)


def test_a_hunt_shows_the_hellos_name(peer):
    from stickyproof.hunt import hunt
    from stickyproof.hunt.report import render_result

    result = hunt(peer("good"), examples=3, seed=1)
    assert result.assignor == "exec:good" and result.to_dict()["assignor_name"] == "test-child"
    assert "exec:good (test-child)" in render_result(result).splitlines()[0]
