"""Python user assignors isolated in a worker process (issue 14, item 1): nothing the callable does
ends or hangs stickyproof; each misdeed is that call's recorded error, and the next call works.

The assignors are tests/isolated_assignors.py.
"""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from stickyproof.assignors.base import COOPERATIVE, EAGER, GroupSubscription, Subscription
from stickyproof.assignors.registry import group_to_dict
from stickyproof.lookup import get_assignor
from stickyproof.errors import AssignorCrash, AssignorFailure, AssignorTimeLimit, UnknownAssignor
from stickyproof.grading import Limits, grade_assignor
from stickyproof.model import Topic, TopicPartition
from stickyproof.peers.isolated import isolated_user_assignor

from .builders import group, member

MODULE = "tests.isolated_assignors"


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def group_of(n: int, protocol: str = EAGER) -> GroupSubscription:
    return GroupSubscription({"t": Topic("t", 4)}, tuple(Subscription(f"c{i}", ("t",)) for i in range(n)), protocol)


TWO = group_of(2)
DEALT = {"c0": (tp("t", 0), tp("t", 2)), "c1": (tp("t", 1), tp("t", 3))}


@pytest.fixture
def isolated():
    made = []

    def make(name: str, **options):
        options.setdefault("call_seconds", 5)
        info = isolated_user_assignor(f"{MODULE}:{name}", **options)
        made.append(info)
        return info

    yield make
    for info in made:
        info.fn.close()


def test_the_worker_serves_the_callable_as_the_registry_would(isolated):
    info = isolated("deal")
    assert (info.name, info.kafka_name, info.protocols, info.user) == (f"{MODULE}:deal", "deal", (COOPERATIVE, EAGER), True)
    assert dict(info.fn(TWO).assignment) == DEALT
    assert dict(get_assignor(f"{MODULE}:deal").fn(TWO).assignment) == DEALT


def test_the_callable_receives_the_same_document_as_in_process(isolated):
    group = GroupSubscription(
        {"t": Topic("t", 6), "u": Topic("u", 2, (("r1",), ("r2", "r1")))},
        (Subscription("b", ("u", "t"), owned=(tp("t", 3), tp("u", 1), tp("t", 0)), generation=4, rack="r1", version=3),
         Subscription("a", ("t",), generation=None, instance_id="i-1", version=1)),
        COOPERATIVE,
    )
    info = isolated("shows_its_input")
    with pytest.raises(AssignorFailure) as caught:
        info.fn(group)
    assert caught.value.kafka_exception == "ValueError"
    sent = json.loads(str(caught.value).removeprefix("ValueError: ").rsplit(" (raised by", 1)[0])
    assert sent == json.loads(json.dumps(group_to_dict(group), sort_keys=True))


def test_print_goes_to_stderr_not_into_the_protocol(isolated):
    info = isolated("prints")
    assert dict(info.fn(TWO).assignment) == DEALT
    assert info.fn.client._child.stderr_tail(0.2)[-2:] == ("debugging the assignor: 2 members", "and a C library writing to fd 1")


def test_reading_stdin_cannot_swallow_a_request(isolated):
    info = isolated("reads_stdin")
    assert dict(info.fn(TWO).assignment) == DEALT
    assert dict(info.fn(TWO).assignment) == DEALT


@pytest.mark.parametrize(
    "name, status, sig, said",
    [
        ("exits_3", 3, None, None),
        ("hard_exit", 0, None, None),
        ("segfaults", None, "SIGSEGV", "Fatal Python error: Segmentation fault"),
    ],
)
def test_ending_the_process_is_a_crash_of_that_call(isolated, name, status, sig, said):
    info = isolated(name)
    for _ in range(2):  # and again on the restarted worker
        with pytest.raises(AssignorCrash) as caught:
            info.fn(TWO)
        assert (caught.value.kind, caught.value.exit_status, caught.value.signal) == ("crash", status, sig)
        if said:
            assert said in caught.value.stderr_tail
            assert any("isolated_assignors.py" in line and "segfaults" in line for line in caught.value.stderr_tail)
    assert info.fn.client.starts == 2


def test_sys_exit_zero_on_large_groups_only_is_recorded_and_the_next_call_works(isolated):
    info = isolated("exits_on_large_groups")
    with pytest.raises(AssignorCrash) as caught:
        info.fn(group_of(3))
    assert caught.value.exit_status == 0 and "too many members, bye" in caught.value.stderr_tail
    assert dict(info.fn(TWO).assignment) == DEALT


def test_an_endless_loop_is_stopped_at_the_time_limit(isolated):
    info = isolated("loops", call_seconds=1)
    started = time.monotonic()
    with pytest.raises(AssignorTimeLimit):
        info.fn(TWO)
    assert time.monotonic() - started < 5


def test_a_result_breaking_the_contract_is_an_error_naming_the_path(isolated):
    info = isolated("negative_partition")
    with pytest.raises(AssignorFailure, match=r"result\.c0\.t\[1\]: negative partition -3") as caught:
        info.fn(TWO)
    assert caught.value.kind == "error"
    with pytest.raises(AssignorFailure, match="returned list"):
        isolated("returns_a_list").fn(TWO)


def test_an_exception_keeps_its_type(isolated):
    info = isolated("raises")
    with pytest.raises(AssignorFailure) as caught:
        info.fn(TWO)
    assert caught.value.kafka_exception == "KeyError" and "'missing'" in str(caught.value)
    assert info.fn.client.starts == 1  # a raise is an answer: the worker lives on


def test_memory_is_capped(isolated):
    info = isolated("hogs_memory", memory_bytes=512 * 1024**2)
    with pytest.raises(AssignorFailure) as caught:
        info.fn(TWO)
    assert caught.value.kafka_exception == "MemoryError"


def test_what_cannot_be_loaded_is_an_unknown_assignor_with_the_registrys_message():
    with pytest.raises(UnknownAssignor, match="has no attribute 'nope'"):
        isolated_user_assignor(f"{MODULE}:nope")
    with pytest.raises(UnknownAssignor, match="is a int, not a callable"):
        isolated_user_assignor(f"{MODULE}:NOT_CALLABLE")
    with pytest.raises(UnknownAssignor, match="cannot import module 'no_such_module_here'"):
        isolated_user_assignor("no_such_module_here:fn")
    with pytest.raises(UnknownAssignor, match="module.path:callable"):
        isolated_user_assignor("just_a_name")


def test_the_current_directory_is_importable(tmp_path, monkeypatch):
    (tmp_path / "my_local_assignor.py").write_text(textwrap.dedent("""
        def everything_to_the_first(doc):
            first = doc["members"][0]["id"]
            return {first: {t: list(range(n)) for t, n in doc["topics"].items()}}
    """))
    monkeypatch.chdir(tmp_path)
    info = isolated_user_assignor("my_local_assignor:everything_to_the_first", call_seconds=5)
    try:
        assert info.fn(TWO).assignment["c0"] == tuple(tp("t", p) for p in range(4))
    finally:
        info.fn.close()


def test_hostile_user_assignors_are_graded_not_crashed_on(isolated):
    scenario = group({"t": 4}, [member(f"c{i}").topics("t") for i in range(3)])
    for name, kind in (("exits_on_large_groups", "crash"), ("segfaults", "crash"), ("raises", "error")):
        grade = grade_assignor(scenario, isolated(name))
        assert not grade.valid and grade.run_error.kind == kind, name
    hung = grade_assignor(scenario, isolated("loops", call_seconds=60), limits=Limits(assignor_seconds=1))
    assert hung.run_error.kind == "time-limit"
    assert grade_assignor(scenario, isolated("prints")).valid
