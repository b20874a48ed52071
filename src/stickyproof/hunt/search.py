"""``hunt``: search the scenario space for a group an assignor gets wrong, and shrink it.

``hunt(assignor, ...)`` reads as four named steps:

    hunting_space     the space the assignor can meet: the scenario space minus the rebalance
                      protocols it does not support (R36: a consumer refuses that configuration);
                      a server-side (KIP-848) assignor meets consumer groups instead, drawn by
                      ``strategies.consumer_groups`` within the space's member, topic and
                      partition ranges (no other knob means anything there)
    _search           Hypothesis draws groups from the space (``strategies.from_space``, half
                      of them from the upper half of the member range) under ``@seed(seed)``
                      with no example database, so one seed is one run on any machine; each
                      group is judged (``verdict.judge``), ``target()`` steers the search toward
                      low stickiness, and the first failing group ends the search. Cooperative
                      groups with v0 claims are left out (``scenarios.space.claims_invisible``).
    shrink            ``scenarios.shrink.shrink_search`` of that group, keeping a reduction only
                      while the group stays in the space (``space_admits``) and fails the same
                      way (or a more severe way, which is then what is reported)
    judge             the shrunk group, judged once more for the report: the violated
                      invariant, the oracle's witness, and ``regression.regression_document``

The library neither prints nor exits; ``progress`` (a callable taking a ``HuntProgress``) is how
the CLI draws its progress line.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from ..assignors.registry import AssignorInfo
from ..lookup import get_assignor
from ..grading import BalanceMode, Limits
from ..grading.failure import ERROR_KINDS, shows
from ..model import Scenario, jsonable, scenario_to_dict
from ..scenarios.shrink import scenario_size, shrink_search
from ..scenarios.space import InvalidSpace, Space, claims_invisible, space_admits
from .verdict import FAILURE_KINDS, Verdict, check_skip, judge, triaged

__all__ = ["DEFAULT_EXAMPLES", "DEFAULT_LIMITS", "HuntProgress", "Finding", "HuntResult", "hunt", "hunting_space",
           "consumer_admits", "server_side", "CONSUMER_KNOBS"]

DEFAULT_EXAMPLES = 100
DEFAULT_LIMITS = Limits(assignor_seconds=10.0, shrink_seconds=120.0, shrink_evaluations=300)
"""A hunt bounds every assignor call (a user assignor may loop) and the shrinking of its finding."""



#: The knobs a consumer-group hunt reads (``consumer_groups``' sizes); any other is refused.
CONSUMER_KNOBS = ("members", "topics", "partitions")


def server_side(info: AssignorInfo) -> bool:
    """A server-side (KIP-848) assignor: it is hunted on consumer groups."""
    return info.consumer_group is not None


def hunting_space(space: Space | Sequence[str] | None, info: AssignorInfo) -> Space:
    """``space`` (a ``Space``, ``KNOB=VALUE`` strings, or None for the default) restricted to the
    rebalance protocols ``info`` supports (R36); ``InvalidSpace`` when none is left. A server-side
    assignor's space is only its sizes (``CONSUMER_KNOBS``): another knob is refused, naming it."""
    if space is None:
        base = Space()
    elif isinstance(space, Space):
        base = space
    else:
        base = Space.from_overrides(list(space))
    if server_side(info):
        for override in base.to_overrides():
            knob = override.split("=", 1)[0]
            if knob not in CONSUMER_KNOBS:
                raise InvalidSpace(knob, f"{info.name} is a server-side (KIP-848) assignor, hunted on consumer groups: "
                                         f"only {', '.join(CONSUMER_KNOBS)} shape them")
        return base
    protocols = tuple(p for p in base.protocols if p in info.protocols)
    if not protocols:
        raise InvalidSpace(
            "protocols",
            f"{info.name} supports only {', '.join(info.protocols)} (R36), and the space allows only "
            f"{', '.join(base.protocols)}",
        )
    return replace(base, protocols=protocols)


# ------------------------------------------------------------------------------------------
# The hunt


@dataclass(frozen=True)
class HuntProgress:
    """One progress report: ``phase`` is ``search`` (``done`` of ``total`` examples) or ``shrink``
    (``done`` evaluations, ``total`` their budget; ``members``/``partitions`` of the current group)."""

    phase: str
    done: int
    total: int
    worst_stickiness: float | None
    failure: str | None = None
    members: int | None = None
    partitions: int | None = None


@dataclass(frozen=True)
class Finding:
    """A failing group, shrunk: what failed first, the oracle's witness, and where it came from."""

    failure: str
    failures: tuple[str, ...]
    witness: Mapping[str, Any]
    scenario: Scenario
    original: Scenario
    verdict: Verdict
    shrink_evaluations: int
    shrink_stopped_by: str

    @property
    def signature(self) -> str:
        return self.verdict.signature(self.failure) if self.failure in self.verdict.failures else self.failure

    def to_dict(self) -> dict[str, Any]:
        reference = self.verdict.reference
        return {
            "failure": self.failure,
            "signature": self.signature,
            "reference_failures": None if reference is None else list(reference.failures),
            "kept_delta": self.verdict.kept_delta,
            "failures": list(self.failures),
            "witness": jsonable(self.witness),
            "scenario": scenario_to_dict(self.scenario),
            "size": scenario_size(self.scenario),
            "original_size": scenario_size(self.original),
            "stickiness": self.verdict.stickiness,
            "shrink": {"evaluations": self.shrink_evaluations, "stopped_by": self.shrink_stopped_by},
        }


@dataclass(frozen=True)
class HuntResult:
    """What a hunt did: the finding (None when every example passed; with ``keep_going``, ``findings``
    holds one per failure signature, ``finding`` the first), how many examples it tried, the worst
    stickiness it saw (and on which group), against a ``reference`` the largest shortfall in kept
    partitions, and the exact inputs that reproduce it."""

    assignor: str
    seed: int
    examples: int
    tried: int
    space: Space
    min_stickiness: float | None
    limits: Limits
    contract: BalanceMode
    finding: Finding | None
    worst_stickiness: float | None
    worst_scenario: Scenario | None = None
    seconds: float = 0.0
    direct: bool = False
    findings: tuple[Finding, ...] = ()
    keep_going: bool = False
    skip: tuple[str, ...] = ()
    reference: str | None = None
    worst_kept_delta: int | None = None
    worst_kept_delta_scenario: Scenario | None = None
    assignor_name: str | None = None
    """The name the assignor's program gives itself (an ``exec:`` hello), when not ``assignor``."""

    @property
    def shown(self) -> str:
        """``assignor`` as reports show it: with the name its program gives itself, if another."""
        return f"{self.assignor} ({self.assignor_name})" if self.assignor_name else self.assignor

    @property
    def found(self) -> bool:
        return self.finding is not None

    def command(self) -> str:
        """The ``stickyproof hunt`` command line that repeats this hunt, shell-quoted (an ``exec:``
        assignor's command or a ``--space`` value pastes as one argument), every limit that differs
        from the hunt's default included."""
        from dataclasses import fields as limit_fields

        q = shlex.quote
        parts = ["stickyproof hunt", f"--assignor {q(self.assignor)}", f"--examples {self.examples}", f"--seed {self.seed}"]
        overrides = self.space.to_overrides()
        if overrides:
            parts.append("--space " + " ".join(q(o) for o in overrides))
        if self.min_stickiness is not None:
            parts.append(f"--min-stickiness {self.min_stickiness:g}")
        for f in limit_fields(self.limits):
            value, default = getattr(self.limits, f.name), getattr(DEFAULT_LIMITS, f.name)
            if value != default and f.name != "triage_seconds":
                shown = value if f.name == "shrink_evaluations" else _seconds(value)
                parts.append(f"--{f.name.replace('_', '-')} {shown}")
        if self.contract is not None:
            parts.append(f"--balance {self.contract}")
        if self.direct:
            parts.append("--direct")
        if self.keep_going:
            parts.append("--keep-going")
        parts += [f"--skip {q(k)}" for k in self.skip]
        if self.reference is not None:
            parts.append(f"--reference {q(self.reference)}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.assignor,
            "assignor_name": self.assignor_name,
            "seed": self.seed,
            "examples": self.examples,
            "tried": self.tried,
            "space": self.space.to_overrides(),
            "min_stickiness": self.min_stickiness,
            "limits": self.limits.to_dict(),
            "balance": self.contract,
            "direct": self.direct,
            "found": self.found,
            "finding": None if self.finding is None else self.finding.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
            "keep_going": self.keep_going,
            "skip": list(self.skip),
            "reference": self.reference,
            "worst_kept_delta": self.worst_kept_delta,
            "worst_stickiness": self.worst_stickiness,
            "seconds": round(self.seconds, 3),
            "command": self.command(),
        }


def _seconds(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


class _Found(Exception):
    """Raised inside the Hypothesis test to end the search at the first failing group."""


@dataclass
class _SearchState:
    tried: int = 0
    worst: float | None = None
    worst_scenario: Scenario | None = None
    #: signature -> (the first group failing that way, its verdict, the failure kind), in discovery order
    failing: dict[str, tuple[Scenario, Verdict, str]] = field(default_factory=dict)
    worst_delta: int | None = None
    worst_delta_scenario: Scenario | None = None


def _hunting_strategy(space: Space) -> Any:
    """``strategies.from_space(space)``, with half the draws from the upper half of the member range.

    Hypothesis draws short lists far more often than long ones (most groups it draws from the
    default space have one or two members); a fault that needs a crowd would otherwise be met late
    or not at all within a CI-sized example budget. Both halves stay inside ``space``.
    """
    from hypothesis import strategies as st

    from ..strategies import from_space

    low, high = space.members
    middle = (low + high + 1) // 2
    if middle <= low:
        return from_space(space)
    return st.one_of(from_space(space), from_space(replace(space, members=(middle, high))))


def _consumer_strategy(space: Space) -> Any:
    """``consumer_groups`` within the space's sizes, half the draws from the upper half of the member
    range (as ``_hunting_strategy``: KAFKA-18688 needs a member past the first to hold a "+1")."""
    from hypothesis import strategies as st

    from ..strategies import consumer_groups

    def groups(members: tuple[int, int]) -> Any:
        return consumer_groups(min_members=members[0], max_members=members[1], min_topics=space.topics[0],
                               max_topics=space.topics[1], max_partitions=space.partitions[1])

    low, high = space.members
    middle = (low + high + 1) // 2
    if middle <= low:
        return groups((low, high))
    return st.one_of(groups((low, high)), groups((middle, high)))


def consumer_admits(space: Space, scenario: Scenario) -> bool:
    """Whether a shrunk consumer group is still one the coordinator could hand over (its document
    passes the consumer-group validation unchanged) and within the space's member range."""
    from ..errors import StickyproofError
    from ..model import scenario_from_dict

    if not scenario.is_consumer_group or not space.members[0] <= len(scenario.members) <= space.members[1]:
        return False
    try:
        return scenario_from_dict(scenario_to_dict(scenario)) == scenario
    except StickyproofError:
        return False


def _search(
    info: AssignorInfo,
    space: Space,
    *,
    examples: int,
    seed: int,
    judge_one: Callable[[Scenario], Verdict],
    progress: Callable[[HuntProgress], None] | None,
    keep_going: bool = False,
) -> _SearchState:
    """Hypothesis over ``strategies.from_space(space)``, seeded, without a database, stopping at
    the first failing group, or with ``keep_going`` recording the first group of every failure
    signature (no Hypothesis shrinking: ``scenarios.shrink`` does that, for any source)."""
    from hypothesis import HealthCheck, Phase, Verbosity, assume, given, settings, target
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import Unsatisfiable

    state = _SearchState()

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        derandomize=False,
        deadline=None,
        phases=(Phase.generate, Phase.target),
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(_consumer_strategy(space) if server_side(info) else _hunting_strategy(space))
    def search(scenario: Scenario) -> None:
        if state.failing and not keep_going:  # Hypothesis replays the failing example once: fail again
            raise _Found()
        assume(not claims_invisible(scenario))
        state.tried += 1
        verdict = judge_one(scenario)
        if verdict.stickiness is not None:
            target(1.0 - float(verdict.stickiness), label="stickiness gap")
            if state.worst is None or verdict.stickiness < state.worst:
                state.worst, state.worst_scenario = verdict.stickiness, scenario
        if verdict.kept_delta is not None and (state.worst_delta is None or verdict.kept_delta < state.worst_delta):
            state.worst_delta, state.worst_delta_scenario = verdict.kept_delta, scenario
        if progress is not None:
            progress(HuntProgress("search", state.tried, examples, state.worst, verdict.first))
        for kind, signature in zip(verdict.failures, verdict.signatures):
            state.failing.setdefault(signature, (scenario, verdict, kind))
        if verdict.failed and not keep_going:
            raise _Found()

    try:
        search()
    except _Found:
        pass
    except Unsatisfiable as exc:
        raise InvalidSpace(
            "space",
            "Hypothesis could not draw a group the hunt can judge from this space (every draw was a cooperative "
            "group with v0 claims, which no assignor can see: see claims_invisible)",
        ) from exc
    except BaseException as exc:
        # Hypothesis wraps several failures in an ExceptionGroup; ours is the only kind raised.
        inner = getattr(exc, "exceptions", None)
        if not inner or not all(isinstance(e, _Found) for e in inner):
            raise
    return state


def hunt(
    assignor: str | AssignorInfo,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    space: Space | Sequence[str] | None = None,
    min_stickiness: float | None = None,
    contract: BalanceMode = None,
    direct: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    keep_going: bool = False,
    skip: Sequence[str] = (),
    reference: str | AssignorInfo | None = None,
    progress: Callable[[HuntProgress], None] | None = None,
) -> HuntResult:
    """Search ``space`` for a group on which ``assignor`` fails; shrink the first one found.

    ``assignor``: a registry name or ``module.path:callable`` (the contract is in
    ``stickyproof.assignors.registry``). ``examples``: how many groups Hypothesis draws at most.
    ``seed``: the Hypothesis seed; the same arguments give the same hunt. ``space``: a ``Space``
    or ``KNOB=VALUE`` overrides. ``min_stickiness``: a ratio in [0, 1] below which keeping too
    little is a failure. ``contract``: the balance notion the grade judges by (None: uniform on
    equal subscriptions, else global). ``direct``: hand the assignor the scenario's own fields
    (no wire). ``limits``: ``assignor_seconds`` bounds every assignor call; shrinking stops after
    ``shrink_evaluations`` judged candidates or ``shrink_seconds``, per finding.

    Triage: ``keep_going`` searches every example and keeps one minimal group per failure
    signature (``Verdict.signature``); ``skip`` leaves out failure kinds already understood
    (``unstable``, ``error:KeyError``, ...); ``reference`` judges a second assignor on every group,
    counts a failure only where the graded assignor fails and the reference does not, and tracks
    the largest shortfall in kept partitions against it.
    """
    started = time.perf_counter()
    info = assignor if isinstance(assignor, AssignorInfo) else get_assignor(assignor)
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
        raise InvalidSpace("examples", f"must be a positive integer, got {examples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidSpace("seed", f"must be an integer, got {seed!r}")
    if min_stickiness is not None and not 0.0 <= float(min_stickiness) <= 1.0:
        raise InvalidSpace("min_stickiness", f"must be between 0 and 1, got {min_stickiness!r}")
    if contract is not None and contract not in ("uniform", "global", "kafka"):
        raise InvalidSpace("balance", f"must be uniform, global or kafka, got {contract!r}")
    skipped = check_skip(tuple(skip))
    ref_info = None
    if reference is not None:
        ref_info = reference if isinstance(reference, AssignorInfo) else get_assignor(reference)
        if server_side(ref_info) != server_side(info):
            raise InvalidSpace("reference", f"{ref_info.name} and {info.name} assign different groups (a server-side "
                                            "assignor a consumer group, a classic one a leader's): compare like with like")
    if server_side(info) and contract is not None:
        raise InvalidSpace("balance", f"{info.name} is held to its own server-side contract (models/invariants.md §5.2)")
    hunted = hunting_space(space, info)
    if ref_info is not None:
        hunted = hunting_space(hunted, ref_info)

    def judge_one(s: Scenario) -> Verdict:
        verdict = judge(s, info, min_stickiness=min_stickiness, contract=contract, direct=direct, limits=limits)
        against = None
        if ref_info is not None:
            against = judge(s, ref_info, min_stickiness=min_stickiness, contract=contract, direct=direct, limits=limits)
        return triaged(verdict, skip=skipped, reference=against)

    state = _search(info, hunted, examples=examples, seed=seed, judge_one=judge_one, progress=progress,
                    keep_going=keep_going)
    admits = consumer_admits if server_side(info) else space_admits
    findings: list[Finding] = []
    for scenario, verdict, kind in state.failing.values():
        finding = _shrink_finding(scenario, verdict, hunted, judge_one, limits, state.worst, progress, wanted=kind,
                                  admits=admits)
        if all(f.signature != finding.signature for f in findings):
            findings.append(finding)
        if not keep_going:
            break
    return HuntResult(
        assignor=info.name,
        seed=seed,
        examples=examples,
        tried=state.tried,
        space=hunted,
        min_stickiness=min_stickiness,
        limits=limits,
        contract=contract,
        finding=findings[0] if findings else None,
        worst_stickiness=state.worst,
        worst_scenario=state.worst_scenario,
        seconds=time.perf_counter() - started,
        direct=direct,
        findings=tuple(findings),
        keep_going=keep_going,
        skip=skipped,
        reference=None if ref_info is None else ref_info.name,
        worst_kept_delta=state.worst_delta,
        worst_kept_delta_scenario=state.worst_delta_scenario,
        assignor_name=info.display or None,
    )


def _shrink_finding(
    failing: Scenario,
    verdict: Verdict,
    space: Space,
    judge_one: Callable[[Scenario], Verdict],
    limits: Limits,
    worst: float | None,
    progress: Callable[[HuntProgress], None] | None,
    *,
    wanted: str | None = None,
    admits: Callable[[Space, Scenario], bool] = space_admits,
) -> Finding:
    """Shrink ``failing`` while it stays in ``space`` and fails the same way.

    "The same way" starts as ``wanted`` (default: the group's first failure, ``FAILURE_KINDS``
    order); an error must keep its type. When the
    shrunk group shows a more severe failure than that one (a partition dropped in a cooperative
    round shows as ``imbalance`` until the group is shrunk to an eager one, where it is
    ``unassigned``), shrinking goes on for the more severe one, which is what is reported.
    """
    # a server-side contract's own failures (not-fixed-point, order-dependent, ...) rank after every kind
    rank = {k: i for i, k in enumerate(FAILURE_KINDS)}
    max_evaluations = limits.shrink_evaluations
    deadline = None if limits.shrink_seconds is None else time.monotonic() + limits.shrink_seconds
    current, current_verdict = failing, verdict
    wanted = wanted or verdict.first
    assert wanted is not None
    error_type = verdict.run_error.type if wanted in ERROR_KINDS and verdict.run_error else None
    evaluations, stopped_by = 0, "done"
    while True:
        target = wanted

        def still_fails(candidate: Scenario, target: str = target) -> bool:
            if not admits(space, candidate):
                return False
            return shows(judge_one(candidate), target, error_type)

        def report(done: int, s: Scenario, target: str = target, spent: int = evaluations) -> None:
            if progress is not None:
                size = scenario_size(s)
                progress(HuntProgress("shrink", spent + done, max_evaluations, worst, target, size["members"], size["partitions"]))

        shrunk = shrink_search(
            current, still_fails, max_evaluations=max_evaluations - evaluations, deadline=deadline, progress=report
        )
        evaluations += shrunk.evaluations
        stopped_by = shrunk.stopped_by
        final = judge_one(shrunk.scenario)
        if wanted not in final.failures:  # flaky (or clocked) on re-judging: keep the last group that failed
            break
        current, current_verdict = shrunk.scenario, final
        more_severe = final.first
        last = len(rank)
        if stopped_by != "done" or more_severe is None or rank.get(more_severe, last) >= rank.get(wanted, last):
            break
        wanted = more_severe
    return Finding(
        failure=wanted if wanted in current_verdict.failures else current_verdict.first or wanted,
        failures=current_verdict.failures,
        witness=current_verdict.witnesses.get(wanted, {}),
        scenario=current,
        original=failing,
        verdict=current_verdict,
        shrink_evaluations=evaluations,
        shrink_stopped_by=stopped_by,
    )


