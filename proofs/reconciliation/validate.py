"""Is a KIP-848 history a run of the reconciliation model? (state-based trace validation)

A history (``export.py``'s format, ``stickyproof.kip848-history/1``) lists events and, after each,
the states the coordinator and the clients were in. ``validate`` replays the events on the model of
the coordinator the history names (the atomic client: a ``heartbeat`` event includes applying the
answer; an event with ``"lost_response": true`` uses the lossy client), one model step per event,
and compares every field the history gives with the model's state after that step. The model is
deterministic once the event is fixed (the target of a ``new-target`` is the history's), so each
step is evaluated, not searched. The first step whose event is not enabled, or whose state differs,
rejects the history, naming the field.

A simulator that writes its runs in this format (its own ``join`` split into the model's join, new
target and heartbeat where Kafka does them in one request) can ask whether each run is a run of the
model: that is how the proofs and the simulator are tied together, in both directions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from ..logic import Concrete, to_z3
from ..protocol.state import State
from .model import CHOICES, STATE, STATE_NAMES, ReconciliationModel, Variant

__all__ = ["Verdict", "validate", "variant_of"]

_ACTIONS = {"join": "Join", "new-target": "NewTarget", "heartbeat": "Heartbeat", "leave": "Leave"}


@dataclass(frozen=True)
class Verdict:
    """``ok``: every step matched. Otherwise ``step`` (1-based) and ``reason`` say where and why."""

    ok: bool
    steps: int
    step: int | None = None
    reason: str = ""
    mismatches: list[str] = field(default_factory=list)


def variant_of(history: dict[str, Any]) -> Variant:
    """The model variant a history names (atomic client; lossy if any answer was lost)."""
    c = history["coordinator"]
    lossy = any(e.get("lost_response") for e in history["events"])
    return Variant(c["builder"], c["bookkeeping"], atomic_client=True, lossy=lossy,
                   kafka_19449_fix=bool(c.get("kafka_19449_fix", False)))


def _python(x: Any) -> Any:
    val = z3.simplify(to_z3(x)) if not isinstance(x, (bool, int)) else x
    if isinstance(val, (bool, int)):
        return val
    if z3.is_true(val):
        return True
    if z3.is_false(val):
        return False
    return val.as_long()


def _observe(history: dict[str, Any], after: dict[str, Any], names: list[str], parts: list[str],
             cur: dict[tuple[str, tuple], Any], state_names: dict[int, str]) -> list[str]:
    """Differences between the model's state ``cur`` and the history's state ``after``."""
    out = []
    if "group_epoch" in after and after["group_epoch"] != cur[("E", ())]:
        out.append(f"group_epoch: history {after['group_epoch']}, model {cur[('E', ())]}")
    for p, name in enumerate(parts):
        want = after.get("partition_epochs", {}).get(name)
        if want is not None and want != cur[("pe", (p,))]:
            out.append(f"partition_epochs[{name}]: history {want}, model {cur[('pe', (p,))]}")
    members = after.get("members")
    if members is None:
        return out
    for m, name in enumerate(names):
        inside = cur[("inm", (m,))]
        if (name in members) != inside:
            out.append(f"{name}: {'in' if name in members else 'not in'} the group in the history, "
                       f"{'in' if inside else 'not in'} the model")
            continue
        if not inside:
            continue
        got = members[name]
        model_view = {
            "state": state_names.get(cur[("cst", (m,))], str(cur[("cst", (m,))])),
            "epoch": cur[("ep", (m,))],
            "assigned": [parts[p] for p in range(len(parts)) if cur[("asg", (m, p))]],
            "pending_revocation": [parts[p] for p in range(len(parts)) if cur[("rev", (m, p))]],
            "holds": [parts[p] for p in range(len(parts)) if cur[("own", (m, p))]],
        }
        for key, value in model_view.items():
            if key in got and (sorted(got[key]) if isinstance(value, list) else got[key]) != value:
                out.append(f"{name}.{key}: history {got[key]}, model {value}")
    return out


def validate(history: dict[str, Any], variant: Variant | None = None) -> Verdict:
    """Replay ``history`` on the model (``variant``, default: the one it names) and compare its states."""
    variant = variant if variant is not None else variant_of(history)
    names = list(history["members"])
    parts = [f"{history.get('topic', 't')}-{p}" for p in range(history["partitions"])]
    v = Concrete({"M": len(names), "P": len(parts)})
    model = ReconciliationModel(variant)
    state_names = STATE_NAMES[variant.builder]
    cur: dict[tuple[str, tuple], Any] = {}
    for var in STATE:
        for idx in v.tuples(var.dom):
            cur[(var.name, idx)] = var.init
    states = history.get("states", [])
    for k, event in enumerate(history["events"], start=1):
        kind = event.get("event")
        if kind not in _ACTIONS:
            return Verdict(False, k - 1, k, f"unknown event {kind!r}")
        action = model.action(_ACTIONS[kind])
        args: tuple = ()
        if action.params:
            if event.get("member") not in names:
                return Verdict(False, k - 1, k, f"unknown member {event.get('member')!r}")
            args = (names.index(event["member"]),)
        chosen: dict[tuple[str, tuple], Any] = {("lost", ()): bool(event.get("lost_response", False))}
        assignment = event.get("assignment", {})
        for m, name in enumerate(names):
            for p, part in enumerate(parts):
                chosen[("a", (m, p))] = part in assignment.get(name, [])
        snapshot = dict(cur)
        s = State(lambda name, idx: _const(v, snapshot[(name, tuple(idx))]))
        c = State(lambda name, idx: _const(v, chosen[(name, tuple(idx))]))
        effect = model.effect(action, v, s, args, c if action.uses_choice else None)
        if not _python(effect.guard):
            return Verdict(False, k - 1, k, f"{kind} is not enabled here")
        if not _python(effect.assume):
            return Verdict(False, k - 1, k, f"{kind}: the target gives a partition to two members or to a non-member")
        for var in STATE:
            upd = effect.updates.get(var.name)
            if upd is not None:
                for idx in v.tuples(var.dom):
                    cur[(var.name, idx)] = _python(upd(*idx))
        if k - 1 < len(states):
            diff = _observe(history, states[k - 1], names, parts, cur, state_names)
            if diff:
                return Verdict(False, k - 1, k, "the state differs", diff)
    return Verdict(True, len(history["events"]))


def _const(v: Concrete, x: Any) -> Any:
    return z3.BoolVal(x) if isinstance(x, bool) else z3.IntVal(x)


assert {c.name for c in CHOICES} == {"a", "lost"}  # the choices ``validate`` pins
