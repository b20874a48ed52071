"""The group as the broker's admin described it during a live run: its type over time.

A migration run (``live.migration``) has the admin describe the group every ``WATCH_MS`` and report
each change (``described``: LiveMember's ``watchType``): the group's type (``CLASSIC`` or
``CONSUMER``; ``NONE`` while the broker knows no such group), its state, group epoch and target
assignment epoch (both -1 while the group is classic: the classic DescribeGroups answer carries no
generation), and per member (by client id, which is the history's member name) its member epoch,
whether it speaks the consumer protocol (``upgraded``) and its assignment. A change the next one
replaced within ``WATCH_MS`` is missed; the type switches of a migration are seconds apart.

    described(admin_reports, t0, prefix)   the descriptions, in time order
    group_types(seen)                      the type over time, each switch once
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..model import TopicPartition
from .java_member import Report

__all__ = ["GroupSeen", "MemberSeen", "described", "group_types"]


@dataclass(frozen=True)
class MemberSeen:
    """One member as described: ``upgraded`` is ``"true"`` for a consumer-protocol member, ``"false"``
    for a classic member of a consumer group, ``"unknown"`` where the answer does not say (a classic group)."""

    name: str
    member_epoch: int
    upgraded: str
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class GroupSeen:
    """One description: when (ms since the run started, and the shared monotonic clock), the group's
    type (``classic``, ``consumer``, ``none``), state, epochs and members."""

    at_ms: int
    mono_ns: int
    group_type: str
    state: str
    group_epoch: int
    target_epoch: int
    members: tuple[MemberSeen, ...]

    def line(self) -> str:
        epochs = "" if self.group_epoch < 0 else f" group epoch {self.group_epoch}, target epoch {self.target_epoch};"
        who = ", ".join(f"{m.name}{'' if m.member_epoch < 0 else ' e' + str(m.member_epoch)}"
                        f"{' (classic)' if m.upgraded == 'false' else ''}" for m in self.members)
        return f"{self.group_type} {self.state.lower()};{epochs} members: {who or 'none'}"

    def entry(self) -> Any:
        """The description as a timeline line (member ``group``, report ``described``)."""
        from .reports import LiveEntry

        return LiveEntry(self.at_ms, "group", "described", (), None, self.line())

    def to_dict(self) -> dict[str, Any]:
        return {"at_ms": self.at_ms, "type": self.group_type, "state": self.state, "group_epoch": self.group_epoch,
                "target_epoch": self.target_epoch,
                "members": {m.name: {"member_epoch": m.member_epoch, "upgraded": m.upgraded,
                                     "assignment": [[t, p] for t, p in m.assignment]} for m in self.members}}


def _strip(prefix: str) -> Callable[[str], str]:
    return lambda t: t[len(prefix):] if prefix and t.startswith(prefix) else t


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else -1


def described(admin_reports: Sequence[Report], t0: int, prefix: str = "") -> tuple[GroupSeen, ...]:
    """Every ``described`` report of the admin, in time order, topics without the run's prefix."""
    topic = _strip(prefix)
    out = []
    for r in admin_reports:
        if r.ev != "described":
            continue
        members = r.get("members") or {}
        seen = tuple(
            MemberSeen(str(name), _int(m.get("member_epoch")), str(m.get("upgraded", "unknown")),
                       tuple(sorted(TopicPartition(topic(str(t)), int(p)) for t, p in m.get("assignment") or ())))
            for name, m in sorted(members.items()) if isinstance(m, dict))
        out.append(GroupSeen((r.mono_ns - t0) // 1_000_000, r.mono_ns, str(r.get("type", "NONE")).lower(),
                             str(r.get("state", "")), _int(r.get("group_epoch")), _int(r.get("target_epoch")), seen))
    return tuple(sorted(out, key=lambda g: g.mono_ns))


def group_types(seen: Sequence[GroupSeen]) -> tuple[tuple[int, str], ...]:
    """(ms, type) at each switch of the group's type, ``none`` left out (the group is looked up
    before the first member creates it, and a classic group left empty is deleted)."""
    out: list[tuple[int, str]] = []
    for g in seen:
        if g.group_type != "none" and (not out or out[-1][1] != g.group_type):
            out.append((g.at_ms, g.group_type))
    return tuple(out)
