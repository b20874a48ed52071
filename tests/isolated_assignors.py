"""Hostile user assignors for tests/test_peers_isolated.py (the registry's ``module:callable`` contract).

Each misbehaves in one way a user's code can: ending the process, crashing it, never returning,
writing to standard output, returning garbage, raising, exhausting memory. ``deal`` is the
well-behaved one they fall back to.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys


def deal(doc):
    """Round robin over the members in document order (every partition of every subscribed topic)."""
    members = doc["members"]
    out = {m["id"]: {} for m in members}
    i = 0
    for topic in sorted(doc["topics"]):
        count = doc["topics"][topic]
        count = count if isinstance(count, int) else count["partitions"]
        subscribers = [m["id"] for m in members if topic in m["topics"]]
        for p in range(count):
            if subscribers:
                out[subscribers[i % len(subscribers)]].setdefault(topic, []).append(p)
                i += 1
    return out


deal.supported_protocols = ("cooperative", "eager")
deal.assignor_name = "deal"


def prints(doc):
    print("debugging the assignor:", len(doc["members"]), "members")
    os.write(1, b"and a C library writing to fd 1\n")
    return deal(doc)


def exits_on_large_groups(doc):
    if len(doc["members"]) >= 3:
        print("too many members, bye", file=sys.stderr)
        sys.exit(0)
    return deal(doc)


def exits_3(doc):
    sys.exit(3)


def hard_exit(doc):
    os._exit(0)


def segfaults(doc):
    ctypes.string_at(0)


def loops(doc):
    while True:
        pass


def negative_partition(doc):
    return {doc["members"][0]["id"]: {"t": [0, -3]}}


def returns_a_list(doc):
    return [1, 2, 3]


def raises(doc):
    return {}["missing"]


def hogs_memory(doc):
    block = bytearray(1024**3)
    return {doc["members"][0]["id"]: {"t": [len(block) and 0]}}


def reads_stdin(doc):
    sys.stdin.read()
    return deal(doc)


def shows_its_input(doc):
    """Raises with the document it was handed, so a test can compare it with the in-process one."""
    raise ValueError(json.dumps(doc, sort_keys=True))


shows_its_input.supported_protocols = ("cooperative", "eager")

NOT_CALLABLE = 42
