"""Write the before/after fixtures of ``stickyproof explain`` (run once; the files are committed).

The tables use the printf layouts of tests/data/import/make_fixtures.py (README.md there and here
name the release each layout comes from); the groups are invented, each to show one reason a
partition moves. Run from the repository root:

    python tests/data/explain/make_fixtures.py
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("import_fixtures", HERE.parent / "import" / "make_fixtures.py")
tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tables)


def member(mid: str, client: str, host: str, assignment: dict, **extra) -> dict:
    return {"id": mid, "client": client, "host": host, "assignment": assignment, **extra}


# 2.3-2.5 layout (GROUP column): the consumer behind orders-app-3 restarted and came back under a new
# member id; its partitions moved to "the new member", which is its owner leaving the group.
RESTART_BEFORE = [
    member("consumer-orders-app-1-5e2c9b7a-3d41-4c8e-9f60-1b2a3c4d5e6f", "consumer-orders-app-1", "/10.20.0.11", {"orders": [0, 1]}),
    member("consumer-orders-app-2-0f9e8d7c-6b5a-4493-8271-605f4e3d2c1b", "consumer-orders-app-2", "/10.20.0.12", {"orders": [2, 3]}),
    member("consumer-orders-app-3-a1b2c3d4-e5f6-4789-8abc-def012345678", "consumer-orders-app-3", "/10.20.0.13", {"orders": [4, 5]}),
]
RESTART_AFTER = RESTART_BEFORE[:2] + [
    member("consumer-orders-app-3-77c1e0d2-9b8a-4f3e-a2d1-c0b9a8f7e6d5", "consumer-orders-app-3", "/10.20.0.13", {"orders": [4, 5]}),
]

# 2.6-3.7 layout (GROUP-INSTANCE-ID): a member joins; the static member orders-0 restarted and
# rejoined under a new member id (the same member to the coordinator); the group was dealt round robin.
JOIN_BEFORE = [
    member("consumer-billing-1-1a2b3c4d-0000-4000-8000-000000000001", "consumer-billing-1", "/10.21.0.11", {"invoices": [0, 1, 2]}, instance="billing-0"),
    member("consumer-billing-2-1a2b3c4d-0000-4000-8000-000000000002", "consumer-billing-2", "/10.21.0.12", {"invoices": [3, 4, 5]}),
]
JOIN_AFTER = [
    member("consumer-billing-1-9f8e7d6c-0000-4000-8000-000000000011", "consumer-billing-1", "/10.21.0.11", {"invoices": [0, 3]}, instance="billing-0"),
    member("consumer-billing-2-1a2b3c4d-0000-4000-8000-000000000002", "consumer-billing-2", "/10.21.0.12", {"invoices": [1, 4]}),
    member("consumer-billing-3-1a2b3c4d-0000-4000-8000-000000000003", "consumer-billing-3", "/10.21.0.13", {"invoices": [2, 5]}),
]

# 3.8-3.9 layout (no topic names in ASSIGNMENT): two members in two racks; partitions 1 and 2 swap
# to the member in their replica's rack.
RACK_BEFORE = [
    member("events-svc-3c1d9e0a-1111-4a2b-9c3d-000000000001", "events-svc-a", "/10.22.1.5", {"events": [0, 1]}),
    member("events-svc-3c1d9e0a-2222-4a2b-9c3d-000000000002", "events-svc-b", "/10.22.2.5", {"events": [2, 3]}),
]
RACK_AFTER = [
    member("events-svc-3c1d9e0a-1111-4a2b-9c3d-000000000001", "events-svc-a", "/10.22.1.5", {"events": [0, 2]}),
    member("events-svc-3c1d9e0a-2222-4a2b-9c3d-000000000002", "events-svc-b", "/10.22.2.5", {"events": [1, 3]}),
]

# 4.0 layout, a consumer-protocol (KIP-848) group reconciling after a member joined.
KIP848_BEFORE = [
    member("Yx3kP0QnS1uWv7aB9cD2eF", "consumer-inventory-1", "/10.30.1.5", {"inventory": [0, 1, 2]}, epoch="14", target_epoch="14"),
    member("Lm4nO5pQ6rS7tU8vW9xY0z", "consumer-inventory-2", "/10.30.1.6", {"inventory": [3, 4, 5]}, epoch="14", target_epoch="14"),
]
KIP848_AFTER = [
    member("Yx3kP0QnS1uWv7aB9cD2eF", "consumer-inventory-1", "/10.30.1.5", {"inventory": [0, 1]}, epoch="15", target_epoch="15",
           target={"inventory": [0, 1]}),
    member("Lm4nO5pQ6rS7tU8vW9xY0z", "consumer-inventory-2", "/10.30.1.6", {"inventory": [3, 4]}, epoch="15", target_epoch="15",
           target={"inventory": [3, 4]}),
    member("Ab1Cd2Ef3Gh4Ij5Kl6Mn7o", "consumer-inventory-3", "/10.30.1.7", {}, epoch="15", target_epoch="15",
           target={"inventory": [2, 5]}),
]

# 4.0 layout, a classic group: the epochs and the target print "-"; the owner held more than its share.
CLASSIC4_BEFORE = [
    member("consumer-ledger-1-aa11bb22-cc33-4d44-8e55-ff6600000001", "consumer-ledger-1", "/10.31.0.11", {"ledger": [0, 1, 2, 3]}),
    member("consumer-ledger-2-aa11bb22-cc33-4d44-8e55-ff6600000002", "consumer-ledger-2", "/10.31.0.12", {"ledger": [4, 5]}),
]
CLASSIC4_AFTER = [
    member("consumer-ledger-1-aa11bb22-cc33-4d44-8e55-ff6600000001", "consumer-ledger-1", "/10.31.0.11", {"ledger": [0, 1, 2]}),
    member("consumer-ledger-2-aa11bb22-cc33-4d44-8e55-ff6600000002", "consumer-ledger-2", "/10.31.0.12", {"ledger": [3, 4, 5]}),
]


def classic4(rows: list[dict]) -> list[dict]:
    """A 4.0 classic group's verbose row: no epochs, no target (printed "-")."""
    return [{**r, "epoch": "-", "target_epoch": "-", "target": {}} for r in rows]


def captures() -> None:
    """A stale claim: BEFORE is a scenario; AFTER a capture whose c2 claims orders-3 at an older
    generation than c3 (c2 missed a rebalance, KIP-341's stale member)."""
    from stickyproof.model import TopicPartition as TP
    from stickyproof.wire import WireAssignment, WireSubscription, encode_assignment, encode_cooperative_user_data, encode_subscription

    def sub(owned, generation):
        return encode_subscription(WireSubscription(3, ("orders",), encode_cooperative_user_data(generation),
                                                    tuple(TP("orders", p) for p in owned), generation, None)).hex()

    def asg(*ps):
        return encode_assignment(WireAssignment(3, tuple(TP("orders", p) for p in ps))).hex()

    from stickyproof.model import SCENARIO_FORMAT

    before = {"format": SCENARIO_FORMAT, "topics": {"orders": 4}, "protocol": "cooperative",
              "members": [{"id": "c1", "topics": ["orders"], "owned": {"orders": [0, 1]}, "generation": 6},
                          {"id": "c2", "topics": ["orders"], "owned": {"orders": [2, 3]}, "generation": 6}]}
    after = {"format": "stickyproof.capture/1", "group": "orders-app", "assignor": "cooperative-sticky",
             "protocol": "cooperative", "topics": {"orders": 4},
             "members": [{"id": "c1", "subscription": sub([0, 1], 7), "assignment": asg(0, 1)},
                         {"id": "c2", "subscription": sub([2, 3], 5), "assignment": asg(2)},
                         {"id": "c3", "subscription": sub([3], 7), "assignment": asg(3)}]}
    (HERE / "stale-before.json").write_text(json.dumps(before, indent=2) + "\n")
    (HERE / "stale-after.json").write_text(json.dumps(after, indent=2) + "\n")


def main() -> None:
    write = lambda name, text: (HERE / name).write_text(text)  # noqa: E731
    write("restart-2.5-before.txt", tables.members_table("2.3", "orders-app", RESTART_BEFORE))
    write("restart-2.5-after.txt", tables.members_table("2.3", "orders-app", RESTART_AFTER))
    write("join-3.7-before.txt", tables.members_table("2.6", "billing", JOIN_BEFORE))
    write("join-3.7-after.txt", tables.members_table("2.6", "billing", JOIN_AFTER))
    write("rack-3.9-before.txt", tables.members_table("3.8", "events", RACK_BEFORE))
    write("rack-3.9-after.txt", tables.members_table("3.8", "events", RACK_AFTER))
    write("kip848-4.0-before.txt", tables.members_table("4.0", "inventory", KIP848_BEFORE)
          + tables.state_table("inventory", "kafka-2:9092  (2)", "uniform", "Stable", 2, epochs=("14", "14")))
    write("kip848-4.0-after.txt", "\nWarning: Consumer group 'inventory' is rebalancing.\n"
          + tables.members_table("4.0", "inventory", KIP848_AFTER)
          + tables.state_table("inventory", "kafka-2:9092  (2)", "uniform", "Reconciling", 3, epochs=("15", "15")))
    write("classic-4.0-before.txt", tables.members_table("4.0", "ledger", classic4(CLASSIC4_BEFORE))
          + tables.state_table("ledger", "kafka-1:9092  (1)", "cooperative-sticky", "Stable", 2, epochs=("-", "-")))
    write("classic-4.0-after.txt", tables.members_table("4.0", "ledger", classic4(CLASSIC4_AFTER))
          + tables.state_table("ledger", "kafka-1:9092  (1)", "cooperative-sticky", "Stable", 2, epochs=("-", "-")))


if __name__ == "__main__":
    main()
    captures()
