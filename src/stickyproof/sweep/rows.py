"""One sweep row: grade one (seed, index, assignor) and flatten the Grade into a fixed set of columns.

This is the whole unit of work of a sweep, kept free of Spark so that it can be unit-tested on
its own and reused by the multiprocessing baseline in ``benchmarks/sweep.py``: the Spark job
(``sweep/job.py``) only maps ``grade_group`` over (seed, index) rows.

A row never raises. A scenario that makes the sampler, the leader, an assignor or an oracle
throw becomes a row whose ``error`` column says ``stage: TypeName: message``, with its validity
columns null (not known) and ``valid`` false, so one bad group cannot fail a sweep of thousands.

A row whose pair cannot occur in Kafka (an eager-only assignor on a cooperative group, R36) is
kept with ``skipped`` saying why and every grade column null: it is neither graded nor failing,
and summaries leave it out.

Column meanings (the invariant names are those of ``models/invariants.md`` in snake_case): an
invariant column is true when the grade found that invariant violated, false when it did not,
null when the row has an error and nothing was checked.
"""

from __future__ import annotations

import hashlib
import json
import math
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..grading import Limits
from ..model import Scenario, dump_json, jsonable, scenario_to_dict

__all__ = [
    "INVARIANTS",
    "FEATURE_COLUMNS",
    "COLUMNS",
    "RowParams",
    "RowFn",
    "arrow_schema",
    "empty_row",
    "error_row",
    "error_text",
    "grade_group",
    "grade_row",
    "is_failing",
    "skipped_row",
    "scenario_hash",
    "scenario_class",
    "basic_features",
]

# Every invariant a Grade can report, as column names (snake_case of the invariant ids).
INVARIANTS: tuple[str, ...] = (
    "unassigned",
    "duplicate",
    "unsubscribed",
    "nonexistent",
    "imbalance",
    "cooperative_unsafe",
    "revoking_unclaimed",
    "nondeterministic",
    "unstable",
)

# Scenario features, one column each, from ``scenarios.features.scenario_features`` (``partitions``
# counts the metadata, ``subscribed_partitions`` the assignable ones; the sizes plots use the latter).
FEATURE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("members", "int"),
    ("topics", "int"),
    ("partitions", "int"),
    ("subscribed_partitions", "int"),
    ("subscription", "str"),
    ("versions", "str"),
    ("min_version", "int"),
    ("owned_claims", "int"),
    ("stale_claimants", "int"),
    ("unknown_generation_claimants", "int"),
    ("double_claims", "int"),
    ("deleted_topic_claims", "int"),
    ("past_count_claims", "int"),
    ("unsubscribed_claims", "int"),
    ("racks", "str"),
    ("static_members", "int"),
    ("protocol", "str"),
)

# (name, kind) in output order. kind: int | float | bool | str.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("seed", "int"),
    ("index", "int"),
    ("assignor", "str"),
    ("scenario_hash", "str"),
    ("valid", "bool"),
    *((name, "bool") for name in INVARIANTS),
    ("violations", "str"),
    ("balanced_kafka", "bool"),
    ("balanced_global", "bool"),
    ("kept", "int"),
    ("optimal_kept", "int"),
    ("optimal_kept_global", "int"),
    ("proven", "bool"),
    ("stickiness", "float"),
    ("moved", "int"),
    ("assign_seconds", "float"),
    ("solve_seconds", "float"),
    ("error", "str"),
    ("skipped", "str"),
    *FEATURE_COLUMNS,
    ("scenario", "str"),
)
_KINDS = dict(COLUMNS)

# The scenario JSON is kept only on failing rows (it becomes failures/ and triage input).
_WITNESS_LIMIT = 2000


@dataclass(frozen=True)
class RowParams:
    """What every row of one sweep shares: the sampler space (as ``KNOB=VALUE`` overrides) and the
    grading limits (``grading.Limits``; a row uses ``assignor_seconds`` and ``z3_query_seconds``)."""

    space: tuple[str, ...] = ()
    limits: Limits = Limits()


RowFn = Callable[[int, int, Sequence[str], RowParams], list[dict[str, Any]]]


def arrow_schema() -> Any:
    """The pyarrow schema of a grades row (every column nullable except the key)."""
    import pyarrow as pa

    types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string()}
    key = {"seed", "index", "assignor"}
    return pa.schema([pa.field(name, types[kind], nullable=name not in key) for name, kind in COLUMNS])


def empty_row(seed: int, index: int, assignor: str) -> dict[str, Any]:
    """A row with its key set and every other column null."""
    row: dict[str, Any] = {name: None for name, _ in COLUMNS}
    row.update(seed=int(seed), index=int(index), assignor=str(assignor))
    return row


def is_failing(row: Mapping[str, Any]) -> bool:
    """A row that goes to failures/: an invariant violated, or an error."""
    return bool(row.get("error")) or row.get("valid") is False


def skipped_row(seed: int, index: int, assignor: str, reason: str, scenario: Scenario) -> dict[str, Any]:
    """The row of a pair that cannot occur in Kafka: graded neither way, kept so resume sees the key."""
    row = empty_row(seed, index, assignor)
    row.update(features_of(scenario))
    row["scenario_hash"] = scenario_hash(scenario)
    row["skipped"] = reason
    return row


def scenario_hash(scenario: Scenario) -> str:
    """Content hash of the canonical scenario document: what ``compare`` joins two runs on."""
    text = json.dumps(scenario_to_dict(scenario), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def scenario_class(row: Mapping[str, Any]) -> str:
    """The class a summary groups rows by: subscription kind and protocol (``?`` when unknown)."""
    return f"{row.get('subscription') or '?'}/{row.get('protocol') or '?'}"


def basic_features(scenario: Scenario) -> dict[str, Any]:
    """The features that follow from the scenario alone (used when the sampler gives none)."""
    subscribed = scenario.subscribed_partitions()
    kinds = {tuple(sorted(set(m.topics))) for m in scenario.members}
    return {
        "members": len(scenario.members),
        "topics": len(scenario.topics),
        "partitions": sum(t.partitions for t in scenario.topics),
        "subscribed_partitions": len(subscribed),
        "subscription": "uniform" if len(kinds) <= 1 else "heterogeneous",
        "versions": ",".join(str(v) for v in sorted({m.version for m in scenario.members})),
        "protocol": scenario.protocol,
    }


def _coerce(name: str, value: Any) -> Any:
    """A value in the column's kind, or None; a value of the wrong kind is a bug upstream, so it raises."""
    if value is None:
        return None
    kind = _KINDS[name]
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise TypeError(f"column {name}: expected a boolean, got {type(value).__name__} {value!r}")
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise TypeError(f"column {name}: expected an integer, got {type(value).__name__} {value!r}")
        return int(value)
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"column {name}: expected a number, got {type(value).__name__} {value!r}")
        value = float(value)
        return None if math.isnan(value) else value
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(str(v) for v in sorted(value))
    return str(value)


def features_of(scenario: Scenario) -> dict[str, Any]:
    """Feature columns: the sampler's ``scenario_features`` where it names them, the basic ones otherwise."""
    from ..scenarios.features import scenario_features

    features = basic_features(scenario)
    given = dict(scenario_features(scenario))
    for name, _ in FEATURE_COLUMNS:
        if given.get(name) is not None:
            features[name] = given[name]
    return {name: _coerce(name, features.get(name)) for name, _ in FEATURE_COLUMNS}


def error_text(stage: str, exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    where = ""
    tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        last = tb[-1]
        where = f" (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
    return f"{stage}: {type(exc).__name__}: {message[:500]}{where}"


def error_row(seed: int, index: int, assignor: str, error: str, scenario: Scenario | None = None) -> dict[str, Any]:
    """The row of a group whose grading threw: key, features when known, ``valid`` false, the error."""
    row = empty_row(seed, index, assignor)
    row["valid"] = False
    row["error"] = error
    if scenario is not None:
        row.update(features_of(scenario))
        row["scenario_hash"] = scenario_hash(scenario)
        row["scenario"] = dump_json(scenario_to_dict(scenario))
    return row


def _violations_text(violations: Iterable[Any]) -> str:
    items = []
    for v in violations:
        if isinstance(v, (tuple, list)) and len(v) == 2:
            items.append({"invariant": str(v[0]), "witness": jsonable(v[1])})
        else:
            items.append({"invariant": str(getattr(v, "invariant", v)), "witness": jsonable(getattr(v, "witness", None))})
    text = json.dumps(items, sort_keys=True, default=str)
    return text if len(text) <= _WITNESS_LIMIT else text[: _WITNESS_LIMIT - 3] + "..."


def invariant_column(invariant: Any) -> str:
    """``cooperative-unsafe`` / ``CooperativeUnsafe`` / ``cooperative_unsafe`` -> ``cooperative_unsafe``."""
    text = str(getattr(invariant, "value", invariant))
    out = []
    for i, ch in enumerate(text):
        if ch.isupper() and i and text[i - 1].islower():
            out.append("_")
        out.append("_" if ch in "- ." else ch.lower())
    return "".join(out)


def grade_to_row(seed: int, index: int, assignor: str, scenario: Scenario, grade: Any) -> dict[str, Any]:
    """Flatten a ``stickyproof.oracle.grade.Grade`` into a row."""
    row = empty_row(seed, index, assignor)
    row.update(features_of(scenario))
    row["scenario_hash"] = scenario_hash(scenario)
    violations = list(getattr(grade, "violations", ()) or ())
    violated = {invariant_column(v[0] if isinstance(v, (tuple, list)) else getattr(v, "invariant", v)) for v in violations}
    unknown = violated - set(INVARIANTS)
    if unknown:
        raise ValueError(f"grade reported invariants with no column: {', '.join(sorted(unknown))}")
    error = getattr(grade, "error", None)
    for name in INVARIANTS:
        row[name] = name in violated
    row["violations"] = _violations_text(violations) if violations else None
    balanced = getattr(grade, "balanced", None) or {}
    row["balanced_kafka"] = _coerce("balanced_kafka", balanced.get("kafka"))
    row["balanced_global"] = _coerce("balanced_global", balanced.get("global"))
    for name in ("kept", "optimal_kept", "optimal_kept_global", "proven", "stickiness", "moved", "assign_seconds", "solve_seconds"):
        row[name] = _coerce(name, getattr(grade, name, None))
    row["valid"] = _coerce("valid", getattr(grade, "valid", None))
    if error:
        row["error"] = str(error)
        row["valid"] = False
    if is_failing(row):
        row["scenario"] = dump_json(scenario_to_dict(scenario))
    return row


def grade_row(scenario: Scenario, seed: int, index: int, assignor: str, params: RowParams = RowParams()) -> dict[str, Any]:
    """Grade one assignor on one scenario (``grading.grade_assignor``); never raises."""
    from ..grading import grade_assignor, unsupported_reason

    try:
        from ..assignors.registry import get_assignor

        info = get_assignor(assignor)
    except Exception as exc:  # noqa: BLE001 - an unloadable assignor is this row's error
        return error_row(seed, index, assignor, error_text("registry", exc), scenario)
    reason = unsupported_reason(scenario, info)
    if reason is not None:
        # R36: a consumer refuses a rebalance protocol none of its assignors supports, so an
        # eager-only assignor never meets a cooperative group; such a row is not a failure.
        return skipped_row(seed, index, assignor, f"{scenario.protocol} protocol unsupported (R36)", scenario)
    try:
        g = grade_assignor(scenario, info, limits=params.limits)
    except Exception as exc:  # noqa: BLE001 - any crash becomes the row's error
        return error_row(seed, index, assignor, error_text("grade", exc), scenario)
    try:
        return grade_to_row(seed, index, assignor, scenario, g)
    except Exception as exc:  # noqa: BLE001
        return error_row(seed, index, assignor, error_text("row", exc), scenario)


def sample_scenario(seed: int, index: int, params: RowParams) -> Scenario:
    """The (seed, index) scenario of the seeded sampler, in the space the sweep was asked for."""
    from ..scenarios.sampler import Space, sample

    space = Space.from_overrides(list(params.space)) if params.space else None
    return sample(seed, index, space)


def grade_group(seed: int, index: int, assignors: Sequence[str], params: RowParams = RowParams()) -> list[dict[str, Any]]:
    """Sample the (seed, index) group once and grade every named assignor on it: one row each."""
    try:
        scenario = sample_scenario(seed, index, params)
    except Exception as exc:  # noqa: BLE001 - a sampler crash is recorded, not raised
        error = error_text("sample", exc)
        return [error_row(seed, index, a, error) for a in assignors]
    return [grade_row(scenario, seed, index, a, params) for a in assignors]

