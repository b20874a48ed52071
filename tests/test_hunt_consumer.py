"""``stickyproof hunt`` on server-side (KIP-848) assignors: consumer groups from ``consumer_groups()``,
KAFKA-18688 found on ``uniform@4.0.0`` and shrunk to its smallest form, nothing on today's assignors.

KAFKA-18688: 4.0.0's homogeneous ``uniform`` builder let only members early in its iteration order keep
the "+1" partition, so a group already within one moved; the smallest such group is two members and
one partition held by the member the builder visits second.
"""

from __future__ import annotations

import json

import pytest

from stickyproof.cli import main
from stickyproof.grading import grade_assignor
from stickyproof.hunt import hunt
from stickyproof.scenarios.space import InvalidSpace

from .test_regressions import replay_file

EXAMPLES = 30


def test_hunt_finds_kafka_18688_on_uniform_4_0_0_and_shrinks_it_to_two_members_and_one_partition():
    result = hunt("uniform@4.0.0", examples=EXAMPLES, seed=0)
    assert result.found, "KAFKA-18688 not found within the example budget"
    finding = result.finding
    assert "not-fixed-point" in finding.failures and finding.scenario.is_consumer_group
    size = finding.to_dict()["size"]
    assert (size["members"], size["partitions"], size["claims"]) == (2, 1, 1)
    # the group it moved is one today's uniform returns unchanged
    today = grade_assignor(finding.scenario, "uniform")
    assert today.valid and today.consumer["fixed_point_owed"] and today.kept == 1


@pytest.mark.parametrize("assignor", ["uniform", "consumer-range"])
def test_hunt_finds_nothing_on_todays_server_side_assignors(assignor):
    result = hunt(assignor, examples=EXAMPLES, seed=0)
    assert not result.found and result.tried == EXAMPLES, result.finding and result.finding.to_dict()


def test_a_consumer_hunt_refuses_what_means_nothing_for_consumer_groups():
    with pytest.raises(InvalidSpace, match="versions"):
        hunt("uniform", examples=1, space=["versions=3"])
    with pytest.raises(InvalidSpace, match="balance"):
        hunt("uniform", examples=1, contract="global")
    with pytest.raises(InvalidSpace, match="reference"):
        hunt("uniform", examples=1, reference="range")


def test_cli_hunt_saves_kafka_18688_as_a_regression_file_that_replays(tmp_path, capsys):
    code = main(["hunt", "--assignor", "uniform@4.0.0", "--examples", str(EXAMPLES), "--save", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "not-fixed-point" in out
    (saved,) = tmp_path.glob("*.json")
    doc = json.loads(saved.read_text())
    assert doc["group_protocol"] == "consumer" and doc["expect"]["assignor"] == "uniform@4.0.0"
    replay_file(saved)
    assert main(["hunt", "--assignor", "uniform", "--examples", "5", "--space", "versions=3"]) == 2
