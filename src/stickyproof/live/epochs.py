"""Each member's epochs and assignments, step by step: Kafka's coordinator against the KIP-848 simulator's.

The broker's side is what the run's admin saw: ``watch-group`` (``peers/kafka-member``) describes the
group every ``WATCH_MS`` and reports every change of a member's (member epoch, assigned partitions),
as the coordinator keeps them (``MemberDescription.memberEpoch`` and ``assignment``: the assigned
partitions, those pending revocation not among them), and every member id the group no longer has.
The simulator's side is its coordinator's record of the same member at the end of every step it
recorded (``MemberState.coordinator_epoch`` and ``assigned``), and the member's id leaving the
group's member ids. A member is its name and its incarnation: its first process is incarnation 1, the
process a restart started (a new member id, KIP-1082) incarnation 2, and so on.

Per member, the broker's states must be states the simulator's member passes through, in the same
order (``match_steps``): a broker state that is one is *agree*; a simulator state between two agreed
ones that the broker never showed is *missed* (the admin looks every 100 ms; a member that heartbeats
twice between two looks passes a state unseen). A broker state the simulator's member never had is
*timing* when a reason says so (``explain_step``): the targets themselves differed by timing
(``live.compare_consumer``'s checkpoints: a restarted process's new member id the simulator cannot
know, members joining together), the real member heartbeat while a target epoch was the newest and
the simulator's member reconciled past it (or the other way round: join skew; the real members'
heartbeats are not one heartbeat apart as the simulator's are; a member that joins within Kafka 4.4's
``group.consumer.assignment.interval.ms``, 1 s, of the last target takes that target's epoch with
nothing first, as the simulator's members, joining a heartbeat apart, never do), or at the same member epoch the
member held a part of what the simulator's member held (its partitions pending revocation included)
or was headed for (which revocations had landed, and whether its heartbeat came before a newer
target, when the admin looked). Otherwise it *disagrees*; so does a member whose last states differ,
unless the targets did by timing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..model import TopicPartition

__all__ = ["MemberStep", "MemberComparison", "EpochsComparison", "member_states_seen", "sim_member_steps",
           "match_steps", "explain_step", "render_epochs"]

State = tuple[int | None, tuple[TopicPartition, ...]]
"""(member epoch, assigned partitions); epoch None: the coordinator no longer has the member."""


@dataclass(frozen=True)
class MemberStep:
    """One state of one member as its coordinator keeps it, with when it was seen (a live run: ms
    since the run started; the simulator: its tick) and the group's target epoch then."""

    member: str
    incarnation: int
    epoch: int | None
    assigned: tuple[TopicPartition, ...]
    at: int
    target_epoch: int | None = None
    target: tuple[TopicPartition, ...] = ()
    revoking: tuple[TopicPartition, ...] = ()
    """The simulator's side: what the member still held pending revocation (the broker's reports carry
    only the assigned partitions)."""

    @property
    def state(self) -> State:
        return (self.epoch, self.assigned)

    def to_dict(self) -> dict[str, Any]:
        return {"member": self.member, "incarnation": self.incarnation, "epoch": self.epoch,
                "assigned": [[t, p] for t, p in self.assigned], "at": self.at, "target_epoch": self.target_epoch,
                "target": [[t, p] for t, p in self.target], "revoking": [[t, p] for t, p in self.revoking]}


def member_states_seen(admin_reports: Sequence[Any], strip: Callable[[str], str], t0: int) -> tuple[MemberStep, ...]:
    """The broker's member states, from the admin's ``member-state`` and ``member-gone`` reports, in
    the order seen; a name's member ids number its incarnations in the order they appeared."""
    ids: dict[str, tuple[str, int]] = {}
    count: dict[str, int] = {}
    out = []
    for r in admin_reports:
        if r.ev == "member-state":
            name, member_id = str(r.get("member")), str(r.get("member_id"))
            if member_id not in ids:
                count[name] = count.get(name, 0) + 1
                ids[member_id] = (name, count[name])
            name, k = ids[member_id]
            tps = tuple(sorted(TopicPartition(strip(str(t)), int(p)) for t, p in r.get("assigned") or ()))
            target = tuple(sorted(TopicPartition(strip(str(t)), int(p)) for t, p in r.get("target") or ()))
            out.append(MemberStep(name, k, int(r.get("member_epoch")), tps, (r.mono_ns - t0) // 1_000_000,
                                  int(r.get("target_epoch")), target))
        elif r.ev == "member-gone" and str(r.get("member_id")) in ids:
            name, k = ids[str(r.get("member_id"))]
            out.append(MemberStep(name, k, None, (), (r.mono_ns - t0) // 1_000_000))
    return tuple(out)


def sim_member_steps(result: Any, names: Mapping[str, str]) -> tuple[MemberStep, ...]:
    """The simulator's member states (``ConsumerResult``; ``names``: its member names, the real
    members' first member ids, to the names the run gave them), one per change, in step order. A
    process's record leaving the coordinator's member ids is its ``None`` state, also after the
    process was restarted under a new id."""
    out: list[MemberStep] = []
    incarnations: dict[str, list[str]] = {}
    last: dict[str, State] = {}
    present: set[str] = set()
    for step in result.steps:
        before, present = present, set(step.group.members)
        for m in step.members:
            ids = incarnations.setdefault(m.name, [])
            if m.member_id not in ids and m.coordinator_epoch is not None:
                ids.append(m.member_id)
        for m in step.members:
            name = names.get(m.name, m.name)
            for k, member_id in enumerate(incarnations.get(m.name, ()), start=1):
                if member_id == m.member_id and m.coordinator_epoch is not None:
                    state: State = (m.coordinator_epoch, tuple(sorted(m.assigned)))
                    target_epoch, target = step.group.assignment_epoch, tuple(sorted(m.target))
                    revoking = tuple(sorted(m.pending_revocation))
                elif member_id not in present and member_id in last:
                    state, target_epoch, target, revoking = (None, ()), None, (), ()
                    held = last[member_id]
                    if m.member_id not in before and m.coordinator_epoch is not None and held[0] not in (None, -2):
                        # the process's next one took the record's place as it joined: only a static member's leave
                        # (epoch -2, its assignment kept) lets it, a state the trace, showing each process
                        # its own record, never shows the old one in
                        out.append(MemberStep(name, k, -2, held[1], step.tick))
                else:
                    continue
                if last.get(member_id) != state and (state[0] is not None or last.get(member_id, (None,))[0] is not None):
                    out.append(MemberStep(name, k, state[0], state[1], step.tick, target_epoch, target, revoking))
                    last[member_id] = state
    return tuple(out)


@dataclass(frozen=True)
class MemberComparison:
    """One member incarnation's steps compared: each entry (verdict, simulator state or None, broker
    state or None, reason); verdicts agree, missed (a simulator state the broker never showed),
    timing, disagree."""

    member: str
    incarnation: int
    steps: tuple[tuple[str, State | None, State | None, str], ...]

    def count(self, verdict: str) -> int:
        return sum(1 for v, *_ in self.steps if v == verdict)

    @property
    def verdict(self) -> str:
        return "disagree" if self.count("disagree") else "timing" if self.count("timing") else "agree"


def match_steps(member: str, incarnation: int, sim: Sequence[State], live: Sequence[State],
                explain: Callable[[int, State], str | None] = lambda i, s: None,
                final_timing: str | None = None) -> MemberComparison:
    """The broker's states ``live`` matched in order against the simulator's ``sim`` (module
    docstring): each broker state the earliest simulator state from the last match on that equals it;
    ``explain(i, state)`` gives the reason a broker state the simulator never had is timing, or None
    (it disagrees). The last states must be equal, unless ``final_timing`` says why not."""
    steps: list[tuple[str, State | None, State | None, str]] = []
    # replaced: the verdict of the broker states since the last match the simulator never had (the
    # simulator's states up to the next match are what they replaced, and take their verdict)
    j, replaced = 0, None
    other = "the simulator's state where the broker showed another"
    for i, b in enumerate(live):
        k = next((x for x in range(j, len(sim)) if sim[x] == b), None)
        if k is None:
            reason = explain(i, b)
            steps.append(("timing" if reason else "disagree", None, b, reason or "the simulator's member never had this state"))
            replaced = "disagree" if replaced == "disagree" or not reason else "timing"
            continue
        for x in range(j, k):
            steps.append((replaced, sim[x], None, other) if replaced else
                         ("missed", sim[x], None, "the admin's look did not fall on it"))
        steps.append(("agree", b, b, ""))
        j, replaced = k + 1, None
    ended_apart = bool(sim) and bool(live) and sim[-1] != live[-1]
    for x in range(j, len(sim)):
        if replaced:
            steps.append((replaced, sim[x], None, other))
        elif ended_apart and x == len(sim) - 1:
            steps.append(("timing", sim[x], live[-1], final_timing) if final_timing else
                         ("disagree", sim[x], live[-1], "the broker's member never reached the simulator's last state"))
        else:
            steps.append(("missed", sim[x], None, "the admin's look did not fall on it"))
    if not live and sim and not final_timing:
        steps.append(("disagree", sim[-1], None, "the admin never saw this member"))
    return MemberComparison(member, incarnation, tuple(steps))


def explain_step(state: State, sim: Sequence[MemberStep], sim_target_epochs: Sequence[int]) -> str | None:
    """Why a broker state the simulator's member never had is timing, or None (module docstring):
    ``sim`` is the simulator's member's steps, ``sim_target_epochs`` the group epochs its coordinator
    passed through (a target epoch is a group epoch)."""
    epoch, assigned = state
    if epoch is None:
        return None
    epochs = [s.epoch for s in sim if s.epoch is not None]
    if epoch not in epochs:
        if not assigned and epoch in sim_target_epochs and epochs and epoch < min(epochs):
            return (f"it joined while epoch {epoch} was the newest target and took it with nothing first: Kafka 4.4 "
                    "computes a target at most once per group.consumer.assignment.interval.ms (1 s), and the real members "
                    "joined closer together than the simulator's, a heartbeat apart (join skew)")
        if epoch in sim_target_epochs and epochs and min(epochs) < epoch < max(epochs):
            return (f"the real member heartbeat while target epoch {epoch} was the newest; the simulator's member "
                    "reconciled past it (when a heartbeat lands against a new target is timing)")
        return None
    # at that epoch the simulator's member held its assigned partitions and those pending revocation (a
    # member heartbeating before a newer target holds all of its epoch's target; one heartbeating after
    # it is already revoking some), and was headed for its target
    held = {tp for s in sim if s.epoch == epoch for tp in (*s.assigned, *s.revoking, *s.target)}
    if set(assigned) <= held:
        return (f"at member epoch {epoch} it held a part of what the simulator's member held (pending revocation "
                "included) or was headed for: which revocations had landed, and whether its heartbeat came before a "
                "newer target, when the admin looked is timing")
    return None


@dataclass(frozen=True)
class EpochsComparison:
    """Every member incarnation's steps compared, and the history's verdict."""

    members: tuple[MemberComparison, ...]
    notes: tuple[str, ...] = ()

    def count(self, verdict: str) -> int:
        return sum(m.count(verdict) for m in self.members)

    @property
    def verdict(self) -> str:
        return "disagree" if self.count("disagree") else "timing" if self.count("timing") else "agree"

    @property
    def agrees(self) -> bool:
        return self.verdict != "disagree"

    def to_dict(self) -> dict[str, Any]:
        def st(s: State | None):
            return None if s is None else {"epoch": s[0], "assigned": [[t, p] for t, p in s[1]]}

        return {"verdict": self.verdict, "notes": list(self.notes),
                "counts": {v: self.count(v) for v in ("agree", "missed", "timing", "disagree")},
                "members": [{"member": m.member, "incarnation": m.incarnation, "verdict": m.verdict,
                             "steps": [{"verdict": v, "simulator": st(s), "live": st(b), "reason": r}
                                       for v, s, b, r in m.steps]} for m in self.members]}


def render_epochs(result: EpochsComparison) -> str:
    from ..group.trace import format_partitions

    def st(s: State | None) -> str:
        if s is None:
            return "(not seen)"
        return "gone" if s[0] is None else f"epoch {s[0]:>2} {format_partitions(s[1])}"

    lines = ["member epochs and assignments, step by step (the broker's as the admin saw them, the simulator's):"]
    for m in result.members:
        name = m.member if m.incarnation == 1 else f"{m.member} (process {m.incarnation})"
        lines.append(f"  {name}: {m.count('agree')} agree, {m.count('missed')} missed, {m.count('timing')} timing, "
                     f"{m.count('disagree')} disagree")
        for v, s, b, reason in m.steps:
            if v == "agree":
                lines.append(f"    [agree]    {st(b)}")
            elif v == "missed":
                lines.append(f"    [missed]   simulator {st(s)}")
            else:
                lines.append(f"    [{v}] simulator {st(s)}; live {st(b)}: {reason}")
    for note in result.notes:
        lines.append(f"  note: {note}")
    counts = ", ".join(f"{result.count(v)} {v}" for v in ("agree", "missed", "timing", "disagree"))
    lines.append(f"{'EPOCHS AGREE' if result.agrees else 'EPOCHS DISAGREE'}: steps {counts}")
    return "\n".join(lines) + "\n"
