"""Every ``Release`` record against the kafka-clients jar it names, on a CI-sized set of inputs.

tests/releases_vs_jars.py says how one record is diffed against its jar (same wire bytes, the jar
led as the record). Here, per record: its regression files (the incidents it exists to reproduce)
replay with the jar exactly as they do with the record; the records that model a release exactly
(every one, ``EXACT``: the current ones and each historical one with its release's general path)
equal their jar on every input. benchmarks/releases_vs_jars.py runs the same diff on a few hundred
inputs and gives the counts each record states. The first run builds each jar's harness with Maven
(kafka_java.py), later runs reuse the cache.
"""

from __future__ import annotations

import json
import os

import pytest

from stickyproof.assignors.releases import RELEASES, get_release
from stickyproof.cli import main

from .releases_vs_jars import diff_release, java_row, jar_version, regression_files
from .test_regressions import replay_file

GROUPS = int(os.environ.get("STICKYPROOF_RELEASE_GROUPS", "30"))
"""Sampler groups and history rebalances per record (benchmarks/releases_vs_jars.py: 150 each)."""

EXACT = ("sticky", "sticky@2.2", "sticky@2.3", "sticky@2.4", "sticky@2.6", "sticky@2.8.1", "sticky@3.3", "sticky@3.4",
         "sticky@3.5.1", "sticky@3.6", "cooperative-sticky", "cooperative-sticky@2.4", "cooperative-sticky@2.6",
         "cooperative-sticky@2.8.1", "cooperative-sticky@3.3", "cooperative-sticky@3.4", "cooperative-sticky@3.5.1",
         "cooperative-sticky@3.6")
"""Records whose docstrings say they equal their jar on every input."""

def test_every_record_names_the_jar_it_was_verified_against_and_on_how_many_inputs():
    for release in RELEASES:
        assert release.verified_against and release.verified_against.startswith("kafka-clients "), release.name
        assert release.verified_inputs >= 200, (release.name, release.verified_inputs)
        assert 0 < release.verified_agreeing <= release.verified_inputs, release.name
        assert release.verified_agreeing == release.verified_inputs, release.name  # every record is exact


@pytest.mark.parametrize("name", [r.name for r in RELEASES if r.version != "current"])
def test_each_incident_a_release_record_reproduces_happens_in_that_releases_jar(name):
    """The record's regression files replay with Kafka's own jar of that release, led as the record:
    the incident is Kafka's, not the model's."""
    release = get_release(name)
    files = regression_files(release)
    assert files, f"{name} has no regression file under tests/regressions/"
    java = java_row(release)
    for path in files:
        replay_file(path, java)


def test_every_record_is_claimed_exact():
    assert set(EXACT) == {r.name for r in RELEASES}


@pytest.mark.parametrize("name", EXACT)
def test_records_that_model_a_release_exactly_equal_its_jar(name):
    diff = diff_release(get_release(name), sampler=GROUPS, histories=GROUPS, grade_differences=False)
    assert diff.total >= 2 * GROUPS, diff.line()
    assert not diff.differ, diff.line() + "\n" + "\n".join(diff.examples())


def test_the_jar_a_record_names_is_the_release_it_models():
    """``sticky@2.6`` is diffed against a 2.6.x jar, the current records against a 3.9 or later one."""
    for release in RELEASES:
        jar = jar_version(release)
        if release.version == "current":
            assert tuple(int(x) for x in jar.split(".")[:2]) >= (3, 9), (release.name, jar)
        else:
            assert jar == release.version or jar.startswith(release.version + "."), (release.name, jar)


def test_stickyproof_assignors_shows_each_releases_jar_and_counts(capsys):
    assert main(["assignors"]) == 0
    out = capsys.readouterr().out
    for release in RELEASES:
        line = (f"verified against {release.verified_against}: agrees on {release.verified_agreeing} of "
                f"{release.verified_inputs} inputs")
        assert line in out, (release.name, out)
    assert main(["assignors", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    for release in RELEASES:
        assert rows[release.name]["verified_against"] == release.verified_against
        assert rows[release.name]["verified_inputs"] == release.verified_inputs
