"""The assignor registry: built-in names and variants, unknown names, and the user-callable contract."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

import stickyproof
from stickyproof.assignors import list_assignors
from stickyproof.lookup import get_assignor
from stickyproof.assignors.base import GroupSubscription, Subscription
from stickyproof.assignors.registry import list_consumer_group_assignors, load_user_assignor, member_data_for, user_data_for
from stickyproof.assignors.releases import RELEASES, find_release, get_release
from stickyproof.assignors.sticky_types import MemberData
from stickyproof.cli import main
from stickyproof.errors import AssignorFailure, InvalidScenario, UnknownAssignor
from stickyproof.model import Member, Topic, TopicPartition
from stickyproof.wire import encode_cooperative_user_data, encode_sticky_user_data

from .builders import importable_module

PACKAGE = Path(stickyproof.__file__).parent

BUILTINS = [
    "range",
    "roundrobin",
    "sticky",
    "sticky@2.2",
    "sticky@2.3",
    "sticky@2.4",
    "sticky@2.6",
    "sticky@2.8.1",
    "sticky@3.3",
    "sticky@3.4",
    "sticky@3.5.1",
    "sticky@3.6",
    "cooperative-sticky",
    "cooperative-sticky@2.4",
    "cooperative-sticky@2.6",
    "cooperative-sticky@2.8.1",
    "cooperative-sticky@3.3",
    "cooperative-sticky@3.4",
    "cooperative-sticky@3.5.1",
    "cooperative-sticky@3.6",
]


def small_group(protocol: str = "eager") -> GroupSubscription:
    return GroupSubscription(
        {"t": Topic("t", 3)},
        (Subscription("a", ("t",), owned=(TopicPartition("t", 0),), generation=4, version=3), Subscription("b", ("t",), version=0)),
        protocol,
    )


USER_ASSIGNORS = '''
"""User assignors for the registry tests."""
seen = []

def everything_to_first(group):
    """Give every partition to the first member."""
    seen.append(group)
    first = group["members"][0]["id"]
    return {first: {t: list(range(n if isinstance(n, int) else n["partitions"])) for t, n in group["topics"].items()}}

def full_document(group):
    return {"format": "stickyproof.assignment/1",
            "assignment": {m["id"]: {} for m in group["members"]},
            "revoking": {"a": {"t": [0]}}}

def bad_partition(group):
    return {"a": {"t": [0, -1]}}

def unknown_member(group):
    return {"zed": {"t": [0]}}

def not_a_mapping(group):
    return [1, 2]

def raises(group):
    raise ZeroDivisionError("boom")

def cooperative(group):
    return {}
cooperative.supported_protocols = ("eager", "cooperative")
cooperative.assignor_name = "my-cooperative"

def bad_protocols(group):
    return {}
bad_protocols.supported_protocols = "cooperative"

class Holder:
    @staticmethod
    def nested(group):
        return {}

NOT_CALLABLE = 3
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """Write a module of user assignors under a unique name and make it importable."""
    with importable_module(tmp_path, monkeypatch, "user_assignors", USER_ASSIGNORS) as name:
        yield name


def test_builtins_are_listed_in_a_fixed_order_with_kafka_names_and_protocols():
    infos = list_assignors()
    assert [i.name for i in infos] == BUILTINS
    for info in infos:
        assert get_assignor(info.name) is info
        assert not info.user
        if info.kafka_name == "cooperative-sticky":
            assert info.protocols == ("cooperative", "eager") and info.is_cooperative_sticky
        else:
            assert info.protocols == ("eager",) and not info.is_cooperative_sticky
    assert get_assignor("roundrobin").kafka_name == "roundrobin"
    assert get_assignor("sticky@2.2").variant == "2.2" and get_assignor("sticky@2.2").kafka_name == "sticky"
    assert get_assignor("cooperative-sticky").variant == "current"


def test_unknown_name_lists_the_known_names():
    with pytest.raises(UnknownAssignor) as info:
        get_assignor("stiky")
    assert "range" in str(info.value) and "cooperative-sticky@3.5.1" in str(info.value)
    with pytest.raises(UnknownAssignor, match="sticky has: sticky, sticky@2.2, sticky@2.3, sticky@2.4, sticky@2.6"):
        get_assignor("sticky@3.0")
    with pytest.raises(UnknownAssignor):
        get_assignor("")


def test_user_module_or_attribute_missing_is_unknown_assignor(user_module):
    with pytest.raises(UnknownAssignor, match="cannot import module"):
        load_user_assignor("no_such_module_hopefully:fn")
    with pytest.raises(UnknownAssignor, match="has no attribute 'nope'"):
        load_user_assignor(f"{user_module}:nope")
    with pytest.raises(UnknownAssignor, match="not a callable"):
        load_user_assignor(f"{user_module}:NOT_CALLABLE")
    with pytest.raises(UnknownAssignor, match="module.path:callable"):
        load_user_assignor(f"{user_module}:")
    with pytest.raises(UnknownAssignor, match="supported_protocols"):
        load_user_assignor(f"{user_module}:bad_protocols")


def test_get_assignor_runs_a_user_callable_in_a_worker_process():
    # The contract of the callable is tested in process below (load_user_assignor, what the worker
    # runs); get_assignor hands it to a worker of its own (tests/test_peers_isolated.py).
    info = get_assignor("tests.faulty_assignors:optimal")
    assert info.user and getattr(info.fn, "with_time_limit", None) is not None
    assert load_user_assignor("tests.faulty_assignors:optimal").fn is not info.fn


def test_user_callable_receives_the_group_as_a_scenario_document(user_module):
    info = load_user_assignor(f"{user_module}:everything_to_first")
    assert info.user and info.variant == "user" and info.protocols == ("eager",)
    assert info.description == "Give every partition to the first member."
    result = info.fn(small_group())
    assert result.assignment == {"a": tuple(TopicPartition("t", p) for p in range(3)), "b": ()}
    doc = sys.modules[user_module].seen[-1]
    assert doc["format"] == "stickyproof.scenario/1" and doc["protocol"] == "eager"
    assert doc["topics"] == {"t": 3}
    assert [(m["id"], m["owned"], m["generation"], m["version"]) for m in doc["members"]] == [
        ("a", {"t": [0]}, 4, 3),
        ("b", {}, -1, 0),
    ]
    json.dumps(doc)  # plain JSON values only


def test_user_callable_full_document_keeps_revoking_and_declared_protocols(user_module):
    result = load_user_assignor(f"{user_module}:full_document").fn(small_group())
    assert result.revoking == {"a": (TopicPartition("t", 0),)}
    info = load_user_assignor(f"{user_module}:cooperative")
    assert info.protocols == ("cooperative", "eager") and info.kafka_name == "my-cooperative"
    assert not info.is_cooperative_sticky
    assert load_user_assignor(f"{user_module}:Holder.nested").fn(small_group()).assignment == {"a": (), "b": ()}


@pytest.mark.parametrize(
    "fn, path",
    [("bad_partition", "result.a.t[1]"), ("unknown_member", "result.zed"), ("not_a_mapping", "result")],
)
def test_user_callable_bad_return_value_names_the_path(user_module, fn, path):
    with pytest.raises(InvalidScenario) as info:
        load_user_assignor(f"{user_module}:{fn}").fn(small_group())
    assert info.value.path == path


def test_user_callable_exception_is_wrapped_in_assignor_failure(user_module):
    with pytest.raises(AssignorFailure, match="raised ZeroDivisionError: boom") as info:
        load_user_assignor(f"{user_module}:raises").fn(small_group())
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_cli_assignors_table_and_json(capsys):
    assert main(["assignors"]) == 0
    out = capsys.readouterr().out
    for name in BUILTINS:
        assert name in out
    assert main(["assignors", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows if r["group_protocol"] == "classic"] == BUILTINS
    assert rows[BUILTINS.index("cooperative-sticky")]["protocols"] == ["cooperative", "eager"]
    server_side = [r["name"] for r in rows if r["group_protocol"] == "consumer"]
    assert server_side == [i.name for i in list_consumer_group_assignors()] and {"uniform", "consumer-range"} <= set(server_side)


# ------------------------------------------------------------------------------------------
# Rows from release records; user data and member data by protocol name


def test_sticky_rows_are_built_from_the_release_records():
    rows = [info for info in list_assignors() if info.release is not None]
    assert [info.release for info in rows] == list(RELEASES)
    for info in rows:
        r = info.release
        assert (info.name, info.kafka_name, info.variant, info.protocols, info.description) == (
            r.name, r.kafka_name, r.version, r.protocols, r.description
        )
        assert info.claims_from_user_data == r.user_data.carries_assignment
        assert get_release(info.name) is r and find_release(r.kafka_name, r.version) is r
    assert [i.name for i in list_assignors() if i.release is None] == ["range", "roundrobin"]


def test_unknown_release_lookups_name_what_is_known():
    with pytest.raises(UnknownAssignor, match="known: current, 2.2, 2.3, 2.4, 2.6"):
        find_release("sticky", "3.0")
    with pytest.raises(UnknownAssignor):
        get_release("range")


def test_user_data_for_is_what_a_java_member_of_that_release_sends():
    member = Member("c", ("t",), owned=(TopicPartition("t", 1),), generation=4)
    assert user_data_for("sticky")(member) == encode_sticky_user_data(member.owned, 4)
    assert user_data_for("sticky", "2.2")(member) == encode_sticky_user_data(member.owned, 4, version=0)
    assert user_data_for("cooperative-sticky")(member) == encode_cooperative_user_data(4)
    assert user_data_for("cooperative-sticky", "2.4")(member) is None
    assert user_data_for("range")(member) is None and user_data_for("roundrobin")(member) is None
    assert user_data_for("sticky")(Member("c", ("t",))) is None  # before its first assignment
    for kafka_name, release in (("sticky", "3.2"), ("my-assignor", "current")):
        with pytest.raises(UnknownAssignor):
            user_data_for(kafka_name, release)


def test_member_data_for_reads_a_subscription_as_the_release_does():
    owned = (TopicPartition("t", 1),)
    eager = Subscription("c", ("t",), user_data=encode_sticky_user_data(owned, 4), owned=(), generation=None)
    assert member_data_for("sticky")(eager) == MemberData(owned, 4)
    assert member_data_for("sticky", "2.2")(eager) == MemberData(owned, None)
    wire = Subscription("c", ("t",), owned=owned, generation=3)
    assert member_data_for("cooperative-sticky")(wire) == MemberData(owned, 3)
    assert member_data_for("cooperative-sticky", "2.6")(wire) == MemberData(owned, None)
    assert member_data_for("range")(wire) == MemberData(owned, 3)


def _string_constants(path: Path) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_the_leader_names_no_assignor():
    """The registry supplies user data and member data: the leader and the simulator's leader step ask it."""
    names = {info.kafka_name for info in list_assignors()} | set(BUILTINS)
    for module in ("leader.py", "group/assignment.py"):
        assert not names & _string_constants(PACKAGE / module), module


def test_no_assignor_code_compares_a_release_version():
    """Releases differ by record fields only: no ``variant == "2.2"`` left in the assignors (releases.py defines them)."""
    versions = {r.version for r in RELEASES}
    offenders = []
    for path in sorted((PACKAGE / "assignors").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for operand in operands:
                    values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                    if any(isinstance(v, ast.Constant) and v.value in versions for v in values):
                        offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def test_a_misspelt_assignor_name_suggests_the_closest_built_in():
    with pytest.raises(UnknownAssignor, match="did you mean 'sticky'"):
        get_assignor("stcky")


def test_every_adapter_prefix_resolves_through_the_one_lookup_table():
    from stickyproof.lookup import ADAPTERS

    import importlib

    prefixes = [a.prefix for a in ADAPTERS]
    assert len(prefixes) == len(set(prefixes)) and {"exec", "kafka-python", "kafka-java", "franz-go"} <= set(prefixes)
    for a in ADAPTERS:  # each row names a module of stickyproof.peers with the resolve(rest) the lookup calls
        assert callable(importlib.import_module(f"stickyproof.peers.{a.module}").resolve), a


def test_a_misspelt_adapter_prefix_suggests_the_closest_adapter():
    with pytest.raises(UnknownAssignor, match="did you mean kafka-java:sticky"):
        get_assignor("kafka-jav:sticky")
    with pytest.raises(UnknownAssignor, match="did you mean sarama:sticky"):
        get_assignor("sarma:sticky")
