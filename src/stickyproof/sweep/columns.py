"""The columns of a sweep's Parquet rows: one table of two kinds, their schema and their coercion.

Every task of a sweep (one history, or one sampled group, with one assignor) writes rows of one
Arrow schema, told apart by ``kind``:

- ``rebalance``: one graded leader input. For ``source=histories`` one per rebalance of the history
  (``rebalance`` = its number, 1, 2, ..., follow-ups included), with where it came from; for
  ``source=adversarial`` one per sampled group (``rebalance`` = 0).
- ``history``: one per history run (``rebalance`` null): the history measures (moves against the
  per-rebalance optimum, follow-ups, unowned partition-rebalances, each monitor's verdict).

The key of a row is (``seed``, ``index``, ``rebalance``, ``assignor``); (``seed``, ``index``,
``assignor``) is a task, which resume counts as done once any of its rows is committed (a task's rows
are committed together, ``store.py``). What each grade column means is models/invariants.md §4;
``sweep/rows.py`` fills them.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = [
    "INVARIANTS",
    "BALANCE_MODES",
    "MONITORS",
    "FEATURE_COLUMNS",
    "KEY_COLUMNS",
    "REBALANCE_COLUMNS",
    "HISTORY_COLUMNS",
    "COLUMNS",
    "arrow_schema",
    "empty_row",
    "coerce",
    "invariant_column",
    "monitor_column",
    "is_failing",
    "with_failing",
    "REBALANCE",
    "HISTORY",
]

REBALANCE = "rebalance"
HISTORY = "history"

#: Every invariant a grade can report, as column names (snake_case of models/invariants.md's ids).
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

#: The balance verdicts of a grade (quality columns; only the contract's mode is a promise).
BALANCE_MODES: tuple[str, ...] = ("uniform", "global", "kafka", "per-topic", "pairwise")

#: The simulator's monitors (models/protocol.md §7), one verdict column each on a history row.
MONITORS: tuple[str, ...] = (
    "no-double-consumption",
    "generations-increase",
    "stable-ownership",
    "cooperative-convergence",
    "no-rebalance-loop",
)

# Features of the leader's input, from ``scenarios.features.scenario_features`` (``partitions`` counts
# the metadata, ``subscribed_partitions`` the assignable ones; the size plots use the latter).
FEATURE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("members", "int"),
    ("topics", "int"),
    ("partitions", "int"),
    ("subscribed_partitions", "int"),
    ("subscription", "str"),
    ("empty_subscriptions", "int"),
    ("versions", "str"),
    ("min_version", "int"),
    ("owned_claims", "int"),
    ("stale_claimants", "int"),
    ("unknown_generation_claimants", "int"),
    ("contested_partitions", "int"),
    ("double_claims", "int"),
    ("deleted_topic_claims", "int"),
    ("past_count_claims", "int"),
    ("unsubscribed_claims", "int"),
    ("racks", "str"),
    ("static_members", "int"),
    ("protocol", "str"),
)

KEY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("kind", "str"),
    ("source", "str"),
    ("seed", "int"),
    ("index", "int"),
    ("rebalance", "int"),
    ("assignor", "str"),
)

# (name, kind) in output order. kind: int | float | bool | str.
REBALANCE_COLUMNS: tuple[tuple[str, str], ...] = (
    # where the row comes from (a history's rebalance; null for a sampled group)
    ("scale", "str"),
    ("event", "str"),
    ("event_tick", "int"),
    ("trigger", "str"),
    ("follow_up", "bool"),
    ("generation", "int"),
    ("epoch", "int"),
    ("tick", "int"),
    ("leader", "str"),
    ("committed", "bool"),
    # the grade (models/invariants.md §4)
    ("contract", "str"),
    ("notion", "str"),
    ("valid", "bool"),
    *((name, "bool") for name in INVARIANTS),
    ("violations", "str"),
    ("contract_balanced", "bool"),
    *((f"balanced_{mode.replace('-', '_')}", "bool") for mode in BALANCE_MODES),
    ("kept", "int"),
    ("optimal_kept", "int"),
    ("proven", "bool"),
    ("stickiness", "float"),
    ("unnecessary", "int"),
    ("unnecessary_list", "str"),
    ("moved", "int"),
    ("owned", "int"),
    ("optimal_moves", "int"),
    ("optimal_kept_global", "int"),
    ("optimal_kept_view", "int"),
    ("grade_follow_ups", "int"),
    ("stability_judged", "bool"),
    ("assign_seconds", "float"),
    ("solve_seconds", "float"),
    ("grade_seconds", "float"),
    ("error", "str"),
    # what failed (grading.failure): the verdict's failure kinds, the first one's signature, and
    # whether the row fails at all (a verdict with failures, or a crash of the grading)
    ("failures", "str"),
    ("signature", "str"),
    ("failing", "bool"),
    ("hazards", "str"),
    ("hazard_categories", "str"),
    ("unexpected", "str"),
    ("skipped", "str"),
    *FEATURE_COLUMNS,
    ("scenario_hash", "str"),
    ("scenario", "str"),
)

HISTORY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "str"),
    ("episodes", "str"),
    ("start_members", "int"),
    ("start_partitions", "int"),
    ("rebalances", "int"),
    ("follow_ups", "int"),
    ("committed_rebalances", "int"),
    ("failing_rows", "int"),
    ("moved_total", "int"),
    ("moved_known", "int"),
    ("optimal_moves_known", "int"),
    ("known_rows", "int"),
    ("unowned", "int"),
    *((monitor_name, "bool") for monitor_name in (f"monitor_{m.replace('-', '_')}" for m in MONITORS)),
    ("monitor_failures", "str"),
    ("ended", "str"),
    ("ticks", "int"),
    ("run_seconds", "float"),
    ("history_seconds", "float"),
    ("replay", "str"),
)

#: Every column once, in output order: keys, the rebalance columns, then the history ones
#: (``error`` is shared).
_KINDS: dict[str, str] = {}
for _name, _kind in KEY_COLUMNS + REBALANCE_COLUMNS + HISTORY_COLUMNS:
    if _KINDS.setdefault(_name, _kind) != _kind:  # pragma: no cover - a definition error
        raise AssertionError(f"column {_name} defined with two kinds")
COLUMNS: tuple[tuple[str, str], ...] = tuple(_KINDS.items())
_NOT_NULL = {"kind", "source", "seed", "index", "assignor"}


def arrow_schema() -> Any:
    """The pyarrow schema of a row (every column nullable except the task key and the kind)."""
    import pyarrow as pa

    types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string()}
    return pa.schema([pa.field(name, types[kind], nullable=name not in _NOT_NULL) for name, kind in COLUMNS])


def empty_row(kind: str, source: str, seed: int, index: int, assignor: str, rebalance: int | None = None) -> dict[str, Any]:
    """A row with its key set and every other column null."""
    row: dict[str, Any] = {name: None for name, _ in COLUMNS}
    row.update(kind=kind, source=source, seed=int(seed), index=int(index), assignor=str(assignor), rebalance=rebalance)
    return row


def coerce(name: str, value: Any) -> Any:
    """``value`` in the column's kind, or None; a value of the wrong kind is a bug upstream, so it raises."""
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


def invariant_column(invariant: Any) -> str:
    """``cooperative-unsafe`` / ``CooperativeUnsafe`` / ``cooperative_unsafe`` -> ``cooperative_unsafe``."""
    text = str(getattr(invariant, "value", invariant))
    out = []
    for i, ch in enumerate(text):
        if ch.isupper() and i and text[i - 1].islower():
            out.append("_")
        out.append("_" if ch in "- ." else ch.lower())
    return "".join(out)


def monitor_column(monitor: str) -> str:
    """``no-double-consumption`` -> ``monitor_no_double_consumption``."""
    return "monitor_" + monitor.replace("-", "_")


def is_failing(row: Mapping[str, Any]) -> bool:
    """A rebalance row that broke a promise (``valid`` false) or whose grading crashed (``error`` without a
    verdict): ``grading.failure.failing_row``, the one definition."""
    from ..grading.failure import failing_row

    return failing_row(row)


def with_failing(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with its ``failing`` column set by the one definition (null on a history row): every
    row a task returns passes here before it is written (``job.map_slots``), so readers of the rows
    (summary, findings, triage, report) read the column instead of deciding again."""
    if isinstance(row, dict) and row.get("kind") == REBALANCE:  # anything else fails its Arrow batch later
        row["failing"] = is_failing(row)
    return row
