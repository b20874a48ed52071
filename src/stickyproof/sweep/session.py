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

A sweep also gives the JVM a log file (``start_session(log=DIR/spark.log)``): everything the JVM
and the Python workers it starts write (Java stack traces of a master that does not answer, the
JVM's own start-up warnings) goes there, and the console keeps the sweep's own lines. What can be
checked before the JVM starts is (``check_master``): the master URL's form, and that a ``spark://``
or ``k8s://`` master's host and port accept a connection, so a wrong ``--master`` fails in a second
with one line, not after Spark's three 20-second registration attempts. Start-up is bounded
(``START_SECONDS``, ``LOCAL_START_SECONDS``); a failure names the flag and the last line of the log.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import tempfile
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

from ..errors import SweepError

__all__ = ["DEFAULT_MASTER", "START_SECONDS", "check_master", "prepare_environment", "start_session", "spark_session"]

DEFAULT_MASTER = "local[*]"

START_SECONDS = 120.0
"""How long the JVM and the SparkContext may take to start on a cluster master before the sweep
gives up (a standalone master that accepts the connection but never registers the application is
given up by Spark itself after three 20-second attempts; this bounds what else could hang)."""

LOCAL_START_SECONDS = 900.0
"""The same bound for a ``local`` master, which waits on no network: only on the machine, and a
local start measured 75 s on two cores at load 13 (5-15 s on an idle laptop)."""

CONNECT_SECONDS = 3.0
"""How long ``check_master`` waits for a master's host and port to accept a connection."""

_LOCAL = re.compile(r"^local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?$|^local-cluster\[\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\]$")
_MASTER_FORMS = "local[N], local[*], spark://HOST:PORT, yarn or k8s://https://HOST:PORT"

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


def _reach(host: str, port: int) -> str | None:
    """None when ``host:port`` accepts a TCP connection within ``CONNECT_SECONDS``, else why not."""
    try:
        with socket.create_connection((host, port), timeout=CONNECT_SECONDS):
            return None
    except socket.timeout:
        return f"no answer within {CONNECT_SECONDS:g} s"
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()


def _host_ports(flag: str, master: str, text: str, default_port: int) -> list[tuple[str, int]]:
    out = []
    for item in text.split(","):
        host, _, port = item.strip().rpartition(":") if ":" in item else (item.strip(), "", "")
        host = host.strip("[]")
        if not host:
            raise SweepError(f"{flag} {master}: no host in {item.strip()!r} (expected {_MASTER_FORMS})")
        try:
            number = int(port) if port else default_port
        except ValueError:
            raise SweepError(f"{flag} {master}: port {port!r} is not a number") from None
        if not 0 < number < 65536:
            raise SweepError(f"{flag} {master}: port {number} is out of range")
        out.append((host, number))
    return out


def _yarn_resource_manager() -> tuple[str, int] | None:
    """The ResourceManager address ``yarn-site.xml`` names (None when it is highly available or unnamed)."""
    import xml.etree.ElementTree as ET

    for variable in ("YARN_CONF_DIR", "HADOOP_CONF_DIR"):
        site = Path(os.environ.get(variable, "")) / "yarn-site.xml"
        if not os.environ.get(variable) or not site.is_file():
            continue
        try:
            props = {p.findtext("name", "").strip(): p.findtext("value", "").strip() for p in ET.parse(site).getroot().iter("property")}
        except (ET.ParseError, OSError):
            return None
        if props.get("yarn.resourcemanager.ha.enabled", "").lower() == "true":
            return None
        address = props.get("yarn.resourcemanager.address")
        if address and ":" in address and "$" not in address:
            host, _, port = address.rpartition(":")
            return (host, int(port)) if port.isdigit() else None
        host = props.get("yarn.resourcemanager.hostname")
        return (host, 8032) if host and "$" not in host else None
    return None


def check_master(master: str, *, flag: str = "--master") -> None:
    """``SweepError`` naming ``flag`` unless ``master`` is a Spark master URL this machine can use.

    Checked before the JVM starts, in about a second: the URL's form; a ``spark://`` master (any of
    its comma-separated hosts) or a ``k8s://`` API server accepting a TCP connection; for ``yarn``,
    ``HADOOP_CONF_DIR`` or ``YARN_CONF_DIR`` set (Spark cannot find the ResourceManager otherwise)
    and the ResourceManager ``yarn-site.xml`` names accepting a connection. A master that accepts the
    connection but is not what it claims is left to Spark (bounded by ``START_SECONDS``).
    """
    text = master.strip()
    if _LOCAL.match(text):
        return
    if text.startswith("spark://"):
        targets = _host_ports(flag, master, text[len("spark://"):], 7077)
        tried = [(f"{h}:{p}", _reach(h, p)) for h, p in targets]
        if all(why is not None for _, why in tried):
            what = "; ".join(f"{where}: {why}" for where, why in tried)
            raise SweepError(f"{flag} {master}: no Spark master reachable ({what}); start one or use --master 'local[*]'")
        return
    if text.startswith("k8s://"):
        url = urlsplit(text[len("k8s://"):] if "://" in text[len("k8s://"):] else "https://" + text[len("k8s://"):])
        if not url.hostname:
            raise SweepError(f"{flag} {master}: no API server host (expected k8s://https://HOST:PORT)")
        port = url.port or (443 if url.scheme == "https" else 80)
        why = _reach(url.hostname, port)
        if why is not None:
            raise SweepError(f"{flag} {master}: the Kubernetes API server {url.hostname}:{port} is not reachable ({why})")
        return
    if text == "yarn":
        if not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
            raise SweepError(f"{flag} yarn: neither HADOOP_CONF_DIR nor YARN_CONF_DIR is set, so Spark cannot find "
                             "the YARN ResourceManager; export one (the directory holding yarn-site.xml)")
        manager = _yarn_resource_manager()
        if manager is not None:
            why = _reach(*manager)
            if why is not None:
                raise SweepError(f"{flag} yarn: the ResourceManager {manager[0]}:{manager[1]} named by yarn-site.xml "
                                 f"is not reachable ({why})")
        return
    raise SweepError(f"{flag} {master!r}: not a Spark master URL (expected {_MASTER_FORMS})")


def _last_log_line(log: Path | None) -> str:
    """The last line of Spark's log worth quoting (an exception or an ERROR/WARN line), or ''."""
    if log is None:
        return ""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    worth = [line for line in lines if not line.startswith(("at ", "...")) and
             (" ERROR " in line or " WARN " in line or "Exception" in line or "Error" in line)]
    return (worth[-1] if worth else "")[:300]


def _from_py4j(record: logging.LogRecord) -> bool:
    """False for a record py4j's own code wrote (its module path), whichever logger carried it."""
    return f"{os.sep}py4j{os.sep}" not in record.pathname


def _quiet_py4j() -> None:
    """py4j logs a broken connection (the JVM going away under Ctrl-C) as a traceback; the sweep
    reports its own line instead. It logs both through its ``py4j`` loggers and through the root
    logger (``logging.exception(...)`` in ``GatewayClient.send_command``, which CI saw print 34 lines
    when Ctrl-C landed while a command was being read): the first are switched off, the second
    filtered by where they come from (``_from_py4j``), so the root logger keeps everything else."""
    logger = logging.getLogger("py4j")
    logger.setLevel(logging.CRITICAL + 1)
    logger.propagate = False
    root = logging.getLogger()
    if _from_py4j not in root.filters:
        root.addFilter(_from_py4j)


def _java_options() -> str:
    return f"-Dlog4j2.configurationFile=file:{log4j2_file()} -Dlog4j.configurationFile=file:{log4j2_file()}"


def start_session(master: str = DEFAULT_MASTER, *, app_name: str = "stickyproof-sweep", conf: dict[str, str] | None = None,
                  log: Path | None = None, flag: str = "--master") -> Any:
    """A quiet SparkSession on ``master`` (any Spark master URL, unchanged).

    ``log``: a file that receives everything the JVM writes (else the JVM shares this process's
    stderr). The master is checked first (``check_master``), and start-up is bounded by
    ``START_SECONDS``; a failure is one ``SweepError`` naming ``flag``.

    If a session is already active in this process it is returned as it is (one SparkContext
    per JVM); the caller that did not create it must not stop it.
    """
    prepare_environment()
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - pyspark is a declared dependency
        raise SweepError(f"pyspark is not importable: {exc}") from exc
    if SparkContext._active_spark_context is not None:  # (the active *session* is per thread)
        return SparkSession.builder.getOrCreate()
    check_master(master, flag=flag)
    _quiet_py4j()
    java_opts = _java_options()
    settings = {
        "spark.master": master,
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.driver.bindAddress": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.shuffle.partitions": "8",
        "spark.python.worker.reuse": "true",
        "spark.sql.parquet.compression.codec": "zstd",
        **(conf or {}),
    }
    spark_conf = SparkConf()
    for key, value in settings.items():
        spark_conf.set(key, value)
    outcome: dict[str, Any] = {}

    def start() -> None:
        from pyspark import SparkContext
        from pyspark.java_gateway import launch_gateway

        try:
            with warnings.catch_warnings():
                # PySpark 4 warns that pandas >= 3 is not fully supported; the sweep uses Arrow, not pandas UDFs.
                warnings.filterwarnings("ignore", message=".*pandas >= 3.0.0.*", category=FutureWarning)
                gateway = None
                if log is not None:
                    sink = open(log, "ab")  # noqa: SIM115 - the JVM holds it for its whole life
                    try:
                        gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": sink, "stderr": sink})
                    finally:
                        sink.close()  # the JVM has its own descriptor now
                SparkContext(conf=spark_conf, gateway=gateway)
                outcome["session"] = SparkSession.builder.getOrCreate()  # on the context just made
        except BaseException as exc:  # noqa: BLE001 - py4j / Java start-up failures have no common base class
            outcome["error"] = exc

    starter = threading.Thread(target=start, name="stickyproof-spark-start", daemon=True)
    starter.start()
    bound = LOCAL_START_SECONDS if _LOCAL.match(master.strip()) else START_SECONDS
    starter.join(bound)  # Ctrl-C interrupts the wait (KeyboardInterrupt; the JVM dies with us)
    where = f"; Spark's log: {log}" if log is not None else ""
    if starter.is_alive():
        raise SweepError(f"{flag} {master}: Spark did not start within {bound:g} s{where}")
    if "error" in outcome:
        exc = outcome["error"]
        said = _last_log_line(log) or " ".join(str(exc).split())[:300]
        raise SweepError(f"{flag} {master}: Spark did not start: {said}{where}") from exc
    # made in the starter thread; the JVM's active session is per thread (py4j pins Python threads
    # to JVM threads), so this thread takes it too: getActiveSession() then finds it here
    session = SparkSession.builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


@contextmanager
def spark_session(master: str = DEFAULT_MASTER, *, session: Any = None, conf: dict[str, str] | None = None,
                  log: Path | None = None) -> Iterator[Any]:
    """Use ``session`` if given (and leave it running), else start one on ``master`` (its JVM
    writing to ``log``) and stop it after."""
    if session is not None:
        yield session
        return
    from pyspark import SparkContext

    owned = SparkContext._active_spark_context is None
    spark = start_session(master, conf=conf, log=log)
    try:
        yield spark
    finally:
        if owned:
            spark.stop()
