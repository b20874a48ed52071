"""The scenario space: the seeded sampler, its knobs, scenario features, named scenarios and the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from importlib import resources

import pytest

from stickyproof.cli import main
from stickyproof.errors import InvalidScenario, StickyproofError
from stickyproof.model import Scenario, dump_json, parse_json, scenario_from_dict, scenario_to_dict
from stickyproof.scenarios import InvalidSpace, Space, named, sample, scenario_features
from stickyproof.scenarios.features import FEATURE_COLUMNS, subscription_kind
from stickyproof.scenarios.sampler import derive_seed
from stickyproof.scenarios.space import CHOICE_KNOBS, RANGE_KNOBS

N = 40  # scenarios per knob check: enough to meet every branch of a knob, cheap enough for CI


def samples(*overrides: str, n: int = N, seed: int = 11):
    space = Space.from_overrides(list(overrides))
    return [sample(seed, i, space) for i in range(n)]


def round_trips(scenario) -> bool:
    return scenario_from_dict(json.loads(dump_json(scenario_to_dict(scenario)))) == scenario


# ------------------------------------------------------------------------------------------
# Reproducibility


def test_sample_is_a_function_of_seed_and_index():
    for index in range(20):
        assert sample(5, index) == sample(5, index)
    assert len({dump_json(scenario_to_dict(sample(5, i))) for i in range(20)}) == 20
    assert scenario_to_dict(sample(5, 3)) != scenario_to_dict(sample(6, 3))


def test_sample_is_reproducible_across_processes():
    code = (
        "import sys; from stickyproof.scenarios import sample, Space; "
        "from stickyproof.model import scenario_to_dict, dump_json; "
        "space = Space.from_overrides(['members=1..20', 'ownership=skewed,members-left,topics-deleted']); "
        "print(dump_json([scenario_to_dict(sample(s, i, space)) for s, i in [(0, 0), (7, 123), (2**40, 9)]]))"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    space = Space.from_overrides(["members=1..20", "ownership=skewed,members-left,topics-deleted"])
    here = [scenario_to_dict(sample(s, i, space)) for s, i in [(0, 0), (7, 123), (2**40, 9)]]
    assert json.loads(out) == here


def test_derive_seed_is_hash_free_and_pinned():
    # A BLAKE2b digest, not hash(): the value is fixed forever, whatever the process or Python version.
    assert derive_seed(0, 0) == derive_seed(0, 0)
    assert derive_seed(0, 1) != derive_seed(1, 0)
    assert derive_seed(1, 23) != derive_seed(12, 3)  # the separator keeps "1:23" and "12:3" apart
    import hashlib

    expected = int.from_bytes(hashlib.blake2b(b"42:7", digest_size=8, person=b"stickyproof").digest(), "big")
    assert derive_seed(42, 7) == expected


@pytest.mark.parametrize("seed, index", [(True, 0), ("1", 0), (1, -1), (1, 1.5)])
def test_sample_rejects_bad_seed_or_index(seed, index):
    with pytest.raises(InvalidSpace):
        sample(seed, index)


# ------------------------------------------------------------------------------------------
# Every knob value yields valid scenarios


@pytest.mark.parametrize(
    "knob, value", [(k, v) for k, values in CHOICE_KNOBS.items() for v in values], ids=lambda x: str(x)
)
def test_every_choice_value_yields_valid_scenarios(knob, value):
    for s in samples(f"{knob}={value}", n=25):
        assert round_trips(s)


@pytest.mark.parametrize(
    "override",
    [
        "members=1",
        "members=40..60",
        "topics=1",
        "topics=6",
        "partitions=0",
        "partitions=30..40",
        "zero_partition_topics=3",
        "generation=1",
        "stale=5",
        "double_claims=4",
        "unknown_generation=4",
        "deleted_topic_claims=3",
        "past_count_claims=3",
    ],
)
def test_range_extremes_yield_valid_scenarios(override):
    for s in samples(override, n=25):
        assert round_trips(s)


# ------------------------------------------------------------------------------------------
# Each knob takes effect


def test_sizes_are_respected():
    for s in samples("members=5", "topics=3", "partitions=4", "zero_partition_topics=0"):
        assert len(s.members) == 5
        assert [t.partitions for t in s.topics] == [4, 4, 4]
    for s in samples("members=2..3", "zero_partition_topics=2", "partitions=1"):
        assert 2 <= len(s.members) <= 3
        assert sum(1 for t in s.topics if t.partitions == 0) == 2


def test_subscriptions_uniform_gives_equal_topic_lists():
    for s in samples("subscriptions=uniform", "members=2..6"):
        assert len({m.topics for m in s.members}) == 1
        assert scenario_features(s)["subscription"] == "uniform"


def test_subscriptions_empty_gives_a_member_without_topics():
    for s in samples("subscriptions=empty"):
        assert any(not m.topics for m in s.members)


def test_subscriptions_nested_form_a_chain():
    for s in samples("subscriptions=nested", "members=2..6", "topics=3..5"):
        assert scenario_features(s)["subscription"] in ("nested", "uniform")


def test_subscriptions_disjoint_share_no_topic_between_different_lists():
    for s in samples("subscriptions=disjoint", "members=2..6", "topics=2..5"):
        lists = {frozenset(m.topics) for m in s.members}
        assert all(a == b or not (a & b) for a in lists for b in lists)
    assert any(scenario_features(s)["subscription"] == "disjoint" for s in samples("subscriptions=disjoint", "members=4..6", "topics=2..5"))


def test_subscriptions_heterogeneous_are_nonempty_and_vary():
    drawn = samples("subscriptions=heterogeneous", "members=3..6", "topics=3..5")
    assert all(m.topics for s in drawn for m in s.members)
    assert any(scenario_features(s)["subscription"] == "heterogeneous" for s in drawn)


NO_HAZARDS = ("stale=0", "double_claims=0", "unknown_generation=0", "deleted_topic_claims=0", "past_count_claims=0")


def test_ownership_none_without_hazards_owns_nothing():
    for s in samples("ownership=none", *NO_HAZARDS):
        assert all(not m.owned and m.generation == -1 for m in s.members)


def test_ownership_balanced_claims_each_subscribed_partition_once_and_evenly():
    for s in samples("ownership=balanced", "subscriptions=uniform", "members=1..6", *NO_HAZARDS):
        owners = [tp for m in s.members for tp in m.owned]
        assert sorted(owners) == s.subscribed_partitions()
        loads = [len(m.owned) for m in s.members]
        assert max(loads) - min(loads) <= 1
        assert len({m.generation for m in s.members}) == 1


def test_ownership_skewed_is_uneven():
    drawn = samples("ownership=skewed", "subscriptions=uniform", "members=4..6", "partitions=6..8", *NO_HAZARDS)
    assert all(max(len(m.owned) for m in s.members) - min(len(m.owned) for m in s.members) > 1 for s in drawn)


def test_ownership_members_left_leaves_partitions_unowned():
    for s in samples("ownership=members-left", "subscriptions=uniform", "partitions=8", "members=1..4", *NO_HAZARDS):
        owned = {tp for m in s.members for tp in m.owned}
        assert owned < set(s.subscribed_partitions())


def test_ownership_members_joined_has_new_members():
    for s in samples("ownership=members-joined", *NO_HAZARDS):
        assert any(not m.owned and m.generation == -1 for m in s.members)


ONLY_PAST_COUNT = tuple(o for o in NO_HAZARDS if not o.startswith("past_count")) + ("past_count_claims=0..1",)
ONLY_MISSING_TOPICS = tuple(o for o in NO_HAZARDS if not o.startswith("deleted_topic")) + ("deleted_topic_claims=0..1",)


def test_ownership_partitions_deleted_claims_past_the_count():
    for s in samples("ownership=partitions-deleted", "subscriptions=uniform", *ONLY_PAST_COUNT):
        assert scenario_features(s)["past_count_claims"] > 0


def test_ownership_topics_deleted_claims_a_missing_topic():
    for s in samples("ownership=topics-deleted", "subscriptions=uniform", *ONLY_MISSING_TOPICS):
        assert scenario_features(s)["deleted_topic_claims"] > 0


@pytest.mark.parametrize("kind, feature", [("partitions-deleted", "past_count_claims"),
                                           ("topics-deleted", "deleted_topic_claims")])
def test_a_hazard_knob_at_zero_means_none_whatever_the_ownership(kind, feature):
    # Issue 11: a knob at 0 means none. The previous world's shares of what is gone are then not claimed.
    drawn = samples(f"ownership={kind}", "subscriptions=uniform", *NO_HAZARDS)
    assert all(scenario_features(s)[feature] == 0 for s in drawn)
    assert any(m.owned for s in drawn for m in s.members)


@pytest.mark.parametrize("kind", ["partitions-added", "topics-added"])
def test_ownership_added_partitions_are_unowned(kind):
    for s in samples(f"ownership={kind}", "subscriptions=uniform", "partitions=1..8", *NO_HAZARDS):
        owned = {tp for m in s.members for tp in m.owned}
        assert owned < set(s.subscribed_partitions())


def test_stale_members_present_when_asked():
    drawn = samples("stale=1..2", "members=2..6")
    # A cooperative member claims only what it subscribes to: a stale one needs a topic another member reads.
    holding = [s for s in drawn if _can_hold_a_double_claim(s)]
    assert len(holding) > len(drawn) // 2
    for s in holding:
        f = scenario_features(s)
        assert f["stale_claimants"] >= 1
        assert f["contested_partitions"] >= 1  # the group gave a stale member's claims to someone else


def _can_hold_a_double_claim(s: Scenario) -> bool:
    """A cooperative member claims only what it subscribes to: two of them must share a topic with partitions."""
    if s.protocol != "cooperative":
        return True
    counts = s.partition_counts
    return any(counts.get(t, 0) and any(t in o.topics for o in s.members if o is not m) for m in s.members for t in m.topics)


def test_double_claims_present_when_asked():
    drawn = samples("double_claims=1..2", "members=2..6", "stale=0")
    assert sum(_can_hold_a_double_claim(s) for s in drawn) > len(drawn) // 2
    for s in drawn:
        if _can_hold_a_double_claim(s):
            assert scenario_features(s)["double_claims"] >= 1


def test_no_double_claim_at_the_same_generation_unless_asked():
    """The knob is exact: stale claims are held meanwhile by the partition's owner, not a second member."""
    for s in samples("double_claims=0", "stale=1..2", "members=2..8", "past_count_claims=0..2", n=200):
        assert scenario_features(s)["double_claims"] == 0


def test_cooperative_members_claim_outside_their_subscription_only_when_asked():
    from stickyproof.scenarios.space import OWNERSHIP

    plain = [o for o in OWNERSHIP if o != "topics-unsubscribed"]
    for s in samples("protocols=cooperative", "ownership=" + ",".join(plain), "stale=0..2", "double_claims=0..2", n=200):
        assert scenario_features(s)["unsubscribed_claims"] == 0
    asked = samples("protocols=cooperative", "ownership=topics-unsubscribed", "members=2..6", "topics=2..4",
                    "subscriptions=uniform", n=50)
    assert all(scenario_features(s)["unsubscribed_claims"] > 0 for s in asked)
    mixed = samples("protocols=cooperative", "ownership=topics-unsubscribed", "members=2..6", "topics=2..4",
                    "subscriptions=heterogeneous,disjoint", n=50)
    assert sum(scenario_features(s)["unsubscribed_claims"] > 0 for s in mixed) > 25


def test_unknown_generation_claimants_present_when_asked():
    for s in samples("unknown_generation=1", "members=2..6", "stale=0", "double_claims=0"):
        assert scenario_features(s)["unknown_generation_claimants"] >= 1


def test_deleted_topic_and_past_count_claims_present_when_asked():
    for s in samples("deleted_topic_claims=2", "past_count_claims=1..2", "ownership=none"):
        f = scenario_features(s)
        assert f["deleted_topic_claims"] == 2
        assert f["past_count_claims"] >= 1


def test_versions_knob_restricts_versions():
    for s in samples("versions=0"):
        assert {m.version for m in s.members} == {0}
    drawn = samples("versions=3,1", "members=4..8")
    assert set().union(*({m.version for m in s.members} for s in drawn)) == {1, 3}


def test_protocols_knob_sets_protocol():
    assert {s.protocol for s in samples("protocols=cooperative")} == {"cooperative"}
    assert {s.protocol for s in samples("protocols=eager")} == {"eager"}


def test_racks_knob():
    for s in samples("racks=none"):
        assert scenario_features(s)["racks"] == "none"
    for s in samples("racks=replicas", "partitions=1..4"):
        assert all(t.racks is not None for t in s.topics if t.partitions)
        assert all(m.rack is None for m in s.members)
    drawn = samples("racks=members", "members=3..6")
    assert all(t.racks is None for s in drawn for t in s.topics)
    assert any(m.rack is not None for s in drawn for m in s.members)


def test_static_knob():
    assert all(m.instance_id for s in samples("static=all") for m in s.members)
    assert not any(m.instance_id for s in samples("static=none") for m in s.members)


def test_assignors_knob():
    assert all(m.assignors == () for s in samples("assignors=none") for m in s.members)
    for s in samples("assignors=same"):
        assert len({m.assignors for m in s.members}) == 1 and s.members[0].assignors
    for s in samples("assignors=same", "protocols=cooperative"):
        assert {m.assignors for m in s.members} == {("cooperative-sticky",)}
    assert any(scenario_features(s)["assignors"] == "mixed" for s in samples("assignors=mixed", "members=3..6"))


def test_ids_knob():
    assert all(re.fullmatch(r"c\d+", m.id) for s in samples("ids=plain") for m in s.members)
    uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    assert all(re.fullmatch(rf"consumer-g-\d+-{uuid}", m.id) for s in samples("ids=kafka") for m in s.members)


# ------------------------------------------------------------------------------------------
# Space parsing


@pytest.mark.parametrize(
    "override, knob",
    [
        ("members", "members"),
        ("member=2", "member"),
        ("members=a", "members"),
        ("members=5..2", "members"),
        ("members=0", "members"),
        ("members=1..", "members"),
        ("members=1,2", "members"),
        ("generation=0", "generation"),
        ("partitions=-1", "partitions"),
        ("versions=4", "versions"),
        ("versions=3,3", "versions"),
        ("subscriptions=unifrom", "subscriptions"),
        ("protocols=", "protocols"),
        ("racks=none,,both", "racks"),
        ("members=1..2000000", "members"),
    ],
)
def test_bad_space_strings_name_the_knob(override, knob):
    with pytest.raises(InvalidSpace) as info:
        Space.from_overrides([override])
    assert info.value.knob == knob
    assert knob in str(info.value)
    assert isinstance(info.value, StickyproofError)


def test_space_knob_given_twice_is_rejected():
    with pytest.raises(InvalidSpace, match="members"):
        Space.from_overrides(["members=1", "members=2"])


def test_space_overrides_round_trip():
    space = Space.from_overrides(["members=2..50", "subscriptions=uniform,empty", "versions=0,3", "stale=1"])
    assert space.members == (2, 50) and space.versions == (0, 3) and space.stale == (1, 1)
    assert Space.from_overrides(space.to_overrides()) == space
    assert Space().to_overrides() == []
    assert set(space.describe()) == set(RANGE_KNOBS) | set(CHOICE_KNOBS)


def test_space_fields_are_validated():
    with pytest.raises(InvalidSpace, match="members"):
        Space(members=(3, 1))
    with pytest.raises(InvalidSpace, match="racks"):
        Space(racks=("everywhere",))


# ------------------------------------------------------------------------------------------
# Features


def test_features_columns_are_scalars_in_order():
    for s in samples(n=30):
        f = scenario_features(s)
        assert tuple(f) == FEATURE_COLUMNS
        assert all(isinstance(v, (int, str, bool)) for v in f.values())


@pytest.mark.parametrize(
    "name, column, value",
    [
        ("kip341-stale-rejoin", "stale_claimants", 1),
        ("kip341-stale-rejoin", "contested_partitions", 2),
        ("same-generation-double-claim", "double_claims", 1),
        ("nonexistent-partition-claim", "past_count_claims", 2),
        ("empty-subscription-seeding", "subscription", "empty"),
        ("stale-claimant-owner-dropped-topic", "unsubscribed_claims", 2),
        ("kip792-mixed-versions", "versions", "0,1,2,3"),
        ("per-topic-skew", "subscription", "uniform"),
        ("kip615-2100", "members", 2100),
        ("kip615-2100", "partitions", 2100),
    ],
)
def test_features_measure_the_named_scenarios(name, column, value):
    assert scenario_features(named.get(name))[column] == value


def test_subscription_kind_classifies():
    def kind(*lists):
        return subscription_kind(
            scenario_from_dict(
                {
                    "format": "stickyproof.scenario/1",
                    "topics": {"a": 1, "b": 1, "c": 1},
                    "members": [{"id": f"m{i}", "topics": list(t)} for i, t in enumerate(lists)],
                }
            )
        )

    assert kind("ab", "ab") == "uniform"
    assert kind("a", "ab", "abc") == "nested"
    assert kind("a", "bc", "a") == "disjoint"
    assert kind("ab", "bc") == "heterogeneous"
    assert kind("ab", "") == "empty"


# ------------------------------------------------------------------------------------------
# Named scenarios


EXPECTED_NAMES = {
    "kip341-stale-rejoin",
    "kip429-new-member",
    "kip792-mixed-versions",
    "constrained-quota-corners",
    "kip615-2100",
    "same-generation-double-claim",
    "stale-claimant-owner-dropped-topic",
    "per-topic-skew",
    "empty-subscription-seeding",
    "nonexistent-partition-claim",
}


def test_named_catalogue_has_every_issue_scenario():
    assert set(named.names()) == EXPECTED_NAMES


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES))
def test_named_scenario_validates_and_is_described(name):
    scenario = named.get(name)
    assert scenario.name == name
    assert round_trips(scenario)
    text = named.describe(name)
    assert len(text) > 40 and "Mechanism:" in text


def test_every_bundled_file_is_in_the_catalogue():
    folder = resources.files("stickyproof").joinpath("data", "scenarios")
    files = {p.name for p in folder.iterdir() if p.name.endswith(".json") and p.name != "catalogue.json"}
    catalogue = json.loads(folder.joinpath("catalogue.json").read_text())
    assert files == {e["file"] for e in catalogue.values() if "file" in e}
    assert all(isinstance(e.get("events"), list) for e in catalogue.values())


def test_unknown_name_raises_invalid_scenario():
    with pytest.raises(InvalidScenario, match="no bundled scenario"):
        named.get("no-such-scenario")


def test_kip615_2100_is_the_scale_case():
    s = named.get("kip615-2100")
    assert len(s.members) == 2100 and sum(t.partitions for t in s.topics) == 2100
    assert len({m.topics for m in s.members}) == 1
    assert sum(1 for m in s.members if not m.owned) == 105


# ------------------------------------------------------------------------------------------
# CLI


def run_cli(argv, capsys, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    try:
        code = main(argv)
    except SystemExit as exc:  # a usage error argparse reports (a flag's value out of its range)
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES))
def test_cli_show_then_validate(name, capsys, monkeypatch):
    code, out, _ = run_cli(["scenarios", "show", name], capsys)
    assert code == 0
    assert scenario_from_dict(parse_json(out)) == named.get(name)
    code, out, err = run_cli(["validate", "-"], capsys, stdin=out.encode(), monkeypatch=monkeypatch)
    assert code == 0 and out.startswith(f"ok: {name}:"), err


def test_cli_show_pipes_into_validate_in_a_shell():
    exe = os.path.join(os.path.dirname(sys.executable), "stickyproof")
    cmd = f"'{exe}' scenarios show kip341-stale-rejoin | '{exe}' validate -"
    result = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: kip341-stale-rejoin: 3 members")


def test_cli_validate_accepts_a_bundled_name(capsys):
    code, out, _ = run_cli(["validate", "per-topic-skew"], capsys)
    assert code == 0 and "2 members" in out


def test_cli_list_is_a_table_of_every_scenario(capsys):
    code, out, _ = run_cli(["scenarios", "list"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["name", "members", "partitions"]
    rows = {line.split()[0]: line.split()[1:3] for line in lines[1:]}
    assert set(rows) == EXPECTED_NAMES
    assert rows["kip615-2100"] == ["2100", "2100"]


def test_cli_sample_prints_the_samplers_scenario(capsys):
    code, out, _ = run_cli(["scenarios", "sample", "--seed", "9", "--index", "4", "--space", "members=3"], capsys)
    assert code == 0
    assert scenario_from_dict(parse_json(out)) == sample(9, 4, Space.from_overrides(["members=3"]))


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["scenarios", "sample", "--seed", "1", "--index", "0", "--space", "colour=red"], "colour"),
        (["scenarios", "sample", "--seed", "1", "--index", "0", "--space", "members=9..3"], "members"),
        (["scenarios", "sample", "--seed", "1", "--index", "-2"], "index"),
        (["scenarios", "show", "nope"], "nope"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(argv, needle, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err
