"""The leader path: protocol vote (§0.2), R36, R37, R3 on the wire, R39, the v3 assignments, the decoded
view, the mixed-version group where wire and direct differ, and the ``assign`` command."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from stickyproof.assignors.registry import load_user_assignor
from stickyproof.cli import main
from stickyproof.errors import AssignorFailure, InvalidScenario
from stickyproof.leader import decoded_view, lead, select_protocol, validate_cooperative_assignment
from stickyproof.model import Assignment, Member, assignment_to_dict, tp_map_to_dict
from stickyproof.wire import decode_assignment, decode_subscription

from .builders import group, importable_module, tp
from .test_regressions import load_regression

REGRESSIONS = Path(__file__).parent / "regressions"


LEADER_ASSIGNORS = '''
seen = []

def move_a0_to_b(group):
    seen.append(group)
    return {"a": {"t": [1]}, "b": {"t": [0, 2, 3]}}
move_a0_to_b.supported_protocols = ("cooperative", "eager")

def revoke_first(group):
    seen.append(group)
    return {"a": {"t": [1]}, "b": {"t": [2, 3]}}
revoke_first.supported_protocols = ("cooperative", "eager")

def echo_owned(group):
    seen.append(group)
    return {m["id"]: m["owned"] for m in group["members"]}
echo_owned.supported_protocols = ("cooperative", "eager")
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """Cooperative user assignors that obey or break R39."""
    with importable_module(tmp_path, monkeypatch, "leader_assignors", LEADER_ASSIGNORS) as name:
        yield name


# ------------------------------------------------------------------------------------------
# §0.2 the protocol vote


def test_vote_candidates_are_the_names_every_member_offers_and_each_votes_its_first():
    members = [
        Member("a", ("t",), assignors=("sticky", "range", "roundrobin")),
        Member("b", ("t",), assignors=("roundrobin", "range")),
        Member("c", ("t",), assignors=("range", "roundrobin")),
    ]
    # sticky is not offered by b and c; a votes range (its first candidate), b roundrobin, c range.
    assert select_protocol(members) == ("range", {"range": 2, "roundrobin": 1})


def test_vote_tie_goes_to_the_first_name_in_java_hashmap_order():
    # String.hashCode buckets (capacity 16): sticky 8, range 9, roundrobin 10.
    tie = [Member("a", ("t",), assignors=("roundrobin", "range")), Member("b", ("t",), assignors=("range", "roundrobin"))]
    assert select_protocol(tie)[0] == "range"
    tie = [Member("a", ("t",), assignors=("range", "sticky")), Member("b", ("t",), assignors=("sticky", "range"))]
    assert select_protocol(tie)[0] == "sticky"  # not alphabetical, and not first-voted


def test_vote_without_a_common_name_or_without_lists():
    with pytest.raises(InvalidScenario, match="INCONSISTENT_GROUP_PROTOCOL"):
        select_protocol([Member("a", ("t",), assignors=("range",)), Member("b", ("t",), assignors=("sticky",))])
    assert select_protocol([Member("a", ("t",), assignors=("range",)), Member("b", ("t",))]) == (None, {})
    with pytest.raises(InvalidScenario, match="no assignor given"):
        lead(group({"t": 4}, [{"id": "a", "topics": ["t"]}]))


def test_lead_runs_the_vote_winner_unless_an_assignor_is_forced():
    sc = group({"t": 4}, [{"id": "a", "topics": ["t"], "assignors": ["roundrobin"]}, {"id": "b", "topics": ["t"], "assignors": ["roundrobin", "range"]}])
    voted = lead(sc)
    assert voted.selected == "roundrobin"
    assert tp_map_to_dict(voted.assignment.assignment["a"]) == {"t": [0, 2]}
    forced = lead(sc, "range")
    assert forced.selected == "range"
    assert tp_map_to_dict(forced.assignment.assignment["a"]) == {"t": [0, 1]}
    assert "the vote chose roundrobin; running range as forced" in forced.notes


# ------------------------------------------------------------------------------------------
# R36, R37, R3


def test_R36_cooperative_rebalance_needs_an_assignor_that_supports_it():
    sc = group({"t": 4}, [{"id": "a", "topics": ["t"]}], protocol="cooperative")
    with pytest.raises(InvalidScenario) as info:
        lead(sc, "range")
    assert info.value.path == "protocol"
    assert lead(sc, "cooperative-sticky").protocol == "cooperative"


def test_R37_eager_members_send_no_owned_partitions_cooperative_members_do():
    members = [{"id": "a", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 3}]
    eager = lead(group({"t": 4}, members), "range")
    assert decode_subscription(eager.subscriptions["a"]).owned == ()
    assert eager.group.members[0].owned == () and eager.group.members[0].generation == 3
    coop = lead(group({"t": 4}, members, protocol="cooperative"), "cooperative-sticky")
    assert decode_subscription(coop.subscriptions["a"]).owned == (tp("t-0"), tp("t-1"))


def test_R37_each_member_is_encoded_at_its_own_version():
    members = [
        {"id": f"v{v}", "topics": ["t"], "owned": {"t": [v]}, "generation": 7, "version": v, "rack": "r1"} for v in range(4)
    ]
    result = lead(group({"t": 4}, members, protocol="cooperative"), "cooperative-sticky")
    for v in range(4):
        raw = result.subscriptions[f"v{v}"]
        assert raw[:2] == v.to_bytes(2, "big")
        seen = result.group.members[v]
        assert seen.owned == ((tp(f"t-{v}"),) if v >= 1 else ())
        assert seen.generation == (7 if v >= 2 else None)
        assert seen.rack == ("r1" if v >= 3 else None)


def test_R3_negative_generation_and_empty_rack_arrive_absent():
    result = lead(group({"t": 4}, [{"id": "a", "topics": ["t"], "generation": -1, "rack": ""}]), "range")
    assert result.group.members[0].generation is None and result.group.members[0].rack is None
    direct = lead(group({"t": 4}, [{"id": "a", "topics": ["t"], "generation": 4, "instance_id": "i"}]), "range", direct=True)
    assert direct.group.direct and direct.subscriptions == {}
    assert direct.group.members[0].generation == 4 and direct.group.members[0].instance_id == "i"


def test_instance_id_comes_from_the_join_response_not_the_metadata():
    result = lead(group({"t": 4}, [{"id": "a", "topics": ["t"], "instance_id": "static-a"}]), "range")
    assert result.group.members[0].instance_id == "static-a"


# ------------------------------------------------------------------------------------------
# R39


def owned_pair(protocol: str = "cooperative"):
    return group(
        {"t": 4},
        [{"id": "a", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 2}, {"id": "b", "topics": ["t"], "generation": 2}],
        protocol=protocol,
    )


def test_R39_leader_rejects_giving_an_owned_partition_straight_to_another_member(user_module):
    with pytest.raises(AssignorFailure) as info:
        lead(owned_pair(), load_user_assignor(f"{user_module}:move_a0_to_b"))
    assert info.value.kafka_exception == "java.lang.IllegalStateException"
    assert "t-0" in str(info.value)


def test_R39_passes_when_the_owner_revokes_first_and_revoking_is_filled(user_module):
    result = lead(owned_pair(), load_user_assignor(f"{user_module}:revoke_first"))
    assert "validate_cooperative_assignment passed" in result.notes
    assert result.assignment.revoking == {"a": (tp("t-0"),)}


def test_R39_is_not_run_for_cooperative_sticky_nor_under_eager(user_module):
    coop = lead(owned_pair(), "cooperative-sticky")
    assert any("skipped" in n for n in coop.notes)
    eager = lead(owned_pair("eager"), load_user_assignor(f"{user_module}:move_a0_to_b"))
    assert not any("validate_cooperative_assignment" in n for n in eager.notes)
    assert eager.assignment.revoking == {}


def test_R39_loophole_a_partition_claimed_twice_and_kept_by_one_claimant_passes():
    owned = {"a": [tp("t-0")], "b": [tp("t-0")]}
    kept_by_a = Assignment({"a": (tp("t-0"),), "b": ()})
    assert validate_cooperative_assignment(owned, kept_by_a) == []
    moved = Assignment({"a": (), "b": (), "c": (tp("t-0"),)})
    assert validate_cooperative_assignment(owned, moved) == [tp("t-0")]


def test_leader_runs_no_kip792_duplicate_claim_check(user_module):
    # KIP-792's validateSubscription was removed before merge: two members owning t-0 reach the assignor.
    sc = group(
        {"t": 4},
        [{"id": "a", "topics": ["t"], "owned": {"t": [0]}, "generation": 2},
         {"id": "b", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 2}],
        protocol="cooperative",
    )
    result = lead(sc, load_user_assignor(f"{user_module}:echo_owned"))
    assert result.assignment.assignment["a"] == (tp("t-0"),) and result.assignment.assignment["b"] == (tp("t-0"), tp("t-1"))


def test_user_assignor_sees_what_the_wire_delivered(user_module):
    sc = group(
        {"t": 4},
        [{"id": "old", "topics": ["t"], "owned": {"t": [0]}, "generation": 3, "version": 0},
         {"id": "new", "topics": ["t"], "owned": {"t": [1]}, "generation": 3, "version": 3}],
        protocol="cooperative",
    )
    lead(sc, load_user_assignor(f"{user_module}:echo_owned"))
    doc = sys.modules[user_module].seen[-1]
    assert [(m["id"], m["owned"], m["generation"]) for m in doc["members"]] == [("old", {}, -1), ("new", {"t": [1]}, 3)]
    assert doc["protocol"] == "cooperative"


# ------------------------------------------------------------------------------------------
# §0.5 assignments on the wire


def test_assignments_are_v3_in_the_assignors_list_order():
    sc = group({"t1": 1, "t2": 1, "t10": 1}, [{"id": "c", "topics": ["t1", "t2", "t10"]}])
    result = lead(sc, "range")
    decoded = decode_assignment(result.assignments["c"])
    assert decoded.version == 3 and decoded.user_data is None
    assert decoded.assigned == result.assignment.assignment["c"] == (tp("t10-0"), tp("t1-0"), tp("t2-0"))
    assert result.assign_seconds >= 0


# ------------------------------------------------------------------------------------------
# Mixed versions: wire and direct differ, and why


def test_mixed_version_cooperative_sticky_wire_and_direct_differ():
    sc, expect = load_regression(REGRESSIONS / "cooperative-sticky-v0-claims-invisible.json")
    wire = lead(sc, expect["assignor"])
    direct = lead(sc, expect["assignor"], direct=True)
    seen = {s.member_id: s for s in wire.group.members}
    # v0 has no ownedPartitions field: the leader never learns that c0 holds t-0 and t-1.
    assert seen["c0"].owned == () and dict((s.member_id, s.owned) for s in direct.group.members)["c0"] == (tp("t-0"), tp("t-1"))
    # v0 and v1 have no generationId field: absent on the wire (c1's generation survives only in its user data).
    assert seen["c0"].generation is None and seen["c1"].generation is None and seen["c2"].generation == 5
    assert decoded_view(sc, "cooperative-sticky").members[1].generation == 5
    # Consequences: on the wire t-1 goes straight to c1 while c0 still holds it, and c2 keeps t-2 because
    # c1's claim compares with generation -1 (R10); stated directly, c1 and c2 tie at 5 and t-2 is withheld.
    assert assignment_to_dict(wire.assignment) == {"format": "stickyproof.assignment/1", **{k: expect[k] for k in ("assignment", "revoking")}}
    assert assignment_to_dict(direct.assignment)["assignment"] == expect["direct"]["assignment"]
    assert assignment_to_dict(direct.assignment)["revoking"] == expect["direct"]["revoking"]
    assert wire.assignment.assignment != direct.assignment.assignment


# ------------------------------------------------------------------------------------------
# decoded_view


def test_decoded_view_attributes_claims_as_each_assignor_reads_them():
    sc = group(
        {"t": 4},
        [{"id": "a", "topics": ["t"], "owned": {"t": [0, 1]}, "generation": 3, "version": 0},
         {"id": "b", "topics": ["t"], "owned": {"t": [2]}, "generation": 2, "version": 3}],
    )
    view = {m.id: (m.owned, m.generation) for m in decoded_view(sc, "sticky").members}
    # R1: the eager sticky assignor reads its user data, whatever the subscription version and protocol.
    assert view == {"a": ((tp("t-0"), tp("t-1")), 3), "b": ((tp("t-2"),), 2)}
    old = {m.id: m.generation for m in decoded_view(sc, "sticky@2.2").members}
    assert old == {"a": -1, "b": -1}  # V0 user data carries no generation
    plain = {m.id: (m.owned, m.generation) for m in decoded_view(sc, "range").members}
    assert plain == {"a": ((), -1), "b": ((), 2)}  # eager: nothing owned on the wire; v0: no generation
    # R2 under cooperative: a v0 member's claims are invisible, its generation comes from the user data.
    coop = {m.id: (m.owned, m.generation) for m in decoded_view(replace(sc, protocol="cooperative"), "cooperative-sticky").members}
    assert coop == {"a": ((), 3), "b": ((tp("t-2"),), 2)}


# ------------------------------------------------------------------------------------------
# CLI


def write(tmp_path: Path, doc: dict) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_cli_assign_prints_the_assignment_document(tmp_path, capsys):
    ref = write(tmp_path, {"format": "stickyproof.scenario/1", "topics": {"t": 3}, "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}]})
    assert main(["assign", ref, "--assignor", "range"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"format": "stickyproof.assignment/1", "assignment": {"a": {"t": [0, 1]}, "b": {"t": [2]}}, "revoking": {}}
    target = tmp_path / "out.json"
    assert main(["assign", ref, "--assignor", "roundrobin", "--direct", "--out", str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(target.read_text())["assignment"] == {"a": {"t": [0, 2]}, "b": {"t": [1]}}


def test_cli_assign_failures_are_one_line_and_exit_2(tmp_path, capsys):
    # docs/rules.md §10 K1: claims past the partition count make the constrained path's round robin throw.
    ref = write(tmp_path, {"format": "stickyproof.scenario/1", "topics": {"t": 4},
                           "members": [{"id": "a", "topics": ["t"], "owned": {"t": [5, 6]}, "generation": 1},
                                       {"id": "b", "topics": ["t"]}]})
    assert main(["assign", ref, "--assignor", "sticky"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("AssignorFailure: IllegalStateException")
    assert main(["assign", ref, "--assignor", "nope"]) == 2
    assert capsys.readouterr().err.startswith("UnknownAssignor:")


def test_cli_assign_reads_a_bundled_scenario_by_name(capsys):
    assert main(["assign", "kip429-new-member", "--assignor", "cooperative-sticky"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["assignment"]) == {"c1", "c2"}
