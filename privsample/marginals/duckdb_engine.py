"""Out-of-core marginal engine: DuckDB codes the table in SQL and counts by GROUP BY GROUPING SETS.

The data never passes through pandas. A file is read with the same SQL as ``read_table``
(``privsample.data.table.source_sql``) and coded by ``privsample.marginals.sql`` exactly as
``encode`` codes it. The codes (one small integer per cell, compressed: about 5 bytes per row of
15 columns) go to a DuckDB database in a temporary directory, so memory stays bounded by
``memory_limit`` whatever the file size; every query after the first scan reads only the codes.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from privsample.data.column_values import ColumnValues
from privsample.data.schema import DEFAULT_NA_VALUES, Schema
from privsample.data.sql_dialect import DUCKDB, clean_sql, clean_value, sql_ident, sql_str
from privsample.data.table import DUCKDB_CONFIG, FORMATS, column_kind, duckdb_input_error, source_sql, table_format
from privsample.errors import InputError
from privsample.marginals.base import Opener
from privsample.marginals.sql_engine import CACHE_MB, CodedTableEngine, arrow_columns, arrow_values, check_unique

_SRC = "privsample_source"
RAW_SHARE = 0.1  # a numeric column with more distinct values than this share of its values is counted in NumPy
_CLEANED = "cleaned"  # a ``DuckDBValues`` database's cleaned rows of a CSV file
MEMORY_LIMIT_MAX = 2**30  # default memory_limit: 1 GiB, or a quarter of the available memory if less


def default_memory_limit() -> int:
    """The engine's default DuckDB ``memory_limit`` in bytes: min(1 GiB, available / 4), at least 256 MiB."""
    import psutil

    return int(max(2**28, min(MEMORY_LIMIT_MAX, psutil.virtual_memory().available // 4)))


def _drop(con, path: str | None) -> None:
    try:
        con.close()
    finally:
        if path:
            shutil.rmtree(path, ignore_errors=True)


def own_database(memory_limit=None, threads=None, temp_directory=None) -> tuple[Any, str]:
    """(connection, directory): a DuckDB database of its own in a fresh temporary directory under
    ``temp_directory`` (default: the system's), spilling there, with ``memory_limit`` (bytes or a DuckDB size;
    default ``default_memory_limit()``) and ``threads``. The caller closes it and removes the directory."""
    import duckdb

    if memory_limit is None:
        memory_limit = default_memory_limit()
    config = {
        "memory_limit": f"{int(memory_limit)}B" if isinstance(memory_limit, int) else str(memory_limit),
        "preserve_insertion_order": False,
        **DUCKDB_CONFIG,
    }
    if threads is not None:
        config["threads"] = int(threads)
    try:
        path = tempfile.mkdtemp(prefix="privsample-duckdb-", dir=temp_directory)
    except OSError as exc:
        raise InputError(f"cannot create a temporary directory in {temp_directory}: {exc.strerror}") from None
    config["temp_directory"] = str(Path(path) / "spill")
    try:
        con = duckdb.connect(str(Path(path) / "codes.duckdb"), config=config)
    except duckdb.Error as exc:
        shutil.rmtree(path, ignore_errors=True)
        raise InputError(f"DuckDB settings rejected: {str(exc).splitlines()[0]}") from None
    return con, path


def sorted_runs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, counts) of a sorted array, in one pass (NaN values, sorted last, each its own run)."""
    if len(x) == 0:
        return x, np.zeros(0, np.int64)
    start = np.empty(len(x), dtype=bool)
    start[0] = True
    np.not_equal(x[1:], x[:-1], out=start[1:])
    first = np.flatnonzero(start)
    return x[first], np.diff(np.append(first, len(x))).astype(np.int64)


class DuckDBValues:
    """The exact value counts of a CSV/Parquet file's columns, counted by DuckDB (``ValueSource`` of
    ``privsample.data.column_values``, for private discovery without a schema), in a database of its own
    (``own_database``: ``memory_limit``, ``threads``, ``temp_directory``, as for ``DuckDBEngine``).

    The file is read with ``read_table``'s SQL (``source_sql``: the same values, cleaned with ``na_values``; an
    index column ``index_col`` is never selected);
    a CSV file is read once into a cleaned table of that database (every later query reads it, not the
    file; a Parquet file is read in place, a column at a time). Per column: ``SELECT value, count(*) ...
    GROUP BY value`` over its non-missing values (in a Parquet file grouped as stored, then cleaned and grouped
    again: cleaning is a function of the value alone), and the missing ones counted apart; a numeric column whose values
    are mostly distinct (DuckDB's approximate distinct count above ``RAW_SHARE`` of them) is fetched sorted by
    DuckDB as one float64 / int64 array and its runs counted (``sorted_runs``: the same counts, several times faster
    than a hash aggregate over millions of groups; the choice changes no count, only the time taken). Text comes
    back as text; integer, floating-point and boolean columns as their typed values (``ColumnValues`` gives every
    engine the same canonical form). Nothing is read before the first count, so the column names (the header alone)
    can be checked before. ``DuckDBEngine(values, schema, ...)`` then codes the same cleaned rows, taking over the
    database (this object is then closed); else ``close()`` removes it.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        na_values=DEFAULT_NA_VALUES,
        memory_limit: int | str | None = None,
        threads: int | None = None,
        temp_directory: str | Path | None = None,
        delimiter: str | None = None,
        encoding: str | None = None,
        index_col: str | int | None = None,
    ):
        self.label = str(path)
        self._con, self._dir = own_database(memory_limit, threads, temp_directory)
        self._finalizer = weakref.finalize(self, _drop, self._con, self._dir)
        try:
            self._clean, names, kinds = source_sql(
                self._con,
                path,
                tuple(na_values),
                delimiter=delimiter,
                encoding=encoding,
                workdir=self._dir,
                index_col=index_col,
            )
        except BaseException:
            self.close()
            raise
        self.names, self.kinds = list(names), list(kinds)
        self._csv = table_format(path) == "csv"
        self._na = tuple(na_values)
        # a Parquet file is read in place: a column's values are grouped as stored, then cleaned (a function of the
        # value alone: the same counts as grouping the cleaned rows, without cleaning every record)
        self._scan = None if self._csv else f"read_parquet({sql_str(str(path))})"
        self._n: int | None = None
        self._distinct: dict[str, int] = {}

    # -- ValueSource ----------------------------------------------------------------------------------
    def row_count(self) -> int:
        """The number of records (exact: sensitive)."""
        self._read()
        return int(self._n)

    def column_values(self, name: str) -> ColumnValues:
        """The exact counts of column ``name`` (sensitive)."""
        self._read()
        j = self.names.index(name)
        q, kind = sql_ident(name), self.kinds[j]
        where = f"FROM ({self._clean}) AS t WHERE {q} IS NOT NULL"
        if kind in ("int", "float") and self._distinct[name] > RAW_SHARE * self._n:
            # mostly distinct numbers: DuckDB sorts them (in parallel) and NumPy counts the runs, several times
            # faster than a hash GROUP BY
            table = self._query(f"SELECT {q} AS v {where} ORDER BY {q}", arrow=True)
            x = arrow_values(table.column(0), kind)
            del table
            if kind == "float":
                x = x + 0.0  # -0.0 -> 0.0 (``ColumnValues``; they sort together), before equal values are counted
            values, counts = sorted_runs(x)
            del x
            return ColumnValues(self._n - int(counts.sum()), values, counts)  # the rest are missing
        if self._scan is not None:
            raw = f"SELECT {q} AS r, count(*) AS c FROM {self._scan} GROUP BY {q}"
            cleaned = f"SELECT {clean_value('r', kind, self._na)} AS v, c FROM ({raw}) AS g"
            sql = f"SELECT v, CAST(sum(c) AS BIGINT) AS n FROM ({cleaned}) AS h WHERE v IS NOT NULL GROUP BY v"
        else:
            sql = f"SELECT {q} AS v, count(*) AS n {where} GROUP BY {q}"
        table = self._query(sql, arrow=True)
        values = arrow_values(table.column(0), kind)
        counts = table.column(1).to_numpy().astype(np.int64, copy=False)
        del table
        return ColumnValues(self._n - int(counts.sum()), values, counts)  # the rest are missing

    # -- the rest ---------------------------------------------------------------------------------------
    def cleaned(self) -> tuple[str, list[str], list[str]]:
        """(SQL selecting the cleaned columns, names, kinds), in this object's database."""
        self._check_open()
        return self._clean, list(self.names), list(self.kinds)

    def _read(self) -> None:
        """On first use: a CSV file into the cleaned table; the number of records and of non-missing values."""
        self._check_open()
        if self._n is not None:
            return
        if self._csv:
            self._query(f"CREATE TABLE {_CLEANED} AS {self._clean}")
            self._clean = f"SELECT * FROM {_CLEANED}"
            for copy in Path(self._dir).glob("transcoded*.csv"):
                copy.unlink(missing_ok=True)
        # the number of records, and for numeric columns an approximate distinct count that only chooses how to
        # count (a column's missing values are the records its counts leave: no separate scan of every column)
        numeric = [n for n, k in zip(self.names, self.kinds) if k in ("int", "float")]
        distinct = "".join(f", approx_count_distinct({sql_ident(n)})" for n in numeric)
        source = self._scan or f"({self._clean}) AS t"  # the raw Parquet columns: the same count, a path choice
        row = self._query(f"SELECT count(*){distinct} FROM {source}")[0]
        self._n = int(row[0])
        self._distinct = {n: int(v) for n, v in zip(numeric, row[1:])}

    def _query(self, sql: str, arrow: bool = False):
        """Run ``sql``: its rows (or Arrow table); a reader error is bad input."""
        try:
            rel = self._con.sql(sql)
            return None if rel is None else (rel.to_arrow_table() if arrow else rel.fetchall())
        except Exception as exc:  # noqa: BLE001 - reader errors are bad input
            raise duckdb_input_error(exc, self.label) from None

    def _check_open(self) -> None:
        if self._con is None:
            raise InputError(f"{self.label}: the DuckDB reader is closed")

    def _release(self) -> tuple[Any, str]:
        """(connection, directory), now the caller's to close and remove; this object is closed."""
        self._check_open()
        self._finalizer.detach()
        out = (self._con, self._dir)
        self._con = self._dir = None
        return out

    def close(self) -> None:
        """Close the database and remove its directory (unless an engine took it over)."""
        if self._con is not None:
            self._finalizer()
        self._con = self._dir = None

    def __enter__(self) -> DuckDBValues:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class DuckDBEngine(CodedTableEngine):
    """Marginals of a CSV/Parquet file (or a DuckDB relation / table) coded by ``schema``, in DuckDB.

    ``source``: a path (``.csv``, ``.csv.gz``, ``.txt``, ``.parquet``, ``.pq``), a ``DuckDBValues`` of
    one (the engine takes over its database and cleaned rows: its ``na_values``, not the schema's, and its
    DuckDB settings apply), a ``duckdb.DuckDBPyRelation``, or the name of a table/view in ``connection``
    (default: DuckDB's default connection). For a file the engine opens its own DuckDB database under
    ``temp_directory`` (default: the system's), removed by ``close()``, with ``memory_limit``
    (bytes or a DuckDB size such as ``"2GB"``; default ``default_memory_limit()``) and ``threads``
    (default: DuckDB's, one per core). ``cache_mb`` bounds the cache of computed marginals;
    ``batching`` is ``CodedTableEngine``'s ("joint" or "sets"). ``delimiter`` / ``encoding`` force
    a CSV file's (else detected as ``read_table`` detects them); a file in an encoding other than
    UTF-8 is transcoded to a UTF-8 copy in the engine's temporary directory first. ``index_col``: a file's index
    column, never selected (``read_table``'s).
    """

    dialect = DUCKDB

    def __init__(
        self,
        source,
        schema: Schema,
        *,
        clip: bool = False,
        other: bool = False,
        release: bool = False,
        memory_limit: int | str | None = None,
        threads: int | None = None,
        connection=None,
        temp_directory: str | Path | None = None,
        cache_mb: float = CACHE_MB,
        batching: str = "joint",
        delimiter: str | None = None,
        encoding: str | None = None,
        index_col: str | int | None = None,
    ):
        import duckdb

        self._con, self._rel, self._temp_table = None, None, None
        self._finalizer, self._workdir = None, None
        label = str(source)
        na = tuple(schema.na_values)
        if isinstance(source, DuckDBValues):
            label = source.label
            clean, names, kinds = self._adopt(source)
        elif isinstance(source, duckdb.DuckDBPyRelation):
            self._rel, label = source, "relation"
            clean, names, kinds = self._clean_for(sql_ident(_SRC), source.columns, source.types, na)
        elif isinstance(source, Path) or self._looks_like_path(source):
            self._open(memory_limit, threads, temp_directory)
            try:
                clean, names, kinds = source_sql(
                    self._con,
                    source,
                    na,
                    delimiter=delimiter,
                    encoding=encoding,
                    workdir=self._workdir,
                    index_col=index_col,
                )
            except BaseException:
                self.close()
                raise
        else:
            self._con = connection if connection is not None else duckdb.default_connection()
            try:
                rel = self._con.sql(f"SELECT * FROM {sql_ident(str(source))}")
            except duckdb.Error:
                raise InputError(f"no such data file or DuckDB table: {source}") from None
            clean, names, kinds = self._clean_for(sql_ident(str(source)), rel.columns, rel.types, na)
        try:
            self._setup(
                schema,
                clean,
                dict(zip(names, kinds)),
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
        if self._workdir is not None:  # the codes are materialised: a transcoded copy is no longer needed
            for copy in Path(self._workdir).glob("transcoded*.csv"):
                copy.unlink(missing_ok=True)
            self._con.sql(f"DROP TABLE IF EXISTS {_CLEANED}")  # nor the cleaned rows of a ``DuckDBValues``

    # -- construction -----------------------------------------------------------------------------
    def _open(self, memory_limit, threads, temp_directory) -> None:
        """This engine's own database, in a fresh temporary directory."""
        self._con, self._workdir = own_database(memory_limit, threads, temp_directory)
        self._finalizer = weakref.finalize(self, _drop, self._con, self._workdir)

    def _adopt(self, source: DuckDBValues) -> tuple[str, list[str], list[str]]:
        """Take over the database of ``source`` (its cleaned rows): (its cleaning SQL, names, kinds)."""
        clean, names, kinds = source.cleaned()
        self._con, self._workdir = source._release()
        self._finalizer = weakref.finalize(self, _drop, self._con, self._workdir)
        return clean, names, kinds

    @staticmethod
    def _looks_like_path(source) -> bool:
        s = str(source)
        return "/" in s or "\\" in s or Path(s).exists() or any(s.lower().endswith(x) for x in FORMATS)

    @staticmethod
    def _clean_for(from_sql: str, names, types, na) -> tuple[str, list[str], list[str]]:
        names = list(names)
        check_unique(names)
        kinds = [column_kind(str(t)) for t in types]
        return clean_sql(from_sql, [(sql_ident(n), n, k) for n, k in zip(names, kinds)], na, DUCKDB), names, kinds

    # -- queries ----------------------------------------------------------------------------------
    def _run(self, sql: str):
        if self._rel is not None:
            return self._rel.query(_SRC, sql)
        return self._con.sql(sql)

    def _materialise(self, coded_sql: str) -> str:
        if self._finalizer is not None:  # our own database on disk
            name = "codes"
            sql = f"CREATE TABLE {name} AS {coded_sql}"
        else:
            name = self._temp_table = f"privsample_codes_{uuid.uuid4().hex}"
            sql = f"CREATE TEMP TABLE {name} AS {coded_sql}"
        try:
            self._run(sql)
        except Exception as exc:  # noqa: BLE001 - reader errors are bad input
            raise duckdb_input_error(exc, self._label) from None
        return name

    def _fetch(self, sql: str, nulls: int | None = -1) -> dict[str, np.ndarray]:
        try:
            table = self._run(sql).to_arrow_table()
        except Exception as exc:  # noqa: BLE001
            raise duckdb_input_error(exc, self._label) from None
        return arrow_columns(table, nulls)

    def close(self) -> None:
        """Drop the engine's codes (its own database and directory, or its temporary table)."""
        if self._finalizer is not None:
            self._finalizer()
        elif self._temp_table is not None:
            try:
                self._run(f"DROP TABLE IF EXISTS {self._temp_table}")
            except Exception:  # noqa: BLE001 - the caller's connection may be closed already
                pass
        self._temp_table = None
        self._con = self._rel = None


VALUES_OPTIONS = ("memory_limit", "threads", "temp_directory")  # the engine options that concern reading


class DuckDBOpener(Opener):
    """The DuckDB engine's way in, out of core: ``values()`` the reader of exact value counts (``DuckDBValues``) for
    private discovery, whose cleaned rows the engine then takes over; without discovery the engine reads the file
    itself. ``options``: the engine's keyword options (``VALUES_OPTIONS`` of them go to the reader too)."""

    def __init__(self, source, *, other: bool, csv: dict, options: dict | None, **_):
        self.source, self.other, self.csv, self.options = Path(source), other, csv, dict(options or {})
        self.reader: DuckDBValues | None = None

    def values(self) -> DuckDBValues:
        if self.reader is None:
            kept = {k: v for k, v in self.options.items() if k in VALUES_OPTIONS}
            self.reader = DuckDBValues(self.source, **kept, **self.csv)
        return self.reader

    def engine(self, release) -> DuckDBEngine:
        source = self.reader if self.reader is not None else self.source
        return DuckDBEngine(source, release, clip=True, other=self.other, release=True, **self.csv, **self.options)

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()  # nothing left to close once the engine took it over
