"""Starting and stopping the Spark session a sweep runs in.

PySpark is imported here, lazily, and nowhere else outside ``sweep/``,
so ``stickyproof --help`` never pays for a JVM.

Three settings are not cosmetic:

- ``PYSPARK_PYTHON`` is set to the running interpreter: otherwise the Python workers start the
  system ``python3``, which cannot import stickyproof, OR-Tools or Z3, and every task dies.
- ``SPARK_LOCAL_IP=127.0.0.1`` keeps the driver off whatever interface the host resolves to first
  (a container's hostname often resolves to nothing routable).
- A log4j2 configuration at ``warn`` and ``spark.ui.*`` off keep Spark's start-up chatter and its
  own console progress bar from drawing over ours.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import SweepError

__all__ = ["DEFAULT_MASTER", "prepare_environment", "start_session", "spark_session"]

DEFAULT_MASTER = "local[*]"

_LOG4J2 = """\
# Written by stickyproof.sweep.session: Spark at warn, the chattiest loggers at error.
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
logger.shutdown.name = org.apache.spark.util.ShutdownHookManager
logger.shutdown.level = error
logger.snappy.name = org.apache.spark.util.Utils
logger.snappy.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.plan.name = org.apache.spark.util.SparkStringUtils
logger.plan.level = error
"""


def log4j2_file() -> Path:
    """The log4j2 configuration, written once per user into the temp directory (content is fixed)."""
    path = Path(tempfile.gettempdir()) / f"stickyproof-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}.properties"
    try:
        if not path.exists() or path.read_text() != _LOG4J2:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(_LOG4J2)
            os.replace(tmp, path)
    except OSError as exc:
        raise SweepError(f"cannot write the Spark log configuration {path}: {exc.strerror or exc}") from exc
    return path


def prepare_environment() -> dict[str, str]:
    """Set the environment Spark's driver and workers inherit; returns what it set.

    Called before the JVM starts (it reads these once). Values the user already exported win,
    except ``PYSPARK_PYTHON``/``PYSPARK_DRIVER_PYTHON``, which must be this interpreter for the
    workers to import the solvers.
    """
    wanted = {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    defaults = {"SPARK_LOCAL_IP": "127.0.0.1", "PYARROW_IGNORE_TIMEZONE": "1"}
    for key, value in defaults.items():
        wanted[key] = os.environ.get(key, value)
    os.environ.update(wanted)
    return wanted


def _java_options() -> str:
    return f"-Dlog4j2.configurationFile=file:{log4j2_file()} -Dlog4j.configurationFile=file:{log4j2_file()}"


def start_session(master: str = DEFAULT_MASTER, *, app_name: str = "stickyproof-sweep", conf: dict[str, str] | None = None) -> Any:
    """A quiet SparkSession on ``master`` (any Spark master URL, unchanged).

    If a session is already active in this process it is returned as it is (one SparkContext
    per JVM); the caller that did not create it must not stop it.
    """
    prepare_environment()
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - pyspark is a declared dependency
        raise SweepError(f"pyspark is not importable: {exc}") from exc
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    java_opts = _java_options()
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        .config("spark.driver.bindAddress", os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.parquet.compression.codec", "zstd")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    try:
        with warnings.catch_warnings():
            # PySpark 4 warns that pandas >= 3 is not fully supported; the sweep uses Arrow, not pandas UDFs.
            warnings.filterwarnings("ignore", message=".*pandas >= 3.0.0.*", category=FutureWarning)
            session = builder.getOrCreate()
    except Exception as exc:  # py4j / Java start-up failures have no common base class
        raise SweepError(f"cannot start Spark on master {master!r}: {' '.join(str(exc).split())[:400]}") from exc
    session.sparkContext.setLogLevel("WARN")
    return session


@contextmanager
def spark_session(master: str = DEFAULT_MASTER, *, session: Any = None, conf: dict[str, str] | None = None) -> Iterator[Any]:
    """Use ``session`` if given (and leave it running), else start one on ``master`` and stop it after."""
    if session is not None:
        yield session
        return
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None
    spark = start_session(master, conf=conf)
    try:
        yield spark
    finally:
        if owned:
            spark.stop()
