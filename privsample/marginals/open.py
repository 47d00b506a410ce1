"""Opening a marginal engine on a table: which engine reads it, and the engine or value reader itself.

``choose_engine`` picks NumPy (in memory), DuckDB (out of core) or Spark from the table's kind and size and the
memory available, all public; ``make_engine`` opens a DuckDB or Spark engine coded by a schema, ``make_values``
their reader of exact value counts for private discovery, and ``in_memory_table`` reads a table given in memory
as the same data written to CSV would be read. They read no record: the engines do, on the first count.
"""

from __future__ import annotations

from pathlib import Path

from privsample.data.schema import Schema
from privsample.errors import InputError

ENGINES = ("auto", "numpy", "duckdb", "spark")
# ``auto``: NumPy while the table, loaded and encoded in memory, would take well under the available
# memory (peak RSS about 14-18x the file size for Parquet, ``benchmarks/results/engines.md``; about
# 10x for CSV), else DuckDB out of core.
AUTO_SHARE = {"parquet": 40, "csv.gz": 40, "csv": 20}  # numpy while file size * share <= available memory
# With a reviewed schema the file is coded a batch at a time and only the codes (1-4 bytes a cell) are held:
# peak RSS about 5x the Parquet file on the 100-column, 1,000,000-row table of benchmarks/wide_tables.py.
AUTO_SHARE_CODED = {"parquet": 10, "csv.gz": 10, "csv": 3}


def choose_engine(source, engine: str, schema: Schema | None) -> str:
    """The engine to use: ``engine``, or for ``auto`` Spark for a Spark DataFrame, else NumPy or DuckDB
    by file size (``AUTO_SHARE``, or ``AUTO_SHARE_CODED`` with a schema; without one, DuckDB discovers the
    schema out of core too)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}' ({'|'.join(ENGINES)})")
    from privsample.marginals.spark_engine import is_dataframe  # does not import pyspark

    if is_dataframe(source):
        if engine not in ("auto", "spark"):
            raise InputError(f"a Spark DataFrame needs the spark engine (got --engine {engine})")
        return "spark"
    if engine != "auto":
        return engine
    import psutil

    from privsample.data.table import table_format

    path = Path(source)
    fmt = table_format(path)
    if fmt == "csv" and path.name.lower().endswith(".gz"):
        fmt = "csv.gz"
    size, available = path.stat().st_size, psutil.virtual_memory().available
    if size * (AUTO_SHARE if schema is None else AUTO_SHARE_CODED)[fmt] <= available:
        return "numpy"
    return "duckdb"


def make_engine(
    engine: str,
    source,
    schema: Schema,
    *,
    clip: bool,
    other: bool,
    spark_master: str,
    engine_options: dict | None,
    release: bool = True,
    delimiter: str | None = None,
    encoding: str | None = None,
):
    """A DuckDB or Spark engine on ``source`` coded by ``schema`` (``engine_options``: its keyword options).

    ``release`` (default): the per-record rule of ``encode(..., release=True)``, as on the NumPy path.
    ``delimiter`` / ``encoding``: a CSV file's, as for ``read_table`` (default: detected)."""
    opts = {"delimiter": delimiter, "encoding": encoding, **(engine_options or {})}
    if engine == "duckdb":
        from privsample.marginals.duckdb_engine import DuckDBEngine

        return DuckDBEngine(source, schema, clip=clip, other=other, release=release, **opts)
    from privsample.marginals.spark_engine import SparkEngine

    return SparkEngine(source, schema, clip=clip, other=other, release=release, master=spark_master, **opts)


VALUES_OPTIONS = {
    "duckdb": ("memory_limit", "threads", "temp_directory"),
    "spark": ("spark", "config", "connect_timeout"),
}


def make_values(
    engine: str,
    source,
    *,
    spark_master: str,
    engine_options: dict | None,
    delimiter: str | None = None,
    encoding: str | None = None,
):
    """The DuckDB or Spark reader of ``source``'s exact value counts (``DuckDBValues``, ``SparkValues``), for
    private discovery; ``make_engine`` on it then codes the same cleaned rows. ``engine_options``: the engine's
    options, of which the reader takes those that concern reading (``VALUES_OPTIONS``). Reads the header only:
    the records are read on the first count."""
    opts = {k: v for k, v in (engine_options or {}).items() if k in VALUES_OPTIONS[engine]}
    if engine == "duckdb":
        from privsample.marginals.duckdb_engine import DuckDBValues

        return DuckDBValues(source, delimiter=delimiter, encoding=encoding, **opts)
    from privsample.marginals.spark_engine import SparkValues

    return SparkValues(source, master=spark_master, delimiter=delimiter, encoding=encoding, **opts)


def in_memory_table(source, engine: str, schema: Schema | None):
    """``source`` as ``read_table`` would read it from CSV when it is an in-memory table (``frame_table``),
    None for a path or a Spark DataFrame; ``InputError`` for anything else (before any budget is spent)."""
    import os

    from privsample.data.frames import ACCEPTED, frame_kind, frame_table
    from privsample.marginals.spark_engine import is_dataframe  # does not import pyspark

    if frame_kind(source) is None:
        if isinstance(source, (str, os.PathLike)) or is_dataframe(source):
            return None
        raise InputError(f"expected {ACCEPTED}, not {type(source).__name__}")
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}' ({'|'.join(ENGINES)})")
    if engine not in ("auto", "numpy"):
        raise InputError(f"an in-memory table is read by the numpy engine (got --engine {engine})")
    return frame_table(source, label="the input table", **({"na_values": schema.na_values} if schema else {}))


__all__ = ["ENGINES", "choose_engine", "make_engine", "make_values", "in_memory_table"]
