"""The grading pipeline: history (or sampled-group) sweeps graded on Spark, summary, findings, triage, report.

Modules, in data-flow order:

- ``columns``  the row schema: ``rebalance`` rows (one graded leader input) and ``history`` rows
- ``rows``     one task (seed, index, assignor) -> its rows: a history run through the group protocol
               and every rebalance graded, or one sampled group (no Spark; reused by the benchmark)
- ``plan``     the tasks a sweep still owes, most expensive first, cut into chunks balanced over cores
- ``session``  the quiet SparkSession (the only place PySpark is configured)
- ``job``      the chunked Spark job: tasks -> ``mapInArrow`` -> Parquet
- ``store``    the sweep directory: atomic chunk commits, manifest, resume keys, failures/, histories/
- ``summary``  a verdict in words per assignor (``verdict_lines``), one line of figures per assignor (and per class with ``--by``)
- ``findings`` failures by section: known Kafka hazards, Kafka bugs, historical incidents, unexpected
- ``triage``   each finding made replayable; Kafka bugs and unexpected failures shrunk
- ``report``   the self-contained ``report.html``
- ``console``  the plain-text verdicts, summary lines and rich tables of the CLI
- ``compare``  regressions and improvements of one sweep against another
- ``run``      ``run_sweep``: all of the above as one call

Nothing here imports PySpark, pandas or matplotlib at import time. docs/sweep.md is the user's guide.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_sweep", "compare_runs", "summarize"]


def __getattr__(name: str) -> Any:
    if name == "run_sweep":
        from .run import run_sweep

        return run_sweep
    if name == "compare_runs":
        from .compare import compare_runs

        return compare_runs
    if name == "summarize":
        from .summary import summarize

        return summarize
    raise AttributeError(name)
