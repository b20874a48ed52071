"""The assignor registry: built-in names and variants, unknown names, and the user-callable contract."""

from __future__ import annotations

import json
import sys
import textwrap
import uuid

import pytest

from stickyproof.assignors import get_assignor, list_assignors
from stickyproof.assignors.base import GroupSubscription, Subscription
from stickyproof.cli import main
from stickyproof.errors import AssignorFailure, InvalidScenario, UnknownAssignor
from stickyproof.model import Topic, TopicPartition

BUILTINS = [
    "range",
    "roundrobin",
    "sticky",
    "sticky@2.2",
    "sticky@2.6",
    "cooperative-sticky",
    "cooperative-sticky@2.4",
    "cooperative-sticky@2.6",
    "cooperative-sticky@3.5.1",
]


def small_group(protocol: str = "eager") -> GroupSubscription:
    return GroupSubscription(
        {"t": Topic("t", 3)},
        (Subscription("a", ("t",), owned=(TopicPartition("t", 0),), generation=4, version=3), Subscription("b", ("t",), version=0)),
        protocol,
    )


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """Write a module of user assignors under a unique name and make it importable."""
    name = f"user_assignors_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            '''
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
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


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
    with pytest.raises(UnknownAssignor, match="sticky has: sticky, sticky@2.2, sticky@2.6"):
        get_assignor("sticky@3.0")
    with pytest.raises(UnknownAssignor):
        get_assignor("")


def test_user_module_or_attribute_missing_is_unknown_assignor(user_module):
    with pytest.raises(UnknownAssignor, match="cannot import module"):
        get_assignor("no_such_module_hopefully:fn")
    with pytest.raises(UnknownAssignor, match="has no attribute 'nope'"):
        get_assignor(f"{user_module}:nope")
    with pytest.raises(UnknownAssignor, match="not a callable"):
        get_assignor(f"{user_module}:NOT_CALLABLE")
    with pytest.raises(UnknownAssignor, match="module.path:callable"):
        get_assignor(f"{user_module}:")
    with pytest.raises(UnknownAssignor, match="supported_protocols"):
        get_assignor(f"{user_module}:bad_protocols")


def test_user_callable_receives_the_group_as_a_scenario_document(user_module):
    info = get_assignor(f"{user_module}:everything_to_first")
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
    result = get_assignor(f"{user_module}:full_document").fn(small_group())
    assert result.revoking == {"a": (TopicPartition("t", 0),)}
    info = get_assignor(f"{user_module}:cooperative")
    assert info.protocols == ("cooperative", "eager") and info.kafka_name == "my-cooperative"
    assert not info.is_cooperative_sticky
    assert get_assignor(f"{user_module}:Holder.nested").fn(small_group()).assignment == {"a": (), "b": ()}


@pytest.mark.parametrize(
    "fn, path",
    [("bad_partition", "result.a.t[1]"), ("unknown_member", "result.zed"), ("not_a_mapping", "result")],
)
def test_user_callable_bad_return_value_names_the_path(user_module, fn, path):
    with pytest.raises(InvalidScenario) as info:
        get_assignor(f"{user_module}:{fn}").fn(small_group())
    assert info.value.path == path


def test_user_callable_exception_is_wrapped_in_assignor_failure(user_module):
    with pytest.raises(AssignorFailure, match="raised ZeroDivisionError: boom") as info:
        get_assignor(f"{user_module}:raises").fn(small_group())
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_cli_assignors_table_and_json(capsys):
    assert main(["assignors"]) == 0
    out = capsys.readouterr().out
    for name in BUILTINS:
        assert name in out
    assert main(["assignors", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == BUILTINS
    assert rows[5]["protocols"] == ["cooperative", "eager"]
