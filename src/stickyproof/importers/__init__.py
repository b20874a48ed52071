"""Real groups in: scenarios from what Kafka's tools show, or from captured consumer-protocol bytes.

    import_describe(text, topics_text, DescribeOptions(...))   kafka-consumer-groups.sh --describe
                                                               (+ kafka-topics.sh --describe)
    import_capture(doc, protocol=..., name=...)                 JoinGroup metadata + SyncGroup
                                                               assignments as hex (stickyproof.capture/1)

Both return an ``ImportResult``: the scenario, the assignment the input shows (or None), and the
notes saying what the input could not tell and what was assumed. ``scenario_document`` writes the
scenario with its notes (the top-level ``"notes"`` array every reader ignores). The formats, the
assumptions and a worked example are in docs/import.md.

Input side of the layer table: this package reads text and bytes into ``model`` values with the
``wire`` codecs; it imports no assignor, leader or oracle.
"""

from __future__ import annotations

from .capture import CAPTURE_FORMAT, import_capture, read_capture
from .describe import DescribeOptions, import_describe
from .result import ImportResult, assignment_document, scenario_document

__all__ = [
    "CAPTURE_FORMAT",
    "DescribeOptions",
    "ImportResult",
    "assignment_document",
    "import_capture",
    "import_describe",
    "read_capture",
    "scenario_document",
]
