"""User assignors that realise the proofs' broken contracts in the simulator (tests/test_proofs.py).

``rotate_claimed`` is the cooperative assignor of ``protocol.cooperative.one-round``: it moves a
claimed partition to another member in the same round instead of withholding it until its owner
has revoked it (the two-round rule of KIP-429, docs/rules.md R38). No bundled assignor breaks that
rule, so the export of that counterexample needs this one (with ``--without cooperative-validation``,
which would otherwise stop the leader). It answers what ``proofs/protocol/export.rotate_claimed_choice``
fixes the model's choice to.
"""

from __future__ import annotations

from typing import Any

BOTH = ("cooperative", "eager")


def _process(member_id: str) -> str:
    """The simulator's process name of a member id (``c1#2`` is process ``c1``'s second id)."""
    return member_id.split("#", 1)[0]


def rotate_claimed(doc: dict[str, Any]) -> dict[str, Any]:
    """Each partition of each topic: a claimed one goes to the member after its first claimant (in
    process-name order, wrapping round), an unclaimed one to the first member subscribing to it."""
    members = sorted(doc["members"], key=lambda m: (_process(m["id"]), m["id"]))
    plan: dict[str, dict[str, list[int]]] = {m["id"]: {} for m in members}
    for topic, count in sorted(doc["topics"].items()):
        subscribers = [m for m in members if topic in m.get("topics", ())]
        if not subscribers:
            continue
        for p in range(count):
            claimants = [i for i, m in enumerate(subscribers) if p in m.get("owned", {}).get(topic, ())]
            target = subscribers[(claimants[0] + 1) % len(subscribers)] if claimants else subscribers[0]
            plan[target["id"]].setdefault(topic, []).append(p)
    return plan


rotate_claimed.supported_protocols = BOTH  # type: ignore[attr-defined]
