"""Opening a marginal engine on a table: which engine reads it, and the engine or value reader itself.

``check_source`` picks NumPy (in memory), DuckDB (out of core) or Spark from the table's kind and size and the
memory available, all public (a table given in memory is read there, as the same data written to CSV would be);
each engine's ``Opener`` (``openers``) gives what private discovery reads and the engine coded by a schema;
``open_engine`` opens the run's engine on any of them in one way, the schema discovered first if need be.
``make_engine`` opens a DuckDB or Spark engine coded by a schema directly (benchmarks). Opening reads no record of
a file: the engines do, on the first count (NumPy reads and codes the table as it opens it).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from privsample.data.schema import Schema
from privsample.errors import InputError
from privsample.marginals.base import Opener

ENGINES = ("auto", "numpy", "duckdb", "spark")
# ``auto``: NumPy while the table, loaded and encoded in memory, would take well under the available
# memory (peak RSS about 14-18x the file size for Parquet, ``benchmarks/results/engines.md``; about
# 10x for CSV), else DuckDB out of core.
AUTO_SHARE = {"parquet": 40, "csv.gz": 40, "csv": 20}  # numpy while file size * share <= available memory
# With a reviewed schema the file is coded a batch at a time and only the codes (1-4 bytes a cell) are held:
# peak RSS about 5x the Parquet file on the 100-column, 1,000,000-row table of benchmarks/wide_tables.py.
AUTO_SHARE_CODED = {"parquet": 10, "csv.gz": 10, "csv": 3}


def openers() -> dict[str, type[Opener]]:
    """{engine name: its ``Opener``}: how each engine opens a table (adding an engine is one entry)."""
    from privsample.marginals.duckdb_engine import DuckDBOpener
    from privsample.marginals.numpy_engine import NumpyOpener
    from privsample.marginals.spark_engine import SparkOpener  # none of these imports duckdb or pyspark

    return {"numpy": NumpyOpener, "duckdb": DuckDBOpener, "spark": SparkOpener}


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
    unit: str | None = None,
    profile: Callable[[Any, tuple, int], int] | None = None,
    seed: int | None = None,
) -> tuple[Any, Schema]:
    """(marginal engine, the release schema it codes with) for ``source`` on ``engine``, with ``frame`` and
    ``engine`` as ``check_source`` gives them, by the engine's ``Opener`` (``openers``). Without ``schema``,
    ``discover`` (a function of a DataFrame or an engine's ``ValueSource`` to its privately discovered schema: it
    spends) gives it first; ``check_size(domain, schema)`` refuses a model too large before the table is coded.
    ``reading`` and ``coding``: context managers around reading and coding a table in memory (progress), entered on
    the NumPy engine only.

    Every engine encodes by the same per-record rule (``encode(..., release=True)``), so no value, count, message
    or exit code depends on one record; the table may even be empty. ``index_col``: a file's index column, never
    read (``read_table``'s; ``check_source`` drops it from an in-memory ``frame``). ``engine_options``: the DuckDB or
    Spark engine's keyword options (``make_engine``'s).

    ``unit``: the privacy unit's column (person-level neighbours): before anything else, ``profile`` (a function of
    the exact people per cell of ``UNIT_GRID``, the grid and the columns modelled (public) to k: the unit profile
    mechanism, which spends) gives k,
    and at most k rows of each person are kept (``privsample.marginals.bounding``; ``seed``: reproducible selection,
    NOT private), the column dropped; discovery and the engine see the bounded table only."""
    from privsample.data.encoding import release_domain

    csv = {"delimiter": delimiter, "encoding": encoding, "index_col": index_col}
    opener = openers()[engine](
        source,
        frame=frame,
        other=other,
        csv=csv,
        options=engine_options,
        master=spark_master,
        reading=reading,
        coding=coding,
    )
    try:
        if unit is not None:
            from privsample.marginals.bounding import UNIT_GRID

            people = opener.unit_histogram(unit, UNIT_GRID)
            width = len(schema.columns) if schema is not None else max(len(opener.values().columns) - 1, 1)
            opener.bound(unit, profile(people, UNIT_GRID, width), seed)
        release = release_domain(schema if schema is not None else discover(opener.values()), other)
        check_size(release.domain(), release)
        return opener.engine(release), release
    finally:
        opener.close()


__all__ = ["ENGINES", "check_source", "open_engine", "openers", "make_engine"]
