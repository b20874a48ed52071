"""What every command shares: the parser class, JSON output, reading scenarios, the ``Limits`` flags."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidScenario
from ..model import Scenario, dump_json, load_scenario


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2 (not usage + message)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def print_json(doc: Any) -> None:
    sys.stdout.write(dump_json(doc) + "\n")


def load_scenario_ref(ref: str) -> Scenario:
    """A scenario file path, ``-`` for standard input, or the name of a bundled scenario."""
    from ..scenarios import named

    if ref == "-" or Path(ref).exists():
        return load_scenario(ref)
    if ref in named.names():
        return named.get(ref)
    raise InvalidScenario("", f"{ref}: no such file, and no bundled scenario of that name (see 'stickyproof scenarios list')")


def read_json_arg(ref: str) -> Any:
    """Read a JSON document from a file path or ``-``."""
    from ..model import parse_json

    if ref == "-":
        return parse_json(sys.stdin.buffer.read(), "standard input")
    try:
        data = Path(ref).read_bytes()
    except OSError as exc:
        raise InvalidScenario("", f"{ref}: cannot read ({exc.strerror or exc})") from exc
    return parse_json(data, ref)


# ------------------------------------------------------------------------------------------
# The Limits flags: one spelling per bound, for every command that has it (grading.Limits)

_LIMIT_FLAGS = {
    "assignor_seconds": "seconds one assignor call may take",
    "z3_query_seconds": "seconds one Z3 query of the invariant check may take",
    "cpsat_seconds": "seconds the CP-SAT solver may take",
    "shrink_seconds": "seconds spent shrinking failures",
    "shrink_evaluations": "candidate groups judged while shrinking one failure",
}


def _seconds(text: str) -> float | None:
    """A number of seconds, or ``none`` for no limit; range checks are ``Limits``'s (exit 2 naming the flag)."""
    if text.strip().lower() in ("none", "off", "unlimited"):
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds or 'none', got {text!r}") from None


def add_limit_flags(p: argparse.ArgumentParser, defaults: Any, *names: str) -> None:
    """Add ``--assignor-seconds`` ... for the ``grading.Limits`` fields ``names``, defaulting to ``defaults``'s."""
    for name in names:
        default = getattr(defaults, name)
        flag = "--" + name.replace("_", "-")
        shown = "none" if default is None else f"{default:g}"
        if name == "shrink_evaluations":
            p.add_argument(flag, type=int, default=default, metavar="N", help=f"{_LIMIT_FLAGS[name]} (default {shown})")
        else:
            p.add_argument(flag, type=_seconds, default=default, metavar="S",
                           help=f"{_LIMIT_FLAGS[name]}; 'none' for no limit (default {shown})")


def limits_from(args: argparse.Namespace, defaults: Any) -> Any:
    """The ``grading.Limits`` the flags ask for (``InvalidOption`` naming the flag when one is out of range)."""
    from dataclasses import fields, replace

    from ..errors import InvalidOption

    changes = {f.name: getattr(args, f.name) for f in fields(defaults) if hasattr(args, f.name)}
    try:
        return replace(defaults, **changes)
    except InvalidOption as exc:
        flag = "--" + exc.option.replace("_", "-")
        raise InvalidOption(flag, str(exc).split(": ", 1)[-1]) from exc
