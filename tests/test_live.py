"""Live groups on a real broker (issue 24): Kafka's own broker, started once for the module from the
jars Maven resolved into the user's cache (the first run on a machine resolves them, about 20 s;
every later run reuses them), and real Java members driven through a small history.

What they establish: the broker stickyproof starts answers and is gone, with its directory, when the
block ends; attaching to a named broker starts nothing; a bad ``--bootstrap`` is one line.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stickyproof.live import processes
from stickyproof.live.broker import BrokerUnavailable, _api_versions, parse_bootstrap, running_broker


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def broker():
    # KIP-1263's batching and offload off, as `live --compare` starts its broker: the KIP-848 tests
    # here compare the simulator step by step (the classic tests do not depend on these settings)
    with running_broker(assignment_at_once=True) as b:
        yield b
    assert not _alive(b.pid), "the broker outlived its block"
    assert not b.directory.exists(), "the broker's directory outlived its block"
    assert processes.running_children() == []


def test_the_started_broker_answers_api_versions(broker):
    host, port = parse_bootstrap(broker.bootstrap)
    assert host == "127.0.0.1"
    assert _api_versions(host, port, timeout=5.0)
    assert broker.started_here and _alive(broker.pid)


def test_attaching_to_a_named_broker_starts_nothing(broker):
    before = processes.running_children()
    with running_broker(bootstrap=broker.bootstrap) as attached:
        assert attached.bootstrap == broker.bootstrap
        assert not attached.started_here
        assert processes.running_children() == before


@pytest.mark.parametrize("text", ["localhost", "host:", ":9092", "host:99999", "host:port"])
def test_a_bootstrap_that_is_not_host_port_is_refused(text):
    with pytest.raises(BrokerUnavailable, match="--bootstrap"):
        parse_bootstrap(text)


def test_a_bootstrap_where_no_broker_answers_is_one_line():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BrokerUnavailable, match="no Kafka broker answers"):
        with running_broker(bootstrap=f"127.0.0.1:{port}"):
            pass


# ------------------------------------------------------------------------------------------
# A history with two real Java members


from stickyproof.cli import main as cli_main
from stickyproof.group.events import simulation_from_dict
from stickyproof.live.java_member import Report
from stickyproof.live.run import LIVE_MONITORS, LiveSettings, check_live, consumption_intervals
from stickyproof.errors import InvalidOption, InvalidScenario
from stickyproof.model import TopicPartition

TWO_MEMBERS = {
    "format": "stickyproof.simulation/1",
    "name": "two-java-members",
    "scenario": {"format": "stickyproof.scenario/1", "protocol": "cooperative", "topics": {"t": 5},
                 "members": [{"id": "c1", "topics": ["t"], "assignors": ["cooperative-sticky"]}]},
    "events": [{"at": 1, "event": "join", "member": "c2", "topics": ["t"], "assignors": ["cooperative-sticky"]}],
}


def _attached(broker):
    """The module's broker as a broker the user named: each run's topics get a run prefix, so runs of
    the module that name the same topic do not meet."""
    from stickyproof.live.broker import Broker

    return Broker(broker.bootstrap)


def _java_pids() -> set[int]:
    """The live-member JVMs whose parent is this process (a survivor would be one of them)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if b"stickyproof.live.LiveMember" in cmd:
                try:
                    ppid = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                if ppid == os.getpid():
                    out.add(int(entry))
    return out


def test_two_java_members_settle_on_every_partition_exactly_once(broker, tmp_path, capsys):
    """Through the command line, attached to the module's broker (``--bootstrap``: the run's topics
    and group get a prefix, which the output takes off again), with ``--json``."""
    import json

    history = tmp_path / "two.json"
    history.write_text(json.dumps(TWO_MEMBERS))
    before = processes.running_children()
    code = cli_main(["live", str(history), "--clients", "java", "--bootstrap", broker.bootstrap, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, [m for m in doc["monitors"] if not m["ok"]]
    assert doc["settled"] and doc["ok"]
    owners = {}
    for member, tps in doc["assignment"].items():
        for t, p in tps:
            owners.setdefault((t, p), []).append(member)
    assert sorted(owners) == [("t", p) for p in range(5)]
    assert all(len(ms) == 1 for ms in owners.values()), owners
    assert {m for m, tps in doc["assignment"].items() if tps} == {"c1", "c2"}
    assert {m["monitor"] for m in doc["monitors"]} == set(LIVE_MONITORS) == {"no-double-consumption", "generations-increase",
                                                                       "stable-ownership", "cooperative-convergence",
                                                                       "no-rebalance-loop"}
    # cooperative: c1 gave up only what c2 got, so c1 reported a revocation and kept the rest
    assert any(e["member"] == "c1" and e["what"] == "revoked" and e.get("partitions") for e in doc["timeline"])
    assert any(e["member"] == "history" and e["what"] == "join" for e in doc["timeline"])
    assert processes.running_children() == before == [broker.pid]
    assert _java_pids() == set()


def _r(ev: str, name: str, at: int, *tps: int) -> Report:
    return Report(ev, name, at, at, (("generation", 1), ("partitions", [["t", p] for p in tps])))


def test_the_double_consumption_check_finds_an_overlap():
    """The grader graded: c2 is assigned t-0 before c1's revocation of it, so for 5 ns both consume it."""
    reports = [_r("started", "c1", 0), _r("started", "c2", 0), _r("assigned", "c1", 10, 0, 1),
               _r("assigned", "c2", 20, 0), _r("revoked", "c1", 25, 0)]
    spans = consumption_intervals(reports)
    assert sorted(spans[TopicPartition("t", 0)]) == [(10, 25, "c1"), (20, 25, "c2")]
    from stickyproof.live.reports import monitor_verdicts as _verdicts

    verdicts = {v.monitor: v for v in _verdicts(reports, 0, "", {"c1": frozenset({TopicPartition("t", 1)}),
                                                                   "c2": frozenset({TopicPartition("t", 0)})},
                                                {TopicPartition("t", 0), TopicPartition("t", 1)}, True)}
    assert not verdicts["no-double-consumption"].ok
    assert verdicts["stable-ownership"].ok


def _gen(name: str, at: int, generation: int) -> Report:
    return Report("assigned", name, at, at, (("generation", generation), ("partitions", [])))


def _convergence(reports, applied=(), cooperative=True):
    from stickyproof.live.reports import convergence_violations

    found = convergence_violations(reports, 0, applied, cooperative=cooperative, loop_bound=5, cooperative_bound=2)
    return {m: [v.message for v in vs] for m, vs in found.items()}


def test_a_cooperative_group_may_form_two_generations_and_a_rebalance_under_way_after_a_disturbance():
    """The simulator's bound (2) plus the two generations of a cooperative rebalance that was running
    when the disturbance (here a history event, at 100 ns) came."""
    started = [_r("started", "c1", 0), _gen("c1", 10, 1)]
    four = started + [_gen("c1", 150, 2), _gen("c1", 200, 3), _gen("c1", 300, 4), _gen("c1", 350, 5)]
    assert _convergence(four, applied=[100]) == {"cooperative-convergence": [], "no-rebalance-loop": []}
    five = four + [_gen("c1", 400, 6)]
    found = _convergence(five, applied=[100])
    assert found["cooperative-convergence"] == [
        "generation 6 is the 5th since the last disturbance at 0 ms (bound 2, and 2 of a rebalance under way)"]
    assert found["no-rebalance-loop"] == []
    assert _convergence(five, applied=[100], cooperative=False)["cooperative-convergence"] == []


def test_a_joining_member_counts_from_the_rebalance_it_joined():
    """Seen on a real broker (history-0-17 of the main job's seed, cooperative-sticky): c2's process
    polled at 12,915 ms while the rebalance of c5 and c6 (generations 4 and its follow-up 5) was under
    way; c2 joined in generation 6, its follow-up is 7. Counted from c2's poll, 7 is the 4th; counted
    as the coordinator saw the join, c2's rebalance formed two."""
    reports = [_r("started", "c5", 12429), _r("started", "c2", 12915), _gen("c5", 13350, 4), _gen("c5", 13822, 5),
               _gen("c2", 14746, 6), _gen("c2", 15247, 7)]
    assert _convergence(reports) == {"cooperative-convergence": [], "no-rebalance-loop": []}
    from stickyproof.live.reports import disturbances

    assert disturbances(reports, [13000]) == [(12429, 4), (12915, 6), (13000, -1)]


def test_each_disturbance_restarts_the_count_whoever_made_it():
    """A history event the run applied, a member's first poll, a subscription change, a stall's end."""
    reports = [_r("started", "c1", 0), _gen("c1", 10, 1), _gen("c1", 20, 2), _gen("c1", 30, 3), _gen("c1", 35, 4),
               _r("subscribed", "c1", 40), _gen("c1", 50, 5), _gen("c1", 60, 6), _gen("c1", 70, 7), _gen("c1", 72, 8),
               _r("resumed", "c1", 80), _gen("c1", 90, 9), _gen("c1", 100, 10)]
    assert _convergence(reports, applied=[75]) == {"cooperative-convergence": [], "no-rebalance-loop": []}
    without_subscribed = [r for r in reports if r.ev != "subscribed"]
    assert _convergence(without_subscribed)["cooperative-convergence"][0].startswith("generation 5 is the 5th")


def test_a_rebalance_loop_is_more_generations_than_the_bound_without_a_disturbance():
    reports = [_r("started", "c1", 0)] + [_gen("c1", 10 * g, g) for g in range(1, 9)]
    found = _convergence(reports, cooperative=False)
    assert [m.split(" is")[0] for m in found["no-rebalance-loop"]] == ["generation 7", "generation 8"]
    assert found["no-rebalance-loop"][0].endswith("(bound 5, and 1 of a rebalance under way): a rebalance loop")


def test_a_stalled_member_consumes_nothing_until_it_resumed():
    reports = [_r("started", "c1", 0), _r("assigned", "c1", 10, 0), _r("stalled", "c1", 20), _r("resumed", "c1", 50),
               _r("revoked", "c1", 60, 0)]
    assert sorted(consumption_intervals(reports)[TopicPartition("t", 0)]) == [(10, 20, "c1"), (50, 60, "c1")]


def test_events_a_live_run_cannot_apply_are_refused_naming_the_event():
    doc = {**TWO_MEMBERS, "events": [{"at": 1, "event": "failover"}]}
    sim = simulation_from_dict(doc)
    with pytest.raises(InvalidScenario, match=r"events\[0\].event"):
        check_live(sim.scenario, sim.schedule, LiveSettings())


def test_an_assignor_release_is_refused_naming_assignor():
    sim = simulation_from_dict(TWO_MEMBERS)
    with pytest.raises(InvalidScenario, match="--assignor"):
        check_live(sim.scenario, sim.schedule, LiveSettings(assignor="sticky@2.2"))
    with pytest.raises(InvalidOption, match="--assignor"):
        check_live(sim.scenario, sim.schedule, LiveSettings(group_protocol="consumer", assignor="sticky"))


def _bundled(name: str):
    from stickyproof.group.runner import resolve_simulation

    scenario, schedule, *_ = resolve_simulation(name, None, (), None)
    return scenario, schedule


def test_a_library_lacking_the_historys_assignor_runs_the_first_every_library_runs():
    """kip341-stale-rejoin's members run eager sticky, which librdkafka lacks: with java,librdkafka and
    no --assignor every member runs cooperative-sticky (the history's own sticky is not common), said
    in one line; java alone keeps sticky; a given --assignor is never replaced."""
    from stickyproof.live.choice import choose_assignor

    scenario, schedule = _bundled("kip341-stale-rejoin")
    with pytest.raises(InvalidScenario, match="--assignor NAME"):
        check_live(scenario, schedule, LiveSettings(clients=("java", "librdkafka")))
    chosen, note = choose_assignor(scenario, schedule, LiveSettings(clients=("java", "librdkafka")))
    assert chosen.assignor == "cooperative-sticky"
    assert note == "librdkafka has no sticky: every member runs cooperative-sticky; --assignor NAME to choose"
    check_live(scenario, schedule, chosen)
    same, none = choose_assignor(scenario, schedule, LiveSettings(clients=("java", "kafka-python")))
    assert same.assignor is None and none is None
    given = LiveSettings(clients=("java", "librdkafka"), assignor="sticky")
    assert choose_assignor(scenario, schedule, given) == (given, None)
    with pytest.raises(InvalidScenario, match="--assignor"):
        check_live(scenario, schedule, given)


def test_the_historys_own_assignor_comes_first_when_every_library_runs_it():
    """A member naming sticky then range on librdkafka: range is the history's own and every library
    runs it, so it is chosen before cooperative-sticky."""
    from stickyproof.live.choice import choose_assignor

    doc = {**TWO_MEMBERS, "scenario": {**TWO_MEMBERS["scenario"], "members": [
        {"id": "c1", "topics": ["t"], "assignors": ["roundrobin"]}]},
        "events": [{"at": 1, "event": "join", "member": "c2", "topics": ["t"], "assignors": ["sticky", "roundrobin"]}]}
    sim = simulation_from_dict(doc)
    chosen, note = choose_assignor(sim.scenario, sim.schedule, LiveSettings(clients=("java", "librdkafka")))
    assert chosen.assignor == "roundrobin" and note.startswith("librdkafka has no sticky: every member runs roundrobin")


def test_the_assignor_choice_is_one_line_on_stderr_before_the_broker(capsys, monkeypatch):
    """The command says the choice before it starts anything (the broker start is replaced here by a
    refusal, so no broker runs)."""
    from stickyproof.live import broker as broker_module
    from stickyproof.live.broker import BrokerUnavailable as Unavailable

    def refuse(**_):
        raise Unavailable("no broker in this test")

    monkeypatch.setattr(broker_module, "running_broker", refuse)
    assert cli_main(["live", "kip341-stale-rejoin", "--clients", "java,librdkafka"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "librdkafka has no sticky: every member runs cooperative-sticky; --assignor NAME to choose"
    assert len(err) == 2 and err[1].startswith("BrokerUnavailable:")


def test_a_consumer_comparison_starts_its_broker_computing_each_target_at_once(monkeypatch):
    """KIP-1263 (Kafka 4.3+) batches target computation and offloads it; the simulator computes each
    target at once, so `live --compare` under group.protocol=consumer starts its broker with both off,
    and every other run on Kafka's defaults."""
    from stickyproof.live import broker as broker_module
    from stickyproof.live.broker import ASSIGNMENT_AT_ONCE, BrokerUnavailable as Unavailable, broker_settings

    asked = []

    def refuse(**kwargs):
        asked.append(kwargs.get("assignment_at_once"))
        raise Unavailable("no broker in this test")

    monkeypatch.setattr(broker_module, "running_broker", refuse)
    assert cli_main(["live", "kip429-new-member", "--group-protocol", "consumer", "--compare"]) == 2
    assert cli_main(["live", "kip429-new-member", "--group-protocol", "consumer"]) == 2
    assert cli_main(["live", "kip429-new-member", "--compare"]) == 2
    assert asked == [True, False, False]
    at_once = broker_settings(1, 2, Path("/nowhere"), assignment_at_once=True)
    assert all(at_once[k] == v for k, v in ASSIGNMENT_AT_ONCE.items())
    assert not set(ASSIGNMENT_AT_ONCE) & set(broker_settings(1, 2, Path("/nowhere")))


@pytest.mark.parametrize("argv, needle", [
    (["live", "kip341-stale-rejoin", "--clients", "sarama"], "--clients"),
    (["live", "kip341-stale-rejoin", "--assignor", "sticky@2.2"], "--assignor"),
    (["live", "no-such-history"], "no-such-history"),
])
def test_bad_input_is_exit_2_and_one_line_before_any_broker_starts(argv, needle, capsys):
    before = processes.running_children()
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    assert processes.running_children() == before


def test_an_unreachable_bootstrap_is_exit_2_and_one_line(capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert cli_main(["live", "kip341-stale-rejoin", "--bootstrap", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("BrokerUnavailable:") and err.count("\n") == 1


def test_a_killed_runs_directory_is_deleted_by_the_next_run(tmp_path, monkeypatch):
    import subprocess
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = tmp_path / "stickyproof-test-orphan"
    orphan.mkdir()
    (orphan / "owner.pid").write_text(f"{dead.pid}\n")
    kept = tmp_path / "stickyproof-test-kept"
    kept.mkdir()
    (kept / "owner.pid").write_text(f"{dead.pid}\n")
    processes.keep_for_log(kept)
    fresh = processes.owned_tempdir("stickyproof-test-")
    assert not orphan.exists() and kept.exists() and fresh.exists()
    assert (fresh / "owner.pid").read_text().strip() == str(os.getpid())


def test_a_broker_build_that_fails_is_named_by_mavens_first_error_even_coloured():
    """Maven 3.8 colours its first [ERROR] line even in batch mode (seen resolving kafka_2.13 0.0.1):
    the one line names the missing artifact, not Maven's advice to re-run with -e."""
    from stickyproof.peers.builds import failure_line

    output = ("\x1b[0m\x1b[0m[ERROR] Failed to execute goal on project kafka-broker: Could not resolve dependencies: "
              "Could not find artifact org.apache.kafka:kafka_2.13:jar:0.0.1\n[ERROR] \n"
              "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n")
    assert failure_line(output).startswith("[ERROR] Failed to execute goal on project kafka-broker")


# ------------------------------------------------------------------------------------------
# Members of several libraries in one group


def _member_pids() -> set[int]:
    """Live-member processes of any library whose parent is this process."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
                ppid = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == os.getpid() and (b"stickyproof.live.LiveMember" in cmd
                                        or any(a.startswith(b"stickyproof.live.members") for a in cmd)
                                        or cmd[0].endswith(b"stickyproof-franz-go-member")):
                out.add(int(entry))
    return out


MIXED = {
    "format": "stickyproof.simulation/1",
    "name": "java-and-librdkafka",
    "scenario": {"format": "stickyproof.scenario/1", "protocol": "cooperative", "topics": {"t": 5, "u": 2},
                 "members": [{"id": "c1", "topics": ["t", "u"], "assignors": ["cooperative-sticky"]}]},
    "events": [{"at": 1, "event": "join", "member": "c2", "topics": ["t", "u"], "assignors": ["cooperative-sticky"]},
               {"at": 6, "event": "join", "member": "c3", "topics": ["t"], "assignors": ["cooperative-sticky"]}],
}


def test_java_and_librdkafka_members_share_one_group(broker, tmp_path, capsys):
    """c1 and c3 are Java consumers, c2 is librdkafka's (round-robin over --clients); the settled
    group owns every partition exactly once, each settle point is graded as a sweep row, and no
    member process is left."""
    import json

    pytest.importorskip("confluent_kafka")
    history = tmp_path / "mixed.json"
    history.write_text(json.dumps(MIXED))
    before = processes.running_children()
    code = cli_main(["live", str(history), "--clients", "java,librdkafka", "--bootstrap", broker.bootstrap, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, ([m for m in doc["monitors"] if not m["ok"]], doc["timeline"])
    assert doc["clients"] == ["java", "librdkafka"]
    assert doc["member_clients"] == {"c1": "java", "c2": "librdkafka", "c3": "java"}
    owners: dict = {}
    for member, tps in doc["assignment"].items():
        for t, p in tps:
            owners.setdefault((t, p), []).append(member)
    assert sorted(owners) == [("t", p) for p in range(5)] + [("u", 0), ("u", 1)]
    assert all(len(ms) == 1 for ms in owners.values()), owners
    # the librdkafka member reported its callbacks with its generation (read from librdkafka's group metadata)
    assert any(e["member"] == "c2" and e["what"] == "assigned" and e.get("generation", -1) >= 1 for e in doc["timeline"])
    grades = doc["grades"]
    assert grades and grades[0]["index"] == 0 and grades[-1]["assignor"] == "cooperative-sticky"
    last = grades[-1]
    assert last["row"]["contract"] == "kafka" and last["row"]["valid"] is not None
    assert {m: sorted(map(tuple, tps)) for m, tps in last["assignment"].items() if tps} == \
        {m: sorted(map(tuple, tps)) for m, tps in doc["assignment"].items() if tps}
    assert processes.running_children() == before == [broker.pid]
    assert _member_pids() == set()


def test_the_settle_points_are_graded_against_what_was_held_before():
    """Unit: two settle points; the second's scenario owns what the first settled on. Handing c2 one
    of c1's two partitions keeps the other (kept 1 of 2, the optimum); handing it both is graded as
    the imbalance it is."""
    from stickyproof.live.settled import grade_settle_points, group_assignor

    strip = lambda r: tuple(TopicPartition(t, p) for t, p in r.partitions())  # noqa: E731
    settles = [(15, {"c1": ("t",)}, {"t": 2}), (40, {"c1": ("t",), "c2": ("t",)}, {"t": 2})]
    start = [_r("started", "c1", 0), _r("assigned", "c1", 10, 0, 1), _r("started", "c2", 20)]
    handover = [_r("revoked", "c1", 30, 0), _r("assigned", "c2", 32, 0)]
    first, second = grade_settle_points(settles, start + handover, strip, 0, {"c1": ("sticky",), "c2": ("sticky",)}, "unit")
    assert first.columns["valid"] and first.scenario.members[0].owned == () and first.ok
    assert second.scenario.member("c1").owned == (TopicPartition("t", 0), TopicPartition("t", 1))
    row = second.columns
    assert row["contract"] == "kafka" and row["valid"] and row["owned"] == 2 and row["kept"] == 1 and row["optimal_kept"] == 1
    everything = [_r("revoked", "c1", 30, 0, 1), _r("assigned", "c2", 32, 0, 1)]
    _, bad = grade_settle_points(settles, start + everything, strip, 0, {"c1": ("sticky",), "c2": ("sticky",)}, "unit")
    assert not bad.columns["valid"] and bad.columns["failures"] == "imbalance" and not bad.ok
    assert "FAILS imbalance" in bad.line()
    assert group_assignor([("cooperative-sticky", "range"), ("range",)]) == "range"
    assert group_assignor([("range",), ("roundrobin",)]) is None


def test_the_last_rebalance_is_the_last_generation_that_moved_a_partition():
    """Unit, on the callbacks of a mixed java/librdkafka/kafka-python run of kip341-stale-rejoin
    (cooperative-sticky): c1 was lost, its partitions went to c2 and c3 in generation 3, c1 rejoined
    (generation 4 revokes t-4 and t-5, generation 5 hands them to c1), and a generation 6 moved
    nothing. The rebalance graded begins with generation 4's revocations."""
    from stickyproof.live.settled import last_rebalance_start

    def g(ev, name, at, gen, *tps):
        return Report(ev, name, at, at, (("generation", gen), ("partitions", [["t", p] for p in tps])))

    reports = [g("assigned", "c2", 100, 3, 0), g("lost", "c1", 200, 2, 0, 3), g("revoked", "c2", 300, 4, 4),
               g("assigned", "c2", 301, 4), g("revoked", "c3", 302, 4, 5), g("assigned", "c1", 400, 5, 4, 5),
               g("assigned", "c2", 500, 6), g("assigned", "c1", 501, 6)]
    assert last_rebalance_start(reports, 0, 1000, cooperative=True) == (300, 4)
    # eager: a member revokes everything before it rejoins, with the generation it leaves
    eager = [g("assigned", "c1", 10, 1, 0, 1), g("revoked", "c1", 50, 1, 0, 1), g("assigned", "c1", 60, 2, 0),
             g("assigned", "c2", 61, 2, 1)]
    assert last_rebalance_start(eager, 0, 1000, cooperative=False) == (50, 2)
    assert last_rebalance_start([g("assigned", "c1", 5, -1, 0)], 0, 1000, cooperative=False) is None


FRANZ = {
    "format": "stickyproof.simulation/1",
    "name": "java-and-franz-go",
    "scenario": {"format": "stickyproof.scenario/1", "protocol": "cooperative", "topics": {"t": 4, "u": 2},
                 "members": [{"id": "c1", "topics": ["t", "u"], "assignors": ["cooperative-sticky"]}]},
    "events": [{"at": 1, "event": "join", "member": "c2", "topics": ["t", "u"], "assignors": ["cooperative-sticky"]},
               {"at": 5, "event": "join", "member": "c3", "topics": ["t", "u"], "assignors": ["cooperative-sticky"]},
               {"at": 9, "event": "subscribe", "member": "c2", "topics": ["t"]}],
}


def test_java_and_franz_go_members_share_one_group(broker, tmp_path, capsys):
    """c2 is a franz-go (kgo) member between two Java consumers; it joins, is handed partitions with
    kgo's generation and member id, then drops topic u from its subscription. The settled group owns
    every partition exactly once, u only on Java members, and no member process is left."""
    import json
    import shutil

    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: the franz-go member is built with go")
    history = tmp_path / "franz.json"
    history.write_text(json.dumps(FRANZ))
    before = processes.running_children()
    code = cli_main(["live", str(history), "--clients", "java,franz-go", "--bootstrap", broker.bootstrap, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, ([m for m in doc["monitors"] if not m["ok"]], doc["timeline"])
    assert doc["member_clients"] == {"c1": "java", "c2": "franz-go", "c3": "java"}
    owners: dict = {}
    for member, tps in doc["assignment"].items():
        for t, p in tps:
            owners.setdefault((t, p), []).append(member)
    assert sorted(owners) == [("t", p) for p in range(4)] + [("u", 0), ("u", 1)]
    assert all(len(ms) == 1 for ms in owners.values()), owners
    assert not any(t == "u" for t, _ in doc["assignment"]["c2"])
    franz = [e for e in doc["timeline"] if e["member"] == "c2"]
    assert any(e["what"] == "assigned" and e.get("generation", -1) >= 1 and e.get("partitions") for e in franz), franz
    assert any(e["what"] == "subscribed" for e in franz)
    assert doc["grades"] and doc["grades"][-1]["assignor"] == "cooperative-sticky"
    assert processes.running_children() == before == [broker.pid]
    assert _member_pids() == set()


# ------------------------------------------------------------------------------------------
# The simulator against the real coordinator (issue 24 item 4; docs/live.md)


from stickyproof.live.compare import (Generation, SideTrace, check_comparable, compare, compare_run, joins_as_members,
                                      live_trace, simulate_as_live)
from stickyproof.live.run import LiveEntry, run_live

T = TopicPartition

COMPARED = {
    # eager range: a join and a leave, each a rebalance of its own
    "range-join-leave": {
        "format": "stickyproof.simulation/1", "name": "range-join-leave",
        "scenario": {"format": "stickyproof.scenario/1", "protocol": "eager", "topics": {"t": 4, "u": 3},
                     "members": [{"id": "c1", "topics": ["t", "u"], "assignors": ["range"]},
                                 {"id": "c2", "topics": ["t", "u"], "assignors": ["range"]}]},
        "events": [{"at": 1, "event": "join", "member": "c3", "topics": ["t", "u"], "assignors": ["range"]},
                   {"at": 10, "event": "leave", "member": "c1"}],
    },
    # cooperative-sticky: a join (two rebalances: revoke, then assign) and partitions added
    "cooperative-join-grow": {
        "format": "stickyproof.simulation/1", "name": "cooperative-join-grow",
        "scenario": {"format": "stickyproof.scenario/1", "protocol": "cooperative", "topics": {"t": 6},
                     "members": [{"id": "c1", "topics": ["t"], "assignors": ["cooperative-sticky"]},
                                 {"id": "c2", "topics": ["t"], "assignors": ["cooperative-sticky"]}]},
        "events": [{"at": 1, "event": "join", "member": "c3", "topics": ["t"], "assignors": ["cooperative-sticky"]},
                   {"at": 10, "event": "subscribe", "member": "c3", "topics": ["t", "v"]},
                   {"at": 11, "event": "add-partitions", "topic": "v", "count": 3}],
    },
}


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_the_simulator_reaches_the_real_coordinators_rebalances(broker, name):
    """Both sides, step by step: the same generations with the same assignments, the same settled
    assignment; a step only excluded for a stated timing reason."""
    sim_doc = simulation_from_dict(COMPARED[name])
    settings = LiveSettings()
    check_comparable(sim_doc.scenario, sim_doc.schedule, settings)
    with running_broker(bootstrap=broker.bootstrap) as attached:
        live = run_live(sim_doc.scenario, sim_doc.schedule, broker=attached, name=name, settings=settings)
    assert live.ok, [v for v in live.verdicts if not v.ok]
    result = compare_run(sim_doc.scenario, sim_doc.schedule, live, settings)
    assert result.agrees, [s for s in result.steps if s.verdict == "disagree"]
    assert all(s.reason for s in result.steps if s.verdict == "timing")
    # a join is a JVM starting (it may land in a join window of its own: timing), but the leave, or the
    # partitions added, made rebalances that both sides agree on
    assert any(s.verdict == "agree" and s.sim and s.live for s in result.steps[1:]), result.steps
    assert result.final == "agree", (result.sim_final, result.live_final)


def _trace(*steps, ends=None, settled=None) -> SideTrace:
    ends = ends or tuple(steps[i][-1].assignment if steps[i] else () for i in range(len(steps)))
    return SideTrace(tuple(steps), tuple(ends), tuple(settled or (True,) * len(steps)))


def _g(n: int, **owned) -> Generation:
    return Generation(n, tuple(sorted((m, tuple(T("t", p) for p in ps)) for m, ps in owned.items())))


def test_compare_tells_agreement_disagreement_and_overlap_apart():
    schedule = simulation_from_dict({**TWO_MEMBERS, "events": [
        {"at": 1, "event": "join", "member": "c2", "topics": ["t"]},
        {"at": 2, "event": "leave", "member": "c1"}]}).schedule
    formed = (_g(1, c1=[0, 1]),)
    joined, left = (_g(2, c1=[0], c2=[1]),), (_g(3, c2=[0, 1]),)
    same = compare("x", _trace(formed, joined, left), _trace(formed, joined, left), schedule)
    assert same.agrees and [s.verdict for s in same.steps] == ["agree"] * 3
    import json

    doc = json.loads(json.dumps(same.to_dict()))  # what live --compare --json prints under "compare"
    assert doc["agrees"] and doc["final"]["verdict"] == "agree" and doc["steps"][1]["live"][0]["generation"] == 2
    # the same members, other sizes: a different group, a disagreement
    formed3, joined3, left3 = (_g(1, c1=[0, 1, 2]),), (_g(2, c1=[0, 1], c2=[2]),), (_g(3, c2=[0, 1, 2]),)
    other = compare("x", _trace(formed3, joined3, left3), _trace(formed3, (_g(2, c1=[0], c2=[1, 2]),), left3), schedule)
    assert not other.agrees and other.steps[1].verdict == "disagree"
    # c2 given nothing where the simulator gave it t-1: it missed the generation (timing), excluded
    missed = compare("x", _trace(formed, joined, left), _trace(formed, (_g(2, c1=[0, 1], c2=[]),), left), schedule)
    assert missed.steps[1].verdict == "timing" and "c2 got no assignment" in missed.steps[1].reason
    # the same members, sizes and moves, other partitions: a tie-break in member-id order, excluded
    swapped = compare("x", _trace(formed, joined, left), _trace(formed, (_g(2, c1=[1], c2=[0]),), left), schedule)
    assert swapped.steps[1].verdict == "timing" and "tie-break" in swapped.steps[1].reason
    # the simulator had not settled when c1 left: the join's rebalances overlap the leave's, timing
    overlap = compare("x", _trace(formed, joined, left, settled=(True, False, True)),
                      _trace(formed, (), (_g(2, c2=[0, 1]),)), schedule)
    assert overlap.steps[1].verdict == "timing" and "had not settled" in overlap.steps[1].reason
    assert overlap.steps[2].verdict == "agree" and overlap.agrees


def test_a_member_owning_nothing_is_the_same_as_one_not_there_yet():
    """Seen on history-0-45: a joining member's JVM was still starting when the step ended, so the
    real group had no such member where the simulator's held it with nothing."""
    schedule = simulation_from_dict({**TWO_MEMBERS, "events": [{"at": 1, "event": "join", "member": "c2", "topics": ["t"]}]}).schedule
    formed = (_g(1, c1=[0, 1]),)
    ends = ((("c1", (T("t", 0), T("t", 1))),), (("c1", (T("t", 0), T("t", 1))), ("c2", ())))
    result = compare("x", _trace(formed, (), ends=ends), _trace(formed, (), ends=(ends[0], ends[0])), schedule)
    assert [s.verdict for s in result.steps] == ["agree", "agree"] and result.final == "agree"


def test_a_tie_break_after_the_simulator_resumed_from_the_real_group_is_timing():
    """Seen on history-0-22: the simulator resumed after a timing-dependent step from the group the
    real members had (so its own previous end differs from theirs), then the next step's generations
    had the same members, sizes and moves and other partitions. Measured from the real group it
    started from, that is a member-id tie-break, not a disagreement."""
    schedule = simulation_from_dict({**TWO_MEMBERS, "events": [
        {"at": 1, "event": "join", "member": "c2", "topics": ["t"]},
        {"at": 2, "event": "join", "member": "c3", "topics": ["t"]}]}).schedule
    formed = (_g(1, c1=[0, 1, 2, 3]),)
    sim_joined, live_joined = (_g(2, c1=[0, 1], c2=[2, 3]),), (_g(2, c1=[0, 2], c2=[1, 3]),)
    # from the real group's (c1 0,2; c2 1,3), c3 takes one of each: the simulator c1's 0 and c2's 1, the real group c1's 2 and c2's 3
    sim_third, live_third = (_g(3, c1=[2], c2=[3], c3=[0, 1]),), (_g(3, c1=[0], c2=[1], c3=[2, 3]),)
    sim, live = _trace(formed, sim_joined, sim_third), _trace(formed, live_joined, live_third)
    resumed = compare("x", sim, live, schedule, resumed=frozenset({1}))
    assert resumed.steps[1].verdict == "timing" and resumed.steps[2].verdict == "timing"
    assert "tie-break" in resumed.steps[2].reason


def test_the_live_side_is_read_off_the_timeline_cooperative_callbacks_adding_up():
    """A cooperative member's onPartitionsAssigned names only what it adds; the generation's
    assignment is what it owns after it."""
    schedule = simulation_from_dict(TWO_MEMBERS).schedule
    timeline = (LiveEntry(0, "c1", "started"), LiveEntry(5, "c1", "assigned", (T("t", 0), T("t", 1)), 1),
                LiveEntry(9, "history", "join"), LiveEntry(10, "c2", "started"),
                LiveEntry(20, "c1", "revoked", (T("t", 1),), 1), LiveEntry(21, "c1", "assigned", (), 2),
                LiveEntry(22, "c2", "assigned", (), 2), LiveEntry(30, "c2", "assigned", (T("t", 1),), 3),
                LiveEntry(30, "c1", "assigned", (), 3))

    class Result:
        pass

    result = Result()
    result.timeline, result.settled = timeline, (("c1", (T("t", 0),)), ("c2", (T("t", 1),)))
    side = live_trace(result, schedule)
    assert side.steps[0] == (_g(1, c1=[0, 1]),)
    assert side.steps[1] == (_g(2, c1=[0], c2=[]), _g(3, c1=[0], c2=[1]))
    assert side.ends[0] == (("c1", (T("t", 0), T("t", 1))),)


def test_the_simulator_side_starts_fresh_and_can_resume_from_a_formed_group():
    sim_doc = simulation_from_dict(COMPARED["range-join-leave"])
    fresh, base = simulate_as_live(sim_doc.scenario, sim_doc.schedule)
    assert fresh.steps[0][0].number == 1 and base > 0
    formed = ((("c1", (T("t", 2), T("t", 3), T("u", 2))), ("c2", (T("t", 0), T("t", 1), T("u", 0), T("u", 1)))), 3)
    resumed, _ = simulate_as_live(sim_doc.scenario, sim_doc.schedule, resumes={0: formed})
    assert fresh.resumable[0] and resumed.ends[0] == fresh.ends[0]  # the step's own end, then the real group's
    # the join after it is generation 4 (the real group's 3 + 1), with range's assignment, which no past changes
    assert [g.number for g in fresh.steps[1]] == [2] and [g.number for g in resumed.steps[1]] == [4]
    assert resumed.steps[1][0].assignment == fresh.steps[1][0].assignment



def test_a_historys_first_joins_become_members_and_an_empty_subscription_is_refused():
    doc = {**TWO_MEMBERS, "scenario": {**TWO_MEMBERS["scenario"], "members": []},
           "events": [{"at": 0, "event": "join", "member": "c1", "topics": ["t"], "version": 0},
                      {"at": 0, "event": "join", "member": "c2", "topics": ["t"]},
                      {"at": 4, "event": "crash", "member": "c2"}]}
    sim_doc = simulation_from_dict(doc)
    scenario, schedule = joins_as_members(sim_doc.scenario, sim_doc.schedule)
    assert [m.id for m in scenario.members] == ["c1", "c2"] and [e.event for e in schedule.events] == ["crash"]
    empty = simulation_from_dict({**TWO_MEMBERS, "events": [{"at": 1, "event": "subscribe", "member": "c1", "topics": []}]})
    with pytest.raises(InvalidScenario, match=r"events\[0\].topics"):
        check_comparable(empty.scenario, empty.schedule, LiveSettings())


# ------------------------------------------------------------------------------------------
# A KIP-848 group: every target the coordinator computed, graded with its input


def _target(at: int, epoch: int, topic: str = "p-t", **targets) -> Report:
    members = {name: {"member_id": f"id-{name}", "member_epoch": epoch, "target": [[topic, p] for p in ps]}
               for name, ps in targets.items()}
    return Report("target", "admin", at, at, (("epoch", epoch), ("group_epoch", epoch), ("members", members)))


def _strip(topic: str) -> str:
    return topic[2:] if topic.startswith("p-") else topic


def test_each_target_is_graded_against_the_one_before_and_an_unseen_input_is_said():
    from stickyproof.live.targets import grade_targets, partition_counts, subscriptions

    members = [Report("started", "a", 5, 5, (("topics", ["p-t"]),)), Report("started", "b", 15, 15, (("topics", ["p-t"]),))]
    admin = [Report("topics-created", "admin", 1, 1, (("topics", {"p-t": 4}),)),
             _target(10, 1, a=[0, 1, 2, 3]),
             _target(20, 2, a=[0, 1], b=[2, 3]),
             Report("partitions-added", "admin", 25, 25, (("topic", "p-t"), ("partitions", 6))),
             _target(40, 4, a=[0, 1, 4], b=[2, 3, 5])]
    assert subscriptions(members, 10, _strip) == {"a": ("t",)}
    assert partition_counts(admin, 30, _strip) == {"t": 6}
    grades = grade_targets(members, admin, _strip, 0, "uniform", "x")
    assert [g.epoch for g in grades] == [1, 2, 4]
    first, second, third = (g.columns for g in grades)
    assert first["contract"] == second["contract"] == "uniform-homogeneous"
    assert second["valid"] and second["kept"] == 2 and second["stickiness"] == 1.0
    assert dict(grades[1].scenario.members[0].owned_by_topic()) == {"t": [0, 1, 2, 3]}
    assert third["contract"] == "none (the target of epoch 3, its input, was not seen)" and third["valid"]
    assert third["stickiness"] is None and grades[2].line().endswith("was not seen), stickiness not measured")
    assert "target epoch 2 at 0 ms (uniform): valid; contract uniform-homogeneous, kept 2 of 4 owned" in grades[1].line()


def test_a_target_that_breaks_the_promise_fails_its_grade():
    """A target keeping three of one member's four while the other gets one: not within one."""
    from stickyproof.live.targets import grade_targets

    members = [Report("started", n, 1, 1, (("topics", ["t"]),)) for n in ("a", "b")]
    admin = [Report("topics-created", "admin", 0, 0, (("topics", {"t": 4}),)),
             _target(10, 1, "t", a=[0, 1, 2, 3]), _target(20, 2, "t", a=[0, 1, 2], b=[3])]
    grades = grade_targets(members, admin, lambda t: t, 0, "uniform")
    assert grades[0].ok and not grades[1].ok
    assert "target epoch 2 at 0 ms (uniform): FAILS ['imbalance']; contract uniform-homogeneous" in grades[1].line()


def test_a_consumer_protocol_group_has_its_targets_graded(broker):
    """Two Java members with group.protocol=consumer: the admin's watch saw the coordinator's targets;
    every one graded is valid and, where its input was seen, keeps uniform's promise."""
    from stickyproof.live.run import run_live

    sim = simulation_from_dict(TWO_MEMBERS)
    result = run_live(sim.scenario, sim.schedule, broker=_attached(broker), name="two-consumers",
                      settings=LiveSettings(group_protocol="consumer", assignor="uniform"))
    assert result.ok, [v for v in result.verdicts if not v.ok]
    assert result.grades and all(g.epoch is not None for g in result.grades)
    assert [g.epoch for g in result.grades] == sorted(g.epoch for g in result.grades)
    assert all(g.columns.get("valid") and g.ok for g in result.grades), [g.line() for g in result.grades]
    final = result.grades[-1]
    assert {m for m, tps in final.assignment if tps} == {"c1", "c2"}


def test_partitions_added_at_the_end_are_owned_before_the_run_calls_the_group_settled(broker):
    """Seen on history-0-36 (one static member, then partitions added as the last event): the run
    called the group settled three quiet ticks after the reports before the event, before the member's
    metadata refresh saw the new partitions, and stable-ownership failed on a group Kafka would have
    settled. The run now waits out a metadata refresh after partitions are added."""
    from stickyproof.live.run import run_live

    sim = simulation_from_dict({"format": "stickyproof.simulation/1", "name": "added-at-the-end",
                                "scenario": {"format": "stickyproof.scenario/1", "topics": {"t": 2},
                                             "members": [{"id": "c1", "topics": ["t"], "assignors": ["range"]}]},
                                "events": [{"at": 1, "event": "add-partitions", "topic": "t", "count": 2}]})
    result = run_live(sim.scenario, sim.schedule, broker=_attached(broker), name="added-at-the-end", settings=LiveSettings(grade=False))
    assert result.ok, [(v.monitor, v.first) for v in result.verdicts if not v.ok]
    assert dict(result.settled) == {"c1": tuple(TopicPartition("t", p) for p in range(4))}


# ------------------------------------------------------------------------------------------
# The KIP-848 simulator against the real coordinator


CONSUMER_LIFE = {
    "format": "stickyproof.simulation/1", "name": "consumer-life",
    "scenario": {"format": "stickyproof.scenario/1", "topics": {"t": 6, "u": 3},
                 "members": [{"id": "c1", "topics": ["t", "u"]}, {"id": "c2", "topics": ["t", "u"]}]},
    "events": [{"at": 4, "event": "join", "member": "c3", "topics": ["t", "u"]},
               {"at": 20, "event": "subscribe", "member": "c2", "topics": ["t"]},
               {"at": 36, "event": "add-partitions", "topic": "u", "count": 3}],
}


def test_the_kip848_simulator_reaches_the_real_coordinators_targets(broker):
    """group.protocol=consumer, Java members: the simulator, handed the member ids, topic ids and join
    order the real group had, computes the same targets as Kafka 4.4's coordinator, and its members
    pass through the member epochs and assignments the broker's did; a step timing decided is said
    with its reason, and none may disagree."""
    from stickyproof.live.compare_consumer import compare_consumer_run
    from stickyproof.live.epochs import render_epochs
    from stickyproof.live.run import run_live

    sim = simulation_from_dict(CONSUMER_LIFE)
    settings = LiveSettings(group_protocol="consumer", assignor="uniform", grade=True)
    result = run_live(sim.scenario, sim.schedule, broker=_attached(broker), name="consumer-life", settings=settings)
    assert result.ok and result.member_ids and dict(result.topic_ids).keys() == {"t", "u"}
    compared = compare_consumer_run(sim.scenario, sim.schedule, result, settings)
    said = [(s.label, s.verdict, s.reason) for s in compared.steps]
    # no step disagrees; under load a step may be timing-dependent (said with its reason), most agree
    timing_chose = any(s.verdict == "timing" and s.sim_end != s.live_end for s in compared.steps)
    assert compared.agrees and all(s.reason for s in compared.steps if s.verdict == "timing"), said
    if not timing_chose:  # when the members' join skew chose the first target, later steps compare timing's states
        assert sum(s.verdict == "agree" for s in compared.steps) >= 2, said
    # and step by step: every member's epochs and assignments as the admin saw them change, each one a
    # state the simulator's member passed through in the same order, or timing with its reason
    epochs = compared.epochs
    assert epochs is not None and {m.member for m in epochs.members} == {"c1", "c2", "c3"}
    assert all(s.epoch is None or s.epoch >= 2 for s in result.member_states)  # KAFKA-20268: the first target is epoch 2
    assert epochs.agrees, render_epochs(epochs)
    if not timing_chose:
        assert epochs.count("agree") >= 6, render_epochs(epochs)
    assert all(reason for m in epochs.members for v, _, _, reason in m.steps if v == "timing")


def test_a_static_member_refused_its_instance_id_does_not_hold_up_the_settle_wait(broker):
    """A static member crashes and its process restarts before the coordinator's record of it
    expires: the new process is refused UNRELEASED_INSTANCE_ID, fatal to the Java consumer, which
    never joins again (the simulator stops such a process). The run used to wait for its assignment
    until the settle time ran out and call the group unsettled (``history-0-6``, comparing member
    epochs); it settles now, with the simulator's targets and epochs."""
    import json
    from pathlib import Path

    from stickyproof.live.compare_consumer import compare_consumer_run
    from stickyproof.live.epochs import render_epochs
    from stickyproof.live.run import run_live

    doc = json.loads((Path(__file__).parent / "regressions" / "live-consumer" /
                      "static-member-rejoins-while-its-crashed-record-holds-the-instance-id.json").read_text())
    sim = simulation_from_dict(doc)
    settings = LiveSettings(group_protocol="consumer", assignor="uniform", grade=False)
    result = run_live(sim.scenario, sim.schedule, broker=_attached(broker), name=doc["name"], settings=settings)
    assert any(e.member == "c1" and e.what == "error" and "UnreleasedInstanceId" in e.detail for e in result.timeline)
    assert result.did_settle and result.ok, [(v.monitor, v.first) for v in result.verdicts if not v.ok]
    assert dict(result.settled)["c2"] == tuple(TopicPartition("t", p) for p in range(4))
    compared = compare_consumer_run(sim.scenario, sim.schedule, result, settings)
    assert compared.agrees and compared.epochs is not None, render_epochs(compared.epochs)


def test_the_consumer_comparison_refuses_a_stall_and_other_libraries():
    sim = simulation_from_dict({**CONSUMER_LIFE, "events": [{"at": 2, "event": "stall", "member": "c1", "ticks": 4}]})
    with pytest.raises(InvalidScenario, match=r"events\[0\].event"):
        check_comparable(sim.scenario, sim.schedule, LiveSettings(group_protocol="consumer"))
    with pytest.raises(InvalidOption, match="--compare"):
        check_comparable(sim.scenario, simulation_from_dict(CONSUMER_LIFE).schedule,
                         LiveSettings(group_protocol="consumer", clients=("java", "librdkafka")))
