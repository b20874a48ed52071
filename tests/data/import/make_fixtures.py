"""Write the fixtures of this folder (run once; the files are committed).

Each table is laid out with the printf formats that README.md quotes for its release: every
column but the last left-justified (``%-Ns``) to the widest of its label and values, one space
between columns. The groups are invented; nothing here runs Kafka.

    python tests/data/import/make_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def pad(value: str, width: int) -> str:
    return value.ljust(width)


def classic_cell(assignment: dict[str, list[int]]) -> str:
    """Up to 3.7: topic + (partitions sorted as numbers), the groups sorted as strings, joined ', '."""
    if not assignment:
        return "-"
    return ", ".join(sorted(t + "(" + ",".join(str(p) for p in sorted(ps)) + ")" for t, ps in assignment.items()))


def topicless_cell(assignment: dict[str, list[int]]) -> str:
    """3.8 and 3.9: (partitions sorted as strings), no topic, the groups sorted as strings."""
    if not assignment:
        return "-"
    return ", ".join(sorted("(" + ",".join(sorted(str(p) for p in ps)) + ")" for ps in assignment.values()))


def kip1099_cell(assignment: dict[str, list[int]]) -> str:
    """4.0: topic:partitions (sorted as numbers), the groups sorted as strings, joined ';'."""
    if not assignment:
        return "-"
    return ";".join(sorted(t + ":" + ",".join(str(p) for p in sorted(ps)) for t, ps in assignment.items()))


def members_table(layout: str, group: str, rows: list[dict], *, verbose: bool = True) -> str:
    """``--members [--verbose]``. layout: '1.1' (no GROUP), '2.3' (GROUP), '2.6' (GROUP-INSTANCE-ID when some
    member has one), '3.8' (as 2.6, topicless cells), '4.0' (KIP-1099 epochs and target)."""
    with_group = layout != "1.1"
    with_instance = layout in ("2.6", "3.8", "4.0") and any(r.get("instance") for r in rows)
    cols = (["GROUP"] if with_group else []) + ["CONSUMER-ID"] + (["GROUP-INSTANCE-ID"] if with_instance else []) \
        + ["HOST", "CLIENT-ID", "#PARTITIONS"]
    mins = {"GROUP": 15, "CONSUMER-ID": 15, "GROUP-INSTANCE-ID": 17, "HOST": 15, "CLIENT-ID": 15, "#PARTITIONS": 15}
    values = [
        {"GROUP": group, "CONSUMER-ID": r["id"], "GROUP-INSTANCE-ID": r.get("instance", ""), "HOST": r["host"],
         "CLIENT-ID": r["client"], "#PARTITIONS": str(sum(len(p) for p in r["assignment"].values()))}
        for r in rows
    ]
    widths = {c: max([mins[c]] + [len(v[c]) for v in values]) if c != "#PARTITIONS" else 15 for c in cols}
    widths["GROUP"] = max(15, len(group))

    def fixed(v: dict) -> str:
        return "".join(pad(v[c], widths[c]) + " " for c in cols)

    lines = ["", fixed({c: c for c in cols})]
    if layout == "4.0":
        current = [kip1099_cell(r["assignment"]) for r in rows]
        target = [kip1099_cell(r.get("target", r["assignment"])) for r in rows]
        cw = max([20] + [len(c) for c in current])
        tw = max([20] + [len(t) for t in target])
        tail = lambda a, b, c, d: pad(a, 15) + " " + pad(b, cw) + " " + pad(c, 15) + " " + pad(d, tw)  # noqa: E731
        if verbose:
            lines[1] += tail("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT")
        for v, r, c, t in zip(values, rows, current, target):
            lines.append(fixed(v) + (tail(r.get("epoch", "-"), c, r.get("target_epoch", "-"), t) if verbose else ""))
    else:
        cell = topicless_cell if layout == "3.8" else classic_cell
        if verbose:
            lines[1] += "ASSIGNMENT"
        for v, r in zip(values, rows):
            lines.append(fixed(v) + (cell(r["assignment"]) if verbose else ""))
    return "\n".join(lines) + "\n"


def offsets_table(group: str | None, rows: list[tuple[str, str, str, str, str, str]]) -> str:
    """Default ``--describe``: (topic, partition, current, end, consumer, host); client id = consumer prefix."""
    cols = (["GROUP"] if group else []) + ["TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                                           "CONSUMER-ID", "HOST", "CLIENT-ID"]
    recs = []
    for topic, partition, cur, end, consumer, host in rows:
        lag = str(int(end) - int(cur)) if cur != "-" and end != "-" else "-"
        client = consumer.rsplit("-", 5)[0] if consumer != "-" else "-"
        recs.append({"GROUP": group or "", "TOPIC": topic, "PARTITION": partition, "CURRENT-OFFSET": cur,
                     "LOG-END-OFFSET": end, "LAG": lag, "CONSUMER-ID": consumer, "HOST": host, "CLIENT-ID": client})
    widths = {"GROUP": 15, "TOPIC": 15, "CONSUMER-ID": 15, "HOST": 15}
    for r in recs:
        for c in widths:
            widths[c] = max(widths[c], len(r[c]))
    widths.update({"PARTITION": 10, "CURRENT-OFFSET": 15, "LOG-END-OFFSET": 15, "LAG": 15})

    def line(v: dict) -> str:
        return " ".join(pad(v[c], widths[c]) if c != "CLIENT-ID" else v[c] for c in cols)

    return "\n".join(["", line({c: c for c in cols})] + [line(r) for r in recs]) + "\n"


def state_table(group: str, coordinator: str, strategy: str, state: str, members: int,
                epochs: tuple[str, str] | None = None) -> str:
    """``--state`` (``--verbose`` from 4.0 adds GROUP-EPOCH and TARGET-ASSIGNMENT-EPOCH)."""
    c = max(25, len(coordinator))
    if epochs is None:
        fmt = lambda *v: pad(v[0], c) + " " + pad(v[1], 25) + " " + pad(v[2], 20) + " " + pad(v[3], 15) + " " + v[4]  # noqa: E731
        return "\n" + fmt("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS") + "\n" \
            + fmt(group, coordinator, strategy, state, str(members)) + "\n"
    g = max(15, len(group))
    fmt = lambda *v: (pad(v[0], g) + " " + pad(v[1], c) + " " + pad(v[2], 20) + " " + pad(v[3], 20) + " "  # noqa: E731
                      + pad(v[4], 15) + " " + pad(v[5], 25) + " " + v[6])
    return "\n" + fmt("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
                      "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS") + "\n" \
        + fmt(group, coordinator, strategy, state, epochs[0], epochs[1], str(members)) + "\n"


ORDERS = [  # orders-app: 3 members on orders (6) and audit.log (2), one member idle
    {"id": "consumer-orders-app-1-5e2c9b7a-3d41-4c8e-9f60-1b2a3c4d5e6f", "host": "/10.20.0.11",
     "client": "consumer-orders-app-1", "instance": "orders-0", "assignment": {"orders": [0, 1, 2], "audit.log": [0]}},
    {"id": "consumer-orders-app-2-0f9e8d7c-6b5a-4493-8271-605f4e3d2c1b", "host": "/10.20.0.12",
     "client": "consumer-orders-app-2", "instance": "orders-1", "assignment": {"orders": [3, 4, 5], "audit.log": [1]}},
    {"id": "consumer-orders-app-3-a1b2c3d4-e5f6-4789-8abc-def012345678", "host": "/10.20.0.13",
     "client": "consumer-orders-app-3", "assignment": {}},
]
PAYMENTS = [  # payments: one topic of 12 partitions, 3 members (partitions 10, 11 make the string sort visible)
    {"id": "payments-svc-7d9f1c2e-0a4b-4f6e-8c3d-2b1a0f9e8d7c", "host": "/172.16.3.21", "client": "payments-svc",
     "assignment": {"payments.v2-events": [0, 1, 2, 10]}},
    {"id": "payments-svc-4c3b2a19-8f7e-4d6c-9b5a-493827160504", "host": "/172.16.3.22", "client": "payments-svc",
     "assignment": {"payments.v2-events": [3, 4, 5, 11]}},
    {"id": "payments-svc-e8d7c6b5-a493-4827-9160-5f4e3d2c1b0a", "host": "/172.16.3.23", "client": "payments-svc",
     "assignment": {"payments.v2-events": [6, 7, 8, 9]}},
]


def main() -> None:
    (HERE / "members-2.2.txt").write_text(
        "Note: This will not show information about old Zookeeper-based consumers.\n"
        + members_table("1.1", "orders-app", [{k: v for k, v in r.items() if k != "instance"} for r in ORDERS]))
    (HERE / "members-2.5.txt").write_text(
        members_table("2.3", "orders-app", [{k: v for k, v in r.items() if k != "instance"} for r in ORDERS]))
    (HERE / "members-3.7-static.txt").write_text(
        "$ bin/kafka-consumer-groups.sh --bootstrap-server kafka:9092 --describe --group orders-app --members --verbose\n"
        + members_table("2.6", "orders-app", ORDERS)
        + state_table("orders-app", "kafka-1.kafka.svc.cluster.local:9092 (1)", "cooperative-sticky", "Stable", 3))
    (HERE / "members-3.9-topicless.txt").write_text(members_table("3.8", "payments", PAYMENTS))
    offsets = [("payments.v2-events", str(p), str(1000 + p), str(1010 + p), m["id"], m["host"])
               for m in PAYMENTS for p in sorted(m["assignment"]["payments.v2-events"])]
    (HERE / "members-3.9-with-offsets.txt").write_text(
        members_table("3.8", "payments", PAYMENTS) + offsets_table("payments", offsets))
    kip848 = [
        {"id": "Yx3kP0QnS1uWv7aB9cD2eF", "host": "/10.30.1.5", "client": "consumer-inventory-1",
         "assignment": {"inventory": [0, 1, 2]}, "epoch": "14", "target_epoch": "15",
         "target": {"inventory": [0, 1]}},
        {"id": "Lm4nO5pQ6rS7tU8vW9xY0z", "host": "/10.30.1.6", "client": "consumer-inventory-2",
         "assignment": {"inventory": [3, 4, 5]}, "epoch": "15", "target_epoch": "15",
         "target": {"inventory": [3, 4]}},
        {"id": "Ab1Cd2Ef3Gh4Ij5Kl6Mn7o", "host": "/10.30.1.7", "client": "consumer-inventory-3",
         "assignment": {}, "epoch": "15", "target_epoch": "15", "target": {"inventory": [2, 5]}},
    ]
    (HERE / "members-4.0-kip848.txt").write_text(
        "\nWarning: Consumer group 'inventory' is rebalancing.\n"
        + members_table("4.0", "inventory", kip848)
        + state_table("inventory", "kafka-2:9092  (2)", "uniform", "Reconciling", 3, epochs=("15", "15")))
    other = [{"id": "billing-0-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "host": "/10.40.0.2", "client": "billing-0",
              "assignment": {"invoices": [0, 1]}}]
    (HERE / "members-two-groups.txt").write_text(
        members_table("2.6", "orders-app", [{k: v for k, v in r.items() if k != "instance"} for r in ORDERS])
        + members_table("2.6", "billing", other))


def captures() -> None:
    """Captures as a JoinGroup/SyncGroup capture would record them: the bytes written by the codecs
    (``stickyproof encode`` writes the same), at each member's own version."""
    from stickyproof.model import TopicPartition as TP
    from stickyproof.wire import (
        WireAssignment,
        WireSubscription,
        encode_assignment,
        encode_cooperative_user_data,
        encode_sticky_user_data,
        encode_subscription,
    )

    def sub(version, topics, owned=(), generation=-1, rack=None, user_data=None):
        return encode_subscription(WireSubscription(version, tuple(topics), user_data, tuple(owned), generation, rack)).hex()

    def asg(*tps):
        return encode_assignment(WireAssignment(3, tuple(tps))).hex()

    coop = {
        "format": "stickyproof.capture/1",
        "group": "orders-app",
        "assignor": "cooperative-sticky",
        "protocol": "cooperative",
        "topics": {"orders": 4, "audit.log": {"partitions": 2, "racks": [["az1", "az2"], ["az2", "az3"]]}},
        "members": [
            {"id": "consumer-orders-app-1-5e2c9b7a", "instance_id": "orders-0",
             "subscription": sub(3, ["orders", "audit.log"], [TP("orders", 0), TP("orders", 1), TP("audit.log", 0)], 7,
                                 "az1", encode_cooperative_user_data(7)),
             "assignment": asg(TP("orders", 0), TP("orders", 1))},
            {"id": "consumer-orders-app-2-0f9e8d7c", "instance_id": None,
             "subscription": sub(1, ["orders", "audit.log"], [TP("orders", 2), TP("orders", 3)], 7, None,
                                 encode_cooperative_user_data(7)),
             "assignment": asg(TP("orders", 2), TP("orders", 3))},
            {"id": "consumer-orders-app-3-a1b2c3d4", "instance_id": None,
             "subscription": sub(3, ["orders", "audit.log"], [], -1, "az3", encode_cooperative_user_data(-1)),
             "assignment": asg(TP("audit.log", 1))},
        ],
    }
    sticky = {
        "format": "stickyproof.capture/1",
        "group": "billing",
        "assignor": "sticky",
        "topics": {"invoices": 4},
        "members": [
            {"id": "billing-1", "subscription": sub(3, ["invoices"], user_data=encode_sticky_user_data(
                [TP("invoices", 0), TP("invoices", 1)], 4)), "assignment": asg(TP("invoices", 0), TP("invoices", 1))},
            {"id": "billing-2", "subscription": sub(0, ["invoices"], user_data=encode_sticky_user_data(
                [TP("invoices", 2), TP("invoices", 3)], None, version=0)), "assignment": asg(TP("invoices", 2))},
            {"id": "billing-3", "subscription": sub(3, ["invoices"]), "assignment": asg(TP("invoices", 3))},
        ],
    }
    for name, doc in (("capture-cooperative.json", coop), ("capture-sticky.json", sticky)):
        (HERE / name).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
    captures()
