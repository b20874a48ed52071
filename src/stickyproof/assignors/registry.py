"""The assignor registry: built-in assignors, their historical variants, and user callables.

Names
-----
``range``, ``roundrobin``                     Kafka's RangeAssignor / RoundRobinAssignor (eager only)
``sticky``, ``sticky@2.2``, ``@2.3``, ``@2.4``, ``@2.6``, ``@2.8.1``, ``@3.3``, ``@3.4``, ``@3.5.1``, ``@3.6``
                                              StickyAssignor, current and as released in those lines (eager only)
``cooperative-sticky``, ``cooperative-sticky@2.4``, ``@2.6``, ``@2.8.1``, ``@3.3``, ``@3.4``, ``@3.5.1``, ``@3.6``
                                              CooperativeStickyAssignor (cooperative and eager)
``uniform``, ``uniform@4.0.0``, ``uniform@3.9.1``, ``consumer-range``
                                              KIP-848 server-side assignors (``assignors.consumer``): they assign
                                              consumer groups only (``AssignorInfo.consumer_group``), and are
                                              found by name but not listed by ``list_assignors()`` (classic only)
``package.module:callable``                   a user assignor (below)

``get_assignor(name)`` returns a frozen ``AssignorInfo``; ``list_assignors()`` the built-ins in that
order. ``kafka_name`` is the protocol name a member announces in JoinGroup (what the group votes on
and what ``ConsumerCoordinator`` compares with ``"cooperative-sticky"``, R39). The sticky rows are
built from the ``releases.Release`` records, one row per record: a release added there is listed
here.

Each row also carries what the leader needs from the assignor besides its answer: ``user_data``
(``subscriptionUserData``: the bytes a member in a given state sends) and ``member_data``
(``memberData``: the claims and generation the assignor attributes to a decoded member, R1-R4),
so the leader names no assignor. ``user_data_for(kafka_name, release)`` and
``member_data_for(kafka_name, release)`` look the same callables up by protocol name: what a Java
member running Kafka's ``kafka_name`` assignor of that release sends, for an assignor in another
process that declares itself as one.

User assignors
--------------
``stickyproof assign SCENARIO --assignor mypkg.assignors:balanced`` imports ``mypkg.assignors`` and
takes its attribute ``balanced`` (a dotted path such as ``Cls.method`` works too). The callable:

* receives **one plain dict**, a scenario document of docs/scenario-format.md holding the group as the
  leader decoded it: ``protocol`` (``"eager"``/``"cooperative"``), ``topics`` (the leader's metadata:
  every topic it knows, with partition count and replica racks), and ``members`` in JoinGroup order,
  each with ``id``, ``topics``, ``rack``, ``instance_id``, ``version``, and ``owned``/``generation``
  **as the wire delivered them**: a v0 member's ``owned`` is empty (the field does not exist at v0),
  a v0/v1 member's ``generation`` is -1 (likewise), an eager member's ``owned`` is empty (R37: it
  revoked everything before joining), and a negative generation arrives as -1 (R3). Assignor user
  data is not included; ``assignors`` is empty. With ``--direct`` the dict holds the scenario's own
  values instead. ``stickyproof.model.scenario_from_dict`` reads it back into a ``Scenario``.
* returns either ``{member_id: {topic: [partition, ...]}}`` or a full assignment document
  ``{"format": "stickyproof.assignment/1", "assignment": {...}, "revoking": {...}}``. Members left
  out get nothing. The value is checked like any assignment document (types, negative partitions,
  unknown member ids; a partition listed twice is kept, for the graders to report as ``duplicate``):
  a bad value raises ``InvalidScenario`` naming the path, e.g. ``result.c1.orders[2]``. Whether the assignment is any good is the graders' business, not the
  registry's.
* may raise anything: the exception is wrapped in ``AssignorFailure`` (its type and message kept,
  the original chained as ``__cause__``); an ``AssignorFailure`` it raises passes through unchanged.
* may declare ``supported_protocols = ("cooperative", "eager")`` as an attribute (default
  ``("eager",)``, like Kafka's ``ConsumerPartitionAssignor.supportedProtocols``) and
  ``assignor_name = "..."`` (default: the ``module:callable`` reference) for the group protocol vote.

An import failure, a missing attribute, or an attribute that is not callable raises
``UnknownAssignor`` saying which.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

from ..errors import AssignorFailure, InvalidScenario, UnknownAssignor
from functools import partial

from ..model import (
    Assignment,
    Member,
    Scenario,
    assignment_from_dict,
    partitions_by_topic,
    scenario_to_dict,
)
from .base import COOPERATIVE, EAGER, AssignorFn, GroupSubscription
from .consumer import SERVER_SIDE_RELEASES, assign_consumer_group
from .info import AssignorInfo
from .range import assign_range
from .releases import RELEASES, Release
from .roundrobin import assign_roundrobin
from .sticky import assign as assign_release
from .sticky_types import MemberData
from .user_data import member_data

__all__ = [
    "AssignorInfo",
    "builtin",
    "unknown_builtin",
    "load_user_assignor",
    "list_assignors",
    "group_to_dict",
    "user_data_for",
    "member_data_for",
    "led_as",
    "BUILTIN_NAMES",
    "consumer_group_row",
    "list_consumer_group_assignors",
]

EAGER_ONLY = (EAGER,)


# ------------------------------------------------------------------------------------------
# Built-ins


def _release_row(release: Release) -> AssignorInfo:
    """A sticky row, every field read from its release record."""
    return AssignorInfo(
        name=release.name,
        kafka_name=release.kafka_name,
        variant=release.version,
        protocols=release.protocols,
        fn=partial(assign_release, release=release),
        description=release.description,
        release=release,
        user_data=release.user_data.encode,
        member_data=partial(member_data, release=release),
        claims_from_user_data=release.user_data.carries_assignment,
    )


_BUILTINS: tuple[AssignorInfo, ...] = (
    AssignorInfo("range", "range", "current", EAGER_ONLY, assign_range,
                 "RangeAssignor: per-topic contiguous ranges over members sorted by instance id, then member id; "
                 "rack-aware since 3.5 (KIP-881)", contract="per-topic"),
    AssignorInfo("roundrobin", "roundrobin", "current", EAGER_ONLY, assign_roundrobin,
                 "RoundRobinAssignor: all partitions dealt one by one over the sorted members, skipping non-subscribers",
                 contract="uniform-if-equal"),
    *(_release_row(release) for release in RELEASES),
)


def consumer_group_row(name: str, kafka_name: str, assign: Callable[[Scenario], Assignment], description: str,
                       *, variant: str = "current", contract: str = "kafka") -> AssignorInfo:
    """A row for a server-side (KIP-848) assignor: ``consumer_group`` assigns a consumer-group
    scenario; ``fn``, the classic leader's entry, refuses (a coordinator assignor never sees a
    JoinGroup), so no classic protocol is listed."""

    def classic(group: GroupSubscription) -> Assignment:
        raise AssignorFailure(
            f"{name} is a server-side (KIP-848) assignor: it assigns consumer groups (group_protocol \"consumer\"), "
            "not a classic leader's group"
        )

    return AssignorInfo(name, kafka_name, variant, (), classic, description, contract=contract, consumer_group=assign)


def _consumer_builtin(name: str) -> Callable[[Scenario], Assignment]:
    return partial(assign_consumer_group, name=name)


_CONSUMER_GROUP_BUILTINS: tuple[AssignorInfo, ...] = (
    *(consumer_group_row(r.name, r.kafka_name, _consumer_builtin(r.name), r.description, variant=r.version)
      for r in SERVER_SIDE_RELEASES),
    consumer_group_row("consumer-range", "range", _consumer_builtin("consumer-range"),
                       "the group coordinator's RangeAssignor (KIP-848, server side): per-topic contiguous ranges over "
                       "members sorted by instance id, then member id; ignores the current target"),
)
_BY_NAME: dict[str, AssignorInfo] = {info.name: info for info in _BUILTINS}
BUILTIN_NAMES: tuple[str, ...] = tuple(_BY_NAME)
_BY_NAME.update({info.name: info for info in _CONSUMER_GROUP_BUILTINS})


def list_consumer_group_assignors() -> tuple[AssignorInfo, ...]:
    """The built-in server-side (KIP-848) assignors, in a fixed order (not in ``list_assignors()``)."""
    return _CONSUMER_GROUP_BUILTINS


_BY_PROTOCOL: dict[tuple[str, str], AssignorInfo] = {(info.kafka_name, info.variant): info for info in _BUILTINS}


def list_assignors() -> tuple[AssignorInfo, ...]:
    """The built-in assignors and variants, in a fixed order."""
    return _BUILTINS


def _builtin_by_protocol(kafka_name: str, release: str) -> AssignorInfo:
    info = _BY_PROTOCOL.get((kafka_name, release))
    if info is None:
        raise UnknownAssignor(
            f"no built-in assignor {kafka_name!r} as of {release!r} is modelled (known: {', '.join(BUILTIN_NAMES)})"
        )
    return info


def user_data_for(kafka_name: str, release: str = "current") -> Callable[[Member], bytes | None]:
    """What a Java member running Kafka's ``kafka_name`` assignor (as of ``release``) sends as user data.

    ``user_data_for("sticky")(member)`` is the V1 user data of Kafka's current ``StickyAssignor`` for
    a member in that state (its owned partitions and generation); ``range``/``roundrobin`` send none.
    Raises ``UnknownAssignor`` for a protocol name or release that is not modelled.
    """
    return _builtin_by_protocol(kafka_name, release).user_data


def led_as(kafka_name: str, **fields: Any) -> AssignorInfo:
    """An ``AssignorInfo`` for an assignor outside the registry (a peer) that registers under
    ``kafka_name``. Under one of Kafka's own names its members are led as Java members running
    Kafka's current assignor of that name: the same user data, member data and R39 exemption (what
    a peer implementing that protocol name must interoperate with). Any other name is led as a user
    assignor: wire fields only, no user data."""
    builtin = _BY_PROTOCOL.get((kafka_name, "current"))
    if builtin is None:
        return AssignorInfo(kafka_name=kafka_name, variant=fields.pop("variant", "peer"), user=True, **fields)
    fields.setdefault("contract", builtin.contract)  # the promise of Kafka's assignor of that name
    return AssignorInfo(
        kafka_name=kafka_name,
        variant="current",
        user=False,
        user_data=builtin.user_data,
        member_data=builtin.member_data,
        claims_from_user_data=builtin.claims_from_user_data,
        **{k: v for k, v in fields.items() if k != "variant"},
    )


def member_data_for(kafka_name: str, release: str = "current") -> Callable[..., MemberData]:
    """How Kafka's ``kafka_name`` assignor (as of ``release``) reads a decoded subscription: ``memberData`` (R1-R4)."""
    return _builtin_by_protocol(kafka_name, release).member_data


def builtin(name: str) -> AssignorInfo | None:
    """The built-in row named ``name`` (``range``, ``sticky@2.2``...), or None. Names of other
    kinds (peers, ``module:callable``) are resolved by ``stickyproof.lookup``, above this registry."""
    return _BY_NAME.get(name)


def unknown_builtin(name: str) -> UnknownAssignor:
    """The error for a name that is no built-in and no other kind of name either: a misspelt
    variant lists the variants, anything else the built-ins."""
    base = name.split("@", 1)[0]
    variants = [n for n in BUILTIN_NAMES if n.split("@", 1)[0] == base]
    if variants:
        return UnknownAssignor(f"unknown variant {name!r}; {base} has: {', '.join(variants)}")
    import difflib

    close = difflib.get_close_matches(name, BUILTIN_NAMES, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return UnknownAssignor(
        f"unknown assignor {name!r}; {hint}known: {', '.join(BUILTIN_NAMES)}, CLIENT:NAME for another client's (stickyproof assignors lists them), "
        "or module.path:callable for a user assignor"
    )


# ------------------------------------------------------------------------------------------
# User callables


def load_user_assignor(ref: str) -> AssignorInfo:
    """``module.path:callable`` imported and wrapped in this process (the contract: models/assignor-protocol.md §8).
    ``get_assignor`` runs user callables in a worker process; the worker itself loads them with this."""
    module_name, _, attr_path = ref.partition(":")
    if not module_name or not attr_path or ":" in attr_path:
        raise UnknownAssignor(f"{ref!r}: a user assignor is written module.path:callable")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownAssignor(f"{ref}: cannot import module {module_name!r} ({exc})") from exc
    except Exception as exc:  # the user's module failed while importing: report it as a lookup failure
        raise UnknownAssignor(f"{ref}: importing module {module_name!r} raised {type(exc).__name__}: {exc}") from exc
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise UnknownAssignor(
                f"{ref}: module {module_name!r} has no attribute {attr_path!r} "
                f"(known built-in assignors: {', '.join(BUILTIN_NAMES)})"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise UnknownAssignor(f"{ref}: {attr_path!r} is a {type(obj).__name__}, not a callable")
    protocols = _declared_protocols(ref, getattr(obj, "supported_protocols", EAGER_ONLY))
    kafka_name = getattr(obj, "assignor_name", ref)
    if not isinstance(kafka_name, str) or not kafka_name:
        raise UnknownAssignor(f"{ref}: assignor_name must be a non-empty string, got {kafka_name!r}")
    contract = getattr(obj, "contract", "kafka")
    if not isinstance(contract, str) or not contract:
        raise UnknownAssignor(f"{ref}: contract must be a contract name (models/invariants.md §5), got {contract!r}")
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return AssignorInfo(
        name=ref,
        kafka_name=kafka_name,
        variant="user",
        protocols=protocols,
        fn=_wrap_user_callable(ref, obj),
        description=doc[0] if doc else f"user assignor {ref}",
        user=True,
        contract=contract,
    )


def _declared_protocols(ref: str, declared: Any) -> tuple[str, ...]:
    if isinstance(declared, str) or not isinstance(declared, (tuple, list, frozenset, set)):
        raise UnknownAssignor(f"{ref}: supported_protocols must be a tuple of 'eager'/'cooperative', got {declared!r}")
    bad = [p for p in declared if p not in (EAGER, COOPERATIVE)]
    if bad or not declared:
        raise UnknownAssignor(f"{ref}: supported_protocols must be a non-empty tuple of 'eager'/'cooperative', got {declared!r}")
    return tuple(p for p in (COOPERATIVE, EAGER) if p in declared)


def group_to_dict(group: GroupSubscription) -> dict[str, Any]:
    """The group as the user-callable contract hands it over: a scenario document (see the module docstring)."""
    members = tuple(
        Member(
            id=s.member_id,
            topics=tuple(s.topics),
            owned=tuple(s.owned),
            generation=-1 if s.generation is None or s.generation < 0 else s.generation,
            version=s.version,
            rack=s.rack,
            instance_id=s.instance_id,
        )
        for s in group.members
    )
    return scenario_to_dict(Scenario(tuple(group.metadata.values()), members, group.protocol, ""))


def _wrap_user_callable(ref: str, fn: Callable[[dict[str, Any]], Any]) -> AssignorFn:
    def run(group: GroupSubscription) -> Assignment:
        doc = group_to_dict(group)
        try:
            result = fn(doc)
        except AssignorFailure:
            raise
        except Exception as exc:
            raise AssignorFailure(f"user assignor {ref} raised {type(exc).__name__}: {exc}") from exc
        return _read_user_result(ref, result, [s.member_id for s in group.members])

    run.__name__ = run.__qualname__ = f"user[{ref}]"
    return run


def _read_user_result(ref: str, result: Any, member_ids: list[str]) -> Assignment:
    """Validate what a user callable returned (InvalidScenario naming ``result.<path>``)."""
    if not isinstance(result, Mapping):
        raise InvalidScenario("result", f"user assignor {ref} returned {type(result).__name__}, expected an object of member id to partitions")
    if "format" in result:
        try:
            assignment = assignment_from_dict(result)
        except InvalidScenario as exc:
            raise InvalidScenario(f"result.{exc.path}" if exc.path else "result", f"{exc.detail} (returned by {ref})") from exc
        raw_assignment, revoking = dict(assignment.assignment), dict(assignment.revoking)
        where = "result.assignment"
    else:
        raw_assignment, revoking = {}, {}
        for member_id, partitions in result.items():
            if not isinstance(member_id, str):
                raise InvalidScenario("result", f"member ids must be strings, got {member_id!r} (returned by {ref})")
            raw_assignment[member_id] = partitions_by_topic(partitions, f"result.{member_id}", allow_repeats=True)
        where = "result"
    known = set(member_ids)
    for section, mapping in ((where, raw_assignment), ("result.revoking", revoking)):
        for member_id in mapping:
            if member_id not in known:
                raise InvalidScenario(f"{section}.{member_id}", f"not a member of the group (returned by {ref})")
    return Assignment({m: tuple(raw_assignment.get(m, ())) for m in member_ids}, {m: v for m, v in revoking.items() if v})
