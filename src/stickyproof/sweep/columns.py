"""The columns of a sweep's Parquet rows: one table of two kinds, their schema and their coercion.

Every task of a sweep (one history, or one sampled group, with one assignor) writes rows of one
Arrow schema, told apart by ``kind``:

- ``rebalance``: one graded leader input. For ``source=histories`` one per rebalance of the history
  (``rebalance`` = its number, 1, 2, ..., follow-ups included), with where it came from; for
  ``source=adversarial`` one per sampled group (``rebalance`` = 0).
- ``history``: one per history run (``rebalance`` null): the history measures (moves against the
  per-rebalance optimum, follow-ups, unowned partition-rebalances, each monitor's verdict).

The key of a row is (``seed``, ``index``, ``rebalance``, ``assignor``), and ``migration`` for a
history row (a consumer history's task also writes its migration's row); (``seed``, ``index``,
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
    "DESCRIPTIONS",
    "columns_page",
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
    # a consumer group's (KIP-848) target computation: the server-side contract and the optimum
    # (grading/consumer.py, models/invariants.md §5.2); null on classic rows
    ("consumer_contract", "str"),
    ("consumer_subscription", "str"),
    ("consumer_fixed_point_owed", "bool"),
    ("not_fixed_point", "bool"),
    ("order_dependent", "bool"),
    ("not_contiguous", "bool"),
    ("kept_below_promise", "bool"),
    ("consumer_stable", "bool"),
    ("consumer_order_reordered", "str"),
    ("consumer_order_renamed", "str"),
    ("consumer_at_optimum", "bool"),
    ("consumer_first_worse_tier", "str"),
    ("consumer_gap_sum_squares", "int"),
    ("consumer_gap_spread", "int"),
    ("consumer_gap_rack_local", "int"),
    ("consumer_gap_kept", "int"),
    *FEATURE_COLUMNS,
    ("scenario_hash", "str"),
    ("scenario", "str"),
)

HISTORY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "str"),
    ("migration", "bool"),
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
    # the history lived through its protocol: convergence and ownership per tick (both protocols), the
    # consumer protocol's own moves and monitors (sweep/consumer_protocol.py)
    ("converge_ticks_median", "float"),
    ("converge_ticks_max", "int"),
    ("converge_events", "str"),
    ("unsettled_ticks", "int"),
    ("unowned_ticks", "int"),
    ("coordinator", "str"),
    ("protocol_moved", "int"),
    ("monitors_failed", "str"),
    ("monitor_hazards", "str"),
    ("monitor_unexpected", "str"),
    *((monitor_name, "bool") for monitor_name in (f"monitor_{m.replace('-', '_')}" for m in MONITORS)),
    ("monitor_failures", "str"),
    ("ended", "str"),
    ("ticks", "int"),
    ("run_seconds", "float"),
    ("history_seconds", "float"),
    ("replay", "str"),
)

#: One line per column: what a reader of the Parquet rows needs to know (``docs/columns.md`` is
#: rendered from this, ``python -m stickyproof.sweep.columns``; a test fails when a column written
#: has no line here, or a line names no column). Units and nulls are stated where they are not obvious.
DESCRIPTIONS: dict[str, str] = {
    # keys
    "kind": "`rebalance` (one graded leader input) or `history` (one history run's measures)",
    "source": "`histories` (rows from group histories run through the protocol) or `adversarial` (sampled groups)",
    "seed": "the sweep's seed; with `index`, it reproduces the history or the sampled group",
    "index": "the history's (or sampled group's) number within the seed",
    "rebalance": "the rebalance's number within its history (1, 2, ..., follow-ups included); 0 for a sampled group; null on a history row",
    "assignor": "the assignor's name as the sweep was given it (`sticky`, `cooperative-sticky@2.4`, `exec:...`)",
    # where the row comes from
    "scale": "the history's size preset (`small`, `medium`, `large`, ...)",
    "event": "the last history event before the rebalance started (the cause a person would name, e.g. `c3 joins (t0)`); for a consumer group, the event that bumped the group epoch",
    "event_tick": "the simulator tick of that event",
    "trigger": "the coordinator's own reason for starting the rebalance (`c3 joined`, `c2's session expired`); for a consumer group, the event's kind (`join`, `leave`, `crash`, `subscribe`, `partitions`, `topic-created`)",
    "follow_up": "true when a cooperative member's rejoin after revoking started it (R38): it completes an earlier rebalance",
    "generation": "the generation the leader assigned for",
    "epoch": "the coordinator epoch (a fail-over that loses the group's state starts a new one); for a consumer group, the group epoch the target is computed for",
    "tick": "the simulator tick of the leader's step",
    "leader": "the member id of the leader that ran the assignor",
    "committed": "the coordinator stored the answer (false for a failed leader, or one that stalled and ran late)",
    # the grade
    "contract": "the assignor's promise of balance (`kafka`, `per-topic`, ...; models/invariants.md §5)",
    "notion": "the balance notion the optimum `optimal_kept` is computed in",
    "valid": "the assignor kept every promise of its contract on this rebalance; null when the grading crashed or the row was skipped",
    "unassigned": "invariant broken: an assignable partition was left unassigned",
    "duplicate": "invariant broken: a partition was placed twice",
    "unsubscribed": "invariant broken: a partition went to a member not subscribed to its topic",
    "nonexistent": "invariant broken: a partition that does not exist was assigned",
    "imbalance": "invariant broken: the assignment is unbalanced in the contract's own notion",
    "cooperative_unsafe": "invariant broken: a claimed partition went to a member other than its claimant in one cooperative round",
    "revoking_unclaimed": "invariant broken: a member was told to revoke a partition it did not claim",
    "nondeterministic": "invariant broken: the same input gave another answer",
    "unstable": "invariant broken: the assignor fed its own answer moved partitions again",
    "violations": "JSON list of the broken invariants with their witnesses (bounded to 2,000 characters)",
    "contract_balanced": "the settled assignment (after cooperative follow-ups) keeps the contract's balance",
    "balanced_uniform": "quality: balanced in the `uniform` mode (null unless subscriptions are equal)",
    "balanced_global": "quality: globally balanced (no chain of moves to subscribers lowers the sum of squared loads; C4)",
    "balanced_kafka": "quality: Kafka's `verifyValidityAndBalance` (no two members two apart in load hold the same topic; R33)",
    "balanced_per_topic": "quality: balanced topic by topic (range's promise)",
    "balanced_pairwise": "quality: Kafka's `isBalanced` (no member holds a topic's partition while a subscriber of it holds two fewer; R30)",
    "kept": "partitions the assignment leaves with the member that really owned them (per what members held, not what they said)",
    "optimal_kept": "the most any assignment balanced in the contract's notion keeps (valid rows only); 0 when nothing could be kept",
    "proven": "`optimal_kept` is proven (CP-SAT OPTIMAL or an exact engine); false: an upper bound",
    "stickiness": "`kept / optimal_kept`, 0 to 1 (1.0 when the optimum keeps nothing); valid rows only",
    "unnecessary": "number of partitions the optimum keeps with their owner and the assignor moved (a consumer-group row: "
                   "`optimal_kept - kept`, unmeasured where `stickiness` is)",
    "unnecessary_list": "JSON list of those partitions as `[topic, partition]` (bounded to 2,000 characters)",
    "moved": "partitions with a current owner that the assignment does not leave with it (reassigned, withheld or dropped)",
    "owned": "partitions with a current owner before the rebalance",
    "optimal_moves": "`owned - optimal_kept`: the fewest moves the contract allows",
    "optimal_kept_global": "quality reference: the most a globally balanced assignment keeps over what members held",
    "optimal_kept_view": "the same over what the wire let the assignor see (the difference is what the wire version hides)",
    "grade_follow_ups": "cooperative follow-up rounds the grading replayed to reach the settled assignment",
    "stability_judged": "the `unstable` invariant was checked (the assignor sees its own history)",
    "assign_seconds": "the assignor call, in seconds (timing: varies run to run)",
    "solve_seconds": "the optima's solver time, in seconds (timing: varies run to run)",
    "grade_seconds": "the whole grading of the row, in seconds (timing: varies run to run)",
    "error": "`stage: Type: message` of an exception: the assignor's (with a verdict) or the grading's own crash (`valid` null)",
    "failures": "the verdict's failure kinds, most severe first (`error`, `time-limit`, then invariant ids; grading/failure.py)",
    "signature": "the first failure's signature (an invariant id, `error:<Type>:<message>`, or `error:<stage>:<Type>` for a crash)",
    "failing": "the row fails: a broken promise or a crash of its grading (the one definition, grading/failure.py)",
    "hazards": "`failure:rule` pairs: each failure a known Kafka behaviour explains, and the rule (docs/rules.md)",
    "hazard_categories": "the categories of those rules (e.g. `hazard`, `kafka-bug`)",
    "unexpected": "failure kinds no rule explains (comma-separated)",
    "skipped": "why the row was not graded (an eager-only assignor on a cooperative group, R36); null when graded",
    # consumer groups (KIP-848): one row per target computation of the group coordinator
    "consumer_contract": "a consumer group's row: the server-side contract held (`uniform-homogeneous`, `uniform-heterogeneous`, `consumer-range`; models/invariants.md §5.2)",
    "consumer_subscription": "a consumer group's row: `homogeneous` or `heterogeneous`, as the coordinator classifies the subscriptions",
    "consumer_fixed_point_owed": "a consumer group's row: the input already keeps the contract, so it is owed back unchanged",
    "not_fixed_point": "consumer contract broken: an input owed back unchanged was moved (KAFKA-18688's symptom)",
    "order_dependent": "consumer contract broken: listing or naming the members otherwise changed more than the contract allows",
    "not_contiguous": "consumer contract broken: server-side range gave a member a non-contiguous range of a topic",
    "kept_below_promise": "consumer contract broken: kept fewer partitions than a within-one assignment keeps (homogeneous uniform)",
    "consumer_stable": "a consumer group's row: the assignor handed its own answer as the targets returns it unchanged",
    "consumer_order_reordered": "a consumer group's row: members listed in reverse gave `identical`, `same-sizes-and-kept` or `differs`",
    "consumer_order_renamed": "a consumer group's row: every member id respelled gave `identical`, `same-sizes-and-kept` or `differs`",
    "consumer_at_optimum": "a consumer group's row: the answer equals the proven optimum of balance, spread, rack locality, then kept",
    "consumer_first_worse_tier": "a consumer group's row: the first objective tier where the answer is worse than the optimum (`balance`, `spread`, `racks`, `kept`)",
    "consumer_gap_sum_squares": "a consumer group's row: the answer's sum of squared member sizes minus the optimum's",
    "consumer_gap_spread": "a consumer group's row: the answer's per-topic spread minus the optimum's",
    "consumer_gap_rack_local": "a consumer group's row: rack-local partitions the optimum has and the answer lacks",
    "consumer_gap_kept": "a consumer group's row: partitions the optimum keeps and the answer does not",
    # features of the leader's input (scenarios/features.py)
    "members": "members in the leader's input",
    "topics": "topics in the leader's metadata",
    "partitions": "partitions in the leader's metadata",
    "subscribed_partitions": "assignable partitions: existing partitions of subscribed topics",
    "subscription": "the subscription shape: `uniform`, `nested`, `disjoint`, `heterogeneous` or `empty`",
    "empty_subscriptions": "members subscribed to nothing",
    "versions": "the ConsumerProtocolSubscription versions members speak (comma-separated)",
    "min_version": "the lowest of those versions (-1 with no member)",
    "owned_claims": "owned partitions the members claimed, counted per claim",
    "stale_claimants": "claiming members whose known generation is below the group's highest",
    "unknown_generation_claimants": "claiming members whose generation is -1 (old clients, reset members)",
    "contested_partitions": "partitions claimed by more than one member",
    "double_claims": "partitions claimed by two members of the same known generation (R8)",
    "deleted_topic_claims": "claims on topics that no longer exist",
    "past_count_claims": "claims on partition numbers at or past the topic's count (K1)",
    "unsubscribed_claims": "claims on topics the claimant no longer subscribes to",
    "racks": "where rack information is: `none`, `members`, `replicas` or `both`",
    "static_members": "members with a `group.instance.id` (static membership)",
    "protocol": "the rebalance protocol in force (`eager` or `cooperative`; `consumer` for a KIP-848 group); on a history row, every protocol its rows saw",
    "scenario_hash": "content hash of the leader's input (compare pairs rows of two sweeps by it)",
    "scenario": "a failing row's leader input as JSON, with its verdict as a regression file (also in `DIR/failures/`); null otherwise",
    # history rows
    "name": "the history's name",
    "migration": "true on a classic -> consumer migration's row (sweep/migration_rows.py: a classic group upgraded online "
                 "to KIP-848's protocol, sometimes downgraded back), which shares its task's (seed, index, assignor) with "
                 "the consumer history's row; null on every other row",
    "episodes": "the kinds of episode the history was drawn from (comma-separated)",
    "start_members": "members at the start of the history",
    "start_partitions": "partitions in the cluster at the start",
    "rebalances": "rebalances the run recorded (follow-ups included)",
    "follow_ups": "cooperative follow-up rebalances among them",
    "committed_rebalances": "rebalances whose answer the coordinator stored",
    "failing_rows": "the history's failing rebalance rows",
    "moved_total": "partitions moved, summed over every graded rebalance",
    "moved_known": "partitions moved, summed over rebalances whose optimum is known",
    "optimal_moves_known": "the optimum's moves summed over the same rebalances",
    "known_rows": "rebalances whose optimum is known",
    "unowned": "partition-rebalances spent unowned: over cooperative rebalances, subscribed partitions the leader gave nobody",
    "converge_ticks_median": "ticks (heartbeat intervals; both simulators) the group took to settle after an event, the median over the "
                             "history's events (per event: from its tick to the first tick that ended settled, inclusive; "
                             "the start counts from the first join); null when the run measured none",
    "converge_ticks_max": "the most ticks any event of the history took to settle (as `converge_ticks_median`)",
    "converge_events": "each event's ticks to settle, in tick order, comma-separated (events in one tick are one; "
                       "bounded to 2,000 characters)",
    "unsettled_ticks": "ticks that ended with the group unsettled (a rebalance or reconciliation under way, or a "
                       "timeout still to come): the heartbeats spent converging",
    "unowned_ticks": "partition-ticks unowned: over every tick, the partitions of subscribed, existing topics that no "
                     "running member owns (an eager rebalance leaves all of them; a cooperative or KIP-848 one the moved "
                     "ones); null for a classic run by the `simulator` engine",
    "coordinator": "a consumer history: the KIP-848 coordinator release it ran on (`current`; docs/consumer-protocol.md)",
    "protocol_moved": "a consumer history: partitions a member gave up while staying in the group (same process and "
                      "member id) over the protocol run; compare `optimal_moves_known`",
    "monitors_failed": "a consumer history: the consumer protocol's monitors that failed (comma-separated; "
                       "docs/consumer-protocol.md); null when all held",
    "monitor_hazards": "`monitor:label` for each failed monitor a known Kafka design explains (`no-double-ownership:"
                       "zombie`: a member cut off past its session still fetching)",
    "monitor_unexpected": "the failed monitors no known Kafka behaviour explains (comma-separated)",
    "monitor_no_double_consumption": "monitor: no partition is consumed by two members in the same tick (null when not reported)",
    "monitor_generations_increase": "monitor: within a coordinator epoch, committed generations increase and no member goes back to an older one",
    "monitor_stable_ownership": "monitor: whenever the group is settled, every subscribed partition is owned by a member",
    "monitor_cooperative_convergence": "monitor: an all-cooperative group forms at most two generations after the last disturbance",
    "monitor_no_rebalance_loop": "monitor: at most `loop_bound` generations form after the last disturbance",
    "monitor_failures": "JSON list of the failed monitors' verdicts with their witnesses (bounded)",
    "ended": "why the run stopped: `settled`, `max_ticks` or `rebalance loop`",
    "ticks": "simulator ticks the run took",
    "run_seconds": "the simulation's time, in seconds (timing: varies run to run)",
    "history_seconds": "the whole task's time (run and grading), in seconds (timing: varies run to run)",
    "replay": "the simulation document that replays a history with a failure (also in `DIR/histories/`); null otherwise",
}

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


_KIND_NAMES = {"int": "int64", "float": "double", "bool": "bool", "str": "string"}


def columns_page() -> str:
    """``docs/columns.md``: every column of ``COLUMNS`` with its Arrow type and ``DESCRIPTIONS`` line,
    rendered here so the page cannot drift from the writer (tests/test_columns_doc.py compares them).
    A column without a description renders as ``UNDOCUMENTED`` rather than failing, so the page can
    be regenerated and the test names what is missing."""
    def table(columns: tuple[tuple[str, str], ...]) -> list[str]:
        lines = ["| column | type | meaning |", "| --- | --- | --- |"]
        seen = set()
        for name, kind in columns:
            if name in seen:
                continue
            seen.add(name)
            lines.append(f"| `{name}` | {_KIND_NAMES[kind]} | {DESCRIPTIONS.get(name, 'UNDOCUMENTED')} |")
        return lines

    rebalance = tuple(c for c in REBALANCE_COLUMNS if c[0] not in dict(KEY_COLUMNS))
    history = tuple(c for c in HISTORY_COLUMNS if c[0] not in dict(KEY_COLUMNS + REBALANCE_COLUMNS))
    out = [
        "# The sweep's Parquet columns",
        "",
        "<!-- Generated from src/stickyproof/sweep/columns.py (DESCRIPTIONS); do not edit by hand.",
        "     Regenerate: python -m stickyproof.sweep.columns > docs/columns.md -->",
        "",
        f"Every row of `DIR/grades` has the same {len(COLUMNS)} columns, in this order; a column a row's",
        "kind does not fill is null. `kind` tells the two kinds apart: `rebalance` (one graded leader",
        "input) and `history` (one history run). Read them with `pyarrow.dataset` or",
        "`spark.read.parquet(DIR/grades)` (which adds the `chunk` column of the directory layout);",
        "docs/sweep.md says what the sweep does with them. The key of a row is (`seed`, `index`,",
        "`rebalance`, `assignor`), and `migration` for a history row. The timing columns (`*_seconds`) differ from",
        "run to run by nature.",
        "",
        "## Key (every row)",
        "",
        *table(KEY_COLUMNS),
        "",
        "## Rebalance rows",
        "",
        "A history row fills `scale`, `protocol` and `error` (a crashed run) of these too.",
        "",
        *table(rebalance),
        "",
        "## History rows",
        "",
        *table(history),
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":  # python -m stickyproof.sweep.columns > docs/columns.md
    import sys

    sys.stdout.write(columns_page())
