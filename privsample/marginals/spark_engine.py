"""Marginal engine on Apache Spark: the DuckDB engine's coding SQL run by Spark SQL (``pip install privsample[spark]``).

The source is a Spark DataFrame or a CSV/Parquet path (local, or any URI the cluster reads:
``hdfs://``, ``s3a://``...). It is cleaned as ``read_table`` cleans (trimmed text, NA values and NaN
as missing), coded by ``privsample.marginals.sql`` in the Spark dialect, and the codes are persisted
(memory, then disk); marginals are GROUPING SETS queries on them (``CodedTableEngine``).

A local CSV file's delimiter and encoding are detected as ``read_table`` detects them (its header is
read locally); a remote one is read with ``delimiter`` (default ``,``) and ``encoding`` (default UTF-8).

Differences from DuckDB: Spark's CSV reader reads an unquoted empty field as missing even when the
schema's ``na_values`` leave out ``""``, and replaces invalid UTF-8 instead of failing; it decodes only
``SPARK_CHARSETS`` (no cp1252, ...); a float compared as a category prints in Java's form when not an
integer below 2**53 (``1.0E-4``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import uuid
from pathlib import Path

import numpy as np

from privsample.data.cells import WHITESPACE
from privsample.data.schema import Schema
from privsample.data.sql_dialect import SPARK, clean_sql
from privsample.data.table import (
    FORMATS,
    check_delimiter,
    column_kind,
    csv_layout,
    java_encoding,
    malformed_error,
    table_format,
)
from privsample.errors import DataError, InputError
from privsample.marginals.sql_engine import CACHE_MB, CodedTableEngine, arrow_columns, check_unique

DEFAULT_MASTER = "local[2]"
CONNECT_TIMEOUT = 10.0
_MASTER = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?|spark://[^\s/]+|k8s://\S+|yarn")
_SPARK_TYPES = {
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "boolean": "BOOLEAN",
}
_LOG4J = """rootLogger.level = off
rootLogger.appenderRef.stderr.ref = console
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = off
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %p %c{1}: %m%n
"""


# -- the session --------------------------------------------------------------------------------------
def check_master(master: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """InputError unless ``master`` is a Spark master URL that answers within ``timeout`` seconds
    (standalone and Kubernetes masters are probed by a TCP connection before Spark starts)."""
    if not _MASTER.fullmatch(master or ""):
        raise InputError(
            f"--spark-master '{master}' is not a Spark master URL "
            "(local[N], spark://host:7077, k8s://https://host:443 or yarn)"
        )
    if master.startswith("spark://"):
        addresses = master[len("spark://") :].split(",")
    elif master.startswith("k8s://"):
        rest = master[len("k8s://") :]
        addresses = [re.sub(r"^\w+://", "", rest).split("/")[0] + ("" if ":" in rest.split("//")[-1] else ":443")]
    else:
        return
    reasons = []
    for address in addresses:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise InputError(f"--spark-master '{master}': expected host:port, got '{address}'")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
            return
        except OSError as exc:
            reasons.append(f"{address}: {exc.strerror or type(exc).__name__}")
    raise InputError(f"cannot reach the Spark master {master} within {timeout:g}s ({'; '.join(reasons)})")


def _java_home_ok() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and Path(home, "bin", "java").exists()))


def _log_config() -> str:
    path = Path(tempfile.gettempdir()) / f"privsample-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        tmp = path.with_suffix(f".{uuid.uuid4().hex}")
        tmp.write_text(_LOG4J)
        os.replace(tmp, path)
    return path.as_uri()


def start_session(master: str = DEFAULT_MASTER, config: dict | None = None, timeout: float = CONNECT_TIMEOUT):
    """A quiet SparkSession on ``master`` (InputError if pyspark/Java are missing or the master is unreachable)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError("--engine spark needs pyspark: pip install 'privsample[spark]'") from None
    check_master(master, timeout)
    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != master:
        import warnings

        warnings.warn(
            f"a Spark session on {active.sparkContext.master} is already running in this process; it is "
            f"used, not the master {master} (stop it first to change the master)",
            UserWarning,
            stacklevel=2,
        )
    if not _java_home_ok():
        raise InputError("--engine spark needs Java 17 or later: no 'java' on PATH and JAVA_HOME is not set")
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.app.name": "privsample",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={_log_config()}",
    }
    m = re.fullmatch(r"local\[(\d+)", master.split(",")[0]) if master.startswith("local[") else None
    conf["spark.sql.shuffle.partitions"] = str(2 * int(m.group(1)) if m else 2 * (os.cpu_count() or 1))
    conf.update({k: str(v) for k, v in (config or {}).items()})
    builder = SparkSession.builder.master(master)
    for k, v in conf.items():
        builder = builder.config(k, v)
    try:
        return builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - the JVM gateway raises many types
        raise InputError(f"cannot start Spark on {master}: {spark_reason(exc)}") from None


def spark_reason(exc: BaseException) -> str:
    """One line from a (Java) Spark error: the innermost ``[ERROR_CLASS] message``."""
    text = str(exc)
    found = re.findall(r"\[([A-Z][A-Z_]+(?:\.[A-Z_]+)*)\] ([^\n]*)", text)
    if found:
        cls, msg = found[-1]
        return re.sub(r"\s*SQLSTATE: \w+\s*$", "", msg).strip()[:300] or cls
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[0] if lines else type(exc).__name__)[:300]


def spark_read_error(exc: BaseException, label: str) -> DataError:
    """The refusal of a Spark job that failed while reading the records: Spark's messages may quote a record
    (``Malformed CSV record: ...``), so the message names only the kind of failure and keeps Spark's own
    reason in ``detail`` (NOT private). A malformed record gives ``malformed_error``, as with DuckDB."""
    reason = spark_reason(exc)
    if re.search(r"malformed|MALFORMED", str(exc)):
        return malformed_error(label, f"{label}: {reason}")
    kind = re.findall(r"\[([A-Z][A-Z_]+(?:\.[A-Z_]+)*)\]", str(exc))
    return DataError(
        f"{label}: Spark failed while reading the records ({kind[-1] if kind else type(exc).__name__}); its "
        "message is not shown, as it may quote a record: 'privsample check' or --engine duckdb names the cause",
        f"{label}: {reason}",
    )


# -- the engine ---------------------------------------------------------------------------------------
class SparkEngine(CodedTableEngine):
    """Marginals of a Spark DataFrame or a CSV/Parquet path coded by ``schema``, computed by Spark.

    ``spark``: a SparkSession to use (default: the DataFrame's, else a new one on ``master`` with
    ``config``, stopped by ``close()``). ``connect_timeout`` bounds the wait for a remote master;
    ``cache_mb`` and ``batching`` as for ``DuckDBEngine``.
    """

    dialect = SPARK

    def __init__(
        self,
        source,
        schema: Schema,
        *,
        clip: bool = False,
        other: bool = False,
        release: bool = False,
        master: str = DEFAULT_MASTER,
        spark=None,
        config: dict | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        cache_mb: float = CACHE_MB,
        batching: str = "joint",
        delimiter: str | None = None,
        encoding: str | None = None,
    ):
        self._views: list[str] = []
        self._persisted = None
        self._own_session = False
        df = source if is_dataframe(source) else None
        layout = None
        if df is None:
            location, fmt, local = _location(source)
            if fmt == "csv" and local is not None:  # detected (and checked) before Spark starts
                layout = csv_layout(local, delimiter, encoding)
                _spark_charset(source, layout.java_encoding)
            elif fmt == "csv":
                layout = (check_delimiter(delimiter) or ",", _spark_charset(source, java_encoding(encoding)))
        if df is not None:
            self.spark = df.sparkSession
        elif spark is not None:
            self.spark = spark
        else:
            from pyspark.sql import SparkSession

            self._own_session = SparkSession.getActiveSession() is None
            self.spark = start_session(master, config, connect_timeout)
        try:
            label = "DataFrame" if df is not None else str(source)
            if df is None:
                df = self._read(location, fmt, layout, label)
            names = [str(f.name) for f in df.schema.fields]
            check_unique(names)
            view = self._view(df.toDF(*[f"_c{i}" for i in range(len(names))]))
            kind_of, clean = self._clean(view, names, [f.dataType.simpleString() for f in df.schema.fields], schema)
            self._setup(
                schema,
                clean,
                kind_of,
                clip=clip,
                other=other,
                release=release,
                cache_mb=cache_mb,
                batching=batching,
                label=label,
            )
        except BaseException:
            self.close()
            raise

    # -- construction -----------------------------------------------------------------------------
    def _read(self, location: str, fmt: str, layout, label: str):
        """``layout``: a local CSV file's ``CsvLayout`` (the names, delimiter and encoding ``read_table``
        uses), or (delimiter, Java encoding) for a remote one."""
        reader = self.spark.read
        try:
            if fmt == "parquet":
                return reader.parquet(location)
            if isinstance(layout, tuple):
                sep, charset = layout
                df = reader.csv(
                    location, header=True, inferSchema=False, multiLine=True, escape='"', sep=sep, encoding=charset
                )
                names = [c.strip(WHITESPACE) or f"Unnamed: {i}" for i, c in enumerate(df.columns)]
                return df.toDF(*names)
            from pyspark.sql.types import StringType, StructField, StructType

            names = list(layout.names)
            string_schema = StructType([StructField(f"_c{i}", StringType()) for i in range(len(names))])
            df = reader.csv(
                location,
                schema=string_schema,
                header=True,
                mode="FAILFAST",
                multiLine=True,
                sep=layout.delimiter,
                quote='"',
                escape='"',
                encoding=layout.java_encoding,
                nullValue="\u0000",
                emptyValue="",
            )
            return df.toDF(*names)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{label}: {spark_reason(exc)}") from None

    def _view(self, df) -> str:
        name = f"privsample_{uuid.uuid4().hex}"
        df.createOrReplaceTempView(name)
        self._views.append(name)
        return name

    def _clean(self, view: str, names: list[str], types: list[str], schema: Schema) -> tuple[dict, str]:
        """({column: kind}, SQL of the cleaned schema columns, as ``read_table`` cleans them)."""
        kind_of = {
            name: column_kind("DECIMAL" if t.startswith("decimal") else _SPARK_TYPES.get(t, "VARCHAR"))
            for name, t in zip(names, types)
            if name in schema
        }
        columns = [(f"_c{i}", name, kind_of[name]) for i, name in enumerate(names) if name in kind_of]
        return kind_of, (clean_sql(view, columns, schema.na_values, self.dialect) if columns else "")

    # -- queries ----------------------------------------------------------------------------------
    def _materialise(self, coded_sql: str) -> str:
        from pyspark import StorageLevel

        try:
            df = self.spark.sql(coded_sql)
        except Exception as exc:  # noqa: BLE001
            raise spark_read_error(exc, self._label) from None
        self._persisted = df.persist(StorageLevel.MEMORY_AND_DISK)
        return self._view(self._persisted)

    def _fetch(self, sql: str, nulls: int | None = -1) -> dict[str, np.ndarray]:
        try:
            df = self.spark.sql(sql)
            if hasattr(df, "toArrow"):
                table = df.toArrow()
            else:  # pyspark 3.5
                import pyarrow as pa

                rows = df.collect()
                table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(df.columns)})
        except Exception as exc:  # noqa: BLE001
            raise spark_read_error(exc, self._label) from None
        return arrow_columns(table, nulls)

    def close(self) -> None:
        """Unpersist the codes, drop the views, and stop the session if this engine started it."""
        spark = getattr(self, "spark", None)
        if spark is None:
            return
        try:
            if self._persisted is not None:
                self._persisted.unpersist()
            for v in self._views:
                spark.catalog.dropTempView(v)
            if self._own_session:
                spark.stop()
        except Exception:  # noqa: BLE001 - the session may be gone already
            pass
        self._persisted, self._views, self.spark = None, [], None


SPARK_CHARSETS = ("UTF-8", "UTF-16", "UTF-16LE", "UTF-16BE", "UTF-32", "ISO-8859-1", "US-ASCII")


def _spark_charset(source, charset: str) -> str:
    """``charset`` if Spark's CSV reader decodes it, else InputError."""
    if charset.upper() not in SPARK_CHARSETS:
        raise InputError(
            f"{source}: Spark reads CSV in {', '.join(SPARK_CHARSETS)} only, not {charset}: convert the "
            "file to UTF-8 or use --engine duckdb"
        )
    return charset


def is_dataframe(source) -> bool:
    return type(source).__name__ == "DataFrame" and hasattr(source, "sparkSession")


def _location(source) -> tuple[str, str, Path | None]:
    """(URI for Spark, 'csv' | 'parquet', the local path if any); local files are checked as
    ``read_table`` checks them (on a cluster they must exist at the same path on every node)."""
    s = str(source)
    if re.match(r"^[a-zA-Z][\w+.-]*://", s) and not s.startswith("file://"):
        fmt = next((f for suffix, f in FORMATS.items() if s.lower().rstrip("/").endswith(suffix)), None)
        if fmt is None:
            raise InputError(f"{s}: unknown file type (expected {', '.join(FORMATS)})")
        return s, fmt, None
    p = Path(s[len("file://") :] if s.startswith("file://") else s)
    if p.is_dir() and next(p.glob("*.parquet"), None) is not None:  # a Parquet dataset (as Spark writes)
        return p.resolve().as_uri(), "parquet", None
    fmt = table_format(p)
    if p.stat().st_size == 0:
        raise InputError(f"{p}: the file is empty (0 bytes)")
    return p.resolve().as_uri(), fmt, p
