"""T3 load windows: how far each member's load can move among the O1 optima.

models/optimal-assignment.md §7 T3: from one O1-optimal assignment ``x`` with loads ``l``, every
O1 optimum has ``l'(m)`` in ``[a(m), b(m)]`` with ``b - a <= 1``: ``a(m) = l(m) - 1`` iff ``m`` reaches, in
the exchange digraph ``D(x)`` (u -> v when u holds a partition v subscribes to), a member of load
``l(m) - 1``; ``b(m) = l(m) + 1`` iff a member of load ``l(m) + 1`` reaches ``m``. Paths between adjacent
levels L+1 -> L only visit members of load L or L+1, so each search stays inside two levels.

Inside its window ``load^2`` is linear, which turns C4 into a linear constraint for CP-SAT.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import SolverError
from .aggregate import Aggregate

__all__ = ["load_windows"]


def load_windows(agg: Aggregate, owner: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) per member for the O1-optimal assignment ``owner`` (dense owners per partition id).

    Raises SolverError if some member could both rise and fall, which T3 excludes for an O1
    optimum: the assignment handed in was not optimal.
    """
    M = agg.num_members
    loads = np.asarray(loads, dtype=np.int64)
    hubs_of_member: list[list[int]] = [[] for _ in range(M)]  # hubs m subscribes to
    for h, hub in enumerate(agg.hubs):
        for m in hub.subscribers.tolist():
            hubs_of_member[m].append(h)
    holders: list[list[int]] = [[] for _ in agg.hubs]  # members holding a partition of hub h
    held: list[list[int]] = [[] for _ in range(M)]  # hubs in which m holds a partition
    pairs = np.unique(agg.hub_of_pid * M + owner) if owner.size else np.zeros(0, dtype=np.int64)
    for h, m in zip((pairs // M).tolist(), (pairs % M).tolist()):
        holders[h].append(m)
        held[m].append(h)
    a = loads.copy()
    b = loads.copy()
    levels = set(loads.tolist())
    for L in sorted(levels):
        if L + 1 not in levels:
            continue
        allowed = (loads == L) | (loads == L + 1)
        # forward: members of load L reached from a member of load L + 1 may rise to L + 1
        seen = np.zeros(M, dtype=bool)
        hub_seen = np.zeros(len(agg.hubs), dtype=bool)
        queue = deque(np.flatnonzero(loads == L + 1).tolist())
        seen[list(queue)] = True
        while queue:
            u = queue.popleft()
            for h in held[u]:
                if hub_seen[h]:
                    continue
                hub_seen[h] = True
                for v in agg.hubs[h].subscribers.tolist():
                    if allowed[v] and not seen[v]:
                        seen[v] = True
                        queue.append(v)
        b[seen & (loads == L)] = L + 1
        # backward: members of load L + 1 that reach a member of load L may fall to L
        seen = np.zeros(M, dtype=bool)
        hub_seen = np.zeros(len(agg.hubs), dtype=bool)
        queue = deque(np.flatnonzero(loads == L).tolist())
        seen[list(queue)] = True
        while queue:
            v = queue.popleft()
            for h in hubs_of_member[v]:
                if hub_seen[h]:
                    continue
                hub_seen[h] = True
                for u in holders[h]:
                    if allowed[u] and not seen[u]:
                        seen[u] = True
                        queue.append(u)
        a[seen & (loads == L + 1)] = L
    both = np.flatnonzero((a < loads) & (b > loads))
    if both.size:
        raise SolverError(f"T3 violated: member {agg.members[int(both[0])]} could both rise and fall; the assignment is not O1-optimal")
    return a, b
