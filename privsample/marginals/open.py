"""Opening a marginal engine on a table: which engine reads it, and the engine or value reader itself.

``check_source`` picks NumPy (in memory), DuckDB (out of core) or Spark from the table's kind and size and the
memory available, all public (a table given in memory is read there, as the same data written to CSV would be);
``make_engine`` opens a DuckDB or Spark engine coded by a schema, ``make_values`` their reader of exact value counts
for private discovery; these read no record of a file: the engines do, on the first count. ``open_engine`` opens the
run's engine on any of them, the schema discovered first if need be (NumPy reads and codes the table there).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

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
    index_col: str | int | None = None,
):
    """A DuckDB or Spark engine on ``source`` coded by ``schema`` (``engine_options``: its keyword options).

    ``release`` (default): the per-record rule of ``encode(..., release=True)``, as on the NumPy path.
    ``delimiter`` / ``encoding``: a CSV file's, as for ``read_table`` (default: detected); ``index_col``: an
    index column never read (``read_table``'s)."""
    opts = {"delimiter": delimiter, "encoding": encoding, "index_col": index_col, **(engine_options or {})}
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
    index_col: str | int | None = None,
):
    """The DuckDB or Spark reader of ``source``'s exact value counts (``DuckDBValues``, ``SparkValues``), for
    private discovery; ``make_engine`` on it then codes the same cleaned rows. ``engine_options``: the engine's
    options, of which the reader takes those that concern reading (``VALUES_OPTIONS``). Reads the header only:
    the records are read on the first count."""
    opts = {k: v for k, v in (engine_options or {}).items() if k in VALUES_OPTIONS[engine]}
    opts.update(delimiter=delimiter, encoding=encoding, index_col=index_col)
    if engine == "duckdb":
        from privsample.marginals.duckdb_engine import DuckDBValues

        return DuckDBValues(source, **opts)
    from privsample.marginals.spark_engine import SparkValues

    return SparkValues(source, master=spark_master, **opts)


def check_source(source, engine: str, schema: Schema | None, index_col=None) -> tuple[Any, str]:
    """(table, engine) for ``source``. An in-memory table is read as ``read_table`` would read it from CSV
    (``frame_table``, without the column ``index_col`` names), by the NumPy engine; a Spark DataFrame, or any
    path with ``engine="spark"``, goes to Spark; a path must be an existing CSV or Parquet file, and ``auto`` picks
    NumPy or DuckDB for it by file size (``AUTO_SHARE``, or ``AUTO_SHARE_CODED`` with a schema; without one, DuckDB
    discovers the schema out of core too). The table is None unless given in memory. ``InputError`` for anything
    else, before any budget is spent."""
    import os

    from privsample.data.frames import ACCEPTED, frame_kind, frame_table
    from privsample.data.table import table_format
    from privsample.marginals.spark_engine import is_dataframe  # does not import pyspark

    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}' ({'|'.join(ENGINES)})")
    if frame_kind(source) is not None:
        if engine not in ("auto", "numpy"):
            raise InputError(f"an in-memory table is read by the numpy engine (got --engine {engine})")
        na = {"na_values": schema.na_values} if schema else {}
        frame = frame_table(source, label="the input table", index_col=index_col, **na)
        return frame, "numpy"
    if is_dataframe(source):
        if engine not in ("auto", "spark"):
            raise InputError(f"a Spark DataFrame needs the spark engine (got --engine {engine})")
        return None, "spark"
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"expected {ACCEPTED}, not {type(source).__name__}")
    if engine == "spark":
        return None, engine  # a path or URI: Spark reports its own problems
    fmt = table_format(source)  # an existing CSV or Parquet file
    if engine != "auto":
        return None, engine
    import psutil

    path = Path(source)
    if fmt == "csv" and path.name.lower().endswith(".gz"):
        fmt = "csv.gz"
    size, available = path.stat().st_size, psutil.virtual_memory().available
    return None, "numpy" if size * (AUTO_SHARE if schema is None else AUTO_SHARE_CODED)[fmt] <= available else "duckdb"


def open_engine(
    source,
    schema: Schema | None,
    engine: str,
    *,
    frame=None,
    discover: Callable[[Any], Schema],
    check_size: Callable[[dict, Schema], None],
    other: bool = False,
    delimiter: str | None = None,
    encoding: str | None = None,
    index_col: str | int | None = None,
    spark_master: str = "local[2]",
    engine_options: dict | None = None,
    reading: AbstractContextManager = nullcontext(),
    coding: AbstractContextManager = nullcontext(),
) -> tuple[Any, Schema]:
    """(marginal engine, the release schema it codes with) for ``source`` on ``engine``, with ``frame`` and
    ``engine`` as ``check_source`` gives them. Without ``schema``, ``discover`` (a function of a DataFrame or an
    engine's ``ValueSource`` to its privately discovered schema: it spends) gives it first; ``check_size(domain,
    schema)`` refuses a model too large before the table is coded. ``reading`` and ``coding``: context managers
    around reading and coding an in-memory table (progress), entered on the NumPy engine only.

    Every engine encodes by the same per-record rule (``encode(..., release=True)``), so no value, count, message
    or exit code depends on one record; the table may even be empty. ``index_col``: a file's index column, never
    read (``read_table``'s; ``check_source`` drops it from an in-memory ``frame``). Other options as
    ``make_engine``'s."""
    csv = {"delimiter": delimiter, "encoding": encoding, "index_col": index_col}
    if engine in ("duckdb", "spark"):
        opts = {"spark_master": spark_master, "engine_options": engine_options, **csv}
        return _out_of_core(engine, source, schema, other, discover, check_size, opts)
    if frame is None and schema is not None:
        return _coded_file(Path(source), schema, other, check_size, csv, reading, coding)
    return _in_memory(source, frame, schema, other, discover, check_size, csv, reading, coding)


def _out_of_core(engine: str, source, schema: Schema | None, other: bool, discover, check_size, opts: dict):
    """A DuckDB or Spark engine; without a schema, discovered from the engine's own value counts first."""
    from privsample.data.encoding import release_domain

    source = Path(source) if engine == "duckdb" else source  # Spark also reads a URI
    values = None  # without a schema: the engine's reader of exact value counts, for private discovery
    try:
        if schema is None:
            values = make_values(engine, source, **opts)
            schema = discover(values)
        schema = release_domain(schema, other)
        check_size(schema.domain(), schema)
        # the engine takes over the reader's cleaned rows
        eng = make_engine(engine, values if values is not None else source, schema, clip=True, other=other, **opts)
    finally:
        if values is not None:
            values.close()  # nothing left to close once the engine took it over
    return eng, schema


def _coded_file(source: Path, schema: Schema, other: bool, check_size, csv: dict, reading, coding):
    """A reviewed schema and a file: read and coded a batch at a time, so that the table itself is never in
    memory, only its codes (the same codes as ``encode(read_table(...), release=True)``)."""
    from privsample.data.encoding import read_codes, release_domain
    from privsample.marginals.numpy_engine import NumpyEngine

    with reading:
        release = release_domain(schema, other)
        codes = read_codes(source, release, na_values=schema.na_values, allow_empty=True, **csv)
    with coding:
        check_size(release.domain(), release)
        eng = NumpyEngine(codes, release.domain())
    return eng, release


def _in_memory(source, frame, schema: Schema | None, other: bool, discover, check_size, csv: dict, reading, coding):
    """The table in memory (``frame``, or read from the file ``source``), discovered if need be, then coded."""
    from privsample.data.encoding import encode, release_domain
    from privsample.data.table import read_table
    from privsample.marginals.numpy_engine import NumpyEngine

    with reading:
        if frame is None:  # a file without a schema (with one: ``_coded_file``)
            frame = read_table(Path(source), allow_empty=True, **csv)
    schema = schema if schema is not None else discover(frame)
    with coding:
        schema = release_domain(schema, other)
        check_size(schema.domain(), schema)
        eng = NumpyEngine(encode(frame, schema, release=True, compact=True), schema.domain())
    return eng, schema


__all__ = ["ENGINES", "check_source", "open_engine", "make_engine", "make_values"]
