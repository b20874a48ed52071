"""The one error family of stickyproof.

Every error the library raises on purpose derives from ``StickyproofError``; anything
else escaping is a bug and should show its traceback.

    StickyproofError
    ├── InvalidScenario        a scenario or assignment document breaks the format (names the JSON path)
    ├── DecodeError            bytes that do not decode (names the field and the byte offset)
    ├── EncodeError            a value that cannot be written at the asked version
    ├── SpecError              a bundled message spec is malformed (wire._spec; a packaging bug)
    ├── InvalidOption          an option out of its range (a time limit of 0, nan or inf; a negative count)
    ├── InvalidSpace           a scenario-space knob that names nothing or breaks its rule (scenarios.space)
    ├── InvalidStrategyArgument  a ``groups()`` argument that can generate nothing (strategies; also
    │                          Hypothesis's ``InvalidArgument``)
    ├── UnknownAssignor        an assignor name, variant or ``module:callable`` that cannot be loaded
    │   └── PeerBuildFailed    a client's harness could not be built from its registry (peers.builds)
    ├── AssignorFailure        an assignor raised (Kafka's own throw, or a user callable's exception)
    │   ├── AssignorTimeLimit  an assignor call ran past ``Limits.assignor_seconds``
    │   └── AssignorCrash      an assignor's child process died before answering (kind ``crash``)
    │       └── AssignorGarbage  ... or answered something that is not an answer (kind ``garbage``)
    ├── BrokerUnavailable      the live broker could not be built, started or reached (live.broker)
    ├── MemberFailed           a live member could not be built or started, or its process died (live.java_member)
    ├── NotAHistory            a simulation the KIP-848 model cannot express as a history (group.consumer.history_export)
    ├── SolverError            a solver failed to build or solve (translated from OR-Tools / Z3)
    └── SweepError             the Spark pipeline could not run (translated from PySpark / Java)

The classes live here, except the seven defined beside the one module that raises them (named in
parentheses). The CLI catches this family only, prints ``TypeName: message`` on stderr and exits 2.
"""

from __future__ import annotations

__all__ = [
    "StickyproofError",
    "InvalidScenario",
    "DecodeError",
    "EncodeError",
    "InvalidOption",
    "UnknownAssignor",
    "AssignorFailure",
    "AssignorTimeLimit",
    "AssignorCrash",
    "AssignorGarbage",
    "SolverError",
    "SweepError",
]


class StickyproofError(Exception):
    """Root of every error stickyproof raises deliberately."""

    exit_code = 2


class InvalidScenario(StickyproofError, ValueError):
    """A scenario or assignment document breaks docs/scenario-format.md.

    ``path`` is the JSON path of the offending value (``members[2].owned.orders[1]``), or
    ``""`` when the whole document is at fault (not JSON, truncated).
    """

    def __init__(self, path: str, message: str):
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}" if path else message)


class DecodeError(StickyproofError, ValueError):
    """Bytes that do not decode as the named message; ``field`` and ``offset`` say where."""

    def __init__(self, message: str, *, field: str = "", offset: int | None = None):
        self.field = field
        self.offset = offset
        where = []
        if field:
            where.append(f"field {field}")
        if offset is not None:
            where.append(f"byte offset {offset}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


class EncodeError(StickyproofError, ValueError):
    """A value that cannot be written (string too long, partition out of int32 range...)."""


class InvalidOption(StickyproofError, ValueError):
    """An option outside its range; ``option`` names it as the caller spelled it (``assignor_seconds``)."""

    def __init__(self, option: str, message: str):
        self.option = option
        super().__init__(f"{option}: {message}")


class UnknownAssignor(StickyproofError, LookupError):
    """An assignor name or ``module:callable`` reference that does not resolve."""


class AssignorFailure(StickyproofError, RuntimeError):
    """An assignor raised while assigning.

    Kafka's own assignors throw on some inputs (docs/rules.md R14, R21, R22, §10 K1, K3);
    stickyproof reproduces those throws as this error so a grade can record them.
    ``kafka_exception`` names the Java exception Kafka would throw, when known. ``kind`` is what a
    grade records the call's failure as (``error`` here; subclasses say ``time-limit``, ...).
    """

    kind = "error"

    def __init__(self, message: str, *, kafka_exception: str | None = None):
        self.kafka_exception = kafka_exception
        super().__init__(f"{kafka_exception}: {message}" if kafka_exception else message)


class AssignorTimeLimit(AssignorFailure):
    """The assignor did not answer within ``Limits.assignor_seconds`` (a thread cannot be stopped: it is abandoned)."""

    kind = "time-limit"


class AssignorCrash(AssignorFailure):
    """The assignor's child process (``exec:``, an isolated user assignor) exited or was killed by a
    signal before answering the call (models/assignor-protocol.md §6).

    ``exit_status`` is its exit code, or None when a signal ended it (``signal`` then names it,
    ``SIGSEGV``); ``stderr_tail`` its last lines of standard error (at most 40), also written
    into the message after its first line, so a recorded grade shows them.
    """

    kind = "crash"

    def __init__(
        self,
        message: str,
        *,
        exit_status: int | None = None,
        signal: str | None = None,
        stderr_tail: tuple[str, ...] = (),
        kafka_exception: str | None = None,
    ):
        self.exit_status = exit_status
        self.signal = signal
        self.stderr_tail = tuple(stderr_tail)
        if self.stderr_tail:
            message += "\nstderr (last lines):\n" + "\n".join(f"  {line}" for line in self.stderr_tail)
        super().__init__(message, kafka_exception=kafka_exception)


class AssignorGarbage(AssignorCrash):
    """The assignor's child answered with something that is not an answer: a line that is not one
    JSON object, another call's ``id``, an answer over the size limit, or an assignment naming an
    unknown member or a bad partition (the message names the path). ``line`` holds the offending
    line, cut at 200 characters, when there is one."""

    kind = "garbage"

    def __init__(self, message: str, *, line: str | None = None, stderr_tail: tuple[str, ...] = ()):
        self.line = line
        super().__init__(message, stderr_tail=stderr_tail)


class SolverError(StickyproofError, RuntimeError):
    """OR-Tools or Z3 failed to build or solve a model."""


class SweepError(StickyproofError, RuntimeError):
    """The Spark sweep could not run (Spark or Java failure, unusable output directory)."""
