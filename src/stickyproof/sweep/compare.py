"""``stickyproof compare RUN_A RUN_B``: what got worse (and better) from one sweep to another.

Two runs share a scenario when the same assignor graded a group with the same content hash
(``scenario_hash``: the canonical scenario document), whatever seed or index produced it; so a
sampler change that alters what (seed, index) means cannot pair different groups. On the shared
pairs, B regresses against A on

- validity: A's row passed (valid, no error) and B's failed (an invariant violated or an error);
- balance: A kept its contract's balance and B does not;
- stickiness: B kept a smaller share of the optimum than A (beyond ``STICKINESS_EPSILON``),

and improves on the same three aspects the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SweepError
from .store import SweepDir, read_table

__all__ = ["ASPECTS", "Change", "Comparison", "compare_runs"]

ASPECTS = ("validity", "balance", "stickiness")
STICKINESS_EPSILON = 1e-9
_COLUMNS = ["seed", "index", "rebalance", "assignor", "scenario_hash", "valid", "error", "contract_balanced", "stickiness"]


@dataclass(frozen=True)
class Change:
    """One shared (scenario, assignor) pair that differs on one aspect."""

    assignor: str
    scenario_hash: str
    aspect: str
    a: Any
    b: Any
    key_a: tuple[int, int]
    key_b: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.assignor,
            "scenario_hash": self.scenario_hash,
            "aspect": self.aspect,
            "a": self.a,
            "b": self.b,
            "a_key": {"seed": self.key_a[0], "index": self.key_a[1]},
            "b_key": {"seed": self.key_b[0], "index": self.key_b[1]},
        }


@dataclass(frozen=True)
class Comparison:
    run_a: Path
    run_b: Path
    shared: int
    only_a: int
    only_b: int
    regressions: tuple[Change, ...]
    improvements: tuple[Change, ...]

    def counts(self) -> dict[str, dict[str, dict[str, int]]]:
        """assignor -> aspect -> {regressions, improvements}."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for kind, changes in (("regressions", self.regressions), ("improvements", self.improvements)):
            for c in changes:
                slot = out.setdefault(c.assignor, {a: {"regressions": 0, "improvements": 0} for a in ASPECTS})
                slot[c.aspect][kind] += 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_a": str(self.run_a),
            "run_b": str(self.run_b),
            "shared": self.shared,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "counts": self.counts(),
            "regressions": [c.to_dict() for c in self.regressions],
            "improvements": [c.to_dict() for c in self.improvements],
        }


def _rows(run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out = SweepDir(run)
    if not out.grades.is_dir():
        raise SweepError(f"{run}: not a sweep directory (no grades/ inside)")
    import pyarrow.dataset as ds

    table = read_table(out.grades, _COLUMNS, filter=ds.field("skipped").is_null() & (ds.field("kind") == "rebalance"))
    table = table.sort_by([("seed", "ascending"), ("index", "ascending"), ("assignor", "ascending")])
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for row in table.to_pylist():
        if row["scenario_hash"] is None:  # the sampler failed: nothing to pair
            continue
        rows.setdefault((row["scenario_hash"], row["assignor"]), row)
    return rows


def _passed(row: dict[str, Any]) -> bool:
    """Graded, and not failing by the one definition (``grading.failure.failing_row``)."""
    from ..grading.failure import failing_row

    return row["valid"] is not None and not failing_row(row)


def compare_runs(run_a: Path | str, run_b: Path | str) -> Comparison:
    """Regressions and improvements of ``run_b`` against ``run_a`` on the pairs both graded."""
    run_a, run_b = Path(run_a), Path(run_b)
    a_rows, b_rows = _rows(run_a), _rows(run_b)
    shared = sorted(set(a_rows) & set(b_rows), key=lambda k: (k[1], k[0]))
    if not shared:
        # "0 regressions" over nothing compared would pass a CI gate that checked nothing.
        raise SweepError(
            f"{run_a} and {run_b} share no (scenario, assignor) pair ({len(a_rows)} and {len(b_rows)} graded rows): "
            "nothing to compare; sweep both with the same --source, --seed, --scale (or --space) and --assignors"
        )
    regressions: list[Change] = []
    improvements: list[Change] = []
    for key in shared:
        a, b = a_rows[key], b_rows[key]

        def change(aspect: str, va: Any, vb: Any) -> Change:
            return Change(key[1], key[0], aspect, va, vb, (a["seed"], a["index"]), (b["seed"], b["index"]))

        if _passed(a) != _passed(b):
            c = change("validity", a["error"] or ("valid" if _passed(a) else "invalid"), b["error"] or ("valid" if _passed(b) else "invalid"))
            (regressions if _passed(a) else improvements).append(c)
        ba, bb = a["contract_balanced"], b["contract_balanced"]
        if ba is not None and bb is not None and ba != bb:
            (regressions if ba else improvements).append(change("balance", ba, bb))
        sa, sb = a["stickiness"], b["stickiness"]
        if sa is not None and sb is not None and abs(sa - sb) > STICKINESS_EPSILON:
            (regressions if sb < sa else improvements).append(change("stickiness", sa, sb))
    return Comparison(
        run_a=run_a,
        run_b=run_b,
        shared=len(shared),
        only_a=len(set(a_rows) - set(b_rows)),
        only_b=len(set(b_rows) - set(a_rows)),
        regressions=tuple(regressions),
        improvements=tuple(improvements),
    )
