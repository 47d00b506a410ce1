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

import numpy as np

from privsample.data.schema import Schema
from privsample.data.sql_dialect import DUCKDB, clean_sql, sql_ident
from privsample.data.table import DUCKDB_CONFIG, FORMATS, column_kind, duckdb_input_error, source_sql
from privsample.errors import InputError
from privsample.marginals.sql_engine import CACHE_MB, CodedTableEngine, arrow_columns, check_unique

_SRC = "privsample_source"
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


class DuckDBEngine(CodedTableEngine):
    """Marginals of a CSV/Parquet file (or a DuckDB relation / table) coded by ``schema``, in DuckDB.

    ``source``: a path (``.csv``, ``.csv.gz``, ``.txt``, ``.parquet``, ``.pq``), a
    ``duckdb.DuckDBPyRelation``, or the name of a table/view in ``connection`` (default: DuckDB's
    default connection). For a file the engine opens its own DuckDB database under
    ``temp_directory`` (default: the system's), removed by ``close()``, with ``memory_limit``
    (bytes or a DuckDB size such as ``"2GB"``; default ``default_memory_limit()``) and ``threads``
    (default: DuckDB's, one per core). ``cache_mb`` bounds the cache of computed marginals;
    ``batching`` is ``CodedTableEngine``'s ("joint" or "sets"). ``delimiter`` / ``encoding`` force
    a CSV file's (else detected as ``read_table`` detects them); a file in an encoding other than
    UTF-8 is transcoded to a UTF-8 copy in the engine's temporary directory first.
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
    ):
        import duckdb

        self._con, self._rel, self._temp_table = None, None, None
        self._finalizer, self._workdir = None, None
        label = str(source)
        na = tuple(schema.na_values)
        if isinstance(source, duckdb.DuckDBPyRelation):
            self._rel, label = source, "relation"
            clean, names, kinds = self._clean_for(sql_ident(_SRC), source.columns, source.types, na)
        elif isinstance(source, Path) or self._looks_like_path(source):
            self._open(memory_limit, threads, temp_directory)
            try:
                clean, names, kinds = source_sql(
                    self._con, source, na, delimiter=delimiter, encoding=encoding, workdir=self._workdir
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

    # -- construction -----------------------------------------------------------------------------
    def _open(self, memory_limit, threads, temp_directory) -> None:
        """This engine's own database, in a fresh temporary directory."""
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
            self._con = duckdb.connect(str(Path(path) / "codes.duckdb"), config=config)
        except duckdb.Error as exc:
            shutil.rmtree(path, ignore_errors=True)
            raise InputError(f"DuckDB settings rejected: {str(exc).splitlines()[0]}") from None
        self._finalizer = weakref.finalize(self, _drop, self._con, path)
        self._workdir = path

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
