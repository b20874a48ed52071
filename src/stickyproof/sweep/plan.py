"""Which tasks a sweep still owes, and how they are cut into chunks and spread over cores.

A task is (seed, index, assignor). Tasks differ in cost by orders of magnitude (a history of 500
members and 50,000 partitions grades for minutes where a small one takes a tenth of a second), so
the plan orders them most expensive first and balances each chunk's tasks over the cores by
estimated cost (longest processing time first): the long tasks start at once and the short ones
fill the cores around them, instead of one large history starting last and running alone.

A chunk is the unit of commit (``store.py``): its rows appear together or not at all. Its name is
derived from its tasks, so a re-run that plans the same tasks writes the same names, and one that
adds assignors or histories plans new ones.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Mapping, Sequence

__all__ = ["COSTS", "CONSUMER_COSTS", "Task", "Chunk", "task_cost", "plan_chunks"]

#: Relative cost of one task by history scale (measured with benchmarks/sweep.py: a small history
#: grades in ~0.15 s per assignor, a medium one ~0.7 s, a large one 15-35 s, a production one minutes).
COSTS = {"small": 1.0, "medium": 5.0, "large": 150.0, "production": 3000.0, "adversarial": 0.1}

#: Relative cost of a consumer-group (KIP-848) history by its preset, per server-side assignor
#: (measured: a small one grades in ~0.5 s, a medium one ~2 s; scenarios/consumer_histories.py).
CONSUMER_COSTS = {"small": 3.0, "medium": 12.0}

#: Chunks per sweep when nothing else bounds them: enough commits that a killed run loses little.
TARGET_CHUNKS = 8


@dataclass(frozen=True, order=True)
class Task:
    index: int
    assignor: str
    cost: float = 1.0


@dataclass(frozen=True)
class Chunk:
    """Tasks of one seed committed together; ``slots[i]`` runs, in order, on the chunk's i-th Spark partition."""

    seed: int
    slots: tuple[tuple[Task, ...], ...]

    @property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(t for slot in self.slots for t in slot)

    @property
    def cost(self) -> float:
        return sum(t.cost for t in self.tasks)

    @property
    def name(self) -> str:
        """Deterministic and unique per set of tasks: a re-run that adds tasks gets new names."""
        keys = sorted((t.index, t.assignor) for t in self.tasks)
        digest = hashlib.sha1(repr((self.seed, keys)).encode()).hexdigest()[:12]
        return f"s{self.seed}-{keys[0][0]:09d}-{len(keys):05d}-{digest}"


def task_cost(scale: str | None) -> float:
    return COSTS.get(scale or "", 1.0)


def _balanced(tasks: Sequence[Task], slots: int) -> tuple[tuple[Task, ...], ...]:
    """Longest processing time first: each task to the slot with the least estimated work so far."""
    bins: list[list[Task]] = [[] for _ in range(max(1, min(slots, len(tasks))))]
    loads = [0.0] * len(bins)
    for task in sorted(tasks, key=lambda t: (-t.cost, t.index, t.assignor)):
        i = min(range(len(bins)), key=lambda b: (loads[b], b))
        bins[i].append(task)
        loads[i] += task.cost
    return tuple(tuple(b) for b in bins if b)


def plan_chunks(
    seed: int,
    count: int,
    assignors: Sequence[str],
    present: Mapping[int, set[str]],
    *,
    scale_of: Mapping[int, str] | None = None,
    parallelism: int = 2,
    chunk_tasks: int | None = None,
    skip: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
    costs: Mapping[tuple[int, str], float] | None = None,
) -> list[Chunk]:
    """Chunks covering every (index, assignor) of ``0..count-1`` x ``assignors`` not in ``present``.

    ``scale_of`` gives each index's scale (its cost); ``chunk_tasks`` fixes the tasks per chunk
    (otherwise a chunk holds about 1/8 of the estimated work, and never less than one task);
    ``skip`` names (index, assignor) tasks the sweep does not run; ``costs`` gives the cost of a task
    whose assignor does not run the index's history (a server-side assignor's consumer-group history).
    """
    todo = []
    for index in range(count):
        done = present.get(index, set())
        cost = task_cost(scale_of.get(index) if scale_of else None)
        todo.extend(Task(index, a, (costs or {}).get((index, a), cost)) for a in assignors
                    if a not in done and (index, a) not in skip)
    if not todo:
        return []
    todo.sort(key=lambda t: (-t.cost, t.index, t.assignor))
    chunks: list[list[Task]] = []
    if chunk_tasks is not None:
        chunks = [todo[i:i + chunk_tasks] for i in range(0, len(todo), chunk_tasks)]
    else:
        total = sum(t.cost for t in todo)
        target = max(todo[0].cost, total / TARGET_CHUNKS, 4.0 * parallelism * todo[-1].cost)
        current: list[Task] = []
        weight = 0.0
        for task in todo:
            if current and weight + task.cost > target:
                chunks.append(current)
                current, weight = [], 0.0
            current.append(task)
            weight += task.cost
        if current:
            chunks.append(current)
    return [Chunk(seed, _balanced(tasks, parallelism)) for tasks in chunks]
