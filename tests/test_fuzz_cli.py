"""Every command, fed mutated documents, ends in a verdict or one line: never a traceback (issue 14).

Seeded mutations of valid inputs (a scenario, an assignment, an events schedule, a simulation
document, each wire message's JSON, hex bytes, a capture and a describe output, space knobs and
limit flags) go through ``stickyproof.cli.main`` in this process. The contract checked on each run:

- exit 0 or 1 with output that reads (JSON where the command prints JSON), or
- exit 2 with exactly one line on stderr (argparse's usage line or ``TypeName: message``),
- and nothing else: any exception escaping ``main`` is a bug, reported with the seed, the command
  and the input that raised it.

The runs are bounded (a count per command, sized to a few seconds each; ``--max-partitions`` keeps
a mutated partition count from growing a group past what a test should build). The seed is fixed
for CI; ``STICKYPROOF_FUZZ_SEED=N`` (and ``STICKYPROOF_FUZZ_SCALE=K`` for K times the runs) explores
elsewhere.
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable

import pytest

from stickyproof.cli import main
from stickyproof.model import scenario_to_dict
from stickyproof.scenarios import named
from stickyproof.wire.cli_json import encode_json_to_hex

SEED = int(os.environ.get("STICKYPROOF_FUZZ_SEED", "20251124"))
SCALE = float(os.environ.get("STICKYPROOF_FUZZ_SCALE", "1"))
DATA = Path(__file__).parent / "data" / "import"
SMALL = ["--max-partitions", "2000", "--max-members", "200"]


# ------------------------------------------------------------------------------------------
# JSON text with what json.dumps cannot write: repeated keys, bare tokens (NaN, 5,000 digits)


class Raw:
    """Text written as is (an invalid token, a huge integer, an escaped lone surrogate)."""

    def __init__(self, text: str):
        self.text = text


class Pairs:
    """An object written from a list of pairs, so a key may repeat."""

    def __init__(self, pairs: list[tuple[str, Any]]):
        self.pairs = pairs


def to_text(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_text(v)}" for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(to_text(v) for v in value) + "]"
    return json.dumps(value)


STRANGE_VALUES: list[Callable[[random.Random], Any]] = [
    lambda r: Raw("9" * r.choice([20, 4301, 5000])),
    lambda r: Raw("-" + "9" * 4400),
    lambda r: Raw(r.choice(["NaN", "Infinity", "-Infinity", "1e999", "-0.0", "1.5"])),
    lambda r: Raw(r.choice(['"\\udc80"', '"x\\ud800"', '"\\ud83d\\ude00"', '"\\u0000"'])),
    lambda r: r.choice([-(2**31) - 1, -(2**31), -1, 0, 1, 2, 7, 2**31 - 1, 2**31, 10**12]),
    lambda r: r.choice(["", " ", "t", "c1", "ghost", "x" * 300, "é", "consumer-1"]),
    lambda r: r.choice([None, True, False, [], {}, [[]], {"": 1}]),
    lambda r: Raw("[" * 50 + "]" * 50),
]


def strange(r: random.Random) -> Any:
    return r.choice(STRANGE_VALUES)(r)


def mutate_tree(r: random.Random, value: Any, depth: int = 0) -> Any:
    """One mutation somewhere in ``value``: a node replaced, a key dropped, added or repeated,
    a list item dropped or duplicated."""
    if isinstance(value, dict) and value and (depth > 3 or r.random() < 0.6):
        keys = list(value)
        move = r.randrange(5)
        if move == 0:  # drop a key
            k = r.choice(keys)
            return {a: b for a, b in value.items() if a != k}
        if move == 1:  # an unknown key
            return {**value, r.choice(["extra", "", "zz", "id"]): strange(r)}
        if move == 2:  # a repeated key
            k = r.choice(keys)
            return Pairs(list(value.items()) + [(k, strange(r) if r.random() < 0.5 else value[k])])
        if move == 3:  # a value replaced
            k = r.choice(keys)
            return {**value, k: strange(r)}
        k = r.choice(keys)  # descend
        return {**value, k: mutate_tree(r, value[k], depth + 1)}
    if isinstance(value, list) and value and (depth > 3 or r.random() < 0.6):
        i = r.randrange(len(value))
        move = r.randrange(4)
        if move == 0:
            return value[:i] + value[i + 1:]
        if move == 1:
            return value + [value[i]] * r.choice([1, 2])
        if move == 2:
            return value[:i] + [strange(r)] + value[i + 1:]
        return value[:i] + [mutate_tree(r, value[i], depth + 1)] + value[i + 1:]
    if isinstance(value, (dict, list)) and value:
        return mutate_tree(r, value, depth + 1)
    return strange(r)


def mutate_bytes(r: random.Random, data: bytes) -> bytes:
    """A byte-level mutation: truncation, a flipped or inserted byte, invalid UTF-8."""
    if not data:
        return bytes([r.randrange(256)])
    move = r.randrange(4)
    i = r.randrange(len(data))
    if move == 0:
        return data[:i]
    if move == 1:
        return data[:i] + bytes([data[i] ^ (1 << r.randrange(8))]) + data[i + 1:]
    if move == 2:
        return data[:i] + r.choice([b"\xff", b"\xed\xb2\x80", b"\x00", b"\xc3", b"\r\n"]) + data[i:]
    return data + data[i:]


def document(r: random.Random, base: Any) -> bytes:
    tree = base
    for _ in range(r.choice([1, 1, 2, 3])):
        tree = mutate_tree(r, tree) if not isinstance(tree, (Raw, Pairs)) else tree
    data = to_text(tree).encode("utf-8", "surrogatepass")
    if r.random() < 0.15:
        data = mutate_bytes(r, data)
    return data


# ------------------------------------------------------------------------------------------
# Running one command


def run(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="surrogateescape")
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def judge(argv: list[str], stdin: bytes, json_out: bool) -> None:
    where = f"seed {SEED}: stickyproof {' '.join(argv)} < {stdin[:400]!r}"
    try:
        code, out, err = run(argv, stdin)
    except BaseException as exc:  # noqa: BLE001 - the point: nothing may escape main
        raise AssertionError(f"{where}\nraised {type(exc).__name__}: {exc}") from exc
    assert code in (0, 1, 2), f"{where}\nexit {code}; stderr: {err[-500:]}"
    assert "Traceback" not in err, f"{where}\n{err[-2000:]}"
    if code == 2:
        lines = err.strip("\n").split("\n")
        assert len(lines) == 1 and lines[0].strip(), f"{where}\nexit 2 with stderr {err!r}"
    else:
        assert out.strip(), f"{where}\nexit {code} with no output; stderr {err[-500:]!r}"
        if json_out:
            json.loads(out)


def scale(n: int) -> int:
    return max(1, int(n * SCALE))


# ------------------------------------------------------------------------------------------
# The inputs and the commands


def base_scenario() -> dict[str, Any]:
    return scenario_to_dict(named.get("kip341-stale-rejoin"))


def cooperative_scenario() -> dict[str, Any]:
    return scenario_to_dict(named.get("kip429-new-member"))


BASE_ASSIGNMENT = {"format": "stickyproof.assignment/1",
                   "assignment": {"c1": {"t": [3, 5]}, "c2": {"t": [0, 2]}, "c3": {"t": [1, 4]}}, "revoking": {}}
BASE_EVENTS = {"format": "stickyproof.events/1", "config": {"max_ticks": 200},
               "events": [{"at": 5, "event": "stall", "member": "c1", "ticks": 10},
                          {"at": 40, "event": "join", "member": "c4", "topics": ["t"]},
                          {"at": 60, "event": "rolling-restart", "gap": 10}]}
WIRE = {
    "subscription": {"version": 3, "topics": ["foo", "bar"], "user_data": None, "owned": {"foo": [0]},
                     "generation": 1, "rack": "r1"},
    "assignment": {"version": 3, "assigned": {"foo": [0, 1], "bar": [2]}, "user_data": "00000005"},
    "sticky-user-data": {"version": 1, "previous_assignment": {"t": [0, 1]}, "generation": 5},
    "cooperative-user-data": {"generation": 5},
}
HEX = {kind: encode_json_to_hex(kind, doc) for kind, doc in WIRE.items()}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("fuzz")
    paths = {"scenario": d / "scenario.json", "assignment": d / "assignment.json", "events": d / "events.json"}
    paths["scenario"].write_text(json.dumps(base_scenario()))
    paths["assignment"].write_text(json.dumps(BASE_ASSIGNMENT))
    paths["events"].write_text(json.dumps(BASE_EVENTS))
    return {k: str(v) for k, v in paths.items()} | {"dir": str(d)}


def scenario_commands() -> list[tuple[str, list[str], bool, int]]:
    """(name, argv with '-' for the mutated scenario, prints JSON, runs)."""
    return [
        ("validate", ["validate", "-"], False, 150),
        ("validate-json", ["validate", "--json", "-"], True, 60),
        ("assign", ["assign", "-", "--assignor", "range", *SMALL], True, 60),
        ("assign-sticky", ["assign", "-", "--assignor", "cooperative-sticky", *SMALL], True, 40),
        ("solve-flow", ["solve", "-", "--engine", "flow", *SMALL], True, 40),
        ("solve-cpsat", ["solve", "-", "--cpsat-seconds", "5", *SMALL], True, 25),
        ("grade", ["grade", "-", "--assignor", "sticky", "--z3-query-seconds", "10", *SMALL], True, 25),
        ("check", ["check", "-", "ASSIGNMENT", *SMALL], True, 30),
        ("simulate", ["simulate", "-", "--brief", *SMALL], False, 12),
    ]


@pytest.mark.parametrize("name, argv, json_out, runs", scenario_commands(), ids=[c[0] for c in scenario_commands()])
def test_mutated_scenarios(name, argv, json_out, runs, files):
    r = random.Random(f"{SEED}:{name}")
    argv = [files["assignment"] if a == "ASSIGNMENT" else a for a in argv]
    for _ in range(scale(runs)):
        base = cooperative_scenario() if r.random() < 0.3 else base_scenario()
        judge(argv, document(r, base), json_out)


def test_mutated_assignments(files):
    r = random.Random(f"{SEED}:assignment")
    for _ in range(scale(60)):
        judge(["check", files["scenario"], "-", *SMALL], document(r, BASE_ASSIGNMENT), True)
    for _ in range(scale(15)):
        judge(["grade", files["scenario"], "--assignment", "-", *SMALL], document(r, BASE_ASSIGNMENT), True)


def test_mutated_events(files, tmp_path):
    r = random.Random(f"{SEED}:events")
    path = tmp_path / "events.json"
    for _ in range(scale(12)):
        path.write_bytes(document(r, BASE_EVENTS))
        judge(["simulate", files["scenario"], "--events", str(path), "--brief", *SMALL], b"", False)
    simulation = {"format": "stickyproof.simulation/1", "name": "fuzz", "scenario": base_scenario(),
                  "events": BASE_EVENTS["events"], "config": {"max_ticks": 200}}
    for _ in range(scale(8)):
        judge(["simulate", "-", "--json", *SMALL], document(r, simulation), True)


@pytest.mark.parametrize("kind", sorted(WIRE))
def test_mutated_wire_messages(kind):
    r = random.Random(f"{SEED}:wire:{kind}")
    for _ in range(scale(80)):
        version = r.choice([[], [], ["--version", str(r.choice([-1, 0, 1, 2, 3, 4, 2**40]))]])
        judge(["encode", kind, *version, "-"], document(r, WIRE[kind]), False)
    hex_text = HEX[kind]
    for _ in range(scale(80)):
        data = mutate_bytes(r, bytes.fromhex(hex_text)).hex()
        if r.random() < 0.2:
            data = data[: r.randrange(len(data) + 1)] + r.choice(["g", "0x", " ", ":", "z"]) + data
        judge(["decode", kind, data or "00"], b"", True)


def test_mutated_imports():
    r = random.Random(f"{SEED}:import")
    for fixture in ("capture-cooperative.json", "capture-sticky.json"):
        base = json.loads((DATA / fixture).read_text())
        for _ in range(scale(25)):
            judge(["import", "capture", "-", "--json"], document(r, base), True)
    for fixture in ("members-3.7-static.txt", "members-4.0-kip848.txt", "members-2.2.txt"):
        text = (DATA / fixture).read_bytes()
        for _ in range(scale(25)):
            data = text
            for _ in range(r.choice([1, 2, 4])):
                data = mutate_bytes(r, data)
            judge(["import", "describe", "-", "--json", "--partitions", f"orders={r.choice([1, 6, 2**31 - 1])}"], data, True)


KNOBS = ["members", "topics", "partitions", "stale", "generation", "versions", "subscriptions", "colour", ""]
VALUES = ["2", "0", "-1", "1..3", "3..1", "1..", "..", "2001", "1000001", "9" * 40, "3,0", "eager,eager", "x", "", "1e3"]


def test_mutated_space_knobs_and_flags():
    r = random.Random(f"{SEED}:knobs")
    for _ in range(scale(120)):
        knobs = [f"{r.choice(KNOBS)}={r.choice(VALUES)}" for _ in range(r.choice([1, 2]))]
        judge(["scenarios", "sample", "--seed", str(r.choice([0, -1, 7])), "--index", str(r.choice([0, 3, -2])),
               "--space", *knobs], b"", True)
    flags = ["--assignor-seconds", "--z3-query-seconds", "--max-partitions", "--max-members"]
    values = ["nan", "inf", "-inf", "0", "-1", "1e999", "abc", "none", "9" * 5000, "0.5", "3"]
    for _ in range(scale(40)):
        judge(["grade", "kip341-stale-rejoin", "--assignor", "range", r.choice(flags), r.choice(values)], b"", True)
        judge(["solve", "kip341-stale-rejoin", "--engine", "flow", "--cpsat-seconds", r.choice(values)], b"", True)


def test_mutated_hunt_spaces():
    r = random.Random(f"{SEED}:hunt")
    for _ in range(scale(4)):
        knobs = [f"{r.choice(KNOBS[:6])}={r.choice(VALUES)}" for _ in range(r.choice([1, 2]))]
        judge(["hunt", "--assignor", "range", "--examples", "2", "--shrink-evaluations", "5", "--json",
               "--space", *knobs, "protocols=eager"], b"", True)
