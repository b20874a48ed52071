"""Small children speaking (or breaking) the assignor protocol, for tests/test_peers_exec.py.

    python tests/peer_children.py MODE [ARG]

Every mode first writes a hello (except the hello-breaking ones), then answers each request the
way the mode says. ``good`` deals the subscribed partitions round robin over the members in
request order; the hostile modes misbehave on their first request unless noted. Modes that take a
marker file misbehave only while the marker does not exist (they create it), so the restarted
child behaves: that is how the tests show the next call works again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

HELLO = {"stickyproof": "assignor/1", "name": "test-child", "kafka_name": "test-child",
         "supported_protocols": ["cooperative", "eager"]}


def say(doc) -> None:
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()


def count(topic) -> int:
    return topic if isinstance(topic, int) else topic["partitions"]


def deal(request) -> dict:
    """Round robin over the members in request order, each partition to the next subscriber."""
    group = request["group"]
    members = group["members"]
    out = {m["id"]: {} for m in members}
    i = 0
    for topic in sorted(group["topics"]):
        subscribers = [m["id"] for m in members if topic in m["topics"]]
        for p in range(count(group["topics"][topic])):
            if subscribers:
                out[subscribers[i % len(subscribers)]].setdefault(topic, []).append(p)
                i += 1
    return out


def first_time(marker: str | None) -> bool:
    if marker is None:
        return True
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


def main() -> None:
    mode = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else None
    hello = dict(HELLO)
    if mode == "no-hello-exit":
        print("cannot start: missing config", file=sys.stderr)
        sys.exit(4)
    if mode == "silent":
        time.sleep(3600)
    if mode == "bad-hello":
        say({"hello": "world"})
        time.sleep(3600)
    if mode == "other-version":
        hello["stickyproof"] = "assignor/9"
    if mode == "ranges":
        hello["accepts"] = ["ranges"]
    if mode == "contract":
        hello["contract"] = arg
    if mode == "wire":
        hello["wire"] = True
        hello["kafka_name"] = "sticky"
        hello["supported_protocols"] = ["eager"]
    say(hello)
    calls = 0
    for line in sys.stdin:
        calls += 1
        request = json.loads(line)
        rid = request["id"]
        if mode == "record":
            with open(arg, "a", encoding="utf-8") as f:
                f.write(line)
        if mode in ("good", "ranges", "record", "wire", "contract"):
            say({"id": rid, "assignment": deal(request), "assign_seconds": 0.001})
        elif mode == "exit" and first_time(arg):
            print("about to exit with 3", file=sys.stderr, flush=True)
            sys.exit(3)
        elif mode == "hang" and first_time(arg):
            print("thinking forever", file=sys.stderr, flush=True)
            time.sleep(3600)
        elif mode == "segv" and first_time(arg):
            print("about to segfault", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        elif mode == "garbage" and first_time(arg):
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
        elif mode == "wrong-id" and first_time(arg):
            say({"id": rid + 100, "assignment": {}})
        elif mode == "oversize" and first_time(arg):
            chunk = "x" * (1 << 20)
            for _ in range(65):
                sys.stdout.write(chunk)
            sys.stdout.flush()
            time.sleep(3600)
        elif mode == "unknown-member":
            say({"id": rid, "assignment": {"ghost": {"t": [0]}}})
        elif mode == "negative":
            say({"id": rid, "assignment": {request["group"]["members"][0]["id"]: {"t": [1, -2]}}})
        elif mode == "bad-ranges":
            say({"id": rid, "assignment": {request["group"]["members"][0]["id"]: {"t": {"ranges": [[3, 1]]}}}})
        elif mode == "duplicate":
            say({"id": rid, "assignment": {request["group"]["members"][0]["id"]: {"t": {"ranges": [[0, 1]]}},
                                           request["group"]["members"][1]["id"]: {"t": [1, 1]}}})
        elif mode == "error":
            say({"id": rid, "error": {"type": "IllegalStateException", "message": "No more unfilled consumers"}})
        elif mode == "slow":
            time.sleep(float(arg))
            say({"id": rid, "assignment": deal(request)})
        elif mode == "flood-stderr" and calls == 1:
            for i in range(200_000):
                sys.stderr.write(f"log line {i}\n")
            sys.stderr.flush()
            sys.exit(5)
        elif mode == "grandchild":
            sleeper = subprocess.Popen(["sleep", "3600"])
            print(f"grandchild {sleeper.pid}", file=sys.stderr, flush=True)
            time.sleep(3600)
        elif mode == "two-lines":
            say({"id": rid, "assignment": deal(request)})
            say({"id": rid, "assignment": deal(request)})
        else:
            say({"id": rid, "assignment": deal(request)})


if __name__ == "__main__":
    main()
