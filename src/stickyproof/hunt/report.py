"""The text the CLI prints for a hunt: one line when nothing failed, the finding otherwise."""

from __future__ import annotations

import json

from ..model import dump_json
from .search import HuntResult

__all__ = ["render_result"]


def render_result(result: HuntResult, *, saved: str | None = None) -> str:
    """What ``stickyproof hunt`` prints: the verdict line, and for a finding the violated invariants,
    the oracle's witness, the minimal scenario, where it was saved, and the command that repeats it."""
    if result.finding is None:
        worst = "none graded" if result.worst_stickiness is None else f"{result.worst_stickiness:.4f}"
        lines = [
            f"no failure: {result.assignor} passed {result.tried} examples (seed {result.seed}); "
            f"worst stickiness seen {worst}; {result.seconds:.1f} s"
        ]
        if result.tried < result.examples:
            lines.append(
                f"note: Hypothesis stopped after {result.tried} of {result.examples} examples: most groups it drew "
                "were left out (cooperative groups with v0 claims, see stickyproof.scenarios.space.claims_invisible)"
            )
        return "\n".join(lines) + "\n"
    f = result.finding
    doc = f.to_dict()
    size = doc["size"]
    lines = [
        f"FAILED {f.failure}: {result.assignor} after {result.tried} examples (seed {result.seed}); "
        f"shrunk to {size['members']} members, {size['partitions']} partitions, {size['claims']} claims "
        f"in {f.shrink_evaluations} evaluations",
        f"violated: {', '.join(f.failures)}",
        "witness: " + json.dumps(doc["witness"], sort_keys=True),
        "minimal scenario:",
        dump_json(doc["scenario"]),
    ]
    if saved is not None:
        lines.append(f"saved: {saved}")
    lines.append(f"repeat: {result.command()}")
    return "\n".join(lines) + "\n"
