"""`stickyproof explain BEFORE AFTER`: why each partition moved between two looks at a group.

Fixtures: tests/data/explain (README.md there names each layout's Kafka release and the reason each
pair shows; make_fixtures.py wrote them).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from stickyproof.cli import main
from stickyproof.cli.explain import render
from stickyproof.cli.grade import verdict_line as grade_verdict_line
from stickyproof.errors import InvalidScenario
from stickyproof.explain import SnapshotOptions, explain, read_snapshot, verdict_line
from stickyproof.importers import DescribeOptions, import_describe
from stickyproof.model import SCENARIO_FORMAT, TopicPartition

DATA = Path(__file__).resolve().parent / "data" / "explain"
TP = TopicPartition
RACKS = dict(broker_racks={1: "az1", 2: "az2"}, member_racks={"events-svc-a": "az1", "events-svc-b": "az2"})


def run(before: str, after: str, *, target: bool = False, assignors: bool = True, **options):
    if "topics" in options:
        options["topics_text"] = (DATA / options.pop("topics")).read_text()
    opts = SnapshotOptions(**options)
    b_text, a_text = (DATA / before).read_text(), (DATA / after).read_text()
    b = read_snapshot(b_text, before, opts, others=(a_text,))
    a = read_snapshot(a_text, after, SnapshotOptions(**{**opts.__dict__, "target": target}), others=(b_text,))
    return explain(b, a, assignors=assignors)


def reasons(e) -> dict[str, str]:
    return {f"{m.partition.topic}-{m.partition.partition}": m.reason for m in e.moves}


# ------------------------------------------------------------------------------------------
# one reason per fixture pair, one layout per Kafka release line


def test_a_member_that_restarted_under_a_new_id_left_and_its_partitions_moved_for_membership():
    e = run("restart-2.5-before.txt", "restart-2.5-after.txt")
    assert reasons(e) == {"orders-4": "left", "orders-5": "left"}
    gone = "consumer-orders-app-3-a1b2c3d4-e5f6-4789-8abc-def012345678"
    back = "consumer-orders-app-3-77c1e0d2-9b8a-4f3e-a2d1-c0b9a8f7e6d5"
    assert e.left == (gone,) and e.joined == (back,) and e.returned == ((gone, back),)
    assert all("not a member of the group" in m.why and "unsubscribed" not in m.why for m in e.moves)
    assert all(m.kept_by is None for m in e.moves)  # nobody can keep a partition for a member that is gone
    assert verdict_line(e) == "2 partitions moved; 2 necessary (membership 2), none an optimal assignment would have kept"


def test_round_robin_after_a_join_makes_two_moves_an_optimal_assignment_would_not():
    e = run("join-3.7-before.txt", "join-3.7-after.txt")
    assert Counter(reasons(e).values()) == {"joined": 2, "unnecessary": 2}
    assert e.optimal_kept == 4 and e.after_kept == 2 and e.proven
    assert verdict_line(e) == "4 partitions moved; 2 necessary (membership 2), 2 an optimal assignment would have kept"
    # The static member (group.instance.id billing-0) rejoined under a new member id: the same member.
    assert [(b[-2:], a[-2:]) for b, a, _ in e.rejoined] == [("01", "11")]
    keeps = {name: k for name, k, _ in e.assignors}
    assert keeps["roundrobin"] == 0  # the assignment AFTER shows is round robin's own
    assert keeps["sticky"] == keeps["cooperative-sticky"] == e.optimal_kept - e.after_kept
    for m in e.moves:
        if m.reason == "unnecessary":
            assert "roundrobin" not in m.kept_by and "cooperative-sticky" in m.kept_by


def test_a_move_into_a_rack_holding_a_replica_is_rack_locality_not_unnecessary():
    e = run("rack-3.9-before.txt", "rack-3.9-after.txt", topics="rack-topics-3.9.txt", **RACKS)
    assert reasons(e) == {"events-1": "rack", "events-2": "rack"}
    assert verdict_line(e) == "2 partitions moved; 2 necessary (rack locality 2), none an optimal assignment would have kept"
    rack_aware = {name for name, k, _ in e.assignors if k == 0}
    assert {"sticky", "cooperative-sticky"} <= rack_aware  # today's rack-aware releases make the same moves
    # Without racks the same swap gains nothing: an optimal assignment keeps both.
    bare = run("rack-3.9-before.txt", "rack-3.9-after.txt", topics="rack-topics-3.9.txt", assignors=False)
    assert reasons(bare) == {"events-1": "unnecessary", "events-2": "unnecessary"}


def test_a_kip848_group_reconciling_shows_revoked_partitions_and_its_target():
    now = run("kip848-4.0-before.txt", "kip848-4.0-after.txt", assignors=False)
    assert reasons(now) == {"inventory-2": "joined", "inventory-5": "joined"}
    assert all(m.to is None and "not yet given to anyone" in m.why for m in now.moves)
    assert any("Reconciling" in n and "--target" in n for n in now.notes)
    target = run("kip848-4.0-before.txt", "kip848-4.0-after.txt", target=True, assignors=False)
    assert {m.to for m in target.moves} == {"Ab1Cd2Ef3Gh4Ij5Kl6Mn7o"}
    assert Counter(reasons(target).values()) == {"joined": 2}


def test_a_4x_classic_group_prints_epochs_as_dashes_and_is_not_a_kip848_group():
    r = import_describe((DATA / "classic-4.0-before.txt").read_text(), None, DescribeOptions(partitions={"ledger": 6}))
    assert not any("KIP-848" in n for n in r.notes)
    assert r.scenario.protocol == "cooperative" and r.scenario.members[0].assignors == ("cooperative-sticky",)
    e = run("classic-4.0-before.txt", "classic-4.0-after.txt", assignors=False)
    assert reasons(e) == {"ledger-3": "balance"}
    assert "held 4, more than its share of 3" in e.moves[0].why


def test_a_stale_claim_in_the_after_capture_explains_the_move():
    e = run("stale-before.json", "stale-after.json")
    assert reasons(e) == {"orders-3": "stale-claim"}
    assert "generations c2 5, c3 7" in e.moves[0].why
    assert verdict_line(e) == "1 partition moved; 1 necessary (stale claim 1), none an optimal assignment would have kept"


def _scenario(path: Path, members: list[dict], topics: dict) -> str:
    path.write_text(json.dumps({"format": SCENARIO_FORMAT, "topics": topics, "members": members}))
    return str(path)


def test_unsubscribed_is_a_member_still_in_the_group_and_gone_is_a_topic_nobody_reads(tmp_path):
    before = _scenario(tmp_path / "b.json", [
        {"id": "c1", "topics": ["orders", "audit"], "owned": {"orders": [0, 1], "audit": [0]}},
        {"id": "c2", "topics": ["orders", "audit"], "owned": {"orders": [2, 3], "audit": [1]}},
    ], {"orders": 4, "audit": 2})
    after = _scenario(tmp_path / "a.json", [
        {"id": "c1", "topics": ["orders"], "owned": {"orders": [0, 1]}},
        {"id": "c2", "topics": ["orders", "audit"], "owned": {"orders": [2, 3], "audit": [0, 1]}},
    ], {"orders": 4, "audit": 2})
    b = read_snapshot(Path(before).read_text(), "b.json")
    a = read_snapshot(Path(after).read_text(), "a.json")
    e = explain(b, a, assignors=False)
    assert reasons(e) == {"audit-0": "unsubscribed"}
    assert "still a member" in e.moves[0].why and "not subscribed to audit" in e.moves[0].why


# ------------------------------------------------------------------------------------------
# the command


def test_terminal_output_puts_the_verdict_first_and_json_is_deterministic(capsys):
    e = run("join-3.7-before.txt", "join-3.7-after.txt", assignors=False)
    assert render(e).splitlines()[0] == verdict_line(e)
    args = ["explain", str(DATA / "join-3.7-before.txt"), str(DATA / "join-3.7-after.txt"), "--json"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert doc["format"] == "stickyproof.explain/1" and doc["verdict"] == verdict_line(e)
    assert [m["partition"] for m in doc["moves"]] == sorted(m["partition"] for m in doc["moves"])


def test_bad_input_is_one_line_naming_the_file_and_line(tmp_path, capsys):
    lines = (DATA / "join-3.7-after.txt").read_text().splitlines()
    lines[3] = lines[3].replace("invoices(1,4)", "invoices(1,x)")
    bad = tmp_path / "after.txt"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["explain", str(DATA / "join-3.7-before.txt"), str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"InvalidScenario: {bad}: describe line 4: ASSIGNMENT")
    assert main(["explain", str(DATA / "join-3.7-before.txt"), str(tmp_path / "missing.txt")]) == 2
    assert "AFTER" in capsys.readouterr().err


def test_help_explains_with_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    out = capsys.readouterr().out
    assert "stickyproof explain before.txt after.txt" in out and "not a member of the group" in out


def test_grade_names_a_member_outside_the_group_not_unsubscribed():
    outsider = {"invariant": "unsubscribed", "witness": {"member": "x", "partition": ["t", 0], "topics": [], "in_group": False}}
    member = {"invariant": "unsubscribed", "witness": {"member": "m", "partition": ["t", 0], "topics": [], "in_group": True}}
    assert grade_verdict_line(False, [outsider]) == "INVALID: not a member of the group (t-0 to x)"
    assert grade_verdict_line(False, [member]) == "INVALID: unsubscribed (t-0 to m)"


def test_every_flag_a_note_names_is_one_explain_takes(capsys):
    """The importer's notes name its own flags; explain's must name only flags explain has."""
    import re

    from stickyproof.cli import build_parser, main

    main(["explain", str(DATA / "join-3.7-before.txt"), str(DATA / "join-3.7-after.txt"), "--protocol", "cooperative",
          "--no-assignors", "--json"])
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc["notes"])
    assert "rebalance protocol: cooperative" in text
    explain = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "explain")[1]
    known = {o for action in explain._actions for o in action.option_strings}
    named = set(re.findall(r"--[a-z][a-z-]+", text))
    assert named and named <= known, named - known
