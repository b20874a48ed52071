"""Grading one assignor on one group: the only place where the leader and the oracle meet.

    grade_assignor(scenario, assignor, *, direct=False, balance=None, limits=Limits()) -> Grade
    grade_assignment(scenario, assignment, *, balance=None, limits=Limits()) -> Grade

The names are the oracle's (``oracle.grade``), one for one thing: ``scenario`` is the group judged
(what the members really owned), ``leader_input`` the group the leader was handed when that differs,
``answer`` an answer the assignor already gave, ``contract`` the assignor's own promise (by name,
``AssignorInfo.contract``) and ``balance`` a balance mode that overrides it (``BalanceMode``).

``stickyproof grade``, every sweep row, every group a hunt judges, the sweep's triage and the
tests call these two functions, so a CLI grade and a sweep row of the same group are the same
grade. The assignor runs through ``leader.lead`` (each member encoded at its version and decoded,
as Kafka's leader sees it; ``direct`` hands it the scenario's own fields instead); the oracle
(``oracle.grade``) judges the answer against the members' full state and measures stickiness
against the certified optimum over what that assignor's leader decoded (``leader.decoded_view``).
What a grade measures is written in models/invariants.md §3-§4; what each time limit bounds is
``Limits``.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, fields, replace
from typing import Any, Callable

from ..assignors.info import OUT_OF_PROCESS_CALL_SECONDS, AssignorInfo
from ..lookup import get_assignor
from ..errors import AssignorTimeLimit, InvalidOption, UnknownAssignor
from ..model import Assignment, Scenario
from ..oracle.grade import Grade, grade

__all__ = [
    "Limits",
    "OUT_OF_PROCESS_CALL_SECONDS",
    "BalanceMode",
    "grade_assignor",
    "grade_assignment",
    "unsupported_reason",
    "leader_run",
    "consumer_group_run",
    "DEFAULT_SERVER_ASSIGNOR",
    "bounded",
    "call_with_limit",
    "sees_its_history",
]

BalanceMode = str | None
"""A balance mode overriding the assignor's own promise (``uniform``, ``global``, ``kafka``, ``per-topic``,
``pairwise``: models/invariants.md §2), or None: the assignor is held to its contract (§5,
``AssignorInfo.contract``)."""


@dataclass(frozen=True)
class Limits:
    """Every bound a grading run can hit, each bounding one thing and named for it. None means
    unbounded; seconds are wall-clock, except ``cpsat_work``.

    ``assignor_seconds``   one call of the assignor (a grade makes several: the round, its cooperative
                           follow-ups, the determinism and stability re-runs; a history one per
                           rebalance). None: stickyproof's own assignors unbounded, an assignor in
                           another process (``exec:``, a client adapter, ``module:callable``) still
                           ``OUT_OF_PROCESS_CALL_SECONDS``: a child that never answers must not hang a run
    ``z3_query_seconds``   one Z3 query of the invariant check (a query cut short is a ``SolverError``)
    ``cpsat_work``         one CP-SAT solve, in CP-SAT's deterministic time units
                           (``max_deterministic_time``): the budget that decides what a solve answers,
                           the same on a busy machine as on an idle one
    ``cpsat_seconds``      one CP-SAT solve, wall-clock: a safety stop (a solve it cut short reports
                           ``FEASIBLE`` with its bound, or no answer, like a budget cut)
    ``shrink_seconds``     shrinking one failure (the hunt's and the triage's, each finding)
    ``triage_seconds``     the sweep's triage, all its findings together
    ``shrink_evaluations`` candidate groups judged while shrinking one failure
    """

    assignor_seconds: float | None = None
    z3_query_seconds: float | None = None
    cpsat_work: float | None = None
    cpsat_seconds: float | None = None
    shrink_seconds: float | None = 120.0
    triage_seconds: float | None = None
    shrink_evaluations: int = 300

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "shrink_evaluations":
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise InvalidOption(f.name, f"must be a positive integer, got {value!r}")
                continue
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                unit = "deterministic time units" if f.name == "cpsat_work" else "seconds"
                raise InvalidOption(f.name, f"must be a positive finite number of {unit}, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ------------------------------------------------------------------------------------------
# Running the assignor


def unsupported_reason(scenario: Scenario, info: AssignorInfo) -> str | None:
    """Why ``info`` can never meet ``scenario`` in Kafka, or None: a consumer refuses a rebalance
    protocol none of its assignors supports (R36), so an eager-only assignor never leads a
    cooperative group. Such a pair is not graded: it is neither a pass nor a failure."""
    if scenario.is_consumer_group:
        return None if info.consumer_group is not None else f"{info.name} is a classic assignor: a consumer group (KIP-848) is assigned by a server-side one"
    if info.consumer_group is not None:
        return f"{info.name} is a server-side (KIP-848) assignor: no classic group runs it"
    if scenario.protocol not in info.protocols:
        return f"{scenario.protocol} protocol unsupported by {info.name} (R36)"
    return None


def call_with_limit(fn: Callable[[], Any], seconds: float | None) -> Any:
    """``fn()``, or ``AssignorTimeLimit`` when it has not returned after ``seconds``.

    Python cannot stop a thread: a call past its limit keeps running in a daemon thread (which
    never holds the process open) and the caller moves on. Without a limit ``fn`` runs inline.
    """
    if seconds is None:
        return fn()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="stickyproof-assignor-call", daemon=True)
    started = time.perf_counter()
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise AssignorTimeLimit(
            f"the assignor ran past the time limit of {seconds:g} s "
            f"(stopped waiting after {time.perf_counter() - started:.2f} s)"
        )
    if "error" in box:
        raise box["error"]
    return box["value"]


def bounded(info: AssignorInfo, seconds: float | None) -> AssignorInfo:
    """``info`` whose every call is bounded by ``seconds`` (``Limits.assignor_seconds``).

    An assignor in another process (its ``fn`` has ``with_time_limit``: ``peers``) is handed the
    limit: it kills its child at the limit and raises ``AssignorTimeLimit`` itself, so no thread is
    abandoned and the next call finds a fresh child rather than a busy one; with ``seconds`` None it
    keeps its own bound, ``OUT_OF_PROCESS_CALL_SECONDS``. An assignor in this process runs under
    ``call_with_limit`` when ``seconds`` is given, and unbounded otherwise."""
    bind = getattr(info.fn, "with_time_limit", None)
    if bind is not None:
        return replace(info, fn=bind(seconds)) if seconds is not None else info
    if seconds is None:
        return info
    fn = info.fn
    return replace(info, fn=lambda group: call_with_limit(lambda: fn(group), seconds))


def leader_run(info: AssignorInfo, *, direct: bool = False, limits: Limits = Limits()) -> Callable[[Scenario], Assignment]:
    """The assignor as the grader calls it: one rebalance of a scenario through ``leader.lead``, each
    assignor call bounded by ``limits.assignor_seconds`` (``bounded``)."""
    from ..leader import lead

    if info.consumer_group is not None:
        raise UnknownAssignor(
            f"{info.name} is a server-side (KIP-848) assignor: it assigns consumer groups (group_protocol \"consumer\"), "
            "not a classic group's leader"
        )
    bound = bounded(info, limits.assignor_seconds)
    return lambda scenario: lead(scenario, bound, direct=direct).assignment


DEFAULT_SERVER_ASSIGNOR = "uniform"
"""The assignor a consumer group gets when none is named: the first of the broker's
``group.consumer.assignors`` default (``uniform,range``)."""


def consumer_group_run(info: AssignorInfo, *, limits: Limits = Limits()) -> Callable[[Scenario], Assignment]:
    """A server-side (KIP-848) assignor as the group coordinator calls it: a consumer-group scenario's
    members, subscriptions and current targets handed over as its ``GroupSpec`` (no leader, no wire),
    the call bounded by ``limits.assignor_seconds``. ``UnknownAssignor`` for a classic assignor."""
    if info.consumer_group is None:
        raise UnknownAssignor(
            f"{info.name} is a classic (leader-side) assignor; a consumer group (group_protocol \"consumer\") is assigned "
            "by a server-side one: uniform, consumer-range, uniform@4.0.0, uniform@3.9.1, kafka-java:uniform@VERSION, kafka-java:consumer-range@VERSION"
        )
    fn = info.consumer_group
    return lambda scenario: call_with_limit(lambda: fn(scenario), limits.assignor_seconds)


# ------------------------------------------------------------------------------------------
# The two entry points


def grade_assignor(
    scenario: Scenario,
    assignor: str | AssignorInfo,
    *,
    direct: bool = False,
    balance: BalanceMode = None,
    limits: Limits = Limits(),
    answer: Assignment | None = None,
    answer_seconds: float | None = None,
    leader_input: Scenario | None = None,
) -> Grade:
    """Grade ``assignor`` (a registry name, ``module:callable``, or an ``AssignorInfo``) on ``scenario``.

    ``answer``: what the assignor already answered for this very group (a history's rebalance, as
    the leader produced it), graded as round 1 without running it again; ``answer_seconds`` its time.
    ``leader_input``: the group the leader was handed, when that differs from ``scenario``, what the
    members really owned (a history's eager members revoked before joining, R37): the assignor is
    asked on it; validity, stickiness and moves are judged on ``scenario``.

    The assignor's failures (a throw, a time limit) are recorded in the grade (``error``,
    ``run_error``), never raised. Raises ``UnknownAssignor`` for a name that does not resolve and
    ``InvalidScenario`` for a group the leader cannot run with that assignor (see
    ``unsupported_reason``; callers that sweep many pairs check it first). A failure that a known
    behaviour of Kafka's own assignor explains carries its label (``hazards``).
    """
    from ..leader import decoded_view

    from .hazards import label_failures

    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    if scenario.is_consumer_group:  # KIP-848: the coordinator's call, the server-side contracts and optimum
        if balance is not None:
            raise InvalidOption("balance", "a consumer group is held to its assignor's own contract (models/invariants.md §5.2)")
        from .consumer import grade_consumer_group

        return grade_consumer_group(scenario, info, limits=limits, answer=answer)
    if info.consumer_group is not None:
        raise UnknownAssignor(
            f"{info.name} is a server-side (KIP-848) assignor: it assigns consumer groups (group_protocol \"consumer\"), "
            "not a classic group's leader"
        )
    asked = scenario if leader_input is None else leader_input
    view = asked if direct else decoded_view(asked, info)
    graded = grade(
        scenario,
        run=leader_run(info, direct=direct, limits=limits),
        view=view,
        assignor=info.name,
        z3_query_seconds=limits.z3_query_seconds,
        cpsat_work=limits.cpsat_work,
        cpsat_seconds=limits.cpsat_seconds,
        contract=info.contract,
        balance=balance,
        stability=sees_its_history(asked, info, direct=direct),
        answer=answer,
        answer_seconds=answer_seconds,
        leader_input=leader_input,
        rack_order=info.release is None or info.release.kip_881,
    )
    labels = label_failures(scenario, info, graded)
    named = {"assignor_name": info.display} if info.display else {}
    return replace(graded, labels=labels, **named) if labels or named else graded


def sees_its_history(scenario: Scenario, info: AssignorInfo, *, direct: bool = False) -> bool:
    """Whether the assignor, led as Kafka leads it, is handed what its members owned: under
    COOPERATIVE the wire's ``ownedPartitions`` (R37), under EAGER only an assignor whose user data
    carries it (Kafka's ``sticky``, R1), and every assignor under ``--direct``. One that never sees
    its previous assignment owes no stability: ``unstable`` is not judged for it (an eager user
    assignor on the leader path cannot keep what it cannot see)."""
    return direct or scenario.protocol == "cooperative" or info.claims_from_user_data


def grade_assignment(
    scenario: Scenario,
    assignment: Assignment,
    *,
    name: str = "",
    balance: BalanceMode = None,
    limits: Limits = Limits(),
    contract: str | None = None,
) -> Grade:
    """Grade a given ``assignment`` of ``scenario`` (no assignor to re-run: no determinism or
    stability verdicts, and a cooperative round's balance stays undecided while it withholds). It
    is held to ``contract`` (an assignor's promise by name, ``AssignorInfo.contract``; default
    Kafka's) unless ``balance`` names a balance mode: a live group's answer is held to the promise
    of the assignor the group chose, though no port of it is run here. A consumer group's target is
    judged for validity and against the optimum (``grading.consumer``)."""
    if scenario.is_consumer_group:
        from .consumer import grade_consumer_assignment

        return grade_consumer_assignment(scenario, assignment, name=name, limits=limits)
    return grade(scenario, assignment=assignment, assignor=name, z3_query_seconds=limits.z3_query_seconds,
                 cpsat_work=limits.cpsat_work, cpsat_seconds=limits.cpsat_seconds, balance=balance, contract=contract)
