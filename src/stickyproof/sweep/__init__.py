"""The grading pipeline: sweeps of sampled groups graded on Spark, their summary, triage, report and comparison.

Modules, in data-flow order:

- ``rows``     grade one (seed, index, assignor) into a flat row (no Spark; reused by the benchmark)
- ``session``  the quiet SparkSession (the only place PySpark is configured)
- ``job``      the chunked Spark job: (seed, index) rows -> ``mapInArrow`` -> Parquet
- ``store``    the sweep directory: atomic chunk commits, manifest, resume keys, failures/
- ``summary``  per assignor x scenario class aggregates
- ``triage``   failing rows by signature, shrunk to minimal scenarios
- ``report``   the self-contained ``report.html``
- ``compare``  regressions and improvements of one sweep against another
- ``run``      ``run_sweep``: all of the above as one call

Nothing here imports PySpark, pandas or matplotlib at import time.
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
