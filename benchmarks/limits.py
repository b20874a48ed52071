"""Peak memory and time of every command at the largest input its size limits accept (docs/limits.md).

    python benchmarks/limits.py                  every command at the default limits
    python benchmarks/limits.py --quick          the same shape scaled down (500 members x 100,000 partitions)
    python benchmarks/limits.py --only validate,assign

The group is Kafka's large test shape widened to the limits: ``--max-members`` members
(default 5,000) on ``T`` topics of 2,000 partitions making ``--max-partitions`` in total (default
1,000,000: 500 topics), every member subscribed to every topic, cooperative, generation 1, each
member owning the partitions dealt to it round robin (what the sticky assignors' first round gives
this shape). Each command runs as its own process (``python -m stickyproof.cli ...``), and its peak
resident memory (``VmHWM``) is read from ``/proc`` while it runs; so is wall time. Then the refusals:
a scenario of 10^9 partitions, counted by ``validate`` and refused by ``assign`` before anything
is built; and the sampler at its largest knobs (``scenarios sample``).

Figures are wall-clock on whatever machine runs it; the project's are in docs/limits.md with the
machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))


def write_group(path: Path, members: int, partitions: int, per_topic: int = 2000) -> None:
    topics = max(1, partitions // per_topic)
    names = [f"t{j:03d}" for j in range(topics)]
    ids = [f"c{i:04d}" for i in range(members)]
    owned: list[dict[str, list[int]]] = [{} for _ in ids]
    k = 0
    for t in names:
        for p in range(per_topic):
            owned[k % members].setdefault(t, []).append(p)
            k += 1
    doc = {"format": "stickyproof.scenario/1", "name": f"limits-{members}x{topics * per_topic}", "protocol": "cooperative",
           "topics": {t: per_topic for t in names},
           "members": [{"id": m, "topics": names, "owned": owned[i], "generation": 1, "assignors": ["cooperative-sticky"]}
                       for i, m in enumerate(ids)]}
    path.write_text(json.dumps(doc))


def measure(argv: list[str], timeout: float) -> dict:
    """Run ``stickyproof ARGV`` in a child; its exit code, wall seconds, peak RSS, last stderr line."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "stickyproof.cli", *argv], stdout=out, stderr=err, env=env)
        peak = 0
        while proc.poll() is None:
            try:
                with open(f"/proc/{proc.pid}/status") as status:
                    for line in status:
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]))
            except OSError:
                pass
            if time.perf_counter() - started > timeout:
                proc.kill()
                proc.wait()
                break
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()
    return {"code": proc.returncode, "seconds": seconds, "peak_mb": peak / 1024, "stderr": tail[-1] if tail else "",
            "timed_out": seconds > timeout}


def report(name: str, r: dict) -> None:
    state = "did not finish" if r["timed_out"] else f"exit {r['code']}"
    print(f"  {name:<60} {r['seconds']:8.1f} s  {r['peak_mb']:8.0f} MB  {state}"
          + (f"  ({r['stderr'][:90]})" if r["code"] not in (0, 1) and r["stderr"] else ""), flush=True)


def main(argv: list[str] | None = None) -> int:
    from stickyproof.cli._common import DEFAULT_MAX_MEMBERS, DEFAULT_MAX_PARTITIONS
    from stickyproof.scenarios.space import KNOB_MAX, MAX_SPACE_PARTITIONS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 members x 100,000 partitions")
    parser.add_argument("--only", default="", help="comma-separated commands (validate,assign,check,solve-flow,solve-cpsat,grade,simulate,refusals,sampler)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per command before it is stopped (default 3600)")
    args = parser.parse_args(argv)
    members, partitions = (500, 100_000) if args.quick else (DEFAULT_MAX_MEMBERS, DEFAULT_MAX_PARTITIONS)
    only = set(filter(None, args.only.split(",")))

    def wanted(name: str) -> bool:
        return not only or name in only

    with tempfile.TemporaryDirectory(prefix="stickyproof-limits-") as tmp:
        group = Path(tmp) / "group.json"
        started = time.perf_counter()
        write_group(group, members, partitions)
        print(f"group: {members:,} members x {partitions:,} partitions (cooperative, every member on every topic, "
              f"dealt ownership), {group.stat().st_size / 1e6:.1f} MB of JSON, written in {time.perf_counter() - started:.1f} s")
        print(f"limits: --max-members {DEFAULT_MAX_MEMBERS:,}, --max-partitions {DEFAULT_MAX_PARTITIONS:,}; "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
        print(f"  {'command':<60} {'wall':>10}  {'peak RSS':>11}")
        assignment = Path(tmp) / "assignment.json"
        runs = [
            ("validate", ["validate", str(group)]),
            ("assign", ["assign", str(group), "--assignor", "cooperative-sticky", "--out", str(assignment)]),
            ("check", ["check", str(group), str(assignment)]),
            ("solve-flow", ["solve", str(group), "--engine", "flow"]),
            ("solve-cpsat", ["solve", str(group), "--engine", "cpsat"]),
            ("grade", ["grade", str(group), "--assignor", "cooperative-sticky"]),
            ("simulate", ["simulate", str(group), "--json"]),
        ]
        for name, command in runs:
            if not wanted(name):
                continue
            if name == "check" and not assignment.exists():
                print(f"  {name:<60} skipped: no assignment (run assign too)")
                continue
            report(" ".join(command[:1] + command[2:]).replace(str(assignment), "ASSIGNMENT"), measure(command, args.timeout))

        if wanted("refusals"):
            huge = Path(tmp) / "huge.json"
            huge.write_text(json.dumps({"format": "stickyproof.scenario/1", "topics": {"t": 10**9},
                                        "members": [{"id": "c0", "topics": ["t"]}]}))
            print("a topic of 1,000,000,000 partitions:")
            report("validate (counted, never built)", measure(["validate", str(huge)], args.timeout))
            report("assign (refused by --max-partitions)", measure(["assign", str(huge), "--assignor", "range"], args.timeout))

        if wanted("sampler"):
            print(f"the sampler at its largest knobs (members <= {KNOB_MAX['members']:,}, topics x partitions <= "
                  f"{MAX_SPACE_PARTITIONS:,}):")
            for knobs in (
                [f"members={KNOB_MAX['members']}", "topics=1", f"partitions={MAX_SPACE_PARTITIONS}", "ownership=balanced"],
                ["members=1", "topics=1", f"partitions={MAX_SPACE_PARTITIONS}", "ownership=balanced"],
                [f"members={KNOB_MAX['members']}", f"topics={KNOB_MAX['topics']}", "partitions=10",
                 "subscriptions=heterogeneous", "racks=both", "ids=kafka"],
                [f"members={KNOB_MAX['members']}", "topics=10", "partitions=1000"]
                + [f"{k}={KNOB_MAX[k]}" for k in ("stale", "double_claims", "unknown_generation", "past_count_claims",
                                                  "deleted_topic_claims")],
            ):
                report("sample " + " ".join(knobs), measure(["scenarios", "sample", "--seed", "0", "--index", "0",
                                                             "--space", *knobs], args.timeout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
