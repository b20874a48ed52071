"""A counterexample of the reconciliation model as a KIP-848 history a simulator can replay.

The document (``history_document``) is plain JSON, format ``stickyproof.kip848-history/1``:

* ``coordinator``: the variant (``builder``: ``today`` / ``2024``; ``bookkeeping``: ``fixed`` /
  ``kafka-16147``; ``kafka_19449_fix``: a partition the member itself revokes counts as released):
  which coordinator rules the run needs to go wrong.
* ``members``, ``topic``, ``partitions``: the group (members named ``c1``, ``c2``, ... in the order
  they first act in the run; partition ``t-<i>`` is the model's i-th partition).
* ``events``: the run, one event per model step, in order; ``step`` numbers them from 1:

  - ``{"event": "join", "member": m}``: ``m`` sends ConsumerGroupHeartbeat with member epoch 0 and
    nothing owned; the coordinator creates its record (epoch 0, nothing assigned). The group epoch
    bump and the new target that Kafka computes in the same request are the next ``new-target``.
  - ``{"event": "new-target", "epoch": E, "assignment": {member: [partitions]}}``: the group epoch
    becomes ``E`` and the target assignment is exactly ``assignment`` (members absent from it get
    nothing): the assignor's answer, which the model leaves free (any target that gives each
    partition to at most one member), so a replay must install it as given.
  - ``{"event": "heartbeat", "member": m}``: ``m`` sends a heartbeat at its current member epoch,
    reporting the partitions its client holds; the coordinator reconciles it; the client applies
    the response (revokes what is no longer assigned, then takes what is newly assigned) before
    the next event.
  - ``{"event": "leave", "member": m}``: ``m`` revokes everything and leaves with epoch -1.
  - a ``heartbeat`` with ``"lost_response": true`` (lossy runs only): the coordinator handled it, the
    client never got the answer.
* ``states``: after each step, what the coordinator and the clients hold (``group_epoch``,
  ``partition_epochs`` (-1: released) and per member in the group ``state``, ``epoch``,
  ``assigned``, ``pending_revocation``, ``holds``), for a step-by-step comparison.
* ``expect``: the monitor the run breaks (``no-double-ownership``), after which step, on which
  partition, by which members.

Only runs of the *atomic client* variant export as they stand (a heartbeat there includes the
client applying its answer), which is why the KAFKA-16147 statement searches that variant.
"""

from __future__ import annotations

from typing import Any

from .engine import Run
from .model import STATE_NAMES

__all__ = ["FORMAT", "history_document", "double_owners"]

FORMAT = "stickyproof.kip848-history/1"
_EVENTS = {"Join": "join", "NewTarget": "new-target", "Heartbeat": "heartbeat", "Leave": "leave"}


def _parts(row: Any) -> list[str]:
    return [f"t-{p}" for p, b in enumerate(row) if b]


def double_owners(state: dict[str, Any], names: list[str]) -> list[tuple[str, list[str]]]:
    """Partitions held by two or more clients in ``state``, with their holders (sorted)."""
    out = []
    for p in range(len(state["pe"])):
        holders = sorted(names[m] for m in range(len(names)) if state["own"][m][p])
        if len(holders) > 1:
            out.append((f"t-{p}", holders))
    return out


def history_document(run: Run, statement: str) -> dict[str, Any]:
    """The run as a replayable history (see the module docstring)."""
    if not run.variant.atomic_client:
        raise ValueError("only runs of the atomic-client variant are replayable histories")
    first = [a for s in run.steps for a in s.args]
    order = list(dict.fromkeys(first + list(range(run.sizes["M"]))))
    names = [""] * run.sizes["M"]
    for rank, m in enumerate(order):
        names[m] = f"c{rank + 1}"
    state_names = STATE_NAMES[run.variant.builder]
    events: list[dict[str, Any]] = []
    for i, step in enumerate(run.steps):
        event: dict[str, Any] = {"step": i + 1, "event": _EVENTS[step.action]}
        if step.args:
            event["member"] = names[step.args[0]]
        if step.lost:
            event["lost_response"] = True
        if step.target is not None:
            event["epoch"] = run.states[i + 1]["E"]
            event["assignment"] = {names[m]: _parts(step.target[m]) for m in order}
        events.append(event)
    states = []
    for t in run.states[1:]:
        states.append({
            "group_epoch": t["E"],
            "partition_epochs": {f"t-{p}": e for p, e in enumerate(t["pe"])},
            "members": {names[m]: {"state": state_names.get(t["cst"][m], str(t["cst"][m])), "epoch": t["ep"][m],
                                   "assigned": _parts(t["asg"][m]), "pending_revocation": _parts(t["rev"][m]),
                                   "holds": _parts(t["own"][m])}
                        for m in order if t["inm"][m]},
        })
    doubled = double_owners(run.states[-1], names)
    return {
        "format": FORMAT,
        "source": f"proofs/reconciliation ({statement})",
        "coordinator": {"builder": run.variant.builder, "bookkeeping": run.variant.bookkeeping,
                        "kafka_19449_fix": run.variant.kafka_19449_fix},
        "topic": "t",
        "partitions": run.sizes["P"],
        "members": [names[m] for m in order],
        "events": events,
        "states": states,
        "expect": {"monitor": "no-double-ownership", "after_step": run.length,
                   "partition": doubled[0][0] if doubled else None,
                   "members": doubled[0][1] if doubled else []},
    }
