"""The monitors checked after every tick (models/protocol.md §7).

Each check is a function of what the simulator exposes at the end of a tick; ``Monitors`` keeps the
little history two of them need (generations seen, generations since the last disturbance) and the
verdicts. A violation is reported once per distinct witness while it lasts, and counted every tick.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from itertools import chain, repeat
from typing import Iterable, Mapping

from ..model import TopicPartition
from .trace import MonitorVerdict, MonitorViolation

__all__ = ["MONITORS", "Monitors", "TickState"]

MONITORS: dict[str, str] = {
    "no-double-consumption": "no partition is consumed by two members in the same tick",
    "generations-increase": "within a coordinator epoch, committed generations increase and no member is assigned in an older generation than before",
    "stable-ownership": "once the group is settled, every partition of a subscribed topic is owned",
    "cooperative-convergence": "an all-cooperative group forms at most two generations after the last disturbance",
    "no-rebalance-loop": "at most loop_bound generations form after the last disturbance",
}


@dataclass(frozen=True)
class TickState:
    """What the monitors read at the end of a tick."""

    tick: int
    consuming: Mapping[str, frozenset[TopicPartition]]  # running member name -> partitions it fetches
    owned: Mapping[str, frozenset[TopicPartition]]  # running member name -> partitions it believes it owns
    member_generations: Mapping[str, tuple[int, int]]  # process key -> (epoch, generation of its last assignment)
    epoch: int
    committed: tuple[tuple[int, int, int], ...]  # new (tick, epoch, generation) commits this tick
    # new generations: (tick, generation, all cooperative, nth since the disturbance, subscriptions all equal)
    formed: tuple[tuple[int, int, bool, int, bool], ...]
    settled: bool
    subscribed_partitions: frozenset[TopicPartition]


@dataclass
class Monitors:
    loop_bound: int
    cooperative_bound: int
    verdicts: dict[str, list[MonitorViolation]] = field(default_factory=lambda: {m: [] for m in MONITORS})
    counts: dict[str, int] = field(default_factory=lambda: {m: 0 for m in MONITORS})
    _active: dict[str, set] = field(default_factory=lambda: {m: set() for m in MONITORS})
    _last_commit: dict[int, int] = field(default_factory=dict)
    _member_generation: dict[str, tuple[int, int]] = field(default_factory=dict)
    loop_detected: bool = False

    def charge_persisting(self, ticks: int) -> None:
        """Count every violation still standing once more per tick for ``ticks`` ticks in which
        nothing but heartbeats happened (the stepper skips such ticks instead of checking each)."""
        for monitor, keys in self._active.items():
            self.counts[monitor] += ticks * len(keys)

    def _report(self, monitor: str, tick: int, key, message: str, witness: dict, now: set) -> MonitorViolation | None:
        now.add(key)
        self.counts[monitor] += 1
        if key in self._active[monitor]:
            return None
        v = MonitorViolation(monitor, tick, message, tuple(sorted(witness.items())))
        self.verdicts[monitor].append(v)
        return v

    def check(self, s: TickState) -> list[MonitorViolation]:
        out: list[MonitorViolation] = []
        seen: dict[str, set] = {m: set() for m in MONITORS}

        # no-double-consumption
        consumers: dict[TopicPartition, list[str]] = {}
        for name in sorted(s.consuming):
            for tp in s.consuming[name]:
                consumers.setdefault(tp, []).append(name)
        for tp in sorted(consumers):
            names = consumers[tp]
            if len(names) > 1:
                v = self._report(
                    "no-double-consumption", s.tick, (tp, tuple(names)),
                    f"{tp} consumed by {' and '.join(names)}", {"partition": str(tp), "members": names}, seen["no-double-consumption"],
                )
                out += [v] if v else []

        # generations-increase
        for tick, epoch, generation in s.committed:
            last = self._last_commit.get(epoch)
            if last is not None and generation <= last:
                v = self._report(
                    "generations-increase", s.tick, ("commit", epoch, generation),
                    f"generation {generation} committed after generation {last}", {"epoch": epoch, "previous": last, "generation": generation},
                    seen["generations-increase"],
                )
                out += [v] if v else []
            self._last_commit[epoch] = generation if last is None else max(last, generation)
        for key in sorted(s.member_generations):
            epoch, generation = s.member_generations[key]
            if generation < 0:
                continue
            previous = self._member_generation.get(key)
            if previous is not None and previous[0] == epoch and generation < previous[1]:
                v = self._report(
                    "generations-increase", s.tick, ("member", key, generation),
                    f"{key} was assigned partitions in generation {generation} after generation {previous[1]}",
                    {"member": key, "previous": previous[1], "generation": generation}, seen["generations-increase"],
                )
                out += [v] if v else []
            if previous is None or previous[0] != epoch or generation >= previous[1]:
                self._member_generation[key] = (epoch, generation)

        # stable-ownership
        if s.settled:
            owned = set().union(*s.owned.values()) if s.owned else set()
            orphans = sorted(s.subscribed_partitions - owned)
            if orphans:
                v = self._report(
                    "stable-ownership", s.tick, tuple(orphans),
                    f"the group is settled but nobody owns {', '.join(map(str, orphans[:8]))}{' ...' if len(orphans) > 8 else ''}",
                    {"unowned": [str(tp) for tp in orphans]}, seen["stable-ownership"],
                )
                out += [v] if v else []

        # cooperative-convergence and no-rebalance-loop, at each generation formed by a rebalance
        # that started after the last disturbance
        for tick, generation, cooperative, count, equal in s.formed:
            if cooperative and count > self.cooperative_bound:
                v = self._report(
                    "cooperative-convergence", s.tick, ("gen", generation),
                    f"generation {generation} is the {_ordinal(count)} since the last disturbance (bound {self.cooperative_bound})",
                    {"generation": generation, "since_disturbance": count, "equal_subscriptions": equal},
                    seen["cooperative-convergence"],
                )
                out += [v] if v else []
            if count > self.loop_bound:
                self.loop_detected = True
                v = self._report(
                    "no-rebalance-loop", s.tick, ("gen", generation),
                    f"generation {generation} is the {_ordinal(count)} without a disturbance (bound {self.loop_bound}): a rebalance loop",
                    {"generation": generation, "since_disturbance": count}, seen["no-rebalance-loop"],
                )
                out += [v] if v else []
        self._active = seen
        return out

    def results(self) -> tuple[MonitorVerdict, ...]:
        return tuple(
            MonitorVerdict(m, rule, not self.verdicts[m], self.verdicts[m][0] if self.verdicts[m] else None, self.counts[m])
            for m, rule in MONITORS.items()
        )


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


_NEW_TP = partial(tuple.__new__, TopicPartition)  # TopicPartition(t, p) without a Python frame per partition


def partitions_of(topics: Iterable[str], counts: Mapping[str, int]) -> frozenset[TopicPartition]:
    return frozenset(chain.from_iterable(map(_NEW_TP, zip(repeat(t), range(counts[t]))) for t in topics if t in counts))
