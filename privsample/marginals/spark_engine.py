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
from privsample.data.column_values import ColumnValues
from privsample.data.schema import DEFAULT_NA_VALUES, Schema
from privsample.data.sql_dialect import SPARK, clean_sql
from privsample.data.table import FORMATS, column_kind, malformed_error, table_format
from privsample.data.csv_layout import CsvLayout, check_delimiter, csv_layout, index_position, java_encoding
from privsample.errors import DataError, InputError
from privsample.marginals.base import Opener
from privsample.marginals.sql_engine import CACHE_MB, CodedTableEngine, arrow_columns, arrow_values, check_unique

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


# -- reading ------------------------------------------------------------------------------------------
class _SparkReading:
    """Reading a source into Spark as ``read_table`` reads it (shared by ``SparkEngine`` and ``SparkValues``)."""

    spark = None
    _own_session = False
    _views: list[str]

    def _open_source(self, source, master, spark, config, connect_timeout, delimiter, encoding, index_col=None):
        """(Spark DataFrame of ``source``, its label): the session is ``source``'s, ``spark``, or a new one on
        ``master`` (stopped by ``close()``); a local CSV file's layout is read (and checked) before Spark starts.
        The index column ``index_col`` names (``index_position``: from the column names alone) is dropped."""
        df = source if is_dataframe(source) else None
        layout = None
        if df is None:
            location, fmt, local = _location(source)
            if fmt == "csv" and local is not None:  # detected (and checked) before Spark starts
                layout = csv_layout(local, delimiter, encoding, index_col)
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
        label = "DataFrame" if df is not None else str(source)
        if df is None:
            df = self._read(location, fmt, layout, label)
        if isinstance(layout, CsvLayout):
            index = layout.index  # parsed under a placeholder name
        else:
            index = index_position(label, [str(f.name) for f in df.schema.fields], index_col)
        if index is not None:
            names = [str(f.name) for f in df.schema.fields]
            keep = [j for j in range(len(names)) if j != index]
            df = df.toDF(*[f"_c{j}" for j in range(len(names))]).select(*[f"_c{j}" for j in keep])
            df = df.toDF(*[names[j] for j in keep])
        return df, label

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

            names = list(layout.scan_names)
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

    def _drop_views(self) -> None:
        for v in self._views:
            self.spark.catalog.dropTempView(v)
        if self._own_session:
            self.spark.stop()


# -- the engine ---------------------------------------------------------------------------------------
class SparkEngine(_SparkReading, CodedTableEngine):
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
        index_col: str | int | None = None,
    ):
        self._views: list[str] = []
        self._persisted = self._cleaned = None
        self._own_session = False
        try:
            if isinstance(source, SparkValues):
                label = source.label
                kind_of, clean = self._adopt(source)
            else:
                df, label = self._open_source(
                    source, master, spark, config, connect_timeout, delimiter, encoding, index_col
                )
                names = [str(f.name) for f in df.schema.fields]
                check_unique(names)
                view = self._view(df.toDF(*[f"_c{i}" for i in range(len(names))]))
                types = [f.dataType.simpleString() for f in df.schema.fields]
                kind_of, clean = self._clean(view, names, types, schema)
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
        if self._cleaned is not None:  # the codes are computed and persisted: the cleaned rows are no longer needed
            self._cleaned.unpersist()
            self._cleaned = None

    def _adopt(self, source: SparkValues) -> tuple[dict, str]:
        """Take over the session, views and cleaned rows of ``source``: ({column: kind}, SQL of its cleaned rows)."""
        kind_of, clean = source.cleaned()
        self.spark, self._own_session, self._views, self._cleaned = source._release()
        return kind_of, clean

    def _clean(self, view: str, names: list[str], types: list[str], schema: Schema) -> tuple[dict, str]:
        """({column: kind}, SQL of the cleaned schema columns, as ``read_table`` cleans them)."""
        kind_of = {name: spark_kind(t) for name, t in zip(names, types) if name in schema}
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
            table = to_arrow(self.spark.sql(sql))
        except Exception as exc:  # noqa: BLE001
            raise spark_read_error(exc, self._label) from None
        return arrow_columns(table, nulls)

    def close(self) -> None:
        """Unpersist the codes, drop the views, and stop the session if this engine started it."""
        spark = getattr(self, "spark", None)
        if spark is None:
            return
        try:
            for df in (self._persisted, self._cleaned):
                if df is not None:
                    df.unpersist()
            self._drop_views()
        except Exception:  # noqa: BLE001 - the session may be gone already
            pass
        self._persisted, self._cleaned, self._views, self.spark = None, None, [], None


def spark_kind(spark_type: str) -> str:
    """'text' | 'int' | 'float' | 'bool' (``column_kind``) of a Spark type's simple string."""
    t = str(spark_type)
    return column_kind("DECIMAL" if t.startswith("decimal") else _SPARK_TYPES.get(t, "VARCHAR"))


def to_arrow(df):
    """A Spark DataFrame's rows as a pyarrow Table (collected on the driver)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    import pyarrow as pa  # pyspark 3.5

    rows = df.collect()
    return pa.table({c: [r[i] for r in rows] for i, c in enumerate(df.columns)})


# -- value counts for discovery -----------------------------------------------------------------------
class SparkValues(_SparkReading):
    """The exact value counts of a Spark DataFrame's or a CSV/Parquet path's columns, counted by Spark
    (``ValueSource`` of ``privsample.data.column_values``, for private discovery without a schema).

    The source is read and cleaned as ``SparkEngine`` reads it (``na_values``; session options as for
    ``SparkEngine``); the cleaned rows are persisted (memory, then disk) so that the file is read once. Per
    column: ``SELECT value, count(*) ... GROUP BY value`` over its non-missing values, the missing ones counted
    apart; floating-point, integer and boolean columns come back typed (``ColumnValues`` gives every engine
    the same canonical form), so a float's text is Python's, not Java's. Nothing is read before the first
    count. ``SparkEngine(values, schema, ...)`` then codes the same cleaned rows, taking over the session and
    the persisted rows (this object is then closed); else ``close()`` releases them.
    """

    def __init__(
        self,
        source,
        *,
        na_values=DEFAULT_NA_VALUES,
        master: str = DEFAULT_MASTER,
        spark=None,
        config: dict | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        delimiter: str | None = None,
        encoding: str | None = None,
        index_col: str | int | None = None,
    ):
        self._views: list[str] = []
        self._cleaned = None
        self._own_session = False
        self._n: int | None = None
        self._present: dict[str, int] = {}
        try:
            df, self.label = self._open_source(
                source, master, spark, config, connect_timeout, delimiter, encoding, index_col
            )
            names = [str(f.name) for f in df.schema.fields]
            check_unique(names)
            view = self._view(df.toDF(*[f"_c{i}" for i in range(len(names))]))
            self.kind_of = {n: spark_kind(f.dataType.simpleString()) for n, f in zip(names, df.schema.fields)}
            columns = [(f"_c{i}", n, self.kind_of[n]) for i, n in enumerate(names)]
            self._clean = clean_sql(view, columns, tuple(na_values), SPARK)
        except BaseException:
            self.close()
            raise
        self.names = names

    def row_count(self) -> int:
        """The number of records (exact: sensitive)."""
        self._persist()
        return int(self._n)

    def column_values(self, name: str) -> ColumnValues:
        """The exact counts of column ``name`` (sensitive)."""
        self._persist()
        q = SPARK.ident(name)
        sql = f"SELECT {q} AS v, count(*) AS n FROM {self._table} WHERE {q} IS NOT NULL GROUP BY {q}"
        table = self._run(sql)
        values = arrow_values(table.column(0), self.kind_of[name])
        counts = table.column(1).to_numpy().astype(np.int64, copy=False)
        del table
        return ColumnValues(self._n - self._present[name], values, counts)

    def cleaned(self) -> tuple[dict, str]:
        """({column: kind}, SQL of the cleaned rows)."""
        self._check_open()
        return dict(self.kind_of), (f"SELECT * FROM {self._table}" if self._cleaned is not None else self._clean)

    def _persist(self) -> None:
        """On first use: the cleaned rows persisted; the number of records and of non-missing values."""
        from pyspark import StorageLevel

        self._check_open()
        if self._n is not None:
            return
        try:
            self._cleaned = self.spark.sql(self._clean).persist(StorageLevel.MEMORY_AND_DISK)
        except Exception as exc:  # noqa: BLE001
            raise spark_read_error(exc, self.label) from None
        self._table = self._view(self._cleaned)
        present = ", ".join(f"count({SPARK.ident(n)}) AS p{j}" for j, n in enumerate(self.names))
        row = self._run(f"SELECT count(*) AS n, {present} FROM {self._table}")
        self._n = int(row.column(0)[0].as_py())
        self._present = {n: int(row.column(j + 1)[0].as_py()) for j, n in enumerate(self.names)}

    def _run(self, sql: str):
        try:
            return to_arrow(self.spark.sql(sql))
        except Exception as exc:  # noqa: BLE001
            raise spark_read_error(exc, self.label) from None

    def _check_open(self) -> None:
        if self.spark is None:
            raise InputError(f"{self.label}: the Spark reader is closed")

    def _release(self):
        """(session, whether this object started it, views, persisted cleaned rows), now the caller's; this object
        is closed."""
        self._check_open()
        out = (self.spark, self._own_session, self._views, self._cleaned)
        self.spark, self._own_session, self._views, self._cleaned = None, False, [], None
        return out

    def close(self) -> None:
        """Unpersist the cleaned rows, drop the views, stop the session if this object started it."""
        if self.spark is None:
            return
        try:
            if self._cleaned is not None:
                self._cleaned.unpersist()
            self._drop_views()
        except Exception:  # noqa: BLE001 - the session may be gone already
            pass
        self.spark, self._cleaned, self._views = None, None, []

    def __enter__(self) -> SparkValues:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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


VALUES_OPTIONS = ("spark", "config", "connect_timeout")  # the engine options that concern reading


class SparkOpener(Opener):
    """The Spark engine's way in (a path, a URI or a Spark DataFrame): ``values()`` the reader of exact value counts
    (``SparkValues``) for private discovery, whose cleaned rows the engine then takes over; without discovery the
    engine reads the source itself. ``options``: the engine's keyword options (``VALUES_OPTIONS`` of them go to the
    reader too); ``master``: the Spark master URL."""

    def __init__(self, source, *, other: bool, csv: dict, options: dict | None, master: str, **_):
        self.source, self.other, self.csv, self.options, self.master = source, other, csv, dict(options or {}), master
        self.reader: SparkValues | None = None

    def values(self) -> SparkValues:
        if self.reader is None:
            kept = {k: v for k, v in self.options.items() if k in VALUES_OPTIONS}
            self.reader = SparkValues(self.source, master=self.master, **kept, **self.csv)
        return self.reader

    def engine(self, release) -> SparkEngine:
        source = self.reader if self.reader is not None else self.source
        return SparkEngine(
            source, release, clip=True, other=self.other, release=True, master=self.master, **self.csv, **self.options
        )

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()  # nothing left to close once the engine took it over
