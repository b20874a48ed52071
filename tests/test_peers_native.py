"""Kafka's own Java assignors and franz-go's balancers, run out of process over assignor/1.

The harnesses are built by ``peers/kafka-java/build.sh`` and ``peers/franz-go/build.sh`` into
``$STICKYPROOF_PEERS_DIR`` (default ``<repo>/.peers``); each writes a ``manifest.json`` mapping
assignor names to the command that starts it (peers/README.md). These tests use a built harness
when its manifest is there, build one when ``KAFKA_SRC`` (a Kafka source tree or a kafka-clients
jar) / ``FRANZ_GO_SRC`` (a franz-go checkout) is set, and skip saying so otherwise.

What they establish:

* Kafka-exactness checked against Kafka itself: Kafka's Java assignors, fed each member's
  subscription bytes as stickyproof encodes them and decoded by ``ConsumerProtocol``, give exactly
  what ``stickyproof.leader.lead`` gives, on every Kafka case file with an exact expectation and on
  random groups of the sampler (eager and cooperative);
* franz-go's balancers answer every such group (no error, no crash) with a plan that assigns only
  existing partitions; where they differ from Kafka is recorded, not asserted (a different
  algorithm), and so is whether two calls on one group give one plan.

The driver here is deliberately tiny (one process per assignor, a reader thread, a per-call time
limit); stickyproof's own ``exec:`` client replaces it once it exists.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import pytest

from stickyproof.assignors.registry import get_assignor
from stickyproof.errors import AssignorFailure
from stickyproof.leader import build_group, lead, subscription_bytes
from stickyproof.model import Scenario, TopicPartition, scenario_to_dict
from stickyproof.scenarios.sampler import sample

from .builders import group
from .checks import validity
from .test_kafka_cases import load_case

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = Path(os.environ.get("STICKYPROOF_PEERS_DIR") or ROOT / ".peers")
CASES = ROOT / "tests" / "kafka_cases"
RANDOM_GROUPS = int(os.environ.get("STICKYPROOF_PEER_GROUPS", "300"))
SEED = 12
EAGER_NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")
CALL_SECONDS = 60.0


# ------------------------------------------------------------------------------------------------
# the tiny assignor/1 driver


class PeerError(Exception):
    """The harness broke the protocol: no hello, no answer in time, died, or answered garbage."""


class Peer:
    """One harness process: hello on start, one request line, one answer line."""

    def __init__(self, argv: list[str], *, start_seconds: float = 60.0):
        self.argv = argv
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.hello = self._answer(start_seconds)
        if self.hello.get("stickyproof") != "assignor/1":
            raise PeerError(f"{argv}: bad hello {self.hello}")
        self._next_id = 0

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _answer(self, seconds: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=seconds)
        except queue.Empty:
            raise PeerError(f"no line within {seconds} s; stderr: {self.stderr_tail()}") from None
        if line is None:
            raise PeerError(f"exited with {self.proc.wait()}; stderr: {self.stderr_tail()}")
        try:
            doc = json.loads(line)
        except ValueError:
            raise PeerError(f"garbage: {line[:200]!r}") from None
        if not isinstance(doc, dict):
            raise PeerError(f"garbage: {line[:200]!r}")
        return doc

    def call(self, request: dict[str, Any], seconds: float = CALL_SECONDS) -> dict[str, Any]:
        self._next_id += 1
        request = {**request, "id": self._next_id}
        self.proc.stdin.write(json.dumps(request, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()
        answer = self._answer(seconds)
        if answer.get("id") != self._next_id:
            raise PeerError(f"answer to id {self._next_id} has id {answer.get('id')}")
        return answer

    def stderr_tail(self, lines: int = 40) -> str:
        self._stderr.seek(0)
        return b"\n".join(self._stderr.read().splitlines()[-lines:]).decode(errors="replace")

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait()
        return self.proc.returncode


def partition_list(doc: Any) -> list[int]:
    """A protocol partition list (§4): an array, or ``{"ranges": [[first, last], ...]}``."""
    if isinstance(doc, dict):
        return [p for first, last in doc["ranges"] for p in range(first, last + 1)]
    return list(doc)


def ranges_or_list(partitions: list[int]) -> Any:
    """What stickyproof sends for a list when the harness accepts ranges: ranges only when shorter."""
    runs: list[list[int]] = []
    for p in partitions:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return {"ranges": runs} if 2 * len(runs) < len(partitions) else partitions


def request(scenario: Scenario, kafka_name: str, *, ranges: bool = True) -> dict[str, Any]:
    """The assignor/1 request stickyproof's leader sends for ``scenario`` to an assignor registered
    as ``kafka_name`` in wire mode: every member encoded at its version with the user data a Java
    member of that assignor sends, and the group as the leader decoded those bytes."""
    info = get_assignor(kafka_name)
    protocol = scenario.protocol
    wire = {m.id: subscription_bytes(m, info, protocol) for m in scenario.members}
    group = build_group(scenario, info, protocol, subscriptions=wire)
    members = []
    for s in group.members:
        owned: dict[str, list[int]] = {}
        for tp in s.owned:
            owned.setdefault(tp.topic, []).append(tp.partition)
        members.append({
            "id": s.member_id,
            "topics": list(s.topics),
            "owned": {t: ranges_or_list(ps) if ranges else ps for t, ps in owned.items()},
            "generation": -1 if s.generation is None else s.generation,
            "version": s.version,
            "rack": s.rack,
            "instance_id": s.instance_id,
            "user_data": None if s.user_data is None else base64.b64encode(s.user_data).decode(),
        })
    return {
        "id": 0,
        "rebalance_protocol": protocol,
        "group": {"topics": scenario_to_dict(scenario)["topics"], "members": members},
        "subscriptions": {k: base64.b64encode(v).decode() for k, v in wire.items()},
    }


@dataclass(frozen=True)
class Outcome:
    """One assignor's answer on one group: per member, per topic, partitions in the assignor's
    order (topics in order of first appearance), or the exception type it failed with."""

    lists: Mapping[str, Mapping[str, tuple[int, ...]]] | None
    error: str | None = None

    def sets(self) -> dict[str, set[TopicPartition]] | None:
        if self.lists is None:
            return None
        return {m: {TopicPartition(t, p) for t, ps in ts.items() for p in ps} for m, ts in self.lists.items() if ts}


def simple_name(exception: str) -> str:
    """``java.lang.IllegalStateException`` -> ``IllegalStateException`` (stickyproof names some
    of Kafka's throws without their package)."""
    return exception.rsplit(".", 1)[-1]


def peer_outcome(answer: dict[str, Any]) -> Outcome:
    if "error" in answer:
        return Outcome(None, simple_name(answer["error"]["type"]))
    lists = {
        m: {t: tuple(partition_list(ps)) for t, ps in topics.items() if partition_list(ps)}
        for m, topics in answer["assignment"].items()
    }
    return Outcome({m: ts for m, ts in lists.items() if ts})


def stickyproof_outcome(scenario: Scenario, name: str) -> Outcome:
    try:
        result = lead(scenario, name)
    except AssignorFailure as exc:
        return Outcome(None, simple_name(exc.kafka_exception or type(exc).__name__))
    lists: dict[str, dict[str, tuple[int, ...]]] = {}
    for member, tps in result.assignment.assignment.items():
        grouped: dict[str, list[int]] = {}
        for tp in tps:
            grouped.setdefault(tp.topic, []).append(tp.partition)
        if grouped:
            lists[member] = {t: tuple(ps) for t, ps in grouped.items()}
    return Outcome(lists)


def names_for(scenario: Scenario) -> tuple[str, ...]:
    """The Kafka assignors that can run ``scenario``'s rebalance protocol (R36)."""
    return EAGER_NAMES if scenario.protocol == "eager" else ("cooperative-sticky",)


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


@pytest.fixture(scope="module")
def kafka_java() -> dict[str, Any]:
    return _manifest("kafka-java", "KAFKA_SRC", ROOT / "peers" / "kafka-java" / "build.sh")


@pytest.fixture(scope="module")
def franz_go() -> dict[str, Any]:
    return _manifest("franz-go", "FRANZ_GO_SRC", ROOT / "peers" / "franz-go" / "build.sh")


class Peers:
    """One running harness per assignor name, started on first use."""

    def __init__(self, manifest: dict[str, Any]):
        self.manifest = manifest
        self.running: dict[str, Peer] = {}

    def __call__(self, name: str) -> Peer:
        if name not in self.running:
            self.running[name] = Peer(self.manifest["assignors"][name])
        return self.running[name]

    def close(self) -> None:
        for peer in self.running.values():
            assert peer.close() == 0, peer.stderr_tail()


@pytest.fixture(scope="module")
def java(kafka_java) -> Iterator[Peers]:
    peers = Peers(kafka_java)
    yield peers
    peers.close()


@pytest.fixture(scope="module")
def franz(franz_go) -> Iterator[Peers]:
    peers = Peers(franz_go)
    yield peers
    peers.close()


# ------------------------------------------------------------------------------------------------
# the groups


def kafka_cases() -> list[tuple[str, Scenario, dict[str, Any]]]:
    """Kafka case files of a current assignor on the leader path: historical variants and ``direct``
    files are left out (the harness runs today's Kafka through the wire). Those with an exact
    expectation (``assignment``, ``lists`` or ``error``) are checked against it as well."""
    out = []
    for path in sorted(CASES.glob("*.json")):
        scenario, expect = load_case(path)
        if expect["assignor"] not in EAGER_NAMES or expect.get("direct"):
            continue
        out.append((path.stem, scenario, expect))
    return out


KAFKA_CASES = kafka_cases()


def random_groups(count: int = RANDOM_GROUPS) -> list[Scenario]:
    return [sample(SEED, i) for i in range(count)]


def disagreement(scenario: Scenario, name: str, ours: Outcome, theirs: Outcome) -> str:
    return (
        f"{scenario.name} {name}: stickyproof {ours.error or dict(ours.lists)} != Kafka {theirs.error or dict(theirs.lists)}\n"
        f"scenario: {json.dumps(scenario_to_dict(scenario))}"
    )


# ------------------------------------------------------------------------------------------------
# Kafka's Java client


def test_kafka_java_hello_names_each_assignor(java):
    for name in EAGER_NAMES:
        hello = java(name).hello
        assert hello["kafka_name"] == name and hello["wire"] is True, hello
        want = ["cooperative", "eager"] if name == "cooperative-sticky" else ["eager"]
        assert hello["supported_protocols"] == want, hello


def test_kafka_java_reports_a_subscription_it_cannot_decode_as_kafkas_exception(java):
    scenario = group({"t": 2}, [{"id": "a", "topics": ["t"]}])
    req = request(scenario, "range")
    req["subscriptions"]["a"] = base64.b64encode(b"\x00\x03\x00").decode()
    answer = java("range").call(req)
    assert answer["error"]["type"] == "org.apache.kafka.common.protocol.types.SchemaException", answer


def test_the_kafka_cases_hold_exact_expectations():
    exact = [c for c in KAFKA_CASES if {"assignment", "lists", "error"} & set(c[2])]
    assert len(exact) >= 200, len(exact)


@pytest.mark.parametrize("case", KAFKA_CASES, ids=[c[0] for c in KAFKA_CASES])
def test_kafka_java_equals_stickyproof_on_kafka_cases(java, case):
    """Each Kafka case: Kafka's Java assignor (through its own decoder) equals the leader's result,
    partition order included, and meets the file's exact expectation when it has one."""
    stem, scenario, expect = case
    name = expect["assignor"]
    theirs = peer_outcome(java(name).call(request(scenario, name)))
    ours = stickyproof_outcome(scenario, name)
    assert theirs == ours, disagreement(scenario, name, ours, theirs)
    if "error" in expect:
        assert theirs.error == simple_name(expect["error"]), theirs
        return
    sets = theirs.sets()
    for member, topics in expect.get("assignment", {}).items():
        got = {t: sorted(p for tp in sets.get(member, ()) if tp.topic == t for p in [tp.partition]) for t in topics}
        got_all = {tp.topic for tp in sets.get(member, ())}
        assert got == {t: sorted(ps) for t, ps in topics.items()} and got_all <= set(topics), (stem, member, got)
    for member, pairs in expect.get("lists", {}).items():
        mine = theirs.lists.get(member) or {}
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
            theirs = peer_outcome(java(name).call(request(scenario, name)))
            ours = stickyproof_outcome(scenario, name)
            checked += 1
            if theirs != ours:
                differ.append(disagreement(scenario, name, ours, theirs))
    print(f"kafka-java vs stickyproof: {checked - len(differ)}/{checked} agree")
    assert checked >= RANDOM_GROUPS, checked
    assert not differ, f"{len(differ)} of {checked} differ; first:\n" + "\n".join(differ[:3])


# ------------------------------------------------------------------------------------------------
# franz-go


def _valid(scenario: Scenario, outcome: Outcome) -> list[str]:
    """Only existing partitions, each at most once, to a member of the group."""
    return validity(scenario, outcome.sets() or {}, only=("unknown-member", "nonexistent", "duplicate"))


def test_franz_go_hello(franz):
    assert franz("sticky").hello["supported_protocols"] == ["eager"]
    assert franz("cooperative-sticky").hello["supported_protocols"] == ["cooperative"]


def test_franz_go_answers_every_random_group_and_differs_from_kafka_where_it_does(franz):
    """franz-go on the sampler's groups: an answer for each (no error) that assigns only existing
    partitions once each. Differences from Kafka's result and between two calls on one group are
    counted and printed: franz-go runs its own algorithm, so they are findings, not failures."""
    stats = {"groups": 0, "same_as_kafka": 0, "same_sets_as_kafka": 0, "nondeterministic": 0}
    problems = []
    for scenario in random_groups():
        for name in ("sticky", "cooperative-sticky"):
            if scenario.protocol == "cooperative" and name == "sticky":
                continue
            if scenario.protocol == "eager" and name == "cooperative-sticky":
                continue  # franz-go runs cooperative-sticky in cooperative groups only
            req = request(scenario, name)
            first = peer_outcome(franz(name).call(req))
            second = peer_outcome(franz(name).call(req))
            kafka = stickyproof_outcome(scenario, name)
            stats["groups"] += 1
            stats["same_as_kafka"] += first == kafka
            stats["same_sets_as_kafka"] += first.sets() == kafka.sets()
            stats["nondeterministic"] += first.sets() != second.sets()
            if first.error:
                problems.append(f"{scenario.name} {name}: error {first.error}")
            problems += [f"{scenario.name} {name}: {p}" for p in _valid(scenario, first)]
    print(f"franz-go on {stats['groups']} groups: {stats}")
    assert stats["groups"] >= RANDOM_GROUPS // 2
    assert not problems, problems[:10]


# ------------------------------------------------------------------------------------------------
# the build scripts themselves


@pytest.mark.slow
@pytest.mark.parametrize("peer,env", [("kafka-java", "KAFKA_SRC"), ("franz-go", "FRANZ_GO_SRC")])
def test_build_script_writes_a_manifest_whose_commands_say_hello(tmp_path, peer, env):
    """The build script, from the source named by ``env``, into a fresh directory: every command
    of its manifest starts a harness whose hello names that assignor, and which exits 0 on EOF."""
    source = os.environ.get(env)
    if not source:
        pytest.skip(f"{env} is not set: it names the source peers/{peer}/build.sh builds from")
    build = ROOT / "peers" / peer / "build.sh"
    done = subprocess.run(["bash", str(build), source], capture_output=True, text=True, timeout=3600,
                          env={**os.environ, "STICKYPROOF_PEERS_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-4000:]
    manifest = json.loads((tmp_path / peer / "manifest.json").read_text())
    assert manifest["format"] == "stickyproof.peer-manifest/1" and manifest["peer"] == peer
    assert {"sticky", "cooperative-sticky"} <= set(manifest["assignors"])
    for name, argv in manifest["assignors"].items():
        harness = Peer(argv)
        assert harness.hello["kafka_name"] == name and harness.hello["name"] == f"{peer}:{name}", harness.hello
        assert harness.close() == 0, harness.stderr_tail()
