"""The text the CLI prints for a hunt: one line when nothing failed, the finding otherwise."""

from __future__ import annotations

import json

from ..model import dump_json
from .search import Finding, HuntResult

__all__ = ["render_result"]


def render_result(result: HuntResult, *, saved: list[str] | None = None) -> str:
    """What ``stickyproof hunt`` prints: the verdict line, and for a finding the violated invariants,
    the oracle's witness, the minimal scenario, where it was saved, and the command that repeats it."""
    if result.finding is None:
        worst = "none graded" if result.worst_stickiness is None else f"{result.worst_stickiness:.4f}"
        lines = [
            f"no failure: {result.shown} passed {result.tried} examples (seed {result.seed}); "
            f"worst stickiness seen {worst}; {result.seconds:.1f} s"
        ]
        if result.tried < result.examples:
            lines.append(
                f"note: Hypothesis stopped after {result.tried} of {result.examples} examples: most groups it drew "
                "were left out (cooperative groups with v0 claims, see stickyproof.scenarios.space.claims_invisible)"
            )
        if result.reference is not None and result.worst_kept_delta is not None:
            lines.append(
                f"against {result.reference}: no failure it does not share; kept partitions differ by at worst "
                f"{result.worst_kept_delta:+d} on one group"
            )
        return "\n".join(lines) + "\n"
    lines = []
    if result.keep_going:
        lines.append(
            f"FAILED: {result.shown}: {len(result.findings)} failure signature(s) in {result.tried} examples "
            f"(seed {result.seed})"
        )
    for number, f in enumerate(result.findings, 1):
        lines += _finding_lines(result, f, number if result.keep_going else None)
    if result.reference is not None and result.worst_kept_delta is not None:
        lines.append(
            f"against {result.reference}: kept partitions differ by at worst {result.worst_kept_delta:+d} on one group"
        )
    if saved:
        lines.append("saved: " + ", ".join(saved))
    lines.append(f"repeat: {result.command()}")
    return "\n".join(lines) + "\n"


def _finding_lines(result: HuntResult, f: Finding, number: int | None) -> list[str]:
    doc = f.to_dict()
    size = doc["size"]
    head = f"FAILED {f.failure}" if number is None else f"[{number}] {f.signature}"
    lines = [
        f"{head}: {result.shown} after {result.tried} examples (seed {result.seed}); "
        f"shrunk to {size['members']} members, {size['partitions']} partitions, {size['claims']} claims "
        f"in {f.shrink_evaluations} evaluations",
        f"violated: {', '.join(f.failures)}",
    ]
    if f.verdict.reference is not None:
        ref = ", ".join(f.verdict.reference.failures) or "nothing"
        delta = "" if f.verdict.kept_delta is None else f"; kept {f.verdict.kept_delta:+d} against it"
        lines.append(f"reference {result.reference} violated: {ref}{delta}")
    lines += [
        "witness: " + json.dumps(doc["witness"], sort_keys=True),
        "minimal scenario:",
        dump_json(doc["scenario"]),
    ]
    return lines
