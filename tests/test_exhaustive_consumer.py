"""A sample of scripts/exhaustive_consumer.py's groups in CI: the consumer-group oracle against
brute force, and the server-side ports against Kafka's jars, on a few hundred enumerated groups
(the full enumeration, 476,704 groups at the default bound, runs outside CI)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "scripts" / "exhaustive_consumer.py"
_spec = importlib.util.spec_from_file_location("exhaustive_consumer", _PATH)
exhaustive = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("exhaustive_consumer", exhaustive)
_spec.loader.exec_module(exhaustive)


def test_enumeration_counts_and_numbers_every_group_once():
    bound = exhaustive.Bound(members=2, topics=1, partitions=2)
    docs = list(exhaustive.group_docs(bound))
    assert [n for n, _ in docs] == list(range(exhaustive.count_groups(bound)))
    # A range is exactly the slice of the whole enumeration.
    assert list(exhaustive.group_docs(bound, 5, 9)) == docs[5:9]
    assert exhaustive.count_groups(exhaustive.Bound()) >= 200_000


def test_brute_force_sees_a_better_assignment_than_a_lopsided_one():
    # a holds both partitions of t0; b subscribes too: balance moves one, and kept prefers a's.
    doc = {"topics": {"t0": 2}, "members": [
        {"id": "a", "topics": ["t0"], "owned": {"t0": [0, 1]}, "rack": None},
        {"id": "b", "topics": ["t0"], "owned": {}, "rack": None}]}
    assert exhaustive.brute_force_key(doc) == (2, 2, 0, -1)


@pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None, reason="needs Maven and Java for the jars")
@pytest.mark.parametrize("bound,start", [
    (exhaustive.Bound(), 0),
    (exhaustive.Bound(), 400_000),
    (exhaustive.Bound(members=2, topics=2, partitions=2, racks=True), 100_000),
])
def test_sample_oracle_matches_brute_force_and_ports_match_jars(bound, start):
    result = exhaustive.check_groups(bound, start, start + 150)
    assert result["groups"] == 150 and result["oracle"] == 150
    assert result["mismatches"] == {}, result["examples"][:2]
