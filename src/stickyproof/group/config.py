"""Simulation settings, member configuration, and the historical-fault switches (models/protocol.md §1, §3, §5)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Iterable, Mapping

from ..assignors.base import COOPERATIVE, EAGER
from ..errors import InvalidScenario, StickyproofError

__all__ = [
    "GroupConfig",
    "MemberConfig",
    "FEATURES",
    "PROTOCOL_SETTINGS",
    "check_features",
    "rebalance_protocol_of",
    "without_user_data_generation",
    "config_from_dict",
    "client_era",
]

#: The switches of ``--without FEATURE`` (models/protocol.md §5), in the order the docs list them.
FEATURES = (
    "generation-in-user-data",
    "generation-in-subscription",
    "cooperative-validation",
    "join-prepare-after-reset",
)

#: KIP-429's ``rebalance.protocol`` values a member may pin; ``compatible`` behaves eager.
PROTOCOL_SETTINGS = ("eager", "compatible", "cooperative")



@dataclass(frozen=True)
class GroupConfig:
    """Timing and bounds, in ticks (one tick = one heartbeat interval)."""

    session_timeout: int = 6
    rebalance_timeout: int = 10
    rediscovery: int = 1
    restart_downtime: int = 1
    initial_rebalance_delay: int = 2
    max_ticks: int = 600
    loop_bound: int = 5
    cooperative_bound: int = 2

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidScenario(f"config.{f.name}", f"must be a positive integer, got {value!r}")


def config_from_dict(doc: Any, path: str = "config", base: GroupConfig | None = None) -> GroupConfig:
    """Read the ``config`` object of an events file over ``base`` (unknown keys are an error naming them)."""
    base = base or GroupConfig()
    if doc is None:
        return base
    if not isinstance(doc, Mapping):
        raise InvalidScenario(path, "must be an object of setting name to ticks")
    known = {f.name for f in fields(GroupConfig)}
    for key in doc:
        if key not in known:
            raise InvalidScenario(f"{path}.{key}", f"unknown setting (known: {', '.join(sorted(known))})")
    changes = {}
    for key, value in doc.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidScenario(f"{path}.{key}", f"must be a positive integer, got {value!r}")
        changes[key] = value
    return replace(base, **changes)


@dataclass(frozen=True)
class MemberConfig:
    """What a consumer process is configured with; a restart or upgrade replaces it."""

    name: str
    topics: tuple[str, ...]
    assignors: tuple[str, ...]
    version: int = 3
    rack: str | None = None
    instance_id: str | None = None
    protocol: str | None = None  # a pinned KIP-429 setting, or None: derived (R36)


def check_features(without: Iterable[str]) -> frozenset[str]:
    """Validate ``--without`` names."""
    out = frozenset(without)
    unknown = sorted(out - set(FEATURES))
    if unknown:
        raise InvalidScenario("without", f"unknown feature {unknown[0]!r} (known: {', '.join(FEATURES)})")
    return out


#: The client faults of the releases the historical assignor variants shipped in: before 3.0 a reset
#: during a join round skipped onJoinPrepare (KAFKA-12983) and no subscription carried a generation
#: (KIP-792's v2, like the rack's v3, came later). 3.0 to 3.3 clients had the KAFKA-12983 fix but
#: still no v2 (3.4); 3.4 on had both. ``--without`` names.
_PRE_3_0_CLIENT = frozenset({"generation-in-subscription", "join-prepare-after-reset"})
_CLIENT_ERA = {"2.2": _PRE_3_0_CLIENT, "2.3": _PRE_3_0_CLIENT, "2.4": _PRE_3_0_CLIENT, "2.6": _PRE_3_0_CLIENT,
               "2.8.1": _PRE_3_0_CLIENT, "3.3": frozenset({"generation-in-subscription"}), "3.5.1": frozenset()}


def client_era(variant: str) -> frozenset[str]:
    """The ``--without`` switches of the clients an assignor release ran in (none for current and user assignors)."""
    return _CLIENT_ERA.get(variant, frozenset())


def without_user_data_generation(names: Iterable[str]) -> tuple[str, ...]:
    """``--without generation-in-user-data``: each assignor as last released before its user data had a
    generation (KIP-341 for ``sticky``; KAFKA-12984 in 3.0 for ``cooperative-sticky``), read off the
    release records; a name with no such release is kept."""
    from ..assignors.releases import releases_of

    def older(name: str) -> str:
        blind = [r for r in releases_of(name) if r.version != "current" and not r.generation_in_user_data]
        newest = max(blind, key=lambda r: tuple(int(p) for p in r.version.split(".")), default=None)
        return newest.name if newest is not None else name

    return tuple(older(n) for n in names)


def rebalance_protocol_of(config: MemberConfig, cap: str = COOPERATIVE, path: str = "", *,
                          resolve: Callable[[str], Any] | None = None) -> str:
    """The member's rebalance protocol (R36): the highest protocol every configured assignor supports.

    ``cap`` is the scenario's protocol (an ``eager`` scenario runs every member eager, like
    KIP-429's ``rebalance.protocol=eager``); a pinned ``compatible`` is eager behaviour and a pinned
    ``cooperative`` needs every assignor to support it.
    """
    if resolve is None:
        from ..lookup import get_assignor as resolve

    where = path or f"member {config.name}"
    if not config.assignors:
        raise InvalidScenario(
            f"{path}.assignors" if path else "assignors",
            f"{config.name} lists no assignor (give members[].assignors, the event's assignors, or --assignor)",
        )
    supported = {COOPERATIVE, EAGER}
    for name in config.assignors:
        try:
            info = resolve(name)
        except StickyproofError as exc:
            raise InvalidScenario(f"{path}.assignors" if path else "assignors", str(exc)) from exc
        supported &= set(info.protocols)
    if not supported:
        raise InvalidScenario(
            f"{path}.assignors" if path else "assignors",
            f"{where}: no rebalance protocol is supported by all of {', '.join(config.assignors)} (R36: a configuration error)",
        )
    if config.protocol in ("eager", "compatible"):
        return EAGER
    if config.protocol == "cooperative":
        if COOPERATIVE not in supported:
            raise InvalidScenario(
                f"{path}.protocol" if path else "protocol",
                f"{where}: cooperative needs every assignor to support it ({', '.join(config.assignors)} do not)",
            )
        return COOPERATIVE
    if cap == EAGER:
        return EAGER
    return COOPERATIVE if COOPERATIVE in supported else EAGER
