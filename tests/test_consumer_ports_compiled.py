"""The compiled KIP-848 ports (setup.py, assignors/consumer/compiled.py): the same answers as the
pure-Python ports they are compiled from, raw output and order included; really in use after a
normal install; and never used once their ``.py`` has changed since the build.

The compiled modules come from ``pip install -e .`` (scripts/setup.sh) or ``python setup.py
build_ext --inplace`` (setuptools >= 77). Where none is built, the tests that need them skip, except
under CI, where a missing build is a failure: CI installs the project as a user does, and the
speed-up must be there.
"""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stickyproof.assignors.consumer import (
    CONSUMER_GROUP_ASSIGNORS,
    PURE_CONSUMER_GROUP_ASSIGNORS,
    assign_consumer_group,
    group_spec,
)
from stickyproof.assignors.consumer import compiled as compiled_ports
from stickyproof.model import scenario_from_dict

from .consumer_groups import random_group

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "stickyproof"
CASES = sorted((Path(__file__).parent / "kafka_cases_consumer").glob("*.json"))


def _require_compiled() -> None:
    status = compiled_ports.ports_status()
    if all(s == "compiled" for s in status.values()):
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and the KIP-848 ports are not all compiled after the install: {status}")
    pytest.skip(f"the KIP-848 ports are not compiled here ({status}); CI builds them and never skips")


def _raw(answer: dict) -> list:
    """An answer as it came, order included: members, then each member's (topic, partitions) pairs,
    the partitions' container type included (a tuple kept from the spec is not a list)."""
    return [(member, [(topic, type(parts).__name__, list(parts)) for topic, parts in pairs])
            for member, pairs in answer.items()]


def _outcome(fn, spec):
    try:
        return "ok", _raw(fn(spec))
    except Exception as exc:  # noqa: BLE001 - both sides must fail alike
        return "error", type(exc).__name__, str(exc)


def _differences(specs) -> list[tuple[int, str]]:
    return [(i, name) for i, spec in enumerate(specs) for name in CONSUMER_GROUP_ASSIGNORS
            if _outcome(CONSUMER_GROUP_ASSIGNORS[name], spec) != _outcome(PURE_CONSUMER_GROUP_ASSIGNORS[name], spec)]


def test_setup_compiles_exactly_the_ports_the_loader_knows():
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    ports = next(ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "PORTS")
    assert tuple(ports) == compiled_ports.PORTS


def test_the_compiled_ports_are_in_use_after_the_install():
    _require_compiled()
    for name in compiled_ports.PORTS:
        module = compiled_ports.port_module(name)
        assert module.__name__.endswith(f".{compiled_ports.COMPILED_PREFIX}{name}")
        assert not module.__file__.endswith(".py"), module.__file__
        assert module.SOURCE_SHA256 == compiled_ports.source_sha256(name)
    assert CONSUMER_GROUP_ASSIGNORS["consumer-range"] is compiled_ports.port_module("range").assign_consumer_range
    assert compiled_ports.ports_summary() == "compiled"
    out = subprocess.run([sys.executable, "-m", "stickyproof", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("(KIP-848 ports: compiled)"), out.stdout


def test_compiled_and_pure_ports_answer_alike_on_random_groups():
    _require_compiled()
    rng = random.Random(848)
    specs = [group_spec(random_group(rng)) for _ in range(3000)]
    assert _differences(specs) == []


def test_compiled_and_pure_ports_answer_alike_on_kafkas_cases():
    _require_compiled()
    specs = []
    for path in CASES:
        doc = json.loads(path.read_text())
        fixture = doc["expect"].get("kafka_fixture", {})
        scenario = scenario_from_dict(doc)
        specs.append(group_spec(scenario))
        specs.append(group_spec(scenario, linked_targets=fixture.get("linked_targets", False),
                                subscription_type_override=fixture.get("subscription_type")))
    assert len(specs) == 2 * len(CASES) > 0
    assert _differences(specs) == []


def _benchmark_group(members: int, topics: int, partitions: int, heterogeneous: bool, owned: bool) -> dict:
    """A JMH-like group (benchmarks/server_side.py): ``members`` in up to 5 buckets of topics, each
    member's current target, if ``owned``, the pure port's own answer for the group."""
    names = [f"topic{i}" for i in range(topics)]
    buckets = min(5, members) if heterogeneous else 1
    per = -(-topics // buckets)
    doc = {"format": "stickyproof.scenario/1", "group_protocol": "consumer",
           "topics": {n: partitions for n in names},
           "members": [{"id": f"member{i}", "topics": names[(i % buckets) * per:(i % buckets + 1) * per]}
                       for i in range(members)]}
    if owned:
        answer = assign_consumer_group(scenario_from_dict(doc), "uniform")
        for m in doc["members"][:-1]:  # the last member joins with nothing
            m["owned"] = {}
            for tp in answer.assignment[m["id"]]:
                m["owned"].setdefault(tp.topic, []).append(tp.partition)
    return doc


@pytest.mark.parametrize("heterogeneous", [False, True], ids=["homogeneous", "heterogeneous"])
@pytest.mark.parametrize("owned", [False, True], ids=["full", "incremental"])
def test_compiled_and_pure_ports_answer_alike_on_benchmark_shapes(heterogeneous, owned):
    """Groups larger than the random ones, where the ports' run-at-once paths (whole rounds of a
    topic's partitions, a kept target answered as the spec's pairs) carry most of the work."""
    _require_compiled()
    specs = [group_spec(scenario_from_dict(_benchmark_group(m, t, p, heterogeneous, owned)))
             for m, t, p in ((7, 5, 3), (30, 10, 7), (100, 10, 100), (101, 20, 50), (300, 12, 61))]
    assert _differences(specs) == []


def test_a_port_edited_after_the_build_runs_pure_and_says_so_once(tmp_path):
    """A copy of the package with the builds, one port's ``.py`` then edited: that port runs as pure
    Python with one warning line; the others stay compiled."""
    _require_compiled()
    copy = tmp_path / "stickyproof"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    edited = copy / "assignors" / "consumer" / "range.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited after the build\n", encoding="utf-8")
    script = ("from stickyproof.assignors.consumer import CONSUMER_GROUP_ASSIGNORS as A, ports_status\n"
              "from stickyproof.assignors.consumer.compiled import port_module\n"
              "import json, stickyproof\n"
              "print(json.dumps([stickyproof.__file__, ports_status(), A['consumer-range'].__module__,"
              " port_module('uniform_homogeneous').__name__]))\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env, cwd=tmp_path)
    where, status, range_module, homogeneous = json.loads(out.stdout)
    assert Path(where).resolve().is_relative_to(copy.resolve())
    assert status["range"] == "stale: range.py or ports.pxd changed after the build"
    assert {name: s for name, s in status.items() if name != "range"} == dict.fromkeys(
        ("uniform_homogeneous", "uniform_heterogeneous", "uniform_heterogeneous_3_9"), "compiled")
    assert range_module == "stickyproof.assignors.consumer.range"
    assert homogeneous == "stickyproof.assignors.consumer._compiled_uniform_homogeneous"
    warnings = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and "range.py or ports.pxd edited after the build" in warnings[0], out.stderr


def test_an_edited_ports_pxd_makes_every_port_stale(tmp_path):
    """``ports.pxd`` is compiled into every port: a copy of the package whose ``ports.pxd`` changed
    after the build runs every port as pure Python."""
    _require_compiled()
    copy = tmp_path / "stickyproof"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    edited = copy / "assignors" / "consumer" / "ports.pxd"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited after the build\n", encoding="utf-8")
    script = "from stickyproof.assignors.consumer import ports_status\nimport json\nprint(json.dumps(ports_status()))\n"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env, cwd=tmp_path)
    assert json.loads(out.stdout) == {name: f"stale: {name}.py or ports.pxd changed after the build"
                                      for name in compiled_ports.PORTS}


def test_compiled_consumer_range_hands_out_pairs_the_collector_never_visits():
    """ports.pxd reaches the compiled range port: its (topic id, range) pairs come untracked
    (``PyObject_GC_UnTrack``), which the pure port's pairs are not until a collection, and every
    member's list, untracked while filled, is tracked again; the answers are equal all the same
    (the tests above)."""
    _require_compiled()
    import gc

    for heterogeneous in (False, True):
        spec = group_spec(scenario_from_dict(_benchmark_group(30, 10, 7, heterogeneous, False)))
        answer = CONSUMER_GROUP_ASSIGNORS["consumer-range"](spec)
        assert all(gc.is_tracked(pairs) for pairs in answer.values())  # untracked while filled, tracked again
        compiled_pairs = [pair for pairs in answer.values() for pair in pairs]
        gc.disable()
        try:
            pure_pairs = [pair for pairs in PURE_CONSUMER_GROUP_ASSIGNORS["consumer-range"](spec).values() for pair in pairs]
            assert pure_pairs and all(gc.is_tracked(pair) for pair in pure_pairs)
        finally:
            gc.enable()
        assert compiled_pairs == pure_pairs
        assert not any(gc.is_tracked(pair) for pair in compiled_pairs)


def test_a_stale_hash_is_refused_by_the_loader(monkeypatch, caplog):
    """The loader's rule alone (no build needed): a recorded hash other than the ``.py``'s own means
    the pure module, and one warning naming the port."""
    real = compiled_ports.source_sha256
    monkeypatch.setattr(compiled_ports, "source_sha256", lambda name: "0" * 64 if name == "range" else real(name))
    for fn in (compiled_ports._compiled, compiled_ports.ports_status, compiled_ports.port_module):
        fn.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="stickyproof"):
            status = compiled_ports.ports_status()
            compiled_ports.ports_status()
        assert compiled_ports.port_module("range").__name__ == "stickyproof.assignors.consumer.range"
        if status["range"] != "not built":
            assert status["range"].startswith("stale")
            assert [r.getMessage() for r in caplog.records if "range.py" in r.getMessage()] != []
            assert len(caplog.records) == 1
    finally:
        monkeypatch.undo()
        for fn in (compiled_ports._compiled, compiled_ports.ports_status, compiled_ports.port_module):
            fn.cache_clear()


def test_the_pure_ports_run_without_cython_installed():
    """Cython is a build dependency only: with it missing at run time the ports import its inert
    stand-in (``_cython_shim``) and answer as they do here."""
    script = ("import sys; sys.modules['cython'] = None\n"
              "import random, json\n"
              "sys.path.insert(0, sys.argv[1])\n"
              "from tests.consumer_groups import random_group\n"
              "from stickyproof.assignors.consumer import PURE_CONSUMER_GROUP_ASSIGNORS as P, group_spec\n"
              "from stickyproof.assignors.consumer import range as r, uniform_heterogeneous as h\n"
              "assert r.cython.__name__.endswith('_cython_shim') and h.cython.compiled is False\n"
              "rng = random.Random(5); specs = [group_spec(random_group(rng)) for _ in range(200)]\n"
              "print(json.dumps([[[m, [[str(t), list(p)] for t, p in pairs]] for m, pairs in P[n](s).items()]"
              " for s in specs for n in ('uniform', 'consumer-range') if s.members]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(ROOT)], capture_output=True, text=True, check=True)
    rng = random.Random(5)
    specs = [group_spec(random_group(rng)) for _ in range(200)]
    want = [[[m, [[str(t), list(p)] for t, p in pairs]] for m, pairs in PURE_CONSUMER_GROUP_ASSIGNORS[n](s).items()]
            for s in specs for n in ("uniform", "consumer-range") if s.members]
    assert json.loads(out.stdout) == want
