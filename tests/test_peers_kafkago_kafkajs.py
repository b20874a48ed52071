"""segmentio/kafka-go's balancers and KafkaJS's RoundRobinAssigner, built from their registries and
run out of process through stickyproof's client (peers/README.md).

The adapters build their harness on first use into the user's cache (``stickyproof.peers.builds``):
the first test of a session that resolves one pays the build (Go module proxy, npm), every later one
reuses it. Nothing here is skipped: a machine that cannot build them fails these tests, saying why.

What they establish, on every bundled scenario and on the sampler's groups (``STICKYPROOF_PEER_GROUPS``,
default 300):

* the harness reproduces its client's leader around the balancer: the answers equal an independent
  model of what kafka-go's leader (``kafka-go:range``, ``kafka-go:roundrobin``; the topic list, the
  all-or-nothing metadata read, members sorted per topic) and KafkaJS's leader (the leader's own
  topics dealt over all members sorted by id) compute, and ``kafka-go:range+java`` fails exactly when
  a member sends a subscription of version 1 or later, with kafka-go's message;
* ``kafka-go:rack-affinity`` answers every group with a plan that assigns each existing partition of
  the topics the group asks for once, to a subscriber, balanced within one per topic;
* the grader runs on them (``grading.grade_assignor``) without a harness failure; what it finds is
  counted and printed, and the findings are pinned in tests/regressions/peers/.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from dataclasses import replace
import pytest

from stickyproof.assignors.info import AssignorInfo
from stickyproof.lookup import get_assignor
from stickyproof.errors import AssignorFailure, UnknownAssignor
from stickyproof.grading import Limits, grade_assignor
from stickyproof.javaorder import java_string_key
from stickyproof.leader import lead
from stickyproof.model import Scenario
from stickyproof.peers import builds, kafka_go, kafkajs
from stickyproof.peers.protocol import parse_hello
from stickyproof.scenarios import named
from stickyproof.scenarios.sampler import sample

RANDOM_GROUPS = int(os.environ.get("STICKYPROOF_PEER_GROUPS", "300"))
GRADED = min(RANDOM_GROUPS, 100)
SEED = 12
LIMITS = Limits(assignor_seconds=60.0)
STRUCTURAL = {"duplicate", "nonexistent", "unknown-member"}

Plan = dict[str, dict[str, list[int]]]


# ------------------------------------------------------------------------------------------------
# the adapters, built (or found in the cache) once per session


@pytest.fixture(scope="session")
def go() -> dict[str, AssignorInfo]:
    return {name: get_assignor(f"kafka-go:{name}") for name in ("range", "roundrobin", "rack-affinity", "range+java")}


@pytest.fixture(scope="session")
def js() -> AssignorInfo:
    return get_assignor("kafkajs:roundrobin")


def eager(scenario: Scenario) -> Scenario:
    """Neither client rebalances cooperatively: a cooperative group is led as the eager group it would be."""
    return scenario if scenario.protocol == "eager" else replace(scenario, protocol="eager")


def groups() -> list[Scenario]:
    bundled = [eager(named.get(name)) for name in named.names() if name != "kip615-2100"]
    return bundled + [eager(sample(SEED, i)) for i in range(RANDOM_GROUPS)]


GROUPS = groups()


def plan_of(scenario: Scenario, info: AssignorInfo) -> Plan:
    """One rebalance through ``leader.lead``: member -> topic -> partitions (in the answer's order), members with nothing left out."""
    out: Plan = {}
    for member, tps in lead(scenario, info).assignment.assignment.items():
        for tp in tps:
            out.setdefault(member, {}).setdefault(tp.topic, []).append(tp.partition)
    return out


def sorted_plan(plan: Plan) -> Plan:
    return {m: {t: sorted(ps) for t, ps in ts.items() if ps} for m, ts in plan.items() if any(ts.values())}


# ------------------------------------------------------------------------------------------------
# independent models of what each client's leader computes


def kafka_go_model(scenario: Scenario, balancer: str) -> Plan:
    """kafka-go's leader: the members' topics sorted, no partitions at all when one is missing from
    the metadata, then per topic its subscribers sorted by id; range gives subscriber i of n the
    partitions i*P//n <= p < (i+1)*P//n, roundrobin those with p % n == i."""
    counts = {t.name: t.partitions for t in scenario.topics}
    wanted = sorted({t for m in scenario.members for t in m.topics})
    if any(t not in counts for t in wanted):
        return {}
    plan: Plan = {}
    for topic in wanted:
        subscribers = sorted(m.id for m in scenario.members if topic in m.topics)
        n, total = len(subscribers), counts[topic]
        for i, member in enumerate(subscribers):
            if balancer == "range":
                mine = [p for p in range(total) if i * total // n <= p < (i + 1) * total // n]
            else:
                mine = [p for p in range(total) if p % n == i]
            if mine:
                plan.setdefault(member, {})[topic] = mine
    return plan


def kafkajs_model(scenario: Scenario) -> Plan:
    """KafkaJS's leader (the first member): its own topics, in the order its subscription lists them
    (Java's encoder sorts them), every partition of each dealt in turn over all members sorted by id."""
    counts = {t.name: t.partitions for t in scenario.topics}
    members = sorted((m.id for m in scenario.members), key=java_string_key)
    leader_topics = sorted(scenario.members[0].topics, key=java_string_key)
    flat = [(t, p) for t in leader_topics for p in range(counts.get(t, 0))]
    plan: Plan = {}
    for i, (topic, partition) in enumerate(flat):
        plan.setdefault(members[i % len(members)], {}).setdefault(topic, []).append(partition)
    return plan


def missing_topics(scenario: Scenario, topics) -> list[str]:
    known = {t.name for t in scenario.topics}
    return sorted(set(topics) - known)


# ------------------------------------------------------------------------------------------------
# who they are


def says_hello_and_exits_on_end_of_input(argv: list[str]):
    done = subprocess.run(argv, input=b"", capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    return parse_hello(done.stdout.splitlines()[0], " ".join(argv))


def test_kafka_go_adapters_say_who_they_are(go):
    for name, info in go.items():
        hello = info.fn.client.hello
        assert info.name == f"kafka-go:{name}" and hello.wire is True and info.protocols == ("eager",), hello
        assert info.kafka_name == name.split("+")[0], info
    # range and roundrobin are Kafka's own protocol names: led as Java members running them
    assert not go["range"].user and not go["roundrobin"].user and go["rack-affinity"].user
    manifest = builds.built(kafka_go.RECIPE)
    assert manifest["version"] == builds.default_version("kafka-go") and manifest["source"]["tool"] == "go"
    for name, argv in manifest["assignors"].items():
        hello = says_hello_and_exits_on_end_of_input(argv)
        assert hello.name == f"kafka-go:{name}" and hello.kafka_name == name.split("+")[0], hello


def test_kafkajs_adapter_says_who_it_is(js):
    hello = js.fn.client.hello
    # KafkaJS registers the assigner under its own name, which no Java member offers
    assert hello.kafka_name == "RoundRobinAssigner" and js.user and js.protocols == ("eager",) and hello.wire, hello
    manifest = builds.built(kafkajs.RECIPE)
    assert manifest["version"] == builds.default_version("kafkajs") and manifest["source"]["tool"] == "npm"
    (argv,) = manifest["assignors"].values()
    assert says_hello_and_exits_on_end_of_input(argv).name == "kafkajs:roundrobin"


def test_an_explicit_version_names_the_same_build_as_the_default(go):
    pinned = builds.default_version("kafka-go")
    info = get_assignor(f"kafka-go:range@{pinned}")
    assert info.name == f"kafka-go:range@{pinned}" and info.fn.client.argv == go["range"].fn.client.argv


@pytest.mark.parametrize("name,needle", [
    ("kafka-go:sticky", "kafka-go has no balancer 'sticky'"),
    ("kafka-go:rack-affinity+java", "kafka-go has no balancer 'rack-affinity+java'"),
    ("kafkajs:range", "KafkaJS has no assigner 'range'"),
    ("kafka-go:range@", "a version follows '@'"),
    ("kafkajs:roundrobin@../x", "not a version"),
])
def test_a_bad_name_is_one_line_before_any_build(name, needle):
    with pytest.raises(UnknownAssignor) as caught:
        get_assignor(name)
    assert needle in str(caught.value) and "\n" not in str(caught.value), caught.value


@pytest.mark.parametrize("recipe,version", [(kafka_go.RECIPE, "v0.0.1-stickyproof-none"), (kafkajs.RECIPE, "0.0.1-stickyproof-none")])
def test_a_version_the_registry_does_not_serve_fails_in_one_line(tmp_path, monkeypatch, recipe, version):
    """A failed build names the client, the version and the tool on one line, and leaves no build in the cache."""
    monkeypatch.setenv("STICKYPROOF_CACHE_DIR", str(tmp_path))
    with pytest.raises(builds.PeerBuildFailed) as caught:
        builds.built(recipe, version)
    message = str(caught.value)
    assert message.startswith(f"{recipe.client}@{version}: build failed ({recipe.tool}): ") and "\n" not in message, message
    assert not list((tmp_path / "peers" / recipe.client).glob("*/manifest.json"))


# ------------------------------------------------------------------------------------------------
# kafka-go


@pytest.mark.parametrize("balancer", ["range", "roundrobin"])
def test_kafka_go_equals_the_model_of_its_leader_on_every_group(go, balancer):
    differ = []
    for scenario in GROUPS:
        theirs = sorted_plan(plan_of(scenario, go[balancer]))
        model = sorted_plan(kafka_go_model(scenario, balancer))
        if theirs != model:
            differ.append(f"{scenario.name}: kafka-go {theirs} != model {model}")
    assert len(GROUPS) >= RANDOM_GROUPS
    assert not differ, f"{len(differ)} of {len(GROUPS)} differ; first:\n" + "\n".join(differ[:3])


def test_kafka_go_leader_among_java_members_fails_exactly_on_versions_after_0(go):
    """kafka-go reads only the version-0 layout and rejects bytes left over: a group with a member
    of version 1 or later fails, naming the first such member in JoinGroup order."""
    failed = read = 0
    for scenario in GROUPS:
        late = [m.id for m in scenario.members if m.version >= 1]
        try:
            theirs = sorted_plan(plan_of(scenario, go["range+java"]))
        except AssignorFailure as exc:
            assert late, f"{scenario.name}: failed with only version-0 members: {exc}"
            assert f"unable to read metadata for member, {late[0]}: %!w(<nil>)" in str(exc), exc
            failed += 1
            continue
        assert not late, f"{scenario.name}: read members of version >= 1: {late}"
        assert theirs == sorted_plan(kafka_go_model(scenario, "range")), scenario.name
        read += 1
    print(f"kafka-go range among Java members: {failed} groups failed, {read} read")
    assert failed and read


def test_kafka_go_rack_affinity_assigns_each_partition_once_balanced_per_topic(go):
    problems, plans = [], Counter()
    for scenario in GROUPS:
        counts = {t.name: t.partitions for t in scenario.topics}
        wanted = {t for m in scenario.members for t in m.topics}
        plan = plan_of(scenario, go["rack-affinity"])
        plans["groups"] += 1
        if missing_topics(scenario, wanted):
            plans["missing-topic"] += 1
            if plan:
                problems.append(f"{scenario.name}: a topic is missing, yet it assigned {plan}")
            continue
        for topic in sorted(wanted):
            subscribers = {m.id for m in scenario.members if topic in m.topics}
            got = {m: ts.get(topic, []) for m, ts in plan.items() if ts.get(topic)}
            every = sorted(p for ps in got.values() for p in ps)
            sizes = [len(got.get(m, [])) for m in subscribers]
            if every != list(range(counts[topic])) or not set(got) <= subscribers or max(sizes) - min(sizes) > 1:
                problems.append(f"{scenario.name} {topic}: {got} over subscribers {sorted(subscribers)}")
    print(f"kafka-go rack-affinity: {dict(plans)}")
    assert not problems, problems[:5]


def test_kafka_go_grades_without_a_harness_failure(go):
    for name in ("range", "roundrobin", "rack-affinity"):
        tally, violated, problems = grade_all(go[name])
        print(f"kafka-go:{name} on {tally['groups']} graded groups: {dict(tally)}; violated: {dict(violated)}")
        assert not problems, problems[:5]
        assert tally["errors"] == 0, tally


# ------------------------------------------------------------------------------------------------
# KafkaJS


def test_kafkajs_equals_the_model_of_its_leader_on_every_group(js):
    """Where the leader's topics all exist: the model's plan. Where one does not: KafkaJS's metadata
    refresh fails the rebalance with its protocol error."""
    differ, failed = [], 0
    for scenario in GROUPS:
        missing = missing_topics(scenario, scenario.members[0].topics) if scenario.members else []
        try:
            theirs = sorted_plan(plan_of(scenario, js))
        except AssignorFailure as exc:
            assert missing and exc.kafka_exception == "KafkaJSProtocolError", (scenario.name, exc)
            failed += 1
            continue
        assert not missing, f"{scenario.name}: the leader subscribes to missing {missing}, yet it answered"
        model = sorted_plan(kafkajs_model(scenario))
        if theirs != model:
            differ.append(f"{scenario.name}: KafkaJS {theirs} != model {model}")
    print(f"kafkajs: {len(GROUPS) - failed} answered, {failed} failed on a missing leader topic")
    assert not differ, f"{len(differ)} of {len(GROUPS)} differ; first:\n" + "\n".join(differ[:3])


def test_kafkajs_grades_without_a_harness_failure(js):
    tally, violated, problems = grade_all(js)
    print(f"kafkajs:roundrobin on {tally['groups']} graded groups: {dict(tally)}; violated: {dict(violated)}")
    assert not problems, problems[:5]
    assert violated["unsubscribed"] > 0  # tulios/kafkajs#1679 on the sampler's mixed subscriptions


# ------------------------------------------------------------------------------------------------


def grade_all(info: AssignorInfo) -> tuple[Counter, Counter, list[str]]:
    """Grade the first ``GRADED`` groups: counts of valid plans and assignor errors, the violated
    invariants, and every harness failure (garbage, crash, time limit) or structural violation."""
    tally: Counter[str] = Counter()
    violated: Counter[str] = Counter()
    problems: list[str] = []
    for scenario in GROUPS[:GRADED]:
        grade = grade_assignor(scenario, info, limits=LIMITS)
        tally["groups"] += 1
        tally["valid"] += bool(grade.valid)
        violated.update(grade.violated())
        problems += [f"{scenario.name}: {v}" for v in STRUCTURAL & set(grade.violated())]
        if grade.error:
            tally["errors"] += 1
            if not grade.error.startswith("AssignorFailure"):
                problems.append(f"{scenario.name}: {grade.error.splitlines()[0]}")
    return tally, violated, problems
