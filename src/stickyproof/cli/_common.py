"""What every command shares: the parser class, the scenario argument, ``--json``, reading scenarios, the
size limits, the ``Limits`` flags, and the checked number types of other options.

One grammar for every command (issue 14): a scenario is a positional argument (a file, ``-`` for
standard input, or a bundled name), every command takes ``--json``, a limit has one spelling
everywhere (``grading.Limits``'s field names as flags), and a bad value is one line on stderr with
exit 2 naming the flag.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidScenario
from ..model import Scenario, dump_json, load_scenario

SCENARIO_HELP = "scenario file, '-' for standard input, or a bundled scenario name (see 'stickyproof scenarios list')"

#: The documented size limits (docs/limits.md): a scenario above either is refused before anything is
#: built, with exit 2 naming the limit. They admit the project's production scale (Kafka's large
#: test shape, 2,000 members x 1,000,000 partitions) with headroom; peak memory at the largest
#: accepted input is measured by benchmarks/limits.py.
DEFAULT_MAX_PARTITIONS = 1_000_000
DEFAULT_MAX_MEMBERS = 5_000


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2 (not usage + message), and a
    misspelt command or flag is answered with the closest real one ("did you mean --assignor?")."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}{_did_you_mean(self, message)} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        # A misspelt flag is named before argparse's own checks, which would otherwise report a
        # required option as missing ("one of --assignor --assignment is required" for --assignr).
        if args is not None and not any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            known = [o for a in self._actions for o in a.option_strings]
            for token in args:
                if token == "--":
                    break
                flag = token.split("=", 1)[0]
                if flag.startswith("--") and flag not in known and not any(o.startswith(flag) for o in known):
                    self.error(f"unrecognized argument {flag}")
        return super().parse_known_args(args, namespace)


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    import difflib
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        choices = re.findall(r"'([^']*)'", m.group(2))
        close = difflib.get_close_matches(m.group(1), choices, n=1)
        return f"; did you mean {close[0]!r}?" if close else ""
    m = re.search(r"unrecognized arguments?:? (--[\w-]+)", message)
    if m:
        known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
        close = difflib.get_close_matches(m.group(1), known, n=1)
        return f"; did you mean {close[0]}?" if close else ""
    return ""


def print_json(doc: Any) -> None:
    sys.stdout.write(dump_json(doc) + "\n")


def add_scenario_arg(p: argparse.ArgumentParser, name: str = "scenario") -> None:
    p.add_argument(name, metavar="SCENARIO", help=SCENARIO_HELP)


def add_json_flag(p: argparse.ArgumentParser, what: str = "print the result as JSON") -> None:
    p.add_argument("--json", action="store_true", help=what)


# ------------------------------------------------------------------------------------------
# Numbers: checked at parse time, so a bad value is argparse's one line naming the flag


def positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def any_int(text: str) -> int:
    return _integer(text)


def fraction(text: str) -> float:
    """A number in 0..1 (a stickiness ratio); nan and inf are not."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}")
    return value


def _integer(text: str) -> int:
    stripped = text.strip()
    if len(stripped) > 30:  # never hand int() 5,000 digits
        raise argparse.ArgumentTypeError(f"expected an integer, got {len(stripped)} characters")
    try:
        return int(stripped)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


# ------------------------------------------------------------------------------------------
# Scenarios, and the size limits


def add_size_flags(p: argparse.ArgumentParser) -> None:
    """``--max-partitions`` and ``--max-members``: the documented size limits, for commands that build
    every partition (assign, solve, check, grade, simulate)."""
    p.add_argument("--max-partitions", type=positive_int, default=DEFAULT_MAX_PARTITIONS, metavar="N",
                   help=f"refuse a scenario with more than N partitions in its topics (default {DEFAULT_MAX_PARTITIONS:,}; "
                   "see docs/limits.md)")
    p.add_argument("--max-members", type=positive_int, default=DEFAULT_MAX_MEMBERS, metavar="N",
                   help=f"refuse a scenario with more than N members (default {DEFAULT_MAX_MEMBERS:,})")


def check_size(scenario: Scenario, max_partitions: int | None, max_members: int | None) -> Scenario:
    """``scenario``, or InvalidScenario naming the limit it exceeds (counted by arithmetic, never built)."""
    if max_partitions is not None:
        total = scenario.partition_count()
        if total > max_partitions:
            raise InvalidScenario(
                "topics", f"{total:,} partitions in total, more than --max-partitions {max_partitions:,} "
                "(a documented limit, docs/limits.md; raise it with --max-partitions N)")
    if max_members is not None and len(scenario.members) > max_members:
        raise InvalidScenario(
            "members", f"{len(scenario.members):,} members, more than --max-members {max_members:,} "
            "(a documented limit, docs/limits.md; raise it with --max-members N)")
    return scenario


def sized(args: argparse.Namespace, scenario: Scenario) -> Scenario:
    """``check_size`` with the command's ``--max-partitions``/``--max-members`` (when it has them)."""
    return check_size(scenario, getattr(args, "max_partitions", None), getattr(args, "max_members", None))


def load_scenario_ref(ref: str, args: argparse.Namespace | None = None) -> Scenario:
    """A scenario file path, ``-`` for standard input, or the name of a bundled scenario; checked
    against the size limits of ``args`` when given."""
    from ..scenarios import named

    if ref == "-" or Path(ref).exists():
        scenario = load_scenario(ref)
    elif ref in named.names():
        scenario = named.get(ref)
    else:
        raise InvalidScenario("", f"{ref}: no such file, and no bundled scenario of that name (see 'stickyproof scenarios list')")
    return sized(args, scenario) if args is not None else scenario


def add_protocol_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--protocol", choices=("eager", "cooperative"), default=None,
                   help="run the scenario under this rebalance protocol instead of its own (re-run a bundled "
                   "scenario under the other one)")


def with_protocol(scenario: Scenario, protocol: str | None, assignors: dict[str, tuple[str, ...]]) -> Scenario:
    """``scenario`` under ``--protocol`` (unchanged when None). ``assignors``: each member's assignor
    names as the run will configure them. A cooperative run needs every member's assignors to support
    cooperative (R36); otherwise the member would run eager (or the consumer refuse to start), and
    the flag would not do what it says: ``InvalidOption`` naming ``--protocol`` and the member."""
    from dataclasses import replace

    from ..errors import InvalidOption, StickyproofError
    from ..lookup import get_assignor

    if protocol is None or protocol == scenario.protocol:
        return scenario
    if protocol == "cooperative":
        for member, names in assignors.items():
            for name in names:
                try:
                    supported = get_assignor(name).protocols
                except StickyproofError:
                    continue  # the run names it, with its own field
                if "cooperative" not in supported:
                    raise InvalidOption("--protocol", f"cooperative: {member}'s assignor {name} supports only "
                                        f"{', '.join(supported)} (R36); give --assignor a cooperative one, e.g. cooperative-sticky")
    return replace(scenario, protocol=protocol)


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


def write_text(path: str, text: str) -> None:
    """Write an output file; a path that cannot be written is InvalidScenario naming it (exit 2)."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InvalidScenario("", f"{path}: cannot write ({exc.strerror or exc})") from exc


# ------------------------------------------------------------------------------------------
# The Limits flags: one spelling per bound, for every command that has it (grading.Limits)

_LIMIT_FLAGS = {
    "assignor_seconds": "seconds one assignor call may take",
    "z3_query_seconds": "seconds one Z3 query of the invariant check may take",
    "cpsat_work": "CP-SAT's budget for one solve, in its deterministic time units (the same answer whatever the load)",
    "cpsat_seconds": "seconds one CP-SAT solve may take (wall-clock safety stop)",
    "shrink_seconds": "seconds spent shrinking one failure",
    "triage_seconds": "seconds the triage spends shrinking, all findings together",
    "shrink_evaluations": "candidate groups judged while shrinking one failure",
}


def _default_shown(name: str, default: Any) -> str:
    """The default as ``--help`` states it: the value in force (grading.Limits says what each bounds)."""
    if name == "assignor_seconds" and default is None:
        from ..grading import OUT_OF_PROCESS_CALL_SECONDS

        return (f"none for stickyproof's own assignors; {OUT_OF_PROCESS_CALL_SECONDS:g} for an assignor in another "
                "process (exec:, a client adapter, module:callable), which is always bounded")
    return "none" if default is None else f"{default:g}"


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
        shown = _default_shown(name, default)
        if name == "shrink_evaluations":
            p.add_argument(flag, type=any_int, default=default, metavar="N", help=f"{_LIMIT_FLAGS[name]} (default {shown})")
        else:
            p.add_argument(flag, type=_seconds, default=default, metavar="W" if name == "cpsat_work" else "S",
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
