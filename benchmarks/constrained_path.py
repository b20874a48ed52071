"""Time the sticky constrained path on Kafka's large uniform groups (docs/rules.md §6, issue targets).

Groups (all members subscribe to every topic, no racks, subscriptions built directly):
  uniform-2000x1M    2,000 members, 500 topics x 2,000 partitions: fresh, then rejoin (members 1..1999
                     own their fresh result in generation 1, member 0 owns nothing: Kafka's
                     testLargeAssignmentAndGroupWithUniformSubscription)
  kip-9987-2100      2,100 members x 2,100 partitions (one topic), fresh: the KIP's "2.5 minutes" report
  wide-10000x500k    10,000 members, 250 topics x 2,000 partitions, fresh

Prints, per group and round, the best of ``--repeat`` wall times of ``assign_sticky`` (input
building included) and of the constrained step alone (``constrained_assign`` on a prepared
input). Run under ``nice``: ``nice .venv/bin/python benchmarks/constrained_path.py``.
"""

from __future__ import annotations

import argparse
import gc
import time

from stickyproof.assignors.base import GroupSubscription, Subscription
from stickyproof.assignors.constrained import constrained_assign
from stickyproof.assignors.ownership import resolve_prior_owners
from stickyproof.assignors.releases import STICKY
from stickyproof.assignors.sticky import assign_sticky, build_sticky_input
from stickyproof.model import Topic


def _name(prefix: str, i: int, total: int) -> str:
    return f"{prefix}{i:0{len(str(total))}d}"


def uniform_group(members: int, topics: int, partitions: int, owned=None) -> GroupSubscription:
    names = tuple(_name("t", i, topics) for i in range(topics))
    metadata = {t: Topic(t, partitions) for t in names}
    subs = []
    for i in range(members):
        m = _name("c", i, members)
        claims = owned.get(m, ()) if owned else ()
        subs.append(Subscription(m, names, owned=claims, generation=1 if claims else None))
    return GroupSubscription(metadata, tuple(subs), "eager", direct=True)


def best(fn, repeat: int) -> tuple[float, float, object]:
    """Best wall and best CPU time of ``repeat`` calls; the previous result is freed and collected first.

    Unlike ``timeit`` the collector stays on while timing, so its cost is part of the figure. CPU
    time (``process_time``) is printed too: on a shared machine it is the steadier figure.
    """
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        out = None
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus), out


def run(label: str, group: GroupSubscription, repeat: int) -> object:
    full, full_cpu, result = best(lambda: assign_sticky(group), repeat)
    inp = build_sticky_input(group, STICKY)
    prior = resolve_prior_owners(inp, STICKY)
    step, step_cpu, _ = best(lambda: constrained_assign(inp, prior, STICKY), repeat)
    resolve, resolve_cpu, _ = best(lambda: resolve_prior_owners(inp, STICKY), repeat)
    print(
        f"{label:24s} assign_sticky {full:6.3f} s (cpu {full_cpu:6.3f})   resolve_prior_owners {resolve:6.3f} s "
        f"(cpu {resolve_cpu:6.3f})   constrained_assign {step:6.3f} s (cpu {step_cpu:6.3f})"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    fresh = run("uniform-2000x1M fresh", uniform_group(2000, 500, 2000), args.repeat)
    owned = {m: tps for m, tps in fresh.assignment.items() if m != _name("c", 0, 2000)}
    run("uniform-2000x1M rejoin", uniform_group(2000, 500, 2000, owned), args.repeat)
    run("kip-9987-2100 fresh", uniform_group(2100, 1, 2100), args.repeat)
    run("wide-10000x500k fresh", uniform_group(10000, 250, 2000), args.repeat)


if __name__ == "__main__":
    main()
