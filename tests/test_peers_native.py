"""Kafka's own Java assignors and franz-go's balancers, run out of process through stickyproof's client.

The Kafka Java harness is built by Maven against the kafka-clients release ``peers/versions.lock``
pins (``stickyproof.peers.kafka_java``), once per session, into the user's cache: the first run
on a machine builds it (about half a minute with Maven's repository warm), every later run reuses it.
franz-go's harness is built from the Go module proxy at the version peers/versions.lock pins, into
the user's cache on first use (``stickyproof.peers.builds``). Neither test set skips for want of a
harness.

Every call goes the way a user's does: ``get_assignor("kafka-java:sticky")`` resolves the adapter
(``exec:`` with the cached harness's command, wire mode), ``leader.lead`` runs one rebalance with it, and
``grading.grade_assignor`` grades it. What they establish:

* Kafka-exactness checked against Kafka itself: Kafka's Java assignors, fed each member's
  subscription bytes as stickyproof's leader encodes them and decoded by ``ConsumerProtocol``, give
  exactly what ``lead`` gives with stickyproof's own assignor, on every current Kafka case file and
  on random groups of the sampler (eager and cooperative);
* franz-go's balancers answer every such group (no error, no crash) with a plan that assigns only
  existing partitions, once each, to members of the group; where they differ from Kafka, between
  two calls on one group, and what the grader says of them is counted and printed, not asserted
  (a different algorithm: its defects are pinned in tests/regressions/peers/).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

import pytest

from stickyproof.assignors.base import GroupSubscription, Subscription
from stickyproof.assignors.info import AssignorInfo
from stickyproof.lookup import get_assignor
from stickyproof.errors import AssignorFailure, UnknownAssignor
from stickyproof.grading import Limits, grade_assignor
from stickyproof.leader import lead
from stickyproof.model import Assignment, Scenario, Topic, TopicPartition, scenario_from_dict, scenario_to_dict
from stickyproof.peers import builds, kafka_java as kafka_java_peer, peers_dir
from stickyproof.peers import franz_go as franz_go_peer
from stickyproof.peers.protocol import parse_hello
from stickyproof.scenarios.sampler import sample

from .checks import validity

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = peers_dir()
CASES = ROOT / "tests" / "kafka_cases"
RANDOM_GROUPS = int(os.environ.get("STICKYPROOF_PEER_GROUPS", "300"))
SEED = 12
EAGER_NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")
LIMITS = Limits(assignor_seconds=60.0)
STRUCTURAL = {"duplicate", "nonexistent"}
"""Invariants a plan breaks by naming a partition twice or one that does not exist."""


# ------------------------------------------------------------------------------------------------
# what one assignor did on one group, comparable across implementations


Outcome = tuple[Mapping[str, Mapping[str, tuple[int, ...]]] | None, str | None]
"""(per member, per topic, partitions in the assignor's order; or None and the simple name of the
exception it failed with)."""


def simple_name(exception: str) -> str:
    """``java.lang.IllegalStateException`` -> ``IllegalStateException`` (stickyproof names some
    of Kafka's throws without their package)."""
    return exception.rsplit(".", 1)[-1]


def lists_of(assignment: Assignment) -> dict[str, dict[str, tuple[int, ...]]]:
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for member, tps in assignment.assignment.items():
        grouped: dict[str, list[int]] = {}
        for tp in tps:
            grouped.setdefault(tp.topic, []).append(tp.partition)
        if grouped:
            out[member] = {t: tuple(ps) for t, ps in grouped.items()}
    return out


def outcome(scenario: Scenario, assignor: str | AssignorInfo) -> Outcome:
    """One rebalance of ``scenario`` through ``leader.lead`` with ``assignor``."""
    try:
        return lists_of(lead(scenario, assignor).assignment), None
    except AssignorFailure as exc:
        return None, simple_name(exc.kafka_exception or type(exc).__name__)


def sets_of(result: Outcome) -> dict[str, set[TopicPartition]] | None:
    lists, _ = result
    if lists is None:
        return None
    return {m: {TopicPartition(t, p) for t, ps in ts.items() for p in ps} for m, ts in lists.items()}


def names_for(scenario: Scenario) -> tuple[str, ...]:
    """The Kafka assignors that can run ``scenario``'s rebalance protocol (R36)."""
    return EAGER_NAMES if scenario.protocol == "eager" else ("cooperative-sticky",)


def disagreement(scenario: Scenario, name: str, ours: Outcome, theirs: Outcome) -> str:
    return (
        f"{scenario.name} {name}: stickyproof {ours[1] or ours[0]} != Kafka {theirs[1] or theirs[0]}\n"
        f"scenario: {json.dumps(scenario_to_dict(scenario))}"
    )


# ------------------------------------------------------------------------------------------------
# finding or building the harnesses


def _manifest(peer: str, env: str, build: Path) -> dict[str, Any]:
    path = PEERS_DIR / peer / "manifest.json"
    if not path.exists():
        source = os.environ.get(env)
        if not source:
            pytest.skip(
                f"the {peer} harness is not built ({path} is missing) and {env} is not set: "
                f"run {build.relative_to(ROOT)} SOURCE, or set {env}=SOURCE to let the tests build it"
            )
        done = subprocess.run(["bash", str(build), source], capture_output=True, text=True,
                              env={**os.environ, "STICKYPROOF_PEERS_DIR": str(PEERS_DIR)})
        assert done.returncode == 0, f"{build.name} {source} failed:\n{done.stderr[-4000:]}"
    manifest = json.loads(path.read_text())
    missing = [argv[0] for argv in manifest["assignors"].values() if not Path(argv[0]).exists()]
    if missing:
        pytest.skip(f"{path} names commands that are not there any more ({missing[0]}): rebuild with {build.name}")
    return manifest


def _adapters(peer: str, manifest: dict[str, Any]) -> dict[str, AssignorInfo]:
    """``get_assignor("<peer>:<name>")`` for each assignor the manifest lists (one child each)."""
    return {name: get_assignor(f"{peer}:{name}") for name in manifest["assignors"]}


@pytest.fixture(scope="session")
def kafka_java() -> dict[str, Any]:
    """The manifest of the default kafka-clients version's harness, built by Maven on the first
    session of a machine (``builds.built``), read from the cache afterwards."""
    return builds.built(kafka_java_peer.RECIPE)


@pytest.fixture(scope="module")
def franz_go() -> dict[str, Any]:
    """The default franz-go (peers/versions.lock) from the Go module proxy, built into the user's
    cache on first use (stickyproof.peers.franz_go); never skipped."""
    started = time.monotonic()
    manifest = builds.built(franz_go_peer.RECIPE)
    seconds = time.monotonic() - started
    print(f"franz-go {manifest['version']}: {'built' if seconds > 1 else 'cached'} in {seconds:.1f} s "
          f"(build_seconds {manifest['build_seconds']})")
    return manifest


@pytest.fixture(scope="module")
def java(kafka_java) -> dict[str, AssignorInfo]:
    return _adapters("kafka-java", kafka_java)


@pytest.fixture(scope="module")
def franz(franz_go) -> dict[str, AssignorInfo]:
    return _adapters("franz-go", franz_go)


def says_hello_and_exits_on_end_of_input(argv: list[str]):
    """Start ``argv`` with an empty standard input: its first line is a hello (returned), and it exits 0."""
    done = subprocess.run(argv, input=b"", capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    return parse_hello(done.stdout.splitlines()[0], " ".join(argv))


# ------------------------------------------------------------------------------------------------
# the groups


def kafka_cases() -> list[tuple[str, Scenario, dict[str, Any]]]:
    """Kafka case files of a current assignor on the leader path: historical variants and ``direct``
    files are left out (the harness runs today's Kafka through the wire). Those with an exact
    expectation (``assignment``, ``lists`` or ``error``) are checked against it as well."""
    out = []
    for path in sorted(CASES.glob("*.json")):
        doc = json.loads(path.read_text())
        expect = doc.pop("expect")
        if expect["assignor"] not in EAGER_NAMES or expect.get("direct"):
            continue
        out.append((path.stem, scenario_from_dict(doc), expect))
    return out


KAFKA_CASES = kafka_cases()


def random_groups(count: int = RANDOM_GROUPS) -> list[Scenario]:
    return [sample(SEED, i) for i in range(count)]


# ------------------------------------------------------------------------------------------------
# Kafka's Java client


def test_kafka_java_default_build_is_the_locked_version_and_serves_every_assignor(kafka_java):
    assert kafka_java["version"] == builds.default_version("kafka-java"), kafka_java
    assert sorted(kafka_java["assignors"]) == sorted(EAGER_NAMES), kafka_java["assignors"]
    for argv in kafka_java["assignors"].values():
        classpath = argv[argv.index("-cp") + 1].split(os.pathsep)
        assert all(Path(entry).exists() for entry in classpath), classpath  # runs from the cache alone
        assert any(Path(entry).name == f"kafka-clients-{kafka_java['version']}.jar" for entry in classpath), classpath


def test_kafka_java_before_2_4_offers_the_assignors_it_has_and_eager_only():
    """kafka-clients 2.2.2 (the jar ``sticky@2.2`` is verified against, so the cache holds it after
    tests/test_releases_vs_jars.py too): built from the ``v20`` sources, it lists range, roundrobin and
    sticky, refuses cooperative-sticky naming them, and its sticky says eager only."""
    manifest = builds.built(kafka_java_peer.RECIPE, "2.2.2")
    assert sorted(manifest["assignors"]) == ["range", "roundrobin", "sticky"], manifest["assignors"]
    with pytest.raises(UnknownAssignor, match=r"kafka-clients 2.2.2 has no assignor 'cooperative-sticky' "
                                              r"\(it has: range, roundrobin, sticky\)"):
        get_assignor("kafka-java:cooperative-sticky@2.2.2")
    info = get_assignor("kafka-java:sticky@2.2.2")
    assert info.protocols == ("eager",) and info.kafka_name == "sticky" and info.name == "kafka-java:sticky@2.2.2"
    from stickyproof.scenarios import named

    lists, error = outcome(named.get("kip341-stale-rejoin"), info)  # KAFKA-7026's group, eager
    assert error is None and {tp for ts in lists.values() for tp in ts} == {"t"}, (lists, error)


def test_kafka_java_adapters_say_who_they_are(java, kafka_java):
    for name in EAGER_NAMES:
        info = java[name]
        hello = info.fn.client.hello
        assert hello.kafka_name == name and hello.wire is True and info.name == f"kafka-java:{name}", hello
        want = ("cooperative", "eager") if name == "cooperative-sticky" else ("eager",)
        assert hello.protocols == want and info.protocols == want, hello
        assert info.kafka_name == name and not info.user, info
    for name, argv in kafka_java["assignors"].items():
        assert says_hello_and_exits_on_end_of_input(argv).kafka_name == name


def test_kafka_java_reports_a_subscription_it_cannot_decode_as_kafkas_exception(java):
    group = GroupSubscription(
        {"t": Topic("t", 2)}, (Subscription("a", ("t",), raw=b"\x00\x03\x00"),), "eager", False
    )
    with pytest.raises(AssignorFailure) as caught:
        java["range"].fn(group)
    assert caught.value.kafka_exception == "org.apache.kafka.common.protocol.types.SchemaException", caught.value


def test_the_kafka_cases_hold_exact_expectations():
    exact = [c for c in KAFKA_CASES if {"assignment", "lists", "error"} & set(c[2])]
    assert len(exact) >= 200, len(exact)


@pytest.mark.parametrize("case", KAFKA_CASES, ids=[c[0] for c in KAFKA_CASES])
def test_kafka_java_equals_stickyproof_on_kafka_cases(java, case):
    """Each Kafka case: Kafka's Java assignor (through its own decoder) equals the leader's result,
    partition order included, and meets the file's exact expectation when it has one."""
    stem, scenario, expect = case
    name = expect["assignor"]
    theirs = outcome(scenario, java[name])
    ours = outcome(scenario, name)
    assert theirs == ours, disagreement(scenario, name, ours, theirs)
    lists, error = theirs
    if "error" in expect:
        assert error == simple_name(expect["error"]), theirs
        return
    sets = sets_of(theirs)
    for member, topics in expect.get("assignment", {}).items():
        got = {t: sorted(p for tp in sets.get(member, ()) if tp.topic == t for p in [tp.partition]) for t in topics}
        got_all = {tp.topic for tp in sets.get(member, ())}
        assert got == {t: sorted(ps) for t, ps in topics.items()} and got_all <= set(topics), (stem, member, got)
    for member, pairs in expect.get("lists", {}).items():
        mine = lists.get(member) or {}
        want: dict[str, list[int]] = {}
        for topic, partition in pairs:
            want.setdefault(topic, []).append(partition)
        assert {t: list(ps) for t, ps in mine.items()} == want, (stem, member, mine)  # per-topic order (R24)


def test_kafka_java_equals_stickyproof_on_random_groups(java):
    """Kafka-exactness against Kafka itself: every sampler group, every assignor that can run its
    protocol, the exact per-member lists (and the same exception when one throws)."""
    checked, differ = 0, []
    for scenario in random_groups():
        for name in names_for(scenario):
            theirs = outcome(scenario, java[name])
            ours = outcome(scenario, name)
            checked += 1
            if theirs != ours:
                differ.append(disagreement(scenario, name, ours, theirs))
    print(f"kafka-java vs stickyproof: {checked - len(differ)}/{checked} agree")
    assert checked >= RANDOM_GROUPS, checked
    assert not differ, f"{len(differ)} of {checked} differ; first:\n" + "\n".join(differ[:3])


def test_kafka_java_grades_as_stickyproof_does(java):
    """The grader sees no difference between Kafka's Java assignor and stickyproof's on sampler
    groups: the same validity, violated invariants and kept partitions."""
    differ = []
    for scenario in random_groups(min(RANDOM_GROUPS, 60)):
        for name in names_for(scenario):
            theirs = grade_assignor(scenario, java[name], limits=LIMITS)
            ours = grade_assignor(scenario, name, limits=LIMITS)
            if (theirs.valid, theirs.violated(), theirs.kept, theirs.error is None) != (
                ours.valid, ours.violated(), ours.kept, ours.error is None
            ):
                differ.append(f"{scenario.name} {name}: Kafka {theirs.to_dict()} != stickyproof {ours.to_dict()}")
    assert not differ, "\n".join(differ[:3])


# ------------------------------------------------------------------------------------------------
# franz-go


def _plan_problems(scenario: Scenario, result: Outcome) -> list[str]:
    """Only existing partitions, each at most once, to a member of the group."""
    return validity(scenario, sets_of(result) or {}, only=("unknown-member", "nonexistent", "duplicate"))


def test_franz_go_adapters_say_who_they_are(franz, franz_go):
    assert franz["sticky"].protocols == ("eager",)
    assert franz["cooperative-sticky"].protocols == ("cooperative",)
    for name, info in franz.items():
        assert info.fn.client.hello.wire is True and info.kafka_name == name, info
    for name, argv in franz_go["assignors"].items():
        assert says_hello_and_exits_on_end_of_input(argv).kafka_name == name


def test_franz_go_answers_every_random_group_and_differs_from_kafka_where_it_does(franz):
    """franz-go on the sampler's groups: an answer for each (no error) that assigns only existing
    partitions once each. Differences from Kafka's result, between two calls on one group, and the
    grader's verdicts are counted and printed: franz-go runs its own algorithm, so they are
    findings (tests/regressions/peers/), not failures."""
    stats: Counter[str] = Counter()
    violated: Counter[str] = Counter()
    problems = []
    for scenario in random_groups():
        for name in ("sticky", "cooperative-sticky"):
            info = franz[name]
            if scenario.protocol not in info.protocols:
                continue  # franz-go runs sticky in eager groups, cooperative-sticky in cooperative ones only
            first = outcome(scenario, info)
            second = outcome(scenario, info)
            kafka = outcome(scenario, name)
            stats["groups"] += 1
            stats["same_as_kafka"] += first == kafka
            stats["same_sets_as_kafka"] += sets_of(first) == sets_of(kafka)
            stats["nondeterministic"] += sets_of(first) != sets_of(second)
            if first[1]:
                problems.append(f"{scenario.name} {name}: error {first[1]}")
            problems += [f"{scenario.name} {name}: {p}" for p in _plan_problems(scenario, first)]
            if stats["groups"] <= 100:  # the grader on the first hundred (each grade re-runs the balancer)
                grade = grade_assignor(scenario, info, limits=LIMITS)
                violated.update(grade.violated())
                problems += [f"{scenario.name} {name}: {v}" for v in STRUCTURAL & set(grade.violated())]
                if grade.error:
                    problems.append(f"{scenario.name} {name}: graded error {grade.error}")
    print(f"franz-go on {stats['groups']} groups: {dict(stats)}; violated in the first 100 graded: {dict(violated)}")
    assert stats["groups"] >= RANDOM_GROUPS // 2
    assert not problems, problems[:10]


# ------------------------------------------------------------------------------------------------
# the build scripts themselves


def _go_module_dir(module: str, version: str) -> Path:
    done = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"], capture_output=True, text=True,
                          timeout=900, cwd=ROOT / "peers" / "franz-go", env={**os.environ, "GOFLAGS": "-mod=mod"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return Path(json.loads(done.stdout)["Dir"])


def _franz_go_module_source(into: Path) -> str:
    """A checkout of the locked franz-go release made from Go's module cache (``go mod download``):
    the module, with its nested ``pkg/kmsg`` module (a module of its own, not in the first one's
    zip) at the version its ``go.mod`` requires, laid where a git checkout has it."""
    import re
    import shutil

    version = builds.default_version("franz-go")
    checkout = into / "franz-go"
    shutil.copytree(_go_module_dir("github.com/twmb/franz-go", version), checkout)
    kmsg = re.search(r"github.com/twmb/franz-go/pkg/kmsg (v\S+)", (checkout / "go.mod").read_text()).group(1)
    shutil.copytree(_go_module_dir("github.com/twmb/franz-go/pkg/kmsg", kmsg), checkout / "pkg" / "kmsg")
    for path in checkout.rglob("*"):  # the module cache's files are read-only
        path.chmod(0o755 if path.is_dir() else 0o644)
    checkout.chmod(0o755)
    return str(checkout)


def _cached_kafka_clients_jars() -> list[Path]:
    manifest = builds.built(kafka_java_peer.RECIPE)
    argv = next(iter(manifest["assignors"].values()))
    return [Path(p) for p in argv[argv.index("-cp") + 1].split(os.pathsep) if p.endswith(".jar")]


@pytest.mark.slow
@pytest.mark.parametrize("peer,env", [("kafka-java", "KAFKA_SRC"), ("franz-go", "FRANZ_GO_SRC")])
def test_build_script_writes_a_manifest_whose_commands_say_hello(tmp_path, peer, env):
    """The build script, from the source named by ``env``, into a fresh directory: every command
    of its manifest starts a harness whose hello names that assignor, and which exits 0 on EOF.
    Without ``KAFKA_SRC``, kafka-java's script builds from the default version's cached jar (the
    ``kafka-java:NAME@local`` path)."""
    source = os.environ.get(env)
    if not source and peer == "kafka-java":  # the jar Maven fetched for the default version's harness
        source = next(str(p) for p in _cached_kafka_clients_jars() if p.name.startswith("kafka-clients-"))
    if not source and peer == "franz-go":  # the locked release's source, as the Go module cache holds it
        source = _franz_go_module_source(tmp_path / "source")
    assert source, f"no source for peers/{peer}/build.sh ({env} unset and none cached)"
    build = ROOT / "peers" / peer / "build.sh"
    done = subprocess.run(["bash", str(build), source], capture_output=True, text=True, timeout=3600,
                          env={**os.environ, "STICKYPROOF_PEERS_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-4000:]
    manifest = json.loads((tmp_path / peer / "manifest.json").read_text())
    assert manifest["format"] == "stickyproof.peer-manifest/1" and manifest["peer"] == peer
    assert {"sticky", "cooperative-sticky"} <= set(manifest["assignors"])
    for name, argv in manifest["assignors"].items():
        hello = says_hello_and_exits_on_end_of_input(argv)
        assert hello.kafka_name == name and hello.name == f"{peer}:{name}", hello
