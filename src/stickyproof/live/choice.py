"""Which classic assignor a live group runs when a chosen library lacks one the history names.

    settings, note = choose_assignor(scenario, schedule, settings)

A bundled history names the assignor its members run in the simulator (``kip341-stale-rejoin``: eager
``sticky``), and a real group can only run what every member's library ships: librdkafka has no eager
``sticky``. Refusing such a history with ``--clients java,librdkafka`` would make the bundled histories
unusable with that library, so when ``--assignor`` is not given and some member's library lacks its
assignor, every member runs the first assignor that every chosen library runs, from a stated
preference: the history's own assignors (in the order they appear), then ``cooperative-sticky``, then
``range`` (every library has it). The change is said in one line (``note``), which the command writes on
standard error, so a reader never takes a ``cooperative-sticky`` run for the ``sticky`` one the history
names. ``--assignor`` given and unsupported stays ``check_live``'s refusal (exit 2): a name the user chose
is never replaced. A name no live library runs at all (a release such as ``sticky@2.2``) is the
simulator's, not a library gap, and stays refused too.
"""

from __future__ import annotations

from dataclasses import replace

from ..group.events import Schedule
from ..model import Scenario
from .run import CLIENT_ASSIGNORS, LiveSettings, member_clients

__all__ = ["PREFERENCE", "choose_assignor", "history_assignors"]

PREFERENCE = ("cooperative-sticky", "range")
"""After the history's own assignors, in this order: the first every chosen library runs is used."""


def history_assignors(scenario: Scenario, schedule: Schedule) -> list[tuple[str, str]]:
    """(member, assignor name) for every assignor the scenario's members and the history's joins and
    restarts name, in the order they appear (a member that names none runs ``range``, as a live run
    starts it)."""
    out: list[tuple[str, str]] = []
    for m in scenario.members:
        out += [(m.id, n) for n in (m.assignors or ("range",))]
    for e in schedule.events:
        if e.event == "join" or (e.event == "restart" and "assignors" in e.given):
            out += [(e.member or "", n) for n in (e.assignors or ("range",))]
    return out


def choose_assignor(scenario: Scenario, schedule: Schedule, settings: LiveSettings) -> tuple[LiveSettings, str | None]:
    """``settings`` with ``assignor`` set, and the one line saying so, when a member's library lacks an
    assignor the history names (module docstring); ``settings`` unchanged and ``None`` otherwise."""
    if settings.assignor is not None or settings.group_protocol != "classic" or not settings.clients:
        return settings, None
    if any(c not in CLIENT_ASSIGNORS for c in settings.clients):
        return settings, None  # check_live names the unknown library
    clients = member_clients(scenario, schedule, settings.clients)
    known = {n for names in CLIENT_ASSIGNORS.values() for n in names}
    named = history_assignors(scenario, schedule)
    lacking = [(clients.get(member, settings.clients[0]), name) for member, name in named
               if name in known and name not in CLIENT_ASSIGNORS[clients.get(member, settings.clients[0])]]
    if not lacking:
        return settings, None
    for candidate in [*dict.fromkeys(n for _, n in named), *PREFERENCE]:
        if all(candidate in CLIENT_ASSIGNORS[c] for c in settings.clients):
            client, name = lacking[0]
            note = f"{client} has no {name}: every member runs {candidate}; --assignor NAME to choose"
            return replace(settings, assignor=candidate), note
    return settings, None  # no common assignor: check_live refuses, naming the member's field
