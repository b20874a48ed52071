"""The child end of an isolated Python user assignor: ``python -m stickyproof.peers.worker MODULE:CALLABLE``.

    python -m stickyproof.peers.worker [--memory-bytes N] [--ref-name NAME] mypkg.mod:balanced

Serves models/assignor-protocol.md (``assignor/1``) on its standard input and output for one
user callable, loaded and called exactly as ``assignors.registry`` does in process (the contract
is that module's docstring): the same dict in, the same checks on the result, the same wrapping of
what it raises. What changes is that it runs here, where it can do no harm to stickyproof:

* ``python -m`` puts the current directory first on ``sys.path``, so ``mymod:fn`` resolves from
  the directory the user runs stickyproof in.
* The protocol keeps private copies of file descriptors 0 and 1; descriptor 1 then points at
  standard error and 0 at ``/dev/null``, so a ``print()`` (or a C library writing to fd 1, or a
  subprocess) lands in the stderr tail instead of corrupting an answer, and nothing the callable
  reads can swallow a request.
* ``--memory-bytes`` caps the address space (``RLIMIT_AS``) before the user's module is imported
  (0: no cap); core dumps are off; ``faulthandler`` writes a segfault's Python stack to stderr.
* ``sys.exit`` and ``os._exit`` end this process, as they would end any program: the client
  records the exit status as the call's ``crash``.

A module that cannot be loaded ends the worker with status 2 before its hello, after one line
``UnknownAssignor: <why>`` on standard error.
"""

from __future__ import annotations

import base64
import faulthandler
import json
import os
import resource
import sys
import time
from itertools import chain
from typing import Any, BinaryIO

from ..assignors.base import GroupSubscription, Subscription
from ..assignors.registry import AssignorInfo, load_user_assignor
from .._perf import gc_paused
from ..errors import AssignorFailure, StickyproofError, UnknownAssignor
from ..model import Assignment, Topic
from .protocol import MAX_ANSWER_PARTITIONS, Hello, by_topic, expand_partition_list, hello_line, topic_partitions

__all__ = ["main", "group_from_request", "answer_line"]

EXIT_UNKNOWN = 2
EXIT_BAD_REQUEST = 3


def group_from_request(doc: dict[str, Any]) -> GroupSubscription:
    """The ``GroupSubscription`` a §3 request describes (the inverse of ``protocol.request_document``)."""
    group = doc["group"]
    metadata = {}
    for name, raw in group["topics"].items():
        if isinstance(raw, dict):
            racks = raw.get("racks")
            metadata[name] = Topic(name, raw["partitions"], None if racks is None else tuple(tuple(r) for r in racks))
        else:
            metadata[name] = Topic(name, raw)
    budget = [MAX_ANSWER_PARTITIONS]
    members = []
    for i, m in enumerate(group["members"]):
        owned = tuple(chain.from_iterable(
            topic_partitions(topic, expand_partition_list(parts, f"group.members[{i}].owned.{topic}", budget))
            for topic, parts in m["owned"].items()
        ))
        generation = m["generation"]
        members.append(Subscription(
            member_id=m["id"],
            topics=tuple(m["topics"]),
            user_data=None if m.get("user_data") is None else base64.b64decode(m["user_data"]),
            owned=owned,
            generation=None if generation < 0 else generation,
            rack=m.get("rack"),
            instance_id=m.get("instance_id"),
            version=m.get("version", 3),
        ))
    return GroupSubscription(metadata, tuple(members), doc["rebalance_protocol"], False, doc.get("leader"))


def answer_line(call_id: int, assignment: Assignment, seconds: float) -> bytes:
    """The §5 answer for ``assignment``, partitions in the order the assignor gave them."""
    with gc_paused():
        return _answer_line(call_id, assignment, seconds)


def _answer_line(call_id: int, assignment: Assignment, seconds: float) -> bytes:
    doc: dict[str, Any] = {
        "id": call_id,
        "assignment": {m: by_topic(tps) for m, tps in assignment.assignment.items() if tps},
        "revoking": {m: by_topic(tps) for m, tps in assignment.revoking.items() if tps},
        "assign_seconds": seconds,
    }
    return json.dumps(doc, separators=(",", ":")).encode("ascii") + b"\n"


def _error_line(call_id: int, exc: BaseException) -> bytes:
    """``{"error": ...}`` for what the callable raised: the user's own exception type when the
    registry wrapped it, else the Kafka exception an ``AssignorFailure`` names, else its class."""
    cause = exc.__cause__
    if isinstance(exc, AssignorFailure) and cause is not None:
        kind, message = type(cause).__name__, str(cause)
    elif isinstance(exc, AssignorFailure) and exc.kafka_exception:
        kind, message = exc.kafka_exception, str(exc).removeprefix(f"{exc.kafka_exception}: ")
    else:
        kind, message = type(exc).__name__, str(exc)
    return json.dumps({"id": call_id, "error": {"type": kind, "message": message}}).encode("ascii") + b"\n"


def _isolate_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Private protocol streams; fd 1 -> stderr and fd 0 -> /dev/null for everything else."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    return proto_in, proto_out


def _limit_resources(memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory_bytes > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _parse_args(argv: list[str]) -> tuple[int, str]:
    memory, rest = 0, list(argv)
    while rest and rest[0].startswith("--"):
        flag = rest.pop(0)
        if flag == "--memory-bytes" and rest and rest[0].isdigit():
            memory = int(rest.pop(0))
        else:
            raise UnknownAssignor(f"worker: unknown option {flag!r} (usage: --memory-bytes N MODULE:CALLABLE)")
    if len(rest) != 1:
        raise UnknownAssignor("worker: expected one MODULE:CALLABLE")
    return memory, rest[0]


def serve(info: AssignorInfo, proto_in: BinaryIO, proto_out: BinaryIO) -> int:
    """Answer requests until end of input (exit 0)."""
    hello = Hello(info.name, info.kafka_name, info.protocols, frozenset({"ranges"}), False, info.contract)
    proto_out.write(hello_line(hello))
    proto_out.flush()
    for line in proto_in:
        try:
            with gc_paused():
                request = json.loads(line)
                call_id = request["id"]
                group = group_from_request(request)
        except (ValueError, KeyError, TypeError, StickyproofError) as exc:
            print(f"worker: unreadable request ({type(exc).__name__}: {exc})", file=sys.stderr, flush=True)
            return EXIT_BAD_REQUEST
        started = time.perf_counter()
        try:
            assignment = info.fn(group)
        except Exception as exc:  # the callable's failure is the answer; SystemExit ends the worker, as asked
            out = _error_line(call_id, exc)
        else:
            out = answer_line(call_id, assignment, time.perf_counter() - started)
        proto_out.write(out)
        proto_out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    proto_in, proto_out = _isolate_stdio()
    faulthandler.enable(sys.stderr)
    try:
        memory, ref = _parse_args(sys.argv[1:] if argv is None else argv)
        _limit_resources(memory)
        info = load_user_assignor(ref)
    except UnknownAssignor as exc:
        print(f"UnknownAssignor: {exc}", file=sys.stderr, flush=True)
        return EXIT_UNKNOWN
    return serve(info, proto_in, proto_out)


if __name__ == "__main__":
    sys.exit(main())
